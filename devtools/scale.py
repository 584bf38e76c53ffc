"""A synthetic catalog of any size for benchmarks (``manage.py scale_catalog``).

Bench providers are marked three ways so nobody mistakes them for real ones: slug ``bench-<n>``,
name "Bench cloud <n> (synthetic)", and ``source`` = ``BENCH_SOURCE``. They have no scraper key, so
no refresh or schedule ever touches them. The catalog is deterministic: provider ``n`` is always
drawn from the same seed, and ``--prices N`` keeps exactly the first N of the infinite sequence of
bench prices, so the same N twice changes nothing and a larger N only adds.

The mix follows the real catalog: GPUs are drawn as often as real instance types use them, each
priced from the median real on-demand USD per GPU-hour (or its bandwidth when it has none), in
counts of 1/2/4/8 with the interconnects those counts come with, across regions on five
continents, on demand with spot, 1-year reserved and monthly prices where clouds offer them.
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from django.db import transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

from catalog import choices
from catalog.models import (
    GPU,
    InstanceType,
    Interconnect,
    Price,
    PriceHistory,
    Provider,
    QuarantinedPrice,
    Region,
    ScrapeRun,
    UnmatchedGPUName,
)
from catalog.selectors import currency_rates_latest
from catalog.services import (
    CatalogDataError,
    PriceFigures,
    PriceKey,
    price_figures_build,
    price_figures_changed,
    prices_bulk_write,
    rows_insert,
)

BENCH_SLUG_PREFIX = "bench-"
BENCH_SOURCE = "Synthetic benchmark data (manage.py scale_catalog); not a real provider."
BENCH_NOTE = "synthetic: manage.py scale_catalog"
BATCH = 2000


# Shape of a bench provider by kind, after the real catalog (fixtures/providers/*.yaml as loaded
# on 2026-12-01: GCP 40 regions x 36 machine types, spot on 98% of its on-demand prices and 1-
# and 3-year commitments on 81% and 82%; AWS 30 x 72, 1- and 3-year reservations on 79%; Tencent
# monthly on 26 of 45 prices) and the providers' own price lists: hyperscalers publish on demand,
# spot and 1- and 3-year terms in many regions; GPU clouds a few regions, on demand with some
# spot and commitments; regional and Chinese clouds monthly and yearly subscriptions;
# marketplaces one offer per host machine (an instance type each) in many cities, on demand and
# interruptible. Fields: regions, instance types (offers for a marketplace), share of (type,
# region) pairs offered, and the share of offered pairs with each further pricing model.
@dataclass(frozen=True)
class KindShape:
    regions: tuple[int, int]
    instance_types: tuple[int, int]
    availability: float
    spot: float = 0.0
    reserved_1y: float = 0.0
    reserved_3y: float = 0.0
    monthly: float = 0.0
    yearly: float = 0.0
    marketplace: bool = False  # each instance type (a host's offer) in one region only


HYPERSCALER = KindShape((20, 45), (40, 90), 0.6, spot=0.85, reserved_1y=0.8, reserved_3y=0.8)
GPU_CLOUD = KindShape((3, 15), (8, 40), 0.7, spot=0.4, reserved_1y=0.1, monthly=0.1, yearly=0.05)
REGIONAL_CLOUD = KindShape((2, 8), (10, 30), 0.8, spot=0.1, monthly=0.4, yearly=0.2)
CHINA_CLOUD = KindShape((8, 24), (30, 70), 0.6, spot=0.4, monthly=0.8, yearly=0.5)
MARKETPLACE = KindShape((10, 40), (500, 3000), 1.0, spot=0.6, marketplace=True)
# Spot 30-70% of on demand, 1-year reserved ~38% off, 3-year ~57% off, monthly ~30% off,
# yearly ~45% off.
SPOT_RANGE = (0.3, 0.7)
RESERVED_FACTOR, RESERVED_3Y_FACTOR = 0.62, 0.43
MONTHLY_FACTOR, YEARLY_FACTOR = 0.7, 0.55
HOURS_PER_MONTH = choices.HOURS_PER_UNIT[choices.PriceUnit.MONTH]
HOURS_PER_YEAR = choices.HOURS_PER_UNIT[choices.PriceUnit.YEAR]
# A small share of prices older than the staleness limit, as a real catalog has.
STALE_SHARE = 0.04
# History: the share of prices that changed once since they appeared (spot moves most), how far
# the first quoted amount was from today's, and how long before the current observation.
CHANGED_SHARE = {
    choices.PricingModel.SPOT: 0.7,
    choices.PricingModel.ON_DEMAND: 0.1,
}
CHANGED_SHARE_OTHER = 0.05
FIRST_AMOUNT_RANGE = {choices.PricingModel.SPOT: (0.6, 1.5)}
FIRST_AMOUNT_RANGE_OTHER = (0.85, 1.2)
FIRST_SEEN_DAYS_BEFORE = (7, 90)
# Per-GPU-hour price of a GPU with no real price: about 0.69 USD per TB/s of memory bandwidth
# plus 0.1 (T4 ~0.32, A100-80GB ~1.5, H100 SXM ~2.4, in line with the real medians).
USD_PER_TB_S_HOUR = 0.69
USD_BASE_HOUR = 0.1

KINDS = [
    (choices.ProviderKind.HYPERSCALER, "USD", HYPERSCALER),
    (choices.ProviderKind.GPU_CLOUD, "USD", GPU_CLOUD),
    (choices.ProviderKind.REGIONAL_CLOUD, "EUR", REGIONAL_CLOUD),
    (choices.ProviderKind.HYPERSCALER, "CNY", CHINA_CLOUD),
    (choices.ProviderKind.MARKETPLACE, "USD", MARKETPLACE),
    (choices.ProviderKind.GPU_CLOUD, "USD", GPU_CLOUD),
]
# (code prefix, name, country, geography)
REGION_POOL = [
    ("us-east", "US East", "US", choices.Geography.NORTH_AMERICA),
    ("us-west", "US West", "US", choices.Geography.NORTH_AMERICA),
    ("us-central", "US Central", "US", choices.Geography.NORTH_AMERICA),
    ("ca-central", "Canada Central", "CA", choices.Geography.NORTH_AMERICA),
    ("eu-west", "Europe West", "IE", choices.Geography.EUROPE),
    ("eu-central", "Europe Central", "DE", choices.Geography.EUROPE),
    ("eu-north", "Europe North", "SE", choices.Geography.EUROPE),
    ("eu-south", "Europe South", "IT", choices.Geography.EUROPE),
    ("uk-south", "UK South", "GB", choices.Geography.EUROPE),
    ("fr-central", "France Central", "FR", choices.Geography.EUROPE),
    ("ap-northeast", "Asia Pacific Tokyo", "JP", choices.Geography.ASIA_PACIFIC),
    ("ap-southeast", "Asia Pacific Singapore", "SG", choices.Geography.ASIA_PACIFIC),
    ("ap-south", "Asia Pacific Mumbai", "IN", choices.Geography.ASIA_PACIFIC),
    ("ap-korea", "Asia Pacific Seoul", "KR", choices.Geography.ASIA_PACIFIC),
    ("au-east", "Australia East", "AU", choices.Geography.OCEANIA),
    ("sa-east", "South America Sao Paulo", "BR", choices.Geography.SOUTH_AMERICA),
    ("me-central", "Middle East UAE", "AE", choices.Geography.MIDDLE_EAST),
    ("af-south", "Africa Johannesburg", "ZA", choices.Geography.AFRICA),
]
CHINA_REGIONS = [
    ("cn-north", "China North Beijing", "CN", choices.Geography.MAINLAND_CHINA),
    ("cn-east", "China East Shanghai", "CN", choices.Geography.MAINLAND_CHINA),
    ("cn-south", "China South Guangzhou", "CN", choices.Geography.MAINLAND_CHINA),
]
# GPU counts per instance and how often each appears: big training parts come in eights.
COUNTS = (1, 2, 4, 8)
COUNT_WEIGHTS_LARGE = (2, 1, 2, 4)  # 80 GB and more
COUNT_WEIGHTS_SMALL = (5, 2, 2, 1)


@dataclass(frozen=True)
class BenchGPU:
    """What the generator needs of a catalog GPU."""

    slug: str
    name: str
    vendor: str
    architecture: str
    memory_gib: float
    nvlink: bool
    usd_per_gpu_hour: float
    weight: int


@dataclass(frozen=True)
class BenchInstance:
    name: str
    gpu: BenchGPU
    gpu_count: Decimal
    gpu_sharing: str
    vcpus: int
    ram_gib: float
    local_disk_gb: float
    local_disk_type: str
    intra: str | None
    inter: str | None
    network_gbps: float


@dataclass(frozen=True)
class BenchOffer:
    """One synthetic price, as a provider would quote it (whole instance, home currency)."""

    instance: BenchInstance
    region: str
    pricing_model: str
    amount: Decimal
    currency: str
    unit: str
    age_days: float
    # History: the amount first quoted and how many days before the current observation, when
    # the price changed once since it appeared (None when it never changed).
    first_amount: Decimal | None = None
    first_seen_days_before: float = 0.0


@dataclass
class BenchProvider:
    n: int
    slug: str
    name: str
    kind: str
    currency: str
    mainland_china: bool
    regions: list[tuple[str, str, str, str]]
    instances: list[BenchInstance]
    offers: list[BenchOffer] = field(default_factory=list)


@dataclass
class ScaleReport:
    providers: int = 0
    regions: int = 0
    instance_types: int = 0
    prices_created: int = 0
    prices_changed: int = 0
    prices_deleted: int = 0
    prices_total: int = 0

    def as_text(self) -> str:
        return (
            f"bench prices {self.prices_total} (created {self.prices_created}, changed "
            f"{self.prices_changed}, deleted {self.prices_deleted}); created providers {self.providers}, regions {self.regions}, "
            f"instance types {self.instance_types}"
        )


# --- Generation (pure) ---------------------------------------------------------------------


def _intra(gpu: BenchGPU, count: int) -> str | None:
    if count <= 1:
        return None
    if gpu.vendor == "amd":
        return "infinity-fabric"
    if gpu.vendor == "huawei":
        return "hccs"
    if gpu.nvlink:
        arch = gpu.architecture
        if count >= 4:
            return {"Hopper": "nvswitch-gen3", "Blackwell": "nvswitch-gen4"}.get(
                arch, "nvswitch-gen2"
            )
        return {"Hopper": "nvlink-4", "Blackwell": "nvlink-5", "Volta": "nvlink-2"}.get(
            arch, "nvlink-3"
        )
    return (
        "pcie-gen5" if gpu.architecture in ("Hopper", "Blackwell", "Ada Lovelace") else "pcie-gen4"
    )


def _inter(gpu: BenchGPU, count: int) -> tuple[str, float]:
    if count == 8 and gpu.memory_gib >= 80:
        if gpu.architecture in ("Hopper", "Blackwell"):
            return "infiniband-ndr", 3200.0
        return "infiniband-hdr", 1600.0
    if count >= 4:
        return "roce-v2-200", 200.0
    return ("ethernet-100", 100.0) if count == 2 else ("ethernet-25", 25.0)


def _instances(
    rng: random.Random, gpus: list[BenchGPU], n: int, shape: KindShape
) -> list[BenchInstance]:
    wanted = rng.randint(*shape.instance_types)
    weights = [g.weight for g in gpus]
    seen: set[str] = set()
    out: list[BenchInstance] = []
    for index in range(wanted * 4):
        if len(out) >= wanted:
            break
        gpu = rng.choices(gpus, weights)[0]
        large = gpu.memory_gib >= 80
        count = rng.choices(COUNTS, COUNT_WEIGHTS_LARGE if large else COUNT_WEIGHTS_SMALL)[0]
        family = rng.choice(("g", "p", "gn", "x"))
        # A marketplace offer is one host machine: every one its own instance type.
        name = f"b{n}.{'m' + str(index) if shape.marketplace else family}.{gpu.slug}.{count}x"
        if name in seen:
            continue
        seen.add(name)
        vcpus_per_gpu = rng.choice((4, 8, 12, 16, 24))
        inter, gbps = _inter(gpu, count)
        nvme = large or rng.random() < 0.5
        out.append(
            BenchInstance(
                name=name,
                gpu=gpu,
                gpu_count=Decimal(count),
                gpu_sharing=choices.GpuSharing.DEDICATED,
                vcpus=vcpus_per_gpu * count,
                ram_gib=float(round(gpu.memory_gib * count * rng.uniform(1.0, 3.0))),
                local_disk_gb=float(count * rng.choice((500, 1000, 3840))) if nvme else 0.0,
                local_disk_type=choices.DiskType.NVME if nvme else choices.DiskType.NONE,
                intra=_intra(gpu, count),
                inter=inter,
                network_gbps=gbps,
            )
        )
    return out


def _regions(rng: random.Random, china: bool, shape: KindShape) -> list[tuple[str, str, str, str]]:
    pool = CHINA_REGIONS if china else REGION_POOL
    wanted = rng.randint(*shape.regions)
    out: list[tuple[str, str, str, str]] = []
    for k in range(wanted):
        prefix, name, country, geography = pool[k % len(pool)]
        index = k // len(pool) + 1
        out.append((f"{prefix}-{index}", f"{name} {index}", country, geography))
    return out


def _amount(usd: float, rate: Decimal) -> Decimal:
    return (Decimal(repr(usd)) / rate).quantize(Decimal("0.0001"), ROUND_HALF_UP) or Decimal(
        "0.0001"
    )


def bench_provider(n: int, gpus: list[BenchGPU], rates: dict[str, Decimal]) -> BenchProvider:
    """Provider ``n`` with its regions, instance types and prices, always the same for the same
    inputs (a private RNG seeded with the slug)."""
    rng = random.Random(f"{BENCH_SLUG_PREFIX}{n}")
    kind, currency, shape = KINDS[(n - 1) % len(KINDS)]
    currency = currency if currency in rates else "USD"
    china = currency == "CNY"
    provider = BenchProvider(
        n=n,
        slug=f"{BENCH_SLUG_PREFIX}{n}",
        name=f"Bench cloud {n} (synthetic)",
        kind=kind,
        currency=currency,
        mainland_china=china,
        regions=_regions(rng, china, shape),
        instances=_instances(rng, gpus, n, shape),
    )
    rate = rates[currency]
    provider_factor = rng.uniform(0.75, 1.35)
    region_factors = {code: rng.uniform(0.95, 1.25) for code, *_ in provider.regions}
    codes = [code for code, *_ in provider.regions]
    for instance in provider.instances:
        host_factor = rng.uniform(0.6, 1.6) if shape.marketplace else rng.uniform(0.95, 1.1)
        per_gpu = instance.gpu.usd_per_gpu_hour * provider_factor * host_factor
        where = [rng.choice(codes)] if shape.marketplace else codes
        for code in where:
            if rng.random() >= shape.availability:
                continue
            hourly = per_gpu * float(instance.gpu_count) * region_factors[code]
            age = rng.uniform(35, 90) if rng.random() < STALE_SHARE else rng.uniform(0, 3)
            hour = choices.PriceUnit.HOUR
            models: list[tuple[str, float, str]] = [(choices.PricingModel.ON_DEMAND, hourly, hour)]
            if rng.random() < shape.spot:
                spot = hourly * rng.uniform(*SPOT_RANGE)
                models.append((choices.PricingModel.SPOT, spot, choices.PriceUnit.HOUR))
            if rng.random() < shape.reserved_1y:
                reserved = hourly * RESERVED_FACTOR
                models.append((choices.PricingModel.RESERVED_1Y, reserved, choices.PriceUnit.HOUR))
            if rng.random() < shape.reserved_3y:
                reserved = hourly * RESERVED_3Y_FACTOR
                models.append((choices.PricingModel.RESERVED_3Y, reserved, choices.PriceUnit.HOUR))
            if rng.random() < shape.monthly:
                monthly = hourly * MONTHLY_FACTOR * HOURS_PER_MONTH
                models.append((choices.PricingModel.MONTHLY, monthly, choices.PriceUnit.MONTH))
            if rng.random() < shape.yearly:
                yearly = hourly * YEARLY_FACTOR * HOURS_PER_YEAR
                models.append((choices.PricingModel.YEARLY, yearly, choices.PriceUnit.YEAR))
            for model, usd, unit in models:
                first_amount, first_before = None, 0.0
                if rng.random() < CHANGED_SHARE.get(model, CHANGED_SHARE_OTHER):
                    low, high = FIRST_AMOUNT_RANGE.get(model, FIRST_AMOUNT_RANGE_OTHER)
                    first_amount = _amount(usd * rng.uniform(low, high), rate)
                    first_before = rng.uniform(*FIRST_SEEN_DAYS_BEFORE)
                amount = _amount(usd, rate)
                provider.offers.append(
                    BenchOffer(
                        instance=instance,
                        region=code,
                        pricing_model=str(model),
                        amount=amount,
                        currency=currency,
                        unit=str(unit),
                        age_days=age,
                        first_amount=first_amount if first_amount != amount else None,
                        first_seen_days_before=first_before,
                    )
                )
    return provider


def bench_providers(
    *, prices: int, gpus: list[BenchGPU], rates: dict[str, Decimal]
) -> Iterator[BenchProvider]:
    """Bench providers 1, 2, ... holding the first ``prices`` bench prices (the last one cut)."""
    left = prices
    n = 0
    while left > 0:
        n += 1
        provider = bench_provider(n, gpus, rates)
        provider.offers = provider.offers[:left]
        left -= len(provider.offers)
        yield provider


# --- Database ------------------------------------------------------------------------------


def bench_gpu_table() -> list[BenchGPU]:
    """Catalog GPUs with their real weight (instance types using them) and median price."""
    real_prices: dict[int, list[float]] = {}
    for gpu_id, usd in (
        Price.objects.current()
        .exclude(instance_type__provider__slug__startswith=BENCH_SLUG_PREFIX)
        .filter(pricing_model=choices.PricingModel.ON_DEMAND, usd_per_gpu_hour__gt=0)
        .values_list("instance_type__gpu_id", "usd_per_gpu_hour")
    ):
        real_prices.setdefault(gpu_id, []).append(float(usd))
    counts: dict[int, int] = {}
    for gpu_id in InstanceType.objects.exclude(
        provider__slug__startswith=BENCH_SLUG_PREFIX
    ).values_list("gpu_id", flat=True):
        counts[gpu_id] = counts.get(gpu_id, 0) + 1
    table = []
    for gpu in GPU.objects.order_by("slug"):
        usd = (
            statistics.median(real_prices[gpu.pk])
            if gpu.pk in real_prices
            else USD_BASE_HOUR + USD_PER_TB_S_HOUR * gpu.memory_bandwidth_gb_s / 1000
        )
        table.append(
            BenchGPU(
                slug=gpu.slug,
                name=gpu.name,
                vendor=gpu.vendor,
                architecture=gpu.architecture,
                memory_gib=gpu.memory_gib,
                nvlink=bool(gpu.nvlink_bandwidth_gb_s),
                usd_per_gpu_hour=round(usd, 4),
                weight=counts.get(gpu.pk, 0) + 1,
            )
        )
    return table


def bench_provider_queryset():
    return Provider.objects.filter(slug__startswith=BENCH_SLUG_PREFIX, source=BENCH_SOURCE)


@dataclass(frozen=True)
class StoredInstance:
    """What the generator needs of a stored instance type."""

    pk: int
    gpu_count: Decimal


def bench_reference_ensure(providers: list[BenchProvider]) -> tuple[ScaleReport, dict, dict]:
    """Create the providers, regions and instance types ``providers`` need (bulk; existing kept).

    Returns the report and the maps (slug, code) -> Region and (slug, name) -> StoredInstance.
    """
    report = ScaleReport()
    existing = {p.slug: p for p in Provider.objects.filter(slug__in=[p.slug for p in providers])}
    foreign = [slug for slug, p in existing.items() if p.source != BENCH_SOURCE]
    if foreign:
        raise ValueError(f"not bench providers, refusing to touch: {', '.join(foreign)}")
    new = [
        Provider(
            slug=p.slug,
            name=p.name,
            kind=p.kind,
            home_currency=p.currency,
            mainland_china=p.mainland_china,
            billing_granularity=choices.BillingGranularity.SECOND,
            source=BENCH_SOURCE,
            compliance_notes="Synthetic: for benchmarks only.",
        )
        for p in providers
        if p.slug not in existing
    ]
    Provider.objects.bulk_create(new, batch_size=BATCH)
    report.providers = len(new)
    rows = {p.slug: p for p in Provider.objects.filter(slug__in=[p.slug for p in providers])}

    regions = {
        (r.provider.slug, r.code): r
        for r in Region.objects.filter(provider__in=rows.values()).select_related("provider")
    }
    new_regions = [
        Region(
            provider=rows[p.slug],
            code=code,
            name=name,
            country=country,
            geography=geography,
            mainland_china=geography == choices.Geography.MAINLAND_CHINA,
        )
        for p in providers
        for code, name, country, geography in p.regions
        if (p.slug, code) not in regions
    ]
    Region.objects.bulk_create(new_regions, batch_size=BATCH)
    report.regions = len(new_regions)
    for region in new_regions:
        regions[(region.provider.slug, region.code)] = region

    gpus = dict(GPU.objects.values_list("slug", "pk"))
    links = dict(Interconnect.objects.values_list("slug", "pk"))
    provider_slugs = {p.pk: p.slug for p in rows.values()}

    def stored_instances() -> dict[tuple[str, str], StoredInstance]:
        return {
            (provider_slugs[provider_id], name): StoredInstance(pk, gpu_count)
            for pk, provider_id, name, gpu_count in InstanceType.objects.filter(
                provider__in=rows.values()
            ).values_list("pk", "provider_id", "name", "gpu_count")
        }

    instances = stored_instances()
    # Plain rows written by COPY on PostgreSQL: a marketplace brings thousands of instance types.
    new_instances = [
        {
            "provider_id": rows[p.slug].pk,
            "name": i.name,
            "gpu_id": gpus[i.gpu.slug],
            "gpu_count": i.gpu_count,
            "gpu_sharing": i.gpu_sharing,
            "vcpus": i.vcpus,
            "ram_gib": i.ram_gib,
            "local_disk_gb": i.local_disk_gb,
            "local_disk_type": i.local_disk_type,
            "interconnect_intra_id": links.get(i.intra) if i.intra else None,
            "interconnect_inter_id": links.get(i.inter) if i.inter else None,
            "network_gbps": i.network_gbps,
            "source": BENCH_SOURCE,
        }
        for p in providers
        for i in p.instances
        if (p.slug, i.name) not in instances
    ]
    rows_insert(InstanceType, new_instances)
    report.instance_types = len(new_instances)
    if new_instances:
        instances = stored_instances()
    return report, regions, instances


def bench_catalog_scale(*, prices: int, now: datetime | None = None) -> ScaleReport:
    """Make the bench catalog hold exactly the first ``prices`` synthetic prices.

    Prices go through the catalog's one price-write module: ``price_figures_build`` checks and
    normalises each, ``prices_bulk_write`` writes them with their history. Missing prices are
    created (``appeared``) with the amount they first had; those that changed since (most spot
    prices, a tenth of on-demand ones, CHANGED_SHARE) then get today's amount, which writes
    their ``changed`` history row by the same rule. A stored one whose quoted figures differ (``price_figures_changed``,
    e.g. its home-currency amount after new exchange rates) is updated by the upsert rule; one
    whose figures match is left as it is, so running twice changes nothing. Prices beyond
    ``prices`` are deleted with their history.
    """
    now = now or timezone.now()
    rates = currency_rates_latest()
    providers = list(bench_providers(prices=prices, gpus=bench_gpu_table(), rates=rates))
    with transaction.atomic():
        report, regions, instances = bench_reference_ensure(providers)
        wanted: dict[PriceKey, tuple[BenchOffer, StoredInstance]] = {}
        for p in providers:
            for offer in p.offers:
                instance = instances[(p.slug, offer.instance.name)]
                key = (instance.pk, regions[(p.slug, offer.region)].pk, offer.pricing_model)
                wanted[key] = (offer, instance)
        stored = {
            (it, rg, pm): {"id": pk, "amount": amount, "currency": currency, "unit": unit}
            for pk, it, rg, pm, amount, currency, unit in Price.objects.filter(
                instance_type__provider__in=bench_provider_queryset()
            ).values_list(
                "pk", "instance_type_id", "region_id", "pricing_model", "amount", "currency", "unit"
            )
        }
        extra = [row["id"] for key, row in stored.items() if key not in wanted]
        if extra:
            report.prices_deleted = _prices_delete(extra)

        def figures(key: PriceKey, amount: Decimal, days_ago: float) -> PriceFigures:
            offer, instance = wanted[key]
            try:
                return price_figures_build(
                    amount=amount, currency=offer.currency, unit=offer.unit,
                    pricing_model=offer.pricing_model, gpu_count=instance.gpu_count,
                    rates=rates, observed_at=now - timedelta(days=days_ago),
                    source=choices.PriceSource.SCRAPER, source_note=BENCH_NOTE,
                )  # fmt: skip
            except CatalogDataError as exc:
                raise ValueError(f"bench price {key}: {exc}") from exc

        # Offers in two rounds, both by the catalog's upsert rule in one prices_bulk_write: first
        # every new price as it first appeared (and every stored one whose figures moved), then
        # today's figures of the new prices that changed since (a ``changed`` history row each).
        first: list[tuple[PriceKey, PriceFigures]] = []
        later: list[tuple[PriceKey, PriceFigures]] = []
        for key, (offer, _) in wanted.items():
            held = stored.get(key)
            quoted: dict[str, Any] = {
                "amount": offer.amount,
                "currency": offer.currency,
                "unit": offer.unit,
            }
            if held is not None:
                if price_figures_changed(held, quoted):
                    first.append((key, figures(key, offer.amount, offer.age_days)))
            elif offer.first_amount is None:
                first.append((key, figures(key, offer.amount, offer.age_days)))
            else:
                first_days = offer.age_days + offer.first_seen_days_before
                first.append((key, figures(key, offer.first_amount, first_days)))
                later.append((key, figures(key, offer.amount, offer.age_days)))
        # Only the stored prices whose quoted figures moved are read as model instances.
        moved_ids = [stored[key]["id"] for key, _ in first if key in stored]
        events = prices_bulk_write(offers=first + later, stored=_prices_by_key(moved_ids))
        report.prices_created = events.get(choices.PriceEvent.APPEARED, 0)
        report.prices_changed = events.get(choices.PriceEvent.CHANGED, 0)
    report.prices_total = Price.objects.filter(
        instance_type__provider__in=bench_provider_queryset()
    ).count()
    return report


def _prices_by_key(price_ids: list[int]) -> dict[PriceKey, Price]:
    return {
        (p.instance_type_id, p.region_id, p.pricing_model): p
        for start in range(0, len(price_ids), BATCH)
        for p in Price.objects.filter(pk__in=price_ids[start : start + BATCH])
    }


def _prices_delete(price_ids: list[int]) -> int:
    """Delete prices with their history (history rows share the natural key, not a foreign key)."""
    deleted = 0
    for start in range(0, len(price_ids), BATCH):
        ids = price_ids[start : start + BATCH]
        doomed = Price.objects.filter(
            pk__in=ids,
            instance_type_id=OuterRef("instance_type_id"),
            region_id=OuterRef("region_id"),
            pricing_model=OuterRef("pricing_model"),
        )
        instance_ids = set(
            Price.objects.filter(pk__in=ids).values_list("instance_type_id", flat=True)
        )
        PriceHistory.objects.filter(instance_type_id__in=instance_ids).filter(
            Exists(doomed)
        ).delete()
        deleted += Price.objects.filter(pk__in=ids).delete()[0]
    return deleted


def bench_catalog_clear() -> dict[str, int]:
    """Delete every bench row, children before what they PROTECT; real data is never touched."""
    bench = bench_provider_queryset()
    counts = {}
    with transaction.atomic():
        steps = [
            ("quarantined", QuarantinedPrice.objects.filter(instance_type__provider__in=bench)),
            ("history", PriceHistory.objects.filter(instance_type__provider__in=bench)),
            ("prices", Price.objects.filter(instance_type__provider__in=bench)),
            ("scrape_runs", ScrapeRun.objects.filter(provider__in=bench)),
            ("unmatched", UnmatchedGPUName.objects.filter(provider__in=bench)),
            ("instance_types", InstanceType.objects.filter(provider__in=bench)),
            ("regions", Region.objects.filter(provider__in=bench)),
            ("providers", bench),
        ]
        for name, qs in steps:
            counts[name] = qs.delete()[0]
    return counts
