"""What the plan page shows of a recommend answer: plausible candidates only. Pure Python.

The planner weighs every offer at every node count; a page that lists them all shows runs of 29
years beside runs of a day, and one offer at 1, 2, 4 and 8 GPUs for the same total. These
helpers keep what a reader would consider: plans within a factor of the fastest and under a year,
or, past that, ones no other plan beats on both time and cost (so the cheapest plan is always
shown: a slow plan is left out only when a faster one costs no more); the plan ranked first is
never left out; and, of one offer (a provider's GPU in one region at one pricing model, whatever the size of
the instance type: RunPod's "1x B200" and "8x B200" are one offer at two sizes), only the sizes
and node counts no other size of it beats on both time and cost (and, when the plans are
ranked by price per hour, on that price too).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

# A plan more than this many times slower than the fastest candidate is not shown.
MAX_TIME_RATIO = 10.0
# Nor one running longer than a year (365 days of 24 hours).
MAX_HOURS = 365 * 24
# Relative difference under which two estimates count as the same (rounding of the planner).
SAME = 0.005


@dataclass
class Shown:
    """The plans kept, in the planner's order, and how many were left out and why."""

    plans: list[dict[str, Any]] = field(default_factory=list)
    too_slow: int = 0
    repeats: int = 0
    time_limit_hours: float | None = None


def _no_worse(a: float | None, b: float | None) -> bool:
    """``a`` is at most ``b`` (within SAME); a missing figure compares as equal."""
    if a is None or b is None:
        return True
    return a <= b * (1 + SAME)


def _better(a: float | None, b: float | None) -> bool:
    return a is not None and b is not None and a < b * (1 - SAME)


def _dominated(plan: dict[str, Any], other: dict[str, Any], hourly: bool = False) -> bool:
    """``other`` is no slower and no dearer than ``plan`` and better on one of them."""
    if plan.get("est_hours") is not None and plan.get("est_total_usd") is not None:
        keys: tuple[str, ...] = ("est_hours", "est_total_usd")
        if hourly:
            keys += ("usd_per_hour",)
    else:
        keys = ("usd_per_hour",)
    return all(_no_worse(other.get(k), plan.get(k)) for k in keys) and any(
        _better(other.get(k), plan.get(k)) for k in keys
    )


def _offer(plan: dict[str, Any]) -> tuple:
    """One offer at any size: provider, region, GPU and pricing model."""
    return (plan["provider"], plan["region"], plan["gpu"], plan["pricing_model"])


def plausible(plans: list[dict[str, Any]], objective: str | None = None) -> Shown:
    """The plans worth showing, in the given order (see the module docstring).

    ``objective`` is the planner's ranking; ranked by price per hour (``cheapest_hourly``), a
    smaller size that is cheaper per hour is kept beside a bigger one that is as cheap in total.
    The first plan (the planner's best by ``objective``) is always kept, so that the page's
    headline figures, which describe it, describe a plan on the page.
    """
    hourly = objective == "cheapest_hourly"
    shown = Shown()
    hours = [p["est_hours"] for p in plans if p.get("est_hours")]
    limit = min(min(hours) * MAX_TIME_RATIO, MAX_HOURS) if hours else None
    shown.time_limit_hours = limit
    timely = []
    for index, plan in enumerate(plans):
        if (
            index > 0
            and limit is not None
            and plan.get("est_hours")
            and plan["est_hours"] > limit
            and any(_dominated(plan, other, hourly) for other in plans if other is not plan)
        ):
            shown.too_slow += 1
        else:
            timely.append(plan)
    by_offer: dict[tuple, list[dict[str, Any]]] = defaultdict(list)
    for plan in timely:
        by_offer[_offer(plan)].append(plan)
    for index, plan in enumerate(timely):
        twins = [other for other in by_offer[_offer(plan)] if other is not plan]
        if index > 0 and (
            any(_dominated(plan, other, hourly) for other in twins)
            or any(_same(plan, other) and other["rank"] < plan["rank"] for other in twins)
        ):
            shown.repeats += 1
        else:
            shown.plans.append(plan)
    return shown


def _same(plan: dict[str, Any], other: dict[str, Any]) -> bool:
    """Two sizes of one offer with the same time and cost (the first ranked is kept)."""
    keys = ("est_hours", "est_total_usd", "usd_per_hour")
    return all(
        _no_worse(plan.get(k), other.get(k)) and _no_worse(other.get(k), plan.get(k)) for k in keys
    )
