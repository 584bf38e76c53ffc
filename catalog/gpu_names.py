"""Folding of the GPU names providers write into one lookup key. Pure: no Django."""

from __future__ import annotations

import re

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
