"""Honest age: each pricing model has a shelf life; stale spot and marketplace prices are left
out of rankings unless asked for, stale list prices are ranked and flagged, and every answer says
how old its prices are."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from catalog import choices
from catalog.models import Price
from catalog.querysets import shelf_life_days
from tests.factories import GPUFactory, InstanceTypeFactory, PriceFactory, ProviderFactory

pytestmark = pytest.mark.django_db

WORKLOAD = {"model": "llama-3-8b", "task": "finetune", "method": "lora", "tokens": 10_000_000}


@pytest.fixture
def aged(settings):
    """Four one-GPU offers of a GPU no fixture sells, each of a different age and kind."""
    settings.PRICE_STALE_AFTER_DAYS = 30
    settings.PRICE_SHELF_LIFE_DAYS = {"spot": 7, "marketplace": 7, "reserved_1y": 365}
    now = timezone.now()
    gpu = GPUFactory(slug="age-test-gpu", memory_gib=80)
    cloud = ProviderFactory(slug="age-cloud", kind=choices.ProviderKind.GPU_CLOUD)
    market = ProviderFactory(slug="age-market", kind=choices.ProviderKind.MARKETPLACE)

    def offer(provider, name, pricing_model, usd, days_old):
        instance = InstanceTypeFactory(
            provider=provider, name=name, gpu=gpu, gpu_count=Decimal("1"), vcpus=16, ram_gib=128
        )
        return PriceFactory(
            instance_type=instance,
            pricing_model=pricing_model,
            amount=Decimal(usd),
            usd_per_hour=Decimal(usd),
            usd_per_gpu_hour=Decimal(usd),
            observed_at=now - timedelta(days=days_old),
        )

    return {
        "old-list": offer(cloud, "old-list", "on_demand", "10", 60),
        "old-spot": offer(cloud, "old-spot", "spot", "3", 30),
        "new-spot": offer(cloud, "new-spot", "spot", "5", 1),
        "old-market": offer(market, "old-market", "on_demand", "2", 10),
    }


def _ask(api_client, include_stale=None, path="/api/recommend"):
    constraints = {"gpus": ["age-test-gpu"], "pricing": ["on_demand", "spot"]}
    if include_stale is not None:
        constraints["include_stale"] = include_stale
    body = {"workload": WORKLOAD, "constraints": constraints, "objective": "cheapest_hourly"}
    if path == "/api/compare":
        body = {
            "workload": WORKLOAD,
            "constraints": constraints,
            "targets": [{"gpu": "age-test-gpu"}],
        }
        body["constraints"].pop("gpus")
    response = api_client.post(path, body, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def _names(body):
    return [item["instance_type"] for item in body["recommendations"]]


def test_shelf_life_by_pricing_model_and_marketplace(settings):
    settings.PRICE_STALE_AFTER_DAYS = 30
    settings.PRICE_SHELF_LIFE_DAYS = {"spot": 7, "marketplace": 2, "reserved_1y": 365}
    assert shelf_life_days("on_demand") == 30
    assert shelf_life_days("spot") == 7
    assert shelf_life_days("reserved_1y") == 365
    assert shelf_life_days("on_demand", marketplace=True) == 2


def test_by_default_stale_spot_and_marketplace_prices_are_left_out_and_counted(api_client, aged):
    body = _ask(api_client)
    assert sorted(_names(body)) == ["new-spot", "old-list"]
    assert body["rejected"]["stale_price"]["count"] == 2
    old_list = next(i for i in body["recommendations"] if i["instance_type"] == "old-list")
    assert old_list["stale"] is True
    assert any("older than" in w for w in old_list["warnings"])
    new_spot = next(i for i in body["recommendations"] if i["instance_type"] == "new-spot")
    assert new_spot["stale"] is False


def test_asking_for_stale_prices_ranks_them_flagged(api_client, aged):
    body = _ask(api_client, include_stale=True)
    assert _names(body)[0] == "old-market"  # the cheapest, flagged
    assert sorted(_names(body)) == ["new-spot", "old-list", "old-market", "old-spot"]
    assert all(i["stale"] for i in body["recommendations"] if i["instance_type"].startswith("old"))


def test_refusing_stale_prices_leaves_out_list_prices_too(api_client, aged):
    body = _ask(api_client, include_stale=False)
    assert _names(body) == ["new-spot"]
    assert body["rejected"]["stale_price"]["count"] == 3


def test_every_answer_says_how_old_its_prices_are(api_client, aged):
    body = _ask(api_client)
    observed = [i["price_observed_at"] for i in body["recommendations"]]
    assert body["prices_oldest_observed_at"] == min(observed)
    assert body["prices_newest_observed_at"] == max(observed)
    assert body["prices_oldest_observed_at"] < body["prices_newest_observed_at"]


def test_compare_follows_the_same_rule_and_says_the_age(api_client, aged):
    body = _ask(api_client, path="/api/compare")
    (row,) = body["rows"]
    assert row["fits"] and row["instance_type"] == "new-spot"  # cheapest not left out
    assert body["prices_oldest_observed_at"] == row["price_observed_at"]


def test_an_answer_without_plans_has_no_price_dates(api_client, aged):
    Price.objects.filter(instance_type__gpu__slug="age-test-gpu").delete()
    body = _ask(api_client)
    assert body["recommendations"] == []
    assert body["prices_oldest_observed_at"] is None and body["prices_newest_observed_at"] is None


def test_the_price_list_flags_by_shelf_life(api_client, aged):
    rows = api_client.get(
        "/api/prices/", {"gpu": "age-test-gpu", "ordering": "usd_per_hour"}
    ).json()
    stale = {row["instance_type"]: row["stale"] for row in rows["results"]}
    assert stale == {"old-market": True, "old-spot": True, "new-spot": False, "old-list": True}
    fresh = api_client.get("/api/prices/", {"gpu": "age-test-gpu", "stale": "false"}).json()
    assert [row["instance_type"] for row in fresh["results"]] == ["new-spot"]


def _compare(api_client, provider, name, lang=None):
    body = {
        "workload": WORKLOAD,
        "targets": [{"provider": provider, "instance_type": name}],
        "constraints": {"pricing": ["on_demand", "spot"]},
    }
    path = "/api/compare" + (f"?lang={lang}" if lang else "")
    response = api_client.post(path, body, format="json")
    assert response.status_code == 200, response.content
    (row,) = response.json()["rows"]
    return row


@pytest.mark.parametrize(
    ("name", "provider", "kind", "days"),
    [("old-spot", "age-cloud", "spot", 7), ("old-market", "age-market", "marketplace", 7)],
)
def test_compare_stale_verdict_says_when_the_shelf_life_and_include_stale(
    api_client, aged, settings, name, provider, kind, days
):
    settings.PRICE_SHELF_LIFE_DAYS = {"spot": 7, "marketplace": 5, "reserved_1y": 365}
    days = settings.PRICE_SHELF_LIFE_DAYS[kind]
    row = _compare(api_client, provider, name)
    assert row["fits"] is False
    observed = aged[name].observed_at.date().isoformat()
    # The code stays first: clients that split on "stale_price:" still read it.
    assert row["why_not"].split(":", 1)[0] == "stale_price"
    assert f"observed {observed}" in row["why_not"]
    assert f"{days}-day shelf life of {kind} prices" in row["why_not"]
    assert "include_stale=true" in row["why_not"]
    example = row["why_not_message"]["params"]["example"]
    assert example["params"]["observed_on"] == observed
    assert example["params"]["shelf_life_days"] == days
    chinese = _compare(api_client, provider, name, lang="zh-hans")["why_not"]
    assert observed in chinese and f"{days} 天" in chinese and "include_stale=true" in chinese
