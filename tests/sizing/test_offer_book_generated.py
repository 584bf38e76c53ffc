"""The offer book's precomputed splits against walking every offer, on a generated catalog.

The planner takes each group's stale entries from splits made once when the book is built
(``_Group.split_stale``) instead of testing every offer per request. Here a varied catalog from
the scale generator (devtools, many providers, regions, pricing models, marketplaces), read a
few days ahead so that spot and marketplace prices are past their shelf life and list prices
are not, is planned with ``plan`` and with the plain per-offer walk: the same plans and the same
rejection counts, for each stale-price rule, with and without a narrowed scope.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone

from sizing.planner import OfferBook, plan
from sizing.selectors import offer_list
from sizing.services import constraints_build, workload_build

from .test_planner_paths import WORKLOADS as PLANNER_WORKLOADS
from .test_planner_paths import plan_offers, walk_every_offer

pytestmark = pytest.mark.django_db

WORKLOADS = {name: PLANNER_WORKLOADS[name] for name in ("8b-lora", "70b-full")}
CONSTRAINTS = {
    "stale-default": {},
    "stale-left-out": {"include_stale": False},
    "stale-included": {"include_stale": True},
    "hourly-cap": {"max_usd_per_hour": 30},
    "spot-datacenter": {"pricing": ["spot", "on_demand"], "datacenter_only": True},
}


@pytest.fixture(scope="module")
def offers(django_db_setup, django_db_blocker):
    with django_db_blocker.unblock():
        call_command("scale_catalog", prices=1500, verbosity=0)
        try:
            return offer_list(now=timezone.now() + timedelta(days=4))
        finally:
            call_command("scale_catalog", clear=True, verbosity=0)


def test_the_generated_catalog_has_what_the_splits_are_for(offers):
    stale = [offer for offer in offers if offer.stale]
    assert any(offer.volatile for offer in stale)
    assert any(not offer.volatile for offer in offers if not offer.stale)
    assert len({offer.provider for offer in offers}) > 10


@pytest.mark.parametrize("narrowed", [False, True])
@pytest.mark.parametrize("constraints_name", sorted(CONSTRAINTS))
@pytest.mark.parametrize("workload_name", sorted(WORKLOADS))
def test_plan_over_the_book_equals_the_walk_over_every_offer(
    offers, workload_name, constraints_name, narrowed
):
    workload = workload_build(WORKLOADS[workload_name])
    data = dict(CONSTRAINTS[constraints_name])
    if narrowed:  # a scope that makes the planner test each offer again
        data["providers"] = sorted({offer.provider for offer in offers})[::2]
    constraints = constraints_build(data)
    expected, expected_reasons = walk_every_offer(workload, offers, constraints, "cheapest")

    result = plan(workload, OfferBook(offers), constraints, limit=100_000)

    found = {
        offer.price_id: (pytest.approx(p.sort_key("cheapest")), p.nodes)
        for offer, p in plan_offers(result, offers)
    }
    assert found == expected
    counts = {name: entry["count"] for name, entry in result.rejected.by_reason.items()}
    assert counts == dict(expected_reasons)
    if constraints.include_stale is not True:
        assert counts.get("stale_price", 0) > 0
