"""The reference walk: one offer at its own price, node count by node count, every limit
checked. The fast paths (fastpaths.py, search.py) must give the same answers; the test
tests/sizing/test_planner_paths.py holds them to it."""

from __future__ import annotations

from collections.abc import Iterator

from ..messages import RejectionCode as R
from .offers import Constraints, Offer
from .rules import _billed_amount, _limit_failure, _rank_key
from .steps import Failure, Fits, NoFit, NoThroughput, OverMax, _Profile


class _Candidate:
    """The best step of one offer: enough to rank, collapse and advise; a Plan is built only for
    the plans returned."""

    __slots__ = ("est_hours", "est_total_usd", "gpu_count", "key", "nodes", "offer",
                 "other_regions", "step", "usd_per_hour")  # fmt: skip

    def __init__(self, offer: Offer, step: Fits, objective: str) -> None:
        est = step.estimate
        hourly = offer.usd_per_hour * step.nodes
        hours = est.est_hours
        total = _billed_amount(hourly, offer.pricing_model, hours)
        gpu_count = step.total if offer.gpu_count >= 1 else offer.gpu_count
        self.offer = offer
        self.step = step
        self.nodes = step.nodes
        self.gpu_count = gpu_count
        self.usd_per_hour = hourly
        self.est_hours = hours
        self.est_total_usd = total
        self.other_regions: list[str] = []
        self.key = _rank_key(hourly, total, hours, est, gpu_count, objective)


def _entry_key(usd_per_hour: float, offer: Offer, step: Fits, objective: str) -> tuple[float, ...]:
    """_Candidate(offer, step, objective).key without building the candidate."""
    hourly = usd_per_hour * step.nodes
    hours = step.estimate.est_hours
    total = _billed_amount(hourly, offer.pricing_model, hours)
    gpu_count = step.total if offer.gpu_count >= 1 else offer.gpu_count
    return _rank_key(hourly, total, hours, step.estimate, gpu_count, objective)


class _Walk:
    """The node counts of one profile in order: how many were considered, the fitting steps, and
    the last reason one did not fit (what a rejection reports when none passes)."""

    def __init__(self, profile: _Profile) -> None:
        self.profile = profile
        self.considered = 0
        self.failure: Failure | None = None

    def fitting(self) -> Iterator[Fits]:
        fitted_any = False
        index = 0
        while (step := self.profile.step(index)) is not None:
            index += 1
            if isinstance(step, OverMax):
                if not fitted_any and self.failure is None:
                    self.failure = Failure(R.OVER_MAX_GPUS, step)
                return
            self.considered += 1
            if isinstance(step, NoFit):
                self.failure = Failure(step.reason, step)
                continue
            fitted_any = True
            if isinstance(step, NoThroughput):
                self.failure = Failure(R.NO_THROUGHPUT_FIGURE, step)
                return
            yield step


def _walk(
    profile: _Profile, offer: Offer, c: Constraints, objective: str, first_only: bool
) -> tuple[int, _Candidate | None, Failure | None]:
    """Walk a profile's steps for one offer at its price (limits on the price apply)."""
    walk = _Walk(profile)
    found: _Candidate | None = None
    for step in walk.fitting():
        candidate = _Candidate(offer, step, objective)
        limit_failure = _limit_failure(
            c, offer.pricing_model, candidate.est_hours,
            hourly=candidate.usd_per_hour, total=candidate.est_total_usd,
        )  # fmt: skip
        if limit_failure:
            walk.failure = Failure(limit_failure, step)
            continue
        if found is None or candidate.key < found.key:
            found = candidate
        if first_only:
            break
    return walk.considered, found, walk.failure
