"""Ingest: history, quarantine, locks, gone prices, unmatched names, failures that change nothing."""

from __future__ import annotations

import json
from collections.abc import Iterator
from decimal import Decimal

import pytest
from django.utils import timezone

from catalog.models import (
    GPU,
    InstanceType,
    Price,
    PriceHistory,
    QuarantinedPrice,
    ScrapeRun,
    UnmatchedGPUName,
)
from scrapers import services
from scrapers.base import FetchError, HttpClient, Page, ParseError, PriceRecord, Scraper
from tests.factories import InstanceTypeFactory, ProviderFactory, RegionFactory

pytestmark = pytest.mark.django_db


class FakeScraper(Scraper):
    """Serves the pages it is given; parse reads a JSON list of records."""

    key = "fake"
    provider_slug = "fake"
    base_url = "http://127.0.0.1:9"

    def __init__(self, bodies: list[str] | Exception):
        super().__init__()
        self.bodies = bodies

    def fetch(self, client: HttpClient) -> Iterator[Page]:
        if isinstance(self.bodies, Exception):
            raise self.bodies
        for body in self.bodies:
            yield Page(url=self.base_url, status=200, body=body)

    def parse(self, page: Page) -> list[PriceRecord]:
        try:
            rows = json.loads(page.body)
        except json.JSONDecodeError as exc:
            raise ParseError(f"not JSON: {exc}") from exc
        return [
            PriceRecord(
                **{
                    **row,
                    "gpu_count": Decimal(str(row["gpu_count"])),
                    "amount": Decimal(str(row["amount"])),
                }
            )
            for row in rows
        ]


@pytest.fixture
def world():
    provider = ProviderFactory(slug="fakecloud", scraper_key="fake")
    region = RegionFactory(provider=provider, code="fake-east-1")
    gpu = GPU.objects.get(slug="a100-sxm4-80gb")
    instance = InstanceTypeFactory(
        provider=provider, name="fake.8xa100", gpu=gpu, gpu_count=Decimal("8")
    )
    return {"provider": provider, "region": region, "instance": instance}


def rec(amount, *, instance="fake.8xa100", model="on_demand", region="fake-east-1", **extra):
    row = {"instance_type": instance, "gpu_name": "NVIDIA A100-SXM4-80GB", "gpu_count": 8, "region": region,
           "pricing_model": model, "amount": amount, "currency": "USD", "unit": "hour"}  # fmt: skip
    row.update(extra)
    return row


def refresh(world, *rows_per_page, error: Exception | None = None) -> ScrapeRun:
    bodies = error if error else [json.dumps(list(rows)) for rows in rows_per_page]
    return services.provider_refresh(
        provider_slug=world["provider"].slug,
        trigger="test",
        scraper=FakeScraper(bodies),
        client=HttpClient(retries=0),
    )


def prices(world):
    return {
        (p.pricing_model): p.amount
        for p in Price.objects.filter(instance_type__provider=world["provider"])
    }


def events(world):
    return list(
        PriceHistory.objects.filter(instance_type__provider=world["provider"])
        .order_by("id")
        .values_list("event", flat=True)
    )


def test_first_run_creates_prices_with_history(world):
    run = refresh(world, [rec(32), rec(12, model="spot")])
    assert run.status == "success" and (run.records_seen, run.created, run.pages) == (2, 2, 1)
    assert prices(world) == {"on_demand": Decimal("32"), "spot": Decimal("12")}
    price = Price.objects.get(instance_type=world["instance"], pricing_model="on_demand")
    assert (
        price.usd_per_gpu_hour == Decimal("4")
        and price.source == "scraper"
        and price.scrape_run == run
    )
    assert events(world) == ["appeared", "appeared"]


def test_the_same_page_twice_changes_nothing(world):
    refresh(world, [rec(32), rec(12, model="spot")])
    before = (prices(world), events(world))
    run = refresh(world, [rec(32), rec(12, model="spot")])
    assert (run.created, run.changed, run.unchanged) == (0, 0, 2)
    assert (prices(world), events(world)) == before


def test_a_change_is_recorded_in_history(world):
    refresh(world, [rec(32)])
    run = refresh(world, [rec(30)])
    assert run.changed == 1 and prices(world)["on_demand"] == Decimal("30")
    last = PriceHistory.objects.filter(instance_type=world["instance"]).latest("id")
    assert (last.event, last.previous_amount, last.amount) == (
        "changed",
        Decimal("32"),
        Decimal("30"),
    )


@pytest.mark.parametrize("amount", [0, 200, 5])
def test_suspicious_prices_are_quarantined_not_applied(world, amount):
    refresh(world, [rec(32)])
    run = refresh(world, [rec(amount)])
    assert run.quarantined == 1 and prices(world)["on_demand"] == Decimal("32")
    held = QuarantinedPrice.objects.get(scrape_run=run)
    assert held.status == "pending" and held.previous_usd_per_hour == Decimal("32")


def test_approving_a_quarantined_price_applies_it(world):
    refresh(world, [rec(32)])
    run = refresh(world, [rec(200)])
    services.quarantined_price_approve(
        item=QuarantinedPrice.objects.get(scrape_run=run), user="curator"
    )
    assert prices(world)["on_demand"] == Decimal("200")
    assert events(world)[-1] == "changed"


def test_a_locked_price_is_never_overwritten(world):
    refresh(world, [rec(32)])
    Price.objects.filter(instance_type=world["instance"]).update(locked=True)
    run = refresh(world, [rec(31)])
    assert run.changed == 0 and prices(world)["on_demand"] == Decimal("32")


def test_failed_fetch_keeps_every_price(world):
    refresh(world, [rec(32)])
    run = refresh(world, error=FetchError("HTTP 503 from http://x"))
    assert run.status == "failed" and "FetchError" in run.error
    assert prices(world) == {"on_demand": Decimal("32")}
    assert Price.objects.get(instance_type=world["instance"]).gone_at is None


def test_unparseable_page_keeps_every_price(world):
    refresh(world, [rec(32)])
    provider = world["provider"]
    run = services.provider_refresh(
        provider_slug=provider.slug,
        scraper=FakeScraper(['[{"instance_type": "fake.8xa100"']),
        client=HttpClient(retries=0),
    )
    assert run.status == "failed" and "ParseError" in run.error
    assert prices(world) == {"on_demand": Decimal("32")}


def test_prices_missing_for_n_runs_are_marked_gone_not_deleted(world, settings):
    settings.SCRAPE_GONE_AFTER_RUNS = 2
    settings.SCRAPE_HOLD_BELOW_SHARE = 0  # half the records go: not held here (see test_drift)
    refresh(world, [rec(32), rec(12, model="spot")])
    refresh(world, [rec(12, model="spot")])
    spot_only = refresh(world, [rec(12, model="spot")])
    assert spot_only.gone == 1
    gone = Price.objects.get(instance_type=world["instance"], pricing_model="on_demand")
    assert gone.gone_at is not None and events(world)[-1] == "disappeared"
    assert not Price.objects.current().filter(pk=gone.pk).exists()
    back = refresh(world, [rec(32), rec(12, model="spot")])
    assert back.changed == 1 and events(world)[-1] == "reappeared"


def test_unknown_gpu_name_is_queued_and_known_new_instance_is_created(world):
    run = refresh(world, [
        rec(9, instance="fake.mystery", gpu_name="Quantum Tensor 9000", gpu_count=1, vcpus=8, ram_gib=64),
        rec(4, instance="fake.1xh100", gpu_name="H100 80GB HBM3", gpu_count=1, vcpus=26, ram_gib=225),
    ])  # fmt: skip
    assert run.unmatched == 1 and run.created == 1
    assert UnmatchedGPUName.objects.filter(
        provider=world["provider"], name="Quantum Tensor 9000"
    ).exists()
    created = InstanceType.objects.get(provider=world["provider"], name="fake.1xh100")
    assert created.gpu.slug == "h100-sxm" and created.vcpus == 26


def test_bad_records_make_a_partial_run_and_are_named(world):
    run = refresh(
        world, [rec(32), rec(1, region="mars-1"), rec(-4, model="spot"), rec(2, model="weekly")]
    )
    assert run.status == "partial" and run.created == 1
    assert "mars-1" in run.error and "amount: '-4'" in run.error and "weekly" in run.error


def test_one_refresh_at_a_time(world):
    with services.provider_lock(world["provider"].slug), pytest.raises(services.RefreshInProgress):
        refresh(world, [rec(32)])
    ScrapeRun.objects.create(
        provider=world["provider"], started_at=timezone.now(), status="running"
    )
    with pytest.raises(services.RefreshInProgress):
        refresh(world, [rec(32)])
    assert not Price.objects.filter(instance_type=world["instance"]).exists()


def test_cny_prices_are_normalised_through_the_rate(world):
    run = refresh(world, [rec(80, currency="CNY", unit="hour")])
    assert run.created == 1
    price = Price.objects.get(instance_type=world["instance"])
    from catalog.selectors import currency_rates_latest

    assert price.usd_per_hour == (Decimal(80) * currency_rates_latest()["CNY"]).quantize(
        Decimal("0.000001")
    )


def test_a_quarantined_price_is_not_applied_over_a_lock(world):
    refresh(world, [rec(32)])
    run = refresh(world, [rec(200)])
    Price.objects.filter(instance_type=world["instance"]).update(locked=True)
    with pytest.raises(services.QuarantineDecisionError):
        services.quarantined_price_approve(
            item=QuarantinedPrice.objects.get(scrape_run=run), user="c"
        )
    assert prices(world)["on_demand"] == Decimal("32")
    assert QuarantinedPrice.objects.get(scrape_run=run).status == "pending"


def test_a_rate_move_alone_rewrites_usd_without_a_changed_row(world):
    # The one rule (catalog.services.price_figures_changed): a price changed when the provider's
    # quoted figures did; USD moving with the exchange rate is not a price change.
    from catalog.models import CurrencyRate

    refresh(world, [rec(80, currency="CNY")])
    rate = CurrencyRate.objects.filter(currency="CNY").order_by("-as_of").first()
    CurrencyRate.objects.create(
        currency="CNY", usd_per_unit=rate.usd_per_unit * 2, as_of=rate.as_of.replace(year=2099),
        source="test",
    )  # fmt: skip
    run = refresh(world, [rec(80, currency="CNY")])
    assert (run.changed, run.unchanged) == (0, 1) and events(world) == ["appeared"]
    price = Price.objects.get(instance_type=world["instance"])
    assert price.usd_per_hour == (Decimal(80) * rate.usd_per_unit * 2).quantize(Decimal("0.000001"))
    moved = refresh(world, [rec(81, currency="CNY")])
    assert moved.changed == 1 and events(world) == ["appeared", "changed"]


def test_a_refresh_leaves_curated_capacity_blocks_alone_and_accepts_them_when_sent(world):
    refresh(world, [rec(32), rec(20, model="capacity_block")])
    assert prices(world) == {"on_demand": Decimal("32"), "capacity_block": Decimal("20")}
    # A source that does not publish capacity blocks (every scraper today) does not mark them gone.
    refresh(world, [rec(32)])
    assert prices(world) == {"on_demand": Decimal("32"), "capacity_block": Decimal("20")}
    assert "disappeared" not in events(world)
    run = refresh(world, [rec(32), rec(20, model="capacity_blocks")])  # misspelt: skipped, said
    assert run.status == "partial" and "pricing_model: 'capacity_blocks'" in run.error
    assert prices(world) == {"on_demand": Decimal("32"), "capacity_block": Decimal("20")}
