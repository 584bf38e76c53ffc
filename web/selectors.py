"""Reads for the web pages, built on the catalog's own selectors and QuerySet methods."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, overload

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
from catalog.choices import HOURS_PER_UNIT
from catalog.filtersets import PriceFilterSet
from catalog.models import GPU, InstanceType, Price, PriceHistory, Provider, Region, ScrapeRun
from catalog.pricing import COMMITMENT_PRICING_MODELS, PricingModel
from catalog.querysets import price_stale_q, shelf_life_days, stale_cutoff

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
    """A price's stale flag by the same shelf-life rule as the ``stale``/``fresh`` filters."""
    return ExpressionWrapper(price_stale_q(now), output_field=BooleanField())


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


# --- Offers: one row per instance type and region, its pricing models side by side ----------

# Commitment terms shown together in the "Reserved" column (the cheapest of them).
COMMITMENT_MODELS = COMMITMENT_PRICING_MODELS
# Sort keys of the offer table (what ``?sort=`` says); the price keys sort by the unit shown.
OFFER_SORTS = (
    "provider",
    "region",
    "instance",
    "gpu",
    "gpus",
    "memory",
    "on_demand",
    "spot",
    "reserved",
    "observed",
    "vcpus",
    "ram",
    "network",
)
DEFAULT_OFFER_SORT = "on_demand"
# Sort keys of the older one-row-per-price table, still accepted in shared links.
LEGACY_SORTS = {
    "usd_per_hour": "on_demand",
    "usd_per_gpu_hour": "on_demand",
    "pricing": "on_demand",
}


@dataclass
class OfferRow:
    """One instance type in one region, with its current price per pricing model."""

    instance: InstanceType
    region: Region
    prices: dict[str, Price] = field(default_factory=dict)

    @property
    def on_demand(self) -> Price | None:
        return self.prices.get(PricingModel.ON_DEMAND)

    @property
    def spot(self) -> Price | None:
        return self.prices.get(PricingModel.SPOT)

    @property
    def reserved(self) -> Price | None:
        """The cheapest commitment term (monthly, yearly, 1 or 3 years reserved)."""
        terms = [self.prices[m] for m in COMMITMENT_MODELS if m in self.prices]
        return min(terms, key=lambda p: p.usd_per_hour) if terms else None

    @property
    def oldest_observed_at(self) -> datetime:
        return min(p.observed_at for p in self.prices.values())

    @property
    def newest_observed_at(self) -> datetime:
        return max(p.observed_at for p in self.prices.values())

    @property
    def any_stale(self) -> bool:
        return any(getattr(p, "is_stale", False) for p in self.prices.values())

    @property
    def all_stale(self) -> bool:
        """Every price of the row is stale (the row's badge says it; the cells need not)."""
        return all(getattr(p, "is_stale", False) for p in self.prices.values())


def native_per_hour(price: Price) -> float:
    """The listed amount per instance-hour, in the provider's own currency."""
    return float(price.amount) / HOURS_PER_UNIT[price.unit]


# What sorting an offer needs of each of its prices: USD per hour, per GPU-hour, observed at.
_Light = tuple[float, float, datetime]


@dataclass
class _OfferKey:
    """An offer as sorting sees it: ids, the instance's sortable fields and light prices."""

    instance_id: int
    region_id: int
    instance: dict[str, Any]
    region_code: str
    prices: dict[str, _Light] = field(default_factory=dict)


def _light_sort_value(row: _OfferKey, key: str, per_gpu: bool) -> Any:
    """What ``key`` sorts ``row`` by, from the light prices (no model instances): a price key by
    the unit shown (the cheapest term for ``reserved``), ``observed`` by the oldest price."""
    if key in ("on_demand", "spot", "reserved"):
        if key == "reserved":
            terms = [row.prices[m] for m in COMMITMENT_MODELS if m in row.prices]
            price = min(terms, key=lambda light: light[0]) if terms else None
        else:
            price = row.prices.get(key)
        if price is None:
            return None
        return price[1] if per_gpu else price[0]
    if key == "region":
        return row.region_code
    if key == "observed":
        return min(light[2] for light in row.prices.values())
    return row.instance[key]


class OfferRowList(Sequence[OfferRow]):
    """Sorted offers, built in full (instance types, regions, Price objects) only for the rows
    read: the price browser shows 100 of several thousand, and building every row's models
    was most of the page's time."""

    def __init__(self, keys: list[_OfferKey]):
        self._keys = keys
        self._built: dict[tuple[int, int], OfferRow] = {}
        observed = [light[2] for key in keys for light in key.prices.values()]
        self.oldest_observed_at: datetime | None = min(observed, default=None)
        self.newest_observed_at: datetime | None = max(observed, default=None)

    def __len__(self) -> int:
        return len(self._keys)

    @overload
    def __getitem__(self, index: int) -> OfferRow: ...

    @overload
    def __getitem__(self, index: slice) -> list[OfferRow]: ...

    def __getitem__(self, index: int | slice) -> OfferRow | list[OfferRow]:
        if isinstance(index, slice):
            return self._build(self._keys[index])
        return self._build([self._keys[index]])[0]

    def __iter__(self) -> Iterator[OfferRow]:
        return iter(self._build(self._keys))

    def _build(self, keys: list[_OfferKey]) -> list[OfferRow]:
        wanted = {(k.instance_id, k.region_id) for k in keys} - set(self._built)
        if wanted:
            prices = (
                catalog_selectors.price_list()
                .annotate(is_stale=_stale_flag())
                .filter(
                    instance_type_id__in={k[0] for k in wanted},
                    region_id__in={k[1] for k in wanted},
                )
                .order_by("pk")
            )
            for price in prices:
                key = (price.instance_type_id, price.region_id)
                if key not in wanted:
                    continue
                row = self._built.setdefault(key, OfferRow(price.instance_type, price.region))
                row.prices[price.pricing_model] = price
        return [self._built[(k.instance_id, k.region_id)] for k in keys]


_INSTANCE_SORT_FIELDS = {
    "provider": "provider__name",
    "instance": "name",
    "gpu": "gpu__name",
    "gpus": "gpu_count",
    "memory": "gpu__memory_gib",
    "vcpus": "vcpus",
    "ram": "ram_gib",
    "network": "network_gbps",
}


def offer_rows(
    *,
    filters: dict[str, Any] | None = None,
    sort: str = DEFAULT_OFFER_SORT,
    per_gpu: bool = True,
    matching: QuerySet[Price] | None = None,
) -> OfferRowList:
    """Offers (instance type, region) with any current price passing ``filters`` (or in
    ``matching``), each with all its current prices, sorted by an OFFER_SORTS key (``-``
    descending, missing values last).

    ``filters`` uses PriceFilterSet's parameter names, already validated. Sorting reads plain
    values; the rows' model instances are built only for the rows read (OfferRowList).
    """
    if matching is None:
        matching = PriceFilterSet(data=filters or {}, queryset=catalog_selectors.price_list()).qs
    keys = set(matching.values_list("instance_type_id", "region_id"))
    rows: dict[tuple[int, int], _OfferKey] = {}
    if keys:
        instance_ids, region_ids = {k[0] for k in keys}, {k[1] for k in keys}
        names = list(_INSTANCE_SORT_FIELDS.values())
        instances = {
            values[0]: {
                key: (value.lower() if key in ("provider", "instance", "gpu") else value)
                for key, value in zip(_INSTANCE_SORT_FIELDS, values[1:], strict=True)
            }
            | {"provider_name": values[1], "instance_name": values[2]}
            for values in InstanceType.objects.filter(pk__in=instance_ids).values_list("pk", *names)
        }
        for instance in instances.values():
            instance["gpus"] = float(instance["gpus"])
        regions = dict(Region.objects.filter(pk__in=region_ids).values_list("pk", "code"))
        prices = (
            Price.objects.current()
            .filter(instance_type_id__in=instance_ids, region_id__in=region_ids)
            .order_by("pk")
            .values_list(
                "instance_type_id",
                "region_id",
                "pricing_model",
                "usd_per_hour",
                "usd_per_gpu_hour",
                "observed_at",
            )
        )
        for instance_id, region_id, model, per_hour, per_gpu_hour, observed in prices:
            key = (instance_id, region_id)
            if key not in keys:
                continue
            row = rows.get(key)
            if row is None:
                row = rows[key] = _OfferKey(
                    instance_id, region_id, instances[instance_id], regions[region_id]
                )
            row.prices[model] = (float(per_hour), float(per_gpu_hour), observed)
    descending = sort.startswith("-")
    column = sort.lstrip("-")
    column = column if column in OFFER_SORTS else DEFAULT_OFFER_SORT
    ordered = sorted(
        rows.values(),
        key=lambda r: (r.instance["provider_name"], r.instance["instance_name"], r.region_code),
    )
    present = [r for r in ordered if _light_sort_value(r, column, per_gpu) is not None]
    missing = [r for r in ordered if _light_sort_value(r, column, per_gpu) is None]
    present.sort(key=lambda r: _light_sort_value(r, column, per_gpu), reverse=descending)
    return OfferRowList(present + missing)


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


# Sort keys of /gpus and the columns they order by.
GPU_SORTS: dict[str, str] = {
    "name": "name",
    "architecture": "architecture",
    "memory": "memory_gib",
    "bandwidth": "memory_bandwidth_gb_s",
    "bf16": "bf16_tflops",
    "fp8": "fp8_tflops",
    "segment": "segment",
    "instances": "instance_count",
    "on_demand": "min_on_demand",
    "spot": "min_spot",
}


def gpu_index(*, filters: dict[str, Any] | None = None, sort: str = "") -> QuerySet[GPU]:
    """GPUs with how many active instance types carry them and their cheapest current prices,
    filtered (``q``, ``vendor``, ``segment``, ``min_memory_gib``, ``has_fp8``, ``rented``) and
    sorted by a GPU_SORTS key (``-`` descending; default vendor, then memory, largest first)."""
    filters = filters or {}
    current = Q(instance_types__prices__gone_at__isnull=True, instance_types__is_active=True)
    queryset = GPU.objects.annotate(
        instance_count=Count(
            "instance_types", filter=Q(instance_types__is_active=True), distinct=True
        ),
        min_on_demand=Min(
            "instance_types__prices__usd_per_gpu_hour",
            filter=current & Q(instance_types__prices__pricing_model=PricingModel.ON_DEMAND),
        ),
        min_spot=Min(
            "instance_types__prices__usd_per_gpu_hour",
            filter=current & Q(instance_types__prices__pricing_model=PricingModel.SPOT),
        ),
    )
    if filters.get("q"):
        matching = GPU.objects.filter(
            Q(name__icontains=filters["q"])
            | Q(slug__icontains=filters["q"])
            | Q(aliases__name__icontains=filters["q"])
        ).values("pk")
        queryset = queryset.filter(pk__in=matching)
    if filters.get("vendor"):
        queryset = queryset.filter(vendor__in=filters["vendor"])
    if filters.get("segment"):
        queryset = queryset.filter(segment__in=filters["segment"])
    if filters.get("min_memory_gib") is not None:
        queryset = queryset.filter(memory_gib__gte=filters["min_memory_gib"])
    if filters.get("has_fp8"):
        queryset = queryset.filter(fp8_tflops__isnull=False)
    if filters.get("rented"):
        queryset = queryset.filter(instance_count__gt=0)
    key = sort.lstrip("-")
    if key not in GPU_SORTS:
        return queryset.order_by("vendor", "-memory_gib", "name")
    column = F(GPU_SORTS[key])
    order = column.desc(nulls_last=True) if sort.startswith("-") else column.asc(nulls_last=True)
    return queryset.order_by(order, "name")


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
                "prices__usd_per_gpu_hour",
                filter=current & Q(prices__pricing_model=PricingModel.ON_DEMAND),
            ),
            min_spot=Min(
                "prices__usd_per_gpu_hour",
                filter=current & Q(prices__pricing_model=PricingModel.SPOT),
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
    """Days after which a list price counts as stale (``PRICE_STALE_AFTER_DAYS``)."""
    return settings.PRICE_STALE_AFTER_DAYS


def shelf_lives() -> dict[str, int]:
    """Days a price stays fresh by its kind (``PRICE_SHELF_LIFE_DAYS``), as the pages say it:
    spot, marketplace offers, list prices (on demand) and commitment terms (1-year reserved)."""
    return {
        "spot": shelf_life_days(PricingModel.SPOT),
        "marketplace": shelf_life_days(PricingModel.ON_DEMAND, marketplace=True),
        "list": shelf_life_days(PricingModel.ON_DEMAND),
        "terms": shelf_life_days(PricingModel.RESERVED_1Y),
    }


def provider_names() -> dict[str, str]:
    """Provider slug -> display name."""
    return dict(Provider.objects.values_list("slug", "name"))


def provider_native_rates() -> dict[str, tuple[str, float]]:
    """Provider slug -> (its own currency, USD per unit of it, newest rate), for providers that
    do not list in US dollars (the mainland clouds list in CNY)."""
    rates = catalog_selectors.currency_rates_latest()
    return {
        slug: (currency, float(rates[currency]))
        for slug, currency in Provider.objects.exclude(home_currency="USD").values_list(
            "slug", "home_currency"
        )
        if currency in rates
    }


def gpu_names() -> dict[str, tuple[str, float]]:
    """GPU slug -> (display name, memory in GiB)."""
    return {
        slug: (name, memory)
        for slug, name, memory in GPU.objects.values_list("slug", "name", "memory_gib")
    }


def instance_get(*, provider: str, name: str) -> InstanceType | None:
    """One instance type by provider slug and name, with its GPU and interconnects, or None."""
    return (
        InstanceType.objects.with_related()
        .filter(provider__slug=provider, name=name)
        .prefetch_related("gpu__aliases")
        .first()
    )


def instance_offer_rows(*, instance: InstanceType) -> OfferRowList:
    """The instance type's current prices, one row per region, its pricing models side by side."""
    return offer_rows(
        filters={"provider": instance.provider.slug, "instance_type": instance.name},
        sort="region",
    )


def offer_rows_for(*, keys: list[tuple[str, str]]) -> dict[tuple[str, str], list[OfferRow]]:
    """For each (provider slug, instance name), its offers (regions) by on-demand price."""
    out: dict[tuple[str, str], list[OfferRow]] = {key: [] for key in keys}
    if not keys:
        return out
    # By exact names: a name may hold a comma ("H100 SXM (marketplace, 1 GPU)"), which the
    # filters' comma-separated lists would split.
    wanted = Q()
    for provider, name in keys:
        wanted |= Q(instance_type__provider__slug=provider, instance_type__name=name)
    rows = offer_rows(matching=catalog_selectors.price_list().filter(wanted))
    for row in rows:
        key = (row.instance.provider.slug, row.instance.name)
        if key in out:
            out[key].append(row)
    return out
