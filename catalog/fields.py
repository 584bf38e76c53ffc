"""Model fields of the catalog's own."""

from __future__ import annotations

from typing import Any

from django.db import models
from django.db.backends.base.base import BaseDatabaseWrapper


class CodeField(models.CharField):
    """A CharField of codes (a choices member's value, e.g. a pricing model): on PostgreSQL its
    column is compared byte by byte (collation "C") instead of by the database's locale.

    A locale collation (the usual ``C.UTF-8`` or ``en_US.UTF-8``) compares two strings through
    the C library's strcoll, several times the cost of a byte comparison, and every insert into
    an index that holds the column makes a dozen such comparisons: the price index on (pricing
    model, USD per GPU-hour) was half of what PostgreSQL spent inserting a new price
    (bench/RESULTS.md, "Issue 15 on a quiet machine, 2026-12-05", "Ingest").
    Codes are ASCII, so byte order is the locale's order for them. Elsewhere (SQLite compares
    bytes already) the column is the plain CharField's.
    """

    def db_parameters(self, connection: BaseDatabaseWrapper) -> dict[str, Any]:
        params = super().db_parameters(connection)
        if connection.vendor == "postgresql" and not params.get("collation"):
            params["collation"] = "C"
        return params
