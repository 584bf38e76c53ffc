"""Recommendation latency and throughput under gunicorn (2 workers), next to /healthz, with wrk.

Run from the repository root (needs `wrk`: `apt-get install -y wrk`; PostgreSQL and Redis on
127.0.0.1; loopback traffic only, each load run bounded in time):

    .venv/bin/python bench/recommend_load.py                      # default catalog, then 50,000
    .venv/bin/python bench/recommend_load.py --sizes 0 --duration 10

For each catalog size (bench prices added by scale_catalog on top of the curated catalog) it
starts gunicorn with the production settings and 2 workers, then runs wrk against:
- GET /healthz, the trivial endpoint (it checks the database and Redis);
- POST /api/recommend, a LoRA question and a 70B full fine-tune, the same body each time (a CI
  burst: the first request computes, the rest come from the answer cache);
- the same two with a different `tokens` in every request ("cold": every request computes),
  and the light one with max_usd_per_hour (a price limit: which node counts pass depends on
  each offer's price);
- POST /api/compare, the light and the heavy workload on named GPUs, cold.
The gunicorn master reads the offer book before it forks the workers (gunicorn.conf.py), so
"start-up" (gunicorn started to /healthz answering) includes that read and the first
recommendation does not; a 3-second warm-up run, not reported, precedes the measured runs.
Worker memory is given as RSS (shared pages counted in full), PSS and USS (the worker's own
pages); "no book" is a worker of a server started once with OFFER_BOOK_READ_AT_START=false
after /healthz only, the idle worker item 2 of issue 15 measures against.
Each run reports p50/p95/p99 and requests/s; recommend p50 is also given as a multiple of /healthz.
The database is vacuumed after each catalog change, as autovacuum would.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

from common import (
    gunicorn_start,
    gunicorn_stop,
    print_machine,
    served_environment,
    setup_django,
)

LIGHT = {
    "workload": {
        "model": "llama-3-8b",
        "method": "lora",
        "gradient_checkpointing": "full",
        "tokens": 2e8,
    },
    "constraints": {"pricing": ["on_demand", "spot"]},
    "limit": 10,
}
HEAVY = {
    "workload": {
        "model": "llama-3-70b",
        "method": "full",
        "gradient_checkpointing": "full",
        "tokens": 1e9,
    },
    "constraints": {"datacenter_only": True},
    "objective": "cheapest",
    "limit": 10,
}
# The light question with a price cap: which node counts pass then depends on each price.
BUDGET = {**LIGHT, "constraints": {**LIGHT["constraints"], "max_usd_per_hour": 20}}
# /api/compare: the light question and the heavy one on named GPUs (every offer of each GPU,
# ranked with its plan, and why the others lose).
COMPARE = {
    "workload": LIGHT["workload"],
    "targets": [{"gpu": "h100-sxm"}, {"gpu": "a100-sxm4-80gb"}, {"gpu": "l40s"}],
}
COMPARE_HEAVY = {
    "workload": HEAVY["workload"],
    "targets": [{"gpu": g} for g in ("h100-sxm", "h200-sxm", "a100-sxm4-80gb", "mi300x")],
}
# Its own Redis database (flushed before each catalog): BENCH_REDIS_URL to use another.
REDIS_URL = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/5")

# wrk script: one request shape, optionally a new `tokens` per request (cache misses), and the
# figures printed as JSON at the end.
LUA = """
wrk.method = "%(method)s"
wrk.headers["Content-Type"] = "application/json"
local body = [[%(body)s]]
local vary = %(vary)s
local counter = 0
request = function()
  if vary then
    counter = counter + 1
    local b = string.gsub(body, '"tokens": [0-9.e+]+', '"tokens": ' .. (1e8 + counter * 7919))
    return wrk.format(nil, nil, nil, b)
  end
  return wrk.format(nil, nil, nil, %(body_or_nil)s)
end
done = function(summary, latency, requests)
  local s = summary.duration / 1e6
  io.write(string.format(
    'RESULT {"requests": %%d, "seconds": %%.3f, "p50_ms": %%.2f, "p95_ms": %%.2f, ' ..
    '"p99_ms": %%.2f, "max_ms": %%.2f, "non_2xx": %%d, "errors": %%d}\\n',
    summary.requests, s, latency:percentile(50) / 1000, latency:percentile(95) / 1000,
    latency:percentile(99) / 1000, latency.max / 1000, summary.errors.status,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server(port: int, **extra: str) -> subprocess.Popen:
    """gunicorn as production runs it (gunicorn.conf.py), ``extra`` added to its environment."""
    env = served_environment(REDIS_URL)
    env.update(extra)
    return gunicorn_start(env, port, probe="/healthz")


def post(port: int, body: dict) -> tuple[float, dict]:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/api/recommend",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    start = time.perf_counter()
    with urllib.request.urlopen(request, timeout=120) as reply:
        answer = json.loads(reply.read())
    return time.perf_counter() - start, answer


def wrk(port: int, path: str, *, body: dict | None, vary: bool, seconds: int, conns: int) -> dict:
    text = json.dumps(body) if body else ""
    script = LUA % {
        "method": "POST" if body else "GET",
        "body": text,
        "vary": "true" if vary else "false",
        "body_or_nil": "body" if body else "nil",
    }
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as fh:
        fh.write(script)
    try:
        out = subprocess.run(
            ["wrk", "-t1", f"-c{conns}", f"-d{seconds}s", "--timeout", "60s", "-s", fh.name,
             f"http://127.0.0.1:{port}{path}"],
            capture_output=True, text=True, timeout=seconds + 120,
        )  # fmt: skip
    finally:
        os.unlink(fh.name)
    for line in out.stdout.splitlines():
        if line.startswith("RESULT "):
            result = json.loads(line.removeprefix("RESULT "))
            result["rps"] = result["requests"] / result["seconds"]
            return result
    raise SystemExit(f"wrk printed no result:\n{out.stdout}\n{out.stderr}")


def worker_rss_mib(master: int) -> list[float]:
    """Resident memory of each gunicorn worker (the master's children), MiB."""
    try:
        children = Path(f"/proc/{master}/task/{master}/children").read_text().split()
    except OSError:
        return []
    sizes = []
    for pid in children:
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    sizes.append(int(line.split()[1]) / 1024)
        except OSError:
            continue
    return sorted(sizes)


def worker_memory_mib(master: int) -> list[dict[str, float]]:
    """Each gunicorn worker's memory, MiB: resident (RSS, shared pages counted in full), its
    proportional share (PSS: a page shared by n processes counts 1/n) and its own pages (USS:
    private clean + dirty, what the worker adds). Under preload_app a worker shares the offer
    book the master read, so RSS overstates what each worker costs."""
    try:
        children = Path(f"/proc/{master}/task/{master}/children").read_text().split()
    except OSError:
        return []
    figures = []
    for pid in children:
        fields: dict[str, float] = {}
        try:
            for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()[1:]:
                name, _, rest = line.partition(":")
                fields[name] = int(rest.split()[0]) / 1024
        except (OSError, ValueError, IndexError):
            continue
        figures.append(
            {
                "rss": fields.get("Rss", 0.0),
                "pss": fields.get("Pss", 0.0),
                "uss": fields.get("Private_Clean", 0.0) + fields.get("Private_Dirty", 0.0),
            }
        )
    return sorted(figures, key=lambda m: m["rss"])


def vacuum() -> None:
    """VACUUM ANALYZE, as autovacuum would after a bulk change (some test set-ups run PostgreSQL
    with autovacuum off, and a table full of dead rows slows every scan)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")


def flush_redis() -> None:
    import redis

    redis.Redis.from_url(REDIS_URL).flushdb()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sizes", default="0,50000", help="bench prices to add, comma-separated (0: default)"
    )
    parser.add_argument("--duration", type=int, default=15, help="seconds per wrk run")
    parser.add_argument("--connections", type=int, default=2, help="wrk connections")
    args = parser.parse_args()
    if not shutil.which("wrk"):
        raise SystemExit("wrk is not installed: apt-get install -y wrk")
    setup_django()
    from django.core.management import call_command

    from catalog.models import Price

    print_machine("Recommend under gunicorn -w 2, with wrk, next to /healthz")
    print(
        f"wrk -t1 -c{args.connections} -d{args.duration}s over loopback; gunicorn "
        "config.wsgi:application -w 2, config.settings.production, Redis cache\n"
    )
    port = free_port()
    server = start_server(port, OFFER_BOOK_READ_AT_START="false")
    try:
        bare = worker_memory_mib(server.pid)  # started, no book, /healthz only
    finally:
        gunicorn_stop(server)
    bare_rss = max((m["rss"] for m in bare), default=0.0)
    print(
        "worker without a book (/healthz only): RSS "
        + ", ".join(f"{m['rss']:.0f}" for m in bare)
        + " MiB\n"
    )
    rows = []
    for size in [int(s) for s in args.sizes.split(",")]:
        if size:
            call_command("scale_catalog", prices=size, verbosity=0)
        else:
            call_command("scale_catalog", clear=True, verbosity=0)
        prices = Price.objects.count()
        vacuum()
        flush_redis()
        port = free_port()
        started = time.perf_counter()
        server = start_server(port)  # the master reads the offer book before it listens
        startup = time.perf_counter() - started
        load = os.getloadavg()[0]
        try:
            idle = worker_memory_mib(server.pid)  # the book read in the master, shared
            first = {}
            for name, body in (("light", LIGHT), ("heavy", HEAVY)):
                seconds, answer = post(port, body)  # the first ask computes and fills the cache
                first[name] = (seconds, len(answer["recommendations"]), answer["considered"])
            runs = [("/healthz", "GET /healthz", None, False)]
            runs += [("/api/recommend", f"recommend {n}", b, False) for n, b in
                     (("light", LIGHT), ("heavy", HEAVY))]  # fmt: skip
            runs += [("/api/recommend", f"recommend {n} cold", b, True) for n, b in
                     (("light", LIGHT), ("heavy", HEAVY), ("budget", BUDGET))]  # fmt: skip
            runs += [("/api/compare", f"compare {n} cold", b, True) for n, b in
                     (("light", COMPARE), ("heavy", COMPARE_HEAVY))]  # fmt: skip
            wrk(port, "/api/recommend", body=LIGHT, vary=True, seconds=3, conns=2)  # warm-up
            results = {}
            for path, label, body, vary in runs:
                results[label] = wrk(
                    port, path, body=body, vary=vary, seconds=args.duration,
                    conns=args.connections,
                )  # fmt: skip
            busy = worker_memory_mib(server.pid)
        finally:
            gunicorn_stop(server)
        base = results["GET /healthz"]["p50_ms"]
        print(f"## catalog: {prices:,} prices ({size:,} synthetic)")
        print(
            f"load average {load:.1f} -> {os.getloadavg()[0]:.1f}; gunicorn started to /healthz "
            f"answering (the master's read of the offer book included): {startup:.1f} s"
        )
        for label, figures in (("idle (book shared)", idle), ("after the runs", busy)):
            print(
                f"worker memory {label}, MiB: "
                + "; ".join(
                    f"RSS {m['rss']:.0f} PSS {m['pss']:.0f} USS {m['uss']:.0f}" for m in figures
                )
                + " (RSS above a worker without a book: "
                + ", ".join(f"{m['rss'] - bare_rss:.0f}" for m in figures)
                + ")"
            )
        for name, (seconds, plans, considered) in first.items():
            print(
                f"first {name} request: {seconds * 1000:.0f} ms, {plans} plans, considered {considered:,}"
            )
        print(
            f"{'endpoint':<24} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} {'req/s':>8} "
            f"{'requests':>8} {'non-2xx':>7} {'p50/healthz':>11} {'p95/healthz':>11}"
        )
        base95 = results["GET /healthz"]["p95_ms"]
        for label, r in results.items():
            print(
                f"{label:<24} {r['p50_ms']:>8.2f} {r['p95_ms']:>8.2f} {r['p99_ms']:>8.2f} "
                f"{r['rps']:>8.1f} {r['requests']:>8} {r['non_2xx'] + r['errors']:>7} "
                f"{r['p50_ms'] / base:>10.1f}x {r['p95_ms'] / base95:>10.1f}x"
            )
        print()
        rows.append((prices, results))
    call_command("scale_catalog", clear=True, verbosity=0)


if __name__ == "__main__":
    main()
