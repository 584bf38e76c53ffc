"""What the ingest's bulk writes store, row by row: created, changed, unchanged, missing, gone.

The writes take a different path on PostgreSQL (COPY, UPDATE ... FROM VALUES) than elsewhere
(bulk_create, bulk_update); CI runs this file on both.
"""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from catalog.models import GPU, Price, PriceHistory
from scrapers.base import PriceRecord
from scrapers.services import prices_ingest, scrape_run_start
from sizing.selectors import catalog_version
from tests.factories import InstanceTypeFactory, ProviderFactory, RegionFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def cloud():
    provider = ProviderFactory(slug="writecloud")
    regions = [RegionFactory(provider=provider, code=f"w-{n}") for n in range(2)]
    gpu = GPU.objects.get(slug="h100-sxm")
    for name in ("w.8x", "w.1x"):
        count = Decimal(name[2])
        InstanceTypeFactory(provider=provider, name=name, gpu=gpu, gpu_count=count)
    return provider, regions


def record(region, amount, *, extra=None, instance="w.8x") -> PriceRecord:
    return PriceRecord(
        instance_type=instance, gpu_name="H100 SXM", gpu_count=Decimal(instance[2]),
        region=region.code,
        pricing_model="on_demand", amount=Decimal(amount), currency="USD", unit="hour",
        extra=extra or {},
    )  # fmt: skip


def ingest(provider, records, observed_at):
    run = scrape_run_start(provider=provider, trigger="test")
    report = prices_ingest(
        provider=provider, run=run, records=records, observed_at=observed_at,
        pricing_models=frozenset({"on_demand"}),
    )  # fmt: skip
    run.status = "success"
    run.save()
    return run, report


def test_each_kind_of_row_is_written_as_a_single_save_would(cloud, settings):
    settings.SCRAPE_GONE_AFTER_RUNS = 2
    provider, (a, b) = cloud
    key = {"w-0": "a", "w-1": "b"}

    def rows():
        return {
            "c" if p.instance_type.name == "w.1x" else key[p.region.code]: p
            for p in Price.objects.filter(instance_type__provider=provider)
        }

    t0 = timezone.now() - timedelta(hours=3)
    run1, report = ingest(
        provider,
        [record(a, "80"), record(b, "80", extra={"offers": 3}), record(a, "10", instance="w.1x")],
        t0,
    )
    assert report.created == 3
    first = rows()
    assert all(p.scrape_run == run1 and p.observed_at == t0 for p in first.values())
    assert first["a"].usd_per_gpu_hour == Decimal("10.000000")
    assert first["b"].extra == {"offers": 3}
    assert PriceHistory.objects.filter(region__provider=provider, event="appeared").count() == 3

    # a: unchanged; b: only its extra moves; c: missing (first miss).
    t1 = t0 + timedelta(hours=1)
    version = catalog_version()
    run2, report = ingest(provider, [record(a, "80"), record(b, "80", extra={"offers": 5})], t1)
    assert (report.created, report.changed, report.unchanged) == (0, 0, 2)
    now = rows()
    for code in ("a", "b"):
        assert now[code].observed_at == t1 and now[code].scrape_run == run2
    # a was only seen again: its updated_at stays (a HOT update on PostgreSQL), and the
    # fingerprint moves with the provider's prices_version; b's extra moved, c was missed.
    assert now["a"].updated_at == first["a"].updated_at
    assert now["b"].updated_at > first["b"].updated_at
    assert now["c"].updated_at > first["c"].updated_at
    assert catalog_version() != version
    assert now["b"].extra == {"offers": 5}
    assert now["c"].missed_runs == 1 and now["c"].gone_at is None
    assert now["c"].observed_at == t0 and now["c"].scrape_run == run1

    # a: changed; b: unchanged; c: missing again, now gone.
    t2 = t1 + timedelta(hours=1)
    run3, report = ingest(provider, [record(a, "96"), record(b, "80", extra={"offers": 5})], t2)
    assert (report.changed, report.unchanged, report.gone) == (1, 1, 1)
    now = rows()
    assert now["a"].amount == Decimal("96") and now["a"].usd_per_hour == Decimal("96")
    assert now["a"].usd_per_gpu_hour == Decimal("12") and now["a"].observed_at == t2
    assert now["a"].scrape_run == run3 and now["a"].source == "scraper"
    assert now["c"].gone_at is not None and now["c"].missed_runs == 2
    changed = PriceHistory.objects.get(region=a, instance_type__name="w.8x", event="changed")
    assert (changed.amount, changed.previous_amount, changed.observed_at) == (
        Decimal("96"), Decimal("80"), t2
    )  # fmt: skip
    gone = PriceHistory.objects.filter(instance_type__name="w.1x", event="disappeared")
    assert gone.count() == 1

    # c comes back: reappeared, gone cleared, missed runs reset.
    t3 = t2 + timedelta(hours=1)
    back = [record(a, "96"), record(b, "80"), record(a, "10", instance="w.1x")]
    _, report = ingest(provider, back, t3)
    c = rows()["c"]
    assert c.gone_at is None and c.missed_runs == 0 and c.observed_at == t3
    assert c.updated_at > now["c"].updated_at  # back in the catalog: its row moved
    assert PriceHistory.objects.filter(instance_type__name="w.1x", event="reappeared").count() == 1


def test_a_refresh_that_finds_nothing_moved_reaches_the_offer_book(cloud):
    """Seen again unchanged, a price keeps its updated_at (a HOT update on PostgreSQL), yet the
    fingerprint moves and a worker's offer book shows the new observed_at."""
    from sizing import selectors

    provider, (a, _) = cloud
    t0 = timezone.now() - timedelta(hours=2)
    ingest(provider, [record(a, "80")], t0)

    def observed() -> list:
        book = selectors.offer_book(selectors.catalog_version())
        return [o.observed_at for o in book.offers if o.provider == provider.slug]

    assert observed() == [t0]
    stamp = Price.objects.get(region=a).updated_at
    t1 = t0 + timedelta(hours=1)
    _, report = ingest(provider, [record(a, "80")], t1)
    assert report.unchanged == 1
    assert Price.objects.get(region=a).updated_at == stamp
    assert observed() == [t1]


def test_deleting_a_run_clears_it_from_its_prices_and_history(cloud):
    """catalog_price.scrape_run_id has no database foreign key (migration 0007): Django's
    SET_NULL is what keeps a deleted run's id out of the prices it saw."""
    provider, (a, _) = cloud
    run, _ = ingest(provider, [record(a, "80")], timezone.now())
    run_id = run.pk
    assert Price.objects.get(region=a).scrape_run_id == run_id
    assert PriceHistory.objects.filter(region=a, scrape_run_id=run_id).exists()
    run.delete()
    assert Price.objects.get(region=a).scrape_run_id is None
    assert not PriceHistory.objects.filter(scrape_run_id=run_id).exists()
