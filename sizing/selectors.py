"""Reads for sizing: catalog rows turned into the estimator's and planner's plain values."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import Any

from django.db.models import QuerySet
from django.utils import timezone

from catalog.models import GPU, Price
from catalog.querysets import stale_cutoff
from catalog.selectors import catalog_as_of

from .estimator import Estimate, GPUSpec, Workload, estimate
from .planner import Constraints, Offer, Plan, plan


def gpu_spec(gpu: GPU) -> GPUSpec:
    """The estimator's view of a catalog GPU."""
    return GPUSpec(
        slug=gpu.slug,
        memory_gib=gpu.memory_gib,
        memory_bandwidth_gb_s=gpu.memory_bandwidth_gb_s,
        fp32_tflops=gpu.fp32_tflops,
        tf32_tflops=gpu.tf32_tflops,
        bf16_tflops=gpu.bf16_tflops,
        fp16_tflops=gpu.fp16_tflops,
        fp8_tflops=gpu.fp8_tflops,
        int8_tops=gpu.int8_tops,
        architecture=gpu.architecture,
        vendor=gpu.vendor,
        nvlink_bandwidth_gb_s=gpu.nvlink_bandwidth_gb_s,
    )


def offer_queryset(constraints: Constraints) -> QuerySet[Price]:
    """Current prices inside the caller's scope (providers, regions, GPUs, pricing models).

    Rules the planner explains in ``rejected`` (staleness, datacenter use, memory) stay in Python.
    """
    qs = Price.objects.current().with_related().filter(pricing_model__in=constraints.pricing)
    if constraints.providers:
        qs = qs.filter(instance_type__provider__slug__in=constraints.providers)
    if constraints.regions:
        qs = qs.filter(region__code__in=constraints.regions)
    if constraints.countries:
        qs = qs.filter(region__country__in=constraints.countries)
    if constraints.mainland_china is not None:
        qs = qs.filter(region__mainland_china=constraints.mainland_china)
    if constraints.gpus:
        qs = qs.filter(instance_type__gpu__slug__in=constraints.gpus)
    return qs.filter(instance_type__is_active=True)


def offers_from_prices(
    prices: QuerySet[Price] | list[Price], *, now: datetime | None = None
) -> list[Offer]:
    """Planner offers from prices loaded with ``with_related()`` (no further queries)."""
    cutoff = stale_cutoff(now or timezone.now())
    specs: dict[int, GPUSpec] = {}
    offers = []
    for price in prices:
        instance = price.instance_type
        gpu = instance.gpu
        spec = specs.get(gpu.pk)
        if spec is None:
            spec = specs[gpu.pk] = gpu_spec(gpu)
        intra, inter = instance.interconnect_intra, instance.interconnect_inter
        offers.append(
            Offer(
                price_id=price.pk,
                provider=instance.provider.slug,
                provider_mainland_china=instance.provider.mainland_china,
                compliance_notes=instance.provider.compliance_notes,
                region=price.region.code,
                country=price.region.country,
                region_mainland_china=price.region.mainland_china,
                instance_type=instance.name,
                gpu=spec,
                gpu_segment=gpu.segment,
                gpu_datacenter_use_allowed=gpu.datacenter_use_allowed,
                gpu_count=float(instance.gpu_count),
                gpu_sharing=instance.gpu_sharing,
                vcpus=instance.vcpus,
                ram_gib=instance.ram_gib,
                local_disk_gb=instance.local_disk_gb,
                local_disk_type=instance.local_disk_type,
                intra_slug=intra.slug if intra else None,
                intra_kind=intra.kind if intra else None,
                intra_bandwidth_gb_s=intra.bandwidth_gb_s if intra else None,
                inter_slug=inter.slug if inter else None,
                inter_kind=inter.kind if inter else None,
                inter_rdma=bool(inter and inter.rdma),
                network_gbps=instance.network_gbps,
                pricing_model=price.pricing_model,
                usd_per_hour=float(price.usd_per_hour),
                observed_at=price.observed_at,
                stale=price.observed_at < cutoff,
            )
        )
    return offers


def offer_list(constraints: Constraints, *, now: datetime | None = None) -> list[Offer]:
    """Every offer the planner should weigh, in one query whatever the catalog's size."""
    return offers_from_prices(offer_queryset(constraints), now=now)


# --- Operations: estimate, recommend, compare ----------------------------------------------


def _round(value: float | None, places: int = 3) -> float | None:
    return None if value is None else round(value, places)


def estimate_dict(est: Estimate, *, gpu: str | None, gpu_count: int) -> dict[str, Any]:
    """The estimate as the API returns it (DESIGN.md key names, GiB, hours)."""
    return {
        "memory_per_gpu_gib": round(est.memory_per_gpu_gib, 2),
        "breakdown": {key: round(value, 3) for key, value in est.breakdown.items()},
        "total_memory_gib": round(est.total_memory_gib, 2),
        "min_gpus": est.min_gpus,
        "training_flops": est.training_flops,
        "mfu": _round(est.mfu),
        "tokens_per_second": _round(est.tokens_per_second, 1),
        "gpu_hours": _round(est.gpu_hours, 2),
        "est_hours": _round(est.est_hours, 2),
        "gpu": gpu,
        "gpu_count": gpu_count,
        "assumptions": est.assumptions,
        "notes": list(est.notes),
    }


def plan_dict(p: Plan) -> dict[str, Any]:
    offer = p.offer
    return {
        "rank": p.rank,
        "provider": offer.provider,
        "region": offer.region,
        "other_regions": p.other_regions,
        "instance_type": offer.instance_type,
        "gpu": offer.gpu.slug,
        "gpu_count": p.gpu_count,
        "nodes": p.nodes,
        "pricing_model": offer.pricing_model,
        "usd_per_hour": round(p.usd_per_hour, 4),
        "usd_per_gpu_hour": round(p.usd_per_gpu_hour, 4),
        "est_hours": _round(p.est_hours, 2),
        "est_total_usd": _round(p.est_total_usd, 2),
        "memory_per_gpu_gib": round(p.memory_per_gpu_gib, 2),
        "headroom_pct": round(p.headroom_pct, 1),
        "sharding": p.sharding,
        "interconnect": {
            "intra_node": offer.intra_slug,
            "intra_node_bandwidth_gb_s": offer.intra_bandwidth_gb_s,
            "inter_node": offer.inter_slug,
            "inter_node_rdma": offer.inter_rdma,
            "network_gbps": offer.network_gbps,
        },
        "host_check": p.host_check,
        "price_observed_at": offer.observed_at,
        "stale": offer.stale,
        "reasons": p.reasons,
        "warnings": p.warnings,
    }


def _headline_estimate(workload: Workload, plans: list[Plan]) -> dict[str, Any]:
    if plans:
        top = plans[0]
        return estimate_dict(
            top.estimate, gpu=top.offer.gpu.slug, gpu_count=int(max(top.gpu_count, 1))
        )
    return estimate_dict(estimate(workload), gpu=None, gpu_count=1)


def recommend(
    workload: Workload, constraints: Constraints, *, objective: str, limit: int
) -> dict[str, Any]:
    """Ranked plans for a workload over the live catalog, with rejections and advice."""
    now = timezone.now()
    offers = offer_list(constraints, now=now)
    result = plan(workload, offers, constraints, objective=objective, limit=limit)
    return {
        "estimate": _headline_estimate(workload, result.plans),
        "recommendations": [plan_dict(p) for p in result.plans],
        "rejected": result.rejected.by_reason,
        "advice": result.advice,
        "catalog_as_of": catalog_as_of(),
        "objective": objective,
        "considered": result.considered,
    }


def compare(
    workload: Workload, targets: list[dict[str, str]], constraints: Constraints
) -> dict[str, Any]:
    """One row per named instance type or GPU: its best plan, or why nothing fits."""
    prices = list(offer_queryset(replace(constraints, gpus=(), providers=(), regions=())))
    offers = offers_from_prices(prices)
    rows = []
    first_fit: Plan | None = None
    for target in targets:
        if target.get("gpu"):
            subset = [o for o in offers if o.gpu.slug == target["gpu"]]
            label = target["gpu"]
        else:
            subset = [
                o for o in offers
                if o.provider == target["provider"] and o.instance_type == target["instance_type"]
            ]  # fmt: skip
            label = f"{target['provider']}/{target['instance_type']}"
        result = plan(workload, subset, replace(constraints, include_stale=True), limit=1)
        if result.plans:
            first_fit = first_fit or result.plans[0]
            row = {**plan_dict(result.plans[0]), "fits": True, "why_not": None}
        else:
            row = {
                "provider": target.get("provider"),
                "instance_type": target.get("instance_type"),
                "gpu": target.get("gpu"),
                "fits": False,
                "why_not": _why_not(result, subset, label),
            }
        row["target"] = label
        rows.append(row)
    return {
        "estimate": _headline_estimate(workload, [first_fit] if first_fit else []),
        "rows": rows,
        "catalog_as_of": catalog_as_of(),
    }


def _why_not(result, subset: list[Offer], label: str) -> str:
    if not subset:
        return f"no current price for {label} within the constraints"
    reasons = sorted(result.rejected.by_reason.items(), key=lambda item: -item[1]["count"])
    if not reasons:
        return "nothing fits"
    reason, entry = reasons[0]
    example = entry["examples"][0] if entry["examples"] else ""
    return f"{reason}: {example}"
