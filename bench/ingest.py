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
"""

from __future__ import annotations

import argparse
import os
from dataclasses import replace
from decimal import Decimal

from common import backend_cpu, backend_pid, print_machine, process_cpu, setup_django, timed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--profile", action="store_true", help="pyinstrument each pass")
    parser.add_argument("--keep", action="store_true", help="leave the bench rows in place")
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
    print(
        f"{'pass':<26} {'seconds':>8} {'records/s':>10}  created  changed  unchanged  "
        f"{'py cpu s':>8} {'pg cpu s':>8} {'records/cpu-s':>13}  load"
    )

    def run_pass(label: str, batches) -> None:
        counts = {"created": 0, "changed": 0, "unchanged": 0}
        profiler = None
        if args.profile:
            from pyinstrument import Profiler

            profiler = Profiler()
            profiler.start()
        seconds = 0.0
        cpu, pg = process_cpu(), backend_cpu(backend)
        load = os.getloadavg()[0]
        for provider, records in batches:
            run = scrape_run_start(provider=provider, trigger="bench")
            with timed() as clock:
                report = prices_ingest(
                    provider=provider, run=run, records=records, observed_at=timezone.now(),
                    pricing_models=frozenset(choices.PricingModel.values),
                )  # fmt: skip
            seconds += clock["seconds"]
            run.status = choices.ScrapeStatus.SUCCESS
            run.finished_at = timezone.now()
            run.save()
            for key in counts:
                counts[key] += getattr(report, key)
        if profiler:
            profiler.stop()
        cpu = process_cpu() - cpu
        pg_after = backend_cpu(backend)
        pg = pg_after - pg if pg is not None and pg_after is not None else 0.0
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


if __name__ == "__main__":
    main()
