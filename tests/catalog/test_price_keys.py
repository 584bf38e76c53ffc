"""Prices' and history's keys on PostgreSQL: instance type and region checked once per statement
(migration 0011), pricing model compared as bytes (catalog.fields.CodeField, migration 0012).

The keys are triggers, not foreign key constraints: these tests hold them to what a constraint
would refuse, through every path a row can take (an ORM save, a bulk COPY, a raw UPDATE, a
delete, re-key or truncate of the referenced rows). On SQLite the keys are Django's own
(on_delete=PROTECT), which the last test checks on every backend.
"""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.db import IntegrityError, connection, transaction
from django.db.models.deletion import ProtectedError
from django.utils import timezone

from catalog import choices
from catalog.models import InstanceType, Price, PriceHistory, QuarantinedPrice, Region
from catalog.services import RowsWriter
from tests.factories import PriceFactory, RegionFactory

pytestmark = pytest.mark.django_db
postgresql_only = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="the keys' triggers are PostgreSQL's"
)
MISSING = 987_654_321


def _price_values(price: Price, **changes) -> dict:
    values = {
        "instance_type_id": price.instance_type_id, "region_id": price.region_id,
        "pricing_model": choices.PricingModel.SPOT, "amount": Decimal("1"), "currency": "USD",
        "unit": "hour", "usd_per_hour": Decimal("1"), "usd_per_gpu_hour": Decimal("1"),
        "observed_at": timezone.now(), "source": "scraper",
    }  # fmt: skip
    values.update(changes)
    return values


def _history_values(price: Price, **changes) -> dict:
    values = {
        "instance_type_id": price.instance_type_id, "region_id": price.region_id,
        "pricing_model": price.pricing_model, "event": "changed", "currency": "USD",
        "unit": "hour", "observed_at": timezone.now(), "source": "scraper",
    }  # fmt: skip
    values.update(changes)
    return values


def _refused(write) -> str:
    with pytest.raises(IntegrityError) as caught, transaction.atomic():
        write()
    return str(caught.value)


@postgresql_only
@pytest.mark.parametrize("column", ["instance_type_id", "region_id"])
def test_a_price_or_history_row_naming_a_missing_row_is_refused_on_every_path(column):
    price = PriceFactory()
    prices, history_rows = Price.objects.count(), PriceHistory.objects.count()
    table = "catalog_instancetype" if column == "instance_type_id" else "catalog_region"

    message = _refused(lambda: Price.objects.create(**_price_values(price, **{column: MISSING})))
    assert f"{column}=({MISSING})" in message and table in message
    writer = RowsWriter(Price, ["instance_type_id", "region_id", "pricing_model"],
                        _price_values(price, instance_type_id=0, region_id=0, pricing_model=""))  # fmt: skip
    keys = {"instance_type_id": price.instance_type_id, "region_id": price.region_id}
    writer.add(*{**keys, column: MISSING}.values(), choices.PricingModel.MONTHLY)
    writer.add(*keys.values(), choices.PricingModel.YEARLY)  # a good row with the bad one
    assert f"{column}=({MISSING})" in _refused(writer.write)
    assert f"{column}=({MISSING})" in _refused(
        lambda: PriceHistory.objects.create(**_history_values(price, **{column: MISSING}))
    )
    history = PriceHistory.objects.create(**_history_values(price))

    def moved(model, pk):
        def write():
            with connection.cursor() as cursor:
                cursor.execute(f"UPDATE {model._meta.db_table} SET {column} = %s WHERE id = %s",
                               [MISSING, pk])  # fmt: skip

        return write

    assert f"{column}=({MISSING})" in _refused(moved(Price, price.pk))
    assert f"{column}=({MISSING})" in _refused(moved(PriceHistory, history.pk))
    # Nothing was written by the refused statements; good rows still go in.
    assert Price.objects.count() == prices and PriceHistory.objects.count() == history_rows + 1
    writer.add(*keys.values(), choices.PricingModel.YEARLY)
    writer.write()
    assert Price.objects.count() == prices + 1


@postgresql_only
def test_a_write_that_keeps_or_moves_a_key_to_an_existing_row_goes_through():
    price = PriceFactory()
    other = RegionFactory(provider=price.region.provider)
    price.amount = Decimal("2")
    price.save()  # an ORM save writes the key columns, unchanged
    Price.objects.filter(pk=price.pk).update(region=other)
    assert Price.objects.get(pk=price.pk).region_id == other.pk


@postgresql_only
@pytest.mark.parametrize("referenced", ["instance_type", "region"])
def test_a_row_still_named_cannot_be_deleted_re_keyed_or_truncated(referenced):
    price = PriceFactory()
    model = InstanceType if referenced == "instance_type" else Region
    target = getattr(price, referenced)
    table = model._meta.db_table

    def raw(sql):
        def write():
            with connection.cursor() as cursor:
                cursor.execute(sql, [target.pk] if "%s" in sql else None)

        return write

    assert "still named" in _refused(raw(f"DELETE FROM {table} WHERE id = %s"))
    assert "still named" in _refused(raw(f"UPDATE {table} SET id = id + 1000000 WHERE id = %s"))
    # (TRUNCATE waits for no deferred check: the test's transaction runs the pending ones first.)
    assert "still named" in _refused(
        raw(f"SET CONSTRAINTS ALL IMMEDIATE; TRUNCATE {table} CASCADE")
    )
    # History alone also holds its instance type and region.
    PriceHistory.objects.create(**_history_values(price))
    Price.objects.filter(pk=price.pk).delete()
    assert "catalog_pricehistory" in _refused(raw(f"DELETE FROM {table} WHERE id = %s"))
    PriceHistory.objects.filter(**{referenced: target}).delete()
    with transaction.atomic():
        raw(f"UPDATE {table} SET id = id WHERE id = %s")()  # an update keeping the id is fine
        raw(f"DELETE FROM {table} WHERE id = %s")()  # and a row nothing names goes
    assert not model.objects.filter(pk=target.pk).exists()


def test_django_protects_what_prices_and_history_name_on_every_backend():
    price = PriceFactory()
    with pytest.raises(ProtectedError):
        price.region.delete()
    PriceHistory.objects.create(**_history_values(price))
    Price.objects.filter(pk=price.pk).delete()
    with pytest.raises(ProtectedError):
        price.instance_type.delete()


@postgresql_only
def test_pricing_models_are_compared_as_bytes():
    """CodeField's columns carry collation "C" on PostgreSQL: a later migration that rebuilt
    them with the database's locale would make every price insert slower again."""
    with connection.cursor() as cursor:
        for model in (Price, PriceHistory, QuarantinedPrice):
            cursor.execute(
                "SELECT collation_name FROM information_schema.columns "
                "WHERE table_name = %s AND column_name = 'pricing_model'",
                [model._meta.db_table],
            )
            assert cursor.fetchone() == ("C",), model.__name__
    PriceFactory(pricing_model=choices.PricingModel.SPOT)
    PriceFactory(pricing_model=choices.PricingModel.ON_DEMAND)
    ordered = list(Price.objects.order_by("pricing_model").values_list("pricing_model", flat=True))
    assert ordered == sorted(ordered)
    assert Price.objects.filter(pricing_model="spot").exists()
