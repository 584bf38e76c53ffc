"""Explanation, apart from search: the reasons and warnings of a returned plan, the examples a
rejection lists, and the advice of a planning run."""

from __future__ import annotations

import heapq
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from typing import Any

from ..estimator import Estimate, GPUSpec, Workload, estimate
from .offers import Constraints, Offer
from .results import Plan, Rejections
from .rules import (
    DEFAULT_MAX_GPUS,
    FIT_HEADROOM,
    HEADROOM_WARN_PCT,
    MIN_INTER_NODE_RDMA_GBPS,
    MIN_RAM_TO_GPU_MEMORY,
    MIN_VCPUS_PER_GPU,
    SPOT_CHECKPOINT_MINUTES,
    _billed_amount,
    _terms_billed,
)
from .steps import Failure, NoFit, NoThroughput, OverMax, _intra_node_class, _Profile
from .walk import _Candidate

# How many of the best spot plans the spot advice looks at for an on-demand twin.
SPOT_ADVICE_SCAN = 1000

# A ranked stream of one group's offers: (key, offer index, offer, best step).
Stream = Iterator[tuple[Any, ...]]
# The best plan of a machine's on-demand twin in the same region, if it has one.
TwinOf = Callable[[Offer], _Candidate | None]


# --- One plan -------------------------------------------------------------------------------
def _host_check(offer: Offer, workload: Workload) -> tuple[dict[str, Any], list[str]]:
    gpus = max(offer.gpu_count, 1.0)
    gpu_memory = offer.gpu.memory_gib * offer.gpu_count
    ram_ratio = offer.ram_gib / gpu_memory if gpu_memory else 0.0
    vcpus_per_gpu = offer.vcpus / gpus
    nvme = offer.local_disk_type == "nvme" and offer.local_disk_gb > 0
    warnings = []
    training = workload.task != "inference"
    if training and ram_ratio < MIN_RAM_TO_GPU_MEMORY:
        warnings.append(
            f"Host RAM {offer.ram_gib:g} GiB is {ram_ratio:.1f}x the GPU memory; training wants "
            f"at least {MIN_RAM_TO_GPU_MEMORY:g}x for data loading and checkpoints."
        )
    if training and vcpus_per_gpu < MIN_VCPUS_PER_GPU:
        warnings.append(
            f"{vcpus_per_gpu:.0f} vCPUs per GPU may starve the data loader "
            f"(about {MIN_VCPUS_PER_GPU:g} per GPU is the usual minimum)."
        )
    if training and not nvme:
        warnings.append(
            "No local NVMe: stream data from object storage or attach fast block storage."
        )
    check = {
        "vcpus": offer.vcpus,
        "vcpus_per_gpu": round(vcpus_per_gpu, 2),
        "ram_gib": offer.ram_gib,
        "ram_to_gpu_memory": round(ram_ratio, 2),
        "local_disk_gb": offer.local_disk_gb,
        "local_nvme": nvme,
        "ok": not warnings,
    }
    return check, warnings


def _billed_total(offer: Offer, nodes: int, hours: float | None) -> tuple[float | None, str | None]:
    """Total USD for the run; commitment terms bill whole terms. Returns (total, note)."""
    total = _billed_amount(offer.usd_per_hour * nodes, offer.pricing_model, hours)
    if total is None or hours is None:
        return total, None
    terms = _terms_billed(offer.pricing_model, hours)
    if terms is None:
        return total, None
    return total, f"{terms} x {offer.pricing_model.replace('_', ' ')} term billed in full"


def _make_plan(
    offer: Offer,
    workload: Workload,
    nodes: int,
    total_gpus: int,
    sharding: str | None,
    est: Estimate,
    capacity: float,
) -> Plan:
    gpu_count = total_gpus if offer.gpu_count >= 1 else offer.gpu_count
    hours = est.est_hours
    total_usd, term_note = _billed_total(offer, nodes, hours)
    headroom_pct = 100.0 * (capacity - est.memory_per_gpu_gib) / capacity if capacity else 0.0
    host, host_warnings = _host_check(offer, workload)
    reasons: list[str] = []
    warnings: list[str] = list(host_warnings)
    training = workload.task != "inference"
    reasons.append(
        f"Needs {est.memory_per_gpu_gib:.1f} GiB per GPU of {capacity:g} "
        f"({headroom_pct:.0f}% headroom)"
        + (f" with {sharding} sharding" if sharding not in (None, "none") else "")
    )
    if hours is not None:
        reasons.append(f"About {hours:,.1f} h on {gpu_count:g} GPU(s) ({nodes} node(s))")
    if term_note:
        reasons.append(term_note)
    if offer.intra_kind in ("nvswitch", "nvlink") and total_gpus > 1:
        reasons.append(f"GPUs joined by {offer.intra_slug}")
    if workload.precision == "bf16" and offer.gpu.bf16_tflops is None:
        warnings.append(
            f"{offer.gpu.slug} has no BF16: runs in FP16"
            + (" with loss scaling." if training else ".")
        )
    if workload.precision == "fp8" and offer.gpu.fp8_tflops is None:
        warnings.append(f"{offer.gpu.slug} has no FP8 tensor cores: FP8 runs at 16-bit speed.")
    if offer.stale:
        warnings.append(
            f"Price observed {offer.observed_at:%Y-%m-%d} is older than the staleness limit; check it."
        )
    if headroom_pct < HEADROOM_WARN_PCT:
        warnings.append(
            f"Only {headroom_pct:.0f}% GPU memory headroom: fragmentation or a longer batch may OOM."
        )
    if not offer.gpu_datacenter_use_allowed:
        warnings.append(
            f"{offer.gpu.slug} is a GeForce part: NVIDIA's driver licence forbids datacenter deployment; "
            "fine for experiments, a risk for production."
        )
    if offer.gpu_sharing != "dedicated":
        warnings.append(
            f"Shared GPU ({offer.gpu_sharing}, {offer.gpu_count:g} of a GPU): performance varies; "
            "not suited to training."
        )
    if offer.pricing_model == "spot":
        warnings.append(
            f"Spot capacity can be reclaimed at any time: checkpoint at least every {SPOT_CHECKPOINT_MINUTES} minutes."
            if training
            else "Spot capacity can be reclaimed at any time: keep an on-demand replica for serving."
        )
    if (
        training
        and total_gpus > 1
        and _intra_node_class(offer, max(1, int(offer.gpu_count))) == "pcie"
    ):
        warnings.append(
            "Multi-GPU training over PCIe only: gradient all-reduce will cost efficiency."
        )
    if nodes > 1:
        rdma_ok = offer.inter_rdma and (offer.network_gbps or 0) >= MIN_INTER_NODE_RDMA_GBPS
        if not rdma_ok:
            warnings.append(
                f"MULTI-NODE WITHOUT RDMA: {nodes} nodes over {offer.inter_slug or 'plain networking'} "
                f"({offer.network_gbps or 0:g} Gbit/s); efficiency falls off a cliff. Prefer InfiniBand/RoCE/EFA "
                f">= {MIN_INTER_NODE_RDMA_GBPS:g} Gbit/s."
            )
        else:
            reasons.append(
                f"Nodes joined by {offer.inter_slug} ({offer.network_gbps:g} Gbit/s, RDMA)"
            )
    if offer.region_mainland_china or (offer.provider_mainland_china and offer.country == "CN"):
        warnings.append(
            (
                "Mainland China region: real-name verification is required, and serving a website "
                "needs ICP filing. " + (offer.compliance_notes or "")
            ).strip()
        )
    return Plan(
        offer=offer,
        nodes=nodes,
        gpu_count=gpu_count,
        sharding=sharding,
        estimate=est,
        usd_per_hour=offer.usd_per_hour * nodes,
        usd_per_gpu_hour=offer.usd_per_hour / max(offer.gpu_count, 1e-9),
        est_hours=hours,
        est_total_usd=total_usd,
        memory_per_gpu_gib=est.memory_per_gpu_gib,
        headroom_pct=headroom_pct,
        host_check=host,
        reasons=reasons,
        warnings=warnings,
    )


def _annotate_alternatives(plans: list[Plan], twin: TwinOf) -> None:
    """Say when a subscription or spot beats on-demand for the same machine and run."""
    for other in plans:
        name = other.offer.pricing_model
        if name not in ("monthly", "yearly", "reserved_1y", "reserved_3y", "spot"):
            continue
        hourly = twin(other.offer)
        if hourly is None or hourly.nodes != other.nodes or hourly.est_total_usd is None:
            continue
        if other.est_total_usd is None or other.est_total_usd >= hourly.est_total_usd:
            continue
        saving = 100.0 * (1 - other.est_total_usd / hourly.est_total_usd)
        label = "Spot" if name == "spot" else name.replace("_", " ").capitalize()
        other.reasons.append(f"{label} beats on-demand by {saving:.0f}% for this run")


# --- Rejections -----------------------------------------------------------------------------
def _failure_example(
    offer: Offer, failure: Failure, profile: _Profile, workload: Workload, max_gpus: int
) -> str:
    """The example a rejection lists, written only for the first few of each reason."""
    step = failure[1]
    if step is None:
        return offer.label
    if isinstance(step, OverMax):
        return f"{offer.label}: needs more than {max_gpus} GPUs"
    if isinstance(step, NoFit):
        return (
            f"{offer.label}: needs {step.memory_gib:.1f} GiB per GPU on "
            f"{step.total} GPU(s), has {profile.capacity:g}"
        )
    if isinstance(step, NoThroughput):
        return (
            f"{offer.label}: the catalog has no dense {workload.precision} figure for "
            f"{offer.gpu.slug}"
        )
    candidate = _Candidate(offer, step, "cheapest")
    return f"{offer.label} x{step.nodes} node(s): {_describe(candidate)}"


def _describe(p: _Candidate) -> str:
    hours = "?" if p.est_hours is None else f"{p.est_hours:,.1f} h"
    total = "?" if p.est_total_usd is None else f"${p.est_total_usd:,.0f}"
    return f"${p.usd_per_hour:,.2f}/h, {hours}, {total}"


# --- Advice ---------------------------------------------------------------------------------
def _spot_saving(spot_streams: Iterable[Stream], twin: TwinOf, objective: str) -> str | None:
    """What spot saves on the best-ranked spot plan with an on-demand twin (20% or more)."""
    for seen, (_key, _index, offer, step) in enumerate(heapq.merge(*spot_streams)):
        if seen >= SPOT_ADVICE_SCAN:
            break
        plan_ = _Candidate(offer, step, objective)
        other = twin(offer)
        if not (plan_.est_total_usd and other and other.est_total_usd):
            continue
        saving = 100 * (1 - plan_.est_total_usd / other.est_total_usd)
        if saving >= 20:
            return (
                f"Spot saves {saving:.0f}% on {offer.instance_type} with checkpoints every "
                f"{SPOT_CHECKPOINT_MINUTES} minutes."
            )
    return None


def _advice(
    workload: Workload,
    c: Constraints,
    rejected: Rejections,
    priced: int,
    term_priced: bool,
    spot: str | None,
) -> list[str]:
    """What to change when plans are few or none, from the rejection tallies."""
    advice: OrderedDict[str, None] = OrderedDict()
    if spot:
        advice[spot] = None
    if rejected.count("stale_price") and not c.include_stale:
        advice[
            f"{rejected.count('stale_price')} offer(s) were left out because their prices are older than the "
            "staleness limit; set include_stale=true to see them flagged."
        ] = None
    if rejected.count("run_too_short_for_term") and not term_priced:
        advice["Monthly and reserved terms were left out: the run is shorter than half a term."] = (
            None
        )
    if not priced:
        if rejected.count("over_max_total_usd") or rejected.count("over_max_hours"):
            advice[
                "Train on fewer tokens or raise max_total_usd / max_hours: some plans fit memory but not the budget."
            ] = None
        if rejected.count("does_not_fit_memory") or rejected.count("needs_multi_node"):
            if workload.method in ("full", "freeze") and workload.task != "inference":
                advice["LoRA or QLoRA needs a fraction of the memory of a full fine-tune."] = None
            if workload.gradient_checkpointing != "full" and workload.task != "inference":
                advice[
                    "Full gradient checkpointing cuts activation memory at about a third more compute."
                ] = None
            if not c.allow_multi_node:
                advice["Allow multi-node (allow_multi_node=true) to shard over more GPUs."] = None
        if c.datacenter_only or c.gpus or c.providers or c.regions or c.mainland_china is not None:
            advice["Widen the constraints (providers, regions, GPUs) to consider more offers."] = (
                None
            )
    return list(advice)


def _what_would_fit(workload: Workload, cards: dict[int, GPUSpec], plans: list[Plan]) -> list[str]:
    """Cheaper shapes of the same job, checked with the estimator: full checkpointing on one
    80 GB GPU, QLoRA on one 24 GB card. Said only when the best plan needs more than that."""
    if workload.task == "inference" or (plans and plans[0].gpu_count <= 1):
        return []
    hints = []
    big = cards.get(80)
    if big and workload.gradient_checkpointing != "full":
        est = estimate(
            replace(workload, gradient_checkpointing="full", sharding="none"),
            gpu=big,
            gpu_count=1,
            explain=False,
        )
        if est.memory_per_gpu_gib <= big.memory_gib * (1 - FIT_HEADROOM):
            hints.append(
                f"Full gradient checkpointing would fit this on one 80 GB GPU ({est.memory_per_gpu_gib:.0f} GiB)."
            )
    small = cards.get(24)
    if small and workload.method in ("full", "lora", "freeze"):
        qlora = replace(
            workload, method="qlora", sharding="none", gradient_checkpointing="full",
            lora_rank=workload.lora_rank or 16, lora_targets=workload.lora_targets or "all_linear",
            mixed_precision=None, optimizer=workload.optimizer or "adamw",
        )  # fmt: skip
        est = estimate(qlora, gpu=small, gpu_count=1, explain=False)
        if est.memory_per_gpu_gib <= small.memory_gib * (1 - FIT_HEADROOM):
            hints.append(
                f"QLoRA fits a single 24 GB card ({est.memory_per_gpu_gib:.0f} GiB with full checkpointing)."
            )
    return hints


def _cap_advice(c: Constraints, rejected: Rejections, plans: list[Plan]) -> list[str]:
    """Say when the default GPU cap may have hidden larger clusters."""
    if c.max_gpus is None and (
        rejected.count("over_max_gpus") or any(p.gpu_count >= DEFAULT_MAX_GPUS for p in plans)
    ):
        return [
            f"Plans were capped at {DEFAULT_MAX_GPUS} GPUs; set max_gpus to weigh larger clusters."
        ]
    return []
