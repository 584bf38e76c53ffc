"""The cross-check: compare current prices with a second, independent source; file disagreements.

Per hyperscaler (AWS, Azure, Google Cloud) the job reads SkyPilot's public catalog CSV
(scrapers/secondary/skypilot.py), maps its names the way the scrapers do (instance types by name,
GPU names through aliases, regions by code; names nobody can map go to the unmatched-names queue)
and compares each current on-demand and spot price with the source's figure for the same instance
type, region and pricing model. A figure more than ``CROSSCHECK_TOLERANCE`` away (10% by default)
is filed as a ``PriceDisagreement`` for a curator; the price itself is never written here. A
curator accepts one (``price_disagreement_accept``: the second figure becomes the price through
``catalog.services.price_upsert``, with history) or dismisses it. The same figures are never filed
twice; a decided disagreement is filed again only when either figure moves.

A failed fetch or an unreadable file writes nothing but the failed ``CrossCheckRun``.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal
from functools import partial

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from catalog import choices
from catalog.gpu_names import normalise_gpu_name
from catalog.models import CrossCheckRun, GPUAlias, Price, PriceDisagreement, Provider
from catalog.selectors import currency_rates_latest
from catalog.services import price_upsert, unmatched_gpu_name_record

from .base import HttpClient
from .providers.gcp import MACHINE_TYPES as GCP_MACHINE_TYPES
from .registry import http_client
from .secondary import skypilot
from .secondary.skypilot import CatalogRow, CatalogTable, SourceVersion

logger = logging.getLogger(__name__)
SIX = Decimal("0.000001")
FOUR = Decimal("0.0001")
MAX_WARNINGS_KEPT = 100
# The pricing models the second source publishes.
COMPARED_MODELS = (choices.PricingModel.ON_DEMAND, choices.PricingModel.SPOT)
# A price whose own source is this one is not checked against it (it would agree with itself).
SAME_SOURCE_MARKERS = ("skypilot-org/skypilot-catalog", "skypilot catalog")


class CrossCheckInProgress(RuntimeError):
    """Another cross-check of the same provider is running."""


class CrossCheckNotConfigured(LookupError):
    """No second source is configured for the provider."""


class DisagreementDecisionError(ValueError):
    """A disagreement that cannot be accepted or dismissed as asked."""


def crosscheck_providers() -> list[str]:
    """Slugs of the providers a second source is configured for and the catalog has."""
    configured = set(settings.CROSSCHECK_SKYPILOT_PATHS)
    return sorted(Provider.objects.filter(slug__in=configured).values_list("slug", flat=True))


@dataclass
class _Counts:
    values: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    warnings: list[str] = field(default_factory=list)

    def add(self, name: str, n: int = 1) -> None:
        self.values[name] += n

    def warn(self, text: str) -> None:
        if text not in self.warnings and len(self.warnings) < MAX_WARNINGS_KEPT:
            self.warnings.append(text)


def crosscheck_run(
    *,
    provider_slug: str,
    trigger: str = "manual",
    client: HttpClient | None = None,
    csv_text: str | None = None,
    version: SourceVersion | None = None,
) -> CrossCheckRun:
    """Compare ``provider_slug``'s current prices with the second source and file disagreements.

    ``csv_text`` (with ``version`` saying where it came from) compares a file read offline instead
    of fetching one. Never writes a price; on failure nothing but the failed run is written.
    """
    provider = Provider.objects.get(slug=provider_slug)
    path = settings.CROSSCHECK_SKYPILOT_PATHS.get(provider.slug)
    if path is None and csv_text is None:
        raise CrossCheckNotConfigured(f"no second source configured for {provider.slug}")
    # A run whose worker died stays "running"; past twice the task time limit it no longer blocks.
    started = timezone.now()
    CrossCheckRun.objects.filter(
        provider=provider,
        status=choices.CrossCheckStatus.RUNNING,
        started_at__lt=started - timedelta(seconds=settings.CELERY_TASK_TIME_LIMIT * 2),
    ).update(
        status=choices.CrossCheckStatus.FAILED, finished_at=started, error="abandoned: worker died"
    )
    try:
        with transaction.atomic():
            run = CrossCheckRun.objects.create(
                provider=provider,
                source=skypilot.SOURCE,
                started_at=started,
                trigger=trigger,
                status=choices.CrossCheckStatus.RUNNING,
            )
    except IntegrityError as exc:
        raise CrossCheckInProgress(f"a cross-check of {provider.slug} is already running") from exc
    own_client = client is None and csv_text is None
    counts = _Counts()
    fetch_warnings: list[str] = []
    try:
        if csv_text is None:
            assert path is not None  # checked above: no CSV given needs a configured path
            client = client or http_client()
            page, version, warnings = skypilot.fetch_vms_csv(
                client,
                raw_base=settings.CROSSCHECK_SKYPILOT_RAW_BASE,
                api_base=settings.CROSSCHECK_SKYPILOT_API_BASE,
                ref=settings.CROSSCHECK_SKYPILOT_REF,
                path=path,
            )
            csv_text = page.body
            fetch_warnings = warnings[:MAX_WARNINGS_KEPT]
        version = version or SourceVersion(url="")
        run.source_url = version.url[:500]
        run.source_commit = version.commit
        run.source_date = version.date
        rows = skypilot.parse_vms_csv(csv_text)
        counts.add("rows_read", len(rows))
        with transaction.atomic():
            _compare(provider=provider, run=run, rows=rows, version=version, counts=counts)
    except Exception as exc:  # any failure: the run says why; nothing else was written
        logger.exception("cross-check of %s failed", provider.slug)
        run.status = choices.CrossCheckStatus.FAILED
        run.error = f"{type(exc).__name__}: {exc}"[:2000]
        run.warnings = fetch_warnings  # what the comparison noted was rolled back with it
    else:
        run.status = choices.CrossCheckStatus.SUCCESS
        for name in CrossCheckRun.COUNT_FIELDS:
            setattr(run, name, counts.values.get(name, 0))
        run.warnings = (fetch_warnings + counts.warnings)[:MAX_WARNINGS_KEPT]
    finally:
        if own_client and client is not None:
            client.close()
        run.finished_at = timezone.now()
        run.save()
    return run


def _same_source(price: Price) -> bool:
    text = f"{price.source_url} {price.source_note}".lower()
    return any(marker in text for marker in SAME_SOURCE_MARKERS)


def _compare(
    *,
    provider: Provider,
    run: CrossCheckRun,
    rows: list[CatalogRow],
    version: SourceVersion,
    counts: _Counts,
) -> None:
    """Map the source's names, compare every current price it covers and file what disagrees."""
    table = CatalogTable.of(rows)
    alias_gpu = dict(GPUAlias.objects.values_list("normalised", "gpu_id"))
    gpu_of: dict[str, int | None] = {}
    for row in rows:
        name = row.accelerator_name
        if skypilot.is_gpu_accelerator(name) and name not in gpu_of:
            gpu_of[name] = alias_gpu.get(normalise_gpu_name(name))
    _note_unmatched(provider=provider, rows=rows, gpu_of=gpu_of, counts=counts)

    candidates: dict[int, list[str]] = defaultdict(list)
    for name in table.accelerator_names():
        gpu_id = gpu_of.get(name)
        if gpu_id is not None:
            candidates[gpu_id].append(name)

    tolerance = Decimal(str(settings.CROSSCHECK_TOLERANCE))
    now = timezone.now()
    filed = {
        (item.price_id, item.primary_usd_per_hour, item.second_usd_per_hour): item
        for item in PriceDisagreement.objects.select_for_update().filter(provider=provider)
    }
    open_items = {
        item.price_id: item
        for item in filed.values()
        if item.status == choices.DisagreementStatus.OPEN
    }
    prices = (
        Price.objects.filter(
            instance_type__provider=provider,
            pricing_model__in=COMPARED_MODELS,
            gone_at__isnull=True,
        )
        .select_related("instance_type", "region")
        .order_by("pk")
    )
    for price in prices:
        instance = price.instance_type
        figures = table.machine_figures(
            instance_type=instance.name,
            region=price.region.code,
            pricing_model=price.pricing_model,
            gpu_count=instance.gpu_count,
            accelerator_for=partial(_accelerator_among, candidates.get(instance.gpu_id, [])),
        )
        if not figures:
            counts.add("not_covered")
            continue
        if _same_source(price):
            counts.add("not_independent")
            continue
        counts.add("compared")
        primary = price.usd_per_hour.quantize(SIX)
        nearest = min(figures.values(), key=lambda figure: (abs(figure - primary), figure))
        second = nearest.quantize(SIX)
        if not _disagrees(primary, second, tolerance):
            counts.add("agreements")
            item = open_items.get(price.pk)
            if item is not None:
                _close(item, now=now, note=f"sources agree again (cross-check run {run.pk})")
                counts.add("resolved")
            continue
        counts.add("disagreements")
        values = {
            "primary_usd_per_hour": primary,
            "primary_observed_at": price.observed_at,
            "second_usd_per_hour": second,
            "second_low_usd_per_hour": min(figures.values()).quantize(SIX),
            "second_high_usd_per_hour": max(figures.values()).quantize(SIX),
            "ratio": (second / primary).quantize(FOUR) if primary else None,
            "source": skypilot.SOURCE,
            "source_url": version.url[:500],
            "source_commit": version.commit,
            "source_date": version.date,
            "run": run,
            "last_seen_at": now,
        }
        same = filed.get((price.pk, primary, second))
        current = open_items.get(price.pk)
        if same is not None and same.status != choices.DisagreementStatus.OPEN:
            # A curator already decided these very figures: not filed again.
            counts.add("already_decided")
            if current is not None:
                _close(current, now=now, note=f"figures are back to ones decided ({same.status})")
            continue
        item = same or current
        if item is not None:
            for name, value in values.items():
                setattr(item, name, value)
            item.times_seen += 1
            item.save()
            counts.add("refreshed")
            continue
        item = PriceDisagreement.objects.create(
            price=price, provider=provider, first_seen_at=now, **values
        )
        filed[(price.pk, primary, second)] = open_items[price.pk] = item
        counts.add("filed")


def _disagrees(primary: Decimal, second: Decimal, tolerance: Decimal) -> bool:
    """More than ``tolerance`` (a share of our price) apart; exactly at it is agreement."""
    if primary == 0:
        return second != 0
    return abs(second - primary) > tolerance * primary


def _accelerator_among(candidates: list[str], hint: str) -> str | None:
    """The source's accelerator name meant for a machine, among those of its GPU."""
    return skypilot.pick_accelerator(candidates, _accelerator_hint(hint), fold=normalise_gpu_name)


def _accelerator_hint(hint: str) -> str:
    """What names a machine's GPU best: Google's accelerator type for the machine types the GCP
    scraper knows (``a3-megagpu-8g`` -> ``nvidia-h100-mega-80gb``), else the hint itself."""
    machine = GCP_MACHINE_TYPES.get(hint)
    return machine[3] if machine else hint


def _close(item: PriceDisagreement, *, now: datetime, note: str) -> None:
    item.status = choices.DisagreementStatus.RESOLVED
    item.decided_at = now
    item.decided_by = "cross-check"
    item.note = note[:500]
    item.save(update_fields=["status", "decided_at", "decided_by", "note"])


def _note_unmatched(
    *, provider: Provider, rows: list[CatalogRow], gpu_of: dict[str, int | None], counts: _Counts
) -> None:
    """File the source's names nobody can map, like a refresh does: GPU names no alias knows,
    regions the catalog lacks and instance types it lacks (for GPU rows only; TPUs and CPU-only
    machines are not the catalog's business). Each name once per run."""
    regions = set(provider.regions.values_list("code", flat=True))
    instances = set(provider.instance_types.values_list("name", flat=True))
    seen: set[tuple[str, str]] = set()

    def note(kind: str, name: str, reason: str) -> None:
        if (kind, name) in seen:
            return
        seen.add((kind, name))
        unmatched_gpu_name_record(
            provider=provider, name=name, kind=kind,
            example={"reason": reason, "source": skypilot.SOURCE},
        )  # fmt: skip
        counts.add("unmatched")
        counts.warn(f"unmatched {kind} {name!r}: {reason}")

    for row in rows:
        if not skypilot.is_gpu_accelerator(row.accelerator_name):
            continue
        if gpu_of.get(row.accelerator_name) is None:
            note(choices.UnmatchedKind.GPU, row.accelerator_name, "no alias knows it")
        elif row.region and row.region not in regions:
            note(choices.UnmatchedKind.REGION, row.region, "a GPU region not in the catalog")
        elif row.instance_type and row.instance_type not in instances:
            note(choices.UnmatchedKind.INSTANCE, row.instance_type, "a GPU type not in the catalog")


# --- Curator decisions -----------------------------------------------------------------------


def price_disagreement_accept(*, item: PriceDisagreement, user: str) -> PriceDisagreement:
    """Make the second source's figure the current price (with history), as a curator's act.

    Refused unless the disagreement is open and the price still holds the figure it was filed
    against (a price that moved since must be checked again first).
    """
    with transaction.atomic():
        item = PriceDisagreement.objects.select_for_update().get(pk=item.pk)
        if item.status != choices.DisagreementStatus.OPEN:
            raise DisagreementDecisionError(f"{item} is {item.status}, not open")
        price = Price.objects.select_related("instance_type", "region").get(pk=item.price_id)
        if price.usd_per_hour.quantize(SIX) != item.primary_usd_per_hour:
            raise DisagreementDecisionError(
                f"{price}: the price moved to {price.usd_per_hour} USD/h since this was filed "
                f"({item.primary_usd_per_hour}); run the cross-check again"
            )
        where = skypilot.blob_url(item.source_commit, _path_of(item)) if item.source_commit else ""
        commit = f" @{item.source_commit[:12]}" if item.source_commit else ""
        when = f" ({item.source_date:%Y-%m-%d})" if item.source_date else ""
        price_upsert(
            instance_type=price.instance_type,
            region=price.region,
            pricing_model=price.pricing_model,
            amount=item.second_usd_per_hour,
            currency="USD",
            unit=choices.PriceUnit.HOUR,
            observed_at=item.source_date or item.last_seen_at,
            source=choices.PriceSource.CURATOR,
            rates=currency_rates_latest(),
            source_url=(where or item.source_url)[:500],
            source_note=(
                f"{item.source}{commit}{when}, accepted by {user} from the cross-check "
                f"(was {item.primary_usd_per_hour} USD/h)"
            )[:500],
        )
        item.status = choices.DisagreementStatus.ACCEPTED
        item.decided_at = timezone.now()
        item.decided_by = user
        item.save(update_fields=["status", "decided_at", "decided_by"])
    return item


def price_disagreement_dismiss(
    *, item: PriceDisagreement, user: str, note: str = ""
) -> PriceDisagreement:
    """Keep the primary price; the same figures are not filed again."""
    if item.status != choices.DisagreementStatus.OPEN:
        raise DisagreementDecisionError(f"{item} is {item.status}, not open")
    item.status = choices.DisagreementStatus.DISMISSED
    item.decided_at = timezone.now()
    item.decided_by = user
    item.note = note[:500]
    item.save(update_fields=["status", "decided_at", "decided_by", "note"])
    return item


def _path_of(item: PriceDisagreement) -> str:
    """The file's path in the repository, from the configuration of the item's provider."""
    return settings.CROSSCHECK_SKYPILOT_PATHS.get(item.provider.slug, "")
