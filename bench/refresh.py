"""A full refresh of every provider from the recorded pages, served over loopback.

Run from the repository root (PostgreSQL; its own database by default, since the refresh writes
scraped prices that the recommendation benchmark should not see):

    .venv/bin/python bench/refresh.py               # two full refreshes, timed per provider
    .venv/bin/python bench/refresh.py --runs 3

tests/scrapers/loopback.py serves tests/scrapers/pages/ on 127.0.0.1; every scraper is pointed
at it (as CI's worker test does) and ``provider_refresh`` runs for each provider with a scraper,
in this process, as ``manage.py refresh_prices`` does. The first run meets the curated snapshot;
later runs see the same pages again (unchanged prices).
"""

from __future__ import annotations

import argparse
import os
import time

from common import DEFAULT_DATABASE_URL, print_machine, setup_django

REFRESH_DATABASE_URL = DEFAULT_DATABASE_URL.rsplit("/", 1)[0] + "/gpuatlas_bench_refresh"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2)
    args = parser.parse_args()
    os.environ.setdefault("DATABASE_URL", REFRESH_DATABASE_URL)
    setup_django()

    from django.conf import settings

    from catalog.models import Price, Provider
    from scrapers.services import provider_refresh
    from tests.scrapers.loopback import LoopbackServer, point_settings_at

    print_machine("Refresh: every provider from recorded pages over loopback")
    slugs = list(Provider.objects.with_scraper().values_list("slug", flat=True))
    with LoopbackServer() as server:
        point_settings_at(server, settings)
        for n in range(1, args.runs + 1):
            print(f"run {n}: {Price.objects.count():,} prices stored before")
            print(
                f"  {'provider':<10} {'status':<8} {'pages':>5} {'records':>7} {'created':>7} "
                f"{'changed':>7} {'unchanged':>9} {'seconds':>8}"
            )
            total = 0.0
            records = 0
            for slug in slugs:
                start = time.perf_counter()
                run = provider_refresh(provider_slug=slug, trigger="bench")
                seconds = time.perf_counter() - start
                total += seconds
                records += run.records_seen
                print(
                    f"  {slug:<10} {run.status:<8} {run.pages:>5} {run.records_seen:>7} "
                    f"{run.created:>7} {run.changed:>7} {run.unchanged:>9} {seconds:>8.2f}"
                )
            print(
                f"  {'all':<10} {'':<8} {'':>5} {records:>7} {'':>7} {'':>7} {'':>9} {total:>8.2f}\n"
            )


if __name__ == "__main__":
    main()
