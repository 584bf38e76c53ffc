"""Ingest throughput: 100,000 price records through scrapers.services.prices_ingest, with history.

Run from the repository root (PostgreSQL; see bench/common.py for DATABASE_URL):

    .venv/bin/python bench/ingest.py                 # 100,000 records, three passes
    .venv/bin/python bench/ingest.py --records 20000 --profile   # pyinstrument of each pass

The records are the synthetic bench catalog (devtools/scale.py) as a scraper would hand them over,
one prices_ingest call (one transaction) per bench provider, as a refresh does. Three passes:
1. every record new (prices created, an ``appeared`` history row each);
2. the same records again (all unchanged: only observed_at and the run move);
3. 10% of the prices moved by +10% (``changed`` history rows).
Bench providers and their rows are removed afterwards unless --keep.

--workers N runs each pass as a refresh of every provider does in production (scrapers.tasks:
refresh_all fans out one task per provider to the Celery worker, ``--concurrency=2`` on a
2-core host, docs/operations.md): N processes, each with its own database connection, take the
providers in turn (the largest first, to whoever is free) until none is left. The rate is every
record over the wall time from the start of the pass to the end of its last ingest.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import time
from dataclasses import replace
from decimal import Decimal

from common import backend_cpu, backend_pid, print_machine, process_cpu, setup_django, timed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--profile", action="store_true", help="pyinstrument each pass")
    parser.add_argument("--keep", action="store_true", help="leave the bench rows in place")
    parser.add_argument(
        "--workers", type=int, default=1, help="ingest processes sharing the providers (1)"
    )
    args = parser.parse_args()
    setup_django()

    from django.utils import timezone

    from catalog import choices
    from catalog.models import Provider
    from catalog.selectors import currency_rates_latest
    from devtools.scale import (
        bench_catalog_clear,
        bench_gpu_table,
        bench_providers,
        bench_reference_ensure,
    )
    from scrapers.base import PriceRecord
    from scrapers.services import prices_ingest, scrape_run_start

    print_machine(f"Ingest: {args.records:,} price records through prices_ingest")
    bench_catalog_clear()
    synthetic = list(
        bench_providers(prices=args.records, gpus=bench_gpu_table(), rates=currency_rates_latest())
    )
    bench_reference_ensure(synthetic)
    batches = []
    for item in synthetic:
        records = [
            PriceRecord(
                instance_type=o.instance.name,
                gpu_name=o.instance.gpu.name,
                gpu_count=o.instance.gpu_count,
                region=o.region,
                pricing_model=o.pricing_model,
                amount=o.amount,
                currency=o.currency,
                unit=o.unit,
                vcpus=o.instance.vcpus,
                ram_gib=o.instance.ram_gib,
            )
            for o in item.offers
        ]
        batches.append((Provider.objects.get(slug=item.slug), records))
    total = sum(len(records) for _, records in batches)
    print(f"{len(batches)} bench providers, {total:,} records\n")
    backend = backend_pid()
    if args.workers > 1:
        print(f"{args.workers} worker processes; CPU columns: all processes and their backends")
    print(
        f"{'pass':<26} {'seconds':>8} {'records/s':>10}  created  changed  unchanged  "
        f"{'py cpu s':>8} {'pg cpu s':>8} {'records/cpu-s':>13}  load"
    )

    def ingest(provider, records) -> tuple[float, dict[str, int]]:
        """One provider's refresh as a task runs it: its run, one prices_ingest call."""
        run = scrape_run_start(provider=provider, trigger="bench")
        with timed() as clock:
            report = prices_ingest(
                provider=provider, run=run, records=records, observed_at=timezone.now(),
                pricing_models=frozenset(choices.PricingModel.values),
            )  # fmt: skip
        run.status = choices.ScrapeStatus.SUCCESS
        run.finished_at = timezone.now()
        run.save()
        return clock["seconds"], {key: getattr(report, key) for key in COUNTS}

    def run_pass(label: str, batches) -> None:
        counts = dict.fromkeys(COUNTS, 0)
        profiler = None
        if args.profile:
            from pyinstrument import Profiler

            profiler = Profiler()
            profiler.start()
        load = os.getloadavg()[0]
        if args.workers > 1:
            seconds, cpu, pg = run_workers(args.workers, batches, ingest, counts)
        else:
            seconds = 0.0
            cpu, pg = process_cpu(), backend_cpu(backend)
            for provider, records in batches:
                took, found = ingest(provider, records)
                seconds += took
                for key in counts:
                    counts[key] += found[key]
            cpu = process_cpu() - cpu
            pg_after = backend_cpu(backend)
            pg = pg_after - pg if pg is not None and pg_after is not None else 0.0
        if profiler:
            profiler.stop()
        rate = total / seconds
        print(
            f"{label:<26} {seconds:>8.2f} {rate:>10,.0f}  {counts['created']:>7,}  "
            f"{counts['changed']:>7,}  {counts['unchanged']:>9,}  {cpu:>8.1f} {pg:>8.1f} "
            f"{total / (cpu + pg):>13,.0f}  {load:.1f}"
        )
        if profiler:
            print(profiler.output_text(unicode=False, color=False))

    run_pass("1 all new", batches)
    run_pass("2 all unchanged", batches)
    moved = [
        (
            provider,
            [
                replace(r, amount=(r.amount * Decimal("1.1")).quantize(Decimal("0.0001")))
                if n % 10 == 0
                else r
                for n, r in enumerate(records)
            ],
        )
        for provider, records in batches
    ]
    run_pass("3 10% changed", moved)
    if not args.keep:
        bench_catalog_clear()


COUNTS = ("created", "changed", "unchanged")


def run_workers(
    workers: int, batches, ingest, counts: dict[str, int]
) -> tuple[float, float, float]:
    """The pass over ``workers`` forked processes that take providers from a shared queue
    (largest first). Returns the wall seconds from the start to the last ingest's end and the
    CPU seconds of the processes and of their database backends; adds to ``counts``."""
    from django.db import connections

    connections.close_all()  # each process opens its own
    order = sorted(range(len(batches)), key=lambda n: -len(batches[n][1]))
    context = multiprocessing.get_context("fork")
    queue, results = context.Queue(), context.Queue()
    for n in order:
        queue.put(n)
    for _ in range(workers):
        queue.put(None)
    # Every process connected and its CPU counters read, then all start at once.
    start = context.Barrier(workers + 1)

    def work() -> None:
        pid = backend_pid()
        cpu, pg = process_cpu(), backend_cpu(pid)
        found = dict.fromkeys(COUNTS, 0)
        start.wait()
        while (n := queue.get()) is not None:
            _, got = ingest(*batches[n])
            for key in found:
                found[key] += got[key]
        pg_after = backend_cpu(pid)
        pg = pg_after - pg if pg is not None and pg_after is not None else 0.0
        results.put((time.perf_counter(), process_cpu() - cpu, pg, found))
        connections.close_all()

    processes = [context.Process(target=work) for _ in range(workers)]
    for process in processes:
        process.start()
    start.wait()
    began = time.perf_counter()
    ends, cpu, pg = [], 0.0, 0.0
    for _ in processes:
        end, process_seconds, backend_seconds, found = results.get()
        ends.append(end)
        cpu += process_seconds
        pg += backend_seconds
        for key in counts:
            counts[key] += found[key]
    for process in processes:
        process.join()
    return max(ends) - began, cpu, pg


if __name__ == "__main__":
    main()
