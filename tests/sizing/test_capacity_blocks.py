"""Capacity blocks (pricing model ``capacity_block``): weighed only when a request names them,
billed in whole days, a 31-day shelf life (ranked and flagged when stale, never left out), and
listed and filtered like any other price."""

from __future__ import annotations

import math
from datetime import timedelta
from decimal import Decimal

import pytest
from django.conf import settings as project_settings
from django.utils import timezone

from catalog import choices
from catalog.pricing import DEFAULT_PLANNER_PRICING_MODELS, ON_REQUEST_PRICING_MODELS
from catalog.querysets import shelf_life_days
from sizing.inputs import DEFAULT_PRICING_MODELS, PRICING_MODELS
from sizing.planner.rules import TERM_HOURS
from tests.factories import GPUFactory, InstanceTypeFactory, PriceFactory, ProviderFactory

pytestmark = pytest.mark.django_db

# About 100 GPU-hours of LoRA on Llama 3 8B: long enough to fill more than half a day.
LONG_RUN = {"model": "llama-3-8b", "task": "finetune", "method": "lora", "tokens": 2_000_000_000}


@pytest.fixture
def blocks():
    """A GPU no fixture sells: one machine on demand and as a capacity block, one sold only as
    a capacity block (as p5e.48xlarge is on AWS)."""
    now = timezone.now()
    gpu = GPUFactory(slug="cb-test-gpu", memory_gib=80)
    cloud = ProviderFactory(slug="cb-cloud", kind=choices.ProviderKind.HYPERSCALER)
    both = InstanceTypeFactory(
        provider=cloud, name="both.8x", gpu=gpu, gpu_count=Decimal("8"), vcpus=192, ram_gib=2048
    )
    only = InstanceTypeFactory(
        provider=cloud, name="blocks.8x", gpu=gpu, gpu_count=Decimal("8"), vcpus=192, ram_gib=2048
    )

    def price(instance, model, usd, days_old=1):
        return PriceFactory(
            instance_type=instance,
            pricing_model=model,
            amount=Decimal(usd),
            usd_per_hour=Decimal(usd),
            usd_per_gpu_hour=Decimal(usd) / 8,
            observed_at=now - timedelta(days=days_old),
        )

    return {
        "on_demand": price(both, choices.PricingModel.ON_DEMAND, "80"),
        "block": price(both, choices.PricingModel.CAPACITY_BLOCK, "40"),
        "only": price(only, choices.PricingModel.CAPACITY_BLOCK, "48"),
    }


def _recommend(api_client, pricing=None, workload=LONG_RUN):
    constraints: dict = {"gpus": ["cb-test-gpu"]}
    if pricing is not None:
        constraints["pricing"] = pricing
    body = {"workload": workload, "constraints": constraints, "objective": "cheapest", "limit": 20}
    response = api_client.post("/api/recommend", body, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def _offers(body):
    return sorted((i["instance_type"], i["pricing_model"]) for i in body["recommendations"])


def test_the_default_pricing_set_is_every_model_but_capacity_blocks():
    assert ON_REQUEST_PRICING_MODELS == (choices.PricingModel.CAPACITY_BLOCK,)
    assert "capacity_block" in PRICING_MODELS  # accepted when named
    assert "capacity_block" not in DEFAULT_PRICING_MODELS
    assert set(DEFAULT_PRICING_MODELS) | {"capacity_block"} == set(PRICING_MODELS)
    assert tuple(m.value for m in DEFAULT_PLANNER_PRICING_MODELS) == DEFAULT_PRICING_MODELS


def test_capacity_blocks_are_left_out_unless_named(api_client, blocks):
    body = _recommend(api_client)
    assert _offers(body) == [("both.8x", "on_demand")]
    # Left out of scope, not rejected: the caller did not ask about them.
    assert all("capacity" not in reason for reason in body["rejected"])


def test_named_capacity_blocks_are_weighed_and_billed_in_whole_days(api_client, blocks):
    body = _recommend(api_client, pricing=["on_demand", "capacity_block"])
    assert _offers(body) == [
        ("blocks.8x", "capacity_block"),
        ("both.8x", "capacity_block"),
        ("both.8x", "on_demand"),
    ]
    for plan in body["recommendations"]:
        hours, hourly = plan["est_hours"], plan["usd_per_hour"]  # usd_per_hour: all nodes
        if plan["pricing_model"] == "capacity_block":
            days = math.ceil(hours / 24 - 1e-9)
            assert plan["est_total_usd"] == pytest.approx(hourly * 24 * days, rel=1e-6)
            assert plan["est_total_usd"] > hourly * hours  # the last day is paid in full
        else:
            assert plan["est_total_usd"] == pytest.approx(hourly * hours, rel=1e-3)  # hours rounded
    assert body["recommendations"][0]["pricing_model"] == "capacity_block"  # 40/h beats 80/h


def test_capacity_block_alone_is_accepted_as_a_query_parameter(api_client, blocks):
    query = "model=llama-3-8b&method=lora&tokens=2000000000&gpus=cb-test-gpu&pricing=capacity_block"
    response = api_client.get(f"/api/recommend?{query}")
    assert response.status_code == 200, response.content
    assert {i["pricing_model"] for i in response.json()["recommendations"]} == {"capacity_block"}


def test_a_run_shorter_than_half_a_day_is_not_sold_a_block(api_client, blocks):
    short = dict(LONG_RUN, tokens=5_000_000)
    body = _recommend(api_client, pricing=["on_demand", "capacity_block"], workload=short)
    assert _offers(body) == [("both.8x", "on_demand")]
    assert body["rejected"]["run_too_short_for_term"]["count"] == 2
    assert TERM_HOURS["capacity_block"] == 24.0


def test_capacity_blocks_keep_a_month_and_are_flagged_not_dropped_when_stale(api_client, blocks):
    assert project_settings.PRICE_SHELF_LIFE_DAYS["capacity_block"] == 31
    assert shelf_life_days("capacity_block") == 31
    old = blocks["only"]
    old.observed_at = timezone.now() - timedelta(days=40)
    old.save(update_fields=["observed_at"])
    body = _recommend(api_client, pricing=["capacity_block"])
    stale = {i["instance_type"]: i["stale"] for i in body["recommendations"]}
    assert stale == {"blocks.8x": True, "both.8x": False}
    listed = api_client.get("/api/prices/?gpu=cb-test-gpu&pricing_model=capacity_block").json()
    assert {p["instance_type"]: p["stale"] for p in listed["results"]} == stale


def test_the_price_list_filters_on_capacity_block(api_client, blocks):
    response = api_client.get("/api/prices/?gpu=cb-test-gpu&pricing_model=capacity_block")
    assert response.status_code == 200
    rows = response.json()["results"]
    assert sorted(r["instance_type"] for r in rows) == ["blocks.8x", "both.8x"]
    assert {r["pricing_model"] for r in rows} == {"capacity_block"}
    wrong = api_client.get("/api/prices/?pricing_model=capacity_blocks")
    assert wrong.status_code == 400
    assert "pricing_model" in wrong.json()["errors"]


def test_a_run_too_short_for_a_block_is_shown_at_the_fewest_nodes_that_hit_it(api_client):
    """More nodes only shorten the run: the example is the first node count that is too short
    (here one node), not the last one walked (16 nodes, 0.0 h)."""
    short = dict(LONG_RUN, tokens=5_000_000)
    body = {
        "workload": short,
        "constraints": {
            "providers": ["aws"],
            "pricing": ["capacity_block"],
            "allow_multi_node": True,
        },
        "limit": 3,
    }
    response = api_client.post("/api/recommend", body, format="json")
    assert response.status_code == 200, response.content
    entry = response.json()["rejected"]["run_too_short_for_term"]
    assert entry["example_messages"]
    for example in entry["example_messages"]:
        assert example["params"]["nodes"] == 1, example["text"]
        assert 0 < example["params"]["hours"] < TERM_HOURS["capacity_block"] / 2
        assert " 0.0 h" not in example["text"], example["text"]


def test_an_hourly_cap_is_shown_at_the_fewest_nodes_over_it(api_client):
    body = {
        "workload": LONG_RUN,
        "constraints": {"providers": ["aws"], "pricing": ["on_demand"], "max_usd_per_hour": 0.01},
        "limit": 3,
    }
    response = api_client.post("/api/recommend", body, format="json")
    assert response.status_code == 200, response.content
    entry = response.json()["rejected"]["over_max_usd_per_hour"]
    assert entry["example_messages"]
    assert all(m["params"]["nodes"] == 1 for m in entry["example_messages"]), entry["examples"]
