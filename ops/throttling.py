"""Throttles and load shedding for everything the API's own throttles do not see: the pages
(``/plan`` computes a recommendation, so it has a rate of its own) and requests that waited too
long in the queue in front of the workers."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from rest_framework.throttling import SimpleRateThrottle, UserRateThrottle

from .cache import RateLimitedWarning
from .security import client_ip

if TYPE_CHECKING:  # DRF loads this module while rest_framework.views is still importing
    from rest_framework.request import Request
    from rest_framework.views import APIView

logger = logging.getLogger(__name__)

# Paths neither the page throttles nor load shedding touch: the API (DRF throttles it), static
# files, the probes and metrics (shedding a probe would take a busy node out of rotation), the
# admin (staff only, with its own login lockout).
UNTHROTTLED_PREFIXES = ("/api/", "/static/", "/livez", "/readyz", "/healthz", "/metrics", "/admin/")
# Pages that compute a recommendation or a comparison per request: the smaller "plan" rate.
PLANNING_PAGES = ("/plan", "/compare")
NEVER_SHED_PREFIXES = ("/livez", "/readyz", "/healthz", "/metrics", "/static/")


class PageRateThrottle(SimpleRateThrottle):
    """A rate per client address (or per user when signed in) for one scope of pages."""

    def __init__(self, scope: str) -> None:
        self.scope = scope
        super().__init__()

    def get_cache_key(self, request: HttpRequest, view: object) -> str:
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated:
            ident = f"user-{user.pk}"
        else:
            ident = client_ip(request)
        return self.cache_format % {"scope": self.scope, "ident": ident}


class AuthenticatedUserRateThrottle(UserRateThrottle):
    """Token and session users' own rate (``user`` scope); anonymous callers pass through to the
    anonymous throttle, which keys on the client address."""

    def allow_request(self, request: Request, view: APIView) -> bool:
        if not request.user or not request.user.is_authenticated:
            return True
        return super().allow_request(request, view)


def _too_many(request: HttpRequest, wait_s: float | None, *, status: int = 429) -> HttpResponse:
    retry_after = str(max(1, round(wait_s or 1)))
    if request.path.startswith("/api/"):
        detail = "Too many requests." if status == 429 else "Overloaded; retry later."
        response = HttpResponse(
            json.dumps({"detail": detail}), status=status, content_type="application/json"
        )
    else:
        text = (
            "Too many requests; retry later.\n" if status == 429 else "Overloaded; retry later.\n"
        )
        response = HttpResponse(text, status=status, content_type="text/plain; charset=utf-8")
    response["Retry-After"] = retry_after
    return response


class PageThrottleMiddleware:
    """Throttles the pages per client: ``plan`` for /plan and /compare, ``page`` for the others (rates in
    REST_FRAMEWORK's DEFAULT_THROTTLE_RATES, as for the API)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not request.path.startswith(UNTHROTTLED_PREFIXES):
            throttle = PageRateThrottle("plan" if request.path in PLANNING_PAGES else "page")
            # A DRF throttle on a plain Django request and no view: SimpleRateThrottle reads only
            # the cache key (get_cache_key above), the rate and the clock.
            if not throttle.allow_request(request, None):  # type: ignore[arg-type]
                return _too_many(request, throttle.wait())
        return self.get_response(request)


_warn_shed = RateLimitedWarning(logger)


def queued_seconds(request: HttpRequest, now: float) -> float | None:
    """How long the request waited since the front proxy stamped ``X-Request-Start: t=<epoch s>``
    (nginx's ``$msec``), or None when there is no usable stamp."""
    raw = request.META.get("HTTP_X_REQUEST_START", "")
    if not raw:
        return None
    try:
        stamp = float(raw.removeprefix("t="))
    except ValueError:
        return None
    if stamp > 1e14:  # microseconds (some proxies)
        stamp /= 1e6
    elif stamp > 1e11:  # milliseconds
        stamp /= 1e3
    waited = now - stamp
    return waited if waited >= 0 else None


class LoadShedMiddleware:
    """Answers 503 with Retry-After, without doing the work, to a request that waited longer than
    ``LOAD_SHED_QUEUE_SECONDS`` between the front proxy and a worker.

    Sync workers take one request at a time, so the queue lives in the proxy and the listen
    backlog, out of the process's sight; the proxy's timestamp is what measures it. Shed requests
    cost microseconds, so above the served rate the queue drains instead of growing without bound.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        bound_s = settings.LOAD_SHED_QUEUE_SECONDS
        if bound_s > 0 and not request.path.startswith(NEVER_SHED_PREFIXES):
            waited = queued_seconds(request, time.time())
            if waited is not None and waited > bound_s:
                _warn_shed(
                    "overloaded: shedding requests queued longer than %.1f s (this one %.1f s)",
                    bound_s,
                    waited,
                )
                response = _too_many(request, settings.LOAD_SHED_RETRY_AFTER_SECONDS, status=503)
                # One rate-limited warning above stands for all of them: no error line per shed
                # request from django.request during an overload.
                response._has_been_logged = True  # type: ignore[attr-defined]  # Django's log_response flag
                return response
        return self.get_response(request)
