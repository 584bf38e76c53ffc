"""/api/compare on an instance priced only under pricing models the request leaves out: the
answer says which models it is sold under and how to ask for them."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db

WORKLOAD = {"model": "llama-3-8b", "method": "lora", "tokens": 1e8}
P5E = {"provider": "aws", "instance_type": "p5e.48xlarge"}


def compare(api_client, constraints, lang="en"):
    body = {"workload": WORKLOAD, "targets": [P5E], "constraints": constraints}
    response = api_client.post(f"/api/compare?lang={lang}", body, format="json")
    assert response.status_code == 200, response.content
    return response.json()["rows"][0]


def test_an_instance_sold_only_as_capacity_blocks_says_so(api_client):
    row = compare(api_client, {})
    assert not row["fits"]
    message = row["why_not_message"]
    assert message["code"] == "no_price_in_pricing"
    assert "capacity_block" in message["params"]["sold_as"].split(", ")
    assert "on_demand" not in message["params"]["sold_as"]
    assert '"pricing": ["capacity_block"]' in row["why_not"]
    assert "constraints.pricing" in row["why_not"]
    chinese = compare(api_client, {}, lang="zh-hans")
    assert "出售" in chinese["why_not"]


def test_naming_the_pricing_model_weighs_its_prices(api_client):
    row = compare(api_client, {"pricing": ["capacity_block"], "include_stale": True})
    if not row["fits"]:  # weighed, and turned down for a reason of its own (a run too short)
        assert row["why_not_message"]["code"] not in ("no_price_in_pricing", "no_price_in_scope")
