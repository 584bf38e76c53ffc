"""Crashed refreshes resume: the refresh lock is a lease renewed while the run lives; a run whose
lease lapsed is failed and queued again by the reaper (the real-worker kill test is in
tests/test_real_services.py)."""

from __future__ import annotations

import time
from datetime import timedelta
from unittest import mock

import pytest
from django.core.cache import cache
from django.utils import timezone

from catalog.models import Provider, ScrapeRun
from scrapers import services, tasks

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _clear_cache():
    cache.clear()
    yield
    cache.clear()


def _running(slug: str, *, minutes_ago: float) -> ScrapeRun:
    return ScrapeRun.objects.create(
        provider=Provider.objects.get(slug=slug),
        started_at=timezone.now() - timedelta(minutes=minutes_ago),
        status="running",
        trigger="schedule",
    )


def test_the_lease_is_renewed_while_the_refresh_runs_and_released_after(settings):
    with services.provider_lock("lambda", timeout_s=1):
        time.sleep(2.5)  # more than two leases: only the heartbeat keeps it
        assert cache.get("scrape-lock:lambda") is not None
        with pytest.raises(services.RefreshInProgress), services.provider_lock("lambda"):
            pass
    assert cache.get("scrape-lock:lambda") is None


def test_a_run_whose_lease_lapsed_is_failed(settings):
    settings.SCRAPE_LEASE_SECONDS = 60
    dead = _running("lambda", minutes_ago=5)
    failed = services.abandoned_runs_fail()
    assert [run.pk for run in failed] == [dead.pk]
    dead.refresh_from_db()
    assert dead.status == "failed" and dead.error.startswith("abandoned:") and dead.finished_at


def test_a_live_or_young_run_is_left_alone(settings):
    settings.SCRAPE_LEASE_SECONDS = 60
    live = _running("lambda", minutes_ago=5)
    young = _running("runpod", minutes_ago=0.1)  # started within a lease: its lock may be coming
    cache.set("scrape-lock:lambda", "someone", 60)
    assert services.abandoned_runs_fail() == []
    live.refresh_from_db()
    young.refresh_from_db()
    assert live.status == "running" and young.status == "running"


def test_the_reaper_fails_the_run_and_queues_the_refresh_again(settings):
    dead = _running("lambda", minutes_ago=5)
    with mock.patch.object(tasks.refresh_provider, "delay") as delay:
        assert tasks.reap_abandoned_refreshes() == ["lambda"]
    delay.assert_called_once_with("lambda", "recovery")
    dead.refresh_from_db()
    assert dead.status == "failed"


def test_the_reaper_stops_retrying_a_refresh_that_keeps_killing_its_worker(settings):
    provider = Provider.objects.get(slug="lambda")
    for minutes in (30, 20):
        ScrapeRun.objects.create(
            provider=provider, started_at=timezone.now() - timedelta(minutes=minutes),
            finished_at=timezone.now(), status="failed", trigger="recovery",
            error="abandoned: the worker died mid-run (no heartbeat for 60 s)",
        )  # fmt: skip
    _running("lambda", minutes_ago=5)
    with mock.patch.object(tasks.refresh_provider, "delay") as delay:
        assert tasks.reap_abandoned_refreshes() == []
    delay.assert_not_called()


def test_a_new_refresh_is_not_blocked_by_a_dead_run(settings):
    dead = _running("lambda", minutes_ago=5)
    stop = mock.patch.object(services, "scrape_run_start", side_effect=RuntimeError("stop here"))
    with stop, pytest.raises(RuntimeError):
        services.provider_refresh(provider_slug="lambda", trigger="manual")
    dead.refresh_from_db()
    assert dead.status == "failed"


def test_celery_settings_cover_the_longest_task(settings):
    from config.celery_app import app

    assert app.conf.task_acks_late and app.conf.task_reject_on_worker_lost
    visibility = app.conf.broker_transport_options["visibility_timeout"]
    longest_countdown = 300 * 2 ** (tasks.refresh_provider.max_retries - 1)
    assert visibility > tasks.refresh_provider.time_limit + longest_countdown
    entry = app.conf.beat_schedule["reap-abandoned-refreshes"]
    assert entry["task"] == tasks.reap_abandoned_refreshes.name
