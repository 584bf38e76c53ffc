"""manage.py scale_catalog: synthetic bench providers, idempotent, removable; and a recommendation
costs the same number of queries whatever the catalog's size."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from catalog.models import InstanceType, Price, PriceHistory, Provider, Region
from devtools.scale import BENCH_SOURCE, bench_provider_queryset
from tests.factories import ProviderFactory

pytestmark = pytest.mark.django_db

LORA_8B = {
    "workload": {
        "model": "llama-3-8b",
        "method": "lora",
        "gradient_checkpointing": "full",
        "tokens": 2e8,
    },
    "constraints": {"pricing": ["on_demand", "spot"]},
    "limit": 10,
}


def bench_prices():
    return Price.objects.filter(instance_type__provider__in=bench_provider_queryset())


def snapshot():
    return sorted(
        bench_prices().values_list(
            "instance_type__provider__slug", "instance_type__name", "region__code",
            "pricing_model", "amount", "currency", "observed_at",
        )
    )  # fmt: skip


def test_bench_providers_are_marked_and_realistic():
    call_command("scale_catalog", prices=1500, verbosity=0)
    assert bench_prices().count() == 1500
    providers = list(bench_provider_queryset())
    assert providers and all(
        p.slug.startswith("bench-") and p.name.endswith("(synthetic)") and p.source == BENCH_SOURCE
        and p.scraper_key == ""
        for p in providers
    )  # fmt: skip
    prices = bench_prices()
    assert set(prices.values_list("pricing_model", flat=True)) >= {
        "on_demand", "spot", "reserved_1y", "reserved_3y",
    }  # fmt: skip
    counts = set(prices.values_list("instance_type__gpu_count", flat=True))
    assert {int(c) for c in counts} <= {1, 2, 4, 8} and len(counts) >= 3
    assert prices.values("instance_type__gpu").distinct().count() >= 10
    assert prices.values("region").distinct().count() >= 10
    # Multi-GPU machines come with an intra-node link; single GPUs without.
    instances = InstanceType.objects.filter(provider__in=providers)
    assert not instances.filter(gpu_count=1, interconnect_intra__isnull=False).exists()
    assert not instances.filter(gpu_count=8, interconnect_intra__isnull=True).exists()
    # Every price was normalised and has its history: an ``appeared`` row each, and a
    # ``changed`` row for those whose amount moved since (most spot prices, few others), whose
    # amounts chain: appeared at the first amount, changed from it to today's.
    assert not prices.filter(usd_per_gpu_hour__lte=0).exists()
    history = PriceHistory.objects.filter(instance_type__provider__in=providers)
    assert history.filter(event="appeared").count() == 1500
    changed = history.filter(event="changed")
    spot = prices.filter(pricing_model="spot").count()
    assert spot * 0.5 < changed.filter(pricing_model="spot").count() < spot * 0.9
    on_demand = prices.filter(pricing_model="on_demand").count()
    assert changed.filter(pricing_model="on_demand").count() < on_demand * 0.2
    for row in changed[:50]:
        price = prices.get(
            instance_type=row.instance_type, region=row.region, pricing_model=row.pricing_model
        )
        appeared = history.get(
            instance_type=row.instance_type, region=row.region, pricing_model=row.pricing_model,
            event="appeared",
        )  # fmt: skip
        assert row.amount == price.amount and row.previous_amount == appeared.amount
        assert appeared.observed_at < row.observed_at


def test_same_size_twice_changes_nothing_and_larger_adds():
    call_command("scale_catalog", prices=800, verbosity=0)
    first = snapshot()
    call_command("scale_catalog", prices=800, verbosity=0)
    assert snapshot() == first
    call_command("scale_catalog", prices=1200, verbosity=0)
    larger = snapshot()
    assert len(larger) == 1200 and set(first) <= set(larger)
    call_command("scale_catalog", prices=800, verbosity=0)
    assert snapshot() == first


def test_clear_removes_only_bench_rows():
    real = (Provider.objects.count(), Region.objects.count(), Price.objects.count())
    call_command("scale_catalog", prices=600, verbosity=0)
    assert Price.objects.count() == real[2] + 600
    call_command("scale_catalog", clear=True, verbosity=0)
    assert (Provider.objects.count(), Region.objects.count(), Price.objects.count()) == real
    assert not InstanceType.objects.filter(provider__slug__startswith="bench-").exists()
    assert not PriceHistory.objects.filter(instance_type__provider__slug__startswith="bench-")


def test_a_real_provider_named_like_a_bench_one_is_never_touched():
    ProviderFactory(slug="bench-1", name="Real bench cloud")
    with pytest.raises(CommandError):
        call_command("scale_catalog", prices=10, verbosity=0)
    call_command("scale_catalog", clear=True, verbosity=0)
    assert Provider.objects.filter(slug="bench-1").exists()


def test_prices_or_clear_is_required():
    with pytest.raises(CommandError):
        call_command("scale_catalog", verbosity=0)


def recommend_queries(client) -> int:
    with CaptureQueriesContext(connection) as ctx:
        response = client.post("/api/recommend", LORA_8B, format="json")
    assert response.status_code == 200
    assert response.json()["recommendations"]
    return len(ctx.captured_queries)


def test_queries_per_recommendation_do_not_depend_on_catalog_size(
    api_client, django_assert_max_num_queries
):
    call_command("scale_catalog", prices=500, verbosity=0)
    small = recommend_queries(api_client)
    call_command("scale_catalog", prices=3000, verbosity=0)
    assert bench_prices().count() == 3000
    with django_assert_max_num_queries(small):
        body = api_client.post("/api/recommend", LORA_8B, format="json").json()
    assert body["considered"] > 0
    # The same question again is answered from the cache: one query (the catalog fingerprint).
    with django_assert_max_num_queries(1):
        assert api_client.post("/api/recommend", LORA_8B, format="json").json() == body


def test_bench_prices_follow_the_catalogs_one_price_rule():
    """A stored bench price whose quoted figures differ from the generator's is put back with a
    ``changed`` history row (price_figures_changed, price_change_apply); a curator-locked one
    stays; USD figures alone never make a history row."""
    call_command("scale_catalog", prices=300, verbosity=0)
    changed_before = PriceHistory.objects.filter(event="changed").count()
    edited, locked, renormalised = bench_prices().order_by("pk")[:3]
    generated = edited.amount
    bench_prices().filter(pk=edited.pk).update(amount=generated * 2)
    bench_prices().filter(pk=locked.pk).update(amount=locked.amount * 2, locked=True)
    bench_prices().filter(pk=renormalised.pk).update(usd_per_hour=renormalised.usd_per_hour * 2)

    call_command("scale_catalog", prices=300, verbosity=0)

    edited.refresh_from_db()
    assert edited.amount == generated
    history = PriceHistory.objects.filter(
        instance_type=edited.instance_type, region=edited.region,
        pricing_model=edited.pricing_model, event="changed",
    ).latest("id")  # fmt: skip
    assert history.previous_amount == generated * 2 and history.amount == generated
    assert bench_prices().get(pk=locked.pk).amount == locked.amount * 2
    assert bench_prices().get(pk=renormalised.pk).usd_per_hour == renormalised.usd_per_hour * 2
    assert PriceHistory.objects.filter(event="changed").count() == changed_before + 1
