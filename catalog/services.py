"""Writes to the catalog: loading curated fixtures, upserting prices with history, curator imports.

Only these functions (and the scrapers' ingest service, which calls ``price_upsert``) write prices.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from pathlib import Path
from typing import Any

import yaml
from django.db import models, transaction
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
    *, amount: Decimal, currency: str, unit: str, gpu_count: Decimal, rates: dict[str, Decimal]
) -> tuple[Decimal, Decimal]:
    """USD per hour and per GPU-hour of an amount quoted in ``currency`` per ``unit``.

    A month counts 730 hours and a year 8,760 (see ``choices.HOURS_PER_UNIT``).
    """
    if currency not in rates:
        raise CatalogDataError(f"no exchange rate for currency {currency!r}")
    if unit not in choices.HOURS_PER_UNIT:
        raise CatalogDataError(f"unknown unit {unit!r}")
    usd_per_hour = Decimal(amount) * rates[currency] / Decimal(choices.HOURS_PER_UNIT[unit])
    per_gpu = usd_per_hour / Decimal(gpu_count)
    return (
        usd_per_hour.quantize(SIX_PLACES, ROUND_HALF_UP),
        per_gpu.quantize(SIX_PLACES, ROUND_HALF_UP),
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


def _write(model: type[models.Model], values: dict[str, Any], **lookup: Any) -> models.Model:
    """``update_or_create`` that writes nothing when the stored row already holds ``values``."""
    obj = model.objects.filter(**lookup).first()
    if obj is None:
        return model.objects.create(**lookup, **values)
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
    usd_per_hour, usd_per_gpu_hour = price_normalise(
        amount=amount,
        currency=currency,
        unit=unit,
        gpu_count=instance_type.gpu_count,
        rates=rates,
    )
    amount = Decimal(amount).quantize(SIX_PLACES, ROUND_HALF_UP)
    existing = (
        Price.objects.select_for_update()
        .filter(instance_type=instance_type, region=region, pricing_model=pricing_model)
        .first()
    )
    if existing is None:
        price = Price.objects.create(
            instance_type=instance_type,
            region=region,
            pricing_model=pricing_model,
            amount=amount,
            currency=currency,
            unit=unit,
            usd_per_hour=usd_per_hour,
            usd_per_gpu_hour=usd_per_gpu_hour,
            observed_at=observed_at,
            source=source,
            source_url=source_url,
            source_note=source_note,
            scrape_run=scrape_run,
            locked=bool(lock),
        )
        _history_append(price, choices.PriceEvent.APPEARED, previous_amount=None)
        return UpsertResult(price, choices.PriceEvent.APPEARED)

    if existing.locked and source != choices.PriceSource.CURATOR:
        return UpsertResult(existing, None, "locked by a curator")
    if source == choices.PriceSource.FIXTURE and existing.observed_at > observed_at:
        return UpsertResult(existing, None, "a newer observation is stored")

    changed = (existing.amount, existing.currency, existing.unit) != (amount, currency, unit)
    came_back = existing.gone_at is not None
    previous_amount = existing.amount
    values = {
        "amount": amount,
        "currency": currency,
        "unit": unit,
        "usd_per_hour": usd_per_hour,
        "usd_per_gpu_hour": usd_per_gpu_hour,
        "observed_at": max(existing.observed_at, observed_at),
        "source": source,
        "source_url": source_url or existing.source_url,
        "source_note": source_note or existing.source_note,
        "scrape_run": scrape_run or existing.scrape_run,
        "gone_at": None,
        "missed_runs": 0,
    }
    if lock is not None:
        values["locked"] = lock
    if not _assign_changes(existing, values):
        return UpsertResult(existing, None)  # nothing to write: updated_at stays
    existing.save()
    event = None
    if came_back:
        event = choices.PriceEvent.REAPPEARED
    elif changed:
        event = choices.PriceEvent.CHANGED
    if event:
        _history_append(existing, event, previous_amount=previous_amount)
    return UpsertResult(existing, event)


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
    """Column values of a PriceHistory row for a price given as its column values.

    Shared by ``price_upsert`` (one row) and the scrapers' bulk ingest (rows by the thousand).
    """
    values = {column: price[column] for column in HISTORY_COLUMNS}
    values.update(
        event=event, previous_amount=previous_amount, source=source, scrape_run_id=scrape_run_id
    )
    return values


def _history_append(price: Price, event: str, *, previous_amount: Decimal | None) -> None:
    columns = {column: getattr(price, column) for column in HISTORY_COLUMNS}
    PriceHistory.objects.create(
        **price_history_values(
            columns, event=event, previous_amount=previous_amount, source=price.source,
            scrape_run_id=price.scrape_run_id,
        )
    )  # fmt: skip


def prices_renormalise() -> int:
    """Recompute USD figures of every current price from the newest currency rates.

    Run after new rates arrive; returns how many prices moved.
    """
    rates = currency_rates_latest()
    now = timezone.now()
    moved = []
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
                price.usd_per_hour, price.usd_per_gpu_hour = usd_per_hour, usd_per_gpu_hour
                price.updated_at = now  # bulk_update skips auto_now; the answer cache reads it
                moved.append(price)
        Price.objects.bulk_update(
            moved, ["usd_per_hour", "usd_per_gpu_hour", "updated_at"], batch_size=1000
        )
    return len(moved)


# --- GPU names -----------------------------------------------------------------------------


def unmatched_gpu_name_record(
    *, provider: Provider, name: str, example: dict[str, Any] | None = None
) -> UnmatchedGPUName:
    """Queue a GPU name nobody knows for a curator, counting how often it is seen."""
    key = normalise_gpu_name(name)
    item, created = UnmatchedGPUName.objects.get_or_create(
        provider=provider, normalised=key, defaults={"name": name, "example": example or {}}
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


def _read_yaml(path: Path) -> Any:
    try:
        with path.open(encoding="utf-8") as fh:
            return yaml.safe_load(fh)
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


def _load_provider(path: Path, rates: dict[str, Decimal], report: LoadReport) -> None:
    data = _read_yaml(path) or {}
    meta = data["provider"]
    provider = _write(Provider, _pick(meta, PROVIDER_FIELDS), slug=meta["slug"])
    report.add("providers")
    regions = {}
    for row in data.get("regions") or []:
        regions[row["code"]] = _write(
            Region, _pick(row, REGION_FIELDS), provider=provider, code=row["code"]
        )
        report.add("regions")
    gpus = {gpu.slug: gpu for gpu in GPU.objects.all()}
    links = {link.slug: link for link in Interconnect.objects.all()}
    instances = {}
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
        instances[row["name"]] = _write(InstanceType, values, provider=provider, name=row["name"])
        report.add("instance_types")
    for row in data.get("prices") or []:
        where = f"{path.name}: price {row.get('instance_type')!r} in {row.get('region')!r}"
        if row.get("instance_type") not in instances:
            raise CatalogDataError(f"{where}: unknown instance type")
        if row.get("region") not in regions:
            raise CatalogDataError(f"{where}: unknown region")
        result = price_upsert(
            instance_type=instances[row["instance_type"]],
            region=regions[row["region"]],
            pricing_model=row["pricing_model"],
            amount=Decimal(str(row["amount"])),
            currency=row["currency"],
            unit=row.get("unit", "hour"),
            observed_at=_as_datetime(row["observed_at"]),
            source=choices.PriceSource.FIXTURE,
            source_url=row.get("source_url") or "",
            source_note=(row.get("source") or "")[:500],
            rates=rates,
        )
        report.add("prices")
        if result.event:
            report.add(f"prices_{result.event}")


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
    parsed = []
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
        else:
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


def _sheet_row_parse(row, providers, instances, regions, rates, now):
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
    if pricing_model not in choices.PricingModel.values:
        problems.append(
            f"pricing_model: {pricing_model!r} is not one of {', '.join(choices.PricingModel.values)}"
        )
    try:
        amount = Decimal(get("amount"))
        if not amount.is_finite() or amount < 0 or amount > MAX_AMOUNT:
            raise InvalidOperation
    except InvalidOperation:
        amount = None
        problems.append(f"amount: {get('amount')!r} is not a number from 0 to {MAX_AMOUNT:,.0f}")
    currency = get("currency").upper()
    if currency not in rates:
        problems.append(f"currency: no exchange rate for {currency!r}")
    unit = get("unit") or choices.PriceUnit.HOUR
    if unit not in choices.PriceUnit.values:
        problems.append(f"unit: {unit!r} is not one of {', '.join(choices.PriceUnit.values)}")
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
