"""Reads for the web pages, built on the catalog's own selectors and QuerySet methods."""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db.models import (
    BooleanField,
    Count,
    ExpressionWrapper,
    F,
    Max,
    Min,
    Q,
    QuerySet,
)

from catalog import selectors as catalog_selectors
from catalog.filtersets import PriceFilterSet
from catalog.models import GPU, InstanceType, Price, PriceHistory, Provider, Region, ScrapeRun
from catalog.querysets import stale_cutoff

# Sort keys of the price browser (what the query string says) and the columns they order by.
PRICE_SORTS: dict[str, str] = {
    "gpu": "instance_type__gpu__name",
    "memory": "instance_type__gpu__memory_gib",
    "provider": "instance_type__provider__name",
    "region": "region__code",
    "instance": "instance_type__name",
    "gpus": "instance_type__gpu_count",
    "pricing": "pricing_model",
    "usd_per_hour": "usd_per_hour",
    "usd_per_gpu_hour": "usd_per_gpu_hour",
    "observed": "observed_at",
}
DEFAULT_PRICE_SORT = "usd_per_gpu_hour"


def _stale_flag(now: datetime | None = None) -> ExpressionWrapper:
    return ExpressionWrapper(Q(observed_at__lt=stale_cutoff(now)), output_field=BooleanField())


def price_browse(*, filters: dict[str, Any], sort: str = DEFAULT_PRICE_SORT) -> QuerySet[Price]:
    """Current prices through the API's PriceFilterSet, ordered by a PRICE_SORTS key (``-`` desc).

    ``filters`` uses PriceFilterSet's parameter names; invalid ones must be weeded out first
    (the page's form does that).
    """
    queryset = catalog_selectors.price_list().annotate(is_stale=_stale_flag())
    queryset = PriceFilterSet(data=filters, queryset=queryset).qs
    descending = sort.startswith("-")
    column = PRICE_SORTS.get(sort.lstrip("-"), PRICE_SORTS[DEFAULT_PRICE_SORT])
    order = F(column).desc(nulls_last=True) if descending else F(column).asc(nulls_last=True)
    return queryset.order_by(order, "pk")


def price_filter_options() -> dict[str, Any]:
    """Choices for the price browser's selects: GPUs, providers, regions grouped by provider."""
    regions: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for code, name, provider in Region.objects.values_list("code", "name", "provider__name"):
        regions[provider].append((code, f"{code} ({name})" if name and name != code else code))
    return {
        "gpus": list(GPU.objects.values_list("slug", "name")),
        "providers": list(Provider.objects.values_list("slug", "name")),
        "regions": sorted(regions.items()),
    }


def gpu_index() -> QuerySet[GPU]:
    """GPUs with how many active instance types carry them and their cheapest current prices."""
    current = Q(instance_types__prices__gone_at__isnull=True, instance_types__is_active=True)
    return GPU.objects.annotate(
        instance_count=Count(
            "instance_types", filter=Q(instance_types__is_active=True), distinct=True
        ),
        min_on_demand=Min(
            "instance_types__prices__usd_per_gpu_hour",
            filter=current & Q(instance_types__prices__pricing_model="on_demand"),
        ),
        min_spot=Min(
            "instance_types__prices__usd_per_gpu_hour",
            filter=current & Q(instance_types__prices__pricing_model="spot"),
        ),
    ).order_by("vendor", "-memory_gib", "name")


def gpu_get(*, slug: str) -> GPU | None:
    """One GPU with its aliases and export relations, or None."""
    return GPU.objects.with_aliases().prefetch_related("export_variants").filter(slug=slug).first()


def gpu_instance_types(*, gpu: GPU) -> QuerySet[InstanceType]:
    """Active instance types carrying ``gpu``, with their cheapest current on-demand and spot."""
    current = Q(prices__gone_at__isnull=True)
    return (
        InstanceType.objects.with_related()
        .filter(gpu=gpu, is_active=True)
        .annotate(
            region_count=Count("prices__region", filter=current, distinct=True),
            min_on_demand=Min(
                "prices__usd_per_gpu_hour", filter=current & Q(prices__pricing_model="on_demand")
            ),
            min_spot=Min(
                "prices__usd_per_gpu_hour", filter=current & Q(prices__pricing_model="spot")
            ),
        )
        .order_by(F("min_on_demand").asc(nulls_last=True), "provider__name", "gpu_count")
    )


def gpu_price_history(
    *, gpu: GPU, pricing_model: str
) -> dict[str, list[tuple[datetime, float | None]]]:
    """Per provider, the cheapest listed USD per GPU-hour for ``gpu`` over time (a step series).

    Each offer (instance type, region) holds its price from one history event to the next and
    leaves the series when it disappears; the provider's value at each moment is the cheapest
    offer then listed, and None from the moment it lists none (the line ends there).
    """
    events = (
        PriceHistory.objects.filter(instance_type__gpu=gpu, pricing_model=pricing_model)
        .order_by("observed_at", "recorded_at", "pk")
        .values_list(
            "instance_type__provider__name",
            "instance_type_id",
            "region_id",
            "event",
            "usd_per_gpu_hour",
            "observed_at",
        )
    )
    live: dict[str, dict[tuple[int, int], float]] = defaultdict(dict)
    series: dict[str, list[tuple[datetime, float | None]]] = defaultdict(list)
    for provider, instance_id, region_id, event, value, observed_at in events:
        offers = live[provider]
        key = (instance_id, region_id)
        if event == "disappeared" or value is None:
            offers.pop(key, None)
        else:
            offers[key] = float(value)
        points = series[provider]
        if not offers and not points:
            continue
        cheapest = min(offers.values()) if offers else None
        if points and points[-1][0] == observed_at:
            points[-1] = (observed_at, cheapest)
        elif not points or points[-1][1] != cheapest:
            points.append((observed_at, cheapest))
    return dict(sorted(series.items()))


def gpu_history_pricing_models(*, gpu: GPU) -> list[str]:
    """Pricing models that have any history for ``gpu``."""
    return list(
        PriceHistory.objects.filter(instance_type__gpu=gpu)
        .order_by("pricing_model")
        .values_list("pricing_model", flat=True)
        .distinct()
    )


def provider_index() -> QuerySet[Provider]:
    """Providers with their price counts, stale counts and last refresh (the API's selector)."""
    return catalog_selectors.provider_list().order_by("name")


def provider_get(*, slug: str) -> Provider | None:
    return provider_index().filter(slug=slug).first()


def provider_regions(*, provider: Provider) -> QuerySet[Region]:
    """The provider's regions with current price counts, stale counts and newest observation."""
    current = Q(prices__gone_at__isnull=True)
    return (
        Region.objects.filter(provider=provider)
        .annotate(
            price_count=Count("prices", filter=current),
            stale_count=Count("prices", filter=current & Q(prices__observed_at__lt=stale_cutoff())),
            newest_observed_at=Max("prices__observed_at", filter=current),
            oldest_observed_at=Min("prices__observed_at", filter=current),
        )
        .order_by("geography", "code")
    )


def provider_scrape_runs(*, provider: Provider, limit: int = 20) -> list[ScrapeRun]:
    """The provider's most recent refresh runs, newest first."""
    return list(ScrapeRun.objects.filter(provider=provider).order_by("-started_at")[:limit])


def provider_instance_count(*, provider: Provider) -> int:
    return InstanceType.objects.filter(provider=provider, is_active=True).count()


def stale_days() -> int:
    """Days after which a price counts as stale (``PRICE_STALE_AFTER_DAYS``)."""
    return settings.PRICE_STALE_AFTER_DAYS


def provider_names() -> dict[str, str]:
    """Provider slug -> display name."""
    return dict(Provider.objects.values_list("slug", "name"))


def gpu_names() -> dict[str, tuple[str, float]]:
    """GPU slug -> (display name, memory in GiB)."""
    return {
        slug: (name, memory)
        for slug, name, memory in GPU.objects.values_list("slug", "name", "memory_gib")
    }
