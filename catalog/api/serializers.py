"""Read serializers for the catalog; key names are the contract in DESIGN.md (units in names)."""

from __future__ import annotations

from typing import Any

from django.db import models
from django.utils import timezone
from django.utils.encoding import iri_to_uri
from rest_framework import serializers

from ..models import (
    GPU,
    InstanceType,
    Interconnect,
    Price,
    PriceHistory,
    Provider,
    Region,
    ScrapeRun,
)
from ..querysets import MARKETPLACE, price_stale_at


class UriField(serializers.URLField):
    """A stored URL as the schema types it (``format: uri``, RFC 3986): the non-ASCII characters of
    an IRI a curator pasted (Alibaba's documentation has Chinese paths) go out percent-encoded."""

    def to_representation(self, value: Any) -> str:
        return iri_to_uri(super().to_representation(value)) or ""


# Every catalog serializer: model URL fields are answered as URIs (UriField). No docstring, so the
# schema's component descriptions stay the serializers' own.
class CatalogSerializer(serializers.ModelSerializer):
    serializer_field_mapping = {
        **serializers.ModelSerializer.serializer_field_mapping,
        models.URLField: UriField,
    }


class GPUSerializer(CatalogSerializer):
    export_variant_of: serializers.SlugRelatedField[GPU] = serializers.SlugRelatedField(
        slug_field="slug", read_only=True, allow_null=True
    )
    aliases = serializers.SerializerMethodField()

    class Meta:
        model = GPU
        fields = [
            "slug", "name", "vendor", "architecture", "release_year", "memory_gib", "memory_type",
            "memory_bandwidth_gb_s", "fp32_tflops", "tf32_tflops", "bf16_tflops", "fp16_tflops",
            "fp8_tflops", "int8_tops", "tdp_w", "form_factor", "nvlink_bandwidth_gb_s", "ecc",
            "segment", "datacenter_use_allowed", "export_variant_of", "aliases", "source",
            "source_url", "notes",
        ]  # fmt: skip

    def get_aliases(self, gpu: GPU) -> list[str]:
        return sorted(alias.name for alias in gpu.aliases.all())


class InterconnectSerializer(CatalogSerializer):
    class Meta:
        model = Interconnect
        fields = [
            "slug", "kind", "generation", "name", "bandwidth_value", "bandwidth_unit",
            "bandwidth_gb_s", "bandwidth_note", "scope", "rdma", "source", "source_url",
        ]  # fmt: skip


class ProviderSerializer(CatalogSerializer):
    price_count = serializers.IntegerField(read_only=True)
    stale_price_count = serializers.IntegerField(read_only=True)
    last_price_observed_at = serializers.DateTimeField(read_only=True, allow_null=True)
    last_run_status = serializers.CharField(read_only=True, allow_null=True)
    last_run_at = serializers.DateTimeField(read_only=True, allow_null=True)
    last_success_at = serializers.DateTimeField(read_only=True, allow_null=True)

    class Meta:
        model = Provider
        fields = [
            "slug", "name", "kind", "home_currency", "website", "price_source_url", "scraper_key",
            "mainland_china", "compliance_notes", "billing_granularity", "price_count",
            "stale_price_count", "last_price_observed_at", "last_run_status", "last_run_at",
            "last_success_at",
        ]  # fmt: skip


class RegionSerializer(CatalogSerializer):
    provider: serializers.SlugRelatedField[Provider] = serializers.SlugRelatedField(
        slug_field="slug", read_only=True
    )

    class Meta:
        model = Region
        fields = ["id", "provider", "code", "name", "country", "geography", "mainland_china"]


class InstanceTypeSerializer(CatalogSerializer):
    provider: serializers.SlugRelatedField[Provider] = serializers.SlugRelatedField(
        slug_field="slug", read_only=True
    )
    gpu: serializers.SlugRelatedField[GPU] = serializers.SlugRelatedField(
        slug_field="slug", read_only=True
    )
    gpu_memory_gib = serializers.FloatField(source="gpu.memory_gib", read_only=True)
    gpu_memory_total_gib = serializers.FloatField(read_only=True)
    gpu_count = serializers.FloatField()
    interconnect_intra: serializers.SlugRelatedField[Interconnect] = serializers.SlugRelatedField(
        slug_field="slug", read_only=True, allow_null=True
    )
    interconnect_inter: serializers.SlugRelatedField[Interconnect] = serializers.SlugRelatedField(
        slug_field="slug", read_only=True, allow_null=True
    )

    class Meta:
        model = InstanceType
        fields = [
            "id", "provider", "name", "gpu", "gpu_count", "gpu_memory_gib", "gpu_memory_total_gib",
            "gpu_sharing", "vcpus", "ram_gib", "local_disk_gb", "local_disk_type",
            "interconnect_intra", "interconnect_inter", "network_gbps", "notes", "source",
            "source_url",
        ]  # fmt: skip


class StaleMixin(serializers.Serializer):
    stale = serializers.SerializerMethodField()

    def get_stale(self, obj) -> bool:
        """Past the shelf life of its pricing model (``catalog.querysets.shelf_life_days``)."""
        now = self.context.setdefault("now", timezone.now())
        marketplace = obj.instance_type.provider.kind == MARKETPLACE
        return price_stale_at(obj.observed_at, obj.pricing_model, marketplace=marketplace) <= now


class PriceSerializer(StaleMixin, CatalogSerializer):
    instance_type = serializers.CharField(source="instance_type.name")
    provider = serializers.CharField(source="instance_type.provider.slug")
    region = serializers.CharField(source="region.code")
    gpu = serializers.CharField(source="instance_type.gpu.slug")
    gpu_count = serializers.FloatField(source="instance_type.gpu_count")
    amount = serializers.FloatField()
    usd_per_hour = serializers.FloatField()
    usd_per_gpu_hour = serializers.FloatField()

    class Meta:
        model = Price
        fields = [
            "id", "instance_type", "provider", "region", "gpu", "gpu_count", "pricing_model",
            "amount", "currency", "unit", "usd_per_hour", "usd_per_gpu_hour", "observed_at",
            "stale", "source", "source_url", "source_note", "locked",
        ]  # fmt: skip


class PriceHistorySerializer(CatalogSerializer):
    instance_type = serializers.CharField(source="instance_type.name")
    provider = serializers.CharField(source="instance_type.provider.slug")
    region = serializers.CharField(source="region.code")
    amount = serializers.FloatField(allow_null=True)
    previous_amount = serializers.FloatField(allow_null=True)
    usd_per_hour = serializers.FloatField(allow_null=True)
    usd_per_gpu_hour = serializers.FloatField(allow_null=True)

    class Meta:
        model = PriceHistory
        fields = [
            "id", "instance_type", "provider", "region", "pricing_model", "event", "amount",
            "previous_amount", "currency", "unit", "usd_per_hour", "usd_per_gpu_hour",
            "observed_at", "recorded_at", "source", "scrape_run",
        ]  # fmt: skip


class ScrapeRunSerializer(CatalogSerializer):
    provider: serializers.SlugRelatedField[Provider] = serializers.SlugRelatedField(
        slug_field="slug", read_only=True
    )

    class Meta:
        model = ScrapeRun
        fields = [
            "id", "provider", "started_at", "finished_at", "status", "trigger", "pages",
            *ScrapeRun.COUNT_FIELDS, "error", "warnings", "held_reason", "decided_at", "decided_by",
        ]  # fmt: skip
