"""Redis down or hanging: reads are still served (local cache, throttles still count), the
warning is rate-limited, and the probes say which dependency is down."""

from __future__ import annotations

import logging
import socket
import threading
from collections.abc import Iterator
from unittest import mock

import pytest

pytestmark = pytest.mark.django_db


class HangingRedis:
    """A loopback listener that accepts connections and never answers (a hung Redis)."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.accepted: list[socket.socket] = []
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted.append(conn)  # held open, never read from or written to

    def close(self) -> None:
        self.sock.close()
        for conn in self.accepted:
            conn.close()


@pytest.fixture
def hanging_redis() -> Iterator[HangingRedis]:
    server = HangingRedis()
    yield server
    server.close()


@pytest.fixture
def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]  # closed on exit: connections are refused


def _point_cache_at(settings, port: int, *, retry_after_s: float = 60.0) -> None:
    url = f"redis://127.0.0.1:{port}/0"
    settings.REDIS_URL = url
    settings.CACHES = {
        "default": {
            "BACKEND": "ops.cache.ResilientRedisCache",
            "LOCATION": url,
            "OPTIONS": {
                "socket_timeout": 0.2,
                "socket_connect_timeout": 0.2,
                "retry_after_s": retry_after_s,
            },
        }
    }


def _cache_warnings(caplog) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "ops.cache" and r.levelno == logging.WARNING]


@pytest.mark.parametrize("fault", ["refused", "hanging"])
def test_anonymous_reads_are_served_when_redis_fails(
    fault, api_client, settings, caplog, closed_port, hanging_redis
):
    port = closed_port if fault == "refused" else hanging_redis.port
    _point_cache_at(settings, port)
    caplog.set_level(logging.WARNING)
    codes = [api_client.get("/api/interconnects/").status_code for _ in range(5)]
    assert codes == [200] * 5
    warnings = _cache_warnings(caplog)
    assert len(warnings) == 1 and "Redis unavailable" in warnings[0].getMessage()
    assert warnings[0].exc_info is None  # a warning, not a traceback per request


def test_a_hanging_redis_is_not_tried_again_until_the_retry_interval(
    api_client, settings, hanging_redis
):
    _point_cache_at(settings, hanging_redis.port)
    for _ in range(4):
        assert api_client.get("/api/interconnects/").status_code == 200
    # One connection for the first failure; afterwards the local cache answers.
    assert len(hanging_redis.accepted) == 1


def test_redis_is_tried_again_after_the_retry_interval(api_client, settings, hanging_redis):
    _point_cache_at(settings, hanging_redis.port, retry_after_s=0.0)
    for _ in range(3):
        assert api_client.get("/api/interconnects/").status_code == 200
    assert len(hanging_redis.accepted) >= 2


def test_throttles_still_count_locally_while_redis_is_down(api_client, settings, closed_port):
    from rest_framework.throttling import AnonRateThrottle

    _point_cache_at(settings, closed_port)
    with mock.patch.object(AnonRateThrottle, "THROTTLE_RATES", {"anon": "3/minute"}):
        codes = [api_client.get("/api/interconnects/").status_code for _ in range(5)]
    assert codes[:3] == [200, 200, 200] and codes[-1] == 429


def test_the_warning_is_rate_limited():
    from ops.cache import RateLimitedWarning

    log = mock.Mock()
    warn = RateLimitedWarning(log, interval_s=3600)
    assert [warn("x %s", i) for i in range(4)] == [True, False, False, False]
    assert log.warning.call_count == 1


def test_probes_name_redis_when_it_hangs(client, settings, hanging_redis):
    _point_cache_at(settings, hanging_redis.port)
    live = client.get("/livez")
    assert live.status_code == 200 and live.json() == {"status": "ok"}
    ready = client.get("/readyz")
    assert ready.status_code == 200
    assert ready.json()["status"] == "degraded" and ready.json()["down"] == ["redis"]
    health = client.get("/healthz")
    assert health.status_code == 503 and health.json()["down"] == ["redis"]
    assert health.json()["checks"]["redis"]["error"] == "TimeoutError"


def test_readyz_is_503_naming_the_database_when_it_is_down(client):
    with mock.patch("ops.views.connection.cursor", side_effect=RuntimeError("connection refused")):
        ready = client.get("/readyz")
        live = client.get("/livez")
    assert ready.status_code == 503 and ready.json()["down"] == ["database"]
    assert live.status_code == 200


def test_readyz_is_ready_when_everything_answers(client):
    response = client.get("/readyz")
    assert response.status_code == 200 and response.json()["status"] == "ready"
    assert response.json()["down"] == []
