"""Every write of a price moves its provider's part of the planner's catalog fingerprint.

The offer book (sizing.selectors._fingerprints) no longer reads the prices to notice a write: it
reads each provider's ``prices_version``, which every price writer moves in its transaction
(catalog.services.prices_version_move). Each test below writes prices one way and fails if that
provider's fingerprint stays as it was; other providers' stay put (their offers are kept).
"""

from __future__ import annotations

import shutil
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pytest
import yaml
from django.conf import settings
from django.core.management import call_command
from django.urls import reverse
from django.utils import timezone

from catalog import choices
from catalog.models import GPU, CurrencyRate, Price, Provider
from catalog.services import price_sheet_import, prices_renormalise
from scrapers.base import PriceRecord
from scrapers.services import prices_ingest, scrape_run_start
from sizing.selectors import _fingerprints
from tests.factories import InstanceTypeFactory, ProviderFactory, RegionFactory

pytestmark = pytest.mark.django_db


def providers_fingerprint() -> dict[int, tuple]:
    return _fingerprints()[1]


class Moves:
    """The fingerprint before a write; ``check`` after it: the written providers' moved, no other's."""

    def __init__(self) -> None:
        self.before = providers_fingerprint()

    def check(self, *written: int) -> None:
        after = providers_fingerprint()
        moved = {
            pk for pk in after.keys() | self.before.keys() if after.get(pk) != self.before.get(pk)
        }
        assert moved == set(written)


def a_price(**filters) -> Price:
    return (
        Price.objects.filter(gone_at__isnull=True, **filters)
        .select_related("instance_type__provider", "region")
        .order_by("pk")
        .first()
    )


@pytest.fixture
def curator(client, django_user_model):
    user = django_user_model.objects.create_superuser("admin", "admin@example.org", "a-long-pw-123")
    client.force_login(user)
    return client


def test_admin_edit_moves_the_providers_fingerprint(curator):
    price = a_price()
    moves = Moves()
    response = curator.post(
        reverse("admin:catalog_price_change", args=[price.pk]),
        {"source_note": "checked by hand", "locked": "on", "locked_note": "x", "extra": "{}"},
    )
    assert response.status_code == 302, response.content[:2000]
    price.refresh_from_db()
    assert price.locked and price.source_note == "checked by hand"
    moves.check(price.instance_type.provider_id)


def test_admin_delete_moves_the_providers_fingerprint(curator):
    price = a_price()
    moves = Moves()
    response = curator.post(reverse("admin:catalog_price_delete", args=[price.pk]), {"post": "yes"})
    assert response.status_code == 302
    assert not Price.objects.filter(pk=price.pk).exists()
    moves.check(price.instance_type.provider_id)


def test_admin_bulk_delete_and_lock_actions_move_the_providers_fingerprints(curator):
    first = a_price(instance_type__provider__slug="lambda")
    second = a_price(instance_type__provider__slug="runpod")
    written = {first.instance_type.provider_id, second.instance_type.provider_id}
    changelist = reverse("admin:catalog_price_changelist")
    moves = Moves()
    curator.post(changelist, {"action": "lock_prices", "_selected_action": [first.pk, second.pk]})
    assert Price.objects.filter(pk__in=[first.pk, second.pk], locked=True).count() == 2
    moves.check(*written)
    moves = Moves()
    response = curator.post(
        changelist,
        {"action": "delete_selected", "_selected_action": [first.pk, second.pk], "post": "yes"},
    )
    assert response.status_code == 302
    assert not Price.objects.filter(pk__in=[first.pk, second.pk]).exists()
    moves.check(*written)


def _records(price: Price, amount: Decimal) -> list[PriceRecord]:
    instance = price.instance_type
    return [
        PriceRecord(
            instance_type=instance.name,
            gpu_name=instance.gpu.name,
            gpu_count=instance.gpu_count,
            region=price.region.code,
            pricing_model=price.pricing_model,
            amount=amount,
            currency=price.currency,
            unit=price.unit,
        )
    ]


def test_ingest_moves_the_providers_fingerprint():
    """A provider of one price, so that no other write (a missed price's count) hides the
    ingest's own: new, seen again unchanged, changed, each moves it."""
    provider = ProviderFactory(slug="onepricecloud", scraper_key="fake")
    region = RegionFactory(provider=provider, code="one-1")
    gpu = GPU.objects.get(slug="a100-sxm4-80gb")
    instance = InstanceTypeFactory(provider=provider, name="one.8xa100", gpu=gpu)
    price = Price(
        instance_type=instance, region=region, pricing_model=choices.PricingModel.ON_DEMAND,
        currency="USD", unit=choices.PriceUnit.HOUR,
    )  # fmt: skip
    for change, amount in (("created", "32"), ("unchanged", "32"), ("changed", "31")):
        run = scrape_run_start(provider=provider, trigger="test")
        moves = Moves()
        report = prices_ingest(
            provider=provider, run=run, records=_records(price, Decimal(amount)),
            observed_at=timezone.now(), pricing_models=frozenset({price.pricing_model}),
        )  # fmt: skip
        assert (getattr(report, change), report.gone, report.problems) == (1, 0, [])
        moves.check(provider.pk)
        run.status, run.finished_at = choices.ScrapeStatus.SUCCESS, timezone.now()
        run.save()


def test_renormalise_moves_the_fingerprint_of_providers_priced_in_the_currency():
    price = a_price(currency="CNY")
    assert price is not None, "the curated catalog has CNY prices"
    owners = set(
        Price.objects.filter(currency="CNY").values_list("instance_type__provider_id", flat=True)
    )
    rate = CurrencyRate.objects.filter(currency="CNY").order_by("-as_of").first()
    CurrencyRate.objects.create(
        currency="CNY", usd_per_unit=rate.usd_per_unit * 2, as_of=rate.as_of + timedelta(days=1),
        source="test",
    )  # fmt: skip
    moves = Moves()
    assert prices_renormalise() > 0
    moves.check(*owners)


def test_load_catalog_moves_the_fingerprint_of_a_provider_whose_prices_moved(tmp_path: Path):
    root = Path(settings.CATALOG_FIXTURES_DIR)
    shutil.copytree(root, tmp_path / "fixtures", ignore=shutil.ignore_patterns("tools"))
    fixtures = tmp_path / "fixtures"
    path = fixtures / "providers" / "lambda.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    row = data["prices"][0]
    row["amount"] = float(Decimal(str(row["amount"])) + 1)
    row["observed_at"] = (datetime.now(UTC) - timedelta(hours=1)).isoformat()
    moves = Moves()
    call_command("load_catalog", dir=str(root), verbosity=0)  # the same files: nothing moves
    moves.check()
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    call_command("load_catalog", dir=str(fixtures), verbosity=0)
    moves.check(Provider.objects.get(slug="lambda").pk)


def test_a_price_sheet_moves_the_providers_fingerprint():
    price = a_price(instance_type__provider__slug="runpod")
    sheet = (
        "provider,instance_type,region,pricing_model,amount,currency\n"
        f"runpod,{price.instance_type.name},{price.region.code},{price.pricing_model},"
        f"{price.amount + 1},{price.currency}\n"
    )
    moves = Moves()
    report = price_sheet_import(text=sheet)
    assert report.applied, report.errors
    moves.check(price.instance_type.provider_id)


def test_orm_bulk_writes_of_prices_move_the_providers_fingerprints():
    price = a_price(instance_type__provider__slug="aws")
    provider_id = price.instance_type.provider_id
    moves = Moves()
    assert Price.objects.filter(pk=price.pk).update(usd_per_hour=price.usd_per_hour / 2) == 1
    moves.check(provider_id)
    moves = Moves()
    Price.objects.bulk_update([Price(pk=price.pk, usd_per_hour=Decimal("1.5"))], ["usd_per_hour"])
    moves.check(provider_id)
    moves = Moves()
    Price.objects.filter(pk=price.pk).delete()
    moves.check(provider_id)
    moves = Moves()
    price.pk = None
    Price.objects.bulk_create([price])
    moves.check(provider_id)
    moves = Moves()
    assert Price.objects.filter(pk=-1).update(locked=True) == 0  # nothing written: nothing moves
    moves.check()


def test_a_refresh_moves_only_the_refreshed_providers_fingerprint():
    """The incremental read stays incremental: one provider's write leaves the others' parts."""
    price = a_price(instance_type__provider__slug="coreweave", locked=False)
    provider = price.instance_type.provider
    run = scrape_run_start(provider=provider, trigger="test")
    moves = Moves()
    prices_ingest(
        provider=provider, run=run, records=_records(price, price.amount * 2),
        observed_at=timezone.now(), pricing_models=frozenset({price.pricing_model}),
    )  # fmt: skip
    moves.check(provider.pk)
    assert choices.PriceEvent.CHANGED in set(
        price.instance_type.price_history.values_list("event", flat=True)
    )
