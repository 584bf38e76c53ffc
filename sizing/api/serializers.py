"""Input and output serializers of the sizing operations (recommend, compare, estimate)."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from api.serializers import (
    StrictBooleanField,
    StrictCharField,
    StrictFloatField,
    StrictSerializer,
)
from catalog.gpu_names import gpu_name_keys, gpu_slugs_named
from catalog.models import GPU, GPUAlias, InstanceType, Provider, Region
from catalog.suggest import COUNTRY_OTHER_CODES, OTHER_NAMES, did_you_mean

from .. import inputs, specs
from ..inputs import OBJECTIVES
from ..presets import load_presets

# Bounds on free-text name lists (gpus, providers, regions...): each unknown name is looked up
# and answered with suggestions, so an unbounded list is an anonymous denial of service. The
# catalog has tens of each (48 GPUs, 11 providers, 85 regions), so these never bind real use.
MAX_LIST_ITEMS = 200
MAX_NAME_CHARS = 100


# A serializer or field of any value type: these serializers validate request bodies into dicts.
AnySerializer = serializers.Serializer[Any]
AnyField = serializers.Field[Any, Any, Any, Any]


class CommaListField(serializers.ListField):
    """A list given as JSON or, in a query string, as ``a,b,c``."""

    def to_internal_value(self, data: Any) -> list[Any]:
        if isinstance(data, str):
            data = [item.strip() for item in data.split(",") if item.strip()]
        return super().to_internal_value(data)


def _field(spec: inputs.Field) -> AnyField:
    """The DRF field of one input described in sizing/inputs.py."""
    text: dict[str, Any] = {"help_text": spec.help} if spec.help else {}
    low, high = spec.bounds or (None, None)
    if high is not None and high == float("inf"):
        high = None
    if spec.kind == "list":
        if spec.choices:
            child: AnyField = serializers.ChoiceField(choices=spec.choices)
            return CommaListField(child=child, required=False, allow_empty=False, **text)
        lengths = {"min_length": low, "max_length": high} if spec.bounds else {}
        lengths.setdefault("max_length", MAX_NAME_CHARS)
        sizes: dict[str, Any] = {k: int(v) for k, v in lengths.items() if v is not None}
        child = StrictCharField(**sizes)
        return CommaListField(
            child=child, required=False, default=list, max_length=MAX_LIST_ITEMS, **text
        )
    if spec.kind == "object":
        return serializers.DictField(required=False, **text)
    if spec.kind == "choice":
        return serializers.ChoiceField(choices=(*spec.choices, *spec.extra), required=False, **text)
    if spec.kind == "bool":
        if spec.default is None:
            return StrictBooleanField(required=False, allow_null=True, default=None, **text)
        return StrictBooleanField(required=False, default=bool(spec.default), **text)
    if spec.kind in ("int", "float"):
        number: dict[str, Any] = {"min_value": low, "max_value": high, **text}
        if spec in inputs.CONSTRAINTS:
            number["allow_null"] = True
        if spec.kind == "int":
            return serializers.IntegerField(required=False, **number)
        return StrictFloatField(required=False, **number)
    return StrictCharField(required=False, **text)


def _described(specs: Iterable[inputs.Field]) -> dict[str, AnyField]:
    """The DRF fields of the inputs ``specs``, in order, built once."""
    return {spec.name: _field(spec) for spec in specs}


class DescribedSerializer(AnySerializer):
    """A serializer whose fields are the inputs ``described`` in sizing/inputs.py, then the
    ones it declares itself; a declared field replaces the described one of its name in its
    place (as DRF treats a field a subclass redeclares). Deep-copied per instance, as DRF copies
    declared fields."""

    described: Mapping[str, AnyField] = {}

    def get_fields(self) -> dict[str, AnyField]:
        return {**copy.deepcopy(dict(self.described)), **super().get_fields()}


class ConstraintsSerializer(StrictSerializer, DescribedSerializer):
    """The planner's constraints; fields from sizing/inputs.py (CONSTRAINTS)."""

    described = _described(inputs.CONSTRAINTS)

    def validate_providers(self, value: list[str]) -> list[str]:
        return _known(value, lambda: Provider.objects.values_list("slug", flat=True), "provider")

    def validate_gpus(self, value: list[str]) -> list[str]:
        """Slugs in any case and the catalog's aliases ("T4", "RTX 4090"), as slugs."""
        return _known_gpus(value)

    def validate_regions(self, value: list[str]) -> list[str]:
        return _known(value, lambda: Region.objects.values_list("code", flat=True), "region")

    def validate_countries(self, value: list[str]) -> list[str]:
        """Codes some region of the catalog is in (upper-cased). A code no region carries would
        only empty the answer; ZZ is the code of regions in no one country (a marketplace's
        worldwide "global" region)."""
        return _known(
            [country.strip().upper() for country in value],
            lambda: Region.objects.values_list("country", flat=True).distinct(),
            "country",
            why="no region of the catalog is in it",
            other_names=COUNTRY_OTHER_CODES,
        )


def _known(
    values: list[str],
    names: Callable[[], Iterable[str]],
    what: str,
    *,
    why: str = "",
    other_names: Mapping[str, str] = OTHER_NAMES,
) -> list[str]:
    """``values`` if all are known names, else a validation error suggesting the closest
    (``why`` says what makes a name unknown; ``other_names``: other names people use)."""
    if not values:
        return values
    known = set(names())
    problems = []
    for item in values:
        if item not in known:
            hint = did_you_mean(item, known, other_names=other_names)
            detail = "; ".join(part for part in (why, hint) if part)
            problems.append(f"unknown {what} {item!r}" + (f" ({detail})" if detail else ""))
    if problems:
        raise serializers.ValidationError(problems)
    return values


def _gpu_slugs_of(names: list[str]) -> tuple[list[str], list[str]]:
    """The slug each of ``names`` stands for (slug in any case, or an alias the catalog knows),
    and the errors of those that name no GPU or more than one."""
    slugs = list(GPU.objects.values_list("slug", flat=True))
    keys = gpu_name_keys(slugs, GPUAlias.objects.values_list("normalised", "gpu__slug"))
    found, problems = [], []
    for name in names:
        named = gpu_slugs_named(name, slugs, keys)
        if len(named) == 1:
            found.append(named[0])
        elif named:
            problems.append(f"ambiguous GPU {name!r}: it names {', '.join(named)}; give one slug")
        else:
            hint = did_you_mean(name, slugs)
            problems.append(f"unknown GPU {name!r}" + (f" ({hint})" if hint else ""))
    return found, problems


def _known_gpus(values: list[str]) -> list[str]:
    """``values`` as GPU slugs, each once in the order given; else a validation error."""
    if not values:
        return values
    found, problems = _gpu_slugs_of(values)
    if problems:
        raise serializers.ValidationError(problems)
    return list(dict.fromkeys(found))


def _architecture_schema() -> dict[str, Any]:
    """A config.json as sizing.specs.arch_from_config reads it: its whole-number keys (the
    required ones at the top level or in ``text_config``), any other key ignored."""
    count = {"type": "integer", "minimum": 1, "maximum": specs.CONFIG_MAX_INT}
    keys = [*specs.CONFIG_INTS, *specs.CONFIG_EXPERT_NAMES]
    return {
        "type": "object",
        "nullable": True,
        "properties": {key: {**count, "nullable": True} for key in keys},
        "anyOf": [
            {
                "required": list(specs.CONFIG_REQUIRED),
                "properties": {key: count for key in specs.CONFIG_REQUIRED},
            },
            {"required": ["text_config"]},
        ],
    }


@extend_schema_field(_architecture_schema())
class ArchitectureField(serializers.DictField):
    """The workload's config.json, for the schema (the estimator validates it)."""


class WorkloadSchemaSerializer(StrictSerializer, DescribedSerializer):
    """The workload as the OpenAPI schema shows it, built from sizing/inputs.py (WORKLOAD);
    the estimator validates it (unknown keys too: strict). A test checks that it names every
    Workload field (gpu and gpu_count are /api/estimate's, outside the workload)."""

    # What the model is: a preset, a size, or a config.json (one of them: sizing/workload.py).
    required_any_of = (("model",), ("params_b",), ("architecture",))

    def get_fields(self) -> dict[str, AnyField]:
        """Every workload field takes null for "not given" (sizing/workload.py)."""
        fields = super().get_fields()
        for field in fields.values():
            field.allow_null = True
        return fields

    architecture = ArchitectureField(
        required=False,
        help_text=next(spec.help for spec in inputs.WORKLOAD if spec.name == "architecture"),
    )

    described = _described(spec for spec in inputs.WORKLOAD if spec.api)

    # The presets ship with the code (fixtures/models.yaml), so the schema can list them.
    model = serializers.ChoiceField(
        choices=sorted(load_presets()),
        required=False,
        help_text=next(spec.help for spec in inputs.WORKLOAD if spec.name == "model"),
    )


@extend_schema_field(WorkloadSchemaSerializer)
class WorkloadField(serializers.DictField):
    """The estimator's workload fields (see docs/api.md); validated by the estimator itself."""


class RecommendInputSerializer(StrictSerializer):
    workload = WorkloadField()
    constraints = ConstraintsSerializer(required=False)
    objective = serializers.ChoiceField(choices=OBJECTIVES, default=OBJECTIVES[0])
    limit = serializers.IntegerField(min_value=1, max_value=200, default=10)
    all_sizes = serializers.BooleanField(
        default=False,
        help_text=(
            "List every size of an offer. By default, of the plans of one provider's GPU in one "
            "region under one pricing model whose est_total_usd is equal (to the cent), only the "
            "first ranked is listed: the largest GPU count under cheapest and fastest (at an equal "
            "total the faster plan ranks first), the smallest under cheapest_hourly."
        ),
    )


def _known_field(
    name: str, attrs: dict[str, Any], names: Callable[[], Iterable[str]], what: str
) -> None:
    """``_known`` for one field of an object, its error under the field's name."""
    try:
        _known([attrs[name]], names, what)
    except serializers.ValidationError as exc:
        raise serializers.ValidationError({name: exc.detail}) from exc


class CompareTargetSerializer(StrictSerializer):
    required_any_of = (("gpu",), ("provider", "instance_type"))

    provider = StrictCharField(
        required=False, help_text="Provider slug (GET /api/providers/ lists them)."
    )
    instance_type = StrictCharField(
        required=False, help_text="Instance type name (GET /api/instance-types/ lists them)."
    )
    gpu = StrictCharField(required=False, help_text="GPU slug (GET /api/gpus/ lists them).")

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        by_gpu = bool(attrs.get("gpu"))
        by_instance = bool(attrs.get("provider") or attrs.get("instance_type"))
        if by_gpu == by_instance or (
            by_instance and not (attrs.get("provider") and attrs.get("instance_type"))
        ):
            raise serializers.ValidationError("give either gpu, or provider and instance_type")
        # Errors name the field at fault (targets.0.gpu, targets.1.instance_type), not the target.
        if by_gpu:
            # A slug in any case or an alias the catalog knows; the answer names the slug.
            found, problems = _gpu_slugs_of([attrs["gpu"]])
            if problems:
                raise serializers.ValidationError({"gpu": problems})
            attrs = {**attrs, "gpu": found[0]}
        elif not Provider.objects.filter(slug=attrs["provider"]).exists():
            _known_field(
                "provider",
                attrs,
                lambda: Provider.objects.values_list("slug", flat=True),
                "provider",
            )
        elif not InstanceType.objects.filter(
            provider__slug=attrs["provider"], name=attrs["instance_type"]
        ).exists():
            names = InstanceType.objects.filter(provider__slug=attrs["provider"]).values_list(
                "name", flat=True
            )
            hint = did_you_mean(attrs["instance_type"], names)
            raise serializers.ValidationError(
                {
                    "instance_type": [
                        f"unknown instance type {attrs['provider']}/{attrs['instance_type']}"
                        + (f" ({hint})" if hint else "")
                    ]
                }
            )
        return attrs


class CompareInputSerializer(StrictSerializer):
    workload = WorkloadField()
    # many=True hands max_length to the ListSerializer; drf-stubs types only the child's __init__.
    targets = CompareTargetSerializer(many=True, allow_empty=False, max_length=50)  # type: ignore[call-arg]
    constraints = ConstraintsSerializer(required=False)


class EstimateInputSerializer(StrictSerializer):
    workload = WorkloadField()
    gpu = StrictCharField(
        required=False, allow_null=True, help_text="GPU slug (GET /api/gpus/ lists them)."
    )
    gpu_count = serializers.IntegerField(required=False, min_value=1, max_value=4096)
    fit_on = _field(inputs.CONSTRAINTS_BY_NAME["fit_on"])

    def validate_gpu(self, value: str | None) -> str | None:
        if value:
            _known([value], lambda: GPU.objects.values_list("slug", flat=True), "GPU")
        return value


# --- Output shapes (for the OpenAPI schema; the views build plain dicts) -----------------


class RangeField(serializers.ListField):
    """[low, high]: a figure's range; it always holds the figure itself."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(child=serializers.FloatField(), min_length=2, max_length=2, **kwargs)


class BreakdownSerializer(AnySerializer):
    weights = serializers.FloatField()
    gradients = serializers.FloatField()
    optimizer = serializers.FloatField()
    activations = serializers.FloatField()
    kv_cache = serializers.FloatField()
    adapters = serializers.FloatField()
    overhead = serializers.FloatField()


class MessageSerializer(AnySerializer):
    """A coded sentence: a stable code (see docs/api.md), the figures it names, and the text
    in the request's language (``?lang=`` or Accept-Language: en, zh-hans)."""

    code = serializers.CharField()
    params = serializers.DictField()
    text = serializers.CharField()


class EstimateOutputSerializer(AnySerializer):
    memory_per_gpu_gib = serializers.FloatField()
    breakdown = BreakdownSerializer()
    total_memory_gib = serializers.FloatField()
    min_gpus = serializers.IntegerField(allow_null=True)
    training_flops = serializers.FloatField(allow_null=True)
    mfu = serializers.FloatField(allow_null=True)
    tokens_per_second = serializers.FloatField(allow_null=True)
    gpu_hours = serializers.FloatField(allow_null=True)
    est_hours = serializers.FloatField(allow_null=True)
    gpu = serializers.CharField(allow_null=True)
    gpu_count = serializers.IntegerField()
    sharding = serializers.CharField(allow_null=True)
    fits = serializers.BooleanField(allow_null=True, help_text="On the given GPU and count.")
    headroom_pct = serializers.FloatField(allow_null=True)
    assumptions = serializers.DictField()
    notes = serializers.ListField(
        child=serializers.CharField(),
        help_text="The working: the estimator's own notes in the request's language, the "
        "formula working in English.",
    )
    note_messages = MessageSerializer(
        many=True, help_text="The estimator's own notes and the range notes, coded."
    )
    memory_per_gpu_gib_range = RangeField(
        help_text="[low, high] GiB: the estimate times the 5th and 95th percentile of "
        "measured/estimated on comparable calibration rows, checked leave-one-source-out "
        "(docs/sizing.md, Ranges)."
    )
    gpu_hours_range = RangeField(allow_null=True, help_text="[low, high] GPU-hours, likewise.")
    est_hours_range = RangeField(allow_null=True, help_text="[low, high] hours, likewise.")
    tokens_per_second_range = RangeField(
        allow_null=True, help_text="[low, high] tokens/s per GPU, likewise."
    )
    range_basis = serializers.DictField(
        help_text="The calibration rows each range rests on (memory, time) and the quantiles."
    )
    fit_on = serializers.ChoiceField(
        choices=inputs.FIT_ON,
        help_text="What fits was decided on: high end of the range, or point.",
    )
    fits_point = serializers.BooleanField(
        allow_null=True, help_text="Whether the estimate itself fits the given GPU and count."
    )


class InterconnectOutputSerializer(AnySerializer):
    intra_node = serializers.CharField(allow_null=True)
    intra_node_bandwidth_gb_s = serializers.FloatField(allow_null=True)
    inter_node = serializers.CharField(allow_null=True)
    inter_node_rdma = serializers.BooleanField()
    network_gbps = serializers.FloatField(allow_null=True)


class RecommendationSerializer(AnySerializer):
    rank = serializers.IntegerField()
    provider = serializers.CharField()
    region = serializers.CharField()
    other_regions = serializers.ListField(
        child=serializers.CharField(), help_text="Regions where the same offer has the same price."
    )
    instance_type = serializers.CharField()
    gpu = serializers.CharField()
    gpu_count = serializers.FloatField()
    nodes = serializers.IntegerField()
    pricing_model = serializers.CharField()
    usd_per_hour = serializers.FloatField()
    usd_per_gpu_hour = serializers.FloatField()
    est_hours = serializers.FloatField(allow_null=True)
    est_total_usd = serializers.FloatField(allow_null=True)
    memory_per_gpu_gib = serializers.FloatField()
    headroom_pct = serializers.FloatField()
    sharding = serializers.CharField(allow_null=True)
    interconnect = InterconnectOutputSerializer()
    host_check = serializers.DictField()
    price_observed_at = serializers.DateTimeField()
    stale = serializers.BooleanField()
    reasons = serializers.ListField(child=serializers.CharField())
    warnings = serializers.ListField(child=serializers.CharField())
    reason_messages = MessageSerializer(many=True, help_text="The reasons, coded.")
    warning_messages = MessageSerializer(many=True, help_text="The warnings, coded.")
    memory_per_gpu_gib_range = RangeField(help_text="[low, high] GiB (see estimate).")
    est_hours_range = RangeField(allow_null=True, help_text="[low, high] hours.")
    gpu_hours_range = RangeField(
        allow_null=True,
        help_text="[low, high] GPU-hours: est_hours_range x gpu_count (every node's GPUs).",
    )
    est_total_usd_range = RangeField(
        allow_null=True, help_text="[low, high] USD: the hours range billed as this plan is."
    )


class RejectedEntrySerializer(AnySerializer):
    count = serializers.IntegerField()
    examples = serializers.ListField(child=serializers.CharField())
    code = serializers.CharField(help_text="The rejection code (the entry's key).")
    params = serializers.DictField()
    text = serializers.CharField(help_text="What the code means, in the request's language.")
    example_messages = MessageSerializer(many=True, help_text="The examples, coded.")


class RecommendOutputSerializer(AnySerializer):
    estimate = EstimateOutputSerializer()
    recommendations = RecommendationSerializer(many=True)
    rejected = serializers.DictField(child=RejectedEntrySerializer())
    advice = serializers.ListField(child=serializers.CharField())
    advice_messages = MessageSerializer(many=True, help_text="The advice, coded.")
    catalog_as_of = serializers.DateTimeField(
        allow_null=True,
        help_text="The newest observed_at among the prices this answer was planned over (the "
        "same catalog version as its plans).",
    )
    prices_oldest_observed_at = serializers.DateTimeField(
        allow_null=True, help_text="When the oldest price this answer used was observed."
    )
    prices_newest_observed_at = serializers.DateTimeField(
        allow_null=True, help_text="When the newest price this answer used was observed."
    )
    objective = serializers.CharField()
    considered = serializers.IntegerField()


class CompareRowSerializer(RecommendationSerializer):
    """A plan's keys when the target fits; when it does not, only provider, instance_type, gpu,
    fits, why_not, why_not_message and target."""

    target = serializers.CharField(help_text="The target as named: GPU slug or provider/type.")
    fits = serializers.BooleanField()
    why_not = serializers.CharField(allow_null=True)
    why_not_message = MessageSerializer(allow_null=True, help_text="why_not, coded.")

    def get_fields(self) -> dict[str, AnyField]:
        fields = super().get_fields()
        for name, field in fields.items():
            if name not in ("target", "fits", "why_not", "why_not_message"):
                field.required = False
        # A GPU target that does not fit names no instance type (nor its provider).
        fields["provider"].allow_null = fields["instance_type"].allow_null = True
        return fields


class CompareOutputSerializer(AnySerializer):
    estimate = EstimateOutputSerializer()
    rows = CompareRowSerializer(many=True)
    catalog_as_of = serializers.DateTimeField(
        allow_null=True,
        help_text="The newest observed_at among the prices this answer was planned over (the "
        "same catalog version as its plans).",
    )
    prices_oldest_observed_at = serializers.DateTimeField(
        allow_null=True, help_text="When the oldest price this answer used was observed."
    )
    prices_newest_observed_at = serializers.DateTimeField(
        allow_null=True, help_text="When the newest price this answer used was observed."
    )
