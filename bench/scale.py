"""scale_catalog at size: wall time, and the CPU it costs in Python and in PostgreSQL.

    .venv/bin/python bench/scale.py                      # clear, then 250,000 prices, then again
    .venv/bin/python bench/scale.py --prices 50000 100000 250000

On a shared machine the wall time moves with the load; the CPU seconds of this process and of
its PostgreSQL backend (read from /proc/<pid>/stat, PostgreSQL on this machine) do much less, so
both are printed with the load average. The second run of the last size shows what an unchanged
catalog costs (nothing is written).
"""

from __future__ import annotations

import argparse
import os
import time

from common import backend_cpu, backend_pid, print_machine, process_cpu, setup_django


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prices", type=int, nargs="+", default=[250_000])
    parser.add_argument("--keep", action="store_true", help="leave the last catalog in place")
    args = parser.parse_args()
    setup_django()
    from devtools.scale import bench_catalog_clear, bench_catalog_scale

    print_machine("scale_catalog: bench catalog built from nothing, per size")
    bench_catalog_clear()
    backend = backend_pid()
    print(f"{'prices':>9} {'run':<6} {'wall s':>7} {'python cpu s':>13} {'pg cpu s':>9}  load avg")
    sizes = [(n, "new") for n in args.prices] + [(args.prices[-1], "again")]
    for prices, label in sizes:
        if label == "new":
            bench_catalog_clear()
        load = os.getloadavg()[0]
        cpu, pg = process_cpu(), backend_cpu(backend)
        start = time.perf_counter()
        report = bench_catalog_scale(prices=prices)
        wall = time.perf_counter() - start
        cpu = process_cpu() - cpu
        pg_after = backend_cpu(backend)
        pg_text = (
            f"{pg_after - pg:9.1f}" if pg is not None and pg_after is not None else "        -"
        )
        print(
            f"{prices:>9,} {label:<6} {wall:7.1f} {cpu:13.1f} {pg_text}  "
            f"{load:.1f} -> {os.getloadavg()[0]:.1f}   ({report.as_text()})"
        )
    if not args.keep:
        bench_catalog_clear()


if __name__ == "__main__":
    main()
