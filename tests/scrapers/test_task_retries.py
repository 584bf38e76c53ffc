"""Network trouble is retried with backoff inside the broker's visibility timeout; nothing else is."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from django.conf import settings

from scrapers.tasks import PROVIDER_JOB, _retry_after_network_trouble


class Retried(Exception):
    def __init__(self, countdown: int):
        self.countdown = countdown


def task(retries: int, eager: bool = False) -> SimpleNamespace:
    def retry(countdown: int, exc: Exception) -> Retried:
        return Retried(countdown)

    return SimpleNamespace(request=SimpleNamespace(retries=retries, is_eager=eager), retry=retry)


@pytest.mark.parametrize(("retries", "countdown"), [(0, 300), (1, 600), (2, 1200), (5, 1200)])
def test_fetch_failures_back_off_and_stay_within_the_visibility_timeout(retries, countdown):
    with pytest.raises(Retried) as raised:
        _retry_after_network_trouble(task(retries), "failed", "FetchError: connection refused")
    assert raised.value.countdown == countdown
    timeout = settings.CELERY_BROKER_TRANSPORT_OPTIONS["visibility_timeout"]
    assert PROVIDER_JOB["time_limit"] + raised.value.countdown < timeout


@pytest.mark.parametrize(
    ("status", "error", "eager"),
    [
        ("failed", "ParseError: no price table", False),  # a curator's problem, not the network's
        ("ok", "", False),
        ("failed", "FetchError: timed out", True),  # eager (tests, laptops): no broker to retry on
    ],
)
def test_other_outcomes_are_not_retried(status, error, eager):
    _retry_after_network_trouble(task(0, eager), status, error)
