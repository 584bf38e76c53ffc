"""One FilterSet per catalog model; lists are comma-separated (``pricing_model=spot,on_demand``)."""

from __future__ import annotations

from datetime import UTC, timedelta

import django_filters as filters
from django import forms as django_forms
from django.db.models import Q
from django.utils import timezone

from catalog.suggest import did_you_mean

from . import choices
from .models import (
    GPU,
    InstanceType,
    Interconnect,
    Price,
    PriceHistory,
    Provider,
    Region,
    ScrapeRun,
)

# Largest primary key (BigAutoField); a bigger id is a 400, not a database overflow.
MAX_ID = 2**63 - 1


class IdFilter(filters.NumberFilter):
    """A primary key: a whole number within the database's range."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("min_value", 1)
        kwargs.setdefault("max_value", MAX_ID)
        kwargs.setdefault("decimal_places", 0)
        super().__init__(*args, **kwargs)


class CharInFilter(filters.BaseInFilter, filters.CharFilter):
    pass


def _names(model_field: str):
    app_model, field = model_field.rsplit(".", 1)

    def load() -> set[str]:
        from django.apps import apps

        return set(apps.get_model("catalog", app_model).objects.values_list(field, flat=True))

    return load


# Filters naming catalog things: an unknown name is a 400 with the closest known names, not an
# empty page a pipeline could mistake for "no prices".
KNOWN_NAMES = {
    "gpu": ("GPU", _names("GPU.slug")),
    "provider": ("provider", _names("Provider.slug")),
    "region": ("region", _names("Region.code")),
}


class KnownNamesForm(django_forms.Form):
    def clean(self):
        cleaned = super().clean()
        for name, (what, load) in KNOWN_NAMES.items():
            values = cleaned.get(name) if name in self.fields else None
            if not values:
                continue
            known = load()
            for value in values:
                if value not in known:
                    hint = did_you_mean(value, known)
                    # As params, not in the text: django-filter formats messages with %, so a
                    # '%' in the value would break a pre-formatted message.
                    message = "unknown %(what)s %(value)s%(hint)s"
                    params = {
                        "what": what,
                        "value": repr(value),
                        "hint": f"; {hint}" if hint else "",
                    }
                    self.add_error(name, django_forms.ValidationError(message, params=params))
        return cleaned


class ChoiceInFilter(filters.BaseInFilter, filters.ChoiceFilter):
    pass


BOOLEAN_VALUES = {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False}


class StrictNullBooleanField(django_forms.NullBooleanField):
    """true/false (also 1/0, yes/no, any case); anything else is an error, not an ignored filter."""

    widget = django_forms.TextInput

    def to_python(self, value):
        if value in (None, ""):
            return None
        if isinstance(value, bool):
            return value
        try:
            return BOOLEAN_VALUES[str(value).strip().lower()]
        except KeyError:
            raise django_forms.ValidationError("must be true or false", code="invalid") from None

    def validate(self, value):
        pass


class BooleanFilter(filters.BooleanFilter):
    field_class = StrictNullBooleanField


class UtcDateTimeFilter(filters.IsoDateTimeFilter):
    """An ISO 8601 time, compared in UTC (PostgreSQL refuses offsets beyond +-15:59)."""

    def filter(self, qs, value):
        if value is not None and value.tzinfo is not None:
            value = value.astimezone(UTC)
        return super().filter(qs, value)


class GPUFilterSet(filters.FilterSet):
    slug = CharInFilter(field_name="slug")
    vendor = ChoiceInFilter(choices=choices.Vendor.choices)
    segment = ChoiceInFilter(choices=choices.Segment.choices)
    form_factor = ChoiceInFilter(choices=choices.FormFactor.choices)
    architecture = filters.CharFilter(lookup_expr="iexact")
    min_memory_gib = filters.NumberFilter(field_name="memory_gib", lookup_expr="gte")
    max_memory_gib = filters.NumberFilter(field_name="memory_gib", lookup_expr="lte")
    datacenter_use_allowed = BooleanFilter()
    has_fp8 = BooleanFilter(field_name="fp8_tflops", lookup_expr="isnull", exclude=True)
    q = filters.CharFilter(method="search", label="Name or alias contains")

    class Meta:
        model = GPU
        fields: list[str] = []

    def search(self, queryset, name, value):
        return queryset.filter(
            Q(name__icontains=value) | Q(aliases__name__icontains=value)
        ).distinct()


class InterconnectFilterSet(filters.FilterSet):
    kind = ChoiceInFilter(choices=choices.InterconnectKind.choices)
    scope = filters.ChoiceFilter(choices=choices.Scope.choices)
    rdma = BooleanFilter()

    class Meta:
        model = Interconnect
        fields: list[str] = []


class ProviderFilterSet(filters.FilterSet):
    kind = ChoiceInFilter(choices=choices.ProviderKind.choices)
    mainland_china = BooleanFilter()
    home_currency = filters.CharFilter(lookup_expr="iexact")

    class Meta:
        model = Provider
        fields: list[str] = []


class RegionFilterSet(filters.FilterSet):
    provider = CharInFilter(field_name="provider__slug")
    provider_id = IdFilter()
    country = CharInFilter(field_name="country")
    geography = ChoiceInFilter(choices=choices.Geography.choices)
    mainland_china = BooleanFilter()

    class Meta:
        model = Region
        form = KnownNamesForm
        fields: list[str] = []


class InstanceTypeFilterSet(filters.FilterSet):
    provider = CharInFilter(field_name="provider__slug")
    provider_id = IdFilter()
    gpu = CharInFilter(field_name="gpu__slug")
    gpu_id = IdFilter()
    name = filters.CharFilter(lookup_expr="iexact")
    gpu_sharing = ChoiceInFilter(choices=choices.GpuSharing.choices)
    min_gpu_count = filters.NumberFilter(field_name="gpu_count", lookup_expr="gte")
    max_gpu_count = filters.NumberFilter(field_name="gpu_count", lookup_expr="lte")
    min_gpu_memory_gib = filters.NumberFilter(field_name="gpu__memory_gib", lookup_expr="gte")
    min_vcpus = filters.NumberFilter(field_name="vcpus", lookup_expr="gte")
    min_ram_gib = filters.NumberFilter(field_name="ram_gib", lookup_expr="gte")
    interconnect_intra = CharInFilter(field_name="interconnect_intra__slug")
    interconnect_inter = CharInFilter(field_name="interconnect_inter__slug")
    rdma = BooleanFilter(field_name="interconnect_inter__rdma")
    datacenter_only = BooleanFilter(method="filter_datacenter_only")

    class Meta:
        model = InstanceType
        form = KnownNamesForm
        fields: list[str] = []

    def filter_datacenter_only(self, queryset, name, value):
        return queryset.filter(gpu__datacenter_use_allowed=True) if value else queryset


class PriceFilterSet(filters.FilterSet):
    provider = CharInFilter(field_name="instance_type__provider__slug")
    provider_id = IdFilter(field_name="instance_type__provider_id")
    region = CharInFilter(field_name="region__code")
    region_id = IdFilter()
    country = CharInFilter(field_name="region__country")
    mainland_china = BooleanFilter(field_name="region__mainland_china")
    gpu = CharInFilter(field_name="instance_type__gpu__slug")
    gpu_id = IdFilter(field_name="instance_type__gpu_id")
    instance_type = CharInFilter(field_name="instance_type__name")
    instance_type_id = IdFilter()
    pricing_model = ChoiceInFilter(choices=choices.PricingModel.choices)
    currency = CharInFilter(field_name="currency")
    min_usd_per_hour = filters.NumberFilter(field_name="usd_per_hour", lookup_expr="gte")
    max_usd_per_hour = filters.NumberFilter(field_name="usd_per_hour", lookup_expr="lte")
    min_usd_per_gpu_hour = filters.NumberFilter(field_name="usd_per_gpu_hour", lookup_expr="gte")
    max_usd_per_gpu_hour = filters.NumberFilter(field_name="usd_per_gpu_hour", lookup_expr="lte")
    min_gpu_memory_gib = filters.NumberFilter(
        field_name="instance_type__gpu__memory_gib", lookup_expr="gte"
    )
    min_gpu_count = filters.NumberFilter(field_name="instance_type__gpu_count", lookup_expr="gte")
    max_age_days = filters.NumberFilter(method="filter_max_age_days", min_value=0, max_value=36500)
    stale = BooleanFilter(method="filter_stale")
    locked = BooleanFilter()
    source = ChoiceInFilter(choices=choices.PriceSource.choices)

    class Meta:
        model = Price
        form = KnownNamesForm
        fields: list[str] = []

    def filter_max_age_days(self, queryset, name, value):
        return queryset.filter(observed_at__gte=timezone.now() - timedelta(days=float(value)))

    def filter_stale(self, queryset, name, value):
        return queryset.stale() if value else queryset.fresh()


class PriceHistoryFilterSet(filters.FilterSet):
    provider = CharInFilter(field_name="instance_type__provider__slug")
    region = CharInFilter(field_name="region__code")
    gpu = CharInFilter(field_name="instance_type__gpu__slug")
    instance_type = CharInFilter(field_name="instance_type__name")
    pricing_model = ChoiceInFilter(choices=choices.PricingModel.choices)
    event = ChoiceInFilter(choices=choices.PriceEvent.choices)
    since = UtcDateTimeFilter(field_name="observed_at", lookup_expr="gte")
    until = UtcDateTimeFilter(field_name="observed_at", lookup_expr="lte")

    class Meta:
        model = PriceHistory
        form = KnownNamesForm
        fields: list[str] = []


class ScrapeRunFilterSet(filters.FilterSet):
    provider = CharInFilter(field_name="provider__slug")
    status = ChoiceInFilter(choices=choices.ScrapeStatus.choices)
    since = UtcDateTimeFilter(field_name="started_at", lookup_expr="gte")

    class Meta:
        model = ScrapeRun
        form = KnownNamesForm
        fields: list[str] = []
