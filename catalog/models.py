"""Catalog tables: GPUs, interconnects, providers, regions, instance types and their prices.

Units are part of every field name. Reference data (GPUs, interconnects, providers, regions,
instance types) is PROTECTed so a price or its history can never lose what it refers to.
"""

from __future__ import annotations

from typing import Any

from django.db import models, transaction
from django.db.models import Q

from . import choices
from .fields import CodeField
from .querysets import GPUQuerySet, InstanceTypeQuerySet, PriceQuerySet, ProviderQuerySet


class GPU(models.Model):
    """One GPU model with its datasheet figures (dense tensor throughput, never with sparsity)."""

    slug = models.SlugField(max_length=64, unique=True)
    vendor = models.CharField(max_length=16, choices=choices.Vendor.choices)
    name = models.CharField(max_length=128)
    architecture = models.CharField(max_length=64)
    release_year = models.PositiveSmallIntegerField(null=True, blank=True)
    memory_gib = models.FloatField(help_text="Memory as marketed (80 for an 80 GB part).")
    memory_type = models.CharField(max_length=32, blank=True)
    memory_bandwidth_gb_s = models.FloatField()
    fp32_tflops = models.FloatField(null=True, blank=True)
    tf32_tflops = models.FloatField(null=True, blank=True)
    bf16_tflops = models.FloatField(null=True, blank=True)
    fp16_tflops = models.FloatField(null=True, blank=True)
    fp8_tflops = models.FloatField(null=True, blank=True)
    int8_tops = models.FloatField(null=True, blank=True)
    tdp_w = models.PositiveIntegerField(null=True, blank=True)
    form_factor = models.CharField(max_length=16, choices=choices.FormFactor.choices)
    nvlink_bandwidth_gb_s = models.FloatField(
        null=True, blank=True, help_text="Per GPU, both directions summed; empty when none."
    )
    ecc = models.BooleanField(default=True)
    segment = models.CharField(max_length=16, choices=choices.Segment.choices)
    datacenter_use_allowed = models.BooleanField(
        help_text="False for GeForce parts: NVIDIA's driver licence forbids datacenter deployment."
    )
    export_variant_of = models.ForeignKey(
        "self",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="export_variants",
    )
    source = models.TextField()
    source_url = models.URLField(max_length=500, blank=True)
    notes = models.TextField(blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = GPUQuerySet.as_manager()

    class Meta:
        ordering = ["vendor", "name"]
        verbose_name = "GPU"
        constraints = [
            models.CheckConstraint(condition=Q(memory_gib__gt=0), name="gpu_memory_positive"),
            models.CheckConstraint(
                condition=Q(memory_bandwidth_gb_s__gt=0), name="gpu_bandwidth_positive"
            ),
            models.CheckConstraint(
                condition=Q(bf16_tflops__isnull=True) | Q(bf16_tflops__gt=0),
                name="gpu_bf16_positive",
            ),
            models.CheckConstraint(
                condition=Q(fp16_tflops__isnull=True) | Q(fp16_tflops__gt=0),
                name="gpu_fp16_positive",
            ),
            models.CheckConstraint(
                condition=Q(fp8_tflops__isnull=True) | Q(fp8_tflops__gt=0),
                name="gpu_fp8_positive",
            ),
        ]

    def __str__(self) -> str:
        return self.name


class GPUAlias(models.Model):
    """A name a provider uses for a GPU ("A100-SXM4-80GB", "nvidia-tesla-t4")."""

    gpu = models.ForeignKey(GPU, on_delete=models.CASCADE, related_name="aliases")
    name = models.CharField(max_length=128)
    normalised = models.CharField(
        max_length=128, unique=True, help_text="Lower-case, punctuation folded; the lookup key."
    )

    class Meta:
        ordering = ["normalised"]
        verbose_name = "GPU alias"
        verbose_name_plural = "GPU aliases"

    def __str__(self) -> str:
        return f"{self.name} -> {self.gpu.slug}"


class Interconnect(models.Model):
    """A link technology within a node (PCIe, NVLink, NVSwitch) or between nodes (IB, RoCE, EFA)."""

    slug = models.SlugField(max_length=64, unique=True)
    kind = models.CharField(max_length=16, choices=choices.InterconnectKind.choices)
    generation = models.CharField(max_length=32, blank=True)
    name = models.CharField(max_length=128)
    bandwidth_value = models.FloatField(help_text="As the vendor quotes it, in bandwidth_unit.")
    bandwidth_unit = models.CharField(max_length=8, choices=choices.BandwidthUnit.choices)
    bandwidth_gb_s = models.FloatField(help_text="The same figure normalised to GB/s.")
    bandwidth_note = models.CharField(max_length=255, blank=True)
    scope = models.CharField(max_length=16, choices=choices.Scope.choices)
    rdma = models.BooleanField(default=False)
    source = models.TextField()
    source_url = models.URLField(max_length=500, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["scope", "kind", "bandwidth_gb_s"]
        constraints = [
            models.CheckConstraint(
                condition=Q(bandwidth_value__gt=0), name="interconnect_bandwidth_positive"
            ),
        ]

    def __str__(self) -> str:
        return self.name


class Provider(models.Model):
    """A company that rents GPUs: a hyperscaler, a regional cloud, a GPU cloud or a marketplace."""

    slug = models.SlugField(max_length=32, unique=True)
    name = models.CharField(max_length=128)
    kind = models.CharField(max_length=16, choices=choices.ProviderKind.choices)
    home_currency = models.CharField(max_length=3)
    website = models.URLField(max_length=300, blank=True)
    price_source_url = models.URLField(max_length=500, blank=True)
    scraper_key = models.CharField(max_length=32, blank=True)
    mainland_china = models.BooleanField(
        default=False, help_text="Operates mainland-China regions under Chinese law."
    )
    compliance_notes = models.TextField(blank=True)
    billing_granularity = models.CharField(max_length=8, choices=choices.BillingGranularity.choices)
    source = models.TextField(blank=True)
    updated_at = models.DateTimeField(auto_now=True)
    # Moves by one with every ingest of this provider's prices, in the ingest's transaction. A
    # refresh that finds a price unchanged moves only its observed_at and run (not updated_at,
    # so the rewrite is a HOT update: no index entries); the planner's catalog fingerprint
    # (sizing.selectors.catalog_version) reads the sum of these counters to notice it.
    prices_version = models.PositiveBigIntegerField(default=0, editable=False)

    objects = ProviderQuerySet.as_manager()

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Region(models.Model):
    """A provider's region, by the provider's own code."""

    provider = models.ForeignKey(Provider, on_delete=models.PROTECT, related_name="regions")
    code = models.CharField(max_length=64)
    name = models.CharField(max_length=128)
    country = models.CharField(max_length=2, help_text="ISO 3166-1 alpha-2.")
    geography = models.CharField(max_length=16, choices=choices.Geography.choices)
    mainland_china = models.BooleanField(default=False)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["provider__name", "code"]
        constraints = [
            models.UniqueConstraint(fields=["provider", "code"], name="region_natural_key"),
        ]

    def __str__(self) -> str:
        return f"{self.provider.slug}/{self.code}"


class InstanceType(models.Model):
    """A rentable machine shape: its GPUs, host resources and interconnects."""

    provider = models.ForeignKey(Provider, on_delete=models.PROTECT, related_name="instance_types")
    name = models.CharField(max_length=128)
    gpu = models.ForeignKey(GPU, on_delete=models.PROTECT, related_name="instance_types")
    gpu_count = models.DecimalField(
        max_digits=7, decimal_places=4, help_text="Fractional for shared GPUs (0.5 = half a GPU)."
    )
    gpu_sharing = models.CharField(
        max_length=16, choices=choices.GpuSharing.choices, default=choices.GpuSharing.DEDICATED
    )
    vcpus = models.PositiveIntegerField()
    ram_gib = models.FloatField()
    local_disk_gb = models.FloatField(default=0)
    local_disk_type = models.CharField(
        max_length=8, choices=choices.DiskType.choices, default=choices.DiskType.NONE
    )
    interconnect_intra = models.ForeignKey(
        Interconnect,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="intra_node_instance_types",
    )
    interconnect_inter = models.ForeignKey(
        Interconnect,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="inter_node_instance_types",
    )
    network_gbps = models.FloatField(null=True, blank=True)
    notes = models.TextField(blank=True)
    source = models.TextField(blank=True)
    source_url = models.URLField(max_length=500, blank=True)
    is_active = models.BooleanField(default=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = InstanceTypeQuerySet.as_manager()

    class Meta:
        ordering = ["provider__name", "name"]
        constraints = [
            models.UniqueConstraint(fields=["provider", "name"], name="instance_type_natural_key"),
            models.CheckConstraint(
                condition=Q(gpu_count__gt=0), name="instance_gpu_count_positive"
            ),
            models.CheckConstraint(condition=Q(vcpus__gt=0), name="instance_vcpus_positive"),
            models.CheckConstraint(condition=Q(ram_gib__gt=0), name="instance_ram_positive"),
            models.CheckConstraint(condition=Q(local_disk_gb__gte=0), name="instance_disk_nonneg"),
        ]

    def __str__(self) -> str:
        return f"{self.provider.slug}/{self.name}"

    @property
    def gpu_memory_total_gib(self) -> float:
        return float(self.gpu_count) * self.gpu.memory_gib


class ScrapeRun(models.Model):
    """One refresh of one provider's prices, with what it saw and did."""

    provider = models.ForeignKey(Provider, on_delete=models.PROTECT, related_name="scrape_runs")
    started_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True)
    status = models.CharField(
        max_length=8, choices=choices.ScrapeStatus.choices, default=choices.ScrapeStatus.RUNNING
    )
    trigger = models.CharField(max_length=16, default="schedule")
    pages = models.PositiveIntegerField(default=0)
    records_seen = models.PositiveIntegerField(default=0)
    created = models.PositiveIntegerField(default=0)
    changed = models.PositiveIntegerField(default=0)
    unchanged = models.PositiveIntegerField(default=0)
    quarantined = models.PositiveIntegerField(default=0)
    unmatched = models.PositiveIntegerField(default=0)
    gone = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    warnings = models.JSONField(
        default=list, blank=True, help_text="Drift: names the refresh could not map, and why."
    )
    gpu_names = models.JSONField(
        default=list, blank=True, help_text="The provider's GPU names this run read, sorted."
    )
    held_reason = models.CharField(max_length=500, blank=True)
    held_records = models.JSONField(
        null=True, blank=True, help_text="A held run's parsed records, ingested if approved."
    )
    decided_at = models.DateTimeField(null=True, blank=True)
    decided_by = models.CharField(max_length=150, blank=True)

    # What the ingest counts; listed by the admin, the API and the ingest alike.
    COUNT_FIELDS = (
        "records_seen",
        "created",
        "changed",
        "unchanged",
        "quarantined",
        "unmatched",
        "gone",
    )

    class Meta:
        ordering = ["-started_at"]
        indexes = [models.Index(fields=["provider", "-started_at"])]
        constraints = [
            # The database-level lock: at most one running refresh per provider, on every backend.
            models.UniqueConstraint(
                fields=["provider"],
                condition=Q(status="running"),
                name="one_running_scrape_per_provider",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.provider.slug} {self.started_at:%Y-%m-%d %H:%M} {self.status}"


class PriceWriteQuerySet(PriceQuerySet):
    """Prices whose bulk writes (``update``, ``delete``, ``bulk_create``; ``bulk_update`` goes
    through ``update``) move their providers' ``prices_version`` in the same transaction, so
    that the planner's caches notice them (as ``Price.save`` and ``Price.delete`` do; the raw
    writers call catalog.services.prices_version_move)."""

    def _owners(self) -> list[int]:
        return list(self.order_by().values_list("instance_type__provider_id", flat=True).distinct())

    def update(self, **kwargs: Any) -> int:
        with transaction.atomic(using=self.db, savepoint=False):
            owners = self._owners()
            rows = super().update(**kwargs)
            moved = kwargs.get("instance_type", kwargs.get("instance_type_id"))
            if moved is not None:  # prices moved to another instance type: its owner too
                owners.append(InstanceType.objects.get(pk=getattr(moved, "pk", moved)).provider_id)
            _prices_version_move(owners if rows else [])
        return rows

    update.alters_data = True  # type: ignore[attr-defined]

    def delete(self) -> tuple[int, dict[str, int]]:
        with transaction.atomic(using=self.db, savepoint=False):
            owners = self._owners()
            deleted = super().delete()
            _prices_version_move(owners if deleted[0] else [])
        return deleted

    delete.alters_data = True  # type: ignore[attr-defined]
    delete.queryset_only = True  # type: ignore[attr-defined]

    def bulk_create(self, objs: Any, *args: Any, **kwargs: Any) -> list[Price]:
        with transaction.atomic(using=self.db, savepoint=False):
            made = super().bulk_create(objs, *args, **kwargs)
            instance_ids = {obj.instance_type_id for obj in made}
            owners = InstanceType.objects.filter(pk__in=instance_ids).values_list(
                "provider_id", flat=True
            )
            _prices_version_move(list(owners.distinct()) if instance_ids else [])
        return made


def _prices_version_move(provider_ids: list[int], instance_type_ids: Any = ()) -> None:
    """Move by one the prices_version of the providers named and of those owning the instance
    types named."""
    owners = Q(pk__in=set(provider_ids))
    if instance_type_ids:
        owners |= Q(
            pk__in=InstanceType.objects.filter(pk__in=set(instance_type_ids)).values("provider_id")
        )
    if provider_ids or instance_type_ids:
        Provider.objects.filter(owners).update(prices_version=models.F("prices_version") + 1)


class Price(models.Model):
    """The current price of one instance type in one region under one pricing model.

    Every write of a price moves its provider's ``prices_version`` in the writer's transaction
    (catalog.services.prices_version_move; ``Price.objects``' bulk writes do it themselves)."""

    # Indexes: every refresh rewrites each price it sees again. A price whose figures moved gets
    # a new entry in every index, so the table keeps only those a query needs (migration 0005);
    # a price seen again unchanged moves only observed_at and scrape_run, no indexed column, and
    # with the room each page keeps (fillfactor, migration 0006) its rewrite is a HOT update.
    # The natural key's unique index leads with instance_type and serves its lookups; nothing
    # filters prices by run or orders them by observed_at over an index (catalog-wide MIN/MAX/
    # stale counts scan, as they read most rows).
    # Keys: on_delete is Django's; on PostgreSQL the database checks both keys once per
    # statement (triggers of migration 0011), not once per row as a foreign key constraint
    # would (~4 us a key at commit, a third of a new price's database cost).
    instance_type = models.ForeignKey(
        InstanceType,
        on_delete=models.PROTECT,
        related_name="prices",
        db_index=False,
        db_constraint=False,
    )
    region = models.ForeignKey(
        Region, on_delete=models.PROTECT, related_name="prices", db_constraint=False
    )
    pricing_model = CodeField(max_length=16, choices=choices.PricingModel.choices)
    amount = models.DecimalField(max_digits=16, decimal_places=6)
    currency = models.CharField(max_length=3)
    unit = models.CharField(max_length=8, choices=choices.PriceUnit.choices)
    usd_per_hour = models.DecimalField(max_digits=16, decimal_places=6)
    usd_per_gpu_hour = models.DecimalField(max_digits=16, decimal_places=6)
    observed_at = models.DateTimeField(help_text="When the figure was published or read.")
    source = models.CharField(max_length=16, choices=choices.PriceSource.choices)
    source_url = models.URLField(max_length=500, blank=True)
    source_note = models.CharField(max_length=500, blank=True)
    # The run that last saw the price. Every refresh moves it on every price it sees, and a
    # database foreign key would check each moved value against catalog_scraperun at commit
    # (~3.7 us a price, a sixth of a refresh that finds nothing moved: migration 0007), so the
    # key is Django's only: on_delete=SET_NULL is Django's own, applied when a run is deleted
    # through the ORM or the admin (no code deletes runs).
    scrape_run = models.ForeignKey(
        ScrapeRun,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="prices",
        db_index=False,
        db_constraint=False,
    )
    locked = models.BooleanField(
        default=False, help_text="Locked by a curator: scrapers never overwrite it."
    )
    locked_note = models.CharField(max_length=255, blank=True)
    gone_at = models.DateTimeField(
        null=True, blank=True, help_text="Set when the provider stopped listing it; never deleted."
    )
    missed_runs = models.PositiveIntegerField(default=0)
    extra = models.JSONField(
        default=dict,
        blank=True,
        help_text="Source details, e.g. a marketplace's min/median and offer count.",
    )
    updated_at = models.DateTimeField(auto_now=True)

    objects = PriceWriteQuerySet.as_manager()

    class Meta:
        ordering = ["usd_per_gpu_hour"]
        constraints = [
            models.UniqueConstraint(
                fields=["instance_type", "region", "pricing_model"], name="price_natural_key"
            ),
            models.CheckConstraint(condition=Q(amount__gte=0), name="price_amount_nonneg"),
            models.CheckConstraint(condition=Q(usd_per_hour__gte=0), name="price_usd_nonneg"),
            models.CheckConstraint(
                condition=Q(usd_per_gpu_hour__gte=0), name="price_usd_gpu_nonneg"
            ),
        ]
        indexes = [
            # The price API's and CSV's page of one pricing model by price (a LIMIT read off
            # the index): at 256,000 prices 97 ms a page with it, 907 ms without (RESULTS.md,
            # "history keys Django's only"). It is why a changed price's rewrite is not HOT.
            models.Index(fields=["pricing_model", "usd_per_gpu_hour"]),
            # No index on updated_at: neither fingerprint reads the price table (both take the
            # providers' prices_version), so a changed price's rewrite feeds one index fewer.
        ]

    def __str__(self) -> str:
        return f"{self.instance_type} {self.region.code} {self.pricing_model} {self.amount} {self.currency}/{self.unit}"

    # A saved or deleted price moves its provider's prices_version (the planner's fingerprint of
    # the provider's prices) in the same transaction, whoever saves it: the sheet import and
    # quarantine approval (catalog.services.price_upsert), the admin, tools and tests.
    def save(self, *args: Any, **kwargs: Any) -> None:
        with transaction.atomic(using=kwargs.get("using"), savepoint=False):
            stored = []
            if not self._state.adding and self.pk is not None:  # a move to another instance type
                stored = list(
                    Price.objects.filter(pk=self.pk).values_list("instance_type_id", flat=True)
                )
            super().save(*args, **kwargs)
            _prices_version_move([], {self.instance_type_id, *stored})

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        with transaction.atomic(using=kwargs.get("using"), savepoint=False):
            deleted = super().delete(*args, **kwargs)
            _prices_version_move([], {self.instance_type_id})
        return deleted


class PriceHistory(models.Model):
    """Append-only log: one row whenever a price appears, changes or disappears."""

    # Indexes: the (instance type, region, pricing model, observed_at) one below serves every
    # lookup by instance type, so the foreign key has none of its own; nothing reads history by
    # run (deleting a run in the admin scans it). Each index is an entry per history row, and a
    # refresh writes one per price that appears or changes (migration 0007).
    # Keys: on_delete (PROTECT, SET_NULL) is Django's own, applied to deletes through the ORM
    # and the admin. A foreign key constraint checked every history row at commit (~7.7 us
    # each, a third of what a new price cost PostgreSQL; dropped in 0009); on PostgreSQL the
    # instance type and region keys are checked once per statement instead (triggers of
    # migration 0011, as for Price). The run's key is Django's only.
    instance_type = models.ForeignKey(
        InstanceType,
        on_delete=models.PROTECT,
        related_name="price_history",
        db_index=False,
        db_constraint=False,
    )
    region = models.ForeignKey(
        Region, on_delete=models.PROTECT, related_name="price_history", db_constraint=False
    )
    pricing_model = CodeField(max_length=16, choices=choices.PricingModel.choices)
    event = models.CharField(max_length=16, choices=choices.PriceEvent.choices)
    amount = models.DecimalField(max_digits=16, decimal_places=6, null=True, blank=True)
    previous_amount = models.DecimalField(max_digits=16, decimal_places=6, null=True, blank=True)
    currency = models.CharField(max_length=3)
    unit = models.CharField(max_length=8, choices=choices.PriceUnit.choices)
    usd_per_hour = models.DecimalField(max_digits=16, decimal_places=6, null=True, blank=True)
    usd_per_gpu_hour = models.DecimalField(max_digits=16, decimal_places=6, null=True, blank=True)
    observed_at = models.DateTimeField()
    recorded_at = models.DateTimeField(auto_now_add=True)
    source = models.CharField(max_length=16, choices=choices.PriceSource.choices)
    scrape_run = models.ForeignKey(
        ScrapeRun,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="history",
        db_index=False,
        db_constraint=False,
    )

    class Meta:
        ordering = ["-recorded_at", "-id"]
        verbose_name_plural = "price history"
        indexes = [models.Index(fields=["instance_type", "region", "pricing_model", "observed_at"])]
        constraints = [
            models.CheckConstraint(
                condition=Q(amount__isnull=True) | Q(amount__gte=0), name="history_amount_nonneg"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.event} {self.instance_type} {self.region.code} {self.pricing_model}"


class CurrencyRate(models.Model):
    """The USD value of one unit of a currency on a date (ECB reference rates)."""

    currency = models.CharField(max_length=3)
    usd_per_unit = models.DecimalField(max_digits=20, decimal_places=10)
    as_of = models.DateField()
    source = models.TextField()
    source_url = models.URLField(max_length=500, blank=True)

    class Meta:
        ordering = ["currency", "-as_of"]
        constraints = [
            models.UniqueConstraint(fields=["currency", "as_of"], name="currency_rate_natural_key"),
            models.CheckConstraint(condition=Q(usd_per_unit__gt=0), name="currency_rate_positive"),
        ]

    def __str__(self) -> str:
        return f"1 {self.currency} = {self.usd_per_unit} USD ({self.as_of})"


class UnmatchedGPUName(models.Model):
    """A provider name a refresh could not map (a GPU, SKU, instance family or region).

    A GPU name is mapped to a GPU by a curator (an alias); other kinds call for a parser or
    fixture change and stay listed until they stop appearing.
    """

    provider = models.ForeignKey(Provider, on_delete=models.PROTECT, related_name="unmatched_gpus")
    kind = models.CharField(
        max_length=16, choices=choices.UnmatchedKind.choices, default=choices.UnmatchedKind.GPU
    )
    name = models.CharField(max_length=255)
    normalised = models.CharField(max_length=255)
    first_seen_at = models.DateTimeField(auto_now_add=True)
    last_seen_at = models.DateTimeField(auto_now=True)
    times_seen = models.PositiveIntegerField(default=1)
    example = models.JSONField(default=dict, blank=True)
    mapped_to = models.ForeignKey(
        GPU, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )

    class Meta:
        ordering = ["mapped_to", "-times_seen"]
        verbose_name = "unmatched name"
        constraints = [
            models.UniqueConstraint(
                fields=["provider", "kind", "normalised"], name="unmatched_natural_key"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.provider.slug}: {self.name}"


class QuarantinedPrice(models.Model):
    """A scraped price held back for a curator: zero, or moved beyond the allowed factor."""

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        APPROVED = "approved", "Approved"
        REJECTED = "rejected", "Rejected"

    scrape_run = models.ForeignKey(ScrapeRun, on_delete=models.CASCADE, related_name="quarantine")
    instance_type = models.ForeignKey(InstanceType, on_delete=models.PROTECT, related_name="+")
    region = models.ForeignKey(Region, on_delete=models.PROTECT, related_name="+")
    pricing_model = CodeField(max_length=16, choices=choices.PricingModel.choices)
    amount = models.DecimalField(max_digits=16, decimal_places=6)
    currency = models.CharField(max_length=3)
    unit = models.CharField(max_length=8, choices=choices.PriceUnit.choices)
    usd_per_hour = models.DecimalField(max_digits=16, decimal_places=6)
    previous_usd_per_hour = models.DecimalField(
        max_digits=16, decimal_places=6, null=True, blank=True
    )
    reason = models.CharField(max_length=255)
    observed_at = models.DateTimeField()
    record = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.PENDING)
    decided_at = models.DateTimeField(null=True, blank=True)
    decided_by = models.CharField(max_length=150, blank=True)

    class Meta:
        ordering = ["status", "-observed_at"]
        verbose_name = "quarantined price"
        constraints = [
            models.CheckConstraint(condition=Q(amount__gte=0), name="quarantine_amount_nonneg"),
        ]

    def __str__(self) -> str:
        return f"{self.instance_type} {self.region.code} {self.pricing_model}: {self.reason}"


class CrossCheckRun(models.Model):
    """One comparison of a provider's current prices with a second, independent source."""

    provider = models.ForeignKey(Provider, on_delete=models.PROTECT, related_name="crosscheck_runs")
    source = models.CharField(max_length=64, help_text="The second source, e.g. SkyPilot catalog.")
    source_url = models.URLField(max_length=500, blank=True)
    source_commit = models.CharField(max_length=40, blank=True)
    source_date = models.DateTimeField(
        null=True, blank=True, help_text="When the source published what was read (its commit)."
    )
    started_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True)
    status = models.CharField(
        max_length=8,
        choices=choices.CrossCheckStatus.choices,
        default=choices.CrossCheckStatus.RUNNING,
    )
    trigger = models.CharField(max_length=16, default="schedule")
    rows_read = models.PositiveIntegerField(default=0)
    compared = models.PositiveIntegerField(default=0)
    agreements = models.PositiveIntegerField(default=0)
    disagreements = models.PositiveIntegerField(default=0)
    filed = models.PositiveIntegerField(default=0)
    refreshed = models.PositiveIntegerField(default=0)
    already_decided = models.PositiveIntegerField(default=0)
    resolved = models.PositiveIntegerField(default=0)
    not_covered = models.PositiveIntegerField(default=0)
    not_independent = models.PositiveIntegerField(default=0)
    unmatched = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    warnings = models.JSONField(default=list, blank=True)

    # What a run counts; listed by the admin, the command and the service alike.
    COUNT_FIELDS = (
        "rows_read", "compared", "agreements", "disagreements", "filed", "refreshed",
        "already_decided", "resolved", "not_covered", "not_independent", "unmatched",
    )  # fmt: skip

    class Meta:
        ordering = ["-started_at"]
        verbose_name = "cross-check run"
        indexes = [models.Index(fields=["provider", "-started_at"])]
        constraints = [
            models.UniqueConstraint(
                fields=["provider"],
                condition=Q(status="running"),
                name="one_running_crosscheck_per_provider",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.provider.slug} cross-check {self.started_at:%Y-%m-%d %H:%M} {self.status}"


class PriceDisagreement(models.Model):
    """A current price a second source puts more than the tolerance away, for a curator.

    Never applied by itself: a curator accepts it (the second source's figure becomes the price,
    with history) or dismisses it (the primary stays). The same figures are filed once.
    """

    price = models.ForeignKey(Price, on_delete=models.PROTECT, related_name="disagreements")
    provider = models.ForeignKey(Provider, on_delete=models.PROTECT, related_name="+")
    primary_usd_per_hour = models.DecimalField(max_digits=16, decimal_places=6)
    primary_observed_at = models.DateTimeField()
    second_usd_per_hour = models.DecimalField(
        max_digits=16, decimal_places=6, help_text="The second source's figure nearest ours."
    )
    second_low_usd_per_hour = models.DecimalField(
        max_digits=16, decimal_places=6, help_text="Lowest of the source's zone figures."
    )
    second_high_usd_per_hour = models.DecimalField(
        max_digits=16, decimal_places=6, help_text="Highest of the source's zone figures."
    )
    ratio = models.DecimalField(
        max_digits=12, decimal_places=4, null=True, blank=True, help_text="Second / primary."
    )
    source = models.CharField(max_length=64)
    source_url = models.URLField(max_length=500, blank=True)
    source_commit = models.CharField(max_length=40, blank=True)
    source_date = models.DateTimeField(null=True, blank=True)
    run = models.ForeignKey(
        CrossCheckRun, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    status = models.CharField(
        max_length=10,
        choices=choices.DisagreementStatus.choices,
        default=choices.DisagreementStatus.OPEN,
    )
    first_seen_at = models.DateTimeField()
    last_seen_at = models.DateTimeField()
    times_seen = models.PositiveIntegerField(default=1)
    decided_at = models.DateTimeField(null=True, blank=True)
    decided_by = models.CharField(max_length=150, blank=True)
    note = models.CharField(max_length=500, blank=True)

    class Meta:
        ordering = ["status", "-last_seen_at"]
        verbose_name = "price disagreement"
        constraints = [
            # The same figures for the same price are one disagreement, whatever became of it.
            models.UniqueConstraint(
                fields=["price", "primary_usd_per_hour", "second_usd_per_hour"],
                name="disagreement_natural_key",
            ),
            models.UniqueConstraint(
                fields=["price"],
                condition=Q(status="open"),
                name="one_open_disagreement_per_price",
            ),
            models.CheckConstraint(
                condition=Q(second_usd_per_hour__gte=0), name="disagreement_second_nonneg"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.price}: {self.source} says {self.second_usd_per_hour} USD/h"
