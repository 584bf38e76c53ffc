"""Forms of the pages: the price browser's filters and the plan page's workload.

Both are GET forms, so a filtered table or a plan is a URL that can be shared.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any, cast

from django import forms
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator
from django.utils.datastructures import MultiValueDict
from django.utils.translation import get_language
from django.utils.translation import gettext_lazy as _

from catalog.choices import HOURS_PER_UNIT, Segment, Vendor
from catalog.pricing import PricingModel
from sizing import inputs
from sizing.estimator import Workload, WorkloadError, parse_workload
from sizing.inputs import OBJECTIVES, PRICING_MODELS
from sizing.messages import DEFAULT_LANGUAGE, language_of
from sizing.planner import Constraints
from sizing.presets import load_presets
from sizing.services import CONSTRAINT_FIELDS, constraints_from

from . import labels
from .selectors import (
    DEFAULT_OFFER_SORT,
    GPU_SORTS,
    LEGACY_SORTS,
    OFFER_SORTS,
    PRICE_SORTS,
    price_filter_options,
)

ANY = ("", _("Any"))
YES_NO = [("true", _("Yes")), ("false", _("No"))]


def _choices(codes: tuple[str, ...], names: dict, *, blank: Any = None) -> list:
    """(code, lazy translated name) pairs: translated when rendered, in the reader's language."""
    options = [(code, names.get(code, code)) for code in codes]
    return [blank, *options] if blank else options


def _number(**attrs: Any) -> forms.NumberInput:
    return forms.NumberInput(attrs={"step": "any", "inputmode": "decimal", **attrs})


MAINLAND_CHOICES = [ANY, ("true", _("Only mainland China")), ("false", _("Outside mainland China"))]


# Columns of the price table a reader may add (the key columns are always shown).
OPTIONAL_COLUMNS = [
    ("memory", _("GPU memory")),
    ("vcpus", _("vCPUs")),
    ("ram", _("RAM")),
    ("network", _("Network")),
    ("interconnect", _("Interconnect")),
    ("disk", _("Local disk")),
    ("listed", _("Price as listed")),
]


class PriceBrowseForm(forms.Form):
    """Filters of the price browser; every field is optional, lists take several values."""

    gpu = forms.MultipleChoiceField(
        label=_("GPUs"), required=False, widget=forms.CheckboxSelectMultiple
    )
    provider = forms.MultipleChoiceField(
        label=_("Providers"), required=False, widget=forms.CheckboxSelectMultiple
    )
    region = forms.MultipleChoiceField(
        label=_("Regions"), required=False, widget=forms.CheckboxSelectMultiple
    )
    pricing_model = forms.MultipleChoiceField(
        label=_("Pricing models"),
        required=False,
        choices=_choices(PRICING_MODELS, labels.PRICING_MODELS),
        widget=forms.CheckboxSelectMultiple,
    )
    min_gpu_memory_gib = forms.FloatField(
        label=_("GPU memory at least (GiB)"),
        required=False,
        min_value=0,
        widget=_number(),
    )
    per = forms.ChoiceField(
        label=_("Price per"),
        required=False,
        choices=[("gpu", _("GPU")), ("instance", _("instance"))],
    )
    period = forms.ChoiceField(
        label=_("Price for"),
        required=False,
        choices=[("hour", _("an hour")), ("month", _("a month (730 h)"))],
    )
    min_price = forms.DecimalField(
        label=_("Price from (USD)"),
        required=False,
        min_value=0,
        widget=_number(),
    )
    max_price = forms.DecimalField(
        label=_("Price up to (USD)"),
        required=False,
        min_value=0,
        widget=_number(),
    )
    mainland_china = forms.ChoiceField(
        label=_("Mainland China"),
        required=False,
        choices=MAINLAND_CHOICES,
    )
    freshness = forms.ChoiceField(
        label=_("Freshness"),
        required=False,
        choices=[ANY, ("fresh", _("Fresh only")), ("stale", _("Stale only"))],
    )
    col = forms.MultipleChoiceField(
        label=_("More columns"),
        required=False,
        choices=OPTIONAL_COLUMNS,
        widget=forms.CheckboxSelectMultiple,
    )
    sort = forms.CharField(required=False, widget=forms.HiddenInput)

    # Fields drawn as a drop-down list of checkboxes, and the ones the price unit applies to.
    MULTI_FIELDS = ("gpu", "provider", "region", "pricing_model")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        options = price_filter_options()
        for name, choices in (("gpu", "gpus"), ("provider", "providers"), ("region", "regions")):
            cast(forms.ChoiceField, self.fields[name]).choices = options[choices]

    def clean_sort(self) -> str:
        """A known sort key (``-`` for descending); older keys map to their new column, anything
        else falls back to the default."""
        sort = self.cleaned_data.get("sort") or ""
        descending, key = sort.startswith("-"), sort.lstrip("-")
        key = LEGACY_SORTS.get(key, key)
        if key not in OFFER_SORTS:
            return ""
        return f"-{key}" if descending else key

    def clean(self) -> dict[str, Any]:
        super().clean()
        data = self.cleaned_data
        low, high = data.get("min_price"), data.get("max_price")
        if low is not None and high is not None and low > high:
            self.add_error("max_price", _("Must not be below the lower bound."))
        return data

    @property
    def per_gpu(self) -> bool:
        return (self.cleaned_data.get("per") or "gpu") == "gpu"

    @property
    def per_month(self) -> bool:
        return self.cleaned_data.get("period") == "month"

    @property
    def sort_key(self) -> str:
        """The sort in force: the chosen one, else the on-demand price."""
        return self.cleaned_data.get("sort") or DEFAULT_OFFER_SORT

    @property
    def columns(self) -> list[str]:
        """The optional columns asked for."""
        return list(self.cleaned_data.get("col") or [])

    def filter_data(self) -> dict[str, str]:
        """The cleaned filters under PriceFilterSet's parameter names (lists comma-separated).

        The price range is in the unit shown (per GPU or instance, per hour or month).
        """
        data = self.cleaned_data
        out: dict[str, str] = {}
        for name in self.MULTI_FIELDS:
            if data.get(name):
                out[name] = ",".join(data[name])
        if data.get("mainland_china"):
            out["mainland_china"] = data["mainland_china"]
        if data.get("min_gpu_memory_gib") is not None:
            out["min_gpu_memory_gib"] = str(data["min_gpu_memory_gib"])
        column = "usd_per_gpu_hour" if self.per_gpu else "usd_per_hour"
        hours = Decimal(HOURS_PER_UNIT["month"]) if self.per_month else Decimal(1)
        if data.get("min_price") is not None:
            out[f"min_{column}"] = str(data["min_price"] / hours)
        if data.get("max_price") is not None:
            out[f"max_{column}"] = str(data["max_price"] / hours)
        if data.get("freshness"):
            out["stale"] = "true" if data["freshness"] == "stale" else "false"
        return out

    @property
    def price_sort_key(self) -> str:
        """The sort for the one-row-per-price CSV: the same column, the unit's price for the
        pricing-model columns."""
        sort = self.sort_key
        descending, key = sort.startswith("-"), sort.lstrip("-")
        if key not in PRICE_SORTS:
            key = "usd_per_gpu_hour" if self.per_gpu else "usd_per_hour"
        return f"-{key}" if descending else key


class GPUListForm(forms.Form):
    """Filters and sort of /gpus; every field is optional."""

    q = forms.CharField(
        label=_("Name contains"),
        required=False,
        max_length=64,
        # The script filters the rows shown as you type; the form filters on the server.
        widget=forms.TextInput(attrs={"data-filter-table": "gpu-table", "autocomplete": "off"}),
    )
    vendor = forms.MultipleChoiceField(
        label=_("Vendor"),
        required=False,
        choices=Vendor.choices,
        widget=forms.CheckboxSelectMultiple,
    )
    segment = forms.MultipleChoiceField(
        label=_("Segment"),
        required=False,
        choices=_choices(tuple(Segment.values), labels.SEGMENTS),
        widget=forms.CheckboxSelectMultiple,
    )
    min_memory_gib = forms.FloatField(
        label=_("Memory at least (GiB)"), required=False, min_value=0, widget=_number(min="0")
    )
    # Ticked boxes read as a statement, without the colon of the other labels.
    has_fp8 = forms.BooleanField(label=_("FP8 only"), required=False, label_suffix="")
    rented = forms.BooleanField(label=_("Rented somewhere"), required=False, label_suffix="")
    sort = forms.CharField(required=False, widget=forms.HiddenInput)

    def clean_sort(self) -> str:
        sort = self.cleaned_data.get("sort") or ""
        return sort if sort.lstrip("-") in GPU_SORTS else ""


# --- Plan -----------------------------------------------------------------------------------


class ReadableMaxValue(MaxValueValidator):
    """Django's "less than or equal to %(limit_value)s", with the limit grouped (100,000)."""

    message = _("Ensure this value is less than or equal to %(limit_value)s.")

    def __call__(self, value: Any) -> None:
        if value is not None and value > self.limit_value:
            raise ValidationError(
                self.message, code=self.code, params={"limit_value": f"{self.limit_value:,}"}
            )


# Form fields handed to the estimator's parse_workload: those sizing/inputs.py puts on the page.
WORKLOAD_FIELDS = tuple(spec.name for spec in inputs.WORKLOAD if spec.form)
# How the page names the codes of a choice field, and what its empty choice says (by field).
CHOICE_LABELS: dict[str, dict] = {
    "task": labels.TASKS,
    "method": labels.METHODS,
    "optimizer": labels.OPTIMIZERS,
    "gradient_checkpointing": labels.CHECKPOINTING,
    "sharding": labels.SHARDING,
    "framework": labels.FRAMEWORKS,
}
BLANK_LABELS = {
    "method": _("Default for the task"),
    "precision": _("Default (bf16)"),
    "optimizer": _("Default (AdamW)"),
    "sharding": labels.SHARDING[""],
}
HELP_TEXTS = {"tokens": _("For time and cost; 1e9 is a billion.")}


def _label_word(label: Any) -> str:
    """A field's label quoted as a sentence names it: “Parameters (billions)” for the label
    “or parameters (billions)” (the page sets the alternatives one under another)."""
    text = str(label)
    for alternative in ("or ", "或"):
        text = text.removeprefix(alternative)
    return f"“{text[:1].upper()}{text[1:]}”"


def _workload_field(spec: inputs.Field) -> forms.Field:
    """The plan page's field for one workload input described in sizing/inputs.py."""
    label = _(spec.label)  # the msgid is marked in sizing/inputs.py
    common: dict[str, Any] = {"label": label, "required": False}
    if spec.name in HELP_TEXTS:
        common["help_text"] = HELP_TEXTS[spec.name]
    low = f"{spec.bounds[0]:g}" if spec.bounds else "0"
    if spec.kind == "object":
        return forms.CharField(widget=forms.Textarea(attrs={"rows": 3, "cols": 20}), **common)
    if spec.kind == "int":
        return forms.IntegerField(widget=_number(min=low, step="1"), **common)
    if spec.kind == "float":
        return forms.FloatField(widget=_number(min=low), **common)
    if spec.kind in ("choice", "bool"):
        codes = spec.choices or ("true", "false")
        names = CHOICE_LABELS.get(spec.name, {"true": _("Yes"), "false": _("No")})
        blank = (
            None if spec.default is not None else ("", BLANK_LABELS.get(spec.name, _("Default")))
        )
        return forms.ChoiceField(choices=_choices(codes, names, blank=blank), **common)
    return forms.ChoiceField(**common)  # model: its presets are filled in per form


# Limits where 0 makes no sense (it would reject every plan): empty means no limit.
POSITIVE_LIMITS = ("max_usd_per_hour", "max_total_usd", "max_hours")
# The estimator's bounds of each numeric workload input (sizing/inputs.py).
BOUNDS = {spec.name: spec.bounds for spec in inputs.WORKLOAD if spec.bounds}


def readable(value: float) -> str:
    """A bound for a message, with thousands separators: 1,048,576 or 0.001."""
    if value == int(value):
        return f"{int(value):,}"
    return f"{value:,.3f}".rstrip("0").rstrip(".")


def split_lists(data: Any, fields: dict[str, forms.Field]) -> Any:
    """``data`` with every value of a list field split on commas, as the API reads its query
    strings (``pricing=on_demand,spot``), beside the repeated names the form's checkboxes send
    (``pricing=on_demand&pricing=spot``); empty pieces dropped."""
    listed = [
        name for name, field in fields.items() if isinstance(field, forms.MultipleChoiceField)
    ]
    if not any("," in value for name in listed for value in data.getlist(name)):
        return data
    data = data.copy()
    for name in listed:
        if name in data:
            data.setlist(
                name, [p.strip() for v in data.getlist(name) for p in v.split(",") if p.strip()]
            )
    return data


PLAN_INITIAL: dict[str, Any] = {
    "model": "llama-3-8b",
    "task": "finetune",
    "method": "lora",
    "precision": "bf16",
    "tokens": 100_000_000,
    "pricing": [PricingModel.ON_DEMAND.value, PricingModel.SPOT.value],
    "objective": OBJECTIVES[0],
}


def _preset_choices() -> list[tuple[str, str]]:
    presets = load_presets()
    return [(slug, arch.display_name or slug) for slug, arch in sorted(presets.items())]


# The workload half of the plan form, field by field from sizing/inputs.py.
class WorkloadFieldsForm(forms.Form):
    """The workload fields of the plan page (below), in sizing/inputs.py's order."""


# Declared here, before PlanForm's own fields: Django's form metaclass takes a base's
# ``declared_fields`` first, as if each had been written out in this class.
WorkloadFieldsForm.declared_fields = {
    name: _workload_field(inputs.WORKLOAD_BY_NAME[name]) for name in WORKLOAD_FIELDS
}
WorkloadFieldsForm.base_fields = dict(WorkloadFieldsForm.declared_fields)


class PlanForm(WorkloadFieldsForm):
    """A workload and its constraints; cleaning runs the estimator's own validation.

    Errors of ``parse_workload`` are attached to the field they name, so the page shows the same
    messages the API would, next to the input that caused them.
    """

    # Constraints.
    pricing = forms.MultipleChoiceField(
        label=_("Pricing models"),
        required=False,
        choices=_choices(PRICING_MODELS, labels.PRICING_MODELS),
        widget=forms.CheckboxSelectMultiple,
        help_text=_("None ticked: all, with commitment terms only for long enough runs."),
    )
    providers = forms.MultipleChoiceField(
        label=_("Providers"),
        required=False,
        widget=forms.SelectMultiple(attrs={"size": 6}),
        help_text=_("None selected: all."),
    )
    gpus = forms.MultipleChoiceField(
        label=_("GPUs"),
        required=False,
        widget=forms.SelectMultiple(attrs={"size": 6}),
        help_text=_("None selected: all."),
    )
    mainland_china = forms.ChoiceField(
        label=_("Mainland China"),
        required=False,
        choices=MAINLAND_CHOICES,
    )
    max_usd_per_hour = forms.FloatField(
        label=_("Budget per hour (USD)"), required=False, min_value=0, widget=_number(min="0")
    )
    max_total_usd = forms.FloatField(
        label=_("Total budget (USD)"), required=False, min_value=0, widget=_number(min="0")
    )
    max_hours = forms.FloatField(
        label=_("At most (hours)"), required=False, min_value=0, widget=_number(min="0")
    )
    min_gpu_memory_gb = forms.FloatField(
        label=_("GPU memory at least (GiB)"),
        required=False,
        min_value=0,
        max_value=4096,
        widget=_number(min="0"),
    )
    max_gpus = forms.IntegerField(
        label=_("At most GPUs"),
        required=False,
        min_value=1,
        validators=[ReadableMaxValue(100_000)],
        widget=_number(min="1", max="100000", step="1"),
        help_text=_("Default 128."),
    )
    allow_multi_node = forms.ChoiceField(
        label=_("Allow several nodes"), required=False, choices=YES_NO
    )
    datacenter_only = forms.ChoiceField(
        label=_("Datacenter GPUs only"),
        required=False,
        choices=[("false", _("No")), ("true", _("Yes"))],
    )
    # Blank is the API's default: stale list prices ranked (flagged), stale spot and
    # marketplace prices left out (docs/api.md, "Price age").
    include_stale = forms.ChoiceField(
        label=_("Include stale prices"), required=False, choices=[("", _("Default")), *YES_NO]
    )
    objective = forms.ChoiceField(
        label=_("Rank by"), required=False, choices=_choices(OBJECTIVES, labels.OBJECTIVES)
    )
    # Blank is the server's setting (SIZING_FIT_ON, high by default).
    fit_on = forms.ChoiceField(
        label=_("Decide the fit on"),
        required=False,
        choices=[
            ("", _("Default (the high end)")),
            ("high", _("The high end of the memory range")),
            ("point", _("The estimate itself")),
        ],
        help_text=_(
            "The high end allows for how far comparable published measurements ran over their "
            "estimates (95th percentile); safer against OOM."
        ),
    )

    # The query string (a QueryDict), or Django's empty MultiValueDict when unbound.
    data: MultiValueDict[str, Any]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.is_bound:
            self.data = split_lists(self.data, self.fields)
        model = cast(forms.ChoiceField, self.fields["model"])
        model.choices = [("", _("(none: give parameters)")), *_preset_choices()]
        options = price_filter_options()
        cast(forms.ChoiceField, self.fields["providers"]).choices = options["providers"]
        cast(forms.ChoiceField, self.fields["gpus"]).choices = options["gpus"]
        self.workload: Workload | None = None

    def _check_bounds(self, data: dict[str, Any]) -> None:
        """The estimator's bounds, said with readable numbers (1,048,576, not 1.04858e+06)."""
        for name in WORKLOAD_FIELDS:
            value = data.get(name)
            if name in BOUNDS and isinstance(value, int | float) and name not in self.errors:
                low, high = BOUNDS[name]
                if not low <= value <= high:
                    self.add_error(
                        name,
                        _("Must be between %(low)s and %(high)s.")
                        % {"low": readable(low), "high": readable(high)},
                    )
        for name in POSITIVE_LIMITS:
            value = data.get(name)
            if value is not None and value <= 0 and name not in self.errors:
                self.add_error(name, _("Must be more than 0; leave it empty for no limit."))

    def clean(self) -> dict[str, Any]:
        super().clean()
        data = self.cleaned_data
        self._check_bounds(data)
        raw = {
            name: data[name]
            for name in WORKLOAD_FIELDS
            if name in data and data[name] not in (None, "")
        }
        failed = set(self.errors)
        try:
            workload = parse_workload(raw, load_presets())
        except WorkloadError as exc:
            lang = language_of(get_language()) or DEFAULT_LANGUAGE
            labels = {name: _label_word(f.label) for name, f in self.fields.items() if f.label}
            for name, messages in exc.rendered(lang, labels).items():
                if name in failed or (name == "model" and "params_b" in failed):
                    continue  # the field's own message already says what is wrong
                field = name if name in self.fields else None
                for message in messages:
                    self.add_error(field, message)
        else:
            if not failed:
                self.workload = workload
                self._show_resolved(workload)
        return data

    def _show_resolved(self, workload: Workload) -> None:
        """Show the task the plan was made with when the URL left it out (the select has no
        empty choice, so it would show the first task and a second Plan would ask for that)."""
        if self.data.get("task") or not self.is_bound:
            return
        data = self.data.copy()
        data["task"] = workload.task
        self.data = data

    def query(self) -> dict[str, list[str]]:
        """The submitted fields that hold a value, as lists (for a URL without empty fields)."""
        out: dict[str, list[str]] = {}
        for name in self.fields:
            values = [v for v in self.data.getlist(name) if v.strip()]
            if values:
                out[name] = values
        return out

    def constraints(self) -> Constraints:
        """The planner's constraints, read as /api/recommend reads them (same defaults)."""
        return constraints_from(
            {
                name: value
                for name, value in self.cleaned_data.items()
                if name in CONSTRAINT_FIELDS and value not in (None, "", [], ())
            }
        )

    def ranking(self) -> str:
        """The objective the plans are ranked by."""
        return self.cleaned_data.get("objective") or OBJECTIVES[0]
