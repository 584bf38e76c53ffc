"""Cached recommendations never outlive the prices they were built from."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from catalog.models import InstanceType, Price
from scrapers.base import PriceRecord
from scrapers.services import prices_ingest, scrape_run_start

pytestmark = pytest.mark.django_db

T4_ONLY = {
    "workload": {"model": "llama-2-7b", "method": "qlora", "tokens": 1e7},
    "constraints": {"gpus": ["t4"], "pricing": ["on_demand"], "include_stale": True},
    "limit": 3,
}


def ask(client, body=T4_ONLY):
    response = client.post("/api/recommend", body, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def top_price(answer) -> Price:
    top = answer["recommendations"][0]
    return Price.objects.get(
        instance_type__provider__slug=top["provider"],
        instance_type__name=top["instance_type"],
        region__code=top["region"],
        pricing_model=top["pricing_model"],
    )


def test_a_refresh_ends_the_cached_answer(api_client):
    first = ask(api_client)
    assert ask(api_client) == first  # cached
    price = top_price(first)
    provider = price.instance_type.provider
    run = scrape_run_start(provider=provider, trigger="test")
    # The refresh finds the cheapest offer 20% dearer.
    new_amount = (price.amount * Decimal("1.2")).quantize(Decimal("0.0001"))
    record = PriceRecord(
        instance_type=price.instance_type.name, gpu_name=price.instance_type.gpu.name,
        gpu_count=price.instance_type.gpu_count, region=price.region.code,
        pricing_model=price.pricing_model, amount=new_amount, currency=price.currency,
        unit=price.unit,
    )  # fmt: skip
    prices_ingest(
        provider=provider, run=run, records=[record], observed_at=timezone.now(),
        pricing_models=frozenset(),
    )  # fmt: skip
    price.refresh_from_db()
    assert price.amount == new_amount
    after = ask(api_client)
    assert after != first
    same = [
        r for r in after["recommendations"]
        if (r["provider"], r["instance_type"], r["region"]) == (
            provider.slug, price.instance_type.name, price.region.code)
    ]  # fmt: skip
    for item in same:
        assert item["usd_per_hour"] == pytest.approx(float(price.usd_per_hour), abs=1e-4)


def test_a_curator_edit_ends_the_cached_answer(api_client):
    first = ask(api_client)
    top = first["recommendations"][0]
    # What the admin does: a save (which stamps updated_at).
    instance = InstanceType.objects.get(provider__slug=top["provider"], name=top["instance_type"])
    instance.is_active = False
    instance.save()
    after = ask(api_client)
    assert all(
        (r["provider"], r["instance_type"]) != (top["provider"], top["instance_type"])
        for r in after["recommendations"]
    )


def test_an_answer_ends_when_one_of_its_prices_turns_stale(api_client, monkeypatch, settings):
    days = settings.PRICE_STALE_AFTER_DAYS
    Price.objects.filter(instance_type__gpu__slug="t4", pricing_model="on_demand").update(
        observed_at=timezone.now() - timedelta(days=days - 1), updated_at=timezone.now()
    )
    first = ask(api_client)
    assert first["recommendations"] and not any(r["stale"] for r in first["recommendations"])
    assert ask(api_client) == first
    later = timezone.now() + timedelta(days=2)
    monkeypatch.setattr("sizing.selectors.timezone.now", lambda: later)
    after = ask(api_client)
    assert after["recommendations"] and all(r["stale"] for r in after["recommendations"])
