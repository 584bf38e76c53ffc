"""Writes to the catalog: loading curated fixtures, upserting prices with history, curator imports.

Every price writer goes through the price section below: ``price_upsert`` (one price: the sheet
import, quarantine approval), ``prices_bulk_write`` (the fixture loader, devtools' scale generator)
and the scrapers' bulk ingest, which checks with ``price_figures_problems``, decides history with
``price_figures_changed`` and builds history rows with ``price_history_writer`` (the rows of
``price_history_values``). Every write of a price moves its provider's ``prices_version`` in the
same transaction (``prices_version_move``), which is how the planner's caches notice it.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from json import JSONEncoder
from json import dumps as json_dumps
from operator import call
from pathlib import Path
from typing import Any, TypeVar

import yaml
from django.db import connection, models, transaction
from django.utils import timezone

from . import choices
from .gpu_names import normalise_gpu_name
from .models import (
    GPU,
    CurrencyRate,
    GPUAlias,
    InstanceType,
    Interconnect,
    Price,
    PriceHistory,
    Provider,
    Region,
    ScrapeRun,
    UnmatchedGPUName,
)
from .selectors import currency_rates_latest

SIX_PLACES = Decimal("0.000001")
# Amount columns hold 16 digits, 6 after the point.
MAX_AMOUNT = Decimal("9999999999.999999")
# 1 GB/s = 8 Gbit/s.
GBIT_PER_GBYTE = 8


class CatalogDataError(ValueError):
    """Curated data that cannot be loaded; the message names the file and record."""


# --- Normalisation -------------------------------------------------------------------------


def price_normalise(
    *, amount: Decimal, currency: str, unit: str, gpu_count: Decimal, rates: Mapping[str, Decimal]
) -> tuple[Decimal, Decimal]:
    """USD per hour and per GPU-hour of an amount quoted in ``currency`` per ``unit``.

    A month counts 730 hours and a year 8,760 (see ``choices.HOURS_PER_UNIT``).
    """
    rate = rates.get(currency)
    if rate is None:
        raise CatalogDataError(f"no exchange rate for currency {currency!r}")
    hours = _HOURS.get(unit)
    if hours is None:
        raise CatalogDataError(f"unknown unit {unit!r}")
    # Decimal(x) of a Decimal is the same number, and the ingest calls this once per record
    # that quotes a new figure: the conversions are skipped for what already is one.
    usd_per_hour = (amount if type(amount) is Decimal else Decimal(amount)) * rate / hours
    per_gpu = usd_per_hour / (gpu_count if type(gpu_count) is Decimal else Decimal(gpu_count))
    return (
        usd_per_hour.quantize(SIX_PLACES, ROUND_HALF_UP),
        per_gpu.quantize(SIX_PLACES, ROUND_HALF_UP),
    )


_HOURS = {unit: Decimal(hours) for unit, hours in choices.HOURS_PER_UNIT.items()}


# --- Prices: one validation, one definition of "changed" -------------------------------------
# Every price writer (scrape ingest, fixture loader, sheet import, quarantine approval, the
# scale generator) checks figures with ``price_figures_problems`` (through ``price_figures_build``
# but for the ingest, which reports problems per record) and decides history with
# ``price_figures_changed``.

_PRICING_MODELS = frozenset(choices.PricingModel.values)
_UNITS = frozenset(choices.PriceUnit.values)


def price_figures_ok(
    amount: Any, currency: str, unit: str, pricing_model: str, rates: Mapping[str, Decimal]
) -> bool:
    """Whether ``price_figures_problems`` would find nothing wrong, worked out without building
    messages: the ingest asks it of every record. False only sends a caller to
    ``price_figures_problems`` for the messages; an amount that is not a Decimal always does."""
    return (
        type(amount) is Decimal
        and amount.is_finite()
        and 0 <= amount <= MAX_AMOUNT
        and pricing_model in _PRICING_MODELS
        and unit in _UNITS
        and currency in rates
    )


def price_figures_problems(
    *, amount: Any, currency: str, unit: str, pricing_model: str, rates: Mapping[str, Decimal]
) -> list[str]:
    """What is wrong with a price as quoted, each problem led by its field name; [] when fine."""
    if price_figures_ok(amount, currency, unit, pricing_model, rates):
        return []
    problems = []
    try:
        number = Decimal(str(amount))
        if not number.is_finite() or number < 0 or number > MAX_AMOUNT:
            raise InvalidOperation
    except (InvalidOperation, TypeError, ValueError):
        problems.append(f"amount: {str(amount)!r} is not a number from 0 to {MAX_AMOUNT:,.0f}")
    if pricing_model not in _PRICING_MODELS:
        problems.append(
            f"pricing_model: {pricing_model!r} is not one of {', '.join(choices.PricingModel.values)}"
        )
    if unit not in _UNITS:
        problems.append(f"unit: {unit!r} is not one of {', '.join(choices.PriceUnit.values)}")
    if currency not in rates:
        problems.append(f"currency: no exchange rate for {currency!r}")
    return problems


# The figures a provider quotes. A price has *changed* (a ``changed`` history row) only when one
# of these moves. USD figures that move because an exchange rate moved are rewritten without a
# history row: the rate changed, not the price (prices_renormalise does the same).
QUOTED_FIGURES = ("amount", "currency", "unit")


def price_figures_changed(stored: Mapping[str, Any], incoming: Mapping[str, Any]) -> bool:
    """Whether the quoted figures differ (the one definition of a ``changed`` price)."""
    return any(stored[name] != incoming[name] for name in QUOTED_FIGURES)


def price_figures_build(
    *,
    amount: Any,
    currency: str,
    unit: str,
    pricing_model: str,
    gpu_count: Decimal,
    rates: Mapping[str, Decimal],
    observed_at: datetime,
    source: str,
    source_url: str = "",
    source_note: str = "",
    scrape_run: ScrapeRun | None = None,
    lock: bool | None = None,
) -> PriceFigures:
    """A quoted price checked (``price_figures_problems``), normalised to USD and quantised.

    Raises CatalogDataError naming every problem; the writers that hold rows from outside (the
    sheet import, the ingest) check first and report the problems instead.
    """
    problems = price_figures_problems(
        amount=amount, currency=currency, unit=unit, pricing_model=pricing_model, rates=rates
    )
    if problems:
        raise CatalogDataError("; ".join(problems))
    number = Decimal(str(amount))
    usd_per_hour, usd_per_gpu_hour = price_normalise(
        amount=number, currency=currency, unit=unit, gpu_count=gpu_count, rates=rates
    )
    return PriceFigures(
        amount=number.quantize(SIX_PLACES, ROUND_HALF_UP),
        currency=currency,
        unit=unit,
        usd_per_hour=usd_per_hour,
        usd_per_gpu_hour=usd_per_gpu_hour,
        observed_at=observed_at,
        source=source,
        source_url=source_url,
        source_note=source_note,
        scrape_run=scrape_run,
        lock=lock,
    )


# --- Prices --------------------------------------------------------------------------------


@dataclass
class UpsertResult:
    price: Price | None
    event: str | None  # a choices.PriceEvent, or None when nothing changed
    skipped_reason: str = ""


def _assign_changes(obj: models.Model, values: dict[str, Any]) -> bool:
    """Set the values that differ on ``obj``; whether any did. Loaders save only then, so a
    catalog loaded again keeps its ``updated_at`` and with it the fingerprint the planner's
    caches are keyed by (sizing.selectors.catalog_version)."""
    moved = [name for name, value in values.items() if getattr(obj, name) != value]
    for name in moved:
        setattr(obj, name, values[name])
    return bool(moved)


_M = TypeVar("_M", bound=models.Model)


def _write(model: type[_M], values: dict[str, Any], **lookup: Any) -> _M:
    """``update_or_create`` that writes nothing when the stored row already holds ``values``."""
    obj = model._default_manager.filter(**lookup).first()
    if obj is None:
        return model._default_manager.create(**lookup, **values)
    if _assign_changes(obj, values):
        obj.save()
    return obj


def price_upsert(
    *,
    instance_type: InstanceType,
    region: Region,
    pricing_model: str,
    amount: Decimal,
    currency: str,
    unit: str,
    observed_at: datetime,
    source: str,
    rates: dict[str, Decimal],
    source_url: str = "",
    source_note: str = "",
    scrape_run: ScrapeRun | None = None,
    lock: bool | None = None,
) -> UpsertResult:
    """Create or update the current price for (instance type, region, pricing model).

    History gets a row when the price appears, changes or comes back. A curator-locked price is
    only changed by a curator. A curated snapshot (fixtures) never replaces a newer observation.
    """
    incoming = price_figures_build(
        amount=amount, currency=currency, unit=unit, pricing_model=pricing_model,
        gpu_count=instance_type.gpu_count, rates=rates, observed_at=observed_at, source=source,
        source_url=source_url, source_note=source_note, scrape_run=scrape_run, lock=lock,
    )  # fmt: skip
    existing = (
        Price.objects.select_for_update()
        .filter(instance_type=instance_type, region=region, pricing_model=pricing_model)
        .first()
    )
    if existing is None:
        price = Price.objects.create(
            instance_type=instance_type, region=region, pricing_model=pricing_model,
            **incoming.create_values(),
        )  # fmt: skip
        _history_append(price, choices.PriceEvent.APPEARED, previous_amount=None)
        return UpsertResult(price, choices.PriceEvent.APPEARED)
    change = price_change_apply(existing, incoming)
    if change.skipped_reason or not change.moved:
        return UpsertResult(existing, None, change.skipped_reason)
    existing.save()
    if change.event:
        _history_append(existing, change.event, previous_amount=change.previous_amount)
    return UpsertResult(existing, change.event)


def prices_version_move(
    *, provider_ids: Iterable[int] = (), instance_type_ids: Iterable[int] = ()
) -> None:
    """Move by one the ``prices_version`` of the providers named and of those owning the
    instance types named, in the caller's transaction: the planner's offer book
    (sizing.selectors._fingerprints) notices a price write by it alone, with no read of the
    prices. The raw writers call it (``rows_insert`` and ``rows_update`` for the bulk writers,
    the ingest once per call); ``Price.save``/``delete`` and ``Price.objects``' bulk writes move
    the versions themselves. A plain UPDATE: the providers' ``updated_at`` (part of the shared
    tables' fingerprint) stays."""
    providers = sorted({int(i) for i in provider_ids})
    instances = sorted({int(i) for i in instance_type_ids})
    if not (providers or instances):
        return
    if connection.vendor == "postgresql":
        # One statement, each id list as one array literal (an IN list of thousands of
        # placeholders costs more to build than the statement to run), and only the parts
        # asked for (the ingest's, a provider by id, is an index look-up).
        where, params = [], []
        if providers:
            where.append("id = ANY(%s::bigint[])")
            params.append(_array_literal(providers))
        if instances:
            where.append(
                "id IN (SELECT provider_id FROM catalog_instancetype WHERE id = ANY(%s::bigint[]))"
            )
            params.append(_array_literal(instances))
        with connection.cursor() as cursor:
            cursor.execute(
                "UPDATE catalog_provider SET prices_version = prices_version + 1 "  # noqa: S608
                f"WHERE {' OR '.join(where)}",
                params,
            )
        return
    owners = set(providers)
    for start in range(0, len(instances), 500):  # SQLite's bound-parameter limit
        owners.update(
            InstanceType.objects.filter(pk__in=instances[start : start + 500]).values_list(
                "provider_id", flat=True
            )
        )
    Provider.objects.filter(pk__in=sorted(owners)).update(
        prices_version=models.F("prices_version") + 1
    )


@dataclass(frozen=True)
class PriceFigures:
    """A price as a writer offers it: figures already normalised to USD and quantised."""

    amount: Decimal
    currency: str
    unit: str
    usd_per_hour: Decimal
    usd_per_gpu_hour: Decimal
    observed_at: datetime
    source: str
    source_url: str = ""
    source_note: str = ""
    scrape_run: ScrapeRun | None = None
    lock: bool | None = None

    def quoted(self) -> dict[str, Any]:
        """The quoted figures (``QUOTED_FIGURES``), as ``price_figures_changed`` compares them."""
        return {"amount": self.amount, "currency": self.currency, "unit": self.unit}

    def create_values(self) -> dict[str, Any]:
        """Column values of a new current price holding these figures."""
        return {
            "amount": self.amount,
            "currency": self.currency,
            "unit": self.unit,
            "usd_per_hour": self.usd_per_hour,
            "usd_per_gpu_hour": self.usd_per_gpu_hour,
            "observed_at": self.observed_at,
            "source": self.source,
            "source_url": self.source_url,
            "source_note": self.source_note,
            "scrape_run": self.scrape_run,
            "locked": bool(self.lock),
        }


@dataclass(frozen=True)
class PriceChange:
    """What applying new figures to a stored price did (in memory, before it is saved)."""

    moved: bool
    event: str | None  # a choices.PriceEvent, or None when no history row is due
    previous_amount: Decimal | None = None
    skipped_reason: str = ""


def price_change_apply(existing: Price, incoming: PriceFigures) -> PriceChange:
    """Apply ``incoming`` to ``existing`` in memory by the upsert rule; the caller saves it.

    A curator-locked price is only changed by a curator; a curated snapshot (fixtures) never
    replaces a newer observation. History is due when the amount, currency or unit changes or a
    gone price comes back. ``moved`` is false when every stored value already matches, so a
    catalog loaded again keeps its ``updated_at`` (and the planner caches keyed by it).
    """
    if existing.locked and incoming.source != choices.PriceSource.CURATOR:
        return PriceChange(False, None, skipped_reason="locked by a curator")
    if (
        incoming.source == choices.PriceSource.FIXTURE
        and existing.observed_at > incoming.observed_at
    ):
        return PriceChange(False, None, skipped_reason="a newer observation is stored")
    changed = price_figures_changed(
        {name: getattr(existing, name) for name in QUOTED_FIGURES}, incoming.quoted()
    )
    came_back = existing.gone_at is not None
    previous_amount = existing.amount
    values = {
        "amount": incoming.amount,
        "currency": incoming.currency,
        "unit": incoming.unit,
        "usd_per_hour": incoming.usd_per_hour,
        "usd_per_gpu_hour": incoming.usd_per_gpu_hour,
        "observed_at": max(existing.observed_at, incoming.observed_at),
        "source": incoming.source,
        "source_url": incoming.source_url or existing.source_url,
        "source_note": incoming.source_note or existing.source_note,
        # By id: reading ``existing.scrape_run`` would cost a query per price in bulk loads.
        "scrape_run_id": incoming.scrape_run.pk if incoming.scrape_run else existing.scrape_run_id,
        "gone_at": None,
        "missed_runs": 0,
    }
    if incoming.lock is not None:
        values["locked"] = incoming.lock
    if not _assign_changes(existing, values):
        return PriceChange(False, None)
    event = None
    if came_back:
        event = choices.PriceEvent.REAPPEARED
    elif changed:
        event = choices.PriceEvent.CHANGED
    return PriceChange(True, event, previous_amount)


# The columns a history row copies from the price it records.
HISTORY_COLUMNS = (
    "instance_type_id", "region_id", "pricing_model", "amount", "currency", "unit",
    "usd_per_hour", "usd_per_gpu_hour", "observed_at",
)  # fmt: skip


def price_history_values(
    price: Mapping[str, Any],
    *,
    event: str,
    previous_amount: Decimal | None,
    source: str,
    scrape_run_id: int | None,
) -> dict[str, Any]:
    """Column values of a PriceHistory row for a price given as its column values (the writers
    of one price and of the fixtures; the scrapers' bulk ingest writes the same row through
    ``price_history_writer``)."""
    values = {column: price[column] for column in HISTORY_COLUMNS}
    values.update(
        event=event, previous_amount=previous_amount, source=source, scrape_run_id=scrape_run_id
    )
    return values


# A history row as ``price_history_writer`` takes it: the columns copied from the price, then the
# event and the amount before it.
HISTORY_ROW_COLUMNS = (*HISTORY_COLUMNS, "event", "previous_amount")


def price_history_writer(*, source: str, scrape_run_id: int | None) -> RowsWriter:
    """A writer of history rows given as ``HISTORY_ROW_COLUMNS`` values, every row from
    ``source`` and the run (``price_history_values``' row, by the thousand, without a dict a
    row: the ingest)."""
    return RowsWriter(
        PriceHistory, HISTORY_ROW_COLUMNS, {"source": source, "scrape_run_id": scrape_run_id}
    )


def _history_values(price: Price, event: str, *, previous_amount: Decimal | None) -> dict[str, Any]:
    columns = {column: getattr(price, column) for column in HISTORY_COLUMNS}
    return price_history_values(
        columns, event=event, previous_amount=previous_amount, source=price.source,
        scrape_run_id=price.scrape_run_id,
    )  # fmt: skip


def _history_append(price: Price, event: str, *, previous_amount: Decimal | None) -> None:
    PriceHistory(**_history_values(price, event, previous_amount=previous_amount)).save()


def prices_renormalise() -> int:
    """Recompute USD figures of every current price from the newest currency rates.

    Run after new rates arrive; returns how many prices moved.
    """
    rates = currency_rates_latest()
    now = timezone.now()
    moved: list[dict[str, Any]] = []
    with transaction.atomic():
        for price in Price.objects.select_related("instance_type").select_for_update():
            if price.currency not in rates:
                continue
            usd_per_hour, usd_per_gpu_hour = price_normalise(
                amount=price.amount,
                currency=price.currency,
                unit=price.unit,
                gpu_count=price.instance_type.gpu_count,
                rates=rates,
            )
            if (usd_per_hour, usd_per_gpu_hour) != (price.usd_per_hour, price.usd_per_gpu_hour):
                moved.append(
                    {
                        "id": price.pk,
                        "usd_per_hour": usd_per_hour,
                        "usd_per_gpu_hour": usd_per_gpu_hour,
                    }
                )
        # updated_at by hand (no auto_now on a bulk write): the answer cache and the book read it.
        rows_update(
            Price, moved, ["usd_per_hour", "usd_per_gpu_hour"], constants={"updated_at": now}
        )
    return len(moved)


# --- GPU names -----------------------------------------------------------------------------


def unmatched_gpu_name_record(
    *,
    provider: Provider,
    name: str,
    example: dict[str, Any] | None = None,
    kind: str = choices.UnmatchedKind.GPU,
) -> UnmatchedGPUName:
    """Queue a name nobody can map (a GPU, SKU, instance family or region) for a curator,
    counting how often it is seen."""
    name = name[:255]
    key = normalise_gpu_name(name) if kind == choices.UnmatchedKind.GPU else name.strip().lower()
    item, created = UnmatchedGPUName.objects.get_or_create(
        provider=provider,
        kind=kind,
        normalised=key[:255],
        defaults={"name": name, "example": example or {}},
    )
    if not created:
        item.times_seen += 1
        item.save(update_fields=["times_seen", "last_seen_at"])
    return item


def unmatched_gpu_name_map(*, item: UnmatchedGPUName, gpu: GPU) -> GPUAlias:
    """Map a queued name to a GPU by creating the alias the next refresh will use."""
    alias, _ = GPUAlias.objects.update_or_create(
        normalised=item.normalised, defaults={"gpu": gpu, "name": item.name}
    )
    item.mapped_to = gpu
    item.save(update_fields=["mapped_to", "last_seen_at"])
    return alias


# --- Curated fixtures ----------------------------------------------------------------------


@dataclass
class LoadReport:
    counts: dict[str, int] = field(default_factory=dict)

    def add(self, key: str, n: int = 1) -> None:
        self.counts[key] = self.counts.get(key, 0) + n


# libyaml's parser where PyYAML was built with it: ten times faster on the provider files.
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _read_yaml(path: Path) -> Any:
    try:
        with path.open(encoding="utf-8") as fh:
            return yaml.load(fh, Loader=_YAML_LOADER)  # noqa: S506 (a safe loader)
    except yaml.YAMLError as exc:
        raise CatalogDataError(f"{path.name}: not valid YAML: {exc}") from exc


def _as_datetime(value: Any) -> datetime:
    if isinstance(value, datetime):
        return value if timezone.is_aware(value) else value.replace(tzinfo=UTC)
    if isinstance(value, date):
        # A date alone is the start of that day (UTC): a figure read today must not claim a
        # time later than now.
        return datetime.combine(value, time(0, 0), tzinfo=UTC)
    parsed = datetime.fromisoformat(str(value))
    return parsed if timezone.is_aware(parsed) else parsed.replace(tzinfo=UTC)


def _bandwidth_gb_s(value: float, unit: str) -> float:
    return value / GBIT_PER_GBYTE if unit == choices.BandwidthUnit.GBIT_S else value


GPU_FIELDS = [
    "vendor",
    "name",
    "architecture",
    "release_year",
    "memory_gib",
    "memory_type",
    "memory_bandwidth_gb_s",
    "fp32_tflops",
    "tf32_tflops",
    "bf16_tflops",
    "fp16_tflops",
    "fp8_tflops",
    "int8_tops",
    "tdp_w",
    "form_factor",
    "nvlink_bandwidth_gb_s",
    "ecc",
    "segment",
    "datacenter_use_allowed",
    "source",
    "source_url",
    "notes",
]
INTERCONNECT_FIELDS = [
    "kind",
    "generation",
    "name",
    "bandwidth_value",
    "bandwidth_unit",
    "bandwidth_note",
    "scope",
    "rdma",
    "source",
    "source_url",
]
PROVIDER_FIELDS = [
    "name",
    "kind",
    "home_currency",
    "website",
    "price_source_url",
    "scraper_key",
    "mainland_china",
    "compliance_notes",
    "billing_granularity",
    "source",
]
REGION_FIELDS = ["name", "country", "geography", "mainland_china"]
INSTANCE_FIELDS = [
    "gpu_count",
    "gpu_sharing",
    "vcpus",
    "ram_gib",
    "local_disk_gb",
    "local_disk_type",
    "network_gbps",
    "notes",
    "source",
    "source_url",
]


def _pick(record: dict[str, Any], names: list[str]) -> dict[str, Any]:
    values = {}
    for name in names:
        if name in record:
            value = record[name]
            values[name] = "" if value is None and name in _TEXT_FIELDS else value
    return values


_TEXT_FIELDS = {
    "notes",
    "source",
    "source_url",
    "memory_type",
    "bandwidth_note",
    "website",
    "price_source_url",
    "scraper_key",
    "compliance_notes",
    "generation",
}


def catalog_load(*, directory: Path) -> LoadReport:
    """Upsert the curated catalog in ``directory`` (see fixtures/README.md) in one transaction.

    Idempotent: loading the same files twice changes nothing and writes no history.
    """
    report = LoadReport()
    with transaction.atomic():
        _load_currency_rates(directory / "currency_rates.yaml", report)
        _load_interconnects(directory / "interconnects.yaml", report)
        _load_gpus(directory / "gpus.yaml", report)
        rates = currency_rates_latest()
        for path in sorted((directory / "providers").glob("*.yaml")):
            _load_provider(path, rates, report)
    return report


def _load_currency_rates(path: Path, report: LoadReport) -> None:
    for row in _read_yaml(path) or []:
        _write(
            CurrencyRate,
            {
                "usd_per_unit": Decimal(str(row["usd_per_unit"])),
                "source": row.get("source", ""),
                "source_url": row.get("source_url") or "",
            },
            currency=row["currency"],
            as_of=row["as_of"],
        )
        report.add("currency_rates")


def _load_interconnects(path: Path, report: LoadReport) -> None:
    for row in _read_yaml(path) or []:
        values = _pick(row, INTERCONNECT_FIELDS)
        values["bandwidth_gb_s"] = _bandwidth_gb_s(row["bandwidth_value"], row["bandwidth_unit"])
        _write(Interconnect, values, slug=row["slug"])
        report.add("interconnects")


def _load_gpus(path: Path, report: LoadReport) -> None:
    rows = _read_yaml(path) or []
    for row in rows:
        _write(GPU, _pick(row, GPU_FIELDS), slug=row["slug"])
        report.add("gpus")
    by_slug = {gpu.slug: gpu for gpu in GPU.objects.all()}
    for row in rows:
        gpu = by_slug[row["slug"]]
        parent_slug = row.get("export_variant_of")
        parent = by_slug.get(parent_slug) if parent_slug else None
        if parent_slug and parent is None:
            raise CatalogDataError(
                f"{path.name}: {gpu.slug}: unknown export_variant_of {parent_slug!r}"
            )
        if gpu.export_variant_of_id != (parent.pk if parent else None):
            gpu.export_variant_of = parent
            gpu.save(update_fields=["export_variant_of"])
        for name in [gpu.name, *(row.get("aliases") or [])]:
            key = normalise_gpu_name(name)
            existing = GPUAlias.objects.filter(normalised=key).first()
            if existing is None:
                GPUAlias.objects.create(gpu=gpu, name=name, normalised=key)
                report.add("gpu_aliases")
            elif existing.gpu_id != gpu.pk and name != gpu.name:
                raise CatalogDataError(
                    f"{path.name}: alias {name!r} of {gpu.slug} already names {existing.gpu.slug}"
                )


def _write_many(
    model: type[_M],
    rows: dict[str, dict[str, Any]],
    existing: dict[str, _M],
    key: str,
    **common: Any,
) -> dict[str, _M]:
    """``_write`` for many rows of one parent: ``existing`` holds the stored rows by ``key``;
    new rows are inserted in one statement, changed ones saved one by one (rare after the
    first load). Returns every row by key."""
    out: dict[str, _M] = {}
    new = []
    for name, values in rows.items():
        obj = existing.get(name)
        if obj is None:
            new.append(model(**common, **{key: name}, **values))
        else:
            if _assign_changes(obj, values):
                obj.save()
            out[name] = obj
    # SQLite (3.35+) and PostgreSQL hand back the new ids.
    for obj in model._default_manager.bulk_create(new, batch_size=1000):
        out[getattr(obj, key)] = obj
    return out


def _load_provider(path: Path, rates: dict[str, Decimal], report: LoadReport) -> None:
    data = _read_yaml(path) or {}
    meta = data["provider"]
    provider = _write(Provider, _pick(meta, PROVIDER_FIELDS), slug=meta["slug"])
    report.add("providers")
    region_rows = {row["code"]: _pick(row, REGION_FIELDS) for row in data.get("regions") or []}
    regions = _write_many(
        Region, region_rows, {r.code: r for r in Region.objects.filter(provider=provider)},
        "code", provider=provider,
    )  # fmt: skip
    report.add("regions", len(region_rows))
    gpus = {gpu.slug: gpu for gpu in GPU.objects.all()}
    links = {link.slug: link for link in Interconnect.objects.all()}
    instance_rows = {}
    for row in data.get("instance_types") or []:
        where = f"{path.name}: instance type {row.get('name')!r}"
        if row.get("gpu") not in gpus:
            raise CatalogDataError(f"{where}: unknown GPU {row.get('gpu')!r}")
        values = _pick(row, INSTANCE_FIELDS)
        values["gpu"] = gpus[row["gpu"]]
        values["gpu_count"] = Decimal(str(row["gpu_count"]))
        for key in ("interconnect_intra", "interconnect_inter"):
            slug = row.get(key)
            if slug and slug not in links:
                raise CatalogDataError(f"{where}: unknown {key} {slug!r}")
            values[key] = links.get(slug) if slug else None
        instance_rows[row["name"]] = values
    stored = {
        i.name: i
        for i in InstanceType.objects.filter(provider=provider).select_related(
            "gpu", "interconnect_intra", "interconnect_inter"
        )
    }
    instances = _write_many(InstanceType, instance_rows, stored, "name", provider=provider)
    report.add("instance_types", len(instance_rows))
    _load_prices(path, data.get("prices") or [], instances, regions, rates, report)


def _load_prices(
    path: Path,
    rows: list[dict[str, Any]],
    instances: dict[str, Any],
    regions: dict[str, Any],
    rates: dict[str, Decimal],
    report: LoadReport,
) -> None:
    """One provider's curated prices, checked and normalised by ``price_figures_build`` and
    written by ``prices_bulk_write``."""
    stored = {
        (p.instance_type_id, p.region_id, p.pricing_model): p
        for p in Price.objects.filter(instance_type__in=list(instances.values()))
    }
    offers: list[tuple[PriceKey, PriceFigures]] = []
    for row in rows:
        where = f"{path.name}: price {row.get('instance_type')!r} in {row.get('region')!r}"
        instance = instances.get(row.get("instance_type", ""))
        region = regions.get(row.get("region", ""))
        if instance is None:
            raise CatalogDataError(f"{where}: unknown instance type")
        if region is None:
            raise CatalogDataError(f"{where}: unknown region")
        try:
            incoming = price_figures_build(
                amount=row.get("amount"), currency=row.get("currency", ""),
                unit=row.get("unit", choices.PriceUnit.HOUR),
                pricing_model=row.get("pricing_model", ""), gpu_count=instance.gpu_count,
                rates=rates, observed_at=_as_datetime(row["observed_at"]),
                source=choices.PriceSource.FIXTURE, source_url=row.get("source_url") or "",
                source_note=(row.get("source") or "")[:500],
            )  # fmt: skip
        except CatalogDataError as exc:
            raise CatalogDataError(f"{where}: {exc}") from exc
        offers.append(((instance.pk, region.pk, row["pricing_model"]), incoming))
        report.add("prices")
    for event, count in prices_bulk_write(offers=offers, stored=stored).items():
        report.add(f"prices_{event}", count)


# (instance type id, region id, pricing model): the natural key of a current price.
PriceKey = tuple[int, int, str]


def prices_bulk_write(
    *,
    offers: Iterable[tuple[PriceKey, PriceFigures]],
    stored: dict[PriceKey, Price],
) -> dict[str, int]:
    """Write many prices by the upsert rule (``price_change_apply``) in a few statements: one
    insert of the new prices, one update of the stored ones that moved, one insert of their
    history rows (``rows_insert`` and ``rows_update``: COPY on PostgreSQL). ``stored`` holds the
    current prices the offers may meet. Offers apply in order: a key offered again is applied to
    what the earlier offer left, by the same rule (so a writer can replay a price's life: first
    figures, then the later ones, each with its history row). Returns how many history rows of
    each event were written.

    The bulk writers (the fixture loader, the scale generator) use it; ``price_upsert`` is the
    same rule for one price.
    """
    created: dict[PriceKey, dict[str, Any]] = {}
    moved: dict[PriceKey, Price] = {}
    history: list[dict[str, Any]] = []
    events: dict[str, int] = {}
    for key, incoming in offers:
        row = created.get(key)
        existing = stored.get(key)
        if row is None and existing is None:
            # Plain rows, not model instances: building those costs more than writing them.
            values = incoming.create_values()
            run = values.pop("scrape_run")
            row = {
                "instance_type_id": key[0], "region_id": key[1], "pricing_model": key[2],
                "scrape_run_id": run.pk if run else None, **values,
            }  # fmt: skip
            created[key] = row
            history.append(
                price_history_values(
                    row,
                    event=choices.PriceEvent.APPEARED,
                    previous_amount=None,
                    source=row["source"],
                    scrape_run_id=row["scrape_run_id"],
                )
            )
            continue
        price = existing if existing is not None else Price(**(row or {}))
        change = price_change_apply(price, incoming)
        if not change.moved:
            continue
        if row is None:
            moved[key] = price
        else:  # a price this call creates: its row takes the new values
            created[key] = {name: getattr(price, name) for name in (*row, *_PRICE_WRITABLE)}
        if change.event:
            history.append(
                _history_values(price, change.event, previous_amount=change.previous_amount)
            )
    rows_insert(Price, list(created.values()))
    now = timezone.now()
    for price in moved.values():
        price.updated_at = now  # the planner's caches read it
    rows_update(
        Price,
        [
            {"id": p.pk, **{name: getattr(p, name) for name in _PRICE_WRITABLE}}
            for p in moved.values()
        ],
        _PRICE_WRITABLE,
        constants={"updated_at": now},
    )
    rows_insert(PriceHistory, history)
    for row in history:
        events[row["event"]] = events.get(row["event"], 0) + 1
    return events


# --- Bulk row writers (the bulk price writers and the scrapers' ingest) ----------------------


def rows_insert(model: Any, rows: list[dict[str, Any]], *, versions: bool = True) -> None:
    """Insert new rows given as {attname: value}: on PostgreSQL with COPY (bulk_create spends
    ~100 us a row on model instances and value preparation), elsewhere with bulk_create.
    Fields left out take their defaults; auto_now fields the time of the insert. New prices
    move their providers' ``prices_version`` (``prices_version_move``) unless ``versions`` is
    false: the caller moves them itself in the same transaction (the ingest, once per call).
    A writer that knows its columns beforehand uses ``RowsWriter`` itself (no dict a row)."""
    if not rows:
        return
    named = {name for row in rows for name in row}
    columns = [f.attname for f in model._meta.concrete_fields if f.attname in named]
    writer = RowsWriter(model, columns, versions=versions)
    add, defaults = writer.add, writer.defaults
    for row in rows:
        add(*[row.get(name, default) for name, default in defaults])
    writer.write()


class RowsWriter:
    """New rows of ``model`` collected one at a time, each given as the values of ``columns``
    in that order, and inserted by ``write``. Every other column takes its value from
    ``constants`` ({attname: value}), else its default (auto_now fields: the time the writer
    was made). New prices move their providers' ``prices_version`` (``prices_version_move``)
    unless ``versions`` is false, as for ``rows_insert``.

    On PostgreSQL a row becomes its COPY text line as it is added, by one ``str.format`` of a
    template that already holds the other columns' text: a value is converted only as its
    column needs (text escaped, NULL, JSON, times, booleans; keys and numbers as ``str`` writes
    them). A price row costs about a third of a join of every column's converted value.
    Elsewhere the rows are kept for one ``bulk_create``.

    ``stream``: on PostgreSQL the lines go to the database in chunks while rows are still being
    added, in a COPY left open between them, so PostgreSQL inserts while the caller works out
    the next rows (the two run on different cores). The connection is then busy until
    ``write``: a caller that must query in between calls ``pause`` first (the next chunk opens
    another COPY). Use the writer as a context manager, so that an error leaves no COPY open.
    """

    # Rows per chunk handed to psycopg: small enough that a provider's few thousand new prices
    # start streaming early (at 2,000 the bench's median provider sent nothing before write).
    chunk = 250

    def __init__(
        self,
        model: Any,
        columns: Iterable[str],
        constants: Mapping[str, Any] | None = None,
        *,
        versions: bool = True,
        stream: bool = False,
    ) -> None:
        self.model = model
        self.columns = tuple(columns)
        fields = {f.attname: f for f in model._meta.concrete_fields if not f.primary_key}
        given = dict(constants or {})
        unknown = [name for name in (*self.columns, *given) if name not in fields]
        if unknown:
            raise ValueError(f"{model.__name__} has no column {', '.join(unknown)}")
        now = timezone.now()
        self._constants: dict[str, Any] = {}
        for name, f in fields.items():
            if name in self.columns:
                continue
            if name in given:
                self._constants[name] = given[name]
            elif getattr(f, "auto_now", False) or getattr(f, "auto_now_add", False):
                self._constants[name] = now
            else:
                self._constants[name] = f.get_default()  # "" for text fields without a default
        # (column, default): what rows_insert gives a row that leaves the column out.
        self.defaults = [(name, fields[name].get_default()) for name in self.columns]
        self._rows: list[Any] = []
        self._written = 0
        # The instance types of new prices, whose providers' prices_version moves on write.
        self._owners: set[int] | None = None
        self._owner_at = -1
        if model is Price and versions:
            self._owners = set()
            if "instance_type_id" in self.columns:
                self._owner_at = self.columns.index("instance_type_id")
            else:
                self._owners.add(self._constants["instance_type_id"])
        self._postgresql = connection.vendor == "postgresql"
        self._stream = stream and self._postgresql
        self._copy: ExitStack | None = None  # the open COPY, while streaming
        self._send: Any = None
        if self._postgresql:
            self._copy_prepare(fields)

    def __len__(self) -> int:
        """Rows added since the last ``write`` (sent or not)."""
        return self._written + len(self._rows)

    def __enter__(self) -> RowsWriter:
        return self

    def __exit__(self, kind: Any, error: Any, trace: Any) -> None:
        if self._copy is not None:  # an error before write: the COPY fails with it
            copy, self._copy = self._copy, None
            copy.__exit__(kind, error, trace)

    def _copy_prepare(self, fields: dict[str, models.Field]) -> None:
        places, converters, order = [], [], []
        for name, f in fields.items():
            convert = _copy_converter(f)
            if name in self.columns:
                places.append("{}")
                converters.append(convert)
                order.append(self.columns.index(name))
            else:
                places.append(convert(self._constants[name]).replace("{", "{{").replace("}", "}}"))
        self._template = "\t".join(places)
        self._converters = converters
        # The template follows the table's column order; values arrive in the caller's.
        self._order = None if order == sorted(order) else order
        quote = connection.ops.quote_name
        self._sql = "COPY {} ({}) FROM STDIN".format(
            quote(self.model._meta.db_table), ", ".join(quote(f.column) for f in fields.values())
        )

    def add(self, *values: Any) -> None:
        """One row: the values of ``columns``, in their order."""
        if len(values) != len(self.columns):
            raise TypeError(f"{len(self.columns)} values expected, {len(values)} given")
        if self._owner_at >= 0:
            self._owners.add(values[self._owner_at])  # type: ignore[union-attr]
        if not self._postgresql:
            self._rows.append(dict(zip(self.columns, values, strict=True)))
            return
        if self._order is not None:
            values = tuple(values[i] for i in self._order)
        rows = self._rows
        rows.append(self._template.format(*map(call, self._converters, values)))
        if self._stream and len(rows) >= self.chunk:
            self._send_rows()

    def _send_rows(self) -> None:
        """Hand the lines kept so far to an open COPY (opened here if none is)."""
        rows, self._rows = self._rows, []
        if not rows:
            return
        if self._copy is None:
            connection.ensure_connection()
            stack = ExitStack()
            try:
                # Django's error classes, as through its cursors (a refused key is an
                # IntegrityError).
                stack.enter_context(connection.wrap_database_errors)
                cursor = stack.enter_context(connection.connection.cursor())
                self._send = stack.enter_context(cursor.copy(self._sql)).write
                # psycopg holds the connection's lock for the whole COPY: a query meanwhile
                # would wait for it forever. Refused at once instead, naming the fix.
                stack.enter_context(connection.execute_wrapper(_no_query_while_copying))
            except BaseException:
                stack.close()
                raise
            self._copy = stack
        self._written += len(rows)
        for start in range(0, len(rows), self.chunk):
            chunk = rows[start : start + self.chunk]
            chunk.append("")
            self._send("\n".join(chunk))

    def pause(self) -> None:
        """End the open COPY, if any (its rows are then in the table): the connection is free
        for another statement. Adding more rows opens a new one."""
        if self._copy is not None:
            copy, self._copy = self._copy, None
            copy.close()

    def write(self) -> None:
        """Insert the rows added so far (the writer is then empty)."""
        if not self._postgresql:
            rows, self._rows = self._rows, []
            if rows:  # Price.objects.bulk_create moves the versions itself
                model = self.model
                model.objects.bulk_create(
                    [model(**self._constants, **row) for row in rows], batch_size=1000
                )
            return
        self._send_rows()
        self.pause()
        self._written = 0
        if self._owners:
            prices_version_move(instance_type_ids=self._owners)
            if self._owner_at >= 0:
                self._owners = set()


def _no_query_while_copying(*args: Any) -> Any:
    raise RuntimeError(
        "a query while RowsWriter streams rows in an open COPY: call its pause() first"
    )


# COPY text format: NULL is \N; a backslash, tab, newline or carriage return in a value is
# written as its backslash escape (every other character stands for itself).
_COPY_NULL = "\\N"
_COPY_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})
_COPY_BOOLEANS = {True: "t", False: "f", None: _COPY_NULL}


def _copy_text(value: Any) -> str:
    if value is None:
        return _COPY_NULL
    try:
        if "\\" in value or "\t" in value or "\n" in value or "\r" in value:
            return value.translate(_COPY_ESCAPES)
    except TypeError:  # not text (a number in a text column): its text
        return _copy_text(str(value))
    return value  # a choices member joins as its value


def _copy_number(value: Any) -> str:
    return _COPY_NULL if value is None else str(value)


def _copy_converter(field: models.Field) -> Any:
    """The function that writes a value of ``field`` as COPY text (the column's type casts the
    text, as it does psycopg's text dumpers'). Times repeat within a batch (one observed_at per
    refresh), so a time column keeps the texts it made."""
    kind = field.get_internal_type()
    if kind == "BooleanField":
        return _COPY_BOOLEANS.__getitem__
    if kind == "JSONField":
        encoder = getattr(field, "encoder", None)  # models.JSONField's; None: json's default

        def document(value: Any) -> str:
            if type(value) is dict and not value:  # the usual extra
                return "{}"
            return _copy_text(None if value is None else json_dumps(value, cls=encoder))

        return document  # None: SQL NULL, as Django saves it
    if kind in ("DateTimeField", "DateField"):
        made: dict[Any, str] = {}

        def instant(value: Any) -> str:
            found = made.get(value)
            if found is None:
                found = made[value] = _COPY_NULL if value is None else value.isoformat()
            return found

        return instant
    if kind in ("CharField", "TextField", "SlugField", "URLField", "EmailField"):
        return _copy_text
    if field.null:
        return _copy_number
    return str  # integers, keys, decimals


def rows_update(
    model: Any,
    rows: list[dict[str, Any]],
    fields: list[str],
    *,
    constants: dict[str, Any] | None = None,
    versions: bool = True,
) -> None:
    """Write per-row values of ``fields`` (rows given as {"id": ..., field: value}) and the same
    ``constants`` ({attname: value}) to every row: on PostgreSQL one ``UPDATE ... FROM
    unnest(...)`` whose columns are sent as one array literal each (bulk_update's CASE WHEN
    grows with the square of the batch; a VALUES list costs psycopg seconds to assemble; a
    temporary table filled by COPY costs its CREATE and DROP, ~2 ms of catalog writes, on every
    call, more than the update of a provider's few changed prices), elsewhere bulk_update.
    Prices written move their providers' ``prices_version`` (``prices_version_move``) unless
    ``versions`` is false (as for ``rows_insert``)."""
    if not rows:
        return
    constants = constants or {}
    if connection.vendor != "postgresql":
        objs = [
            model(pk=row["id"], **{name: row[name] for name in fields}, **constants) for row in rows
        ]
        names = fields + [model._meta.get_field(a).name for a in constants if a not in fields]
        model.objects.bulk_update(objs, names, batch_size=500)  # Price's moves the versions
        return
    meta = model._meta
    quote = connection.ops.quote_name
    columns = [meta.get_field(name) for name in fields]
    fixed = [f for f in meta.concrete_fields if f.attname in constants]
    assignments = ", ".join(
        [f"{quote(c.column)} = v.{quote(c.column)}" for c in columns]
        + [f"{quote(f.column)} = %s" for f in fixed]
    )
    fixed_params = [f.get_db_prep_save(constants[f.attname], connection) for f in fixed]
    arrays = ", ".join(["%s::bigint[]"] + [f"%s::{c.db_type(connection)}[]" for c in columns])
    aliases = ", ".join(["id"] + [quote(c.column) for c in columns])
    params = [_array_literal([row["id"] for row in rows])]
    for c in columns:
        encoder = c.encoder if c.get_internal_type() == "JSONField" else None
        json_column = c.get_internal_type() == "JSONField"
        params.append(
            _array_literal([row[c.attname] for row in rows], json=json_column, encoder=encoder)
        )
    sql = (
        f"UPDATE {quote(meta.db_table)} AS p SET {assignments} "  # noqa: S608
        f"FROM unnest({arrays}) AS v({aliases}) WHERE p.id = v.id"
    )
    if model is Price and versions:
        # The owners' prices_version moves in the same statement (prices_version_move), from
        # the rows written: no second look-up of the prices by id.
        sql = (
            f"WITH written AS ({sql} RETURNING p.instance_type_id) "  # noqa: S608
            "UPDATE catalog_provider SET prices_version = prices_version + 1 WHERE id IN "
            "(SELECT provider_id FROM catalog_instancetype WHERE id IN "
            "(SELECT instance_type_id FROM written))"
        )
    with connection.cursor() as cursor:
        cursor.execute(sql, fixed_params + params)


def _array_literal(
    values: list[Any], *, json: bool = False, encoder: type[JSONEncoder] | None = None
) -> str:
    """A PostgreSQL array literal of ``values`` (None as NULL; text, times and JSON quoted, with
    backslashes and double quotes escaped), cast by the caller to the column's array type.
    ``json``: every value is a JSON document (a JSON column may hold a bare string), written
    with the column's ``encoder``."""

    def element(value: Any) -> str:
        if value is None:
            return "NULL"
        if json:
            value = json_dumps(value, cls=encoder)
        elif value is True or value is False:
            return "t" if value else "f"
        elif isinstance(value, int | float | Decimal):
            return str(value)
        elif isinstance(value, datetime | date):
            value = value.isoformat()
        elif not isinstance(value, str):
            raise TypeError(f"no array literal for {type(value).__name__} {value!r}")
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'

    if not json and all(type(value) in _PLAIN_NUMBERS for value in values):
        # ids and amounts, the usual columns: no quoting, no per-value call
        return "{" + ",".join(map(str, values)) + "}"
    return "{" + ",".join(map(element, values)) + "}"


_PLAIN_NUMBERS = frozenset({int, Decimal})


# The columns ``price_change_apply`` may set on a stored price.
_PRICE_WRITABLE = [
    "amount", "currency", "unit", "usd_per_hour", "usd_per_gpu_hour", "observed_at", "source",
    "source_url", "source_note", "scrape_run_id", "gone_at", "missed_runs", "locked",
]  # fmt: skip


# --- Curator price sheets ------------------------------------------------------------------

PRICE_SHEET_COLUMNS = (
    "provider",
    "instance_type",
    "region",
    "pricing_model",
    "amount",
    "currency",
    "unit",
    "observed_at",
    "source_url",
    "locked",
)
_REQUIRED_COLUMNS = PRICE_SHEET_COLUMNS[:6]


@dataclass
class SheetReport:
    """What a price sheet import did, or why it did nothing."""

    rows: int = 0
    errors: list[str] = field(default_factory=list)
    events: dict[str, int] = field(default_factory=dict)
    applied: bool = False


def price_sheet_import(*, text: str, now: datetime | None = None) -> SheetReport:
    """Apply a curator's CSV price sheet all or nothing.

    Every row is validated first; any bad row rejects the whole sheet, each error naming its line.
    Applied prices are marked as curator prices and locked when the ``locked`` column says so.
    """
    now = now or timezone.now()
    report = SheetReport()
    reader = csv.DictReader(io.StringIO(text.lstrip("\ufeff")))
    missing = [c for c in _REQUIRED_COLUMNS if c not in (reader.fieldnames or [])]
    if missing:
        report.errors.append(f"line 1: missing column(s): {', '.join(missing)}")
        return report
    rates = currency_rates_latest()
    providers = {p.slug: p for p in Provider.objects.all()}
    instances = {
        (i.provider.slug, i.name): i for i in InstanceType.objects.select_related("provider")
    }
    regions = {(r.provider.slug, r.code): r for r in Region.objects.select_related("provider")}
    parsed: list[dict[str, Any]] = []
    seen = set()
    for line, row in enumerate(reader, start=2):
        report.rows += 1
        problems, item = _sheet_row_parse(row, providers, instances, regions, rates, now)
        key = item and (item["instance_type"].pk, item["region"].pk, item["pricing_model"])
        if key and key in seen:
            problems.append("duplicates an earlier row")
        seen.add(key)
        if problems:
            report.errors.append(f"line {line}: " + "; ".join(problems))
        elif item is not None:  # always, when a row has no problems
            parsed.append(item)
    if report.errors or not parsed:
        if not parsed and not report.errors:
            report.errors.append("the sheet has no rows")
        return report
    with transaction.atomic():
        for item in parsed:
            result = price_upsert(source=choices.PriceSource.CURATOR, rates=rates, **item)
            event = result.event or "unchanged"
            report.events[event] = report.events.get(event, 0) + 1
    report.applied = True
    return report


def _sheet_row_parse(
    row: dict[str, str | None],
    providers: dict[str, Provider],
    instances: dict[tuple[str, str], InstanceType],
    regions: dict[tuple[str, str], Region],
    rates: dict[str, Decimal],
    now: datetime,
) -> tuple[list[str], dict[str, Any] | None]:
    problems: list[str] = []
    get = lambda name: (row.get(name) or "").strip()  # noqa: E731
    provider = get("provider")
    if provider not in providers:
        problems.append(f"provider: unknown {provider!r}")
    instance = instances.get((provider, get("instance_type")))
    if provider in providers and instance is None:
        problems.append(
            f"instance_type: {get('instance_type')!r} is not a {provider} instance type"
        )
    region = regions.get((provider, get("region")))
    if provider in providers and region is None:
        problems.append(f"region: {get('region')!r} is not a {provider} region")
    pricing_model = get("pricing_model")
    currency = get("currency").upper()
    unit = get("unit") or choices.PriceUnit.HOUR
    figure_problems = price_figures_problems(
        amount=get("amount"), currency=currency, unit=unit, pricing_model=pricing_model, rates=rates
    )
    problems.extend(figure_problems)
    amount = (
        None if any(p.startswith("amount:") for p in figure_problems) else Decimal(get("amount"))
    )
    observed_at = now
    if get("observed_at"):
        try:
            observed_at = _as_datetime(get("observed_at"))
        except ValueError:
            problems.append(f"observed_at: {get('observed_at')!r} is not an ISO date")
    if observed_at > now:
        problems.append("observed_at: is in the future")
    locked_text = get("locked").lower()
    if locked_text not in ("", "true", "false", "yes", "no", "1", "0"):
        problems.append(f"locked: {get('locked')!r} is not true or false")
    if problems:
        return problems, None
    return problems, {
        "instance_type": instance,
        "region": region,
        "pricing_model": pricing_model,
        "amount": amount,
        "currency": currency,
        "unit": unit,
        "observed_at": observed_at,
        "source_url": get("source_url"),
        "lock": None if locked_text == "" else locked_text in ("true", "yes", "1"),
    }
