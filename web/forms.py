"""Forms of the pages: the price browser's filters and the plan page's workload.

Both are GET forms, so a filtered table or a plan is a URL that can be shared.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from sizing.api.views import CONSTRAINT_FIELDS, constraints_from
from sizing.estimator import Workload, WorkloadError, parse_workload
from sizing.planner import OBJECTIVES, PRICING_MODELS, Constraints
from sizing.presets import load_presets
from sizing.workload import CHECKPOINTING, METHODS, OPTIMIZERS, PRECISIONS, SHARDINGS, TASKS

from . import labels
from .selectors import DEFAULT_PRICE_SORT, PRICE_SORTS, price_filter_options

ANY = ("", _("Any"))
YES_NO = [("true", _("Yes")), ("false", _("No"))]


def _choices(codes: tuple[str, ...], names: dict, *, blank: Any = None) -> list:
    """(code, lazy translated name) pairs: translated when rendered, in the reader's language."""
    options = [(code, names.get(code, code)) for code in codes]
    return [blank, *options] if blank else options


def _number(**attrs: Any) -> forms.NumberInput:
    return forms.NumberInput(attrs={"step": "any", "inputmode": "decimal", **attrs})


MAINLAND_CHOICES = [ANY, ("true", _("Only mainland China")), ("false", _("Outside mainland China"))]


class PriceBrowseForm(forms.Form):
    """Filters of the price browser; every field is optional."""

    gpu = forms.ChoiceField(label=_("GPU"), required=False)
    provider = forms.ChoiceField(label=_("Provider"), required=False)
    region = forms.ChoiceField(label=_("Region"), required=False)
    pricing_model = forms.ChoiceField(
        label=_("Pricing model"),
        required=False,
        choices=_choices(PRICING_MODELS, labels.PRICING_MODELS, blank=ANY),
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
        choices=[("gpu", _("GPU-hour")), ("instance", _("instance-hour"))],
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
    sort = forms.CharField(required=False, widget=forms.HiddenInput)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        options = price_filter_options()
        self.fields["gpu"].choices = [ANY, *options["gpus"]]
        self.fields["provider"].choices = [ANY, *options["providers"]]
        self.fields["region"].choices = [ANY, *options["regions"]]

    def clean_sort(self) -> str:
        """A known sort key (``-`` for descending); anything else falls back to the default."""
        sort = self.cleaned_data.get("sort") or ""
        return sort if sort.lstrip("-") in PRICE_SORTS else ""

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        low, high = data.get("min_price"), data.get("max_price")
        if low is not None and high is not None and low > high:
            self.add_error("max_price", _("Must not be below the lower bound."))
        return data

    @property
    def per_gpu(self) -> bool:
        return (self.cleaned_data.get("per") or "gpu") == "gpu"

    @property
    def sort_key(self) -> str:
        """The sort in force: the chosen one, else the price column of the chosen unit."""
        return self.cleaned_data.get("sort") or (
            DEFAULT_PRICE_SORT if self.per_gpu else "usd_per_hour"
        )

    def filter_data(self) -> dict[str, str]:
        """The cleaned filters under PriceFilterSet's parameter names."""
        data = self.cleaned_data
        out: dict[str, str] = {}
        for name in ("gpu", "provider", "region", "pricing_model", "mainland_china"):
            if data.get(name):
                out[name] = data[name]
        if data.get("min_gpu_memory_gib") is not None:
            out["min_gpu_memory_gib"] = str(data["min_gpu_memory_gib"])
        column = "usd_per_gpu_hour" if self.per_gpu else "usd_per_hour"
        if data.get("min_price") is not None:
            out[f"min_{column}"] = str(data["min_price"])
        if data.get("max_price") is not None:
            out[f"max_{column}"] = str(data["max_price"])
        if data.get("freshness"):
            out["stale"] = "true" if data["freshness"] == "stale" else "false"
        return out


# --- Plan -----------------------------------------------------------------------------------

# Form fields handed to the estimator's parse_workload, and to the planner's Constraints.
WORKLOAD_FIELDS = (
    "model",
    "params_b",
    "task",
    "method",
    "precision",
    "optimizer",
    "batch_size",
    "seq_len",
    "gradient_checkpointing",
    "sharding",
    "tokens",
    "context_len",
    "concurrency",
)
PLAN_INITIAL = {
    "model": "llama-3-8b",
    "task": "finetune",
    "method": "lora",
    "precision": "bf16",
    "tokens": 100_000_000,
    "pricing": ["on_demand", "spot"],
    "objective": "cheapest",
}


def _preset_choices() -> list[tuple[str, str]]:
    presets = load_presets()
    return [(slug, arch.display_name or slug) for slug, arch in sorted(presets.items())]


class PlanForm(forms.Form):
    """A workload and its constraints; cleaning runs the estimator's own validation.

    Errors of ``parse_workload`` are attached to the field they name, so the page shows the same
    messages the API would, next to the input that caused them.
    """

    # Workload.
    model = forms.ChoiceField(label=_("Model preset"), required=False)
    params_b = forms.FloatField(
        label=_("or parameters (billions)"), required=False, widget=_number(min="0")
    )
    task = forms.ChoiceField(label=_("Task"), required=False, choices=_choices(TASKS, labels.TASKS))
    method = forms.ChoiceField(
        label=_("Method"),
        required=False,
        choices=_choices(METHODS, labels.METHODS, blank=("", _("Default for the task"))),
    )
    precision = forms.ChoiceField(
        label=_("Precision"),
        required=False,
        choices=[("", _("Default (bf16)")), *[(p, p) for p in PRECISIONS]],
    )
    optimizer = forms.ChoiceField(
        label=_("Optimizer"),
        required=False,
        choices=_choices(OPTIMIZERS, labels.OPTIMIZERS, blank=("", _("Default (AdamW)"))),
    )
    batch_size = forms.IntegerField(
        label=_("Batch size per GPU (sequences)"), required=False, widget=_number(min="1", step="1")
    )
    seq_len = forms.IntegerField(
        label=_("Sequence length (tokens)"), required=False, widget=_number(min="1", step="1")
    )
    gradient_checkpointing = forms.ChoiceField(
        label=_("Gradient checkpointing"),
        required=False,
        choices=_choices(CHECKPOINTING, labels.CHECKPOINTING, blank=("", _("Default"))),
    )
    sharding = forms.ChoiceField(
        label=_("Sharding"),
        required=False,
        choices=[("", labels.SHARDING[""]), *_choices(SHARDINGS, labels.SHARDING)],
    )
    tokens = forms.FloatField(
        label=_("Training tokens"),
        required=False,
        widget=_number(min="0"),
        help_text=_("For time and cost; 1e9 is a billion."),
    )
    context_len = forms.IntegerField(
        label=_("Context length (inference, tokens)"),
        required=False,
        widget=_number(min="1", step="1"),
    )
    concurrency = forms.IntegerField(
        label=_("Concurrent sequences (inference)"),
        required=False,
        widget=_number(min="1", step="1"),
    )
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
        max_value=100_000,
        widget=_number(min="1", step="1"),
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
    include_stale = forms.ChoiceField(
        label=_("Include stale prices"), required=False, choices=YES_NO
    )
    objective = forms.ChoiceField(
        label=_("Rank by"), required=False, choices=_choices(OBJECTIVES, labels.OBJECTIVES)
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["model"].choices = [("", _("(none: give parameters)")), *_preset_choices()]
        options = price_filter_options()
        self.fields["providers"].choices = options["providers"]
        self.fields["gpus"].choices = options["gpus"]
        self.workload: Workload | None = None

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        raw = {
            name: data[name]
            for name in WORKLOAD_FIELDS
            if name in data and data[name] not in (None, "")
        }
        failed = set(self.errors)
        try:
            workload = parse_workload(raw, load_presets())
        except WorkloadError as exc:
            for name, messages in exc.errors.items():
                if name in failed or (name == "model" and "params_b" in failed):
                    continue  # the field's own message already says what is wrong
                field = name if name in self.fields else None
                for message in messages:
                    self.add_error(field, message)
        else:
            if not failed:
                self.workload = workload
        return data

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
        return self.cleaned_data.get("objective") or "cheapest"
