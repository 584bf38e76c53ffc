"""Each plan is sized and ranged for its own layout (one GPU or several): the memory range and
the fit test of a plan on N GPUs use the rows measured on that many (sizing/uncertainty.py)."""

from __future__ import annotations

import pytest

from catalog.models import GPU
from sizing.planner import FIT_HEADROOM
from sizing.planner.steps import _EstimateCache
from sizing.services import workload_build
from sizing.uncertainty import fit_factor, spread

pytestmark = pytest.mark.django_db

SEVENTY_B = {
    "model": "llama-3-70b",
    "method": "full",
    "gradient_checkpointing": "full",
    "tokens": 1e9,
}


def test_the_planners_fit_factor_follows_the_gpu_count():
    workload = workload_build({"model": "llama-3-8b", "method": "lora", "tokens": 1e8})
    cache = _EstimateCache(workload, FIT_HEADROOM, "high")
    single, multi = cache.fit_factor(1), cache.fit_factor(8)
    assert single == fit_factor(workload, "high", gpu_count=1)
    assert multi == fit_factor(workload, "high", gpu_count=8)
    assert multi > single  # the multi-GPU rows spread wider
    assert _EstimateCache(workload, FIT_HEADROOM, "point").fit_factor(8) == 1.0


def test_every_multi_gpu_plan_fits_and_is_ranged_on_the_multi_gpu_rows(api_client):
    body = {"workload": SEVENTY_B, "constraints": {"include_stale": True}, "limit": 20}
    response = api_client.post("/api/recommend", body, format="json")
    assert response.status_code == 200, response.content
    plans = response.json()["recommendations"]
    workload = workload_build(SEVENTY_B)
    memory_gib = {g.slug: float(g.memory_gib) for g in GPU.objects.all()}
    assert plans and all(p["gpu_count"] > 1 for p in plans)
    for p in plans:
        high = spread("memory", workload, gpu_count=p["gpu_count"]).high
        assert p["memory_per_gpu_gib_range"][1] == pytest.approx(
            p["memory_per_gpu_gib"] * high, abs=0.02
        )
        assert p["memory_per_gpu_gib"] * high <= memory_gib[p["gpu"]] * (1 - FIT_HEADROOM)


def test_an_estimate_on_several_gpus_gets_the_multi_gpu_range_and_fit(api_client):
    workload = {"model": "llama-3-8b", "method": "lora"}
    body = {"workload": workload, "gpu": "a100-sxm4-40gb", "gpu_count": 4}
    answer = api_client.post("/api/estimate", body, format="json").json()
    assert answer["range_basis"]["memory"]["basis"].endswith("multi")
    multi = spread("memory", workload_build(workload), gpu_count=4).high
    _low, high = answer["memory_per_gpu_gib_range"]
    assert high == pytest.approx(answer["memory_per_gpu_gib"] * multi, abs=0.02)
