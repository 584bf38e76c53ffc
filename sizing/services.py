"""Request assembly for sizing: a workload and constraints from what a caller sent, validated
and defaulted exactly as /api/recommend does. The API views, the plan page, benchmarks and tests
all call these (none imports the views as a library)."""

from __future__ import annotations

from dataclasses import fields as dataclass_fields
from typing import Any

from django.conf import settings
from rest_framework import serializers as drf_serializers

from api.errors import CodedValidationError

from .api import serializers
from .estimator import Workload, WorkloadError, parse_workload
from .messages import DEFAULT_LANGUAGE, message_dict
from .planner import Constraints
from .presets import load_presets

# The names of the constraint fields (query-string names of GET /api/recommend, plan page).
CONSTRAINT_FIELDS = set(serializers.ConstraintsSerializer().fields)


def workload_build(
    data: dict[str, Any], *, hardware_allowed: bool = False, lang: str = DEFAULT_LANGUAGE
) -> Workload:
    """The workload from request data; errors are a 400 under ``workload`` naming each field,
    in ``lang``, and coded under ``error_messages`` (``workload_error``).
    ``gpu``/``gpu_count`` belong to /api/estimate only (``hardware_allowed``)."""
    if not hardware_allowed:
        misplaced: dict[str, list[str]] = {
            key: [
                f"{key} belongs to /api/estimate; here use constraints.gpus and constraints.max_gpus"
            ]
            for key in ("gpu", "gpu_count")
            if key in data
        }
        # A fixed parallel layout only makes sense on a given GPU count (/api/estimate);
        # recommend and compare choose the layout for every machine they weigh.
        misplaced |= {
            key: [
                f"{key} belongs to /api/estimate; recommend and compare choose the layout per machine"
            ]
            for key in ("tensor_parallel", "pipeline_parallel")
            if data.get(key) not in (None, 1, "1")
        }
        if misplaced:
            raise drf_serializers.ValidationError({"workload": misplaced})
    try:
        return parse_workload(data, load_presets())
    except WorkloadError as exc:
        raise workload_error(exc, lang, under="workload") from exc


def workload_error(exc: WorkloadError, lang: str, *, under: str | None) -> CodedValidationError:
    """The 400 of a WorkloadError: its sentences in ``lang`` by field (inside ``under`` when
    given), and the coded ones as ``error_messages`` in the same shape."""
    errors: dict[str, Any] = exc.rendered(lang)
    coded: dict[str, Any] = {
        field: [message_dict(m, lang) for m in messages]
        for field, messages in exc.coded.items()
        if messages
    }
    if under:
        return CodedValidationError({under: errors}, {under: coded})
    return CodedValidationError(errors, coded)


def constraints_build(data: dict[str, Any] | None) -> Constraints:
    """Constraints from already validated data (ConstraintsSerializer); None: the documented
    defaults, not the dataclass's (``fit_on`` unset: settings.SIZING_FIT_ON)."""
    if data is None:
        form = serializers.ConstraintsSerializer(data={})
        form.is_valid(raise_exception=True)
        data = form.validated_data
    data = dict(data)
    if not data.get("fit_on"):
        data["fit_on"] = settings.SIZING_FIT_ON
    if data.get("pricing"):
        data["pricing_explicit"] = True
    else:
        data.pop("pricing", None)
    known = {f.name for f in dataclass_fields(Constraints)}
    values: dict[str, Any] = {
        k: (tuple(v) if isinstance(v, list) else v) for k, v in data.items() if k in known
    }
    return Constraints(**values)


def constraints_from(data: dict[str, Any]) -> Constraints:
    """Constraints as /api/recommend reads them from its callers: validated by the same
    serializer, with the same defaults (the plan page uses this too)."""
    form = serializers.ConstraintsSerializer(data=data)
    form.is_valid(raise_exception=True)
    return constraints_build(form.validated_data)
