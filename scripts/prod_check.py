"""make prod-check: the production stack, natively, against the local PostgreSQL and Redis.

Starts gunicorn, a Celery worker and Celery beat with the production settings, triggers a price
refresh through the authenticated API (sources replayed from recorded pages on loopback), waits
for the ScrapeRun to succeed, checks /healthz and /metrics, and stops everything it started.
Exit 0 when every step passed; otherwise 1 with the step that failed.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

from _stack import free_port, recreate_database

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
PYTHON = sys.executable
PG_ADMIN_URL = os.environ.get(
    "PROD_CHECK_PG_ADMIN_URL", "postgres://postgres@127.0.0.1:5432/postgres"
)
DB_NAME = os.environ.get("PROD_CHECK_DB", "gpuatlas_prodcheck")
REDIS_URL = os.environ.get("PROD_CHECK_REDIS_URL", "redis://127.0.0.1:6379/6")
PROVIDER = "lambda"


def step(message: str) -> None:
    print(f"prod-check: {message}", flush=True)


def fail(message: str) -> None:
    print(f"prod-check: FAILED: {message}", file=sys.stderr, flush=True)
    raise SystemExit(1)


def http(method: str, url: str, *, token: str = "", timeout: float = 10) -> tuple[int, bytes]:
    request = urllib.request.Request(url, method=method, data=b"" if method == "POST" else None)
    if token:
        request.add_header("Authorization", f"Token {token}")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def main() -> int:
    from tests.scrapers.loopback import LoopbackServer, worker_environment

    processes: list[subprocess.Popen] = []
    metrics_dir = tempfile.mkdtemp(prefix="gpuatlas-metrics-")
    pages = LoopbackServer()
    pages.__enter__()
    try:
        database_url = recreate_database(PG_ADMIN_URL, DB_NAME)
        env = {
            **os.environ,
            **worker_environment(pages),
            "DJANGO_SETTINGS_MODULE": "config.settings.production",
            "DJANGO_SECRET_KEY": secrets.token_urlsafe(50),
            "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost",
            "DJANGO_SECURE_SSL_REDIRECT": "false",
            "DATABASE_URL": database_url,
            "REDIS_URL": REDIS_URL,
            "PROMETHEUS_MULTIPROC_DIR": metrics_dir,
            "LOG_FORMAT": "json",
        }
        manage = [PYTHON, "manage.py"]
        for command in (
            ["migrate", "--noinput"],
            ["load_catalog"],
            ["setup_schedules"],
            ["collectstatic", "--noinput", "-v0"],
        ):
            step(" ".join(["manage.py", *command]))
            subprocess.run(
                [*manage, *command], cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL
            )
        token_code = (
            "from django.contrib.auth.models import Permission, User; "
            "from rest_framework.authtoken.models import Token; "
            "u = User.objects.create_user('prodcheck-bot'); "
            "u.user_permissions.add(Permission.objects.get(codename='add_scraperun')); "
            "print(Token.objects.create(user=u).key)"
        )
        token = (
            subprocess.run(
                [*manage, "shell", "-c", token_code],
                cwd=ROOT,
                env=env,
                check=True,
                capture_output=True,
                text=True,
            )
            .stdout.strip()
            .splitlines()[-1]
        )

        port = free_port()
        base = f"http://127.0.0.1:{port}"
        logs = Path(tempfile.mkdtemp(prefix="gpuatlas-prodcheck-logs-"))
        commands = {
            "gunicorn": [PYTHON, "-m", "gunicorn", "config.wsgi:application", "--workers", "2", "--bind", f"127.0.0.1:{port}"],
            "worker": [PYTHON, "-m", "celery", "-A", "config", "worker", "--loglevel=INFO", "--concurrency=2", "-n", f"prodcheck-{os.getpid()}@%h"],
            "beat": [PYTHON, "-m", "celery", "-A", "config", "beat", "--loglevel=INFO", "--scheduler", "django_celery_beat.schedulers:DatabaseScheduler", "--schedule", str(logs / "beat-schedule")],
        }  # fmt: skip
        for name, command in commands.items():
            step(f"starting {name}")
            log = (logs / f"{name}.log").open("w")
            processes.append(
                subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
            )

        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                status, _ = http("GET", f"{base}/healthz", timeout=2)
                if status == 200:
                    break
            except OSError:
                pass
            time.sleep(0.5)
        else:
            fail(f"/healthz did not answer 200 within 60 s (logs in {logs})")
        step("gunicorn answers /healthz")

        status, _ = http("POST", f"{base}/api/refresh/{PROVIDER}/")
        if status not in (401, 403):
            fail(f"an anonymous refresh was not refused (HTTP {status})")
        status, body = http("POST", f"{base}/api/refresh/{PROVIDER}/", token=token)
        if status != 202:
            fail(f"refresh trigger answered HTTP {status}: {body[:300]!r}")
        step(f"refresh of {PROVIDER} queued: {json.loads(body)['task_id']}")

        deadline = time.monotonic() + 120
        run = None
        while time.monotonic() < deadline:
            _, body = http("GET", f"{base}/api/scrape-runs/?provider={PROVIDER}")
            results = json.loads(body)["results"]
            run = results[0] if results else None
            if run and run["status"] != "running":
                break
            time.sleep(1)
        if not run or run["status"] not in ("success", "partial"):
            fail(f"the scrape run did not succeed: {run} (worker log: {logs / 'worker.log'})")
        step(
            f"scrape run {run['id']} {run['status']}: {run['records_seen']} records, {run['created']} created, {run['unchanged']} unchanged"
        )

        status, body = http("GET", f"{base}/healthz")
        health = json.loads(body)
        if (
            status != 200
            or not health["checks"]["redis"]["ok"]
            or health["providers"][PROVIDER]["age_seconds"] is None
        ):
            fail(f"/healthz after the refresh: {status} {health}")
        step("healthz: database and redis ok, refresh age reported")
        status, body = http("GET", f"{base}/metrics")
        text = body.decode()
        if (
            status != 200
            or f'gpuatlas_scrape_runs{{provider="{PROVIDER}",status="{run["status"]}"}}' not in text
        ):
            fail("/metrics lacks the scrape run")
        if "gpuatlas_http_requests_total" not in text:
            fail("/metrics lacks request counters")
        step("metrics: requests and scrape runs exported")
        for process, name in zip(processes, commands, strict=True):
            if process.poll() is not None:
                fail(f"{name} exited early (logs in {logs})")
        step("gunicorn, worker and beat all running; stopping them")
        print("prod-check: OK", flush=True)
        return 0
    finally:
        for process in processes:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
        pages.__exit__(None, None, None)
        shutil.rmtree(metrics_dir, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
