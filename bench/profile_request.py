"""Where a whole uncached /api/recommend (or /api/compare) request's time goes, not only `plan`.

Run from the repository root against a catalog already built (PostgreSQL and Redis; see
bench/common.py; nothing is added or removed here):

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/serve_perf \\
      BENCH_REDIS_URL=redis://127.0.0.1:6379/12 .venv/bin/python bench/profile_request.py

It sends requests through Django's full stack in process (middleware, DRF parsing, validation,
the view, the renderer; production settings, the Redis cache) with the test client, after one
request that reads the offer book, each with a `tokens` never asked before. It prints the
median time of the request and of its parts (`sizing.planner.plan` and the other named steps,
by wrapping them), the part outside `plan`, then pyinstrument's call tree of one more request.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import statistics
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from common import print_machine, served_environment

LIGHT = {
    "workload": {"model": "llama-3-8b", "method": "lora", "gradient_checkpointing": "full",
                 "tokens": 2e8},
    "constraints": {"pricing": ["on_demand", "spot"]},
    "limit": 10,
}  # fmt: skip
HEAVY = {
    "workload": {"model": "llama-3-70b", "method": "full", "gradient_checkpointing": "full",
                 "tokens": 1e9},
    "constraints": {"datacenter_only": True},
    "objective": "cheapest",
    "limit": 10,
}  # fmt: skip
COMPARE = {
    "workload": {"model": "llama-3-8b", "method": "lora", "gradient_checkpointing": "full",
                 "tokens": 2e8},
    "targets": [{"gpu": "h100-sxm"}, {"gpu": "a100-sxm4-80gb"}, {"gpu": "l40s"}],
}  # fmt: skip
# The light question with a price cap (bench/recommend_load.py's "budget").
BUDGET = {**LIGHT, "constraints": {**LIGHT["constraints"], "max_usd_per_hour": 20}}
SHAPES = {"light": ("/api/recommend", LIGHT), "heavy": ("/api/recommend", HEAVY),
          "budget": ("/api/recommend", BUDGET), "compare": ("/api/compare", COMPARE)}  # fmt: skip

# Timed steps: (module, attribute) wrapped in place so that every caller's look-up finds the
# wrapper (``selectors`` imports ``plan`` by name, so it is wrapped there).
STEPS = (
    ("sizing.selectors", "plan"),
    ("sizing.selectors", "catalog_version"),
    ("sizing.selectors", "offer_book"),
    ("sizing.selectors", "catalog_as_of"),  # before: a query per answer
    ("sizing.selectors", "catalog_version_recent"),
    ("sizing.selectors", "book_as_of"),
    ("sizing.selectors", "_compare_index"),
    ("sizing.selectors", "_cache_get"),
    ("sizing.selectors", "_cache_set"),
    ("sizing.selectors", "_headline_estimate"),
    ("sizing.selectors", "plan_dict"),
    ("sizing.selectors", "rejected_dict"),
    ("sizing.selectors", "recommend"),
    ("sizing.selectors", "compare"),
    ("sizing.api.views", "workload_build"),
    ("sizing.api.views", "constraints_build"),
    ("rest_framework.renderers.JSONRenderer", "render"),
)


def _wrap(spent: dict[str, float], name: str, func: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(func)
    def timed(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return func(*args, **kwargs)
        finally:
            spent[name] += time.perf_counter() - start

    return timed


def instrument(spent: dict[str, float]) -> None:
    import importlib

    for module_name, attr in STEPS:
        if module_name.endswith("JSONRenderer"):
            from rest_framework.renderers import JSONRenderer

            owner: Any = JSONRenderer
        else:
            owner = importlib.import_module(module_name)
        if not hasattr(owner, attr):  # a step of another revision
            continue
        name = f"{module_name.rsplit('.', 1)[-1]}.{attr}"
        setattr(owner, attr, _wrap(spent, name, getattr(owner, attr)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", choices=sorted(SHAPES), default="light")
    parser.add_argument("--requests", type=int, default=20, help="timed requests")
    parser.add_argument("--no-profile", action="store_true", help="skip the call tree")
    args = parser.parse_args()
    env = served_environment(
        os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/12"), hosts="testserver,127.0.0.1"
    )
    env.update(OFFER_BOOK_READ_AT_START="false")
    os.environ.update(env)
    import django

    django.setup()
    from django.test import Client
    from pyinstrument import Profiler

    from catalog.models import Price

    print_machine(f"One uncached {args.shape} request in process, {Price.objects.count():,} prices")
    path, body = SHAPES[args.shape]
    client = Client()
    counter = iter(range(1, 10**9))

    cpu: list[float] = []

    def send() -> float:
        data = json.loads(json.dumps(body))
        data["workload"]["tokens"] = 1e8 + next(counter) * 7919 + time.time() % 1e5
        start, thread_start = time.perf_counter(), time.thread_time()
        reply = client.post(path, data=json.dumps(data), content_type="application/json")
        took = time.perf_counter() - start
        cpu.append(time.thread_time() - thread_start)  # this request's CPU, whatever the load
        if reply.status_code != 200:
            raise SystemExit(f"{path} answered {reply.status_code}: {reply.content[:500]!r}")
        return took

    first = send()
    print(f"first request (reads the offer book): {1000 * first:.0f} ms")
    spent: dict[str, float] = defaultdict(float)
    instrument(spent)
    totals = []
    parts: dict[str, list[float]] = defaultdict(list)
    for _ in range(args.requests):
        spent.clear()
        totals.append(send())
        for name, seconds in spent.items():
            parts[name].append(seconds)
    total = statistics.median(totals)
    print(f"{args.requests} new questions, median ms (load average {os.getloadavg()[0]:.2f}):")
    print(f"  {'whole request':<32} {1000 * total:8.1f}")
    print(f"  {'whole request, CPU':<32} {1000 * statistics.median(cpu[1:]):8.1f}")
    for name in sorted(parts, key=lambda n: -statistics.median(parts[n])):
        print(f"  {name:<32} {1000 * statistics.median(parts[name]):8.1f}")
    planned = parts.get("selectors.plan", [0.0] * len(totals))
    outside = statistics.median(t - p for t, p in zip(totals, planned, strict=True))
    print(f"  {'outside plan (median of each)':<32} {1000 * outside:8.1f}")
    if not args.no_profile:
        profiler = Profiler(interval=0.0005)
        profiler.start()
        send()
        profiler.stop()
        print(profiler.output_text(unicode=False, color=False))


if __name__ == "__main__":
    main()
