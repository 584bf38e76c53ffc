"""The ingest's per-record quick path (price_figures_ok, figures worked out once per value) takes
the same decisions as the full checks: every spelling of a number, every kind of GPU count."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from catalog.models import GPU, Price, PriceHistory
from scrapers.base import PriceRecord
from scrapers.services import prices_ingest, scrape_run_start
from tests.factories import InstanceTypeFactory, ProviderFactory, RegionFactory

pytestmark = pytest.mark.django_db

SPELLINGS = [Decimal("80"), Decimal("80.000"), "80", 80, 80.0, Decimal("80.0000004")]


@pytest.fixture
def cloud():
    provider = ProviderFactory(slug="quickcloud")
    regions = [RegionFactory(provider=provider, code=f"q-{n}") for n in range(len(SPELLINGS))]
    InstanceTypeFactory(
        provider=provider, name="q.8x", gpu=GPU.objects.get(slug="h100-sxm"), gpu_count=8
    )
    return provider, regions


def record(region, amount, *, gpu_count=Decimal("8")) -> PriceRecord:
    return PriceRecord(
        instance_type="q.8x", gpu_name="H100 SXM", gpu_count=gpu_count, region=region.code,
        pricing_model="on_demand", amount=amount, currency="USD", unit="hour",
    )  # fmt: skip


def ingest(provider, records, observed_at=None):
    run = scrape_run_start(provider=provider, trigger="test")
    report = prices_ingest(
        provider=provider, run=run, records=records, observed_at=observed_at or timezone.now(),
        pricing_models=frozenset({"on_demand"}),
    )  # fmt: skip
    run.status = "success"
    run.save()
    return report


def stored(provider):
    return {
        p.region.code: (p.amount, p.usd_per_hour, p.usd_per_gpu_hour)
        for p in Price.objects.filter(instance_type__provider=provider).select_related("region")
    }


def test_every_spelling_of_a_number_stores_the_same_figures(cloud):
    provider, regions = cloud
    report = ingest(provider, [record(r, a) for r, a in zip(regions, SPELLINGS, strict=True)])
    assert report.created == len(SPELLINGS) and not report.problems
    figures = (Decimal("80.000000"), Decimal("80.000000"), Decimal("10.000000"))
    assert set(stored(provider).values()) == {figures}


def test_a_number_seen_again_in_another_spelling_is_unchanged(cloud):
    provider, regions = cloud
    t0 = timezone.now() - timedelta(hours=2)
    ingest(provider, [record(r, Decimal("80")) for r in regions], t0)
    again = [record(r, a) for r, a in zip(regions, SPELLINGS, strict=True)]
    report = ingest(provider, again, t0 + timedelta(hours=1))
    assert (report.unchanged, report.changed, report.created) == (len(SPELLINGS), 0, 0)
    assert not PriceHistory.objects.filter(instance_type__provider=provider, event="changed")
    assert all(p.observed_at == t0 + timedelta(hours=1) for p in Price.objects.filter(
        instance_type__provider=provider))  # fmt: skip


@pytest.mark.parametrize(
    ("gpu_count", "problem"),
    [(Decimal("8"), None), (8, None), ("8", None), (Decimal("Infinity"), None),
     (Decimal("0"), "is not positive"), (Decimal("-1"), "is not positive"),
     (Decimal("NaN"), "is not positive"), ("eight", "is not positive"), (None, "is not positive")],
)  # fmt: skip
def test_gpu_counts_are_checked_as_the_full_check_does(cloud, gpu_count, problem):
    provider, regions = cloud
    report = ingest(provider, [record(regions[0], Decimal("80"), gpu_count=gpu_count)])
    if problem is None:
        assert report.created == 1 and not report.problems
    else:
        assert report.created == 0 and report.skipped == 1
        assert f"gpu_count: {gpu_count!r} {problem}" in report.problems[0]


@pytest.mark.parametrize(
    ("amount", "problem"),
    [(Decimal("-4"), "amount: '-4'"), (Decimal("NaN"), "amount: 'NaN'"),
     (Decimal("sNaN"), "amount: 'sNaN'"), ("free", "amount: 'free'"),
     (Decimal("1E+11"), "amount: '1E+11'")],
)  # fmt: skip
def test_bad_amounts_are_named_as_the_full_check_names_them(cloud, amount, problem):
    provider, regions = cloud
    report = ingest(provider, [record(regions[0], amount), record(regions[1], Decimal("80"))])
    assert report.created == 1 and report.skipped == 1
    assert problem in report.problems[0]
