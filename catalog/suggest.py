""" "Did you mean": the known names closest to a misspelt one, for every error that names an
unknown value (API filters, sizing inputs, model presets). Pure: no Django.

Names are ranked by the parts they share with the value first (the family, "a100" or "llama",
counts most; then the other parts, memory size "40gb" among them), then by edit distance
(difflib), so "a100-40gb" suggests the 40 GB A100s before the 80 GB one and "h100" the H100s
before the P100. Providers' other common names ("aliyun", "qcloud", "amazon") lead to them.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping

# difflib's similarity ratio below which a name is not offered on spelling alone (0.6 is
# difflib's default; a little lower catches short slugs with one wrong letter, "awz" for "aws").
CLOSE_CUTOFF = 0.5
# What the first part of a name (its family: "a100", "h100", "llama") weighs against any other
# shared part: a family match outranks a shared memory size ("h100-80gb" -> the H100s first).
FAMILY_WEIGHT = 2

# The other names people use for the providers, written without separators or case.
OTHER_NAMES: dict[str, str] = {
    "aliyun": "alibaba",
    "alicloud": "alibaba",
    "alibabacloud": "alibaba",
    "qcloud": "tencent",
    "tencentcloud": "tencent",
    "huaweicloud": "huawei",
    "hwcloud": "huawei",
    "google": "gcp",
    "googlecloud": "gcp",
    "gce": "gcp",
    "microsoft": "azure",
    "microsoftazure": "azure",
    "amazon": "aws",
    "amazonwebservices": "aws",
    "ec2": "aws",
    "lambdalabs": "lambda",
    "vast": "vastai",
}

# Country codes people write for another: the United Kingdom's ISO 3166-1 alpha-2 code is GB;
# UK is only "exceptionally reserved" for it (ISO 3166 Maintenance Agency).
COUNTRY_OTHER_CODES: dict[str, str] = {"uk": "GB"}

_SEPARATORS = re.compile(r"[-_\s./]+")
_MEMORY = re.compile(r"^(\d+)(?:g|gb|gib)$")


def _parts(name: str) -> list[str]:
    """A name's parts, lower-case, memory sizes without their unit ("80GB" and "80g" -> "80")."""
    parts = [part for part in _SEPARATORS.split(name.lower()) if part]
    return [_MEMORY.sub(r"\1", part) for part in parts]


def _shared(value_parts: list[str], name: str) -> int:
    """How much of ``value_parts`` ``name`` shares: the family counts FAMILY_WEIGHT, others 1."""
    parts = set(_parts(name))
    return sum(
        (FAMILY_WEIGHT if index == 0 else 1)
        for index, part in enumerate(value_parts)
        if part in parts
    )


def close_names(
    value: str,
    known: Iterable[str],
    *,
    limit: int = 3,
    other_names: Mapping[str, str] = OTHER_NAMES,
) -> list[str]:
    """Up to ``limit`` known names closest to ``value``, best first (see the module docstring);
    failing that, the names that contain its first dash-separated part ("llama" finds the llama
    presets). ``other_names`` maps other common names (lower-case, no separators) to known ones:
    the providers' by default."""
    names = sorted(set(known))
    value_parts = _parts(value)
    matcher = difflib.SequenceMatcher()
    matcher.set_seq2(value)
    scored = []
    for name in names:
        matcher.set_seq1(name)
        ratio = matcher.ratio()
        shared = _shared(value_parts, name)
        if shared or ratio >= CLOSE_CUTOFF:
            scored.append((-shared, -ratio, name))
    close = [name for _, _, name in sorted(scored)]
    other = other_names.get(re.sub(r"[^a-z0-9]", "", value.lower()))
    if other is not None and other in names:
        close = [other, *(name for name in close if name != other)]
    close = close[:limit]
    if not close:
        stem = value.split("-")[0]
        close = [name for name in names if stem and stem in name][:limit]
    return close


def did_you_mean(
    value: str,
    known: Iterable[str],
    *,
    limit: int = 3,
    other_names: Mapping[str, str] = OTHER_NAMES,
) -> str:
    """``"did you mean a, b?"`` for the names closest to ``value``, or ``""`` when none is."""
    close = close_names(value, known, limit=limit, other_names=other_names)
    return f"did you mean {', '.join(close)}?" if close else ""
