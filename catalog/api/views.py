"""Read-only catalog endpoints."""

from __future__ import annotations

from collections.abc import Sequence

from django.conf import settings
from rest_framework import viewsets
from rest_framework.renderers import BaseRenderer

from api.renderers import CSV_RENDERERS

from .. import selectors
from ..filtersets import (
    GPUFilterSet,
    InstanceTypeFilterSet,
    InterconnectFilterSet,
    PriceFilterSet,
    PriceHistoryFilterSet,
    ProviderFilterSet,
    RegionFilterSet,
    ScrapeRunFilterSet,
)
from ..models import InstanceType, Interconnect, PriceHistory, Provider, Region, ScrapeRun
from . import serializers

SLUG_REGEX = r"[-a-zA-Z0-9_.]+"


class CSVExportMixin:
    """Tables that download as CSV: the whole filtered set (up to CSV_MAX_ROWS), not one page."""

    renderer_classes: Sequence[type[BaseRenderer]] = CSV_RENDERERS

    def paginate_queryset(self, queryset):
        if (
            getattr(self.request, "accepted_renderer", None)
            and self.request.accepted_renderer.format == "csv"
        ):
            if self.paginator is not None:
                self.paginator.check_parameters(self.request)
            return None
        return super().paginate_queryset(queryset)

    def filter_queryset(self, queryset):
        queryset = super().filter_queryset(queryset)
        if (
            getattr(self.request, "accepted_renderer", None)
            and self.request.accepted_renderer.format == "csv"
        ):
            return queryset[: settings.CSV_MAX_ROWS]
        return queryset


class GPUViewSet(CSVExportMixin, viewsets.ReadOnlyModelViewSet):
    """GPUs with dense datasheet figures and the names providers use for them."""

    queryset = selectors.gpu_list()
    serializer_class = serializers.GPUSerializer
    filterset_class = GPUFilterSet
    lookup_field = "slug"
    lookup_value_regex = SLUG_REGEX
    ordering_fields = [
        "name",
        "memory_gib",
        "memory_bandwidth_gb_s",
        "bf16_tflops",
        "fp8_tflops",
        "release_year",
        "tdp_w",
    ]
    ordering = ["vendor", "name"]


class InterconnectViewSet(viewsets.ReadOnlyModelViewSet):
    """Links within and between nodes, with bandwidth in the vendor's unit and in GB/s."""

    queryset = Interconnect.objects.all()
    serializer_class = serializers.InterconnectSerializer
    filterset_class = InterconnectFilterSet
    lookup_field = "slug"
    lookup_value_regex = SLUG_REGEX
    ordering_fields = ["name", "bandwidth_gb_s", "kind"]
    ordering = ["scope", "kind", "bandwidth_gb_s"]


class ProviderViewSet(viewsets.ReadOnlyModelViewSet):
    """Providers with price counts, stale counts and the newest price observation."""

    # The stale counts depend on the time of the request: built per request in get_queryset.
    queryset = Provider.objects.all()
    serializer_class = serializers.ProviderSerializer
    filterset_class = ProviderFilterSet
    lookup_field = "slug"
    lookup_value_regex = SLUG_REGEX
    ordering_fields = ["name", "slug", "price_count"]
    ordering = ["name"]

    def get_queryset(self):
        return selectors.provider_list()


class RegionViewSet(viewsets.ReadOnlyModelViewSet):
    """Provider regions by the provider's own code."""

    queryset = Region.objects.select_related("provider")
    serializer_class = serializers.RegionSerializer
    filterset_class = RegionFilterSet
    ordering_fields = ["code", "country", "provider__slug"]
    ordering = ["provider__slug", "code"]


class InstanceTypeViewSet(CSVExportMixin, viewsets.ReadOnlyModelViewSet):
    """Instance types: GPUs, host resources, interconnects."""

    queryset = InstanceType.objects.with_related()
    serializer_class = serializers.InstanceTypeSerializer
    filterset_class = InstanceTypeFilterSet
    ordering_fields = ["name", "gpu_count", "vcpus", "ram_gib", "provider__slug", "gpu__memory_gib"]
    ordering = ["provider__slug", "name"]


class PriceViewSet(CSVExportMixin, viewsets.ReadOnlyModelViewSet):
    """Current prices, normalised to USD per hour and per GPU-hour, with their freshness."""

    queryset = selectors.price_list()
    serializer_class = serializers.PriceSerializer
    filterset_class = PriceFilterSet
    lookup_value_regex = r"\d+"
    ordering_fields = ["usd_per_hour", "usd_per_gpu_hour", "observed_at", "amount"]
    ordering = ["usd_per_gpu_hour", "id"]


class PriceHistoryViewSet(CSVExportMixin, viewsets.ReadOnlyModelViewSet):
    """Every appearance, change and disappearance of a price, newest first."""

    queryset = PriceHistory.objects.select_related("instance_type__provider", "region")
    serializer_class = serializers.PriceHistorySerializer
    filterset_class = PriceHistoryFilterSet
    ordering_fields = ["observed_at", "recorded_at"]
    ordering = ["-recorded_at", "-id"]


class ScrapeRunViewSet(viewsets.ReadOnlyModelViewSet):
    """Refresh runs per provider with their counts and errors."""

    queryset = ScrapeRun.objects.select_related("provider").defer("held_records")
    serializer_class = serializers.ScrapeRunSerializer
    filterset_class = ScrapeRunFilterSet
    ordering_fields = ["started_at", "finished_at"]
    ordering = ["-started_at"]
