"""Shortcuts that give the reference walk's answers (walk.py) with less work: one walk per
profile and billing when no limit depends on the price, and bounds that stop weighing node
counts that cannot rank first."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..estimator import gpu_hours_floor
from ..messages import RejectionCode as R
from .offers import Constraints, Offer
from .rules import TERM_HOURS, _limit_failure
from .steps import Failure, Fits, NoFit, OverMax, _Profile
from .walk import _entry_key, _Walk

# Two steps whose leading sort-key figures (at 1 USD/h) are this close may swap order once the
# real price multiplies them (float rounding); both are then ranked at the real price.
_TIE_TOLERANCE = 1e-9


@dataclass
class _Route:
    """What one profile gives under one pricing model when no limit depends on the price: the
    steps that survive (contenders: those that can rank first at some price), or the failure."""

    considered: int
    passing: Sequence[Fits]
    contenders: Sequence[Fits]
    failure: Failure | None


def _failed(considered: int, failure: Failure | None) -> _Route:
    """A route with no passing step (no lists of its own: a run makes hundreds)."""
    return _Route(considered, (), (), failure)


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


@dataclass
class _ShapeWalk:
    """A profile's node counts as memory tells them, gone through once for all its pricing
    models: how many a full walk considers, the indexes of those that fit memory, and the
    failure a walk ends on when its last one does not fit (or the first is over the GPU cap)."""

    considered: int
    fitting: list[int]
    end: Failure | None
    # The route of every pricing model when nothing fits (no estimate can change it).
    unfit: _Route | None


def _shape_walk(profile: _Profile) -> _ShapeWalk:
    walked = profile.outline.walked
    if walked is not None:
        return walked
    fitting: list[int] = []
    shapes = profile.all_shapes()
    considered = len(shapes) - (1 if shapes and isinstance(shapes[-1], OverMax) else 0)
    for index in range(considered):
        if not isinstance(shapes[index], NoFit):
            fitting.append(index)
    end: Failure | None = None
    if considered == 0 and shapes:  # the first node count is over the GPU cap
        end = Failure(R.OVER_MAX_GPUS, shapes[0])
    elif considered and isinstance(shapes[considered - 1], NoFit):
        last = shapes[considered - 1]
        assert isinstance(last, NoFit)
        end = Failure(last.reason, last)
    unfit = None if fitting else _failed(considered, end)
    walked = profile.outline.walked = _ShapeWalk(considered, fitting, end, unfit)
    return walked


def _nothing_fits(profile: _Profile) -> _Route | None:
    """The route of every pricing model of a machine where no node count fits memory (what
    ``_quick_route`` gives each of them), else None."""
    outline = profile.outline
    if outline.first_fit() is not None:
        return None
    walked = outline.walked
    return (walked or _shape_walk(profile)).unfit


def _quick_route(profile: _Profile, pricing_model: str, c: Constraints) -> _Route | None:
    """``_route`` without walking the steps where memory and hours decide it, else None.

    Where no node count fits memory, every pricing model fails alike. Under a commitment term
    (no limit on the price) where no node count passes its rules, the node counts that fit are
    not estimated (``_Profile.hours``) and the failure at the last one holds its shape
    (estimated only if a rejection example names it, ``_Planner.reject``); a run too short for
    the term fails at every node count, and a profile's terms share its hours. Where a node
    count passes a term, its route is walked (None)."""
    if pricing_model not in TERM_HOURS and profile.outline.walked is None and profile.first_fit():
        return None  # hourly, and a node count fits: the walk weighs no more than it needs
    walked = _shape_walk(profile)
    if walked.unfit is not None:
        return walked.unfit
    if pricing_model not in TERM_HOURS:
        return None
    tokens = profile.workload.tokens
    reason: str | None = None
    for index in walked.fitting:
        hours = profile.hours(index)
        if tokens and hours is None:  # no throughput figure: the walk ends here
            return _failed(index + 1, Failure(R.NO_THROUGHPUT_FIGURE, profile.step(index)))
        reason = _limit_failure(c, pricing_model, hours, hourly=None, total=None)
        if reason is None:
            return None
    last = walked.fitting[-1]
    if last == walked.considered - 1:  # the walk ends on a node count that fits
        assert reason is not None
        shape = profile.shapes[last]
        return _failed(walked.considered, Failure(reason, shape))
    return _failed(walked.considered, walked.end)


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
