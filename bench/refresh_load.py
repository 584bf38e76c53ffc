"""Recommend latency while providers are refreshed every few seconds, and the answers checked.

Run by hand from the repository root (needs `wrk`; PostgreSQL and Redis on 127.0.0.1; loopback
traffic only; every run bounded in time):

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/serve_perf BENCH_REDIS_URL=redis://127.0.0.1:6379/12 \\
      .venv/bin/python bench/refresh_load.py --prices 250000 --duration 60 --interval 5

It builds the catalog (scale_catalog: the curated catalog plus ``--prices`` bench prices; 0 keeps
the database as it is), starts gunicorn as production does (gunicorn.conf.py, 2 workers), asks
the light and the heavy question of bench/recommend_load.py once and takes the providers of
their recommendations as the ones to refresh. Then, for ``--duration`` seconds:
- wrk sends the light question with a new `tokens` each time (no cached answer);
- every ``--interval`` seconds one of those providers is refreshed through the real ingest
  (scrapers.services.prices_ingest, which writes through catalog.services): every current price
  of the provider again, its amount moved by -5%, 0 or +5% of the first amount by turns, all
  stamped with the refresh's time, so each refresh is a new catalog version;
- a checker sends the light and the heavy question (new `tokens`) by turns and keeps each answer
  with when it was sent and came back.
Afterwards every kept answer is checked (bench/answer_check.py): one catalog version explains all
its prices and its catalog_as_of, and no price past its shelf life was served. A run of the same
length without refreshes and a /healthz run give the baseline of the same server.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

from answer_check import History, Refresh, answer_check
from common import gunicorn_stop, print_machine, setup_django
from recommend_load import (
    HEAVY,
    LIGHT,
    flush_redis,
    free_port,
    post,
    start_server,
    vacuum,
    worker_memory_mib,
    wrk,
)

FACTORS = (Decimal("0.95"), Decimal("1.00"), Decimal("1.05"))


def _now() -> datetime:
    return datetime.now(UTC)


def stored(provider: str) -> dict[tuple[str, str, str], tuple[float, datetime]]:
    """A provider's current prices of active instance types as the offer book reads them."""
    from catalog.models import Price

    rows = (
        Price.objects.current()
        .filter(instance_type__provider__slug=provider, instance_type__is_active=True)
        .values_list(
            "instance_type__name", "region__code", "pricing_model", "usd_per_hour", "observed_at"
        )
    )
    return {(name, region, model): (float(usd), seen) for name, region, model, usd, seen in rows}


def records_of(provider: str) -> list[Any]:
    """Every current price of ``provider`` as a scraper hands it over (its first amounts)."""
    from catalog.models import Price
    from scrapers.base import PriceRecord

    rows = (
        Price.objects.current()
        .filter(instance_type__provider__slug=provider)
        .select_related("instance_type__gpu", "region")
    )
    return [
        PriceRecord(
            instance_type=p.instance_type.name,
            gpu_name=p.instance_type.gpu.name,
            gpu_count=p.instance_type.gpu_count,
            region=p.region.code,
            pricing_model=p.pricing_model,
            amount=p.amount,
            currency=p.currency,
            unit=p.unit,
            vcpus=p.instance_type.vcpus,
            ram_gib=p.instance_type.ram_gib,
        )
        for p in rows
    ]


@dataclass
class Refresher:
    """Refreshes the providers by turns every ``interval`` seconds until stopped."""

    providers: list[str]
    interval: float
    history: History
    stop: threading.Event = field(default_factory=threading.Event)
    seconds: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def run(self) -> None:
        from dataclasses import replace

        from django.db import connection

        from catalog import choices
        from catalog.models import Provider
        from scrapers.services import prices_ingest, scrape_run_start

        first = {slug: records_of(slug) for slug in self.providers}
        round_ = 0
        try:
            while not self.stop.wait(self.interval if round_ else 1.0):
                round_ += 1
                slug = self.providers[(round_ - 1) % len(self.providers)]
                factor = FACTORS[round_ % len(FACTORS)]
                records = [
                    replace(r, amount=(r.amount * factor).quantize(Decimal("0.000001")))
                    for r in first[slug]
                ]
                provider = Provider.objects.get(slug=slug)
                start = time.perf_counter()
                run = scrape_run_start(provider=provider, trigger="bench")
                prices_ingest(
                    provider=provider, run=run, records=records, observed_at=_now(),
                    pricing_models=frozenset(r.pricing_model for r in records),
                )  # fmt: skip
                committed = _now()
                run.status = choices.ScrapeStatus.SUCCESS
                run.finished_at = committed
                run.save()
                self.seconds.append(time.perf_counter() - start)
                self.history.add(Refresh(round_, slug, committed, stored(slug)))
        except Exception as exc:  # reported with the figures; the load run goes on
            self.errors.append(repr(exc))
        finally:
            connection.close()


@dataclass
class Checker:
    """Asks new questions one after another and keeps every answer with its times."""

    port: int
    stop: threading.Event = field(default_factory=threading.Event)
    answers: list[tuple[datetime, datetime, dict[str, Any]]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def run(self) -> None:
        n = 0
        while not self.stop.wait(0.3):
            n += 1
            body = json.loads(json.dumps(HEAVY if n % 2 else LIGHT))
            body["workload"]["tokens"] = 3e8 + n * 104729 + random.random()
            sent = _now()
            try:
                _, answer = post(self.port, body)
            except Exception as exc:
                self.errors.append(repr(exc))
                continue
            self.answers.append((sent, _now(), answer))


def shelf_life_of(kinds: dict[str, str]):
    from catalog.querysets import MARKETPLACE, price_is_volatile, shelf_life_days

    def life(plan: dict[str, Any]) -> tuple[timedelta, bool]:
        market = kinds.get(plan["provider"]) == MARKETPLACE
        days = shelf_life_days(plan["pricing_model"], marketplace=market)
        return timedelta(days=days), price_is_volatile(plan["pricing_model"], marketplace=market)

    return life


def show(label: str, r: dict[str, Any], base: float | None = None) -> None:
    ratio = f"{r['p50_ms'] / base:>6.1f}x" if base else ""
    print(
        f"{label:<34} p50 {r['p50_ms']:>7.1f}  p95 {r['p95_ms']:>7.1f}  p99 {r['p99_ms']:>7.1f}  "
        f"max {r['max_ms']:>7.1f} ms  {r['rps']:>6.1f}/s  {r['requests']:>5} requests  "
        f"{r['non_2xx'] + r['errors']} non-2xx/errors {ratio}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prices", type=int, default=250_000, help="bench prices (0: keep)")
    parser.add_argument("--duration", type=int, default=60, help="seconds of load with refreshes")
    parser.add_argument("--interval", type=float, default=5.0, help="seconds between refreshes")
    parser.add_argument("--providers", type=int, default=4, help="providers refreshed by turns")
    parser.add_argument("--connections", type=int, default=2, help="wrk connections")
    parser.add_argument("--no-baseline", action="store_true", help="skip the run without refreshes")
    args = parser.parse_args()
    if not shutil.which("wrk"):
        raise SystemExit("wrk is not installed: apt-get install -y wrk")
    setup_django()
    from django.core.management import call_command
    from django.db.models import Max

    from catalog.models import Price, Provider

    if args.prices:
        call_command("scale_catalog", prices=args.prices, verbosity=0)
    vacuum()
    flush_redis()
    prices = Price.objects.count()
    print_machine(f"Recommend while providers refresh, {prices:,} prices")
    port = free_port()
    started = time.perf_counter()
    server = start_server(port)
    print(f"gunicorn answered /healthz {time.perf_counter() - started:.1f} s after it started")
    try:
        memory = {"idle": worker_memory_mib(server.pid)}
        firsts = {}
        for name, body in (("light", LIGHT), ("heavy", HEAVY)):
            firsts[name] = post(port, body)
            print(f"first {name} recommendation: {1000 * firsts[name][0]:.0f} ms")
        ranked = [p["provider"] for _, a in firsts.values() for p in a["recommendations"]]
        providers = list(dict.fromkeys(ranked))[: args.providers]
        kinds = dict(Provider.objects.values_list("slug", "kind"))
        print(f"refreshed by turns every {args.interval:g} s: {', '.join(providers)}")
        healthz = wrk(port, "/healthz", body=None, vary=False, seconds=10, conns=args.connections)
        base = healthz["p50_ms"]
        quiet = None
        if not args.no_baseline:
            quiet = wrk(port, "/api/recommend", body=LIGHT, vary=True, seconds=args.duration,
                        conns=args.connections)  # fmt: skip
        newest = Price.objects.current().filter(instance_type__is_active=True)
        history = History(as_of_before=newest.aggregate(latest=Max("observed_at"))["latest"])
        for slug in providers:
            history.add(Refresh(0, slug, _now(), stored(slug)))
        refresher = Refresher(providers, args.interval, history)
        checker = Checker(port)
        threads = [threading.Thread(target=refresher.run), threading.Thread(target=checker.run)]
        for thread in threads:
            thread.start()
        load = os.getloadavg()[0]
        try:
            busy = wrk(port, "/api/recommend", body=LIGHT, vary=True, seconds=args.duration,
                       conns=args.connections)  # fmt: skip
        finally:
            refresher.stop.set()
            checker.stop.set()
            for thread in threads:
                thread.join()
        memory["after"] = worker_memory_mib(server.pid)
    finally:
        gunicorn_stop(server)
    print(f"\nload average {load:.2f} -> {os.getloadavg()[0]:.2f}")
    show("GET /healthz", healthz)
    if quiet:
        show("recommend light cold, no refresh", quiet, base)
    show("recommend light cold, refreshing", busy, base)
    spent = refresher.seconds
    if spent:
        print(
            f"{len(spent)} refreshes ({len(providers)} providers by turns), ingest "
            f"{min(spent):.2f}-{max(spent):.2f} s each"
        )
    for label, figures in memory.items():
        print(f"worker memory {label}: " + "; ".join(
            f"RSS {m['rss']:.0f} PSS {m['pss']:.0f} USS {m['uss']:.0f} MiB" for m in figures
        ))  # fmt: skip
    problems = 0
    matched = 0
    lags = []
    life = shelf_life_of(kinds)
    for sent, received, answer in checker.answers:
        checked = answer_check(answer, history, sent_at=sent, received_at=received, shelf_life=life)
        matched += checked.matched
        if checked.problems:
            problems += 1
            if problems <= 5:
                print(f"answer sent {sent.isoformat()}: " + "; ".join(checked.problems))
        if checked.versions:
            latest = (
                max(r.index for r in history.refreshes if r.committed_at <= sent)
                if any(r.committed_at <= sent for r in history.refreshes if r.index > 0)
                else 0
            )
            behind = latest - max(checked.versions)
            if behind > 0:
                ahead = history.committed_at(max(checked.versions) + 1)
                lags.append((sent - ahead).total_seconds() if ahead else 0.0)
            else:
                lags.append(0.0)
    versions = history.last
    print(
        f"checked {len(checker.answers)} answers ({matched} plans of refreshed providers) over "
        f"{versions} refreshes: {problems} with a problem; {len(checker.errors)} requests failed; "
        f"refresher errors: {refresher.errors or 0}"
    )
    if lags:
        lags.sort()
        print(
            f"answered from a version older than the newest committed: {sum(1 for x in lags if x > 0)}"
            f" of {len(lags)}; how long after the newer one committed: p50 "
            f"{lags[len(lags) // 2]:.1f} s, max {lags[-1]:.1f} s"
        )


if __name__ == "__main__":
    main()
