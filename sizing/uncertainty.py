"""How far the estimator's figures may be off: ranges from its cross-validated errors. Pure Python.

The table (sizing/uncertainty.json) is written by ``python bench/uncertainty.py`` from the
leave-one-source-out errors of bench/calibration.csv (bench/sizing_accuracy.py); a test fails
when it no longer matches the calibration rows or the model. For each kind of figure (``memory``:
peak memory per GPU; ``time``: hours, i.e. the inverse of throughput) it holds multipliers of
the estimate, the 5th and 95th percentile (a nominal 90%) of measured/estimated over comparable
rows, the narrowest group with enough rows winning:

- ``framework_method``: the same framework and method (``litgpt/lora``; memory also by layout,
  ``litgpt/lora/single``), where enough rows;
- else ``method``: the same method (full, lora, qlora, freeze, inference; memory by layout);
- else, for memory, ``layout``: every training row on one GPU (``single``) or on several
  (``multi``: sharded, tensor or pipeline parallel);
- else ``all``: every row of that kind (for memory, every training row).

Inference memory never falls back to training rows: weights and KV cache are arithmetic, so
with too few inference rows its range is a stated margin around the estimate, widened to hold
every inference row (INFERENCE_MEMORY_MARGIN; docs/sizing.md "Ranges").
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
# Serving memory with too few inference rows for a group: weights (parameters x bytes) and the
# KV cache (layers x KV heads x head size x bytes x tokens) are arithmetic; what is uncertain is
# what the engine holds besides (prefill activations, CUDA graphs, sampler and communication
# buffers, allocator slack), which the estimate counts as activations and overhead. The range is
# this margin either side of the estimate, widened to hold every inference row there is
# (bench/uncertainty.py writes it as the table's ``inference_fallback``): a stated margin, not a
# fit; docs/sizing.md "Ranges" gives the reasons and bench/RESULTS.md the rows.
INFERENCE_MEMORY_MARGIN = 0.05
INFERENCE_FALLBACK_BASIS = "fallback:inference"


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


def layout_of(workload: Workload, gpu_count: int | None = None) -> str:
    """``multi`` when the job spans several GPUs (``gpu_count``, the workload's own count, a
    sharding or a model-parallel degree says so), else ``single``: a workload that leaves the
    layout open is judged as one GPU, where most of its candidate plans lie."""
    count = gpu_count or workload.gpu_count or 1
    sharded = workload.sharding not in (None, "none")
    return "multi" if count > 1 or sharded or workload.model_parallel > 1 else "single"


def spread_from(
    kinds: dict[str, Any], kind: str, framework: str, method: str, layout: str = "single"
) -> Spread:
    """The multipliers for one kind of figure from a table's ``kinds`` mapping: the narrowest
    group with enough rows (framework and method, then method, then, for memory, the layout,
    then every row of the kind); inference memory without a group gets the fallback."""
    groups = kinds.get(kind)
    if kind == "memory" and method == "inference":
        for level, key in (("framework_method", f"{framework}/{method}"), ("method", method)):
            entry = (groups or {}).get(level, {}).get(key)
            if entry:
                return _spread(entry, f"{level}:{key}")
        entry = (groups or {}).get("inference_fallback")
        if entry:
            return _spread(entry, INFERENCE_FALLBACK_BASIS)
        m = INFERENCE_MEMORY_MARGIN
        return Spread(1 - m, 1 + m, INFERENCE_FALLBACK_BASIS, 0)
    if not groups:
        return NO_SPREAD
    levels: tuple[tuple[str, str], ...]
    if kind == "memory":
        levels = (
            ("framework_method", f"{framework}/{method}/{layout}"),
            ("method", f"{method}/{layout}"),
            ("layout", layout),
        )
    else:
        levels = (("framework_method", f"{framework}/{method}"), ("method", method))
    for level, key in levels:
        entry = groups.get(level, {}).get(key)
        if entry:
            return _spread(entry, f"{level}:{key}")
    entry = groups.get("all")
    return _spread(entry, "all") if entry else NO_SPREAD


def _spread(entry: dict[str, Any], basis: str) -> Spread:
    return Spread(min(entry["low"], 1.0), max(entry["high"], 1.0), basis, entry["rows"])


def spread(kind: str, workload: Workload, gpu_count: int | None = None) -> Spread:
    """The multipliers of ``kind`` (memory or time) for ``workload`` on ``gpu_count`` GPUs
    (None: as the workload states; see ``layout_of``), from the committed table."""
    return spread_from(
        table()["kinds"],
        kind,
        workload.framework,
        method_of(workload.task, workload.method),
        layout_of(workload, gpu_count),
    )


def fit_factor(workload: Workload, fit_on: str, gpu_count: int | None = None) -> float:
    """What the fit test multiplies the memory estimate by: the high end's multiplier, or 1
    when fits are decided on the point estimate."""
    return spread("memory", workload, gpu_count).high if fit_on == "high" else 1.0


def fit_headroom(headroom: float, factor: float) -> float:
    """The share of GPU memory to keep free on the point estimate so that ``factor`` x the
    estimate still leaves ``headroom`` free: memory x factor <= capacity x (1 - headroom)."""
    return 1 - (1 - headroom) / factor


def ranges(workload: Workload, est: Estimate, gpu_count: int | None = None) -> dict[str, Any]:
    """The API's range keys of an estimate: memory, GPU-hours, hours and tokens/s [low, high]
    (None where the estimate has no such figure), and what they rest on."""
    memory = spread("memory", workload, gpu_count)
    time = spread("time", workload, gpu_count)
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
