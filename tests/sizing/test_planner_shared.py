"""Memory verdicts shared by GPU size, and node-count outlines shared by machines alike, against
each GPU and machine on its own.

A machine's node counts as memory tells them (which fit, which do not and why, where the walk
ends) depend on its GPU only through the GPU's memory, and on the machine only through its GPUs
per node and what ends its walk (``_Ends``), so a planning run works them out once for all such
machines (``_EstimateCache.share``). With sharing off every GPU object and every machine works
out its own, as before; the outlines, and the plans, rejections and advice built on them, must
be exactly the same.
"""

from __future__ import annotations

import pytest

from sizing.planner import FIT_HEADROOM, _Planner, plan
from sizing.planner.steps import _EstimateCache
from sizing.services import constraints_build, workload_build

from .test_planner_pruned import ALL_TERMS, TERM_WORKLOADS, answer

pytestmark = pytest.mark.django_db

CONSTRAINTS = {
    "open": {},
    "hourly-cap": {"pricing": ["on_demand", "spot"], "max_usd_per_hour": 20},
    "total-cap": {"max_total_usd": 5000, "max_hours": 400},
    "datacenter-terms": {"pricing": [*ALL_TERMS, "on_demand", "spot"], "datacenter_only": True},
    "one-node": {"allow_multi_node": False, "max_usd_per_hour": 30},
    "few-gpus-point-fit": {"max_gpus": 16, "fit_on": "point"},
}


@pytest.mark.parametrize("objective", ["cheapest", "cheapest_hourly", "fastest"])
@pytest.mark.parametrize("constraints_name", sorted(CONSTRAINTS))
@pytest.mark.parametrize("workload_name", sorted(TERM_WORKLOADS))
def test_shared_outlines_answer_as_each_machine_on_its_own(
    book, monkeypatch, workload_name, constraints_name, objective
):
    workload = workload_build(TERM_WORKLOADS[workload_name])
    constraints = constraints_build(CONSTRAINTS[constraints_name])

    shared = plan(workload, book, constraints, objective=objective, limit=10)
    monkeypatch.setattr(_EstimateCache, "share", False)
    alone = plan(workload, book, constraints, objective=objective, limit=10)

    assert answer(shared) == answer(alone)
    assert shared.considered == alone.considered


@pytest.mark.parametrize("constraints_name", sorted(CONSTRAINTS))
@pytest.mark.parametrize("workload_name", sorted(TERM_WORKLOADS))
def test_every_machines_outline_is_the_one_it_works_out_alone(
    book, workload_name, constraints_name
):
    """Every node count of every machine in the catalog, not only those a ranking reaches."""
    workload = workload_build(TERM_WORKLOADS[workload_name])
    constraints = constraints_build(CONSTRAINTS[constraints_name])
    shared = _Planner(workload, constraints, "cheapest", FIT_HEADROOM)
    alone = _Planner(workload, constraints, "cheapest", FIT_HEADROOM)
    alone.cache.share = False

    for group in book.groups:
        mine = shared.profile(group.hardware, group.first).all_shapes()
        assert mine == alone.profile(group.hardware, group.first).all_shapes(), group.first.label
    outlines = {id(profile.outline) for profile in shared.profiles.values()}
    assert len(outlines) < len(shared.profiles) / 2  # something is shared
