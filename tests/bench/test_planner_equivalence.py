"""The shared-work planner gives exactly what the straightforward one gave (reference_planner.py,
the planner before it was made fast): same plans, order, figures, rejections, examples, advice."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from sizing import planner
from sizing.planner import Constraints
from sizing.presets import load_presets
from sizing.selectors import offer_list, offer_queryset, offers_from_prices, plan_dict
from sizing.workload import parse_workload

from . import reference_planner

pytestmark = pytest.mark.django_db

WORKLOADS = [
    {"model": "llama-3-8b", "method": "lora", "gradient_checkpointing": "full", "tokens": 2e8},
    {"model": "llama-3-70b", "method": "full", "gradient_checkpointing": "full", "tokens": 1e9},
    {"model": "llama-2-7b", "method": "qlora"},
    {"model": "llama-3-8b", "task": "inference", "context_len": 8192, "concurrency": 8},
    {"model": "qwen2.5-72b", "task": "inference"},
    {"model": "mixtral-8x7b", "method": "full", "tokens": 5e9, "precision": "fp8"},
    {"model": "bert-base", "method": "full", "tokens": 1e7},
    {"params_b": 400, "method": "full", "tokens": 1e10},
]
CONSTRAINTS = [
    {},
    {"pricing": ("on_demand", "spot"), "pricing_explicit": True},
    {"max_usd_per_hour": 12.0},
    {"max_total_usd": 5000.0, "max_hours": 200.0},
    {"allow_multi_node": False, "datacenter_only": True},
    {"max_gpus": 8, "min_gpu_memory_gb": 40.0},
    {"include_stale": True, "pricing": ("monthly", "reserved_1y"), "pricing_explicit": True},
    {"max_gpus": 512},
]


def _vary(offers, rng: random.Random):
    """The real offers plus copies in new regions at new prices: ties, zero and repeated prices."""
    out = list(offers)
    next_id = max(o.price_id for o in offers) + 1
    for offer in rng.sample(offers, k=min(200, len(offers))):
        for region in ("bench-a", "bench-b"):
            price = rng.choice([offer.usd_per_hour, offer.usd_per_hour * rng.uniform(0.5, 2), 0.0])
            out.append(replace(offer, price_id=next_id, region=region, usd_per_hour=price))
            next_id += 1
    rng.shuffle(out)
    return out


def _answer(module, workload, offers, constraints, objective, limit):
    result = module.plan(workload, offers, constraints, objective=objective, limit=limit)
    return {
        "plans": [plan_dict(p) for p in result.plans],
        "rejected": result.rejected.by_reason,
        "advice": result.advice,
        "considered": result.considered,
    }


@pytest.mark.parametrize("seed", range(6))
def test_fast_planner_matches_the_reference(seed):
    rng = random.Random(seed)
    presets = load_presets()
    offers = _vary(offer_list(Constraints(include_stale=True)), rng)
    for data in rng.sample(WORKLOADS, k=4):
        workload = parse_workload(dict(data), presets)
        for extra in rng.sample(CONSTRAINTS, k=4):
            constraints = Constraints(**extra)
            objective = rng.choice(planner.OBJECTIVES)
            limit = rng.choice([1, 5, 10, 50])
            fast = _answer(planner, workload, offers, constraints, objective, limit)
            slow = _answer(reference_planner, workload, offers, constraints, objective, limit)
            assert fast == slow, (data, extra, objective, limit)


@pytest.mark.parametrize(
    "extra",
    [{}, {"providers": ("aws", "lambda")}, {"mainland_china": True}, {"gpus": ("h100-sxm", "t4")}],
)
def test_offer_rows_match_the_model_instances(extra):
    constraints = Constraints(**extra)
    fast = sorted(offer_list(constraints), key=lambda o: o.price_id)
    slow = sorted(offers_from_prices(offer_queryset(constraints)), key=lambda o: o.price_id)
    assert fast and fast == slow
