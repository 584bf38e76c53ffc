"""One error shape for the whole API: ``{"errors": {field: [messages]}}`` for 400s."""

from __future__ import annotations

from typing import Any

from rest_framework import exceptions
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler


def _as_field_errors(detail: Any) -> dict[str, list[Any] | dict[Any, Any]]:
    if isinstance(detail, dict):
        return {str(k): (v if isinstance(v, list | dict) else [v]) for k, v in detail.items()}
    if isinstance(detail, list):
        return {"non_field_errors": detail}
    return {"non_field_errors": [detail]}


class CodedValidationError(exceptions.ValidationError):
    """A 400 whose messages also come coded: ``coded`` mirrors the errors' shape with
    ``{"code", "params", "text"}`` items, answered as ``error_messages`` beside ``errors``."""

    def __init__(self, detail: Any, coded: dict[str, Any]) -> None:
        super().__init__(detail)
        self.coded = coded


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """Wrap validation errors as ``{"errors": ...}`` (with ``error_messages`` where they are
    coded); other API errors keep ``detail``."""
    response = drf_exception_handler(exc, context)
    if response is not None and isinstance(exc, exceptions.ValidationError):
        response.data = {"errors": _as_field_errors(response.data)}
        if isinstance(exc, CodedValidationError):
            response.data["error_messages"] = exc.coded
    return response


def bad_request(errors: dict[str, list[str]]) -> exceptions.ValidationError:
    """A 400 naming each offending field."""
    return exceptions.ValidationError(errors)
