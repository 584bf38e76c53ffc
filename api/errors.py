"""One error shape for the whole API: ``{"errors": {field: [messages]}}`` for 400s."""

from __future__ import annotations

from typing import Any

from rest_framework import exceptions
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler


def _as_field_errors(detail: Any) -> dict[str, list]:
    if isinstance(detail, dict):
        return {str(k): (v if isinstance(v, list | dict) else [v]) for k, v in detail.items()}
    if isinstance(detail, list):
        return {"non_field_errors": detail}
    return {"non_field_errors": [detail]}


def exception_handler(exc: Exception, context: dict) -> Response | None:
    """Wrap validation errors as ``{"errors": ...}``; other API errors keep ``detail``."""
    response = drf_exception_handler(exc, context)
    if response is not None and isinstance(exc, exceptions.ValidationError):
        response.data = {"errors": _as_field_errors(response.data)}
    return response


def bad_request(errors: dict[str, list[str]]) -> exceptions.ValidationError:
    """A 400 naming each offending field."""
    return exceptions.ValidationError(errors)
