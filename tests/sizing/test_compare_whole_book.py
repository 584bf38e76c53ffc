"""/api/compare plans a GPU target over the whole offer book with that GPU the only one allowed,
instead of arranging a book of the target's offers per request (~60 ms for a GPU sold 30,000
times at 250,000 prices). The planner takes or skips whole groups by GPU, so the answer must be
the one a book of the target's offers alone gives: the plans and every rejection (counts and
examples, which say why a target does not fit).
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from sizing import selectors
from sizing.planner import OfferBook, plan
from sizing.services import constraints_build, workload_build

from .test_planner_pruned import TERM_WORKLOADS, answer

pytestmark = pytest.mark.django_db

# The GPUs the generated catalog sells most, one consumer card, and one sold nowhere in it.
TARGETS = ["h100-sxm", "a100-sxm4-80gb", "l40s", "rtx-4090", "mi300x", "t4", "b300"]
CONSTRAINTS = {
    "open": {},
    "hourly-cap": {"pricing": ["on_demand", "spot"], "max_usd_per_hour": 20},
    "datacenter-terms": {"pricing": ["monthly", "reserved_1y", "on_demand"],
                         "datacenter_only": True},
    "one-node-point": {"allow_multi_node": False, "fit_on": "point"},
    "stale-left-out": {"include_stale": False, "countries": ["US", "DE"]},
    "total-cap": {"max_total_usd": 3000, "max_gpus": 16},
}  # fmt: skip


def alone(workload, book, gpu, scope):
    """The target's offers in scope as a book of their own, planned (the former compare)."""
    subset = book.columns.take(book.covered(book.gpu_rows(gpu), scope))
    return plan(workload, OfferBook(subset), scope, limit=1)


@pytest.mark.parametrize("constraints_name", sorted(CONSTRAINTS))
@pytest.mark.parametrize("workload_name", sorted(TERM_WORKLOADS))
def test_a_gpu_planned_over_the_whole_book_answers_as_its_offers_alone(
    book, workload_name, constraints_name
):
    """What a compare row shows: the best plan, else its rejections (the advice, about the whole
    question, is not part of a row). Where a constraint narrows the offers within a group
    (countries here), the groups are met in the whole book's order (by each group's cheapest
    offer anywhere, as /api/recommend meets them) rather than by their cheapest offer in scope:
    the counts are the same and the examples are offers of the target in scope turned down for
    that reason, possibly others of them."""
    workload = workload_build(TERM_WORKLOADS[workload_name])
    scope = replace(constraints_build(CONSTRAINTS[constraints_name]), gpus=(), providers=(),
                    regions=())  # fmt: skip
    narrowed = bool(scope.countries)
    for gpu in TARGETS:
        whole = plan(workload, book, replace(scope, gpus=(gpu,)), limit=1)
        alone_result = alone(workload, book, gpu, scope)
        (plans, rejected), (plans_alone, rejected_alone) = (
            answer(whole)[:2],
            answer(alone_result)[:2],
        )
        assert plans == plans_alone, gpu
        if not narrowed:
            assert rejected == rejected_alone, gpu
        else:
            assert {r: entry[0] for r, entry in rejected.items()} == {
                r: entry[0] for r, entry in rejected_alone.items()
            }, gpu
            labels = {o.label for o in _offers(book, gpu, scope)}
            for reason, (_, examples) in rejected.items():
                assert len(examples) == len(rejected_alone[reason][1])
                for _, params in examples:
                    offer = dict(params).get("offer")
                    assert offer is None or offer in labels, (gpu, reason, offer)


def _offers(book, gpu, scope):
    subset = book.columns.take(book.covered(book.gpu_rows(gpu), scope))
    return [subset.offer(row) for row in range(len(subset))]


def test_compare_rows_are_the_ones_a_book_of_each_target_gives(book, monkeypatch):
    """The whole answer, through selectors.compare: rows that fit and rows that do not (a GPU
    not sold in scope, one too small), against compare with the former per-target books."""
    monkeypatch.setattr(selectors, "offer_book", lambda version: book)
    monkeypatch.setattr(selectors, "catalog_version_recent", lambda: "test")
    workload = workload_build(TERM_WORKLOADS["70b-full"])
    scope = constraints_build({"pricing": ["on_demand", "spot"]})
    targets = [{"gpu": gpu} for gpu in TARGETS]
    got = selectors.compare(workload, targets, scope)

    real_plan = selectors.plan

    def per_target_book(workload, offers, constraints, **kwargs):
        if isinstance(offers, OfferBook) and constraints.gpus:
            (gpu,) = constraints.gpus
            return alone(workload, offers, gpu, replace(constraints, gpus=()))
        return real_plan(workload, offers, constraints, **kwargs)

    monkeypatch.setattr(selectors, "plan", per_target_book)
    assert got == selectors.compare(workload, targets, scope)
    assert {row["fits"] for row in got["rows"]} == {True, False}
