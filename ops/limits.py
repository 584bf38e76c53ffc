"""Bounds on what a request may carry, enforced before any view runs: body size (also for chunked
bodies), JSON nesting depth and integer size, one value per API query parameter; and JSON error
answers for the API's 400/404/413/500 raised outside a DRF view (a bad Host header, an oversized
body, an unknown URL)."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.core.exceptions import DisallowedHost, RequestDataTooBig
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views import defaults
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

# Integers with more digits than this cannot be a count or a size and do not fit a float
# (float max is about 1.8e308): they are read as infinity, which the fields' bounds refuse.
MAX_INT_DIGITS = 308
_READ_CHUNK_BYTES = 64 * 1024
_BODY_METHODS = ("POST", "PUT", "PATCH", "DELETE")


def _is_api(request: HttpRequest) -> bool:
    return request.path.startswith("/api/")


def _error(request: HttpRequest, status: int, detail: str) -> HttpResponse:
    if _is_api(request):
        return JsonResponse({"detail": detail}, status=status)
    return HttpResponse(detail + "\n", status=status, content_type="text/plain; charset=utf-8")


class RequestBoundsMiddleware:
    """Refuses bodies over ``REQUEST_MAX_BODY_BYTES`` with 413 before they are read, and reads a
    chunked body (no Content-Length: gunicorn passes it through, Django would read it as empty)
    up to that bound so views see it."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.method in _BODY_METHODS:
            refused = self._bound(request)
            if refused is not None:
                return refused
        if _is_api(request):
            repeated = _repeated_parameters(request)
            if repeated:
                return JsonResponse({"errors": repeated}, status=400)
        return self.get_response(request)

    def _bound(self, request: HttpRequest) -> HttpResponse | None:
        limit = settings.REQUEST_MAX_BODY_BYTES
        too_big = f"request body larger than {limit} bytes"
        raw_length = request.META.get("CONTENT_LENGTH") or ""
        if raw_length:
            try:
                length = int(raw_length)
            except ValueError:
                return _error(request, 400, "invalid Content-Length")
            if length > limit:  # django.request logs the 413 once
                return _error(request, 413, too_big)
            return None
        if "chunked" not in request.META.get("HTTP_TRANSFER_ENCODING", "").lower():
            return None
        stream = request.META.get("wsgi.input")
        if stream is None:
            return None
        body = bytearray()
        while len(body) <= limit:
            chunk = stream.read(_READ_CHUNK_BYTES)
            if not chunk:
                break
            body += chunk
        if len(body) > limit:
            return _error(request, 413, too_big)
        request.META["CONTENT_LENGTH"] = str(len(body))
        request._stream = io.BytesIO(bytes(body))  # what HttpRequest.read() reads
        request._read_started = False  # type: ignore[attr-defined]  # HttpRequest.read()'s private flag
        return None


def _repeated_parameters(request: HttpRequest) -> dict[str, list[str]]:
    """API query parameters given more than once: every API list parameter is comma-separated
    (``?pricing_model=spot,on_demand``), so a repeat would silently keep only the last value."""
    return {
        name: [f"given {len(values)} times; give it once (lists are comma-separated: a,b)"]
        for name, values in request.GET.lists()
        if len(values) > 1
    }


def _depth_exceeds(value: Any, limit: int) -> bool:
    """True when ``value`` nests lists/objects deeper than ``limit`` (iterative: no recursion)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth > limit:
                return True
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)
    return False


def _parse_int(text: str) -> int | float:
    return int(text) if len(text.lstrip("-")) <= MAX_INT_DIGITS else float(text)


class BoundedJSONParser(JSONParser):
    """DRF's JSON parser with bounds: at most ``REQUEST_MAX_BODY_BYTES`` read, at most
    ``REQUEST_MAX_JSON_DEPTH`` levels of nesting, integers beyond float range read as infinity."""

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        limit = settings.REQUEST_MAX_BODY_BYTES
        raw = stream.read(limit + 1) if stream is not None else b""
        if len(raw) > limit:
            raise ParseError(f"request body larger than {limit} bytes")
        encoding = (parser_context or {}).get("encoding", settings.DEFAULT_CHARSET)
        try:
            text = raw.decode(encoding)
        except (UnicodeDecodeError, LookupError) as exc:
            raise ParseError(f"request body is not valid {encoding}") from exc
        try:
            data = json.loads(text, parse_int=_parse_int, parse_constant=_refuse_constant)
        except RecursionError as exc:
            raise ParseError(
                f"JSON nested deeper than {settings.REQUEST_MAX_JSON_DEPTH} levels"
            ) from exc
        except ValueError as exc:
            raise ParseError(f"JSON parse error - {exc}") from exc
        if _depth_exceeds(data, settings.REQUEST_MAX_JSON_DEPTH):
            raise ParseError(f"JSON nested deeper than {settings.REQUEST_MAX_JSON_DEPTH} levels")
        return data


def _refuse_constant(name: str) -> None:
    raise ValueError(f"{name} is not a JSON number")


# --- Error views (handler400/404/500 in config/urls.py) ----------------------------------


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    """400 (413 for an oversized body): JSON under /api/, Django's page elsewhere."""
    if isinstance(exception, RequestDataTooBig):
        return _error(
            request, 413, f"request body larger than {settings.REQUEST_MAX_BODY_BYTES} bytes"
        )
    if not _is_api(request):
        return defaults.bad_request(request, exception)
    if isinstance(exception, DisallowedHost):
        return _error(request, 400, "Host header not served here")
    return _error(request, 400, "bad request")


def page_not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """404: JSON under /api/, Django's page elsewhere."""
    if _is_api(request):
        return _error(request, 404, "Not found.")
    return defaults.page_not_found(request, exception)


def server_error(request: HttpRequest) -> HttpResponse:
    """500: JSON under /api/ (with the request id to quote), Django's page elsewhere."""
    if _is_api(request):
        rid = getattr(request, "request_id", "-")
        return JsonResponse({"detail": "Server error.", "request_id": rid}, status=500)
    return defaults.server_error(request)
