"""Shortcuts that give the reference walk's answers (walk.py) with less work: one walk per
profile and billing when no limit depends on the price, and bounds that stop weighing node
counts that cannot rank first."""

from __future__ import annotations

from dataclasses import dataclass

from ..estimator import gpu_hours_floor
from .offers import Constraints, Offer
from .rules import _limit_failure
from .steps import Failure, Fits, _Profile
from .walk import _entry_key, _Walk

# Two steps whose leading sort-key figures (at 1 USD/h) are this close may swap order once the
# real price multiplies them (float rounding); both are then ranked at the real price.
_TIE_TOLERANCE = 1e-9


@dataclass
class _Route:
    """What one profile gives under one pricing model when no limit depends on the price: the
    steps that survive (contenders: those that can rank first at some price), or the failure."""

    considered: int
    passing: list[Fits]
    contenders: list[Fits]
    failure: Failure | None


def _route(
    profile: _Profile,
    offer: Offer,
    c: Constraints,
    objective: str,
    first_only: bool,
    prune: bool = True,
) -> _Route:
    """Walk a profile's steps under one pricing model where no limit depends on the price.

    Steps are ranked by their leading figure at 1 USD/h (a step clearly worse there is worse at
    any price). For the cheapest objectives the walk stops once no larger node count can lead:
    the hourly price doubles with each step, and the total cannot fall below the compute-only
    GPU-hours floor (sizing.compute.gpu_hours_floor), which rises with the node count.
    """
    walk = _Walk(profile)
    passing: list[Fits] = []
    leads: list[float] = []
    for step in walk.fitting():
        limit_failure = _limit_failure(
            c, offer.pricing_model, step.estimate.est_hours, hourly=None, total=None
        )
        if limit_failure:
            walk.failure = Failure(limit_failure, step)
            continue
        passing.append(step)
        if first_only:
            break
        leads.append(_entry_key(1.0, offer, step, objective)[0])
        if prune and _cannot_lead(profile, step.nodes * 2, min(leads), objective):
            break
    contenders = _contenders(passing, leads)
    return _Route(walk.considered, passing, contenders, None if passing else walk.failure)


def _contenders(steps: list[Fits], leads: list[float]) -> list[Fits]:
    """The steps that can rank first at some price: a step whose leading figure at 1 USD/h is
    clearly worse stays worse at any price."""
    if len(steps) <= 1:
        return steps
    bound = min(leads) * (1 + _TIE_TOLERANCE)
    return [step for step, lead in zip(steps, leads, strict=True) if lead <= bound]


def _best_step(
    usd: float, offer: Offer, route: _Route, objective: str
) -> tuple[tuple[float, ...], Fits]:
    """An offer's ranking key and best step at its price: among the contenders, or among all
    passing steps for a free offer (at 0 USD/h every total ties). The route passes a step."""
    best: tuple[tuple[float, ...], Fits] | None = None
    for step in route.contenders if usd > 0 else route.passing:
        key = _entry_key(usd, offer, step, objective)
        if best is None or key < best[0]:
            best = (key, step)
    assert best is not None, "a route with no passing step has no best step"
    return best


def _cannot_lead(profile: _Profile, nodes: int, best: float, objective: str) -> bool:
    """Whether no step from ``nodes`` on can have a leading figure (at 1 USD/h) within the tie
    tolerance of ``best``."""
    if objective == "cheapest_hourly":
        lowest = float(nodes)  # hourly at 1 USD/h per node
    elif objective == "cheapest":
        # Total at 1 USD/h per node: nodes x hours >= GPU-hours / GPUs per node (terms bill more).
        floor = gpu_hours_floor(profile.workload, profile.device, nodes)
        if floor is None:
            return False
        lowest = floor / profile.gpus_per_node
    else:
        return False
    return lowest > best * (1 + _TIE_TOLERANCE)


def _dominated(
    profile: _Profile, step: Fits, best_total: float | None, objective: str, c: Constraints
) -> bool:
    """Whether every node count after ``step`` is beaten, at any positive price, by a step
    already found that passes max_hours and the term rules (``best_total``: its lowest total
    at 1 USD/h; None when the run has no length). Larger counts cost more per hour; they also
    cost more in total when their GPU-hours floor says so."""
    hours = step.estimate.est_hours
    if hours is None:
        return True  # ranked by the hourly price alone, and no total to limit
    if objective == "cheapest_hourly" and c.max_total_usd is None:
        return True
    return best_total is not None and _cannot_lead(profile, step.nodes * 2, best_total, "cheapest")
