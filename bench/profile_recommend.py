"""Where a recommendation's time goes: pyinstrument over one uncached recommendation.

Run from the repository root (PostgreSQL; see bench/common.py):

    .venv/bin/python bench/profile_recommend.py --prices 50000     # bench prices on top
    .venv/bin/python bench/profile_recommend.py --prices 0 --heavy

It times the two halves of sizing.selectors.recommend without its answer cache: reading the
catalog into an offer book (once per worker and catalog version: offer_columns + OfferBook) and
planning over the book (every question not asked before), wall and CPU time; then how long
bringing the kept book up to date takes after a refresh of one provider (the one with the most
prices: its prices_version is moved, as every ingest does, so the read takes it again) against
reading the whole catalog (sizing.selectors._read); then prints pyinstrument's call tree of
planning (with --load, of reading as well).
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace
from typing import Any

from common import percentiles, print_machine, setup_django


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prices", type=int, default=50_000, help="bench prices to add")
    parser.add_argument("--heavy", action="store_true", help="70B full fine-tune, not 8B LoRA")
    parser.add_argument("--load", action="store_true", help="profile reading the book as well")
    parser.add_argument(
        "--skip-scale", action="store_true", help="use the catalog as it is (no scale_catalog)"
    )
    parser.add_argument(
        "--max-usd-per-hour", type=float, help="a price limit (node counts then pass by price)"
    )
    args = parser.parse_args()
    setup_django()
    from django.core.management import call_command
    from django.db import connection
    from pyinstrument import Profiler

    from catalog.models import Price
    from sizing import selectors
    from sizing.planner import OfferBook, plan
    from sizing.selectors import offer_columns
    from sizing.services import constraints_build as _constraints
    from sizing.services import workload_build as _workload

    if args.skip_scale:
        pass
    elif args.prices:
        call_command("scale_catalog", prices=args.prices, verbosity=0)
    else:
        call_command("scale_catalog", clear=True, verbosity=0)
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")
    print_machine(f"Profile of one uncached recommendation, {Price.objects.count():,} prices")
    if args.heavy:
        data = {"model": "llama-3-70b", "method": "full", "gradient_checkpointing": "full",
                "tokens": 1e9}  # fmt: skip
        constraints = _constraints({"datacenter_only": True})
    else:
        data = {"model": "llama-3-8b", "method": "lora", "gradient_checkpointing": "full",
                "tokens": 2e8}  # fmt: skip
        constraints = _constraints({"pricing": ["on_demand", "spot"]})
    if args.max_usd_per_hour is not None:
        constraints = replace(constraints, max_usd_per_hour=args.max_usd_per_hour)
    workload = _workload(data)
    before = _rss_mib()
    print(f"process RSS before reading a book: {before:.0f} MiB")
    for _ in range(3):
        start, cpu = time.perf_counter(), time.process_time()
        book = OfferBook(offer_columns())
        loaded, loaded_cpu = time.perf_counter(), time.process_time()
        result = plan(workload, book, constraints, limit=10)
        done, done_cpu = time.perf_counter(), time.process_time()
        print(
            f"offers {len(book):,}: read into a book {1000 * (loaded - start):.0f} ms "
            f"(CPU {1000 * (loaded_cpu - cpu):.0f} ms), plan {1000 * (done - loaded):.0f} ms "
            f"(CPU {1000 * (done_cpu - loaded_cpu):.0f} ms; {result.considered:,} node counts "
            "weighed)"
        )
    print(f"process RSS holding one book: {_rss_mib():.0f} MiB ({_rss_mib() - before:+.0f} MiB)")
    times, cpu_times = [], []
    for n in range(20):
        start, cpu = time.perf_counter(), time.process_time()
        plan(replace(workload, tokens=workload.tokens * (1 + n / 100)), book, constraints, limit=10)
        times.append(1000 * (time.perf_counter() - start))
        cpu_times.append(1000 * (time.process_time() - cpu))
    spread, cpu_spread = percentiles(times), percentiles(cpu_times)
    print(
        f"plan over a kept book, 20 new questions: p50 {spread['p50']:.0f} ms, "
        f"max {max(times):.0f} ms (CPU p50 {cpu_spread['p50']:.0f} ms, max {max(cpu_times):.0f})"
    )
    _time_update(selectors)
    profiler = Profiler(interval=0.0005)
    profiler.start()
    if args.load:
        book = OfferBook(offer_columns())
    plan(workload, book, constraints, limit=10)
    profiler.stop()
    print(profiler.output_text(unicode=False, color=False))


def _time_update(selectors: Any) -> None:
    """Time bringing a kept book up to date after one provider's refresh (read that provider
    again, ``OfferBook.updated``: what a worker's ``_swap_in`` does), three times in a row as
    refreshes come, against a full read and arrangement."""
    from django.db.models import Count, F
    from django.utils import timezone

    from catalog.models import Price, Provider

    held, _ = selectors._read(timezone.now(), None)
    book = selectors.OfferBook(held.columns)
    busiest = (
        Price.objects.current()
        .values("instance_type__provider_id", "instance_type__provider__slug")
        .annotate(n=Count("id"))
        .order_by("-n")[0]
    )
    name = f"{busiest['instance_type__provider__slug']}: {busiest['n']:,} prices"
    for _ in range(3):
        Provider.objects.filter(pk=busiest["instance_type__provider_id"]).update(
            prices_version=F("prices_version") + 1
        )
        start, cpu = time.perf_counter(), time.process_time()
        reading, reread = selectors._read(timezone.now(), held)
        read, read_cpu = time.perf_counter(), time.process_time()
        book = book.updated(reading.columns, reading.dropped, reading.added)
        print(
            f"book up to date, one provider refreshed ({name}; providers read again: {reread}): "
            f"{1000 * (time.perf_counter() - start):.0f} ms (CPU {1000 * (time.process_time() - cpu):.0f} ms; "
            f"read {1000 * (read - start):.0f} ms, CPU {1000 * (read_cpu - cpu):.0f}), "
            f"{len(book):,} offers, {reading.columns.dead_count:,} dead rows"
        )
        held = reading
    start, cpu = time.perf_counter(), time.process_time()
    reading, reread = selectors._read(timezone.now(), None)
    book = selectors.OfferBook(reading.columns)
    print(
        f"book read and arranged from scratch (providers read again: all): "
        f"{1000 * (time.perf_counter() - start):.0f} ms "
        f"(CPU {1000 * (time.process_time() - cpu):.0f} ms), {len(book):,} offers"
    )


def _rss_mib() -> float:
    """This process's resident set size, MiB (Linux)."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


if __name__ == "__main__":
    main()
