"""The curated-fixture loader writes prices in bulk by the same rule as ``price_upsert``."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import pytest
import yaml
from django.conf import settings

from catalog import choices
from catalog.models import InstanceType, Price, PriceHistory
from catalog.services import CatalogDataError, catalog_load

PROVIDER = {
    "provider": {
        "slug": "tinycloud",
        "name": "Tiny Cloud",
        "kind": "gpu_cloud",
        "home_currency": "USD",
        "mainland_china": False,
        "billing_granularity": "hour",
        "source": "test",
    },
    "regions": [
        {"code": "r1", "name": "One", "country": "US", "geography": "north_america"},
        {"code": "r2", "name": "Two", "country": "DE", "geography": "europe"},
    ],
    "instance_types": [
        {
            "name": "one-h100",
            "gpu": "h100-sxm",
            "gpu_count": 1,
            "vcpus": 26,
            "ram_gib": 225,
            "source": "test",
        },
        {
            "name": "eight-h100",
            "gpu": "h100-sxm",
            "gpu_count": 8,
            "vcpus": 208,
            "ram_gib": 1800,
            "source": "test",
        },
    ],
    "prices": [
        {
            "instance_type": "one-h100",
            "region": "r1",
            "pricing_model": "on_demand",
            "amount": 2.99,
            "currency": "USD",
            "observed_at": "2026-11-01",
            "source": "page A",
        },
        {
            "instance_type": "eight-h100",
            "region": "r1",
            "pricing_model": "on_demand",
            "amount": 23.92,
            "currency": "USD",
            "observed_at": "2026-11-01",
            "source": "page A",
        },
        {
            "instance_type": "eight-h100",
            "region": "r2",
            "pricing_model": "spot",
            "amount": 1000,
            "currency": "EUR",
            "unit": "month",
            "observed_at": "2026-11-01",
            "source": "page B",
        },
    ],
}


@pytest.fixture
def fixtures_dir(tmp_path: Path) -> Path:
    """The real reference data (rates, interconnects, GPUs) and one small provider file."""
    root = Path(settings.CATALOG_FIXTURES_DIR)
    for name in ("currency_rates.yaml", "interconnects.yaml", "gpus.yaml"):
        shutil.copy(root / name, tmp_path / name)
    (tmp_path / "providers").mkdir()
    _write(tmp_path, PROVIDER)
    return tmp_path


def _write(directory: Path, data: dict) -> None:
    (directory / "providers" / "tinycloud.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")


def _prices() -> dict[tuple[str, str, str], Price]:
    return {
        (p.instance_type.name, p.region.code, p.pricing_model): p
        for p in Price.objects.filter(instance_type__provider__slug="tinycloud").select_related(
            "instance_type", "region"
        )
    }


@pytest.mark.django_db
def test_first_load_creates_prices_with_usd_figures_and_history(fixtures_dir):
    report = catalog_load(directory=fixtures_dir)
    prices = _prices()
    assert len(prices) == 3
    assert report.counts["prices_appeared"] == 3
    eight = prices[("eight-h100", "r1", "on_demand")]
    assert eight.usd_per_gpu_hour == Decimal("2.990000")
    assert eight.observed_at == datetime(2026, 11, 1, tzinfo=UTC)
    monthly = prices[("eight-h100", "r2", "spot")]
    assert monthly.usd_per_hour > 0 and monthly.currency == "EUR"
    events = PriceHistory.objects.filter(instance_type__provider__slug="tinycloud")
    assert sorted(events.values_list("event", flat=True)) == ["appeared"] * 3


@pytest.mark.django_db
def test_loading_again_writes_nothing(fixtures_dir):
    catalog_load(directory=fixtures_dir)
    stamps = {key: p.updated_at for key, p in _prices().items()}
    report = catalog_load(directory=fixtures_dir)
    assert {key: p.updated_at for key, p in _prices().items()} == stamps
    assert "prices_appeared" not in report.counts and "prices_changed" not in report.counts
    assert PriceHistory.objects.filter(instance_type__provider__slug="tinycloud").count() == 3


@pytest.mark.django_db
def test_a_new_amount_is_a_change_with_history_and_a_locked_price_stays(fixtures_dir):
    catalog_load(directory=fixtures_dir)
    locked = _prices()[("one-h100", "r1", "on_demand")]
    locked.locked = True
    locked.save()
    changed = {**PROVIDER, "prices": [dict(p) for p in PROVIDER["prices"]]}
    changed["prices"][0].update(amount=1.49, observed_at="2026-11-20")
    changed["prices"][1].update(amount=19.92, observed_at="2026-11-20")
    _write(fixtures_dir, changed)

    report = catalog_load(directory=fixtures_dir)

    prices = _prices()
    assert prices[("one-h100", "r1", "on_demand")].amount == Decimal("2.990000")  # locked
    eight = prices[("eight-h100", "r1", "on_demand")]
    assert eight.amount == Decimal("19.920000") and eight.usd_per_gpu_hour == Decimal("2.490000")
    assert eight.observed_at == datetime(2026, 11, 20, tzinfo=UTC)
    assert report.counts["prices_changed"] == 1
    history = PriceHistory.objects.filter(
        instance_type__name="eight-h100", region__code="r1", event=choices.PriceEvent.CHANGED
    ).get()
    assert history.previous_amount == Decimal("23.920000")
    assert history.amount == Decimal("19.920000")


@pytest.mark.django_db
def test_an_older_snapshot_never_replaces_a_newer_observation(fixtures_dir):
    catalog_load(directory=fixtures_dir)
    price = _prices()[("one-h100", "r1", "on_demand")]
    price.observed_at = datetime(2026, 11, 30, tzinfo=UTC)
    price.amount = Decimal("2.49")
    price.save()
    catalog_load(directory=fixtures_dir)
    assert _prices()[("one-h100", "r1", "on_demand")].amount == Decimal("2.490000")


@pytest.mark.django_db
def test_a_gone_price_listed_again_comes_back(fixtures_dir):
    catalog_load(directory=fixtures_dir)
    Price.objects.filter(instance_type__name="one-h100").update(
        gone_at=datetime(2026, 11, 10, tzinfo=UTC), missed_runs=3
    )
    catalog_load(directory=fixtures_dir)
    price = _prices()[("one-h100", "r1", "on_demand")]
    assert price.gone_at is None and price.missed_runs == 0
    assert PriceHistory.objects.filter(
        instance_type__name="one-h100", event=choices.PriceEvent.REAPPEARED
    ).exists()


@pytest.mark.django_db
def test_a_changed_instance_spec_is_saved(fixtures_dir):
    catalog_load(directory=fixtures_dir)
    bigger = {**PROVIDER, "instance_types": [dict(i) for i in PROVIDER["instance_types"]]}
    bigger["instance_types"][0]["ram_gib"] = 240
    _write(fixtures_dir, bigger)
    catalog_load(directory=fixtures_dir)
    assert InstanceType.objects.get(provider__slug="tinycloud", name="one-h100").ram_gib == 240


@pytest.mark.django_db
def test_a_price_of_an_unknown_instance_type_names_the_file_and_row(fixtures_dir):
    broken = {**PROVIDER, "prices": [*PROVIDER["prices"], {**PROVIDER["prices"][0]}]}
    broken["prices"][-1]["instance_type"] = "nine-h100"
    _write(fixtures_dir, broken)
    with pytest.raises(CatalogDataError, match=r"tinycloud\.yaml: price 'nine-h100'"):
        catalog_load(directory=fixtures_dir)
    assert not Price.objects.filter(instance_type__provider__slug="tinycloud").exists()


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("field", "value", "problem"),
    [
        ("pricing_model", "hourly", "pricing_model: 'hourly' is not one of"),
        ("amount", -1, "amount: '-1' is not a number"),
        ("unit", "fortnight", "unit: 'fortnight' is not one of"),
        ("currency", "XYZ", "currency: no exchange rate for 'XYZ'"),
    ],
)
def test_a_price_the_shared_check_refuses_is_not_loaded(fixtures_dir, field, value, problem):
    """The loader checks figures with price_figures_problems, as the sheet import and the ingest."""
    broken = {**PROVIDER, "prices": [dict(p) for p in PROVIDER["prices"]]}
    broken["prices"][1][field] = value
    _write(fixtures_dir, broken)
    with pytest.raises(CatalogDataError, match=rf"price 'eight-h100' in 'r1': {problem}"):
        catalog_load(directory=fixtures_dir)
    assert not Price.objects.filter(instance_type__provider__slug="tinycloud").exists()
