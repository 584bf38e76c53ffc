"""The four stacked caches keep their invariants (docs/development.md, "Caches"): estimator
memos, the planner's per-run estimates, the per-worker offer book, the answer cache."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest
from django.utils import timezone

from sizing import selectors
from sizing.estimator import Topology, estimate, memory_per_gpu_gib
from sizing.planner import FIT_HEADROOM, OBJECTIVES, OfferBook, _Planner
from sizing.planner.steps import Fits
from sizing.presets import load_presets
from sizing.services import constraints_build, workload_build

pytestmark = pytest.mark.django_db


# 1. Estimator memos: keyed by value, never stale; a workload's arch is part of every key.
def test_memoised_memory_equals_the_worked_out_figure():
    workload = workload_build({"model": "llama-3-8b", "method": "lora", "tokens": 1e8})
    for count in (1, 2, 8):
        kept = estimate(workload, gpu_count=count, explain=False).memory_per_gpu_gib
        worked = estimate(workload, gpu_count=count, explain=True).memory_per_gpu_gib
        assert kept == pytest.approx(worked)


def test_workloads_equal_but_for_their_model_do_not_share_memos():
    small = workload_build({"model": "llama-3-8b", "method": "lora"})
    big_arch = load_presets()["llama-3-70b"]
    big = replace(small, arch=big_arch)
    assert small == big  # arch does not take part in equality (compare=False) ...
    # ... so every memo keyed on a workload also takes its arch: the figures differ.
    assert memory_per_gpu_gib(big, 1) > 2 * memory_per_gpu_gib(small, 1)


def test_questions_that_differ_only_in_what_memory_leaves_out_share_one_memo_key():
    """``for_memory`` is one object per value (and architecture), so a new question finds the
    memos' keys by identity; a workload with another architecture gets its own, with its arch."""
    first = workload_build({"model": "llama-3-8b", "method": "lora", "tokens": 1e8})
    again = workload_build({"model": "llama-3-8b", "method": "lora", "tokens": 3e8})
    assert first is not again and first.for_memory is again.for_memory
    big_arch = load_presets()["llama-3-70b"]
    big = replace(
        workload_build({"model": "llama-3-8b", "method": "lora", "tokens": 2e8}), arch=big_arch
    )
    assert big.for_memory == first.for_memory and big.for_memory is not first.for_memory
    assert big.for_memory.arch == big_arch and first.for_memory.arch == first.arch


# 2. The planner's per-run estimates: one workload, keyed by (GPU object, count, topology), and
# each kept estimate is what the estimator says for that shape.
def test_the_planners_kept_estimates_are_the_estimators():
    workload = workload_build({"model": "llama-3-70b", "method": "full", "tokens": 1e9})
    book = OfferBook(selectors.offer_list())
    checked = 0
    planners = [_Planner(workload, constraints_build(None), o, FIT_HEADROOM) for o in OBJECTIVES]
    for planner in planners:
        planner.run(book, limit=5)
    for profile in (p for planner in planners for p in planner.profiles.values()):
        for step in profile.steps:
            if not isinstance(step, Fits):
                continue
            sharded = replace(workload, sharding=step.sharding) if step.sharding else workload
            fresh = estimate(
                sharded, gpu=profile.device, gpu_count=step.total, topology=step.topology,
                explain=False, count_min_gpus=False,
            )  # fmt: skip
            assert step.estimate.est_hours == pytest.approx(fresh.est_hours)
            assert step.estimate.memory_per_gpu_gib == pytest.approx(fresh.memory_per_gpu_gib)
            checked += 1
    assert checked >= 5


# 3. The per-worker offer book: one per catalog version, rebuilt when the version changes or
# when its first fresh price turns stale.
def test_the_offer_book_is_kept_per_catalog_version_and_freshness():
    now = timezone.now()
    version = selectors.catalog_version()
    book = selectors.offer_book(version, now=now)
    assert selectors.offer_book(version, now=now + timedelta(seconds=5)) is book
    assert selectors.offer_book(version + "-changed", now=now) is not book
    rebuilt = selectors.offer_book(version, now=now)
    assert rebuilt.fresh_until is not None
    later = max(now, rebuilt.fresh_until) + timedelta(minutes=5)
    assert selectors.offer_book(version, now=later) is not rebuilt


def test_a_catalog_write_changes_the_version():
    from catalog.models import Price

    before = selectors.catalog_version()
    price = Price.objects.first()
    price.save()  # auto_now: updated_at moves
    assert selectors.catalog_version() != before


# 4. The answer cache: keyed by the whole question (language included) and the catalog version;
# tests/bench/test_recommend_cache.py checks that refreshes, curator edits and prices turning
# stale end an answer.
def test_cached_answers_are_kept_per_language(api_client):
    body = {"workload": {"model": "llama-3-8b", "method": "lora", "tokens": 2.2e7}, "limit": 1}
    english = api_client.post("/api/recommend?lang=en", body, format="json").json()
    chinese = api_client.post("/api/recommend?lang=zh-hans", body, format="json").json()
    again = api_client.post("/api/recommend?lang=en", body, format="json").json()
    assert english["recommendations"][0]["reasons"] == again["recommendations"][0]["reasons"]
    assert chinese["recommendations"][0]["reasons"] != english["recommendations"][0]["reasons"]
    codes = [m["code"] for m in english["recommendations"][0]["reason_messages"]]
    assert codes == [m["code"] for m in chinese["recommendations"][0]["reason_messages"]]


def test_topology_is_part_of_the_planners_estimate_key():
    """Machines that differ only in their links get their own estimate (not a shared one)."""
    workload = workload_build({"model": "llama-3-70b", "method": "full", "tokens": 1e9})
    gpu = next(o.gpu for o in selectors.offer_list() if o.gpu.slug == "h100-sxm")
    from sizing.planner.steps import _EstimateCache

    cache = _EstimateCache(workload, FIT_HEADROOM)
    fast = Topology(gpu_count=8, gpus_per_node=8, intra_node="nvswitch")
    slow = Topology(gpu_count=8, gpus_per_node=8, intra_node="pcie")
    assert cache.get(gpu, 8, fast)[1].est_hours < cache.get(gpu, 8, slow)[1].est_hours
