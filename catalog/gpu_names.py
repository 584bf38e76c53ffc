"""Folding of the GPU names providers write into one lookup key. Pure: no Django."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

_NON_ALNUM = re.compile(r"[^a-z0-9]+")
_COUNT_PREFIX = re.compile(r"^\d+\s*x\s+")
# Words that brand a name without telling parts apart ("NVIDIA Tesla T4" is the T4).
_BRAND_WORDS = {"nvidia", "tesla", "geforce", "amd", "instinct", "huawei", "gpu"}


def normalise_gpu_name(name: str) -> str:
    """Lower-case, fold punctuation to spaces, drop a leading "8x" count and brand words.

    "NVIDIA A100-SXM4-80GB" -> "a100 sxm4 80gb"; "8x H100 SXM" -> "h100 sxm";
    "nvidia-tesla-t4" -> "t4".
    """
    folded = _NON_ALNUM.sub(" ", name.lower()).strip()
    folded = _COUNT_PREFIX.sub("", folded)
    words = [w for w in folded.split() if w not in _BRAND_WORDS]
    return " ".join(words)


def gpu_name_keys(
    slugs: Iterable[str], aliases: Iterable[tuple[str, str]]
) -> dict[str, frozenset[str]]:
    """Lookup key -> the GPU slugs it names: each slug under its folded form, each alias
    (``(normalised name, slug)`` pairs, as GPUAlias stores them) under its key."""
    keys: dict[str, set[str]] = {}
    for slug in slugs:
        keys.setdefault(normalise_gpu_name(slug), set()).add(slug)
    for key, slug in aliases:
        keys.setdefault(key, set()).add(slug)
    return {key: frozenset(named) for key, named in keys.items() if key}


def gpu_slugs_named(
    name: str, slugs: Iterable[str], keys: Mapping[str, Iterable[str]]
) -> list[str]:
    """The GPU slugs ``name`` stands for, sorted: its slug in any case; else every GPU one of
    whose names (slug or alias, ``keys`` from gpu_name_keys) folds to the same key, as the
    ingest service matches providers' names. Empty when none does; two or more when ambiguous."""
    wanted = name.strip().lower()
    if wanted in set(slugs):
        return [wanted]
    return sorted(keys.get(normalise_gpu_name(name), ()))
