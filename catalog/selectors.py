"""Reads of the catalog shared by the API, the planner, the admin and the scrapers."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

from django.db.models import Count, Max, OuterRef, Q, QuerySet, Subquery

from .gpu_names import normalise_gpu_name
from .models import GPU, CurrencyRate, GPUAlias, Price, Provider, ScrapeRun
from .querysets import price_stale_q


def currency_rates_latest() -> dict[str, Decimal]:
    """USD per unit of each currency, from the newest rate of each."""
    rates: dict[str, Decimal] = {}
    for currency, usd in CurrencyRate.objects.order_by("currency", "-as_of").values_list(
        "currency", "usd_per_unit"
    ):
        rates.setdefault(currency, usd)
    rates.setdefault("USD", Decimal("1"))
    return rates


def gpu_alias_resolve(*, name: str) -> GPU | None:
    """The GPU a provider's name stands for, by alias or slug; None when nobody knows it."""
    key = normalise_gpu_name(name)
    alias = GPUAlias.objects.select_related("gpu").filter(normalised=key).first()
    if alias is not None:
        return alias.gpu
    return GPU.objects.filter(slug=name.strip().lower()).first()


def gpu_list() -> QuerySet[GPU]:
    return GPU.objects.with_aliases()


def price_list(*, include_gone: bool = False) -> QuerySet[Price]:
    """Current prices with everything a listing shows, ready to filter."""
    qs = Price.objects.with_related()
    return qs if include_gone else qs.current()


def provider_list(*, now: datetime | None = None) -> QuerySet[Provider]:
    """Providers annotated with their price counts, stale counts and last refresh."""
    current = Q(instance_types__prices__gone_at__isnull=True)
    runs = ScrapeRun.objects.filter(provider=OuterRef("pk")).order_by("-started_at")
    successes = runs.filter(status__in=["success", "partial"])
    return Provider.objects.annotate(
        last_run_status=Subquery(runs.values("status")[:1]),
        last_run_at=Subquery(runs.values("started_at")[:1]),
        last_success_at=Subquery(successes.values("finished_at")[:1]),
    ).annotate(
        price_count=Count("instance_types__prices", filter=current, distinct=True),
        stale_price_count=Count(
            "instance_types__prices",
            filter=current
            & price_stale_q(now, prefix="instance_types__prices__", provider_kind="kind"),
            distinct=True,
        ),
        last_price_observed_at=Max("instance_types__prices__observed_at", filter=current),
    )


def provider_last_success_at() -> dict[str, datetime]:
    """When each provider's newest successful (or partial) refresh finished, by slug."""
    return dict(
        ScrapeRun.objects.filter(status__in=["success", "partial"])
        .values_list("provider__slug")
        .annotate(at=Max("finished_at"))
    )
