"""The OpenAPI schema tells the truth about errors and authentication, for every operation at once.

``AutoSchema`` (``REST_FRAMEWORK["DEFAULT_SCHEMA_CLASS"]``) adds to drf-spectacular's operations:

- the error answers each can give, with their JSON shape (``{"errors": {field: [messages]}}`` for
  a 400 naming the field, ``{"detail": message}`` otherwise) and ``Retry-After`` on 429 and 503;
- an empty security requirement (``{}``) where the permission lets an anonymous caller in, so
  anonymous reads (and the compute-only POST operations) say they need no token;
- ``allowEmptyValue`` on filter parameters, which treat ``?gpu=`` as no filter.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.models import AnonymousUser
from django_filters import NumberFilter
from drf_spectacular import openapi
from drf_spectacular.plumbing import ResolvedComponent
from rest_framework import serializers

from .serializers import StrictSerializer

# Who answers each error, and so in which media types: "view" errors come from the API view and
# are rendered like its answers (JSON, or CSV under ?format=csv); "json" errors come from the
# middleware in front of the views (ops/limits.py, ops/throttling.py) and are always JSON.
_DETAIL = "Error"
_FIELD_ERRORS = "ValidationError"

_ERROR_SCHEMAS: dict[str, dict[str, Any]] = {
    _DETAIL: {
        "type": "object",
        "description": "Any error other than a 400 naming fields.",
        "properties": {"detail": {"type": "string"}},
        "required": ["detail"],
    },
    _FIELD_ERRORS: {
        "type": "object",
        "description": "A 400: each offending field (or query parameter) with what is wrong with "
        "it; a nested object or list of objects for nested input, indexed like the input.",
        "properties": {
            "errors": {
                "type": "object",
                "additionalProperties": {"anyOf": [{"type": "array"}, {"type": "object"}]},
            }
        },
        "required": ["errors"],
    },
}

_RETRY_AFTER = {
    "Retry-After": {
        "description": "Seconds to wait before trying again.",
        "schema": {"type": "integer"},
    }
}


class AutoSchema(openapi.AutoSchema):
    """drf-spectacular's AutoSchema plus the error answers, anonymous access and empty filters."""

    def get_auth(self) -> list[dict[str, Any]]:
        auths = super().get_auth()
        if self._anonymous_allowed() and {} not in auths:
            auths.append({})
        return auths

    def _anonymous_allowed(self) -> bool:
        """Whether every permission of the view lets an anonymous caller use this method."""
        caller = _AnonymousCall(self.method)
        try:
            # A stand-in request: permission classes read its method and user only.
            return all(
                p.has_permission(caller, self.view)  # type: ignore[arg-type]
                for p in self.view.get_permissions()
            )
        except Exception:  # a permission that needs more of a request than this: say it is closed
            return False

    def _map_basic_serializer(self, serializer, direction):
        """Inputs that refuse unknown keys say so, and which groups of fields they need one of."""
        schema = super()._map_basic_serializer(serializer, direction)
        if direction == "request" and isinstance(serializer, StrictSerializer):
            schema["additionalProperties"] = False
            if serializer.required_any_of:
                schema["anyOf"] = [
                    {"required": list(group)} for group in serializer.required_any_of
                ]
        return schema

    def _map_serializer_field(self, field, direction, bypass_extensions=False):
        """A list that may not be empty has at least one item; a list of objects its bound."""
        schema = super()._map_serializer_field(field, direction, bypass_extensions)
        listed = isinstance(field, serializers.ListField | serializers.ListSerializer)
        if listed and not getattr(field, "allow_empty", True) and schema.get("type") == "array":
            schema["minItems"] = max(1, schema.get("minItems", 0))
        if isinstance(field, serializers.ListSerializer) and field.max_length is not None:
            schema["maxItems"] = field.max_length
        return schema

    def get_operation(self, path, path_regex, path_prefix, method, registry):
        operation = super().get_operation(path, path_regex, path_prefix, method, registry)
        if operation is None:
            return None
        self._document_filters(operation)
        for code, response in self._error_responses(operation).items():
            operation["responses"].setdefault(code, response)
        return operation

    def _document_filters(self, operation: dict[str, Any]) -> None:
        """What the filters accept that drf-spectacular does not say: an empty value is no filter
        (django-filter, DRF's format and ordering), a number filter takes any decimal within its
        bounds even on a whole-number column (``?min_vcpus=0.5``), an id filter a whole number."""
        filterset = getattr(self.view, "filterset_class", None)
        filters = dict(filterset.base_filters) if filterset is not None else {}
        names = {p["name"] for p in self._get_filter_parameters()} | {"format", "ordering"}
        for parameter in operation.get("parameters", []):
            if parameter["in"] != "query" or parameter["name"] not in names:
                continue
            number = filters.get(parameter["name"])
            if isinstance(number, NumberFilter):
                whole = number.extra.get("decimal_places") == 0
                schema = {
                    k: v for k, v in parameter["schema"].items() if k not in ("type", "format")
                }
                schema["type"] = "integer" if whole else "number"
                for bound, key in (("min_value", "minimum"), ("max_value", "maximum")):
                    if number.extra.get(bound) is not None:
                        schema[key] = number.extra[bound]
                parameter["schema"] = schema
            if not _admits_empty(parameter["schema"]):
                parameter["allowEmptyValue"] = True

    def _error_responses(self, operation: dict[str, Any]) -> dict[str, dict[str, Any]]:
        has_path_parameters = any(p["in"] == "path" for p in operation.get("parameters", []))
        takes_body = self.method in ("POST", "PUT", "PATCH")
        anonymous = {} in operation.get("security", [{}])
        responses = {
            "400": self._error(
                "view",
                "A field, query parameter or body the operation cannot take; a 400 naming "
                "fields has `errors`, a body that is not JSON (or nests too deep) `detail`.",
                both=True,
            ),
            "401": self._error(
                "view",
                "A token that is not valid."
                if anonymous
                else "No token, or one that is not valid: send `Authorization: Token <key>`.",
                headers={
                    "WWW-Authenticate": {
                        "description": "`Token`: the scheme to authenticate with.",
                        "schema": {"type": "string"},
                    }
                },
            ),
        }
        if takes_body:
            responses["403"] = self._error(
                "view",
                "Signed in without the permission this operation needs, or a session cookie "
                "without the CSRF token.",
            )
        if has_path_parameters:
            responses["404"] = self._error("view", "No such object.")
        responses["406"] = self._error(
            "json", "The Accept header names no media type the operation can answer in."
        )
        if takes_body:
            responses["413"] = self._error(
                "json",
                f"The body is larger than {settings.REQUEST_MAX_BODY_BYTES} bytes "
                "(REQUEST_MAX_BODY_BYTES).",
            )
        responses["414"] = {
            "description": "The request line is longer than the front server accepts (gunicorn "
            "or nginx answer, before the application; not JSON)."
        }
        if takes_body:
            responses["415"] = self._error("view", "A Content-Type the operation cannot read.")
        responses["429"] = self._error(
            "view",
            "Over the caller's request rate (docs/operations.md, Rates).",
            headers=_RETRY_AFTER,
        )
        responses["503"] = self._error(
            "json",
            "Overloaded: the request queued longer than LOAD_SHED_QUEUE_SECONDS in front of "
            "the workers and was shed without being served; retry after Retry-After seconds.",
            headers={name: {**header, "required": True} for name, header in _RETRY_AFTER.items()},
        )
        return responses

    def _error(
        self,
        source: str,
        description: str,
        *,
        both: bool = False,
        headers: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        detail = self._component(_DETAIL)
        schema = {"oneOf": [self._component(_FIELD_ERRORS), detail]} if both else detail
        media_types = ["application/json"]
        if source == "view":
            media_types = list(dict.fromkeys([*media_types, *self.map_renderers("media_type")]))
        content = {
            media_type: {
                "schema": schema
                if media_type == "application/json"
                else {"type": "string", "description": "The error as one row."}
            }
            for media_type in media_types
        }
        response: dict[str, Any] = {"content": content, "description": description}
        if headers:
            response["headers"] = headers
        return response

    def _component(self, name: str) -> dict[str, str]:
        component = ResolvedComponent(
            name=name,
            type=ResolvedComponent.SCHEMA,
            object=f"api.schema.{name}",
            schema=_ERROR_SCHEMAS[name],
        )
        self.registry.register_on_missing(component)
        return component.ref


def _admits_empty(schema: dict[str, Any]) -> bool:
    """Whether ``?name=`` is already valid by the schema: a plain string, or a comma-separated
    list (empty: no items)."""
    if schema.get("type") == "array":
        return not schema.get("minItems")
    plain = not ({"enum", "format", "pattern", "minLength"} & set(schema))
    return schema.get("type") == "string" and plain


class _AnonymousCall:
    """What a permission class reads of a request: the method and an anonymous user."""

    def __init__(self, method: str) -> None:
        self.method = method
        self.user = AnonymousUser()
