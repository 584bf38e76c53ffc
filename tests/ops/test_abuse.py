"""Abuse resistance: page and per-user throttles, load shedding by queue time, and the compose
file's buffering proxy."""

from __future__ import annotations

import time
from pathlib import Path
from unittest import mock

import pytest
import yaml
from django.core.cache import cache

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _clear_cache():
    cache.clear()
    yield
    cache.clear()


def _rates(**rates: str):
    from rest_framework.throttling import SimpleRateThrottle

    return mock.patch.dict(SimpleRateThrottle.THROTTLE_RATES, rates)


def test_plan_page_is_throttled_per_address(client):
    with _rates(plan="2/minute"):
        codes = [client.get("/plan").status_code for _ in range(3)]
        other = client.get("/plan", REMOTE_ADDR="10.9.8.7").status_code
    assert codes == [200, 200, 429] and other == 200


def test_other_pages_have_their_own_rate(client):
    with _rates(page="2/minute", plan="100/minute"):
        codes = [client.get("/gpus").status_code for _ in range(3)]
        plan = client.get("/plan").status_code
    assert codes == [200, 200, 429] and plan == 200
    with _rates(page="1/minute"):
        response = client.get("/providers")
    assert response.status_code == 429 and int(response["Retry-After"]) >= 1


def test_page_throttle_cannot_be_dodged_by_varying_x_forwarded_for(client, settings):
    settings.TRUSTED_PROXY_COUNT = 1
    with _rates(plan="2/minute"):
        codes = [
            client.get("/plan", HTTP_X_FORWARDED_FOR=f"192.0.2.{i}, 203.0.113.4").status_code
            for i in range(3)
        ]
    assert codes == [200, 200, 429]


def test_probes_and_metrics_are_not_page_throttled(client):
    with _rates(page="1/minute", plan="1/minute"):
        codes = [
            client.get(path).status_code
            for path in ("/livez", "/livez", "/readyz", "/metrics", "/metrics")
        ]
    assert codes == [200] * 5


def test_token_users_have_their_own_rate(staff_client, api_client):
    with _rates(user="2/minute", anon="100/minute"):
        user_codes = [staff_client.get("/api/interconnects/").status_code for _ in range(3)]
        anon = api_client.get("/api/interconnects/").status_code
    assert user_codes == [200, 200, 429] and anon == 200


def test_requests_queued_too_long_are_shed_with_503(client, api_client, settings):
    settings.LOAD_SHED_QUEUE_SECONDS = 2.0
    settings.LOAD_SHED_RETRY_AFTER_SECONDS = 7
    old = f"t={time.time() - 5:.3f}"
    fresh = f"t={time.time():.3f}"
    shed = api_client.get("/api/interconnects/", HTTP_X_REQUEST_START=old)
    assert shed.status_code == 503 and shed["Retry-After"] == "7"
    assert shed.json()["detail"]
    assert api_client.get("/api/interconnects/", HTTP_X_REQUEST_START=fresh).status_code == 200
    assert client.get("/plan", HTTP_X_REQUEST_START=old).status_code == 503
    # Probes are never shed (a busy node must not look dead), nor requests without a stamp.
    assert client.get("/readyz", HTTP_X_REQUEST_START=old).status_code == 200
    assert client.get("/plan").status_code == 200
    settings.LOAD_SHED_QUEUE_SECONDS = 0
    assert client.get("/plan", HTTP_X_REQUEST_START=old).status_code == 200


def test_queue_time_reads_the_proxy_stamp_formats(rf):
    from ops.throttling import queued_seconds

    now = 1_700_000_010.0
    for stamp in ("t=1700000000.000", "t=1700000000000", "1700000000000000"):
        assert queued_seconds(rf.get("/", HTTP_X_REQUEST_START=stamp), now) == pytest.approx(10)
    assert queued_seconds(rf.get("/", HTTP_X_REQUEST_START="t=junk"), now) is None
    assert queued_seconds(rf.get("/", HTTP_X_REQUEST_START="t=1800000000"), now) is None
    assert queued_seconds(rf.get("/"), now) is None


def test_compose_puts_a_buffering_proxy_in_front_of_gunicorn():
    services = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]
    assert "ports" not in services["web"]  # only the proxy is published
    assert services["nginx"]["ports"] and "nginx.conf" in services["nginx"]["volumes"][0]
    env = services["web"]["environment"]
    assert env["TRUSTED_PROXY_COUNT"] == "1" and env["PROMETHEUS_MULTIPROC_DIR"]
    assert any(env["PROMETHEUS_MULTIPROC_DIR"] in mount for mount in services["web"]["tmpfs"])
    conf = (ROOT / "ops" / "nginx" / "nginx.conf").read_text()
    for directive in (
        "proxy_request_buffering on", "proxy_buffering on", "client_body_timeout",
        "client_max_body_size", "X-Forwarded-For $proxy_add_x_forwarded_for",
        'X-Request-Start "t=${msec}"', "server web:8000",
    ):  # fmt: skip
        assert directive in conf, directive
