"""The ingest service: the only writer of scraped prices.

A refresh fetches a provider's source, parses it (pure), then in ONE transaction validates,
normalises, maps GPU names through aliases, upserts current prices with history, quarantines
suspicious figures, respects curator locks and marks prices that stopped appearing as gone. A
failed fetch or parse writes nothing but the failed ScrapeRun.
"""

from __future__ import annotations

import json
import logging
import threading
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal, InvalidOperation
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db import IntegrityError, connection, transaction
from django.db.models import Case, F, Q, QuerySet, TextField, Value, When
from django.db.models.functions import Cast
from django.utils import timezone

from catalog import choices
from catalog.gpu_names import normalise_gpu_name
from catalog.models import (
    GPU,
    GPUAlias,
    InstanceType,
    Price,
    Provider,
    QuarantinedPrice,
    ScrapeRun,
)
from catalog.selectors import currency_rates_latest
from catalog.services import (
    CatalogDataError,
    RowsWriter,
    price_figures_changed,
    price_figures_ok,
    price_figures_problems,
    price_history_writer,
    price_normalise,
    prices_version_move,
    rows_update,
    unmatched_gpu_name_record,
)

from .base import HttpClient, Page, ParseNote, PriceRecord, Scraper, parse_pages
from .registry import http_client, scraper_for

logger = logging.getLogger(__name__)
SIX = Decimal("0.000001")
MAX_PROBLEMS_KEPT = 50
MAX_WARNINGS_KEPT = 100


class RefreshInProgress(RuntimeError):
    """Another refresh of the same provider is running."""


@dataclass
class IngestReport:
    records_seen: int = 0
    created: int = 0
    changed: int = 0
    unchanged: int = 0
    quarantined: int = 0
    unmatched: int = 0
    gone: int = 0
    locked: int = 0
    skipped: int = 0
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def problem(self, text: str) -> None:
        self.skipped += 1
        if len(self.problems) < MAX_PROBLEMS_KEPT:
            self.problems.append(text)

    def warn(self, text: str) -> None:
        """Drift a curator must see (an unmapped name); kept on the run's ``warnings``."""
        if text not in self.warnings and len(self.warnings) < MAX_WARNINGS_KEPT:
            self.warnings.append(text)


# --- Locks ---------------------------------------------------------------------------------


def _lease_seconds() -> int:
    return settings.SCRAPE_LEASE_SECONDS


def _lock_key(slug: str) -> str:
    return f"scrape-lock:{slug}"


@contextmanager
def provider_lock(slug: str, *, timeout_s: int | None = None) -> Iterator[None]:
    """A cache lock (atomic SET NX on Redis) so one provider is never refreshed twice at once.

    The lock is a lease of ``SCRAPE_LEASE_SECONDS``, renewed by a heartbeat thread while the refresh
    runs: if the worker dies, it lapses within a lease and the run can be found abandoned
    (``abandoned_runs_fail``). The database adds a second guard: a unique constraint allows one
    running ScrapeRun per provider.
    """
    key = _lock_key(slug)
    token = uuid.uuid4().hex
    lease_s = timeout_s or _lease_seconds()
    if not cache.add(key, token, timeout=lease_s):
        raise RefreshInProgress(f"a refresh of {slug} is already running")
    stop = threading.Event()

    def heartbeat() -> None:
        while not stop.wait(lease_s / 3):
            try:
                if cache.get(key) == token:
                    cache.touch(key, lease_s)
            except Exception:  # a missed beat only shortens the lease; the next one may land
                logger.warning("refresh lease of %s not renewed", slug, exc_info=True)

    beat = threading.Thread(target=heartbeat, name=f"lease-{slug}", daemon=True)
    beat.start()
    try:
        yield
    finally:
        stop.set()
        beat.join(timeout=5)
        if cache.get(key) == token:
            cache.delete(key)


def abandoned_runs_fail(slug: str | None = None) -> list[ScrapeRun]:
    """Mark failed every running run whose lease lapsed (its worker died): started more than a
    lease ago and no lock held for its provider. Returns the runs it failed."""
    now = timezone.now()
    lease_s = _lease_seconds()
    running = ScrapeRun.objects.filter(
        status=choices.ScrapeStatus.RUNNING, started_at__lt=now - timedelta(seconds=lease_s)
    ).select_related("provider")
    if slug is not None:
        running = running.filter(provider__slug=slug)
    failed = []
    for run in running:
        if cache.get(_lock_key(run.provider.slug)) is not None:
            continue  # a live worker still renews its lease
        error = f"abandoned: the worker died mid-run (no heartbeat for {lease_s} s)"
        updated = ScrapeRun.objects.filter(pk=run.pk, status=choices.ScrapeStatus.RUNNING).update(
            status=choices.ScrapeStatus.FAILED, finished_at=now, error=error
        )
        if updated:
            logger.warning(
                "refresh run %s of %s abandoned by its worker", run.pk, run.provider.slug
            )
            run.status, run.finished_at, run.error = choices.ScrapeStatus.FAILED, now, error
            failed.append(run)
    return failed


def scrape_run_start(*, provider: Provider, trigger: str) -> ScrapeRun:
    """Open a run, failing if one is already running (runs older than the time limit are abandoned)."""
    now = timezone.now()
    abandoned_before = now - timedelta(seconds=settings.CELERY_TASK_TIME_LIMIT * 2)
    ScrapeRun.objects.filter(
        provider=provider, status=choices.ScrapeStatus.RUNNING, started_at__lt=abandoned_before
    ).update(
        status=choices.ScrapeStatus.FAILED, finished_at=now, error="abandoned: worker died mid-run"
    )
    try:
        with transaction.atomic():
            return ScrapeRun.objects.create(
                provider=provider,
                started_at=now,
                status=choices.ScrapeStatus.RUNNING,
                trigger=trigger,
            )
    except IntegrityError as exc:
        raise RefreshInProgress(f"a refresh of {provider.slug} is already running") from exc


# --- Refresh -------------------------------------------------------------------------------


def provider_refresh(
    *,
    provider_slug: str,
    trigger: str = "manual",
    client: HttpClient | None = None,
    scraper: Scraper | None = None,
) -> ScrapeRun:
    """Fetch, parse and ingest one provider's prices; never loses stored prices on failure."""
    provider = Provider.objects.get(slug=provider_slug)
    scraper = scraper or scraper_for(provider.scraper_key or provider.slug)
    abandoned_runs_fail(provider.slug)  # a run whose worker died no longer blocks this one
    with provider_lock(provider.slug):
        run = scrape_run_start(provider=provider, trigger=trigger)
        own_client = client is None
        client = client or http_client()
        try:
            # Each page is parsed as it is fetched and then let go: a source of many pages, or
            # of a few very large ones (spooled to disk), is never held whole.
            parsed = parse_pages(scraper, _counted(run, scraper.fetch(client)))
            records = parsed.records
            run.gpu_names = sorted({r.gpu_name for r in records})
            run.warnings = notes_record(provider=provider, notes=parsed.unmatched())
            held = refresh_hold_reason(provider=provider, records=records, run=run)
            if held:
                run.status = choices.ScrapeStatus.HELD
                run.held_reason = held
                run.records_seen = len(records)
                run.held_records = [r.as_json() for r in records]
            else:
                report = prices_ingest(
                    provider=provider, run=run, records=records, observed_at=run.started_at,
                    pricing_models=scraper.pricing_models(),
                )  # fmt: skip
        except Exception as exc:  # any failure: the run says why, stored prices stay as they were
            logger.exception("refresh of %s failed", provider.slug)
            run.status = choices.ScrapeStatus.FAILED
            run.error = f"{type(exc).__name__}: {exc}"[:2000]
        else:
            if not held:
                _finish(run, report)
            else:
                logger.warning("refresh of %s held: %s", provider.slug, held)
        finally:
            if own_client:
                client.close()
            run.finished_at = timezone.now()
            run.save()
    return run


def _counted(run: ScrapeRun, pages: Iterator[Page]) -> Iterator[Page]:
    """The pages, counted into ``run.pages`` as they are fetched."""
    for page in pages:
        run.pages += 1
        yield page


def _copy_counts(run: ScrapeRun, report: IngestReport) -> None:
    for name in ScrapeRun.COUNT_FIELDS:
        setattr(run, name, getattr(report, name))


def _finish(run: ScrapeRun, report: IngestReport) -> None:
    """A run whose records were ingested: counts, status, problems and warnings from the report."""
    _copy_counts(run, report)
    run.status = choices.ScrapeStatus.PARTIAL if report.problems else choices.ScrapeStatus.SUCCESS
    run.error = "\n".join(report.problems)
    run.warnings = list(dict.fromkeys([*run.warnings, *report.warnings]))[:MAX_WARNINGS_KEPT]


# --- Drift ---------------------------------------------------------------------------------


def notes_record(*, provider: Provider, notes: list[ParseNote]) -> list[str]:
    """File a parser's unmatched names in the unmatched-names queue; their texts as warnings."""
    warnings: list[str] = []
    for note in notes:
        unmatched_gpu_name_record(
            provider=provider, name=note.name, kind=note.category or choices.UnmatchedKind.GPU,
            example={"reason": note.reason},
        )  # fmt: skip
        if len(warnings) < MAX_WARNINGS_KEPT:
            warnings.append(note.text())
    return warnings


def last_good_run(provider: Provider, *, before: ScrapeRun | None = None) -> ScrapeRun | None:
    """The provider's newest run whose records were ingested (the baseline for drift)."""
    runs = ScrapeRun.objects.filter(provider=provider, status__in=choices.GOOD_SCRAPE_STATUSES)
    if before is not None and before.pk:
        runs = runs.exclude(pk=before.pk)
    return runs.order_by("-started_at", "-pk").first()


def refresh_hold_reason(
    *, provider: Provider, records: list[PriceRecord], run: ScrapeRun | None = None
) -> str:
    """Why a refresh looks like drift and must wait for a curator; "" when it may be ingested.

    Held when it reads fewer records than SCRAPE_HOLD_BELOW_SHARE of the last good run, or when
    a GPU name the last good run read is missing (a dropped row, a renamed field or SKU).
    """
    baseline = last_good_run(provider, before=run)
    if baseline is None:
        return ""  # the first refresh has nothing to fall short of
    share = Decimal(str(settings.SCRAPE_HOLD_BELOW_SHARE))
    reasons = []
    if baseline.records_seen and len(records) < share * baseline.records_seen:
        reasons.append(
            f"{len(records)} records, below {share:.0%} of the {baseline.records_seen} "
            f"of the last good run ({baseline.started_at:%Y-%m-%d %H:%M})"
        )
    lost = sorted(set(baseline.gpu_names or []) - {r.gpu_name for r in records})
    if lost:
        shown = ", ".join(lost[:10]) + (f" and {len(lost) - 10} more" if len(lost) > 10 else "")
        reasons.append(f"GPU models the last good run had are missing: {shown}")
    return "; ".join(reasons)[:500]


class HeldRunDecisionError(ValueError):
    """A held run that cannot be approved or rejected as asked."""


def held_run_approve(*, run: ScrapeRun, user: str, scraper: Scraper | None = None) -> ScrapeRun:
    """Ingest a held run's records as if the refresh had not been held; its time is its own.

    Refused when the run is not held, or when a newer run already ingested prices (approving
    then would write older figures over newer ones).
    """
    if run.status != choices.ScrapeStatus.HELD or run.held_records is None:
        raise HeldRunDecisionError(f"{run} is not a held run")
    newer = ScrapeRun.objects.filter(
        provider=run.provider,
        status__in=choices.GOOD_SCRAPE_STATUSES,
        started_at__gt=run.started_at,
    ).exists()
    if newer:
        raise HeldRunDecisionError(f"{run}: a newer refresh was ingested since; reject this one")
    provider = run.provider
    scraper = scraper or scraper_for(provider.scraper_key or provider.slug)
    records = [PriceRecord.from_json(data) for data in run.held_records]
    with provider_lock(provider.slug):
        report = prices_ingest(
            provider=provider, run=run, records=records, observed_at=run.started_at,
            pricing_models=scraper.pricing_models(),
        )  # fmt: skip
        _finish(run, report)
        run.held_records = None
        run.decided_at = timezone.now()
        run.decided_by = user
        run.save()
    return run


def held_run_reject(*, run: ScrapeRun, user: str) -> ScrapeRun:
    """Discard a held run: stored prices stay as they were; the run and its records are kept."""
    if run.status != choices.ScrapeStatus.HELD:
        raise HeldRunDecisionError(f"{run} is not a held run")
    run.status = choices.ScrapeStatus.REJECTED
    run.decided_at = timezone.now()
    run.decided_by = user
    run.save(update_fields=["status", "decided_at", "decided_by"])
    return run


# --- Ingest --------------------------------------------------------------------------------


# What the ingest reads of a stored price, as one tuple per price (dicts, or a JSON field's
# parse, of 100,000 prices cost more than the rest of a refresh that finds them unchanged).
_STORED_FIELDS = (
    "id", "instance_type_id", "region_id", "pricing_model", "amount", "currency", "unit",
    "usd_per_hour", "usd_per_gpu_hour", "gone_at", "locked", "extra_text", "missed_runs",
)  # fmt: skip
(
    _ID, _INSTANCE, _REGION, _MODEL, _AMOUNT, _CURRENCY, _UNIT, _USD, _USD_GPU, _GONE, _LOCKED,
    _EXTRA, _MISSED,
) = range(len(_STORED_FIELDS))  # fmt: skip


def _rows(queryset: QuerySet[Any, Any]) -> list[tuple[Any, ...]]:
    """The rows of a ``values_list`` queryset. On PostgreSQL its SQL runs on a plain cursor:
    psycopg already returns what Django would convert these columns to (numbers as Decimal,
    times aware, JSON cast to text), and Django's per-row iteration costs more than the fetch
    (4.0 against 1.7 us a row over 100,000 stored prices)."""
    if connection.vendor != "postgresql":
        return list(queryset)
    sql, params = queryset.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def _stored_prices(instance_ids: list[int], region_ids: list[int]) -> list[tuple[Any, ...]]:
    """The stored prices of these instance types in these regions, as ``_STORED_FIELDS`` tuples,
    locked (FOR UPDATE) for the ingest's transaction.

    On PostgreSQL the ids go as two array literals (``= ANY``): Django's ``IN`` lists of
    thousands of placeholders cost more to build and for psycopg to split than the query runs.
    Elsewhere the same query through the ORM (SQLite has no row locks; its write lock is the
    transaction's).
    """
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT id, instance_type_id, region_id, pricing_model, amount, currency, unit, "
                "usd_per_hour, usd_per_gpu_hour, gone_at, locked, extra::text, missed_runs "
                "FROM catalog_price WHERE instance_type_id = ANY(%s::bigint[]) "
                "AND region_id = ANY(%s::bigint[]) FOR UPDATE",
                [_id_array(instance_ids), _id_array(region_ids)],
            )
            return cursor.fetchall()
    return list(
        Price.objects.select_for_update()
        .filter(instance_type_id__in=instance_ids, region_id__in=region_ids)
        .order_by()
        # extra as its JSON text: parsed only when a record brings an extra to compare (a JSON
        # field's converter would parse every row's).
        .annotate(extra_text=Cast("extra", TextField()))
        .values_list(*_STORED_FIELDS)
    )


def _id_array(ids: list[int]) -> str:
    """A PostgreSQL array literal of integer ids (``{1,2,3}``): psycopg's list dumper costs a
    microsecond an element, the join a tenth of that."""
    return "{" + ",".join(map(str, map(int, ids))) + "}"


def _stored_extra(row: tuple[Any, ...]) -> dict[str, Any]:
    """A stored price's extra, from the JSON text the ingest reads."""
    text = row[_EXTRA]
    return {} if text == "{}" else json.loads(text)


def _validate(record: PriceRecord, rates: dict[str, Decimal]) -> str | None:
    """The shared price validation (catalog.services.price_figures_problems) plus the GPU count."""
    problems = price_figures_problems(
        amount=record.amount, currency=record.currency, unit=record.unit,
        pricing_model=record.pricing_model, rates=rates,
    )  # fmt: skip
    try:
        if Decimal(record.gpu_count) <= 0:
            raise InvalidOperation
    except (InvalidOperation, TypeError, ValueError):
        problems.append(f"gpu_count: {record.gpu_count!r} is not positive")
    return "; ".join(problems) or None


def _suspicious(
    usd_per_hour: Decimal, previous_usd_per_hour: Decimal | None, factor: Decimal
) -> str | None:
    """Zero, or more than the factor away from the last price (SCRAPE_QUARANTINE_FACTOR)."""
    if usd_per_hour == 0:
        return "zero price"
    if previous_usd_per_hour is None or previous_usd_per_hour in (0, usd_per_hour):
        return None
    ratio = usd_per_hour / previous_usd_per_hour
    if ratio > factor:
        return f"{ratio:.1f}x the last price (limit {factor}x)"
    if ratio < 1 / factor:
        return f"{ratio:.2f}x the last price (limit 1/{factor})"
    return None


def _prefer_home_currency(records: list[PriceRecord], home_currency: str) -> list[PriceRecord]:
    """Where a source quotes one offer in two currencies (Tencent's China and International
    price pages both cover Guangzhou), keep the quote in the provider's home currency."""
    if all(r.currency == home_currency for r in records):
        return records  # the usual case: nothing to choose
    home_keys = {
        (r.instance_type, r.region, r.pricing_model) for r in records if r.currency == home_currency
    }
    return [
        r
        for r in records
        if r.currency == home_currency
        or (r.instance_type, r.region, r.pricing_model) not in home_keys
    ]


def prices_ingest(
    *,
    provider: Provider,
    run: ScrapeRun,
    records: list[PriceRecord],
    observed_at: datetime,
    pricing_models: frozenset[str] | None = None,
) -> IngestReport:
    """Validate, normalise and upsert ``records`` for ``provider`` in one transaction.

    A stored price counts as missing only in a region this run covered and under a pricing model
    the source publishes (``pricing_models``). Queries are constant in the number of records:
    lookups are loaded once, writes are bulk.
    """
    covered_models = set(pricing_models or choices.PricingModel.values)
    records = _prefer_home_currency(records, provider.home_currency)
    report = IngestReport()
    factor = Decimal(str(settings.SCRAPE_QUARANTINE_FACTOR))
    # (The ExitStack ends an open COPY of new prices before the transaction rolls back.)
    with transaction.atomic(), ExitStack() as copying:
        rates = currency_rates_latest()
        regions: dict[str, int] = dict(provider.regions.values_list("code", "pk"))
        # Instance types as (id, GPU count): a marketplace has thousands, and model instances
        # of them (with their JSON fields) cost more than the rest of a pass that sees them again.
        instances: dict[str, tuple[int, Decimal]] = {
            name: (pk, gpu_count)
            for name, pk, gpu_count in _rows(
                provider.instance_types.order_by().values_list("name", "pk", "gpu_count")
            )
        }
        # GPUs and their aliases, read when a record names an instance type not yet known.
        gpu_maps: tuple[dict[str, int], dict[int, GPU], dict[str, GPU]] | None = None
        # Stored prices as plain rows (a third of the cost of model instances), locked. Selected
        # by the provider's instance type and region ids (a record of this provider can only
        # name those): two index scans of a few milliseconds. Joined to instance types instead,
        # PostgreSQL merge-joined over the whole natural-key index, every provider's prices
        # (30-140 ms a call at 250,000 prices).
        existing: dict[tuple[int, int, str], tuple[Any, ...]] = {
            (row[_INSTANCE], row[_REGION], row[_MODEL]): row
            for row in _stored_prices([pk for pk, _ in instances.values()], list(regions.values()))
        }
        seen: set[tuple] = set()
        unmatched_names: set[str] = set()
        unknown_regions: set[str] = set()
        scraper = choices.PriceSource.SCRAPER
        # New prices and history rows, each turned into its COPY line as it comes (the
        # provider's prices_version moves once, below, for every write of this call). New
        # prices stream to PostgreSQL while the loop goes on (RowsWriter's stream): the loop
        # pauses them before any query of its own (an unknown region, instance type or GPU).
        creates = copying.enter_context(
            RowsWriter(
                Price, _CREATED_COLUMNS, {"observed_at": observed_at, "source": scraper,
                                          "scrape_run_id": run.pk},
                versions=False, stream=True,
            )
        )  # fmt: skip
        history = price_history_writer(source=scraper, scrape_run_id=run.pk)
        rewrites: list[dict] = []  # existing prices whose figures or extra changed
        touched: list[int] = []  # existing prices seen again, figures unchanged
        held: list[QuarantinedPrice] = []
        # (amount, currency, unit, GPU count) -> (amount, currency, unit, usd_per_hour,
        # usd_per_gpu_hour) as stored (the order of _STORED_FIELDS), or the normalisation's
        # problem. Keyed by value: equal numbers normalise to the same quantised figures.
        figures_of: dict[tuple, tuple[Any, ...] | str] = {}
        covered_regions: set[int] = set()
        report.records_seen = len(records)
        unchanged = 0
        # Bound once: this loop runs per record, and a refresh that finds nothing moved spends
        # most of its Python time here (bench/RESULTS.md, "Ingest ... 2026-12-01 evening").
        figures_ok = price_figures_ok
        normalise = price_normalise
        seen_add = seen.add
        touch = touched.append
        regions_get = regions.get
        instances_get = instances.get
        existing_get = existing.get
        figures_get = figures_of.get
        cover = covered_regions.add
        create, record_history = creates.add, history.add
        appeared, changed = choices.PriceEvent.APPEARED, choices.PriceEvent.CHANGED

        for record in records:
            extra = record.extra
            if extra and extra.get("component"):
                # A component price (e.g. GCP's per-GPU rate without its host VM) is not an
                # instance price: counted as seen, never stored as one.
                continue
            amount, currency, unit = record.amount, record.currency, record.unit
            pricing_model, count = record.pricing_model, record.gpu_count
            # The checks of _validate without its messages, for the usual record; any doubt
            # (another type, a count that is not a positive finite Decimal) takes _validate.
            if not (
                figures_ok(amount, currency, unit, pricing_model, rates)
                and type(count) is Decimal
                and count.is_finite()
                and count > 0
            ):
                problem = _validate(record, rates)
                if problem:
                    report.problem(f"{record.instance_type} {record.region}: {problem}")
                    continue
            region_id = regions_get(record.region)
            if region_id is None:
                creates.pause()
                report.problem(f"{record.instance_type}: unknown region {record.region!r}")
                if record.region not in unknown_regions:
                    unknown_regions.add(record.region)
                    report.warn(f"unmatched region {record.region!r}: not in the catalog")
                    unmatched_gpu_name_record(
                        provider=provider, name=record.region, example=record.as_json(),
                        kind=choices.UnmatchedKind.REGION,
                    )  # fmt: skip
                continue
            cover(region_id)
            instance = instances_get(record.instance_type)
            if instance is None:
                creates.pause()
                if gpu_maps is None:
                    gpus = {gpu.pk: gpu for gpu in GPU.objects.all()}
                    gpu_maps = (
                        dict(GPUAlias.objects.values_list("normalised", "gpu_id")),
                        gpus,
                        {gpu.slug: gpu for gpu in gpus.values()},
                    )
                alias_gpu, gpus, slug_gpu = gpu_maps
                key = normalise_gpu_name(record.gpu_name)
                gpu_id = alias_gpu.get(key)
                gpu = (gpus.get(gpu_id) if gpu_id is not None else None) or slug_gpu.get(
                    record.gpu_name.strip().lower()
                )
                if gpu is None:
                    report.unmatched += 1
                    if key not in unmatched_names:
                        unmatched_names.add(key)
                        report.warn(f"unmatched gpu {record.gpu_name!r}: no alias knows it")
                        unmatched_gpu_name_record(
                            provider=provider, name=record.gpu_name, example=record.as_json()
                        )
                    continue
                if record.vcpus is None or record.ram_gib is None:
                    report.problem(f"{record.instance_type}: new instance type without vCPUs/RAM")
                    continue
                created = InstanceType.objects.create(
                    provider=provider,
                    name=record.instance_type,
                    gpu=gpu,
                    gpu_count=Decimal(record.gpu_count),
                    vcpus=record.vcpus,
                    ram_gib=record.ram_gib,
                    source=f"Discovered by scrape run {run.pk} on {observed_at:%Y-%m-%d}",
                    notes="Created by a refresh: a curator should add disk and interconnects.",
                )
                instance = instances[created.name] = (created.pk, created.gpu_count)
            instance_id, gpu_count = instance
            key3 = (instance_id, region_id, pricing_model)
            if key3 in seen:
                report.problem(
                    f"{record.instance_type} {record.region} {pricing_model}: duplicate record"
                )
                continue
            seen_add(key3)
            figure_key = (amount, currency, unit, gpu_count)
            figures = figures_get(figure_key)
            if figures is None:
                try:
                    usd = normalise(
                        amount=amount, currency=currency, unit=unit, gpu_count=gpu_count,
                        rates=rates,
                    )  # fmt: skip
                except CatalogDataError as exc:
                    figures = str(exc)
                else:
                    quoted = amount if type(amount) is Decimal else Decimal(amount)
                    figures = (quoted.quantize(SIX), currency, unit, usd[0], usd[1])
                figures_of[figure_key] = figures
            if isinstance(figures, str):
                report.problem(f"{record.instance_type}: {figures}")
                continue
            previous = existing_get(key3)
            if previous is not None:
                if previous[_LOCKED]:
                    report.locked += 1
                    continue
                # The usual case of a refresh: seen again, every figure as stored, nothing
                # else to tell (not gone, no new extra, not zero: zero is always quarantined).
                if (
                    previous[_AMOUNT:_GONE] == figures
                    and previous[_GONE] is None
                    and figures[3]
                    and (not extra or extra == _stored_extra(previous))
                ):
                    touch(previous[_ID])
                    unchanged += 1
                    continue
            amount, currency, unit, usd_per_hour, usd_per_gpu_hour = figures
            reason = _suspicious(
                usd_per_hour, previous[_USD] if previous is not None else None, factor
            )
            if reason:
                report.quarantined += 1
                held.append(
                    QuarantinedPrice(
                        scrape_run=run,
                        instance_type_id=instance_id,
                        region_id=region_id,
                        pricing_model=pricing_model,
                        amount=amount,
                        currency=currency,
                        unit=unit,
                        usd_per_hour=usd_per_hour,
                        previous_usd_per_hour=previous[_USD] if previous is not None else None,
                        reason=reason,
                        observed_at=observed_at,
                        record=record.as_json(),
                    )
                )
                continue
            if previous is None:
                # Rows as values in the writers' column order, not dicts or model instances:
                # building ~100,000 of those costs more than writing them.
                create(
                    instance_id, region_id, pricing_model, amount, currency, unit, usd_per_hour,
                    usd_per_gpu_hour, extra.get("source_url", "") if extra else "", extra or {},
                )  # fmt: skip
                record_history(
                    instance_id, region_id, pricing_model, amount, currency, unit, usd_per_hour,
                    usd_per_gpu_hour, observed_at, appeared, None,
                )  # fmt: skip
                report.created += 1
                continue
            values = {
                "amount": amount, "currency": currency, "unit": unit,
                "usd_per_hour": usd_per_hour, "usd_per_gpu_hour": usd_per_gpu_hour,
            }  # fmt: skip
            stored = dict(zip(_STORED_FIELDS, previous, strict=True))
            stored_extra = _stored_extra(previous)
            moved = previous[_AMOUNT:_GONE] != figures
            # History by the one rule (catalog.services.price_figures_changed): USD figures that
            # moved with an exchange rate alone are rewritten without a ``changed`` row.
            event = (
                choices.PriceEvent.REAPPEARED
                if previous[_GONE] is not None
                else (changed if price_figures_changed(stored, values) else None)
            )
            extra = extra or stored_extra
            if moved or extra != stored_extra:
                rewrites.append({"id": previous[_ID], **values, "extra": extra})
            else:
                touch(previous[_ID])
            if event:
                # The row as the writes below leave it: these figures, seen now.
                record_history(
                    instance_id, region_id, pricing_model, amount, currency, unit, usd_per_hour,
                    usd_per_gpu_hour, observed_at, event, previous[_AMOUNT],
                )  # fmt: skip
                report.changed += 1
            else:
                unchanged += 1
        report.unchanged = unchanged

        # Prices this source covers (same regions and pricing models) but no longer lists.
        gone_after = settings.SCRAPE_GONE_AFTER_RUNS
        now = timezone.now()
        missed: list[int] = []
        gone: list[int] = []
        for key3, price in existing.items():
            if key3 in seen or price[_LOCKED] or price[_GONE] is not None:
                continue
            if price[_REGION] not in covered_regions or key3[2] not in covered_models:
                continue
            missed.append(price[_ID])
            if price[_MISSED] + 1 >= gone_after:
                gone.append(price[_ID])
                record_history(
                    price[_INSTANCE], price[_REGION], price[_MODEL], None, price[_CURRENCY],
                    price[_UNIT], None, None, now, choices.PriceEvent.DISAPPEARED, price[_AMOUNT],
                )  # fmt: skip
                report.gone += 1

        # Writes in few statements: one UPDATE per batch for prices seen again unchanged (the
        # run and observed_at move), per-row values only for prices whose figures moved.
        seen_again = {
            "observed_at": observed_at, "source": scraper,
            "scrape_run_id": run.pk, "missed_runs": 0, "gone_at": None, "updated_at": now,
        }  # fmt: skip
        creates.write()
        rows_update(
            Price,
            rewrites,
            ["amount", "currency", "unit", "usd_per_hour", "usd_per_gpu_hour", "extra"],
            constants=seen_again,
            versions=False,
        )
        _seen_again_write(touched, seen_again)
        for ids in _batches(missed):
            Price.objects.filter(pk__in=ids).update(
                missed_runs=F("missed_runs") + 1, updated_at=now
            )
        for ids in _batches(gone):
            Price.objects.filter(pk__in=ids).update(gone_at=now)
        history.write()
        QuarantinedPrice.objects.bulk_create(held, batch_size=1000)
        prices_version_move(provider_ids=[provider.pk])
    return report


def _seen_again_write(ids: list[int], values: dict[str, Any]) -> None:
    """Write ``values`` to prices seen again with nothing else moved, but for ``updated_at``.

    Only observed_at and the run move, no indexed column, so on PostgreSQL the rewrite is a HOT
    update (no new index entries; migration 0006 leaves room on each page). ``updated_at`` moves
    only for a price whose state moves beyond that: it comes back, was missed, or a curator's or
    fixture's figures become the scraper's. Every ingest moves its provider's ``prices_version``,
    so the catalog fingerprint changes all the same (sizing.selectors.catalog_version).
    """
    if not ids:
        return
    now = values["updated_at"]
    if connection.vendor == "postgresql":
        # One statement with the ids as one array: an IN list of thousands of placeholders
        # costs more to render than the update does.
        with connection.cursor() as cursor:
            cursor.execute(
                "UPDATE catalog_price SET observed_at = %s, source = %s, scrape_run_id = %s, "
                "updated_at = CASE WHEN gone_at IS NOT NULL OR missed_runs <> 0 OR source <> %s "
                "THEN %s ELSE updated_at END, missed_runs = 0, gone_at = NULL "
                "WHERE id = ANY(%s::bigint[])",
                [values["observed_at"], values["source"], values["scrape_run_id"],
                 values["source"], now, _id_array(ids)],
            )  # fmt: skip
        return
    for batch in _batches(ids):
        Price.objects.filter(pk__in=batch).update(
            **{name: value for name, value in values.items() if name != "updated_at"},
            updated_at=Case(
                When(
                    Q(gone_at__isnull=False) | ~Q(missed_runs=0) | ~Q(source=values["source"]),
                    then=Value(now),
                ),
                default=F("updated_at"),
            ),
        )


def _batches(ids: list[int], size: int = 5000) -> Iterator[list[int]]:
    for start in range(0, len(ids), size):
        yield ids[start : start + size]


# The columns the ingest gives each new price, in this order (the writer's constants give the
# run, the source and observed_at; history rows: catalog.services.HISTORY_ROW_COLUMNS).
_CREATED_COLUMNS = (
    "instance_type_id", "region_id", "pricing_model", "amount", "currency", "unit",
    "usd_per_hour", "usd_per_gpu_hour", "source_url", "extra",
)  # fmt: skip


# --- Curator decisions on quarantined prices ---------------------------------------------


class QuarantineDecisionError(ValueError):
    """A held figure that cannot be applied as asked."""


def quarantined_price_approve(*, item: QuarantinedPrice, user: str) -> None:
    """Accept a held figure: it becomes the current price, with history.

    Refused while a curator lock holds the current price: unlock it first.
    """
    from catalog.services import price_upsert

    with transaction.atomic():
        # price_upsert owns the lock rule (and reads the price FOR UPDATE).
        result = price_upsert(
            instance_type=item.instance_type, region=item.region, pricing_model=item.pricing_model,
            amount=item.amount, currency=item.currency, unit=item.unit, observed_at=item.observed_at,
            source=choices.PriceSource.SCRAPER, rates=currency_rates_latest(), scrape_run=item.scrape_run,
        )  # fmt: skip
        if result.skipped_reason:
            raise QuarantineDecisionError(
                f"{item}: the current price is {result.skipped_reason}; unlock it first"
            )
        item.status = QuarantinedPrice.Status.APPROVED
        item.decided_at = timezone.now()
        item.decided_by = user
        item.save(update_fields=["status", "decided_at", "decided_by"])


def quarantined_price_reject(*, item: QuarantinedPrice, user: str) -> None:
    """Discard a held figure; the current price stays."""
    item.status = QuarantinedPrice.Status.REJECTED
    item.decided_at = timezone.now()
    item.decided_by = user
    item.save(update_fields=["status", "decided_at", "decided_by"])


# --- Currency rates ------------------------------------------------------------------------


def currency_rates_refresh(*, client: HttpClient | None = None) -> int:
    """Store today's ECB reference rates and renormalise every price; returns rates stored."""
    from catalog.models import CurrencyRate
    from catalog.services import prices_renormalise

    from .providers.ecb import EcbRates

    source = EcbRates(base_url=settings.SCRAPER_BASE_URLS.get("ecb") or None)
    own = client is None
    client = client or http_client()
    try:
        page = source.fetch(client)
        rates = source.parse_rates(page)
    finally:
        if own:
            client.close()
    with transaction.atomic():
        for rate in rates:
            CurrencyRate.objects.update_or_create(
                currency=rate.currency,
                as_of=rate.as_of,
                defaults={
                    "usd_per_unit": rate.usd_per_unit,
                    "source": "ECB euro reference rates",
                    "source_url": page.url,
                },
            )
        prices_renormalise()
    return len(rates)
