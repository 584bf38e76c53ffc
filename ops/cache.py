"""A Redis cache that degrades instead of failing: when Redis refuses, hangs or errs, calls fall
back to a cache local to this process, with a rate-limited warning, until Redis answers again.

Everything the web processes keep in the cache is either a throttle's request history or a
reusable answer, so a local stand-in keeps reads served (throttles count per process, answers are
recomputed) rather than turning every anonymous call into a 500. Connections use short timeouts
and no retries, and after a failure Redis is not tried again for ``retry_after_s`` seconds, so a
hanging Redis costs one request per process per interval at most ``socket_timeout`` seconds.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from django.core.cache.backends.locmem import LocMemCache
from django.core.cache.backends.redis import RedisCache

logger = logging.getLogger(__name__)

# Redis on the same network answers in about a millisecond; half a second is far beyond a healthy
# answer and short enough that a hanging Redis does not hold a request for long.
DEFAULT_SOCKET_TIMEOUT_S = 0.5
DEFAULT_CONNECT_TIMEOUT_S = 0.5
# How long to serve from the local stand-in after a failure before trying Redis again.
DEFAULT_RETRY_AFTER_S = 5.0
# At most one "Redis unavailable" warning per process per this many seconds.
WARNING_INTERVAL_S = 60.0


class RateLimitedWarning:
    """Logs a warning at most once per ``interval_s``, counting the occurrences in between."""

    def __init__(self, log: logging.Logger, interval_s: float = WARNING_INTERVAL_S) -> None:
        self.log = log
        self.interval_s = interval_s
        self._last = float("-inf")
        self._suppressed = 0
        self._lock = threading.Lock()

    def __call__(self, message: str, *args: Any) -> bool:
        """Log ``message % args`` unless one was logged recently; True when it was logged."""
        with self._lock:
            now = time.monotonic()
            if now - self._last < self.interval_s:
                self._suppressed += 1
                return False
            suppressed, self._suppressed, self._last = self._suppressed, 0, now
        self.log.warning(message + " (%d similar since the last warning)", *args, suppressed)
        return True


def _redis_errors() -> tuple[type[BaseException], ...]:
    import redis

    return (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, OSError)


class ResilientRedisCache(RedisCache):
    """Django's RedisCache, falling back to a process-local cache while Redis is unavailable.

    OPTIONS: ``socket_timeout`` and ``socket_connect_timeout`` (seconds, short by default),
    ``retry_after_s`` (seconds to stay on the local cache after a failure); the rest go to redis-py.
    """

    def __init__(self, server: str, params: dict[str, Any]) -> None:
        from redis.backoff import NoBackoff
        from redis.retry import Retry

        options = dict(params.get("OPTIONS") or {})
        self.retry_after_s = float(options.pop("retry_after_s", DEFAULT_RETRY_AFTER_S))
        options.setdefault("socket_timeout", DEFAULT_SOCKET_TIMEOUT_S)
        options.setdefault("socket_connect_timeout", DEFAULT_CONNECT_TIMEOUT_S)
        # redis-py retries a failed command by default, multiplying a hang; fail once, fall back.
        options.setdefault("retry", Retry(NoBackoff(), 0))
        super().__init__(server, {**params, "OPTIONS": options})
        local_params = {k: v for k, v in params.items() if k != "OPTIONS"}
        self._local = LocMemCache(f"resilient-fallback-{id(self)}", local_params)
        self._down_until = 0.0
        self._errors = _redis_errors()
        self._warn = RateLimitedWarning(logger)

    @property
    def redis_available(self) -> bool:
        """False while this process is serving from the local cache after a Redis failure."""
        return time.monotonic() >= self._down_until

    def _call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        if self.redis_available:
            try:
                return getattr(super(), name)(*args, **kwargs)
            except self._errors as exc:
                self._down_until = time.monotonic() + self.retry_after_s
                self._warn(
                    "cache: Redis unavailable (%s: %s); serving from a local cache for %.0f s",
                    type(exc).__name__,
                    exc,
                    self.retry_after_s,
                )
        return getattr(self._local, name)(*args, **kwargs)


def _delegate(name: str) -> Callable[..., Any]:
    def method(self: ResilientRedisCache, *args: Any, **kwargs: Any) -> Any:
        return self._call(name, *args, **kwargs)

    method.__name__ = name
    method.__doc__ = f"``{name}`` on Redis, or on the local cache while Redis is unavailable."
    return method


for _name in (
    "add",
    "get",
    "set",
    "touch",
    "delete",
    "get_many",
    "has_key",
    "incr",
    "set_many",
    "delete_many",
    "clear",
):
    setattr(ResilientRedisCache, _name, _delegate(_name))
