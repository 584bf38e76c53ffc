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

from catalog.models import CurrencyRate, Price
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
def celery_worker_process():
    """A real `celery worker` over Redis, on the test database, stopped afterwards."""
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "DATABASE_URL": _worker_database_url(),
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "config", "worker", "--pool=solo", "--loglevel=INFO",
         "--without-gossip", "--without-mingle", "--without-heartbeat", "-n", f"test-{os.getpid()}@%h"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    from config.celery_app import app

    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"celery worker exited: {proc.stdout.read()[-3000:]}")
        if app.control.ping(timeout=1.0):
            break
    else:
        proc.terminate()
        pytest.fail("celery worker did not answer a ping within 60 s")
    yield proc
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()


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
