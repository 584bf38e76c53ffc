"""Real PostgreSQL, Redis and a Celery worker: run when REDIS_URL is set (CI's second pass).

Skipped on the embedded default; under CI with the services expected, a missing one fails.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from decimal import Decimal
from pathlib import Path

import pytest
from django.conf import settings
from django.core.cache import cache
from django.db import connection

from catalog.models import CurrencyRate, Price, PriceHistory, ScrapeRun
from catalog.tasks import prices_renormalise_task
from tests.factories import PriceFactory

from .conftest import services_required

ROOT = Path(__file__).resolve().parent.parent
needs_redis = pytest.mark.skipif(
    not os.environ.get("REDIS_URL") and not services_required(),
    reason="REDIS_URL not set: the embedded default has no Redis",
)


@needs_redis
def test_cache_is_redis_and_round_trips():
    assert "RedisCache" in settings.CACHES["default"]["BACKEND"]
    cache.set("gpuatlas-test-key", {"ok": 1}, 30)
    assert cache.get("gpuatlas-test-key") == {"ok": 1}


def _worker_database_url() -> str:
    db = connection.settings_dict
    if "postgresql" not in db["ENGINE"]:
        return f"sqlite:///{db['NAME']}"
    user = db.get("USER") or "postgres"
    return (
        f"postgres://{user}@{db.get('HOST') or '127.0.0.1'}:{db.get('PORT') or 5432}/{db['NAME']}"
    )


@pytest.fixture
def start_worker():
    """Start real `celery worker` processes over Redis, on the test database; stopped afterwards."""
    from config.celery_app import app

    started: list[subprocess.Popen] = []

    def start(*, extra_env: dict[str, str] | None = None, pool: str = "solo", concurrency: int = 1):
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "config.settings.test",
            "DATABASE_URL": _worker_database_url(),
            **(extra_env or {}),
        }
        name = f"test-{os.getpid()}-{len(started)}@%h"
        proc = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "config", "worker", f"--pool={pool}",
             f"--concurrency={concurrency}", "--loglevel=INFO", "--without-gossip", "--without-mingle",
             "--without-heartbeat", "-n", name],
            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True,
        )  # fmt: skip
        started.append(proc)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                pytest.fail("celery worker exited at start")
            replies = app.control.ping(timeout=1.0)
            if any(name.split("@")[0] in key for reply in replies for key in reply):
                return proc
        pytest.fail("celery worker did not answer a ping within 60 s")

    yield start
    for proc in started:
        proc.terminate()
    for proc in started:
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.fixture
def celery_worker_process(start_worker):
    return start_worker()


@needs_redis
@pytest.mark.django_db(transaction=True)
def test_a_real_worker_renormalises_prices_over_redis(celery_worker_process):
    assert settings.CELERY_TASK_ALWAYS_EAGER is False
    CurrencyRate.objects.create(
        currency="CNY", usd_per_unit=Decimal("0.25"), as_of="2099-01-01", source="test"
    )
    price = PriceFactory(
        amount=Decimal("80"),
        currency="CNY",
        usd_per_hour=Decimal("1"),
        usd_per_gpu_hour=Decimal("0.125"),
    )
    result = prices_renormalise_task.delay()
    moved = result.get(timeout=90)
    assert moved >= 1
    price = Price.objects.get(pk=price.pk)
    assert price.usd_per_hour == Decimal("20")  # 80 CNY x 0.25, computed by the worker process
    assert price.usd_per_gpu_hour == Decimal("2.5")


def _wait_for_runs(slugs: list[str], *, at_least: int = 1, timeout_s: float = 180) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        done = {
            slug: ScrapeRun.objects.filter(provider__slug=slug).exclude(status="running").count()
            for slug in slugs
        }
        running = ScrapeRun.objects.filter(status="running").exists()
        if all(count >= at_least for count in done.values()) and not running:
            return
        time.sleep(0.5)
    pytest.fail(f"refreshes did not finish in {timeout_s} s: {done}")


@needs_redis
@pytest.mark.django_db(transaction=True)
def test_refresh_all_through_a_real_worker_from_recorded_pages(start_worker):
    """Every provider refreshes from recorded pages on loopback through Celery over Redis."""
    from django.core.management import call_command

    from scrapers.registry import scraper_keys
    from scrapers.tasks import refresh_all, refresh_provider
    from tests.scrapers.loopback import LoopbackServer, worker_environment

    call_command("load_catalog", verbosity=0)  # an earlier transactional test may have flushed it
    with LoopbackServer() as server:
        start_worker(extra_env=worker_environment(server), pool="threads", concurrency=2)
        slugs = refresh_all.delay("test").get(timeout=60)
        assert len(slugs) == 11 and set(slugs) <= set(scraper_keys())
        _wait_for_runs(slugs)
        runs = {run.provider.slug: run for run in ScrapeRun.objects.select_related("provider")}
        failed = {slug: run.error for slug, run in runs.items() if run.status == "failed"}
        assert not failed
        assert all(runs[slug].records_seen > 0 for slug in slugs)
        scraped = {
            slug for slug in slugs
            if Price.objects.filter(instance_type__provider__slug=slug, source="scraper").exists()
        }  # fmt: skip
        # Every provider's recorded pages price at least one instance type of the catalog (Alibaba's
        # price files carry no RAM, so its records only update the types a curator has entered).
        assert scraped == set(slugs)
        before = (Price.objects.count(), PriceHistory.objects.count())

        # Two refreshes of one provider at once: one runs, the other is skipped or waits its turn.
        first, second = (
            refresh_provider.delay("runpod", "test"),
            refresh_provider.delay("runpod", "test"),
        )
        outcomes = [first.get(timeout=120), second.get(timeout=120)]
        assert any(o.get("status") in ("success", "partial") for o in outcomes)
        assert (Price.objects.count(), PriceHistory.objects.count()) == before
        assert not ScrapeRun.objects.filter(status="running").exists()


class _SilentListener:
    """A loopback socket that accepts connections and never answers (a provider that stalls)."""

    def __init__(self) -> None:
        import socket
        import threading

        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.held: list = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                self.held.append(self.sock.accept()[0])
            except OSError:
                return

    def close(self) -> None:
        self.sock.close()
        for conn in self.held:
            conn.close()


def _drop_unacked(task_id: str) -> None:
    """Remove the killed worker's unacknowledged message of ``task_id`` from the Redis broker, so
    it is not redelivered into a later session when the visibility timeout passes."""
    import redis

    client = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    for tag, payload in client.hgetall("unacked").items():
        if task_id.encode() in payload:
            client.hdel("unacked", tag)
            client.zrem("unacked_index", tag)


@needs_redis
@pytest.mark.django_db(transaction=True)
def test_a_refresh_whose_worker_is_killed_is_failed_and_redone(start_worker, settings):
    """Kill a real worker mid-refresh: nothing stored changes, the lease lapses, the reaper fails
    the run and queues the refresh again, and a live worker completes it."""
    import signal

    from django.core.management import call_command

    from scrapers.tasks import reap_abandoned_refreshes, refresh_provider
    from tests.scrapers.loopback import LoopbackServer, worker_environment

    call_command("load_catalog", verbosity=0)
    lease_s = 3
    settings.SCRAPE_LEASE_SECONDS = lease_s  # this process reaps with the workers' lease
    before = sorted(Price.objects.values_list("id", "usd_per_hour", "observed_at"))
    stall = _SilentListener()
    result = None
    try:
        doomed = start_worker(
            extra_env={
                "SCRAPER_BASE_URLS": f"lambda=http://127.0.0.1:{stall.port}/lambda",
                "SCRAPER_TIMEOUT_S": "600",
                "SCRAPER_RETRIES": "0",
                "SCRAPE_LEASE_SECONDS": str(lease_s),
            }
        )
        result = refresh_provider.delay("lambda", "test")
        deadline = time.monotonic() + 60
        while not ScrapeRun.objects.filter(provider__slug="lambda", status="running").exists():
            if time.monotonic() > deadline:
                pytest.fail("the refresh never started")
            time.sleep(0.2)
        doomed.send_signal(signal.SIGKILL)  # the solo pool runs the task in this very process
        doomed.wait(timeout=10)
        run = ScrapeRun.objects.get(provider__slug="lambda", status="running")

        time.sleep(lease_s + 1)  # the dead worker's lease lapses
        assert reap_abandoned_refreshes() == ["lambda"]
        run.refresh_from_db()
        assert run.status == "failed" and run.error.startswith("abandoned:")
        assert sorted(Price.objects.values_list("id", "usd_per_hour", "observed_at")) == before
    finally:
        stall.close()
        if result is not None:
            _drop_unacked(result.id)

    with LoopbackServer() as server:
        start_worker(extra_env={**worker_environment(server), "SCRAPE_LEASE_SECONDS": str(lease_s)})
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            redone = ScrapeRun.objects.filter(provider__slug="lambda", trigger="recovery").first()
            if redone and redone.status != "running":
                break
            time.sleep(0.5)
        else:
            pytest.fail("the reaped refresh was not redone within 120 s")
        assert redone.status in ("success", "partial"), redone.error
        assert not ScrapeRun.objects.filter(status="running").exists()
