"""Serializer plumbing every app's input serializers share."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers


class StrictSerializer(serializers.Serializer):
    """A misspelt key is a 400 naming it, never silently ignored; the OpenAPI schema says so
    (``additionalProperties: false``, api/schema.py).

    ``required_any_of`` names groups of fields of which an input must give at least one group
    (the schema's ``anyOf`` of ``required``), for inputs no single field is required of. (Not
    ``oneOf``: the API reads a null as not given, which JSON Schema's ``required`` cannot.)
    """

    required_any_of: tuple[tuple[str, ...], ...] = ()

    def to_internal_value(self, data):
        if isinstance(data, dict):
            unknown = sorted(set(data) - set(self.fields))
            if unknown:
                known = ", ".join(sorted(self.fields))
                raise serializers.ValidationError(
                    {key: [f"unknown field; expected one of: {known}"] for key in unknown}
                )
        return super().to_internal_value(data)


class StrictBooleanField(serializers.BooleanField):
    """``true`` or ``false`` (JSON booleans, or those two words in a query string); not DRF's
    wider reading of ``1``, ``0``, ``"yes"`` or ``"on"``, which the schema's boolean does not
    admit."""

    default_error_messages = {"invalid": "Must be true or false."}

    def to_internal_value(self, data):
        if isinstance(data, bool):
            return data
        if isinstance(data, str) and data.strip().lower() in ("true", "false"):
            return data.strip().lower() == "true"
        self.fail("invalid", input=data)


class StrictFloatField(serializers.FloatField):
    """DRF's FloatField without reading ``true``/``false`` as 1.0/0.0 (Python's float(False));
    numbers, and numbers written as strings (a query string's), only."""

    def to_internal_value(self, data: Any) -> float:
        if isinstance(data, bool):
            self.fail("invalid")
        return float(super().to_internal_value(data))


class StrictCharField(serializers.CharField):
    """DRF's CharField without turning a JSON number into its digits (``[0]`` is not ``["0"]``)."""

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return str(super().to_internal_value(data))
