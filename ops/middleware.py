"""Request ids, request metrics and API cache headers."""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

from . import metrics
from .context import request_id

_SAFE_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")


class RequestIdMiddleware:
    """Takes ``X-Request-ID`` from the caller (or makes one), logs with it and echoes it back."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        incoming = request.headers.get("X-Request-ID", "")
        rid = incoming if _SAFE_ID.match(incoming) else uuid.uuid4().hex
        request.request_id = rid  # type: ignore[attr-defined]  # ours; server_error reads it
        token = request_id.set(rid)
        try:
            response = self.get_response(request)
        finally:
            request_id.reset(token)
        response["X-Request-ID"] = rid
        return response


class MetricsMiddleware:
    """Counts requests and times them per view name (not per URL, to keep labels bounded)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        started = time.perf_counter()
        response = self.get_response(request)
        match = getattr(request, "resolver_match", None)
        view = match.view_name if match and match.view_name else "unmatched"
        metrics.observe(request.method or "GET", view, response.status_code, started)
        return response


class ApiCacheControlMiddleware:
    """API reads revalidate every time (ETag/304 from ConditionalGetMiddleware) so a client never
    keeps a price past a refresh; responses vary by format, encoding and credentials."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if request.path.startswith("/api/") and request.method in ("GET", "HEAD"):
            response.setdefault("Cache-Control", "no-cache")
            from django.utils.cache import patch_vary_headers

            patch_vary_headers(response, ("Accept", "Accept-Encoding", "Authorization"))
        return response
