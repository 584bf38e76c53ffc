"""Pages for people: the price browser, the planner, GPU and provider pages.

Views are thin: a form validates the query string, selectors read, ``web.charts`` draws.
Everything renders on the server; no page needs JavaScript or anything outside this service.
"""

from __future__ import annotations

import csv
from typing import Any

from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_safe

from sizing import selectors as sizing_selectors

from . import charts, labels, selectors
from .forms import PLAN_INITIAL, PlanForm, PriceBrowseForm

PAGE_SIZE = 100
# The planner ranks this many candidates for the scatter; the table shows the first PLAN_ROWS.
PLAN_CANDIDATES = 200
PLAN_ROWS = 20


# --- Price browser --------------------------------------------------------------------------


def _price_columns(sort: str) -> list[dict[str, Any]]:
    """Header cells of the price table: label, the sort their link asks for, aria-sort."""
    columns = [
        ("provider", _("Provider")),
        ("region", _("Region")),
        ("instance", _("Instance type")),
        ("gpu", _("GPU")),
        ("gpus", _("GPUs")),
        ("memory", _("GPU memory")),
        ("pricing", _("Pricing")),
        (None, _("Price as listed")),
        ("usd_per_hour", _("USD per hour")),
        ("usd_per_gpu_hour", _("USD per GPU-hour")),
        ("observed", _("Observed")),
    ]
    out = []
    for key, title in columns:
        current = key is not None and sort.lstrip("-") == key
        descending = sort.startswith("-")
        out.append(
            {
                "key": key,
                "title": title,
                "next_sort": (key if descending else f"-{key}") if current else key,
                "aria_sort": ("descending" if descending else "ascending") if current else None,
            }
        )
    return out


@require_safe
def price_list(request: HttpRequest) -> HttpResponse:
    """/ : every current price, filtered, sorted and paginated, with each price's freshness."""
    form = PriceBrowseForm(request.GET)
    if form.is_valid():
        prices = selectors.price_browse(filters=form.filter_data(), sort=form.sort_key)
        sort, per_gpu, status = form.sort_key, form.per_gpu, 200
    else:
        prices = selectors.price_browse(filters={}).none()
        sort, per_gpu, status = selectors.DEFAULT_PRICE_SORT, True, 400
    page = Paginator(prices, PAGE_SIZE).get_page(request.GET.get("page"))
    context = {
        "form": form,
        "page": page,
        "columns": _price_columns(sort),
        "per_gpu": per_gpu,
        "stale_after_days": selectors.stale_days(),
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
def price_csv(request: HttpRequest) -> HttpResponse:
    """/prices.csv : the filtered, sorted set of the browser as CSV (API key names, no paging)."""
    form = PriceBrowseForm(request.GET)
    if not form.is_valid():
        return HttpResponse(form.errors.as_text(), status=400, content_type="text/plain")
    prices = selectors.price_browse(filters=form.filter_data(), sort=form.sort_key)
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


# --- Plan -----------------------------------------------------------------------------------


def _plan_context(answer: dict[str, Any]) -> dict[str, Any]:
    """Table rows, charts and rejections of a recommend answer, with display names."""
    providers = selectors.provider_names()
    gpus = selectors.gpu_names()
    recommendations = answer["recommendations"]
    for item in recommendations:
        item["provider_name"] = providers.get(item["provider"], item["provider"])
        item["gpu_name"] = gpus.get(item["gpu"], (item["gpu"], None))[0]
        item["pricing_label"] = labels.label(labels.PRICING_MODELS, item["pricing_model"])
    points = [
        charts.ScatterPoint(
            x=item["est_hours"],
            y=item["est_total_usd"],
            group=item["pricing_label"],
            label=_(
                "#%(rank)s %(provider)s %(instance)s (%(region)s, %(pricing)s): "
                "%(hours).1f h, $%(usd).2f"
            )
            % {
                "rank": item["rank"],
                "provider": item["provider_name"],
                "instance": item["instance_type"],
                "region": item["region"],
                "pricing": item["pricing_label"],
                "hours": item["est_hours"],
                "usd": item["est_total_usd"],
            },
            highlight=item["rank"] <= PLAN_ROWS,
        )
        for item in recommendations
        if item["est_hours"] and item["est_total_usd"]
    ]
    scatter = charts.scatter_svg(
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
    top_gpu = gpus.get(estimate.get("gpu") or "")
    memory_bar = charts.stacked_bar_svg(
        [
            charts.BarSegment(labels.label(labels.BREAKDOWN, key), value)
            for key, value in estimate["breakdown"].items()
        ],
        title=_("Memory per GPU, by what uses it"),
        desc=_("%(total).1f GiB per GPU in all") % {"total": estimate["memory_per_gpu_gib"]},
        unit="GiB",
        capacity=top_gpu[1] if top_gpu else None,
        capacity_label=(
            _("%(gpu)s: %(memory)g GiB") % {"gpu": top_gpu[0], "memory": top_gpu[1]}
            if top_gpu
            else ""
        ),
    )
    rejected = [
        {
            "reason": labels.label(labels.REJECTIONS, reason),
            "code": reason,
            "count": entry["count"],
            "examples": entry["examples"],
        }
        for reason, entry in sorted(answer["rejected"].items(), key=lambda kv: -kv[1]["count"])
    ]
    return {
        "answer": answer,
        "objective": labels.label(labels.OBJECTIVES, answer["objective"]),
        "rows": recommendations[:PLAN_ROWS],
        "candidate_count": len(recommendations),
        "candidates_capped": len(recommendations) >= PLAN_CANDIDATES,
        "scatter": scatter,
        "memory_bar": memory_bar,
        "breakdown": [
            (labels.label(labels.BREAKDOWN, key), value)
            for key, value in estimate["breakdown"].items()
            if value
        ],
        "top_gpu": top_gpu,
        "rejected": rejected,
    }


@require_safe
def plan(request: HttpRequest) -> HttpResponse:
    """/plan : a workload form; submitted, the ranked plans, a cost-time scatter, memory bar."""
    bound = any(name in request.GET for name in PlanForm.base_fields)
    form = PlanForm(request.GET if bound else None, initial=PLAN_INITIAL)
    context: dict[str, Any] = {"form": form, "bound": bound}
    status = 200
    if bound and form.is_valid():
        answer = sizing_selectors.recommend(
            form.workload, form.constraints(), objective=form.ranking(), limit=PLAN_CANDIDATES
        )
        context.update(_plan_context(answer))
    elif bound:
        status = 400
    return render(request, "web/plan.html", context, status=status)


# --- GPUs -----------------------------------------------------------------------------------


@require_safe
def gpu_list(request: HttpRequest) -> HttpResponse:
    """/gpus : every GPU with memory, throughput and the cheapest current prices."""
    return render(request, "web/gpu_list.html", {"gpus": selectors.gpu_index()})


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
        raise Http404(_("No GPU %(slug)s.") % {"slug": slug})
    models = selectors.gpu_history_pricing_models(gpu=gpu)
    pricing_model = request.GET.get("pricing_model")
    if pricing_model not in models:
        pricing_model = "on_demand" if "on_demand" in models or not models else models[0]
    pricing_label = labels.label(labels.PRICING_MODELS, pricing_model)
    history = selectors.gpu_price_history(gpu=gpu, pricing_model=pricing_model)
    chart = charts.step_lines_svg(
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
    context = {"providers": selectors.provider_index(), "stale_after_days": selectors.stale_days()}
    return render(request, "web/provider_list.html", context)


@require_safe
def provider_detail(request: HttpRequest, slug: str) -> HttpResponse:
    """/providers/<slug> : regions with their freshness, and the last refresh runs."""
    provider = selectors.provider_get(slug=slug)
    if provider is None:
        raise Http404(_("No provider %(slug)s.") % {"slug": slug})
    context = {
        "provider": provider,
        "regions": selectors.provider_regions(provider=provider),
        "runs": selectors.provider_scrape_runs(provider=provider),
        "instance_count": selectors.provider_instance_count(provider=provider),
        "stale_after_days": selectors.stale_days(),
    }
    return render(request, "web/provider_detail.html", context)
