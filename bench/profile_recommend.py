"""Where a recommendation's time goes: pyinstrument over one uncached recommendation.

Run from the repository root (PostgreSQL; see bench/common.py):

    .venv/bin/python bench/profile_recommend.py --prices 50000     # bench prices on top
    .venv/bin/python bench/profile_recommend.py --prices 0 --heavy

It times the two halves of sizing.selectors.recommend without its answer cache: loading the
offers (offer_list) and planning (planner.plan), then prints pyinstrument's call tree of the two.
"""

from __future__ import annotations

import argparse
import time

from common import print_machine, setup_django


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prices", type=int, default=50_000, help="bench prices to add")
    parser.add_argument("--heavy", action="store_true", help="70B full fine-tune, not 8B LoRA")
    args = parser.parse_args()
    setup_django()
    from django.core.management import call_command
    from django.db import connection
    from pyinstrument import Profiler

    from catalog.models import Price
    from sizing.api.views import _constraints, _workload
    from sizing.planner import plan
    from sizing.selectors import offer_list

    if args.prices:
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
    workload = _workload(data)
    for _ in range(3):
        start = time.perf_counter()
        offers = offer_list(constraints)
        loaded = time.perf_counter()
        result = plan(workload, offers, constraints, limit=10)
        done = time.perf_counter()
        print(
            f"offers {len(offers):,}: load {1000 * (loaded - start):.0f} ms, plan "
            f"{1000 * (done - loaded):.0f} ms ({result.considered:,} node counts weighed)"
        )
    profiler = Profiler(interval=0.0005)
    profiler.start()
    plan(workload, offer_list(constraints), constraints, limit=10)
    profiler.stop()
    print(profiler.output_text(unicode=False, color=False))


if __name__ == "__main__":
    main()
