"""How far the estimator's figures may be off: ranges from its cross-validated errors. Pure Python.

The table (sizing/uncertainty.json) is written by ``python bench/uncertainty.py`` from the
leave-one-source-out errors of bench/calibration.csv (bench/sizing_accuracy.py); a test fails
when it no longer matches the calibration rows or the model. For each kind of figure (``memory``:
peak memory per GPU; ``time``: hours, i.e. the inverse of throughput) it holds multipliers of
the estimate, the 10th and 90th percentile of measured/estimated over comparable rows:

- ``framework_method``: the same framework and method (``litgpt/lora``), where enough rows;
- else ``method``: the same method (full, lora, qlora, freeze, inference);
- else ``all``: every row of that kind.

A range always holds the estimate itself: a low multiplier above 1 is taken as 1, a high one
below 1 as 1 (the estimator is never said to be surely wrong in one direction).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .estimator import Estimate
    from .workload import Workload

TABLE_PATH = Path(__file__).with_name("uncertainty.json")
KINDS = ("memory", "time")


@dataclass(frozen=True)
class Spread:
    """Multipliers of an estimate: ``low`` <= 1 <= ``high``; ``basis`` names the rows used
    (``framework_method:litgpt/lora``, ``method:lora`` or ``all``) and ``rows`` how many."""

    low: float
    high: float
    basis: str
    rows: int

    def of(self, value: float | None, places: int = 2) -> list[float] | None:
        """[low, high] of ``value`` (None for None)."""
        if value is None:
            return None
        return [round(value * self.low, places), round(value * self.high, places)]


NO_SPREAD = Spread(1.0, 1.0, "none", 0)


@lru_cache(maxsize=1)
def table() -> dict[str, Any]:
    """The committed table (sizing/uncertainty.json)."""
    with open(TABLE_PATH, encoding="utf-8") as fh:
        loaded: dict[str, Any] = json.load(fh)
    return loaded


def method_of(task: str | None, method: str | None) -> str:
    """The method group of a workload or calibration row: inference, else the training method
    (full when none is named)."""
    if task == "inference":
        return "inference"
    return method or "full"


def spread_from(kinds: dict[str, Any], kind: str, framework: str, method: str) -> Spread:
    """The multipliers for one kind of figure from a table's ``kinds`` mapping: the narrowest
    group with enough rows (framework and method, then method, then every row of the kind)."""
    groups = kinds.get(kind)
    if not groups:
        return NO_SPREAD
    for level, key in (("framework_method", f"{framework}/{method}"), ("method", method)):
        entry = groups.get(level, {}).get(key)
        if entry:
            return _spread(entry, f"{level}:{key}")
    entry = groups.get("all")
    return _spread(entry, "all") if entry else NO_SPREAD


def _spread(entry: dict[str, Any], basis: str) -> Spread:
    return Spread(min(entry["low"], 1.0), max(entry["high"], 1.0), basis, entry["rows"])


def spread(kind: str, workload: Workload) -> Spread:
    """The multipliers of ``kind`` (memory or time) for ``workload``, from the committed table."""
    return spread_from(
        table()["kinds"], kind, workload.framework, method_of(workload.task, workload.method)
    )


def fit_factor(workload: Workload, fit_on: str) -> float:
    """What the fit test multiplies the memory estimate by: the high end's multiplier, or 1
    when fits are decided on the point estimate."""
    return spread("memory", workload).high if fit_on == "high" else 1.0


def fit_headroom(headroom: float, factor: float) -> float:
    """The share of GPU memory to keep free on the point estimate so that ``factor`` x the
    estimate still leaves ``headroom`` free: memory x factor <= capacity x (1 - headroom)."""
    return 1 - (1 - headroom) / factor


def ranges(workload: Workload, est: Estimate) -> dict[str, Any]:
    """The API's range keys of an estimate: memory, GPU-hours, hours and tokens/s [low, high]
    (None where the estimate has no such figure), and what they rest on."""
    memory = spread("memory", workload)
    time = spread("time", workload)
    speed = est.tokens_per_second
    return {
        "memory_per_gpu_gib_range": memory.of(est.memory_per_gpu_gib),
        "gpu_hours_range": time.of(est.gpu_hours),
        "est_hours_range": time.of(est.est_hours),
        # Faster than estimated when the time comes out lower: the time multipliers, inverted.
        "tokens_per_second_range": None
        if speed is None
        else [round(speed / time.high, 1), round(speed / time.low, 1)],
        "range_basis": {
            "memory": {"basis": memory.basis, "rows": memory.rows},
            "time": {"basis": time.basis, "rows": time.rows},
            "quantiles": table()["quantiles"],
        },
    }
