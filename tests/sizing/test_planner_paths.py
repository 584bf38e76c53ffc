"""The planner's shortcuts against walking every offer at its own price.

`plan` ranks groups of offers that share hardware and a pricing model, bisects the price order
under price limits, and stops weighing node counts that cannot lead. These tests rebuild every
offer's best plan one by one with the plain walk (`_walk`: each node count, each limit, at the
offer's price) and check that `plan` returns exactly those plans and rejects the rest for the
same reasons, over the curated catalog.
"""

from __future__ import annotations

from collections import Counter

import pytest

from sizing.planner import (
    FIT_HEADROOM,
    OfferBook,
    _constraint_rejection,
    _hardware_key,
    _Planner,
    _walk,
    plan,
)
from sizing.selectors import offer_list
from sizing.services import constraints_build, workload_build

pytestmark = pytest.mark.django_db

WORKLOADS = {
    "8b-lora": {"model": "llama-3-8b", "method": "lora", "tokens": 2e8},
    "70b-full": {
        "model": "llama-3-70b",
        "method": "full",
        "gradient_checkpointing": "full",
        "tokens": 1e9,
    },
    "7b-qlora-short": {"model": "llama-2-7b", "method": "qlora", "tokens": 1e7},
    "13b-pretrain-long": {"model": "llama-2-13b", "task": "pretrain", "tokens": 5e10},
    "70b-serving": {"model": "llama-3-70b", "task": "inference", "tokens": 1e8},
}
CONSTRAINTS = {
    "open": {},
    "hourly-cap": {"max_usd_per_hour": 12},
    "budget": {"max_total_usd": 3000, "pricing": ["on_demand", "spot", "monthly"]},
    "both-caps": {"max_usd_per_hour": 40, "max_total_usd": 50000, "max_hours": 300},
    "one-node-datacenter": {
        "allow_multi_node": False,
        "datacenter_only": True,
        "max_usd_per_hour": 30,
    },
    # Fits on the estimate itself rather than the high end of its range (the default).
    "point-fit-hourly-cap": {"fit_on": "point", "max_usd_per_hour": 12},
    "fresh-terms": {
        "include_stale": False,
        "pricing": ["monthly", "reserved_1y", "spot"],
        "max_total_usd": 1e6,
    },
}


def walk_every_offer(workload, offers, constraints, objective):
    """Each offer's best (key, nodes) and the rejection counts, one offer at a time."""
    planner = _Planner(workload, constraints, objective, FIT_HEADROOM)
    best, reasons = {}, Counter()
    for offer in offers:
        if not constraints.covers(offer):
            continue
        reason = _constraint_rejection(offer, constraints)
        if reason:
            reasons[reason] += 1
            continue
        profile = planner.profile(_hardware_key(offer), offer)
        _, found, failure = _walk(profile, offer, constraints, objective, planner.first_only)
        if found is not None:
            best[offer.price_id] = (found.key, found.nodes)
            continue
        if failure is None and not constraints.allow_multi_node:
            failure = ("needs_multi_node", None)
        if failure:
            name = failure[0]
            if name == "does_not_fit_memory" and not constraints.allow_multi_node:
                name = "needs_multi_node"
            reasons[name] += 1
    return best, reasons


def plan_offers(result, offers):
    """Each plan with every offer it stands for: its own region and the other regions where the
    same offer has the same price (``other_regions``)."""
    by_place = {(o.provider, o.instance_type, o.region, o.pricing_model): o for o in offers}
    for p in result.plans:
        for region in [p.offer.region, *p.other_regions]:
            yield (
                by_place[(p.offer.provider, p.offer.instance_type, region, p.offer.pricing_model)],
                p,
            )


@pytest.fixture(scope="module")
def offers(django_db_setup, django_db_blocker):
    with django_db_blocker.unblock():
        return offer_list()


@pytest.mark.parametrize("objective", ["cheapest", "fastest", "cheapest_hourly"])
@pytest.mark.parametrize("constraints_name", sorted(CONSTRAINTS))
@pytest.mark.parametrize("workload_name", sorted(WORKLOADS))
def test_plan_returns_what_walking_every_offer_finds(
    offers, workload_name, constraints_name, objective
):
    workload = workload_build(WORKLOADS[workload_name])
    constraints = constraints_build(CONSTRAINTS[constraints_name])
    expected, expected_reasons = walk_every_offer(workload, offers, constraints, objective)

    result = plan(workload, OfferBook(offers), constraints, objective=objective, limit=100_000)

    listed = 0
    for offer, p in plan_offers(result, offers):
        key, nodes = expected[offer.price_id]
        assert nodes == p.nodes, (offer.label, nodes, p.nodes)
        assert key == pytest.approx(p.sort_key(objective)), offer.label
        listed += 1
    assert listed == len(expected)
    keys = [p.sort_key(objective) for p in result.plans]
    assert keys == sorted(keys)
    counts = {name: entry["count"] for name, entry in result.rejected.by_reason.items()}
    assert counts == dict(expected_reasons)


def test_a_zero_limit_lists_nothing_but_still_counts(offers):
    workload = workload_build(WORKLOADS["8b-lora"])
    result = plan(workload, OfferBook(offers), constraints_build({}), limit=0)
    assert result.plans == [] and result.considered > 0


def test_the_gpu_hours_floor_is_for_training_only(offers):
    from sizing.estimator import gpu_hours_floor

    gpu = next(o.gpu for o in offers if o.gpu.slug == "h100-sxm")
    assert gpu_hours_floor(workload_build(WORKLOADS["70b-serving"]), gpu, 2) is None
    assert gpu_hours_floor(workload_build(WORKLOADS["70b-full"]), gpu, 2) > 0
