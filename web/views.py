"""Pages for people: the price browser, the planner, GPU and provider pages.

Views are thin: a form validates the query string, selectors read, ``web.charts`` draws.
Everything renders on the server; no page needs JavaScript or anything outside this service.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from typing import Any, cast

from django.core.paginator import Paginator
from django.forms import ChoiceField
from django.http import (
    HttpRequest,
    HttpResponse,
    HttpResponsePermanentRedirect,
    HttpResponseRedirect,
    JsonResponse,
    QueryDict,
    StreamingHttpResponse,
)
from django.shortcuts import render
from django.template import loader
from django.templatetags.static import static
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import get_language
from django.utils.translation import gettext as _
from django.views.decorators.http import require_safe
from drf_spectacular.views import SpectacularRedocView

from catalog.pricing import PricingModel
from catalog.suggest import close_names
from sizing import selectors as sizing_selectors
from sizing.messages import DEFAULT_LANGUAGE, RejectionCode, language_of
from sizing.planner import DEFAULT_MAX_GPUS, Constraints

from . import charts, labels, plans, selectors
from .forms import PLAN_INITIAL, WORKLOAD_FIELDS, GPUListForm, PlanForm, PriceBrowseForm
from .templatetags import atlas as atlas_tags

PAGE_SIZE = 100
# The planner ranks this many candidates for the scatter; the table shows the first PLAN_ROWS.
PLAN_CANDIDATES = 200
PLAN_ROWS = 20


def _message_language() -> str:
    """The planner's message language for the page's (reasons, warnings, advice in Chinese on a
    Chinese page)."""
    return language_of(get_language()) or DEFAULT_LANGUAGE


def _for_both_widths(draw: Callable[..., str], *args: Any, **kwargs: Any) -> str:
    """A chart drawn twice, for a screen and for a phone (CSS shows one): SVG text scales with
    its drawing, so one drawing cannot be readable at both widths."""
    wide = draw(*args, **kwargs)
    if not wide:
        return ""
    narrow = draw(*args, narrow=True, **kwargs)
    return f'<div class="chart-wide">{wide}</div><div class="chart-narrow">{narrow}</div>'


# --- Error pages and API docs -----------------------------------------------------------------


def _not_found(
    request: HttpRequest, message: str = "", suggestions: list[tuple[str, str]] | None = None
) -> HttpResponse:
    """The styled 404 page, in the page's language (also under DEBUG, for unknown slugs), with
    links to the closest known names."""
    context = {"message": message, "suggestions": suggestions or []}
    return render(request, "404.html", context, status=404)


def page_not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """handler404: JSON under /api/ (clients read it), the styled page elsewhere."""
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": "Not found."}, status=404)
    return _not_found(request)  # Django's own message may list URL patterns: not shown


def server_error(request: HttpRequest) -> HttpResponse:
    """handler500: the styled page, rendered without the database or the request's context
    (whatever failed may fail again); JSON under /api/."""
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": "Server error."}, status=500)
    try:
        body = loader.get_template("500.html").render(
            {"request_id": request.META.get("HTTP_X_REQUEST_ID", "")}
        )
    except Exception:  # the error page must not fail in turn
        return HttpResponse("Server error", status=500, content_type="text/plain")
    return HttpResponse(body, status=500)


class ApiRedocView(SpectacularRedocView):
    """/api/redoc/ without the web fonts drf-spectacular's page loads from outside."""

    template_name = "web/redoc.html"


# --- Price browser --------------------------------------------------------------------------


@dataclass(frozen=True)
class PriceBasis:
    """How prices are shown: per GPU or per instance, per hour or per month (730 h)."""

    per_gpu: bool = True
    per_month: bool = False

    @property
    def title(self) -> str:
        if self.per_gpu:
            return _("USD per GPU-month") if self.per_month else _("USD per GPU-hour")
        return _("USD per instance-month") if self.per_month else _("USD per instance-hour")


def _column(key: str | None, title: str, sort: str, *, css: str = "") -> dict[str, Any]:
    """A header cell: label, the sort its link asks for, aria-sort, CSS class."""
    current = key is not None and sort.lstrip("-") == key
    descending = sort.startswith("-")
    return {
        "key": key,
        "title": title,
        "css": css,
        "next_sort": (key if descending else f"-{key}") if current else key,
        "aria_sort": ("descending" if descending else "ascending") if current else None,
    }


def _offer_columns(sort: str, extra: list[str]) -> list[dict[str, Any]]:
    """The offer table's columns: the key ones always, then the optional ones asked for."""
    columns = [
        _column("provider", _("Provider"), sort),
        _column("instance", _("Instance type"), sort),
        _column("region", _("Region"), sort),
        _column("gpu", _("GPUs"), sort, css="gpu-col"),
        _column(
            "on_demand",
            labels.label(labels.PRICING_MODELS, PricingModel.ON_DEMAND),
            sort,
            css="num",
        ),
        _column("spot", _("Spot"), sort, css="num"),
        _column("reserved", _("Reserved"), sort, css="num"),
        _column("observed", _("Observed (oldest in row)"), sort, css="observed-col"),
    ]
    optional = {
        "memory": _column("memory", _("GPU memory"), sort, css="num"),
        "vcpus": _column("vcpus", _("vCPUs"), sort, css="num"),
        "ram": _column("ram", _("RAM"), sort, css="num"),
        "network": _column("network", _("Network"), sort, css="num"),
        "interconnect": _column(None, _("Interconnect"), sort),
        "disk": _column(None, _("Local disk"), sort, css="num"),
        "listed": _column(None, _("Price as listed"), sort),
    }
    return columns + [optional[key] for key in extra if key in optional]


def _multi_summary(form: PriceBrowseForm | GPUListForm, name: str) -> str:
    """What a multi-select filter holds, in a few words: "Any", or the first names and a count."""
    chosen = [str(v) for v in (form[name].value() or [])]
    if not chosen:
        return _("Any")
    names: dict[str, str] = {}
    # Django normalises choices to a list of pairs when they are set; django-stubs type the
    # getter as widely as the setter (a mapping, a Choices class, a callable).
    choices = cast(ChoiceField, form.fields[name]).choices
    for value, label in choices:  # type: ignore[misc,union-attr]
        if isinstance(label, (list, tuple)):
            names.update({str(v): str(lbl) for v, lbl in label})
        else:
            names[str(value)] = str(label)
    shown = [names.get(v, v) for v in chosen[:2]]
    more = len(chosen) - len(shown)
    return ", ".join(shown) + (f" +{more}" if more else "")


# Optional columns that can be sorted by.
OPTIONAL_SORTED = ("memory", "vcpus", "ram", "network")


@require_safe
def favicon(request: HttpRequest) -> HttpResponse:
    """/favicon.ico : the pages' icon, for pages that do not name one (no 404 in the console)."""
    return HttpResponsePermanentRedirect(static("web/favicon.svg"))


def _unknown_params(request: HttpRequest, known: list[str]) -> list[dict[str, str]]:
    """The query parameters a page does not know (ignored, and said so on the page), each with
    its values and the closest known names."""
    return [
        {
            "name": name,
            "value": ", ".join(request.GET.getlist(name)),
            "near": ", ".join(close_names(name, known, limit=2)),
        }
        for name in request.GET
        if name not in known
    ]


@require_safe
def price_list(request: HttpRequest) -> HttpResponse:
    """/ : every current offer (instance type and region), its pricing models side by side,
    filtered, sorted and paginated, with each price's freshness."""
    form = PriceBrowseForm(request.GET)
    if form.is_valid():
        sort, extra = form.sort_key, form.columns
        if sort.lstrip("-") in OPTIONAL_SORTED:
            # The column sorted by is always shown, first after the key columns, so that it is
            # inside the table's box at 1366 px however many columns were added.
            extra = [sort.lstrip("-"), *(key for key in extra if key != sort.lstrip("-"))]
        basis = PriceBasis(per_gpu=form.per_gpu, per_month=form.per_month)
        rows = selectors.offer_rows(filters=form.filter_data(), sort=sort, per_gpu=form.per_gpu)
        status = 200
    else:
        sort, extra, basis, status = selectors.DEFAULT_OFFER_SORT, [], PriceBasis(), 400
        rows = selectors.OfferRowList([])
    page = Paginator(rows, PAGE_SIZE).get_page(request.GET.get("page"))
    context = {
        "form": form,
        "page": page,
        "unknown_params": _unknown_params(request, [*form.fields, "page"]),
        "columns": _offer_columns(sort, extra),
        "extra": extra,
        "sort_key": sort.lstrip("-"),
        "more_filters_open": any(
            request.GET.get(name)
            for name in (
                "min_gpu_memory_gib",
                "mainland_china",
                "freshness",
                "min_price",
                "max_price",
            )
        )
        or any(form[name].errors for name in ("min_gpu_memory_gib", "min_price", "max_price")),
        "multi_fields": [(form[name], _multi_summary(form, name)) for name in form.MULTI_FIELDS],
        "basis": basis,
        "sort_title": next((c["title"] for c in _offer_columns(sort, extra) if c["aria_sort"]), ""),
        "observed_from": rows.oldest_observed_at,
        "observed_to": rows.newest_observed_at,
        "stale_after_days": selectors.stale_days(),
        "shelf": selectors.shelf_lives(),
    }
    return render(request, "web/prices.html", context, status=status)


CSV_COLUMNS = (
    "provider",
    "region",
    "instance_type",
    "gpu",
    "gpu_count",
    "gpu_memory_gib",
    "pricing_model",
    "amount",
    "currency",
    "unit",
    "usd_per_hour",
    "usd_per_gpu_hour",
    "observed_at",
    "stale",
    "source",
    "source_url",
)


class _Echo:
    """A file-like object whose write returns the line, for streaming csv.writer output."""

    def write(self, value: str) -> str:
        return value


@require_safe
def price_csv(request: HttpRequest) -> HttpResponse | StreamingHttpResponse:
    """/prices.csv : the filtered, sorted set of the browser as CSV (API key names, no paging)."""
    form = PriceBrowseForm(request.GET)
    if not form.is_valid():
        return HttpResponse(form.errors.as_text(), status=400, content_type="text/plain")
    prices = selectors.price_browse(filters=form.filter_data(), sort=form.price_sort_key)
    writer = csv.writer(_Echo())

    def rows():
        yield writer.writerow(CSV_COLUMNS)
        for price in prices.iterator(chunk_size=500):
            instance = price.instance_type
            yield writer.writerow(
                [
                    instance.provider.slug,
                    price.region.code,
                    instance.name,
                    instance.gpu.slug,
                    instance.gpu_count.normalize(),
                    instance.gpu.memory_gib,
                    price.pricing_model,
                    price.amount.normalize(),
                    price.currency,
                    price.unit,
                    price.usd_per_hour.normalize(),
                    price.usd_per_gpu_hour.normalize(),
                    price.observed_at.isoformat(),
                    "true" if price.is_stale else "false",
                    price.source,
                    price.source_url,
                ]
            )

    response = StreamingHttpResponse(rows(), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = 'attachment; filename="gpu-atlas-prices.csv"'
    return response


# --- Instance types and compare ------------------------------------------------------------


@require_safe
def instance_detail(request: HttpRequest, provider: str, name: str) -> HttpResponse:
    """/instances/<provider>/<name> : the machine's host specs and its prices in every region."""
    instance = selectors.instance_get(provider=provider, name=name)
    if instance is None:
        return _not_found(
            request,
            _("No instance type %(name)s at %(provider)s.") % {"name": name, "provider": provider},
        )
    rows = selectors.instance_offer_rows(instance=instance)
    context = {
        "instance": instance,
        "rows": rows,
        "basis": PriceBasis(per_gpu=request.GET.get("per") != "instance"),
        "stale_after_days": selectors.stale_days(),
        "shelf": selectors.shelf_lives(),
    }
    return render(request, "web/instance_detail.html", context)


# Most offers one compare page weighs (a wider table stops being a comparison).
COMPARE_MAX = 8


def _compare_targets(values: list[str]) -> tuple[list[tuple[str, str]], list[str]]:
    """(provider, instance name) pairs from ``provider/name`` values, and the errors found."""
    keys: list[tuple[str, str]] = []
    errors: list[str] = []
    for value in values:
        provider, _sep, name = value.partition("/")
        if not name or selectors.instance_get(provider=provider, name=name) is None:
            errors.append(_("No instance type %(value)s.") % {"value": value})
        elif (provider, name) not in keys:
            keys.append((provider, name))
    if len(keys) > COMPARE_MAX:
        errors.append(_("Compare at most %(count)s instance types.") % {"count": COMPARE_MAX})
    return keys, errors


def _cheapest(rows: list[selectors.OfferRow], pricing_model: str) -> selectors.OfferRow | None:
    """The first of ``rows`` with the lowest USD per hour under ``pricing_model``, or None."""
    best: selectors.OfferRow | None = None
    for row in rows:
        price = row.prices.get(pricing_model)
        if price is not None and (
            best is None or price.usd_per_hour < best.prices[pricing_model].usd_per_hour
        ):
            best = row
    return best


def _why_not_text(row: dict[str, Any]) -> str:
    """Why a compared offer does not fit, in words: the rejection's label, then where (the
    planner's ``why_not`` starts with the bare code)."""
    message = row.get("why_not_message") or {}
    params = message.get("params") or {}
    reason = params.get("reason")
    if not reason:
        return str(row.get("why_not") or "")
    example = (params.get("example") or {}).get("params") or {}
    where = [str(example[part]) for part in ("offer_region",) if example.get(part)]
    if example.get("offer_pricing_model"):
        where.append(labels.label(labels.PRICING_MODELS, example["offer_pricing_model"]))
    text = labels.label(labels.REJECTIONS, reason)
    text = f"{text} ({', '.join(where)})" if where else text
    if example.get("observed_on") and example.get("shelf_life_days"):
        # A stale price: when it was observed, its shelf life, and the form's way to weigh it.
        text += ": " + _(
            "observed %(date)s, past its %(days)s-day shelf life; set “%(field)s” to Yes to "
            "weigh it (flagged stale)"
        ) % {
            "date": example["observed_on"],
            "days": example["shelf_life_days"],
            "field": PlanForm.base_fields["include_stale"].label,
        }
    return text


@require_safe
def compare(request: HttpRequest) -> HttpResponse:
    """/compare?offer=<provider>/<name>&... : instance types side by side, with the planner's
    best plan for one workload on each (the service behind /api/compare)."""
    keys, errors = _compare_targets(request.GET.getlist("offer"))
    bound = any(name in request.GET for name in PlanForm.base_fields)
    data = request.GET.copy()
    if not any(name in request.GET for name in WORKLOAD_FIELDS):
        # The plan page's default workload; constraints not given are the API's defaults (its
        # pricing models, its stale-price rule), so the page says what /api/compare says.
        for name, value in PLAN_INITIAL.items():
            if name in WORKLOAD_FIELDS:
                data.setlist(name, value if isinstance(value, list) else [value])
    form = PlanForm(data)
    answer = None
    if keys and not errors and form.is_valid() and form.workload is not None:
        targets = [{"provider": p, "instance_type": n} for p, n in keys]
        answer = sizing_selectors.compare(
            form.workload, targets, form.constraints(), lang=_message_language()
        )
    offers = selectors.offer_rows_for(keys=keys)
    native = selectors.provider_native_rates()
    columns = []
    for index, key in enumerate(keys):
        rows = offers.get(key, [])
        instance = (
            rows[0].instance if rows else selectors.instance_get(provider=key[0], name=key[1])
        )
        plan_row = answer["rows"][index] if answer else None
        if plan_row and plan_row.get("fits"):
            _add_native(plan_row, native)
            plan_row["pricing_label"] = labels.label(
                labels.PRICING_MODELS, plan_row["pricing_model"]
            )
        elif plan_row:
            plan_row = {**plan_row, "why_not_text": _why_not_text(plan_row)}
        columns.append(
            {
                "key": f"{key[0]}/{key[1]}",
                "instance": instance,
                "rows": rows,
                "observed_from": min((r.oldest_observed_at for r in rows), default=None),
                "observed_to": max((r.newest_observed_at for r in rows), default=None),
                "any_stale": any(r.any_stale for r in rows),
                "best": _cheapest(rows, PricingModel.ON_DEMAND),
                "cheapest_spot": _cheapest(rows, PricingModel.SPOT),
                "plan": plan_row,
            }
        )
    context = {
        "form": form,
        "columns": columns,
        "errors": errors,
        "answer": answer,
        "basis": PriceBasis(),
        "compare_max": COMPARE_MAX,
    }
    status = 400 if errors or (bound and form.errors) else 200
    return render(request, "web/compare.html", context, status=status)


# --- Plan ---

# Lifting "At most GPUs" for a nearest miss: this many times the default (128).
MAX_GPUS_RELAXED = DEFAULT_MAX_GPUS * 8


# Rejections a single form field can lift, the field, and the constraint change that lifts it.
RELAXABLE: dict[str, tuple[str, dict[str, Any]]] = {
    RejectionCode.OVER_MAX_TOTAL_USD: ("max_total_usd", {"max_total_usd": None}),
    RejectionCode.OVER_MAX_HOURS: ("max_hours", {"max_hours": None}),
    RejectionCode.OVER_MAX_USD_PER_HOUR: ("max_usd_per_hour", {"max_usd_per_hour": None}),
    RejectionCode.OVER_MAX_GPUS: ("max_gpus", {"max_gpus": MAX_GPUS_RELAXED}),
    RejectionCode.NEEDS_MULTI_NODE: ("allow_multi_node", {"allow_multi_node": True}),
    RejectionCode.STALE_PRICE: ("include_stale", {"include_stale": True}),
    RejectionCode.CONSUMER_GPU_EXCLUDED: ("datacenter_only", {"datacenter_only": False}),
    RejectionCode.BELOW_MIN_GPU_MEMORY: ("min_gpu_memory_gb", {"min_gpu_memory_gb": None}),
    RejectionCode.DOES_NOT_FIT_MEMORY_HIGH: ("fit_on", {"fit_on": "point"}),
}
# Nearest misses shown per constraint to relax.
NEAREST_MISSES = 3


def _field_label(form: PlanForm, name: str) -> str:
    return str(form.fields[name].label)


def _choice_text(form: PlanForm, name: str, value: str) -> str:
    """What the form shows for ``value`` of field ``name``: its choice's label, Yes or No."""
    choices = dict(getattr(form.fields[name], "choices", None) or ())
    if value in choices:
        return str(choices[value])
    return str({"true": _("Yes"), "false": _("No")}.get(value, value))


def _in_form_words(text: str, form: PlanForm) -> str:
    """Planner text names API fields and values (``max_total_usd``, ``fit_on=point``); the page
    names the form's labels and the choices as the form shows them."""
    for name in sorted(form.fields, key=len, reverse=True):
        if "_" in name and name in text:
            label = _field_label(form, name)
            text = re.sub(
                rf"\b{name}=([\w.-]+)", partial(_setting_in_words, form, name, label), text
            )
            text = re.sub(rf"\b{name}\b", partial(_quoted, label), text)
    return text


def _setting_in_words(form: PlanForm, name: str, label: str, match: re.Match[str]) -> str:
    """``name=value`` as the form says it: the quoted label, then the value's choice text."""
    return f"“{label}”: {_choice_text(form, name, match.group(1))}"


def _quoted(label: str, _match: re.Match[str]) -> str:
    """The label in quotes, taken literally (a replacement function, so no escapes apply)."""
    return f"“{label}”"


def _add_native(item: dict[str, Any], native: dict[str, tuple[str, float]]) -> None:
    """A plan's price per hour and total in its provider's own currency too (CNY beside USD for
    the mainland clouds), at the newest rate, as the price browser shows the listed figure."""
    rate = native.get(item["provider"])
    item["native_per_hour"] = atlas_tags.native_usd(item.get("usd_per_hour"), rate)
    item["native_total"] = atlas_tags.native_usd(item.get("est_total_usd"), rate)


def _named(plans: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Copies of the plans with display names (the answer itself may be a cached object)."""
    providers = selectors.provider_names()
    gpus = selectors.gpu_names()
    native = selectors.provider_native_rates()
    out = []
    for item in plans:
        item = dict(item)
        _add_native(item, native)
        item["provider_name"] = providers.get(item["provider"], item["provider"])
        item["gpu_name"] = gpus.get(item["gpu"], (item["gpu"], None))[0]
        item["pricing_label"] = labels.label(labels.PRICING_MODELS, item["pricing_model"])
        out.append(item)
    return out


def _setting_text(name: str, value: Any) -> str | None:
    """A constraint as the reader set it: $1,000, 48 h, Yes/No; None when left empty."""
    if value in (None, "", [], ()):
        return None
    if name in ("max_total_usd", "max_usd_per_hour"):
        return atlas_tags.usd(value)
    if name == "max_hours":
        return atlas_tags.hours(value)
    if value in ("true", "false"):
        return str(_("Yes") if value == "true" else _("No"))
    if name == "fit_on":
        return str(_("the high end of the range") if value == "high" else _("the estimate"))
    return atlas_tags.num(value, 1)


def _nearest_misses(
    form: PlanForm, answer: dict[str, Any], constraints: Constraints
) -> list[dict[str, Any]]:
    """When nothing fits: for each constraint that rejected candidates, the best plans once it is
    lifted (the planner run again without it), named by the form's label."""
    out: list[dict[str, Any]] = []
    workload = form.workload
    if workload is None:  # a valid form always has one
        return out
    rejected = sorted(answer["rejected"].items(), key=lambda kv: -kv[1]["count"])
    for reason, entry in rejected:
        if reason not in RELAXABLE:
            continue
        field_name, change = RELAXABLE[reason]
        relaxed = replace(constraints, **change)
        again = sizing_selectors.recommend(
            workload,
            relaxed,
            objective=form.ranking(),
            limit=NEAREST_MISSES,
            lang=_message_language(),
        )
        if not again["recommendations"]:
            continue
        out.append(
            {
                "field": field_name,
                "label": _field_label(form, field_name),
                "reason": labels.label(labels.REJECTIONS, reason),
                "count": entry["count"],
                "value": _setting_text(field_name, form.cleaned_data.get(field_name)),
                "plans": _named(again["recommendations"]),
            }
        )
    return out


def _plan_context(
    answer: dict[str, Any], form: PlanForm, constraints: Constraints
) -> dict[str, Any]:
    """Table rows, charts, rejections and nearest misses of a recommend answer, for display."""
    gpus = selectors.gpu_names()
    shown = plans.plausible(_named(answer["recommendations"]), answer["objective"])
    recommendations = shown.plans
    for position, item in enumerate(recommendations, start=1):
        item["position"] = position
    timed = any(item["est_hours"] and item["est_total_usd"] for item in recommendations)
    points = [
        charts.ScatterPoint(
            x=item["est_hours"],
            y=item["est_total_usd"],
            group=item["pricing_label"],
            label=_(
                "#%(rank)s %(provider)s %(instance)s (%(region)s, %(pricing)s): "
                "%(hours)s h, $%(usd)s"
            )
            % {
                "rank": item["position"],
                "provider": item["provider_name"],
                "instance": item["instance_type"],
                "region": item["region"],
                "pricing": item["pricing_label"],
                "hours": f"{item['est_hours']:,.1f}",
                "usd": f"{item['est_total_usd']:,.2f}",
            },
            highlight=item["position"] <= PLAN_ROWS,
        )
        for item in recommendations
        if item["est_hours"] and item["est_total_usd"]
    ]
    scatter = _for_both_widths(
        charts.scatter_svg,
        points,
        title=_("Estimated cost against time of every candidate"),
        desc=_(
            "%(count)s candidates; larger dots are the %(rows)s in the table, colours are "
            "pricing models."
        )
        % {"count": len(points), "rows": min(PLAN_ROWS, len(points))},
        x_label=_("Estimated time (hours)"),
        y_label=_("Estimated total cost (USD)"),
        log_note=_("log scale"),
    )
    estimate = answer["estimate"]
    top_gpu = gpus.get(estimate.get("gpu") or "") if recommendations else None
    span = estimate.get("memory_per_gpu_gib_range")
    memory_bar = _for_both_widths(
        charts.stacked_bar_svg,
        [
            charts.BarSegment(labels.label(labels.BREAKDOWN, key), value)
            for key, value in estimate["breakdown"].items()
        ],
        title=_("Memory per GPU, by what uses it"),
        desc=_("%(total).1f GiB per GPU in all") % {"total": estimate["memory_per_gpu_gib"]},
        unit="GiB",
        capacity=top_gpu[1] if top_gpu else None,
        capacity_label=(
            _("%(gpu)s: %(memory)s GiB") % {"gpu": top_gpu[0], "memory": f"{top_gpu[1]:g}"}
            if top_gpu
            else ""
        ),
        band=tuple(span) if span else None,
        band_label=(
            _("Range %(range)s: the errors of comparable measurements (5th to 95th percentile)")
            % {"range": atlas_tags.gib_range(span)}
            if span
            else ""
        ),
    )
    rejected = [
        {
            "reason": labels.label(labels.REJECTIONS, reason),
            "code": reason,
            "count": entry["count"],
            "examples": [_in_form_words(example, form) for example in entry["examples"]],
        }
        for reason, entry in sorted(answer["rejected"].items(), key=lambda kv: -kv[1]["count"])
    ]
    objective = answer["objective"]
    if objective != "cheapest_hourly" and not timed:
        ranked_by = _("price per hour (no run length to total)")
    else:
        ranked_by = labels.label(labels.OBJECTIVES, objective)
    return {
        "answer": answer,
        "ranked_by": ranked_by,
        "timed": timed,
        "advice": [_in_form_words(line, form) for line in answer["advice"]],
        "rows": recommendations[:PLAN_ROWS],
        "candidate_count": len(answer["recommendations"]),
        "shown_count": len(recommendations),
        "shown": shown,
        "candidates_capped": len(answer["recommendations"]) >= PLAN_CANDIDATES,
        "scatter": scatter,
        "memory_bar": memory_bar,
        "breakdown": [
            (labels.label(labels.BREAKDOWN, key), value)
            for key, value in estimate["breakdown"].items()
            if value
        ],
        "top_gpu": top_gpu,
        "fit_on": estimate.get("fit_on"),
        "rejected": rejected,
        "misses": _nearest_misses(form, answer, constraints) if not recommendations else [],
        "inference": form.workload is not None and form.workload.task == "inference",
    }


# Query names /plan takes besides its form's fields: ``lang`` (an API parameter the pages ignore,
# docs/web.md "Language") and a CSRF token a form may carry; the submit button sends no name.
PLAN_PARAMS_IGNORED = ("lang", "csrfmiddlewaretoken")


@require_safe
def plan(request: HttpRequest) -> HttpResponse:
    """/plan : a workload form; submitted, the ranked plans, a cost-time scatter, memory bar.

    A submitted form with empty fields is sent on to the same plan without them, so the link
    carries only what was filled in, and lands on the results.
    """
    bound = any(name in request.GET for name in PlanForm.base_fields)
    if bound and any(not v.strip() for values in request.GET.lists() for v in values[1]):
        query = QueryDict(mutable=True)
        for name, values in request.GET.lists():
            kept = [v for v in values if v.strip()]
            if kept:
                query.setlist(name, kept)
        return HttpResponseRedirect(f"{request.path}?{query.urlencode()}#results")
    form = PlanForm(request.GET if bound else None, initial=PLAN_INITIAL)
    # A name the form does not know is a 400 naming it, as GET /api/recommend answers.
    unknown = _unknown_params(request, [*PlanForm.base_fields, *PLAN_PARAMS_IGNORED])
    context: dict[str, Any] = {
        "form": form,
        "bound": bound,
        "unknown_params": unknown,
        # Every workload input sizing/inputs.py puts on the page, in its order.
        "workload_fields": [form[name] for name in WORKLOAD_FIELDS],
    }
    status = 200
    if unknown:
        status = 400
    elif bound and form.is_valid() and form.workload is not None:
        constraints = form.constraints()
        answer = sizing_selectors.recommend(
            form.workload,
            constraints,
            objective=form.ranking(),
            limit=PLAN_CANDIDATES,
            lang=_message_language(),
        )
        context.update(_plan_context(answer, form, constraints))
    elif bound:
        status = 400
    return render(request, "web/plan.html", context, status=status)


# --- GPUs -----------------------------------------------------------------------------------


@require_safe
def gpu_list(request: HttpRequest) -> HttpResponse:
    """/gpus : every GPU with memory, throughput and the cheapest current prices, filtered and
    sorted from the query string."""
    form = GPUListForm(request.GET)
    if form.is_valid():
        sort = form.cleaned_data["sort"]
        gpus, status = selectors.gpu_index(filters=form.cleaned_data, sort=sort), 200
    else:
        sort, gpus, status = "", selectors.gpu_index().none(), 400
    columns = [
        _column("name", _("GPU"), sort),
        _column("architecture", _("Architecture"), sort),
        _column("memory", _("Memory"), sort, css="num"),
        _column("bandwidth", _("Memory bandwidth"), sort, css="num"),
        _column("bf16", _("BF16 (dense)"), sort, css="num"),
        _column("fp8", _("FP8 (dense)"), sort, css="num"),
        _column("segment", _("Segment"), sort),
        _column("instances", _("Instance types"), sort, css="num"),
        _column("on_demand", _("From, on demand"), sort, css="num"),
        _column("spot", _("From, spot"), sort, css="num"),
    ]
    context = {
        "gpus": gpus,
        "form": form,
        "columns": columns,
        "filtered": bool(request.GET),
        # Drop-down lists of checkboxes, each summed up by the names chosen (not their codes).
        "multi_fields": [
            (form[name], _multi_summary(form, name)) for name in ("vendor", "segment")
        ],
        "sort_title": next((c["title"] for c in columns if c["aria_sort"]), ""),
    }
    return render(request, "web/gpu_list.html", context, status=status)


def _gpu_specs(gpu) -> list[tuple[str, Any, str]]:
    """(label, value, unit) rows of a GPU's datasheet, leaving out what the part lacks."""
    rows = [
        (_("Vendor"), gpu.get_vendor_display(), ""),
        (_("Architecture"), gpu.architecture, ""),
        (_("Released"), gpu.release_year, ""),
        (_("Memory"), gpu.memory_gib, "GiB"),
        (_("Memory type"), gpu.memory_type, ""),
        (_("Memory bandwidth"), gpu.memory_bandwidth_gb_s, "GB/s"),
        (_("FP32"), gpu.fp32_tflops, "TFLOPS"),
        (_("TF32 (dense)"), gpu.tf32_tflops, "TFLOPS"),
        (_("BF16 (dense)"), gpu.bf16_tflops, "TFLOPS"),
        (_("FP16 (dense)"), gpu.fp16_tflops, "TFLOPS"),
        (_("FP8 (dense)"), gpu.fp8_tflops, "TFLOPS"),
        (_("INT8 (dense)"), gpu.int8_tops, "TOPS"),
        (_("Power (TDP)"), gpu.tdp_w, "W"),
        (_("Form factor"), gpu.get_form_factor_display(), ""),
        (_("NVLink per GPU (both directions)"), gpu.nvlink_bandwidth_gb_s, "GB/s"),
        (_("ECC memory"), _("Yes") if gpu.ecc else _("No"), ""),
        (_("Segment"), labels.label(labels.SEGMENTS, gpu.segment), ""),
        (
            _("Datacenter use allowed"),
            _("Yes") if gpu.datacenter_use_allowed else _("No (driver licence)"),
            "",
        ),
    ]
    return [row for row in rows if row[1] not in (None, "")]


@require_safe
def gpu_detail(request: HttpRequest, slug: str) -> HttpResponse:
    """/gpus/<slug> : datasheet with sources, instances carrying it, price history by provider."""
    gpu = selectors.gpu_get(slug=slug)
    if gpu is None:
        names = selectors.gpu_names()
        return _not_found(
            request,
            _("No GPU %(slug)s.") % {"slug": slug},
            [(reverse("web:gpu", args=[c]), names[c][0]) for c in close_names(slug, names)],
        )
    models = selectors.gpu_history_pricing_models(gpu=gpu)
    pricing_model = request.GET.get("pricing_model")
    if pricing_model not in models:
        on_demand = PricingModel.ON_DEMAND
        pricing_model = on_demand if on_demand in models or not models else models[0]
    pricing_label = labels.label(labels.PRICING_MODELS, pricing_model)
    history = selectors.gpu_price_history(gpu=gpu, pricing_model=pricing_model)
    chart = _for_both_widths(
        charts.step_lines_svg,
        [charts.Series(name, points) for name, points in history.items()],
        title=_("Cheapest %(pricing)s price per GPU-hour of %(gpu)s, by provider")
        % {"pricing": pricing_label, "gpu": gpu.name},
        desc=_("One line per provider: the lowest listed USD per GPU-hour over time.")
        + f" ({len(history)})",
        y_label=_("USD per GPU-hour"),
        until=timezone.now(),
        value_label=lambda value: f"${value:.3f}",
    )
    context = {
        "gpu": gpu,
        "specs": _gpu_specs(gpu),
        "instances": selectors.gpu_instance_types(gpu=gpu),
        "chart": chart,
        "history_models": [(m, labels.label(labels.PRICING_MODELS, m)) for m in models],
        "pricing_model": pricing_model,
        "pricing_label": pricing_label,
        "history": history,
    }
    return render(request, "web/gpu_detail.html", context)


# --- Providers ------------------------------------------------------------------------------


@require_safe
def provider_list(request: HttpRequest) -> HttpResponse:
    """/providers : every provider with price counts, stale counts and last refresh."""
    context = {
        "providers": selectors.provider_index(),
        "stale_after_days": selectors.stale_days(),
        "shelf": selectors.shelf_lives(),
    }
    return render(request, "web/provider_list.html", context)


@require_safe
def provider_detail(request: HttpRequest, slug: str) -> HttpResponse:
    """/providers/<slug> : regions with their freshness, and the last refresh runs."""
    provider = selectors.provider_get(slug=slug)
    if provider is None:
        names = selectors.provider_names()
        return _not_found(
            request,
            _("No provider %(slug)s.") % {"slug": slug},
            [(reverse("web:provider", args=[c]), names[c]) for c in close_names(slug, names)],
        )
    context = {
        "provider": provider,
        "regions": selectors.provider_regions(provider=provider),
        "runs": selectors.provider_scrape_runs(provider=provider),
        "instance_count": selectors.provider_instance_count(provider=provider),
        "stale_after_days": selectors.stale_days(),
        "shelf": selectors.shelf_lives(),
    }
    return render(request, "web/provider_detail.html", context)
