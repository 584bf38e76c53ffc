"""Plan CPU of questions never asked before over a kept offer book, paired with another checkout,
and a count of the work no load can move.

Run from the repository root against a catalog already built (PostgreSQL; nothing is added,
removed or migrated):

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/plan15_db \\
      .venv/bin/python bench/profile_plan.py --shape heavy --plans 100
    ... bench/profile_plan.py --shape budget --against /work/wt/before   # paired
    ... bench/profile_plan.py --shape light --bytecodes                  # by function

Each checkout runs in a long-lived worker process of its own (its own ``sizing`` imported from
its root: a checkout of any revision with ``sizing.services.workload_build`` will do), reads the
book once (``OfferColumns`` at a fixed instant) and freezes what it holds for the collector, then
plans the shape's question with ``tokens`` 1e8 + k x 7919 (k = 1, 2, ...: never asked before in
that process), ``time.process_time()`` around ``sizing.planner.plan``. With ``--against`` each
question goes to both workers in turn, in alternating order, and the median of the per-question
ratios is printed beside each median: on a loaded machine the ratio moves far less than either.

``--bytecodes`` counts the bytecodes one plan executes, by function (``sys.settrace`` opcode
events), a figure the load cannot move. For machine instructions, run the script under valgrind
with ``--plans 1`` and ``--plans 31`` and divide the difference of the two ``I refs`` by 30:

    valgrind --tool=cachegrind --cache-sim=no .venv/bin/python bench/profile_plan.py --plans 31

(PYTHONHASHSEED=0 for both runs). The shapes are bench/profile_request.py's request bodies.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from common import ROOT, bench_environment, print_machine
from profile_request import SHAPES

# The worker: one checkout's planner over a kept book. It reads question numbers on stdin and
# answers each with the CPU seconds of that plan.
WORKER = r"""
import gc, json, os, sys, time
from dataclasses import replace
from datetime import UTC, datetime

root, body, bytecodes = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3] == "1"
sys.path.insert(0, root)
os.chdir(root)
import django

django.setup()
from sizing.planner import OfferBook, plan
from sizing.selectors import offer_columns
from sizing.services import constraints_build, workload_build

book = OfferBook(offer_columns(now=datetime(2026, 12, 5, 6, 0, tzinfo=UTC)))
workload = workload_build(body["workload"])
constraints = constraints_build(body.get("constraints"))
options = {"objective": body.get("objective", "cheapest"), "limit": body.get("limit", 10)}
for k in range(3):  # the memos of the question's shape, as a worker that has served one
    plan(replace(workload, tokens=1e8 + 1 + k), book, constraints, **options)
gc.collect()
gc.freeze()
print("ready", len(book), flush=True)
for line in sys.stdin:
    asked = replace(workload, tokens=1e8 + int(line) * 7919)
    if bytecodes:
        from collections import Counter

        counts = Counter()

        def trace(frame, event, arg):
            frame.f_trace_opcodes = True
            if event == "opcode":
                code = frame.f_code
                counts[f"{code.co_filename.rsplit('/', 2)[-1]}:{code.co_name}"] += 1
            return trace

        sys.settrace(trace)
        plan(asked, book, constraints, **options)
        sys.settrace(None)
        print(json.dumps(counts.most_common()), flush=True)
        continue
    start = time.process_time()
    plan(asked, book, constraints, **options)
    print(time.process_time() - start, flush=True)
"""


def _worker(root: Path, body: dict, bytecodes: bool = False) -> subprocess.Popen[str]:
    env = bench_environment()
    worker = subprocess.Popen(
        [sys.executable, "-c", WORKER, str(root), json.dumps(body), "1" if bytecodes else "0"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    assert worker.stdin is not None and worker.stdout is not None
    ready = worker.stdout.readline().split()
    if not ready or ready[0] != "ready":
        raise SystemExit(f"the worker of {root} did not start")
    return worker


def _ask(worker: subprocess.Popen[str], k: int) -> str:
    assert worker.stdin is not None and worker.stdout is not None
    worker.stdin.write(f"{k}\n")
    worker.stdin.flush()
    return worker.stdout.readline()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", choices=sorted(set(SHAPES) - {"compare"}), default="heavy")
    parser.add_argument("--plans", type=int, default=100, help="new questions timed")
    parser.add_argument(
        "--against", type=Path, help="another checkout, paired question by question"
    )
    parser.add_argument("--bytecodes", action="store_true", help="count one plan's bytecodes")
    args = parser.parse_args()
    os.environ.update(bench_environment())
    _, body = SHAPES[args.shape]
    print_machine(f"plan() of new {args.shape} questions over a kept book")
    if args.bytecodes:
        worker = _worker(ROOT, body, bytecodes=True)
        counts = json.loads(_ask(worker, 1))
        total = sum(n for _, n in counts)
        print(f"bytecodes executed by one plan: {total:,}")
        for name, n in counts[:30]:
            print(f"  {n:9,} {100 * n / total:5.1f}%  {name}")
        return
    roots = [ROOT] + ([args.against.resolve()] if args.against else [])
    workers = [_worker(root, body) for root in roots]
    seconds: list[list[float]] = [[] for _ in roots]
    for k in range(1, args.plans + 1):
        order = range(len(roots)) if k % 2 else reversed(range(len(roots)))
        for i in order:
            seconds[i].append(float(_ask(workers[i], k)))
    for worker in workers:
        assert worker.stdin is not None
        worker.stdin.close()
        worker.wait()
    print(f"{args.plans} new questions, load average {os.getloadavg()[0]:.2f}, plan CPU:")
    for root, times in zip(roots, seconds, strict=True):
        line = f"  {root!s:<40} median {1000 * statistics.median(times):7.2f} ms"
        if len(roots) > 1:
            ratio = statistics.median(b / a for a, b in zip(seconds[0], times, strict=True))
            line += f"  (x this checkout's, question by question: {ratio:.3f})"
        print(line)


if __name__ == "__main__":
    main()
