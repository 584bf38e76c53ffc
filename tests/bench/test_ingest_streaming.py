"""The ingest streams new prices to PostgreSQL while its loop goes on (RowsWriter's stream): a
COPY stays open between records, and the loop pauses it before any query of its own.

With the writer's chunk at one row, every new price is sent before the next record is read, so
each query the loop makes (an unknown region, a new instance type, an unmatched GPU) meets an
open COPY unless the loop paused it. CI runs this file on SQLite too (nothing streams there:
the same decisions through bulk_create).
"""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from catalog.models import GPU, InstanceType, Price, PriceHistory, ScrapeRun, UnmatchedGPUName
from catalog.services import RowsWriter
from scrapers.base import PriceRecord
from scrapers.services import prices_ingest, scrape_run_start
from tests.factories import InstanceTypeFactory, ProviderFactory, RegionFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def one_row_chunks(monkeypatch):
    monkeypatch.setattr(RowsWriter, "chunk", 1)


@pytest.fixture
def cloud():
    provider = ProviderFactory(slug="streamcloud")
    regions = [RegionFactory(provider=provider, code=f"s-{n}") for n in range(3)]
    InstanceTypeFactory(
        provider=provider, name="s.8x", gpu=GPU.objects.get(slug="h100-sxm"), gpu_count=8
    )
    return provider, regions


def record(region: str, *, instance="s.8x", gpu="H100 SXM", amount="80") -> PriceRecord:
    return PriceRecord(
        instance_type=instance, gpu_name=gpu, gpu_count=Decimal("8"), region=region,
        pricing_model="on_demand", amount=Decimal(amount), currency="USD", unit="hour",
        vcpus=96, ram_gib=1024,
    )  # fmt: skip


def ingest(provider, records):
    run = scrape_run_start(provider=provider, trigger="test")
    report = prices_ingest(
        provider=provider, run=run, records=records, observed_at=timezone.now(),
        pricing_models=frozenset({"on_demand"}),
    )  # fmt: skip
    run.status = "success"
    run.save()
    return report


def test_new_prices_interleaved_with_what_makes_the_loop_query(one_row_chunks, cloud):
    """New prices between an unknown region, a new instance type and an unmatched GPU: each
    query finds the connection free, and every row lands as it would unstreamed."""
    provider, _ = cloud
    records = [
        record("s-0"),
        record("nowhere-9"),  # unknown region: an UnmatchedGPUName row (kind region)
        record("s-1"),
        record("s-0", instance="s.new.8x"),  # a new instance type: created, then priced
        record("s-2"),
        record("s-1", instance="s.odd.8x", gpu="Mystery GPU 9000"),  # unmatched GPU
        record("s-2", instance="s.new.8x", amount="70"),
    ]
    report = ingest(provider, records)
    assert report.created == 5 and report.unmatched == 1
    prices = Price.objects.filter(instance_type__provider=provider)
    assert sorted(prices.values_list("instance_type__name", "region__code", "amount")) == [
        ("s.8x", "s-0", Decimal("80")),
        ("s.8x", "s-1", Decimal("80")),
        ("s.8x", "s-2", Decimal("80")),
        ("s.new.8x", "s-0", Decimal("80")),
        ("s.new.8x", "s-2", Decimal("70")),
    ]
    assert PriceHistory.objects.filter(instance_type__provider=provider).count() == 5
    assert InstanceType.objects.filter(provider=provider, name="s.new.8x").exists()
    assert set(
        UnmatchedGPUName.objects.filter(provider=provider).values_list("name", flat=True)
    ) == {
        "nowhere-9",
        "Mystery GPU 9000",
    }
    # The next refresh sees them all again.
    assert ingest(provider, records).unchanged == 5


def test_an_error_while_streaming_leaves_no_copy_open(one_row_chunks, cloud, monkeypatch):
    """A failure inside the loop while new prices stream (the first sent, the COPY open): the
    COPY ends with the error, the transaction rolls back (nothing of the refresh stays) and
    the connection is usable."""
    import scrapers.services

    provider, _ = cloud
    real = scrapers.services.price_normalise
    calls = []

    def fail_on_second(**kwargs):
        calls.append(kwargs)
        if len(calls) == 2:
            raise RuntimeError("normaliser bug")
        return real(**kwargs)

    monkeypatch.setattr(scrapers.services, "price_normalise", fail_on_second)
    records = [record("s-0", amount="80"), record("s-1", amount="81"), record("s-2", amount="82")]
    with pytest.raises(RuntimeError, match="normaliser bug"):
        ingest(provider, records)
    assert not Price.objects.filter(instance_type__provider=provider).exists()
    ScrapeRun.objects.filter(provider=provider).update(status="failed")  # as the task would
    monkeypatch.setattr(scrapers.services, "price_normalise", real)
    assert ingest(provider, records).created == 3


@pytest.mark.skipif(connection.vendor != "postgresql", reason="streams on PostgreSQL only")
def test_a_refused_row_in_a_stream_is_an_integrity_error(one_row_chunks, cloud):
    provider, regions = cloud
    instance = InstanceType.objects.get(provider=provider)
    writer = RowsWriter(
        Price, ["instance_type_id", "region_id", "pricing_model"],
        {"amount": 1, "currency": "USD", "unit": "hour", "usd_per_hour": 1,
         "usd_per_gpu_hour": 1, "observed_at": timezone.now(), "source": "scraper"},
        stream=True,
    )  # fmt: skip
    with pytest.raises(IntegrityError), transaction.atomic(), writer:
        writer.add(instance.pk, regions[0].pk, "spot")
        writer.add(987_654_321, regions[0].pk, "spot")
        writer.pause()  # the COPY ends: its key check refuses the second row
    with connection.cursor() as cursor:  # the connection answers again
        cursor.execute("SELECT 1")
        assert cursor.fetchone() == (1,)
