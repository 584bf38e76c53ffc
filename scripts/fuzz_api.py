"""Fuzz the API with schemathesis against a live gunicorn on PostgreSQL (.ci/run runs it).

Recreates a database of its own, migrates it and loads the curated catalog, starts gunicorn
(2 workers, production settings, Redis) on a free loopback port, runs schemathesis over the schema
the server serves (/api/schema/) with every check, a fixed seed and a bounded number of examples
per operation, and stops the server. Exit 0 when schemathesis found nothing; otherwise its exit
code, with the failures (and curl lines to reproduce them) printed above.

    .venv/bin/python scripts/fuzz_api.py [--seed 1] [--max-examples 10] [--max-time 180]

Environment: FUZZ_PG_ADMIN_URL (postgres://postgres@127.0.0.1:5432/postgres), FUZZ_DB
(gpuatlas_fuzz), FUZZ_REDIS_URL (redis://127.0.0.1:6379/9).
"""

from __future__ import annotations

import argparse
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from pathlib import Path

from _stack import free_port, recreate_database

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
PG_ADMIN_URL = os.environ.get("FUZZ_PG_ADMIN_URL", "postgres://postgres@127.0.0.1:5432/postgres")
DB_NAME = os.environ.get("FUZZ_DB", "gpuatlas_fuzz")
REDIS_URL = os.environ.get("FUZZ_REDIS_URL", "redis://127.0.0.1:6379/9")

# Every check runs with schemathesis' defaults but for the statuses two of them accept:
# - positive_data_acceptance also accepts a 400 for a request the schema calls valid. The API
#   refuses such requests on purpose, naming the field, for rules across fields that OpenAPI
#   cannot state (a tensor x pipeline parallel degree that does not divide the GPU count, QLoRA at
#   fp32, a budget below every price) and for names the catalog does not hold (a GPU slug,
#   provider or region schemathesis made up; GET /api/gpus/ and friends list them).
#   response_schema_conformance still checks that 400's JSON shape. The rest are its defaults less
#   what this API never answers (3xx, 409) and 5xx (always a failure: not_a_server_error).
# - Both accept 414: a generated query string longer than gunicorn's request line (4094 bytes)
#   is refused by gunicorn before the application, as the schema documents.
CONFIG = """
[checks.positive_data_acceptance]
expected-statuses = ["2xx", "400", "401", "403", "404", "414", "429"]

[checks.negative_data_rejection]
expected-statuses = ["400", "401", "403", "404", "405", "406", "409", "414", "415", "422", "428", "429", "5xx"]
"""


def step(message: str) -> None:
    print(f"fuzz-api: {message}", flush=True)


def wait_ready(base: str, server: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"fuzz-api: gunicorn exited: {log.read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(f"{base}/readyz", timeout=2) as reply:
                if reply.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.5)
    raise SystemExit(f"fuzz-api: /readyz did not answer 200 within 60 s: {log.read_text()[-2000:]}")


def summarise(access_log: Path) -> None:
    """How many generated requests the sizing operations answered 200 (reached the planner)."""
    counts: Counter[tuple[str, str]] = Counter()
    for line in access_log.read_text().splitlines():
        method, _, rest = line.partition(" ")
        path, _, status = rest.rpartition(" ")
        path = path.rstrip("/")
        if method in ("GET", "POST") and path in (
            "/api/recommend",
            "/api/compare",
            "/api/estimate",
        ):
            counts[(f"{method} {path}", "200" if status == "200" else "other")] += 1
    for operation in sorted({op for op, _ in counts}):
        ok, other = counts[(operation, "200")], counts[(operation, "other")]
        step(f"{operation}: {ok} of {ok + other} generated requests answered 200")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--max-examples", type=int, default=10, help="test cases per operation and phase"
    )
    parser.add_argument(
        "--max-time", type=int, default=180, help="schemathesis' time budget in seconds"
    )
    # One: with two, CPython 3.11 raised SystemError (AST recursion depth mismatch) inside
    # schemathesis while it formatted a traceback in two threads at once.
    parser.add_argument("--workers", type=int, default=1, help="schemathesis' concurrent workers")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="gpuatlas-fuzz-"))
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.production",
        "DJANGO_SECRET_KEY": secrets.token_urlsafe(50),
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost",
        "DJANGO_SECURE_SSL_REDIRECT": "false",
        "DATABASE_URL": recreate_database(PG_ADMIN_URL, DB_NAME),
        "REDIS_URL": REDIS_URL,
        "PROMETHEUS_MULTIPROC_DIR": str(work / "metrics"),
        # The throttles are tested on their own; here they would only turn the fuzzing into 429s.
        "API_ANON_THROTTLE_RATE": "100000/minute",
        "API_USER_THROTTLE_RATE": "100000/minute",
        "LOG_FORMAT": "json",
    }
    (work / "metrics").mkdir()
    for command in (["migrate", "--noinput"], ["load_catalog"]):
        step("manage.py " + " ".join(command))
        subprocess.run(
            [PYTHON, "manage.py", *command],
            cwd=ROOT,
            env=env,
            check=True,
            stdout=subprocess.DEVNULL,
        )
    # The throttle counters of an earlier run must not carry over.
    subprocess.run(
        [PYTHON, "manage.py", "shell", "-c", "from django.core.cache import cache; cache.clear()"],
        cwd=ROOT,
        env=env,
        check=True,
    )

    port = free_port()
    base = f"http://127.0.0.1:{port}"
    log = work / "gunicorn.log"
    with log.open("w") as out:
        server = subprocess.Popen(
            [PYTHON, "-m", "gunicorn", "config.wsgi:application", "--workers", "2",
             "--bind", f"127.0.0.1:{port}", "--timeout", "60",
             "--access-logfile", str(work / "access.log"),
             "--access-logformat", "%(m)s %(U)s %(s)s"],
            cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        wait_ready(base, server, log)
        step(f"gunicorn ready on {base}; running schemathesis (seed {args.seed})")
        config = work / "schemathesis.toml"
        config.write_text(CONFIG)
        st = Path(PYTHON).with_name("st")
        result = subprocess.run(
            [str(st), "--config-file", str(config), "run", f"{base}/api/schema/",
             "--checks", "all", "--seed", str(args.seed),
             "--max-examples", str(args.max_examples), "--max-time", str(args.max_time),
             "--workers", str(args.workers), "--request-timeout", "30",
             "--suppress-health-check", "too_slow,filter_too_much",
             "--report", "junit", "--report-dir", str(work / "report")],
            cwd=work,
        )  # fmt: skip
        summarise(work / "access.log")
        errors = [line for line in log.read_text().splitlines() if '"level": "ERROR"' in line]
        if errors:
            step(f"{len(errors)} error lines in the server log, e.g.: {errors[0][:500]}")
        if result.returncode != 0:
            step(f"FAILED (schemathesis exit {result.returncode}); server log: {log}")
            return result.returncode
        step("OK: no failures")
        return 0
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
        if server.returncode in (0, -signal.SIGTERM):
            shutil.rmtree(work / "metrics", ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
