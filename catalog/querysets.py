"""Small chainable QuerySet methods for the catalog."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db import models
from django.utils import timezone


def stale_cutoff(now: datetime | None = None) -> datetime:
    """Prices observed before this instant are stale (``PRICE_STALE_AFTER_DAYS``)."""
    return (now or timezone.now()) - timedelta(days=settings.PRICE_STALE_AFTER_DAYS)


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
        return self.filter(observed_at__lt=stale_cutoff(now))

    def fresh(self, now: datetime | None = None) -> PriceQuerySet:
        return self.filter(observed_at__gte=stale_cutoff(now))
