"""PriceHistory's foreign keys are Django's only (migration 0009): on_delete still holds.

Deleting an instance type or a region through the ORM (or the admin) is refused while history
refers to it, as it was when PostgreSQL also checked the keys; deleting a run clears the run of
its history rows. The database no longer checks the keys at commit.
"""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.db import connection
from django.db.models import ProtectedError
from django.utils import timezone

from catalog import choices
from catalog.models import InstanceType, PriceHistory, Region, ScrapeRun
from tests.factories import InstanceTypeFactory, ProviderFactory, RegionFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def history():
    provider = ProviderFactory(slug="keyscloud")
    region = RegionFactory(provider=provider, code="keys-1")
    instance = InstanceTypeFactory(provider=provider, name="keys.1xh100")
    run = ScrapeRun.objects.create(provider=provider, trigger="test", started_at=timezone.now())
    row = PriceHistory.objects.create(
        instance_type=instance, region=region, pricing_model=choices.PricingModel.ON_DEMAND,
        event=choices.PriceEvent.APPEARED, amount=Decimal("2.5"), currency="USD",
        unit=choices.PriceUnit.HOUR, usd_per_hour=Decimal("2.5"), usd_per_gpu_hour=Decimal("2.5"),
        observed_at=timezone.now(), source=choices.PriceSource.SCRAPER, scrape_run=run,
    )  # fmt: skip
    return row


def test_an_instance_type_with_history_is_not_deleted(history):
    with pytest.raises(ProtectedError):
        InstanceType.objects.get(pk=history.instance_type_id).delete()
    with pytest.raises(ProtectedError):
        InstanceType.objects.filter(pk=history.instance_type_id).delete()
    assert PriceHistory.objects.filter(pk=history.pk).exists()


def test_a_region_with_history_is_not_deleted(history):
    with pytest.raises(ProtectedError):
        Region.objects.get(pk=history.region_id).delete()
    assert PriceHistory.objects.filter(pk=history.pk).exists()


def test_without_history_the_instance_type_and_region_go(history):
    instance, region = history.instance_type, history.region
    PriceHistory.objects.filter(pk=history.pk).delete()
    instance.delete()
    region.delete()
    assert not InstanceType.objects.filter(pk=instance.pk).exists()
    assert not Region.objects.filter(pk=region.pk).exists()


def test_deleting_a_run_clears_it_from_its_history(history):
    ScrapeRun.objects.get(pk=history.scrape_run_id).delete()
    history.refresh_from_db()
    assert history.scrape_run_id is None


def test_history_keys_are_not_checked_by_the_database():
    with connection.cursor() as cursor:
        constraints = connection.introspection.get_constraints(cursor, PriceHistory._meta.db_table)
    assert not [name for name, c in constraints.items() if c["foreign_key"]]
