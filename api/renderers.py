"""CSV for tables people open in a spreadsheet: ``?format=csv`` or ``Accept: text/csv``."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, cast

from rest_framework.exceptions import ValidationError
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import BaseRenderer
from rest_framework.settings import api_settings


def _flatten(row: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested objects become dotted columns; lists become ``a; b`` (numbers stay numbers)."""
    flat: dict[str, Any] = {}
    for key, value in row.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            flat.update(_flatten(value, f"{name}."))
        elif isinstance(value, list):
            flat[name] = "; ".join(
                json.dumps(v, ensure_ascii=False) if isinstance(v, dict | list) else str(v)
                for v in value
            )
        else:
            flat[name] = "" if value is None else value
    return flat


class CSVRenderer(BaseRenderer):
    """Renders a list (or a page's ``results``, or a recommend answer's ``recommendations``)."""

    media_type = "text/csv"
    format = "csv"
    charset = "utf-8"
    # Keys under which an answer carries its table.
    table_keys = ("results", "recommendations", "rows")

    def render(
        self,
        data: Any,
        accepted_media_type: str | None = None,
        renderer_context: Mapping[str, Any] | None = None,
    ) -> bytes:
        if (isinstance(data, dict) and "errors" in data) or (
            isinstance(data, dict) and "detail" in data
        ):
            rows = [_flatten(data)]
        else:
            if isinstance(data, dict):
                data = next((data[k] for k in self.table_keys if k in data), [data])
            rows = [_flatten(item) for item in data or []]
        columns: list[str] = []
        for row in rows:
            columns.extend(c for c in row if c not in columns)
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=columns, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
        return buffer.getvalue().encode(self.charset)


# The default renderers plus CSV, for endpoints whose answer is a table.
# api_settings hands back the classes it imported; drf-stubs type the setting's dotted paths.
CSV_RENDERERS: list[type[BaseRenderer]] = [
    *cast(Sequence[type[BaseRenderer]], api_settings.DEFAULT_RENDERER_CLASSES),
    CSVRenderer,
]


class StrictContentNegotiation(DefaultContentNegotiation):
    """DRF's negotiation, with a 400 naming ``format`` for a format the endpoint cannot render
    (DRF answers 404, as if the object did not exist)."""

    def filter_renderers(
        self, renderers: Iterable[BaseRenderer], format: str
    ) -> list[BaseRenderer]:
        known = [renderer for renderer in renderers if renderer.format == format]
        if not known:
            formats = ", ".join(sorted({renderer.format for renderer in renderers}))
            # Not api.errors.bad_request: importing api.errors here imports rest_framework.views,
            # whose APIView reads this class while it loads (an import cycle).
            raise ValidationError(
                {"format": [f"unknown format {format!r}; expected one of: {formats}"]}
            )
        return known
