"""Shared set-up of the benchmarks: a PostgreSQL bench database, Django, and the machine's figures.

Every bench script runs from the repository root (``.venv/bin/python bench/<name>.py``) against
``DATABASE_URL`` (default: postgres://postgres@127.0.0.1:5432/gpuatlas_bench, created and migrated
when missing) and prints the machine it ran on before its figures.
"""

from __future__ import annotations

import os
import platform
import signal
import statistics
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/gpuatlas_bench"
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def bench_environment(settings_module: str = "config.settings.local") -> dict[str, str]:
    """The environment every bench process uses: DEBUG off (no query log), the bench database."""
    env = dict(os.environ)
    env.setdefault("DATABASE_URL", DEFAULT_DATABASE_URL)
    env.setdefault("DJANGO_SETTINGS_MODULE", settings_module)
    env.setdefault("DJANGO_DEBUG", "false")
    env.setdefault("DJANGO_SECRET_KEY", "bench-only-secret-key")
    return env


def served_environment(redis_url: str, hosts: str = "127.0.0.1,localhost") -> dict[str, str]:
    """bench_environment under the production settings as a benchmarked server runs them: plain
    HTTP on loopback (no HTTPS redirect), ``hosts`` allowed, no anonymous throttle, the bench's
    Redis, warnings only in the log."""
    env = bench_environment("config.settings.production")
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings.production",
        DJANGO_SECURE_SSL_REDIRECT="false",
        DJANGO_ALLOWED_HOSTS=hosts,
        API_ANON_THROTTLE_RATE="1000000/minute",
        REDIS_URL=redis_url,
        LOG_LEVEL="WARNING",
    )
    return env


def ensure_database(url: str) -> None:
    """Create the bench database when it does not exist (PostgreSQL only)."""
    import psycopg

    parts = urlsplit(url)
    if not parts.scheme.startswith("postgres"):
        raise SystemExit(f"the benchmarks run on PostgreSQL; DATABASE_URL is {url!r}")
    name = parts.path.lstrip("/")
    admin = parts._replace(path="/postgres").geturl()
    with psycopg.connect(admin, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()
        if not exists:
            conn.execute(f'CREATE DATABASE "{name}"')


def setup_django(*, migrate: bool = True) -> None:
    """Point this process at the bench database, migrate it and load the curated catalog."""
    os.environ.update(bench_environment())
    ensure_database(os.environ["DATABASE_URL"])
    import django

    django.setup()
    if migrate:
        from django.core.management import call_command

        call_command("migrate", verbosity=0)
        call_command("load_catalog", verbosity=0)


def machine() -> dict[str, str]:
    """What the figures were measured on."""
    uname = platform.uname()
    info = {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": f"{uname.system} {uname.release} {uname.machine}",
        "cpus": str(os.cpu_count()),
        "cpu": _cpu_model(),
        "python": platform.python_version(),
        "load average": " ".join(f"{x:.2f}" for x in os.getloadavg()),
        "revision": git_revision(),
    }
    try:
        from django.db import connection

        with connection.cursor() as cursor:
            cursor.execute("SELECT version()")
            info["database"] = cursor.fetchone()[0].split(" on ")[0]
    except Exception:  # not set up (the load script reads it from the server's database)
        pass
    return info


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def print_machine(title: str) -> None:
    print(f"# {title}")
    for key, value in machine().items():
        print(f"{key:>13}: {value}")
    print()


def process_cpu() -> float:
    """CPU seconds (user + system) this process has used."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def backend_pid() -> int:
    """The process id of this Django connection's PostgreSQL backend."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return cursor.fetchone()[0]


def backend_cpu(pid: int) -> float | None:
    """CPU seconds a PostgreSQL backend on this machine has used (None when it is elsewhere).
    With the process's own CPU, a figure the machine's load moves much less than wall time."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@contextmanager
def timed() -> dict:
    result = {}
    start = time.perf_counter()
    try:
        yield result
    finally:
        result["seconds"] = time.perf_counter() - start


def percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)

    def at(q: float) -> float:
        return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]

    return {
        "p50": at(0.50),
        "p95": at(0.95),
        "p99": at(0.99),
        "mean": statistics.fmean(ordered),
    }


def git_revision() -> str:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
        )
        dirty = subprocess.run(
            ["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip()
        return out.stdout.strip() + ("+changes" if dirty else "")
    except OSError:
        return "unknown"


def gunicorn_start(
    env: dict[str, str], port: int, *, probe: str = "/livez", extra: tuple[str, ...] = ()
) -> subprocess.Popen:
    """gunicorn with 2 workers on loopback ``port``, returned once ``probe`` answers 200 (60 s
    at most); ``extra`` adds gunicorn options (e.g. a backlog)."""
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "config.wsgi:application", "-w", "2",
         "-b", f"127.0.0.1:{port}", "--log-level", "warning", *extra],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{probe}", timeout=2) as reply:
                if reply.status == 200:
                    return server
        except OSError:
            time.sleep(0.3)
    server.terminate()
    raise SystemExit(f"gunicorn did not answer {probe}: {server.stderr.read()[-2000:]}")


def gunicorn_stop(server: subprocess.Popen) -> None:
    """SIGTERM, then a kill after 30 s."""
    server.send_signal(signal.SIGTERM)
    try:
        server.wait(timeout=30)
    except subprocess.TimeoutExpired:
        server.kill()
