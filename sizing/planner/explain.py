"""Explanation, apart from search: the reasons and warnings of a returned plan, the examples a
rejection lists, and the advice of a planning run."""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from typing import Any

from catalog.pricing import PricingModel

from ..compute import inter_node_network_gbps
from ..estimator import Estimate, GPUSpec, Workload, estimate
from ..frameworks import FRAMEWORKS, quantised_gpu_limit
from ..messages import Message
from ..messages import MessageCode as C
from ..messages import RejectionCode as R
from ..uncertainty import fit_factor
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
    TERM_HOURS,
    _billed_amount,
    _limit_failure,
    _terms_billed,
)
from .steps import (
    Failure,
    Fits,
    NoFit,
    NoThroughput,
    OverMax,
    Shape,
    Step,
    _intra_node_class,
    _Profile,
)
from .walk import _Candidate

# How many instances without an inter-node fabric the advice names.
NO_FABRIC_NAMED = 5
# How many of the best spot plans the spot advice looks at for an on-demand twin.
SPOT_ADVICE_SCAN = 1000

# A ranked stream of one group's offers: (key, offer index, offer, best step).
Stream = Iterator[tuple[Any, ...]]
# The best plan of a machine's on-demand twin in the same region, if it has one.
TwinOf = Callable[[Offer], _Candidate | None]


# --- One plan -------------------------------------------------------------------------------
def _host_check(offer: Offer, workload: Workload) -> tuple[dict[str, Any], list[Message]]:
    gpus = max(offer.gpu_count, 1.0)
    gpu_memory = offer.gpu.memory_gib * offer.gpu_count
    ram_ratio = offer.ram_gib / gpu_memory if gpu_memory else 0.0
    vcpus_per_gpu = offer.vcpus / gpus
    nvme = offer.local_disk_type == "nvme" and offer.local_disk_gb > 0
    warnings: list[Message] = []
    training = workload.task != "inference"
    if training and ram_ratio < MIN_RAM_TO_GPU_MEMORY:
        warnings.append(
            Message(
                C.HOST_RAM_LOW,
                {"ram_gib": offer.ram_gib, "ratio": ram_ratio, "min_ratio": MIN_RAM_TO_GPU_MEMORY},
            )
        )
    if training and vcpus_per_gpu < MIN_VCPUS_PER_GPU:
        warnings.append(
            Message(
                C.HOST_VCPUS_LOW,
                {"vcpus_per_gpu": vcpus_per_gpu, "min_vcpus_per_gpu": MIN_VCPUS_PER_GPU},
            )
        )
    if training and not nvme:
        warnings.append(Message(C.HOST_NO_NVME))
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


def _billed_total(
    offer: Offer, nodes: int, hours: float | None
) -> tuple[float | None, Message | None]:
    """Total USD for the run; commitment terms bill whole terms. Returns (total, note)."""
    total = _billed_amount(offer.usd_per_hour * nodes, offer.pricing_model, hours)
    if total is None or hours is None:
        return total, None
    terms = _terms_billed(offer.pricing_model, hours)
    if terms is None:
        return total, None
    return total, Message(C.TERM_BILLED, {"terms": terms, "pricing_model": offer.pricing_model})


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
    reasons: list[Message] = []
    warnings: list[Message] = list(host_warnings)
    training = workload.task != "inference"
    fit = {"memory_gib": est.memory_per_gpu_gib, "capacity_gib": capacity}
    fit["headroom_pct"] = headroom_pct
    if sharding not in (None, "none"):
        reasons.append(Message(C.MEMORY_FIT_SHARDED, {**fit, "sharding": sharding}))
    else:
        reasons.append(Message(C.MEMORY_FIT, fit))
    if hours is not None:
        reasons.append(
            Message(C.RUN_TIME, {"hours": hours, "gpu_count": gpu_count, "nodes": nodes})
        )
    if term_note:
        reasons.append(term_note)
    if offer.intra_kind in ("nvswitch", "nvlink", "infinity_fabric", "hccs") and total_gpus > 1:
        reasons.append(Message(C.GPUS_JOINED, {"interconnect": offer.intra_slug}))
    gpu = {"gpu": offer.gpu.slug}
    if workload.precision == "bf16" and offer.gpu.bf16_tflops is None:
        warnings.append(Message(C.NO_BF16_TRAINING if training else C.NO_BF16, gpu))
    if workload.precision == "fp8" and offer.gpu.fp8_tflops is None:
        warnings.append(Message(C.NO_FP8, gpu))
    if offer.stale:
        warnings.append(Message(C.PRICE_STALE, {"observed_on": f"{offer.observed_at:%Y-%m-%d}"}))
    if headroom_pct < HEADROOM_WARN_PCT:
        warnings.append(Message(C.LOW_HEADROOM, {"headroom_pct": headroom_pct}))
    if not offer.gpu_datacenter_use_allowed:
        warnings.append(Message(C.GEFORCE_DATACENTER, gpu))
    if offer.gpu_sharing != "dedicated":
        warnings.append(
            Message(C.SHARED_GPU, {"sharing": offer.gpu_sharing, "share": offer.gpu_count})
        )
    if offer.pricing_model == PricingModel.SPOT:
        warnings.append(
            Message(C.SPOT_TRAINING, {"minutes": SPOT_CHECKPOINT_MINUTES})
            if training
            else Message(C.SPOT_SERVING)
        )
    if (
        training
        and total_gpus > 1
        and _intra_node_class(offer, max(1, int(offer.gpu_count))) == "pcie"
    ):
        warnings.append(Message(C.PCIE_ONLY_TRAINING))
    if nodes > 1:
        _inter_node_messages(offer, nodes, reasons, warnings)
        if est.inter_node_untimed:
            warnings.append(Message(C.INTER_NODE_UNTIMED, {"nodes": nodes}))
    if hours is not None and hours > RUN_OVER_A_YEAR_HOURS:
        warnings.append(Message(C.RUN_OVER_A_YEAR, {"years": hours / RUN_OVER_A_YEAR_HOURS}))
    if offer.region_mainland_china or (offer.provider_mainland_china and offer.country == "CN"):
        warnings.append(Message(C.MAINLAND_CHINA, {"notes": offer.compliance_notes or ""}))
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


def _fabric_figure_per_port(offer: Offer) -> bool:
    """Whether the catalog figure of the offer's inter-node fabric is one port's (or one
    adapter's), not the node's: InfiniBand "per 4x port", RoCE "per port", EFA "per adapter"
    (fixtures/interconnects.yaml bandwidth_note); EFAv2's is per instance, Ethernet's per VM."""
    return offer.inter_kind in ("infiniband", "roce_v2") or offer.inter_slug == "efa"


def _inter_node_messages(
    offer: Offer, nodes: int, reasons: list[Message], warnings: list[Message]
) -> None:
    """How the nodes of a multi-node plan are joined. The bandwidth is the instance's network
    figure, else its fabric's own (``Offer.inter_node_gbps``); one published nowhere is said to
    be so, never taken as 0. A fabric figure that is one port's is said to be per port, never
    the node's (the catalog records no ports per node). The RDMA warning is for a fabric
    without RDMA (or none recorded); an RDMA fabric under MIN_INTER_NODE_RDMA_GBPS gets its own
    warning."""
    gbps = offer.inter_node_gbps
    fabric = offer.inter_slug
    port = offer.inter_bandwidth_gbps
    if offer.inter_rdma and port and _fabric_figure_per_port(offer):
        network = offer.network_gbps
        kind = offer.inter_kind
        if network is None:
            reasons.append(
                Message(C.NODES_JOINED_RDMA_PORT, {"interconnect": fabric, "port_gbps": port})
            )
            return
        if inter_node_network_gbps(network, rdma_kind=kind, port_gbps=port) is None:
            # Below one port of the fabric: the figure is the front-end network's.
            reasons.append(
                Message(
                    C.NODES_JOINED_RDMA_FRONT_END,
                    {"interconnect": fabric, "port_gbps": port, "network_gbps": network},
                )
            )
            return
    figures: dict[str, Any] = {"nodes": nodes, "min_gbps": MIN_INTER_NODE_RDMA_GBPS}
    if fabric:
        figures["network"] = fabric
    if not offer.inter_rdma:
        if gbps is None:
            code = (
                C.MULTI_NODE_WITHOUT_RDMA_UNPUBLISHED if fabric else C.MULTI_NODE_PLAIN_UNPUBLISHED
            )
            warnings.append(Message(code, figures))
        else:
            code = C.MULTI_NODE_WITHOUT_RDMA if fabric else C.MULTI_NODE_PLAIN_NETWORK
            warnings.append(Message(code, {**figures, "network_gbps": gbps}))
        return
    if gbps is not None and gbps < MIN_INTER_NODE_RDMA_GBPS:
        warnings.append(Message(C.MULTI_NODE_RDMA_SLOW, {**figures, "network_gbps": gbps}))
        return
    joined = {"interconnect": fabric}
    if gbps is None:
        reasons.append(Message(C.NODES_JOINED_RDMA_UNPUBLISHED, joined))
    elif offer.network_gbps is None:
        reasons.append(Message(C.NODES_JOINED_RDMA_FABRIC, {**joined, "network_gbps": gbps}))
    else:
        reasons.append(Message(C.NODES_JOINED_RDMA, {**joined, "network_gbps": gbps}))


def _annotate_alternatives(plans: list[Plan], twin: TwinOf) -> None:
    """Say when a subscription or spot beats on-demand for the same machine and run."""
    for other in plans:
        name = other.offer.pricing_model
        if name not in TERM_HOURS and name != PricingModel.SPOT:
            continue
        hourly = twin(other.offer)
        if hourly is None or hourly.nodes != other.nodes or hourly.est_total_usd is None:
            continue
        if other.est_total_usd is None or other.est_total_usd >= hourly.est_total_usd:
            continue
        saving = 100.0 * (1 - other.est_total_usd / hourly.est_total_usd)
        other.reasons.append(
            Message(C.BEATS_ON_DEMAND, {"pricing_model": name, "saving_pct": saving})
        )


# --- Rejections -----------------------------------------------------------------------------
# Limits that more nodes only make worse for one offer: a shorter run (further under half a
# term), a higher hourly price. Their example is the fewest nodes that hit the limit (the walk
# reports its last node count, the furthest from passing).
_FIRST_STEP_LIMITS = (R.RUN_TOO_SHORT_FOR_TERM, R.OVER_MAX_USD_PER_HOUR)


def _example_step(offer: Offer, failure: Failure, profile: _Profile) -> Step | None:
    """The step a rejection's example names: for a limit in _FIRST_STEP_LIMITS, the first node
    count (the smallest) whose plan fails that same limit at this offer's price; else the step
    the walk failed at."""
    step = failure.step
    if isinstance(step, Shape):  # left unestimated by the walk: estimated to be named
        step = profile.estimated(step)
    if failure.reason not in _FIRST_STEP_LIMITS or not isinstance(step, Fits):
        return step
    index = 0
    while (candidate := profile.step(index)) is not None and candidate is not step:
        index += 1
        if not isinstance(candidate, Fits):
            continue
        hours = candidate.estimate.est_hours
        hourly = offer.usd_per_hour * candidate.nodes
        total = _billed_amount(hourly, offer.pricing_model, hours)
        reason = _limit_failure(profile.c, offer.pricing_model, hours, hourly=hourly, total=total)
        if reason == failure.reason:
            return candidate
    return step


def _failure_example(
    offer: Offer, failure: Failure, profile: _Profile, workload: Workload, max_gpus: int
) -> Message:
    """The example a rejection lists, written only for the first few of each reason."""
    step = _example_step(offer, failure, profile)
    named: dict[str, Any] = {**offer.label_params}
    if failure.reason == R.FRAMEWORK_GPU_LIMIT:
        return Message(
            C.EXAMPLE_FRAMEWORK_GPU_LIMIT,
            {**named, "gpu_count": offer.gpu_count, "framework": workload.framework,
             "max_gpus": _framework_cap(workload)},
        )  # fmt: skip
    if step is None:
        return Message(C.EXAMPLE_OFFER, named)
    if isinstance(step, OverMax):
        return Message(C.EXAMPLE_OVER_MAX_GPUS, {**named, "max_gpus": max_gpus})
    if isinstance(step, NoFit) and step.reason == R.NO_INTER_NODE_FABRIC:
        return Message(
            C.EXAMPLE_NO_FABRIC,
            {**named, "nodes": step.nodes, "total": step.total, "memory_gib": step.memory_gib},
        )
    if isinstance(step, NoFit) and step.high_gib is not None:
        return Message(
            C.EXAMPLE_NO_FIT_HIGH,
            {**named, "memory_gib": step.memory_gib, "high_gib": step.high_gib,
             "total": step.total, "capacity_gib": profile.capacity},
        )  # fmt: skip
    if isinstance(step, NoFit):
        return Message(
            C.EXAMPLE_NO_FIT,
            {**named, "memory_gib": step.memory_gib, "total": step.total,
             "capacity_gib": profile.capacity},
        )  # fmt: skip
    if isinstance(step, NoThroughput):
        return Message(
            C.EXAMPLE_NO_THROUGHPUT,
            {**named, "precision": workload.precision, "gpu": offer.gpu.slug},
        )
    p = _Candidate(offer, step, "cheapest")
    figures = {**named, "nodes": step.nodes, "usd_per_hour": p.usd_per_hour}
    if p.est_hours is None or p.est_total_usd is None:
        return Message(C.EXAMPLE_PLAN_NO_TIME, figures)
    return Message(C.EXAMPLE_PLAN, {**figures, "hours": p.est_hours, "total_usd": p.est_total_usd})


# --- Advice ---------------------------------------------------------------------------------
def _framework_cap(workload: Workload) -> int | None:
    """The most GPUs the workload's framework trains it on (quantised training), or None."""
    return quantised_gpu_limit(workload.framework, workload.method, workload.task)


def _spot_saving(spot_streams: Iterable[Stream], twin: TwinOf, objective: str) -> Message | None:
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
            return Message(
                C.SPOT_SAVES,
                {"saving_pct": saving, "instance_type": offer.instance_type,
                 "minutes": SPOT_CHECKPOINT_MINUTES},
            )  # fmt: skip
    return None


def _advice(
    workload: Workload,
    c: Constraints,
    rejected: Rejections,
    priced: int,
    term_priced: bool,
    spot: Message | None,
    no_fabric: dict[str, int] | None = None,
) -> list[Message]:
    """What to change when plans are few or none, from the rejection tallies. Advice about the
    training method is for fine-tuning only: pre-training has no LoRA or QLoRA. ``no_fabric``:
    the instances (provider/name) rejected for having no inter-node fabric, each with the
    fewest nodes it would need."""
    advice: list[Message] = []
    finetune = workload.task == "finetune"
    training = workload.task != "inference"
    if spot:
        advice.append(spot)
    stale = rejected.count(R.STALE_PRICE)
    if stale and not c.include_stale:
        advice.append(Message(C.STALE_LEFT_OUT, {"count": stale}))
    if rejected.count(R.RUN_TOO_SHORT_FOR_TERM) and not term_priced:
        advice.append(Message(C.TERMS_LEFT_OUT))
    cap = _framework_cap(workload)
    capped = rejected.count(R.FRAMEWORK_GPU_LIMIT)
    if capped and cap is not None:
        advice.append(
            Message(
                C.FRAMEWORK_GPU_LIMIT_ADVICE,
                {"count": capped, "framework": workload.framework, "max_gpus": cap},
            )
        )
    if not priced:
        if rejected.count(R.OVER_MAX_TOTAL_USD) or rejected.count(R.OVER_MAX_HOURS):
            advice.append(Message(C.OVER_BUDGET))
        lacking = rejected.count(R.NO_INTER_NODE_FABRIC)
        if lacking and no_fabric:
            names = sorted(no_fabric, key=lambda name: (no_fabric[name], name))
            shown = ", ".join(names[:NO_FABRIC_NAMED]) + (
                ", ..." if len(names) > NO_FABRIC_NAMED else ""
            )
            advice.append(
                Message(
                    C.MULTI_NODE_NEEDS_FABRIC,
                    {"count": lacking, "nodes": min(no_fabric.values()), "instance_types": shown},
                )
            )
        on_high = rejected.count(R.DOES_NOT_FIT_MEMORY_HIGH)
        if on_high:
            advice.append(Message(C.FIT_ON_POINT, {"count": on_high}))
        if (
            rejected.count(R.DOES_NOT_FIT_MEMORY)
            or rejected.count(R.NEEDS_MULTI_NODE)
            or on_high
            or lacking
        ):
            if workload.method in ("full", "freeze") and finetune:
                advice.append(Message(C.TRY_LORA))
            if workload.gradient_checkpointing != "full" and training:
                advice.append(Message(C.TRY_FULL_CHECKPOINTING))
            if not c.allow_multi_node and cap is None:
                advice.append(Message(C.ALLOW_MULTI_NODE))
        if c.datacenter_only or c.gpus or c.providers or c.regions or c.mainland_china is not None:
            advice.append(Message(C.WIDEN_CONSTRAINTS))
    return advice


# A plan longer than this (a year of hours) is most likely a job asked for at the wrong size:
# its hardware would be retired before it ends. Said, not refused: the figure is still right.
RUN_OVER_A_YEAR_HOURS = 8760.0

# Rejections that say memory was what stood in the way.
_MEMORY_REJECTIONS = (
    R.DOES_NOT_FIT_MEMORY,
    R.DOES_NOT_FIT_MEMORY_HIGH,
    R.NEEDS_MULTI_NODE,
    R.NO_INTER_NODE_FABRIC,
    R.OVER_MAX_GPUS,
)


def _what_would_fit(
    workload: Workload,
    cards: dict[int, GPUSpec],
    plans: list[Plan],
    fit_on: str = "high",
    rejected: Rejections | None = None,
) -> list[Message]:
    """Cheaper shapes of the same job, checked with the estimator: full checkpointing on one
    80 GB GPU, QLoRA on one 24 GB card (fine-tuning only), on cards the constraints allow
    (``cards``). Said only when memory is what costs: the best plan needs more than one GPU, or
    nothing was ranked and some offer was turned down for memory (not for a stale price or a
    budget alone); fits are decided as the plans' are (``fit_on``)."""
    if workload.task == "inference":
        return []
    if plans:
        if plans[0].gpu_count <= 1:
            return []
    elif rejected is not None and not any(rejected.count(r) for r in _MEMORY_REJECTIONS):
        return []
    hints = []

    def on_one(w: Workload, card: GPUSpec, spread_of: Workload | None = None) -> float | None:
        """``w``'s memory per GPU on one ``card`` where it fits as plans' fits are decided (the
        range of ``spread_of``, default ``w``); None where it does not."""
        est = estimate(w, gpu=card, gpu_count=1, explain=False)
        factor = fit_factor(spread_of or w, fit_on, gpu_count=1)
        fits = est.memory_per_gpu_gib * factor <= card.memory_gib * (1 - FIT_HEADROOM)
        return est.memory_per_gpu_gib if fits else None

    big = cards.get(80)
    if big and workload.gradient_checkpointing != "full" and on_one(workload, big) is None:
        lighter = replace(workload, gradient_checkpointing="full", sharding="none")
        if (memory := on_one(lighter, big, spread_of=workload)) is not None:
            hints.append(Message(C.CHECKPOINTING_FITS_80GB, {"memory_gib": memory}))
    small = cards.get(24)
    if (
        small
        and workload.task == "finetune"
        and workload.method in ("full", "lora", "freeze")
        and on_one(workload, small) is None
    ):
        qlora = replace(
            workload, method="qlora", sharding="none", gradient_checkpointing="full",
            lora_rank=workload.lora_rank or 16, lora_targets=workload.lora_targets or "all_linear",
            mixed_precision=None, optimizer=workload.optimizer or "adamw",
            lora_dropout=workload.lora_dropout if workload.method == "lora"
            else FRAMEWORKS[workload.framework].lora_dropout,
        )  # fmt: skip
        if (memory := on_one(qlora, small)) is not None:
            hints.append(Message(C.QLORA_FITS_24GB, {"memory_gib": memory}))
    return hints


def _cap_advice(c: Constraints, rejected: Rejections, plans: list[Plan]) -> list[Message]:
    """Say when the GPU cap may have hidden larger clusters: the default cap whenever it bit,
    a cap the caller set when nothing under it was ranked."""
    if c.max_gpus is None and (
        rejected.count(R.OVER_MAX_GPUS) or any(p.gpu_count >= DEFAULT_MAX_GPUS for p in plans)
    ):
        return [Message(C.CAPPED_GPUS, {"max_gpus": DEFAULT_MAX_GPUS})]
    if c.max_gpus is not None and not plans and rejected.count(R.OVER_MAX_GPUS):
        return [Message(C.CAPPED_GPUS, {"max_gpus": c.max_gpus})]
    return []
