""" "Did you mean": the known names closest to a misspelt one, for every error that names an
unknown value (API filters, sizing inputs, model presets). Pure: no Django."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

# difflib's similarity ratio below which a name is not offered (0.6 is difflib's default; a
# little lower catches short slugs with one wrong letter, "awz" for "aws").
CLOSE_CUTOFF = 0.5


def close_names(value: str, known: Iterable[str], *, limit: int = 3) -> list[str]:
    """Up to ``limit`` known names closest to ``value``, best first; failing that, the names that
    contain its first dash-separated part ("llama" finds the llama presets)."""
    names = sorted(known)
    close = difflib.get_close_matches(value, names, n=limit, cutoff=CLOSE_CUTOFF)
    if not close:
        stem = value.split("-")[0]
        close = [name for name in names if stem and stem in name][:limit]
    return close


def did_you_mean(value: str, known: Iterable[str], *, limit: int = 3) -> str:
    """``"did you mean a, b?"`` for the names closest to ``value``, or ``""`` when none is."""
    close = close_names(value, known, limit=limit)
    return f"did you mean {', '.join(close)}?" if close else ""
