"""Price writes: normalisation, history, locks, fixtures vs newer data, curator sheets."""

from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
from django.db import connection

from catalog import choices
from catalog.gpu_names import normalise_gpu_name
from catalog.models import GPUAlias, Price, PriceHistory
from catalog.selectors import gpu_alias_resolve
from catalog.services import (
    MAX_AMOUNT,
    SIX_PLACES,
    CatalogDataError,
    RowsWriter,
    price_figures_ok,
    price_figures_problems,
    price_history_values,
    price_normalise,
    price_sheet_import,
    price_upsert,
    rows_insert,
    rows_update,
    unmatched_gpu_name_map,
    unmatched_gpu_name_record,
)
from tests.factories import GPUFactory, InstanceTypeFactory, RegionFactory

RATES = {"USD": Decimal("1"), "CNY": Decimal("0.14")}
T0 = datetime(2026, 1, 1, tzinfo=UTC)


def test_normalise_converts_currency_and_month_to_usd_per_hour():
    per_hour, per_gpu = price_normalise(
        amount=Decimal("7300"), currency="CNY", unit="month", gpu_count=Decimal("2"), rates=RATES
    )
    assert per_hour == Decimal("1.400000")  # 7300 CNY * 0.14 / 730 h
    assert per_gpu == Decimal("0.700000")


def test_normalise_fractional_gpu_raises_per_gpu_price():
    _, per_gpu = price_normalise(
        amount=Decimal("0.5"), currency="USD", unit="hour", gpu_count=Decimal("0.25"), rates=RATES
    )
    assert per_gpu == Decimal("2.000000")


def test_normalise_refuses_unknown_currency():
    with pytest.raises(CatalogDataError, match="XXX"):
        price_normalise(
            amount=Decimal(1), currency="XXX", unit="hour", gpu_count=Decimal(1), rates=RATES
        )


@pytest.fixture
def slot(db):
    instance = InstanceTypeFactory(gpu_count=Decimal("8"))
    region = RegionFactory(provider=instance.provider)
    return {
        "instance_type": instance,
        "region": region,
        "pricing_model": choices.PricingModel.ON_DEMAND,
    }


def upsert(slot, amount, *, source=choices.PriceSource.SCRAPER, observed_at=T0, **extra):
    return price_upsert(
        **slot,
        amount=Decimal(amount),
        currency="USD",
        unit="hour",
        observed_at=observed_at,
        source=source,
        rates=RATES,
        **extra,
    )


def history(slot):
    return list(
        PriceHistory.objects.filter(instance_type=slot["instance_type"])
        .order_by("id")
        .values_list("event", "amount")
    )


def test_upsert_writes_history_on_appear_and_change_only(slot):
    upsert(slot, "16")
    upsert(slot, "16", observed_at=T0 + timedelta(hours=6))
    upsert(slot, "20", observed_at=T0 + timedelta(hours=12))
    assert history(slot) == [("appeared", Decimal("16")), ("changed", Decimal("20"))]
    price = Price.objects.get(instance_type=slot["instance_type"])
    assert price.usd_per_gpu_hour == Decimal("2.5")
    assert price.observed_at == T0 + timedelta(hours=12)


def test_scraper_never_overwrites_a_locked_price(slot):
    upsert(slot, "16", source=choices.PriceSource.CURATOR, lock=True)
    result = upsert(slot, "99", observed_at=T0 + timedelta(days=1))
    assert result.event is None and "locked" in result.skipped_reason
    assert Price.objects.get(instance_type=slot["instance_type"]).amount == Decimal("16")


def test_curator_may_change_a_locked_price(slot):
    upsert(slot, "16", source=choices.PriceSource.CURATOR, lock=True)
    result = upsert(slot, "12", source=choices.PriceSource.CURATOR)
    assert result.event == "changed"
    assert Price.objects.get(instance_type=slot["instance_type"]).locked is True


def test_fixture_snapshot_never_replaces_a_newer_observation(slot):
    upsert(slot, "18", observed_at=T0 + timedelta(days=30))
    result = upsert(slot, "16", source=choices.PriceSource.FIXTURE)
    assert result.event is None
    assert Price.objects.get(instance_type=slot["instance_type"]).amount == Decimal("18")


def test_gpu_names_fold_to_one_key():
    assert normalise_gpu_name("NVIDIA A100-SXM4-80GB") == "a100 sxm4 80gb"
    assert normalise_gpu_name("8x H100 SXM") == "h100 sxm"
    assert normalise_gpu_name("nvidia-tesla-t4") == "t4"
    assert normalise_gpu_name("NVIDIA GeForce RTX 4090") == "rtx 4090"


def test_unmatched_name_is_queued_then_mapped_to_an_alias(db):
    region = RegionFactory()
    gpu = GPUFactory(slug="test-mystery")
    item = unmatched_gpu_name_record(provider=region.provider, name="Mystery-GPU 96G")
    again = unmatched_gpu_name_record(provider=region.provider, name="mystery gpu 96g")
    assert again.pk == item.pk and again.times_seen == 2
    assert gpu_alias_resolve(name="Mystery GPU 96G") is None
    unmatched_gpu_name_map(item=again, gpu=gpu)
    assert gpu_alias_resolve(name="MYSTERY-GPU-96G") == gpu
    assert GPUAlias.objects.filter(gpu=gpu).count() == 1


SHEET_HEADER = "provider,instance_type,region,pricing_model,amount,currency,unit,observed_at,source_url,locked\n"


def test_price_sheet_applies_all_rows_and_locks(slot):
    provider = slot["instance_type"].provider.slug
    name, region = slot["instance_type"].name, slot["region"].code
    sheet = SHEET_HEADER + (
        f"{provider},{name},{region},on_demand,16,USD,hour,2026-01-01,https://example.org/p,true\n"
        f"{provider},{name},{region},monthly,8000,USD,month,2026-01-01,,\n"
    )
    report = price_sheet_import(text=sheet, now=T0 + timedelta(days=1))
    assert report.applied and not report.errors
    assert report.events == {"appeared": 2}
    on_demand = Price.objects.get(instance_type=slot["instance_type"], pricing_model="on_demand")
    assert on_demand.locked and on_demand.source == "curator"


def test_price_sheet_with_a_bad_row_applies_nothing_and_names_the_line(slot):
    provider = slot["instance_type"].provider.slug
    name, region = slot["instance_type"].name, slot["region"].code
    sheet = SHEET_HEADER + (
        f"{provider},{name},{region},on_demand,16,USD,hour,2026-01-01,,\n"
        f"{provider},{name},{region},hourly,-3,ZZZ,fortnight,yesterday,,maybe\n"
        f"{provider},no-such-instance,{region},spot,1,USD,hour,,,\n"
    )
    report = price_sheet_import(text=sheet, now=T0 + timedelta(days=1))
    assert not report.applied
    assert Price.objects.filter(instance_type=slot["instance_type"]).count() == 0
    line3 = next(e for e in report.errors if e.startswith("line 3:"))
    for field in ("pricing_model", "amount", "currency", "unit", "observed_at", "locked"):
        assert field in line3
    assert any(e.startswith("line 4:") and "instance_type" in e for e in report.errors)


@pytest.mark.parametrize("amount", ["99999999999", "1e30", "NaN"])
def test_price_sheet_refuses_amounts_the_database_cannot_hold(slot, amount):
    provider = slot["instance_type"].provider.slug
    name, region = slot["instance_type"].name, slot["region"].code
    sheet = SHEET_HEADER + f"{provider},{name},{region},on_demand,{amount},USD,hour,,,\n"
    report = price_sheet_import(text=sheet, now=T0 + timedelta(days=1))
    assert (
        not report.applied
        and report.errors[0].startswith("line 2:")
        and "amount" in report.errors[0]
    )


def test_price_sheet_missing_columns_is_rejected(db):
    report = price_sheet_import(text="provider,amount\naws,1\n")
    assert not report.applied and "missing column" in report.errors[0]


# --- The bulk row writers and the ingest's quick check -----------------------------------

AWKWARD_TEXT = 'a "quoted", {braced} back\\slash\ttab\nline NULL'


@pytest.mark.parametrize(
    "amount",
    [Decimal("0"), Decimal("-0"), Decimal("12.5"), MAX_AMOUNT, MAX_AMOUNT + SIX_PLACES,
     Decimal("-1"), Decimal("NaN"), Decimal("sNaN"), Decimal("Infinity"), Decimal("1E+30")],
)  # fmt: skip
@pytest.mark.parametrize(
    ("currency", "unit", "pricing_model"),
    [("USD", "hour", "on_demand"), ("CNY", "month", "spot"), ("XXX", "hour", "on_demand"),
     ("USD", "week", "on_demand"), ("USD", "hour", "weekly")],
)  # fmt: skip
def test_the_quick_check_agrees_with_the_full_one(amount, currency, unit, pricing_model):
    """price_figures_ok is the ingest's check of every record: it must say yes exactly when
    price_figures_problems finds nothing (a Decimal amount; any other type takes the full one)."""
    problems = price_figures_problems(
        amount=amount, currency=currency, unit=unit, pricing_model=pricing_model, rates=RATES
    )
    assert price_figures_ok(amount, currency, unit, pricing_model, RATES) == (problems == [])


@pytest.mark.parametrize("amount", [12, 12.5, "12.5", None])
def test_the_quick_check_sends_other_types_to_the_full_one(amount):
    assert not price_figures_ok(amount, "USD", "hour", "on_demand", RATES)


def test_rows_update_and_insert_write_awkward_values_as_given(slot):
    """rows_update sends columns as array literals and rows_insert as COPY rows on PostgreSQL
    (bulk_update and bulk_create elsewhere): quotes, braces, backslashes, tabs, newlines, the
    word NULL, None, JSON strings and times come back as they went in."""
    upsert(slot, "80")
    price = Price.objects.get(instance_type=slot["instance_type"])
    gone = T0 + timedelta(hours=5)
    rows_update(
        Price,
        [
            {
                "id": price.pk, "amount": Decimal("81.5"), "source_url": AWKWARD_TEXT,
                "source_note": "", "extra": {"note": AWKWARD_TEXT, "n": [1, None]},
                "gone_at": gone, "locked": True, "missed_runs": 3, "scrape_run_id": None,
            }
        ],
        ["amount", "source_url", "source_note", "extra", "gone_at", "locked", "missed_runs",
         "scrape_run_id"],
        constants={"currency": "CNY"},
    )  # fmt: skip
    price.refresh_from_db()
    assert (price.amount, price.source_url, price.source_note) == (
        Decimal("81.5"),
        AWKWARD_TEXT,
        "",
    )
    assert price.extra == {"note": AWKWARD_TEXT, "n": [1, None]}
    assert (price.gone_at, price.locked, price.missed_runs) == (gone, True, 3)
    assert price.currency == "CNY" and price.scrape_run_id is None
    rows_update(Price, [{"id": price.pk, "extra": "just a string", "gone_at": None}],
                ["extra", "gone_at"])  # fmt: skip
    price.refresh_from_db()
    assert price.extra == "just a string" and price.gone_at is None

    values = price_history_values(
        {"instance_type_id": price.instance_type_id, "region_id": price.region_id,
         "pricing_model": price.pricing_model, "amount": None, "currency": "USD", "unit": "hour",
         "usd_per_hour": None, "usd_per_gpu_hour": None, "observed_at": gone},
        event="disappeared", previous_amount=Decimal("81.5"), source=AWKWARD_TEXT[:16],
        scrape_run_id=None,
    )  # fmt: skip
    rows_insert(PriceHistory, [values])
    row = PriceHistory.objects.get(event="disappeared", region=slot["region"])
    assert (row.amount, row.previous_amount, row.source) == (
        None,
        Decimal("81.5"),
        AWKWARD_TEXT[:16],
    )
    assert row.observed_at == gone and row.recorded_at is not None


# What COPY's text format escapes (backslash, tab, newline, carriage return), its NULL and
# end-of-data markers written as text, and characters it passes through.
COPY_AWKWARD = [
    "back\\slash",
    "tab\there",
    "new\nline",
    "carriage\rreturn",
    "\\N",
    "\\.",
    "NULL",
    "",
    "quote \" and ' apostrophe, {brace}",
    "trailing backslash \\",
    "unicode: 价格 — €",
    "\\t not a tab",
]


def test_rows_insert_copies_awkward_text_json_times_and_nulls_as_given(slot):
    """rows_insert writes COPY text lines on PostgreSQL (bulk_create elsewhere): every awkward
    string, JSON document (the same strings inside, a bare string), time (in another time zone)
    and NULL comes back as it went in."""
    from zoneinfo import ZoneInfo

    observed = datetime(2026, 3, 1, 9, 30, 15, 123456, tzinfo=ZoneInfo("Asia/Shanghai"))
    extras = [{"note": t, "nested": [t, {"k": t}], "n": [1, None, 2.5]} for t in COPY_AWKWARD]
    extras[-3:] = ["a bare \\ string\twith\ntabs", {}, []]
    rows = []
    for n, model in enumerate(choices.PricingModel.values):  # one price per model: the key
        text = COPY_AWKWARD[n % len(COPY_AWKWARD)]
        rows.append(
            {
                "instance_type_id": slot["instance_type"].pk,
                "region_id": slot["region"].pk,
                "pricing_model": model,
                "amount": Decimal("1.5") + n,
                "currency": "USD",
                "unit": choices.PriceUnit.HOUR,
                "usd_per_hour": Decimal("1.500000") + n,
                "usd_per_gpu_hour": Decimal("0.187500"),
                "observed_at": observed,
                "source": choices.PriceSource.SCRAPER,
                "source_url": "https://example.org/?q=" + text[:200],
                "source_note": text,
                "locked_note": text[::-1],
                "extra": extras[n % len(extras)],
                "locked": n % 2 == 0,
                "gone_at": None if n % 3 else observed,
                "missed_runs": n,
            }
        )
    rows_insert(Price, rows)
    stored = {p.pricing_model: p for p in Price.objects.filter(instance_type=slot["instance_type"])}
    assert len(stored) == len(rows) > 3
    for row in rows:
        price = stored[row["pricing_model"]]
        assert {name: getattr(price, name) for name in row} == row

    history = []
    for n, text in enumerate(COPY_AWKWARD):
        values = price_history_values(
            {**rows[n % len(rows)], "amount": None if n % 2 else Decimal(n)},
            event=choices.PriceEvent.CHANGED,
            previous_amount=None if n % 3 else Decimal("9.99"),
            source=text[:16],
            scrape_run_id=None,
        )
        history.append(values)
    rows_insert(PriceHistory, history)
    names = ("amount", "previous_amount", "source", "observed_at", "scrape_run_id")
    got = PriceHistory.objects.filter(instance_type=slot["instance_type"], event="changed")
    assert list(got.order_by("id").values(*names)) == [
        {name: row[name] for name in names} for row in history
    ]


def test_rows_writer_takes_columns_in_any_order_constants_and_defaults(slot):
    """RowsWriter: values in the order of ``columns`` (not the table's), the other columns from
    ``constants`` or their defaults; the rows equal what rows_insert writes from dicts, on
    either backend (COPY lines on PostgreSQL, bulk_create elsewhere)."""
    key = {"instance_type_id": slot["instance_type"].pk, "region_id": slot["region"].pk}
    observed = T0 + timedelta(minutes=7)
    columns = ["extra", "usd_per_gpu_hour", "pricing_model", "amount", "source_url"]
    constants = {**key, "currency": "USD", "unit": "hour", "usd_per_hour": Decimal("8"),
                 "observed_at": observed, "source": choices.PriceSource.SCRAPER}  # fmt: skip
    writer = RowsWriter(Price, columns, constants)
    models = [choices.PricingModel.ON_DEMAND, choices.PricingModel.SPOT]
    for n, model in enumerate(models):
        writer.add({"n": n, "t": AWKWARD_TEXT}, Decimal("1.25") + n, model, Decimal(10 + n),
                   "https://example.org/\t{n}")  # fmt: skip
    assert len(writer) == 2
    with pytest.raises(TypeError, match="5 values expected, 2 given"):
        writer.add(1, 2)
    writer.write()
    assert len(writer) == 0
    rows_insert(Price, [{**key, "pricing_model": choices.PricingModel.MONTHLY,
                         "amount": Decimal("12"), "currency": "USD", "unit": "hour",
                         "usd_per_hour": Decimal("8"), "usd_per_gpu_hour": Decimal("3.25"),
                         "observed_at": observed, "source": choices.PriceSource.SCRAPER,
                         "source_url": "https://example.org/\t{n}",
                         "extra": {"n": 2, "t": AWKWARD_TEXT}}])  # fmt: skip
    stored = {p.pricing_model: p for p in Price.objects.filter(**key)}
    assert sorted(stored) == sorted([*models, choices.PricingModel.MONTHLY])
    for n, model in enumerate([*models, choices.PricingModel.MONTHLY]):
        price = stored[model]
        assert price.extra == {"n": n, "t": AWKWARD_TEXT}
        assert (price.amount, price.usd_per_gpu_hour) == (Decimal(10 + n), Decimal("1.25") + n)
        assert price.source_url == "https://example.org/\t{n}"
        assert (price.observed_at, price.usd_per_hour, price.currency) == (observed, 8, "USD")
        # defaults: not locked, no note, never missed, not gone; auto_now set at the write
        assert (price.locked, price.locked_note, price.missed_runs, price.gone_at) == (
            False, "", 0, None,
        )  # fmt: skip
        assert price.updated_at is not None


def test_rows_writer_names_a_column_the_model_lacks(slot):
    with pytest.raises(ValueError, match="Price has no column colour"):
        RowsWriter(Price, ["amount", "colour"])


@pytest.mark.parametrize("versions", [True, False])
def test_rows_writer_moves_the_providers_prices_version_unless_told(slot, versions):
    provider = slot["instance_type"].provider
    before = type(provider).objects.get(pk=provider.pk).prices_version
    writer = RowsWriter(
        Price, ["instance_type_id", "region_id", "pricing_model"],
        {"amount": 1, "currency": "USD", "unit": "hour", "usd_per_hour": 1,
         "usd_per_gpu_hour": 1, "observed_at": T0, "source": "scraper"},
        versions=versions,
    )  # fmt: skip
    writer.add(slot["instance_type"].pk, slot["region"].pk, choices.PricingModel.SPOT)
    writer.write()
    after = type(provider).objects.get(pk=provider.pk).prices_version
    if versions:
        assert after > before
    elif connection.vendor == "postgresql":  # elsewhere Price's bulk_create moves it anyway
        assert after == before


def test_rows_writer_converts_a_column_whole_or_value_by_value_as_it_needs(slot):
    """A column is converted as a whole when one scan says nothing in it needs converting (plain
    text, one time, every document empty, no NULL) and value by value otherwise: one awkward
    value among plain ones, one other time, one document, one NULL each take their own text."""
    key = {"instance_type_id": slot["instance_type"].pk, "region_id": slot["region"].pk}
    plain = {"source_url": "https://example.org/a", "extra": {}, "observed_at": T0,
             "gone_at": None, "locked": False}  # fmt: skip
    odd = {"source_url": "https://example.org/\\t\n{x}", "extra": {"k": AWKWARD_TEXT},
           "observed_at": T0 + timedelta(hours=1), "gone_at": T0, "locked": True}  # fmt: skip
    columns = ["pricing_model", "source_url", "extra", "observed_at", "gone_at", "locked"]
    for changed in [None, *plain]:  # every column plain, then each with one odd value
        writer = RowsWriter(
            Price, columns, {**key, "amount": 1, "currency": "USD", "unit": "hour",
                             "usd_per_hour": 1, "usd_per_gpu_hour": 1, "source": "scraper"},
        )  # fmt: skip
        rows = []
        for n, model in enumerate(choices.PricingModel.values[:3]):
            row = {**plain, "pricing_model": model}
            if n == 1 and changed:
                row[changed] = odd[changed]
            rows.append(row)
            writer.add(*[row[name] for name in columns])
        writer.write()
        stored = {p.pricing_model: p for p in Price.objects.filter(**key)}
        for row in rows:
            assert {name: getattr(stored[row["pricing_model"]], name) for name in row} == row
        Price.objects.filter(**key).delete()
