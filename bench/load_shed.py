"""Load shedding: at twice the served rate, how long requests wait, and how many are shed (503).

Run from the repository root (loopback only; no PostgreSQL or Redis needed: a temporary SQLite
catalog; bounded: about a minute in all):

    .venv/bin/python bench/load_shed.py
    .venv/bin/python bench/load_shed.py --measure-s 5 --overload-s 8 --factor 2

It starts gunicorn (production settings, 2 sync workers) twice, with load shedding on
(LOAD_SHED_QUEUE_SECONDS=--bound-s) and off. Against each it first measures the served rate with
a closed loop (--clients concurrent clients, --measure-s seconds), then sends an open loop at
--factor times that rate for --overload-s seconds. Each request carries the X-Request-Start stamp
nginx would add (its scheduled send time), so time spent waiting for a connection or a worker
counts as queueing, as behind the compose proxy. Latency is from the scheduled send time to the
last byte. The client runs on the same machine, so its own CPU use lowers the served rate.
"""

from __future__ import annotations

import argparse
import http.client
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from common import ROOT, gunicorn_start, gunicorn_stop, percentiles, print_machine

PATH = "/api/prices/?page_size=200"
MAX_OUTSTANDING = 128  # client connections at once (what nginx would hold open upstream)
REQUEST_TIMEOUT_S = 60.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def environment(database: str, bound_s: float) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings.production",
        DJANGO_SECRET_KEY="bench-only-secret-key-load-shed-not-for-deployment",
        DJANGO_SECURE_SSL_REDIRECT="false",
        DJANGO_ALLOWED_HOSTS="127.0.0.1,localhost",
        DATABASE_URL=f"sqlite:///{database}",
        API_ANON_THROTTLE_RATE="100000000/minute",
        LOAD_SHED_QUEUE_SECONDS=str(bound_s),
        LOAD_SHED_RETRY_AFTER_SECONDS="5",
        LOG_LEVEL="ERROR",
    )
    return env


def prepare(database: str) -> None:
    env = environment(database, 0)
    for command in (["migrate", "--noinput", "-v0"], ["load_catalog"]):
        subprocess.run(
            [sys.executable, "manage.py", *command],
            cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL,
        )  # fmt: skip


def start(database: str, bound_s: float, port: int) -> subprocess.Popen:
    return gunicorn_start(environment(database, bound_s), port, extra=("--backlog", "64"))


def one_request(port: int, scheduled: float) -> tuple[int, float]:
    """(status, seconds from the scheduled send to the last byte); status 0 on a socket error."""
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=REQUEST_TIMEOUT_S)
        conn.request("GET", PATH, headers={"X-Request-Start": f"t={scheduled:.3f}"})
        response = conn.getresponse()
        response.read()
        status = response.status
        conn.close()
    except OSError:
        status = 0
    return status, time.time() - scheduled


def served_rate(port: int, clients: int, seconds: float) -> float:
    """Requests per second a closed loop of ``clients`` gets answered (all 200)."""
    done = [0]
    lock = threading.Lock()
    end = time.monotonic() + seconds

    def loop() -> None:
        while time.monotonic() < end:
            status, _ = one_request(port, time.time())
            if status == 200:
                with lock:
                    done[0] += 1

    threads = [threading.Thread(target=loop) for _ in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return done[0] / seconds


def overload(port: int, rate: float, seconds: float) -> list[tuple[int, float]]:
    """An open loop at ``rate`` requests/s for ``seconds``; every request's (status, latency)."""
    count = int(rate * seconds)
    interval = 1.0 / rate
    futures = []
    start_at = time.time() + 0.2
    with ThreadPoolExecutor(max_workers=MAX_OUTSTANDING) as pool:
        for i in range(count):
            scheduled = start_at + i * interval
            delay = scheduled - time.time()
            if delay > 0:
                time.sleep(delay)
            futures.append(pool.submit(one_request, port, scheduled))
        return [f.result() for f in futures]


def report(label: str, results: list[tuple[int, float]], rate: float, seconds: float) -> None:
    ok = [lat for status, lat in results if status == 200]
    shed = [lat for status, lat in results if status == 503]
    other = [status for status, _ in results if status not in (200, 503)]
    print(f"\n{label}: {len(results)} requests at {rate:.1f}/s for {seconds:.0f} s")
    print(f"  200: {len(ok)}  503 (shed): {len(shed)}  other/errors: {len(other)}")
    if ok:
        p = percentiles([x * 1000 for x in ok])
        print(
            f"  200 latency ms: p50 {p['p50']:.0f}  p95 {p['p95']:.0f}  p99 {p['p99']:.0f}  max {max(ok) * 1000:.0f}"
        )
    if shed:
        p = percentiles([x * 1000 for x in shed])
        print(
            f"  503 latency ms: p50 {p['p50']:.0f}  p99 {p['p99']:.0f}  max {max(shed) * 1000:.0f}"
        )
    everything = [lat for _, lat in results]
    print(f"  longest wait of any request: {max(everything) * 1000:.0f} ms")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--measure-s", type=float, default=5.0)
    parser.add_argument("--overload-s", type=float, default=8.0)
    parser.add_argument("--factor", type=float, default=2.0)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--bound-s", type=float, default=2.0)
    args = parser.parse_args()
    print_machine("Load shedding at twice the served rate")
    print(f"endpoint: GET {PATH}; gunicorn: 2 sync workers, --backlog 64")
    workdir = tempfile.mkdtemp(prefix="gpuatlas-loadshed-")
    database = os.path.join(workdir, "bench.sqlite3")
    try:
        prepare(database)
        for label, bound_s in (("shedding on", args.bound_s), ("shedding off", 0.0)):
            port = free_port()
            server = start(database, bound_s, port)
            try:
                one_request(port, time.time())  # warm both workers' imports
                one_request(port, time.time())
                rate = served_rate(port, args.clients, args.measure_s)
                print(
                    f"\n[{label}, LOAD_SHED_QUEUE_SECONDS={bound_s}] served rate: {rate:.1f} req/s"
                )
                results = overload(port, rate * args.factor, args.overload_s)
                report(
                    f"[{label}] {args.factor:g}x the served rate",
                    results,
                    rate * args.factor,
                    args.overload_s,
                )
            finally:
                gunicorn_stop(server)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
