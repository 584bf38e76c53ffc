"""The pruned planning run against the exhaustive one, on a generated catalog.

With a small ``limit`` the planner walks the route of a group that is sure to pass (no price
limit, billed by the hour, known run length) only when the ranking reaches the lower bound of
its keys (``_Planner.passes``: the GPU-hours floor at its first fitting node count times its
cheapest price), and under price limits it estimates the node count a rejection names only when
the reason or an example needs it. Asked for every plan (a limit no catalog reaches) nothing can
be pruned. Against the same run with nothing deferred (``_Planner.defer`` off: every route
walked, every step estimated, as before), the plans, the rejections (counts and examples) and
the advice must be exactly the same.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from sizing.planner import FIT_HEADROOM, _Planner, plan
from sizing.planner.rules import _rank_key
from sizing.planner.steps import Shape
from sizing.services import constraints_build, workload_build

from .test_planner_paths import WORKLOADS

pytestmark = pytest.mark.django_db

CONSTRAINTS = {
    "open": {},
    "hourly": {"pricing": ["on_demand", "spot"]},
    "datacenter": {"datacenter_only": True},
    "hourly-cap": {"pricing": ["on_demand", "spot"], "max_usd_per_hour": 20},
    "total-cap": {"max_total_usd": 5000, "max_hours": 400},
    "one-region-set": {"countries": ["US", "DE", "CN"], "pricing": ["on_demand", "reserved_1y"]},
}


def answer(result):
    """What an answer shows of a planning run: the plans, the rejections, the advice."""
    plans = [
        (p.offer.price_id, p.nodes, p.gpu_count, p.usd_per_hour, p.est_hours, p.est_total_usd,
         tuple(p.other_regions), tuple(m.code for m in p.reasons))
        for p in result.plans
    ]  # fmt: skip
    rejected = {
        reason: (entry["count"], [(m.code, sorted(m.params.items())) for m in entry["examples"]])
        for reason, entry in result.rejected.by_reason.items()
    }
    advice = [(m.code, sorted(m.params.items())) for m in result.advice]
    return plans, rejected, advice


@pytest.mark.parametrize("limit", [1, 10])
@pytest.mark.parametrize("objective", ["cheapest", "cheapest_hourly", "fastest"])
@pytest.mark.parametrize("constraints_name", sorted(CONSTRAINTS))
@pytest.mark.parametrize("workload_name", sorted(WORKLOADS))
def test_the_pruned_run_answers_as_the_exhaustive_one(
    book, monkeypatch, workload_name, constraints_name, objective, limit
):
    workload = workload_build(WORKLOADS[workload_name])
    constraints = constraints_build(CONSTRAINTS[constraints_name])

    pruned = plan(workload, book, constraints, objective=objective, limit=limit)
    monkeypatch.setattr(_Planner, "defer", False)
    every = plan(workload, book, constraints, objective=objective, limit=limit)

    assert answer(pruned) == answer(every)
    assert pruned.considered <= every.considered


def test_the_catalog_leaves_something_to_prune(book, monkeypatch):
    workload = workload_build(WORKLOADS["8b-lora"])
    constraints = constraints_build(CONSTRAINTS["hourly"])
    pruned = plan(workload, book, constraints, limit=10)
    monkeypatch.setattr(_Planner, "defer", False)
    every = plan(workload, book, constraints, limit=10)
    assert len(pruned.plans) == 10
    assert pruned.considered < every.considered


@pytest.mark.parametrize("objective", ["cheapest", "cheapest_hourly", "fastest"])
@pytest.mark.parametrize("constraints_name", ["open", "hourly-cap", "total-cap"])
@pytest.mark.parametrize("workload_name", sorted(WORKLOADS))
def test_one_size_per_total_answers_as_the_exhaustive_run(
    book, monkeypatch, workload_name, constraints_name, objective
):
    """Listing one size of an offer per total (the API's default) leaves the two runs equal:
    both rank the same stream, and the sizes are left out as it is read."""
    workload = workload_build(WORKLOADS[workload_name])
    constraints = constraints_build(CONSTRAINTS[constraints_name])

    pruned = plan(workload, book, constraints, objective=objective, limit=10, all_sizes=False)
    monkeypatch.setattr(_Planner, "defer", False)
    every = plan(workload, book, constraints, objective=objective, limit=10, all_sizes=False)

    assert answer(pruned) == answer(every)


# Commitment terms (reserved, monthly, yearly, capacity blocks), where a run too short for a term
# is decided on memory and hours alone (fastpaths._quick_route): short and long runs, the term
# rules against max_hours, and terms under price caps.
TERM_WORKLOADS = {
    **WORKLOADS,
    # Long enough for a capacity block and a month at some node counts and not at others.
    "70b-full-long": {**WORKLOADS["70b-full"], "tokens": 2e10},
}
ALL_TERMS = ["monthly", "yearly", "reserved_1y", "reserved_3y", "capacity_block"]
TERM_CONSTRAINTS = {
    "terms": {"pricing": ALL_TERMS},
    "terms-and-hourly": {"pricing": [*ALL_TERMS, "on_demand", "spot"], "datacenter_only": True},
    "terms-max-hours": {"pricing": ALL_TERMS, "max_hours": 30},
    "terms-hourly-cap": {"pricing": [*ALL_TERMS, "on_demand"], "max_usd_per_hour": 40},
    "terms-total-cap": {"pricing": ALL_TERMS, "max_total_usd": 200_000},
}


@pytest.mark.parametrize("limit", [1, 10])
@pytest.mark.parametrize("objective", ["cheapest", "cheapest_hourly", "fastest"])
@pytest.mark.parametrize("constraints_name", sorted(TERM_CONSTRAINTS))
@pytest.mark.parametrize("workload_name", sorted(TERM_WORKLOADS))
def test_term_rules_answer_as_the_exhaustive_run(
    book, monkeypatch, workload_name, constraints_name, objective, limit
):
    workload = workload_build(TERM_WORKLOADS[workload_name])
    constraints = constraints_build(TERM_CONSTRAINTS[constraints_name])

    pruned = plan(workload, book, constraints, objective=objective, limit=limit)
    monkeypatch.setattr(_Planner, "defer", False)
    every = plan(workload, book, constraints, objective=objective, limit=limit)

    assert answer(pruned) == answer(every)
    # A term decided without its estimates counts the node counts a walk would have weighed.
    assert pruned.considered <= every.considered
    if "on_demand" not in TERM_CONSTRAINTS[constraints_name]["pricing"]:
        assert pruned.considered == every.considered


def estimated(workload, constraints, **kwargs):
    """A planning run and the number of estimates it made."""
    planner = _Planner(workload, constraints, kwargs.pop("objective", "cheapest"), FIT_HEADROOM)
    return planner.run(kwargs.pop("book"), 10), len(planner.cache._cache)


def test_a_run_too_short_for_any_term_is_rejected_without_estimates(book, monkeypatch):
    workload = workload_build({**WORKLOADS["70b-full"], "tokens": 3e7})  # a day or two at most
    constraints = constraints_build(
        {"pricing": ["monthly", "yearly", "reserved_1y", "reserved_3y"]}
    )

    pruned, pruned_estimates = estimated(workload, constraints, book=book)
    monkeypatch.setattr(_Planner, "defer", False)
    every, every_estimates = estimated(workload, constraints, book=book)

    assert not pruned.plans and answer(pruned) == answer(every)
    assert pruned.rejected.count("run_too_short_for_term") > 100
    # Only the node counts a rejection example names are estimated (three at most).
    assert pruned_estimates <= 3 < every_estimates
    examples = pruned.rejected.by_reason["run_too_short_for_term"]["examples"]
    assert examples and all(dict(m.params)["hours"] > 0 for m in examples)


def test_a_long_run_still_gets_term_plans(book, monkeypatch):
    workload = workload_build(TERM_WORKLOADS["70b-full-long"])
    constraints = constraints_build({"pricing": ALL_TERMS})
    pruned = plan(workload, book, constraints, limit=10)
    monkeypatch.setattr(_Planner, "defer", False)
    every = plan(workload, book, constraints, limit=10)
    assert pruned.plans and answer(pruned) == answer(every)
    assert {p.offer.pricing_model for p in pruned.plans} & {"capacity_block", "monthly"}
    assert pruned.rejected.count("run_too_short_for_term") > 0


def test_hours_without_the_estimate_are_the_estimates_hours(book):
    """_EstimateCache.hours (the time model alone) gives est_hours of the whole estimate at every
    node count that fits, for each workload over every machine of the catalog."""
    checked = 0
    for spec in TERM_WORKLOADS.values():
        workload = workload_build(spec)
        constraints = constraints_build({})
        planner = _Planner(workload, constraints, "cheapest", FIT_HEADROOM)
        for group in book.groups:
            profile = planner.profile(group.hardware, group.first)
            for index, shape in enumerate(profile.all_shapes()):
                if not isinstance(shape, Shape):
                    continue
                hours = profile.hours(index)  # before the step is made
                step = profile.step(index)
                if step is None:  # past a node count without a throughput figure
                    break
                assert hours == step.estimate.est_hours, (group.first.label, shape.nodes)
                checked += 1
    assert checked > 100


@pytest.mark.parametrize(
    ("objective", "first", "second"),
    [
        # Equal totals: the faster plan first (then the lower hourly price).
        ("cheapest", (4.0, 20.0, 5.0), (2.0, 20.0, 10.0)),
        ("cheapest", (2.0, 19.0, 9.5), (4.0, 20.0, 5.0)),
        # Equal hourly prices: the lower total, then the faster.
        ("cheapest_hourly", (4.0, 18.0, 4.5), (4.0, 20.0, 5.0)),
        ("cheapest_hourly", (2.0, 30.0, 15.0), (4.0, 20.0, 5.0)),
    ],
)
def test_ties_go_to_the_plan_better_on_the_next_figure(objective, first, second):
    est = SimpleNamespace(tokens_per_second=None)  # read under fastest only
    key_first = _rank_key(*first, est, 1, objective)
    key_second = _rank_key(*second, est, 1, objective)
    assert key_first < key_second
