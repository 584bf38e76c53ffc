"""Small chainable QuerySet methods for the catalog."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from .choices import PricingModel

# Pricing models whose figures move daily: past their shelf life they are left out of rankings
# unless asked for (list prices and terms are ranked, flagged). Marketplace offers move daily
# whatever their pricing model.
VOLATILE_PRICING_MODELS = frozenset({PricingModel.SPOT})
MARKETPLACE = "marketplace"


def stale_cutoff(now: datetime | None = None) -> datetime:
    """List prices observed before this instant are stale (``PRICE_STALE_AFTER_DAYS``)."""
    return (now or timezone.now()) - timedelta(days=settings.PRICE_STALE_AFTER_DAYS)


def shelf_life_days(pricing_model: str, *, marketplace: bool = False) -> int:
    """How many days a price of this kind stays fresh (``PRICE_SHELF_LIFE_DAYS``)."""
    life = settings.PRICE_SHELF_LIFE_DAYS
    if marketplace:
        return life.get(MARKETPLACE, life.get(pricing_model, settings.PRICE_STALE_AFTER_DAYS))
    return life.get(pricing_model, settings.PRICE_STALE_AFTER_DAYS)


def price_is_volatile(pricing_model: str, *, marketplace: bool = False) -> bool:
    """Whether a price moves daily (spot, or any marketplace offer)."""
    return marketplace or pricing_model in VOLATILE_PRICING_MODELS


def price_stale_at(observed_at: datetime, pricing_model: str, *, marketplace: bool) -> datetime:
    """When a price observed at ``observed_at`` turns stale."""
    return observed_at + timedelta(days=shelf_life_days(pricing_model, marketplace=marketplace))


def price_stale_q(
    now: datetime | None = None, *, prefix: str = "", provider_kind: str | None = None
) -> Q:
    """Matches prices past their shelf life at ``now``. ``prefix`` reaches the prices from a
    related model (e.g. ``"prices__"``); ``provider_kind`` names the provider's kind field when
    the query already stands on the provider (``"kind"``)."""
    now = now or timezone.now()
    kind = provider_kind or f"{prefix}instance_type__provider__kind"
    marketplace = Q(**{kind: MARKETPLACE})
    market_life = timedelta(days=shelf_life_days("", marketplace=True))
    q = marketplace & Q(**{f"{prefix}observed_at__lt": now - market_life})
    for model in PricingModel.values:
        cutoff = now - timedelta(days=shelf_life_days(model))
        q |= ~marketplace & Q(
            **{f"{prefix}pricing_model": model, f"{prefix}observed_at__lt": cutoff}
        )
    return q


class ProviderQuerySet(models.QuerySet):
    def with_scraper(self) -> ProviderQuerySet:
        """Providers a scraper refreshes (curated-only providers have no scraper key)."""
        return self.exclude(scraper_key="")


class GPUQuerySet(models.QuerySet):
    def with_aliases(self) -> GPUQuerySet:
        return self.select_related("export_variant_of").prefetch_related("aliases")


class InstanceTypeQuerySet(models.QuerySet):
    def with_related(self) -> InstanceTypeQuerySet:
        return self.select_related("provider", "gpu", "interconnect_intra", "interconnect_inter")


class PriceQuerySet(models.QuerySet):
    def with_related(self) -> PriceQuerySet:
        return self.select_related(
            "instance_type__provider",
            "instance_type__gpu",
            "instance_type__interconnect_intra",
            "instance_type__interconnect_inter",
            "region",
        )

    def current(self) -> PriceQuerySet:
        """Prices the provider still lists (not marked gone)."""
        return self.filter(gone_at__isnull=True)

    def stale(self, now: datetime | None = None) -> PriceQuerySet:
        """Prices past their shelf life (``shelf_life_days``)."""
        return self.filter(price_stale_q(now))

    def fresh(self, now: datetime | None = None) -> PriceQuerySet:
        return self.exclude(price_stale_q(now))
