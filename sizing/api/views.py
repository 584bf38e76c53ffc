"""Operation endpoints: /api/estimate, /api/recommend (POST and GET), /api/compare."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.utils import translation
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, extend_schema
from rest_framework import serializers as drf_serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from api.renderers import CSV_RENDERERS
from catalog.models import GPU
from catalog.suggest import close_names
from ops.limits import MAX_INT_DIGITS

from .. import selectors
from ..estimator import WorkloadError, estimate
from ..inputs import WORKLOAD
from ..messages import LANGUAGES, Message, language_of
from ..messages import MessageCode as C
from ..planner import FIT_HEADROOM
from ..services import CONSTRAINT_FIELDS, constraints_build, workload_build, workload_error
from ..uncertainty import fit_factor, fit_headroom, spread
from . import serializers

WORKLOAD_DOC = (
    "Workload fields: "
    + ", ".join(serializers.WorkloadSchemaSerializer().fields)
    + ". See docs/sizing.md."
)


LANG_PARAMETER = OpenApiParameter(
    "lang",
    OpenApiTypes.STR,
    enum=list(LANGUAGES),
    description="Language of reasons, warnings, advice and rejections (each also carries a "
    "stable code and params). Default: from Accept-Language, else en.",
)


def message_language(request: Request) -> str:
    """The language of an answer's messages: ``?lang=``, else Accept-Language, else English."""
    raw = request.query_params.get("lang")
    if raw is not None:
        lang = language_of(raw)
        if lang is None:
            raise drf_serializers.ValidationError(
                {"lang": [f"unknown language {raw!r}; expected one of: {', '.join(LANGUAGES)}"]}
            )
        return lang
    header = translation.get_language_from_request(request._request)
    return language_of(header) or LANGUAGES[0]


# Requests the schema shows (and schemathesis' examples phase sends), answered 200 over the
# curated catalog: presets from fixtures/models.yaml, GPU slugs from fixtures/gpus.yaml.
_LORA_8B = {"model": "llama-3-8b", "method": "lora", "gradient_checkpointing": "full"}
ESTIMATE_EXAMPLE = OpenApiExample(
    "QLoRA of Llama 2 7B on one T4",
    value={"workload": {"model": "llama-2-7b", "method": "qlora"}, "gpu": "t4"},
    request_only=True,
)
RECOMMEND_EXAMPLE = OpenApiExample(
    "LoRA of Llama 3 8B on 200M tokens, spot or on-demand",
    value={
        "workload": {**_LORA_8B, "tokens": 200_000_000},
        "constraints": {"pricing": ["spot", "on_demand"]},
        "limit": 3,
    },
    request_only=True,
)
COMPARE_EXAMPLE = OpenApiExample(
    "LoRA of Llama 3 8B on an H100 SXM or an A100 SXM4 80GB",
    value={
        "workload": {**_LORA_8B, "tokens": 200_000_000},
        "targets": [{"gpu": "h100-sxm"}, {"gpu": "a100-sxm4-80gb"}],
    },
    request_only=True,
)
QUERY_EXAMPLES = {"model": "llama-3-8b", "method": "lora", "tokens": 200_000_000, "limit": 3}


class EstimateView(APIView):
    """Memory, compute and time for a workload, optionally on a given GPU and count."""

    allow_anonymous_post = True

    @extend_schema(
        request=serializers.EstimateInputSerializer,
        responses=serializers.EstimateOutputSerializer,
        description=WORKLOAD_DOC,
        parameters=[LANG_PARAMETER],
        examples=[ESTIMATE_EXAMPLE],
    )
    def post(self, request: Request) -> Response:
        lang = message_language(request)
        form = serializers.EstimateInputSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        workload = workload_build(form.validated_data["workload"], hardware_allowed=True, lang=lang)
        # The hardware may come at the top level or inside the workload; the top level wins.
        slug = form.validated_data.get("gpu") or workload.gpu
        count = form.validated_data.get("gpu_count") or workload.gpu_count or 1
        row = GPU.objects.filter(slug=slug).first() if slug else None
        if slug and row is None:
            raise drf_serializers.ValidationError({"gpu": [f"unknown GPU {slug!r}"]})
        gpu = selectors.gpu_spec(row) if row else None
        fit_on = form.validated_data.get("fit_on") or settings.SIZING_FIT_ON
        # Fitting the high end of the memory range with FIT_HEADROOM free is fitting the
        # estimate with a larger share free: the sharding, min_gpus and fits follow from it.
        headroom = fit_headroom(FIT_HEADROOM, fit_factor(workload, fit_on, gpu_count=count))
        try:
            est = estimate(workload, gpu=gpu, gpu_count=count, headroom=headroom)
        except WorkloadError as exc:  # e.g. tensor x pipeline parallel does not divide gpu_count
            raise workload_error(exc, lang, under=None) from exc
        fits_point = None
        extra = []
        if gpu is not None:
            fits_point = est.memory_per_gpu_gib <= float(gpu.memory_gib) * (1 - FIT_HEADROOM)
            if fit_on == "high":
                high = est.memory_per_gpu_gib * spread("memory", workload, gpu_count=count).high
                figures = {"high_gib": high, "capacity_gib": gpu.memory_gib}
                extra.append(Message(C.NOTE_FIT_ON_HIGH, {**figures, "headroom": FIT_HEADROOM}))
        answer = selectors.estimate_dict(
            est,
            gpu=slug,
            gpu_count=count,
            workload=workload,
            fit_on=fit_on,
            fits_point=fits_point,
            lang=lang,
            extra_notes=extra,
        )
        return Response(answer)


# Query-string names of /api/recommend besides workload and constraint fields.
TOP_FIELDS = {"objective", "limit", "all_sizes", "format", "lang"}


# Every workload field name a query string may carry (sizing/workload.py).
WORKLOAD_FIELDS = frozenset(f.name for f in WORKLOAD)


def _unknown_query_name(name: str) -> Message:
    """The error of a query name GET /api/recommend does not take: the nearest known name."""
    near = close_names(name, WORKLOAD_FIELDS | CONSTRAINT_FIELDS | TOP_FIELDS, limit=1)
    if near:
        return Message(C.INPUT_UNKNOWN_FIELD_NEAR, {"near": near[0]})
    return Message(C.INPUT_UNKNOWN_FIELD)


def _query_value(raw: str) -> Any:
    lowered = raw.strip().lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    for cast in (int, float):
        try:
            value = cast(raw)
        except ValueError:
            continue
        # An integer past float range reads as a float (infinity), as a JSON body's does
        # (ops.limits.BoundedJSONParser): a 400 naming the field, never an OverflowError.
        return (
            float(raw) if cast is int and len(raw.strip().lstrip("+-")) > MAX_INT_DIGITS else value
        )
    return raw


def _query_parameters() -> list[OpenApiParameter]:
    """GET /api/recommend's query names, from the same serializers as the POST body."""
    kinds = {
        drf_serializers.FloatField: OpenApiTypes.FLOAT,
        drf_serializers.IntegerField: OpenApiTypes.INT,
        drf_serializers.BooleanField: OpenApiTypes.BOOL,
    }
    parameters = []
    for serializer in (
        serializers.WorkloadSchemaSerializer(),
        serializers.ConstraintsSerializer(),
        serializers.RecommendInputSerializer(),
    ):
        for name, field in serializer.fields.items():
            if name in ("workload", "constraints"):
                continue
            listed = isinstance(field, drf_serializers.ListField)
            kind = next((t for cls, t in kinds.items() if isinstance(field, cls)), OpenApiTypes.STR)
            text = str(field.help_text or "") + (" Comma-separated." if listed else "")
            choices = (
                list(field.choices) if isinstance(field, drf_serializers.ChoiceField) else None
            )
            example = (
                [OpenApiExample(name, value=QUERY_EXAMPLES[name])] if name in QUERY_EXAMPLES else []
            )
            parameters.append(
                OpenApiParameter(
                    name, kind, description=text.strip(), enum=choices, examples=example
                )
            )
    return parameters


class RecommendView(APIView):
    """Ranked instances for a workload over the live catalog, with reasons, warnings and advice."""

    allow_anonymous_post = True
    renderer_classes = CSV_RENDERERS

    @extend_schema(
        request=serializers.RecommendInputSerializer,
        responses=serializers.RecommendOutputSerializer,
        description=WORKLOAD_DOC,
        parameters=[LANG_PARAMETER],
        examples=[RECOMMEND_EXAMPLE],
    )
    def post(self, request: Request) -> Response:
        return self._answer(request.data, message_language(request))

    @extend_schema(
        parameters=[*_query_parameters(), LANG_PARAMETER],
        responses=serializers.RecommendOutputSerializer,
        description="The same fields as POST, flat in the query string; lists comma-separated. "
        + WORKLOAD_DOC,
    )
    def get(self, request: Request) -> Response:
        workload: dict[str, Any] = {}
        constraints: dict[str, Any] = {}
        top: dict[str, Any] = {}
        lang = message_language(request)
        unknown: dict[str, list[str | Message]] = {}
        for name, raw in request.query_params.dict().items():  # the last value of each name
            if name in CONSTRAINT_FIELDS:
                constraints[name] = raw
            elif name in TOP_FIELDS:
                top[name] = raw
            elif name in WORKLOAD_FIELDS:
                workload[name] = _query_value(raw)
            else:
                unknown[name] = [_unknown_query_name(name)]
        if unknown:
            # A query name is flat: an unknown one is reported under its own name, with the
            # nearest of every name the query string takes (workload, constraints, the rest).
            raise workload_error(WorkloadError(unknown), lang, under=None)
        top.pop("format", None)
        top.pop("lang", None)
        return self._answer({"workload": workload, "constraints": constraints, **top}, lang)

    def _answer(self, data: Any, lang: str) -> Response:
        form = serializers.RecommendInputSerializer(data=data)
        form.is_valid(raise_exception=True)
        values = form.validated_data
        workload = workload_build(values["workload"], lang=lang)
        constraints = constraints_build(values.get("constraints"))
        answer = selectors.recommend(
            workload,
            constraints,
            objective=values["objective"],
            limit=values["limit"],
            lang=lang,
            all_sizes=values["all_sizes"],
        )
        return Response(answer)


class CompareView(APIView):
    """Named instance types or GPUs side by side for one workload, including those that do not fit."""

    allow_anonymous_post = True

    @extend_schema(
        request=serializers.CompareInputSerializer,
        responses=serializers.CompareOutputSerializer,
        description=WORKLOAD_DOC,
        parameters=[LANG_PARAMETER],
        examples=[COMPARE_EXAMPLE],
    )
    def post(self, request: Request) -> Response:
        form = serializers.CompareInputSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        values = form.validated_data
        lang = message_language(request)
        workload = workload_build(values["workload"], lang=lang)
        constraints = constraints_build(values.get("constraints"))
        return Response(selectors.compare(workload, values["targets"], constraints, lang=lang))
