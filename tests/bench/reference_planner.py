"""A frozen copy of sizing/planner.py before it shared work across offers: the reference the
fast planner is tested against (test_planner_equivalence.py). Do not edit.

The recommendation planner: workload + live offers -> ranked, explained plans. Pure: no Django.

For every eligible (instance type, region, pricing model, node count) it runs the estimator on the
topology that offer gives, rejects what does not fit or breaks a constraint (saying why), and
ranks the rest by the objective. Host rules and warnings follow the practice the seed guides
teach (see docs/sizing.md): RAM at least 2x GPU memory for training, about 4 vCPUs per GPU, NVMe
for data, RDMA of at least 100 Gbit/s between nodes, no GeForce in datacenters, no shared GPUs
for training, checkpoints on spot.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from sizing.estimator import Estimate, GPUSpec, Topology, Workload, choose_sharding, estimate

# --- Rules, each with where it comes from --------------------------------------------------
# Below this free share of GPU memory a plan is flagged: allocator fragmentation and batch
# variance eat ~5-10% in practice (PyTorch CUDA caching allocator notes).
HEADROOM_WARN_PCT = 10.0
# Multi-node training needs RDMA of at least 100 Gbit/s between nodes (seed guides: "RDMA
# (RoCEv2 or InfiniBand), >= 100 Gbps, ideally 200 Gbps+").
MIN_INTER_NODE_RDMA_GBPS = 100.0
# Host sizing for training (seed guides): RAM >= 2x total GPU memory; CPU:GPU at least 2:1
# physical cores, i.e. about 4 vCPUs per GPU with SMT.
MIN_RAM_TO_GPU_MEMORY = 2.0
MIN_VCPUS_PER_GPU = 4.0
# Hours in one commitment term; a term is only offered when the run uses at least half of it.
TERM_HOURS = {"monthly": 730.0, "yearly": 8760.0, "reserved_1y": 8760.0, "reserved_3y": 26280.0}
MIN_TERM_USE = 0.5
NODE_COUNTS = (1, 2, 4, 8, 16, 32, 64, 128)
# Without max_gpus, plans stop at 16 nodes of 8: larger on-demand clusters are rarely rentable
# without a reservation, and "fastest" would otherwise always answer "the most GPUs allowed".
DEFAULT_MAX_GPUS = 128
# Spot capacity is reclaimed without notice beyond a short warning (AWS: 2 minutes); a job that
# saves every 30 minutes loses at most half an hour of work per interruption.
SPOT_CHECKPOINT_MINUTES = 30

OBJECTIVES = ("cheapest", "fastest", "cheapest_hourly")
PRICING_MODELS = ("on_demand", "spot", "monthly", "yearly", "reserved_1y", "reserved_3y")


@dataclass(frozen=True)
class Offer:
    """One current price of one instance type in one region."""

    price_id: int
    provider: str
    provider_mainland_china: bool
    compliance_notes: str
    region: str
    country: str
    region_mainland_china: bool
    instance_type: str
    gpu: GPUSpec
    gpu_segment: str
    gpu_datacenter_use_allowed: bool
    gpu_count: float
    gpu_sharing: str
    vcpus: int
    ram_gib: float
    local_disk_gb: float
    local_disk_type: str
    intra_slug: str | None
    intra_kind: str | None
    intra_bandwidth_gb_s: float | None
    inter_slug: str | None
    inter_kind: str | None
    inter_rdma: bool
    network_gbps: float | None
    pricing_model: str
    usd_per_hour: float
    observed_at: datetime
    stale: bool

    @property
    def label(self) -> str:
        return f"{self.provider}/{self.instance_type} in {self.region} ({self.pricing_model})"


@dataclass(frozen=True)
class Constraints:
    """What the caller allows; None means no limit."""

    providers: tuple[str, ...] = ()
    regions: tuple[str, ...] = ()
    countries: tuple[str, ...] = ()
    mainland_china: bool | None = None
    pricing: tuple[str, ...] = PRICING_MODELS
    # Commitment terms are weighed without a known run length only when asked for by name.
    pricing_explicit: bool = False
    max_usd_per_hour: float | None = None
    max_total_usd: float | None = None
    max_hours: float | None = None
    gpus: tuple[str, ...] = ()
    min_gpu_memory_gb: float | None = None
    max_gpus: int | None = None
    allow_multi_node: bool = True
    datacenter_only: bool = False
    include_stale: bool = False


@dataclass
class Plan:
    """A ranked answer: where to run and what it costs, with reasons and warnings."""

    offer: Offer
    nodes: int
    gpu_count: float
    sharding: str | None
    estimate: Estimate
    usd_per_hour: float
    usd_per_gpu_hour: float
    est_hours: float | None
    est_total_usd: float | None
    memory_per_gpu_gib: float
    headroom_pct: float
    host_check: dict[str, Any]
    reasons: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    other_regions: list[str] = field(default_factory=list)
    rank: int = 0

    def sort_key(self, objective: str) -> tuple:
        hourly = self.usd_per_hour
        total = self.est_total_usd if self.est_total_usd is not None else math.inf
        hours = self.est_hours if self.est_hours is not None else math.inf
        speed = -(self.estimate.tokens_per_second or 0.0) * self.gpu_count
        if objective == "fastest":
            return (hours, speed, total, hourly)
        if objective == "cheapest_hourly":
            return (hourly, total, hours)
        return (total, hourly, hours)


@dataclass
class Rejections:
    """Counts by reason, with a few examples each."""

    max_examples: int = 3
    by_reason: dict[str, dict[str, Any]] = field(default_factory=dict)

    def add(self, reason: str, example: str) -> None:
        entry = self.by_reason.setdefault(reason, {"count": 0, "examples": []})
        entry["count"] += 1
        if len(entry["examples"]) < self.max_examples:
            entry["examples"].append(example)

    def count(self, reason: str) -> int:
        return self.by_reason.get(reason, {}).get("count", 0)


@dataclass
class PlanResult:
    plans: list[Plan]
    rejected: Rejections
    advice: list[str]
    considered: int


class _EstimateCache:
    """Memoises estimates per (workload, GPU, GPU count, topology, sharding)."""

    def __init__(self, workload: Workload, headroom: float) -> None:
        self.workload = workload
        self.headroom = headroom
        self._cache: dict[tuple, tuple[str | None, Estimate]] = {}

    def get(self, gpu: GPUSpec, gpu_count: int, topology: Topology) -> tuple[str | None, Estimate]:
        key = (gpu, gpu_count, topology)
        hit = self._cache.get(key)
        if hit is None:
            workload = self.workload
            sharding = workload.sharding
            if sharding is None and workload.task != "inference":
                sharding = (
                    choose_sharding(workload, gpu, gpu_count, self.headroom)
                    if gpu_count > 1
                    else "none"
                )
            if sharding is not None and sharding != workload.sharding:
                workload = replace(workload, sharding=sharding)
            hit = (sharding, estimate(workload, gpu=gpu, gpu_count=gpu_count, topology=topology))
            self._cache[key] = hit
        return hit


def _intra_node_class(offer: Offer, gpus_per_node: int) -> str:
    """The estimator's view of the links inside one node."""
    if gpus_per_node <= 1:
        return "none"
    kind = offer.intra_kind
    if kind in ("nvswitch", "infinity_fabric"):
        return "nvswitch"
    if kind in ("nvlink", "hccs"):
        # A bridge joins pairs only; across more than two GPUs traffic still crosses PCIe.
        if offer.intra_slug == "nvlink-bridge" and gpus_per_node > 2:
            return "pcie"
        return "nvlink"
    return "pcie"


def _device(offer: Offer) -> GPUSpec:
    """The GPU one process sees: a fraction of a shared GPU has a fraction of its memory and speed."""
    if offer.gpu_count >= 1:
        return offer.gpu
    share = offer.gpu_count

    def scaled(value: float | None) -> float | None:
        return None if value is None else value * share

    return replace(
        offer.gpu,
        memory_gib=offer.gpu.memory_gib * share,
        memory_bandwidth_gb_s=offer.gpu.memory_bandwidth_gb_s * share,
        fp32_tflops=scaled(offer.gpu.fp32_tflops),
        tf32_tflops=scaled(offer.gpu.tf32_tflops),
        bf16_tflops=scaled(offer.gpu.bf16_tflops),
        fp16_tflops=scaled(offer.gpu.fp16_tflops),
        fp8_tflops=scaled(offer.gpu.fp8_tflops),
        int8_tops=scaled(offer.gpu.int8_tops),
    )


def _billed_total(offer: Offer, nodes: int, hours: float | None) -> tuple[float | None, str | None]:
    """Total USD for the run; commitment terms bill whole terms. Returns (total, note)."""
    hourly = offer.usd_per_hour * nodes
    if hours is None:
        return None, None
    term = TERM_HOURS.get(offer.pricing_model)
    if term is None:
        return hourly * hours, None
    terms = max(1, math.ceil(hours / term - 1e-9))
    return (
        hourly * term * terms,
        f"{terms} x {offer.pricing_model.replace('_', ' ')} term billed in full",
    )


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


def _constraint_rejection(offer: Offer, c: Constraints) -> str | None:
    """Reasons an offer is out before any estimate (the selector already applied most of them)."""
    if offer.stale and not c.include_stale:
        return "stale_price"
    if c.datacenter_only and not offer.gpu_datacenter_use_allowed:
        return "consumer_gpu_excluded"
    if c.min_gpu_memory_gb is not None and offer.gpu.memory_gib < c.min_gpu_memory_gb:
        return "below_min_gpu_memory"
    if offer.pricing_model not in c.pricing:
        return "pricing_model_excluded"
    return None


def plan(
    workload: Workload,
    offers: list[Offer],
    constraints: Constraints,
    *,
    objective: str = "cheapest",
    limit: int = 10,
    headroom: float = 0.0,
) -> PlanResult:
    """Rank every eligible (offer, node count) for ``workload``; see the module docstring."""
    cache = _EstimateCache(workload, headroom)
    rejected = Rejections()
    best: dict[int, Plan] = {}
    considered = 0
    max_gpus = constraints.max_gpus or DEFAULT_MAX_GPUS
    for offer in offers:
        reason = _constraint_rejection(offer, constraints)
        if reason:
            rejected.add(reason, offer.label)
            continue
        gpus_per_node = max(1, int(offer.gpu_count))
        device = _device(offer)
        intra = _intra_node_class(offer, gpus_per_node)
        fitted_any = False
        last_failure: tuple[str, str] | None = None
        for nodes in NODE_COUNTS:
            if nodes > 1 and (not constraints.allow_multi_node or offer.gpu_count < 1):
                break
            total = gpus_per_node * nodes
            if total > max_gpus:
                if not fitted_any:
                    last_failure = last_failure or (
                        "over_max_gpus",
                        f"{offer.label}: needs more than {max_gpus} GPUs",
                    )
                break
            considered += 1
            topology = Topology(
                gpu_count=total,
                gpus_per_node=gpus_per_node,
                intra_node=intra,
                intra_bandwidth_gb_s=offer.intra_bandwidth_gb_s,
                inter_node_rdma=offer.inter_rdma,
                inter_node_gbps=offer.network_gbps,
            )
            sharding, est = cache.get(device, total, topology)
            capacity = device.memory_gib
            if est.memory_per_gpu_gib > capacity:
                last_failure = (
                    "does_not_fit_memory"
                    if nodes == 1 or constraints.allow_multi_node
                    else "needs_multi_node",
                    f"{offer.label}: needs {est.memory_per_gpu_gib:.1f} GiB per GPU on {total} GPU(s), has {capacity:g}",
                )
                continue
            fitted_any = True
            if workload.tokens and workload.task != "inference" and est.est_hours is None:
                last_failure = (
                    "no_throughput_figure",
                    f"{offer.label}: the catalog has no dense {workload.precision} figure for {offer.gpu.slug}",
                )
                break
            candidate = _make_plan(offer, workload, nodes, total, sharding, est, capacity)
            failure = _limit_rejection(candidate, constraints)
            if failure:
                last_failure = (failure, f"{offer.label} x{nodes} node(s): {_describe(candidate)}")
                continue
            current = best.get(offer.price_id)
            if current is None or candidate.sort_key(objective) < current.sort_key(objective):
                best[offer.price_id] = candidate
            if objective != "fastest" and workload.task == "inference":
                break  # more nodes only add cost for the same answer
        if offer.price_id not in best:
            if last_failure is None and not constraints.allow_multi_node:
                last_failure = ("needs_multi_node", offer.label)
            if last_failure:
                if last_failure[0] == "does_not_fit_memory" and not constraints.allow_multi_node:
                    last_failure = ("needs_multi_node", last_failure[1])
                rejected.add(*last_failure)
    plans = _collapse_regions(sorted(best.values(), key=lambda p: p.sort_key(objective)))
    _annotate_alternatives(plans)
    for rank, item in enumerate(plans[:limit], start=1):
        item.rank = rank
    advice = _advice(workload, plans, rejected, constraints)
    if constraints.max_gpus is None and (
        rejected.count("over_max_gpus")
        or any(p.gpu_count >= DEFAULT_MAX_GPUS for p in plans[:limit])
    ):
        advice.append(
            f"Plans were capped at {DEFAULT_MAX_GPUS} GPUs; set max_gpus to weigh larger clusters."
        )
    return PlanResult(plans=plans[:limit], rejected=rejected, advice=advice, considered=considered)


def _describe(p: Plan) -> str:
    hours = "?" if p.est_hours is None else f"{p.est_hours:,.1f} h"
    total = "?" if p.est_total_usd is None else f"${p.est_total_usd:,.0f}"
    return f"${p.usd_per_hour:,.2f}/h, {hours}, {total}"


def _limit_rejection(p: Plan, c: Constraints) -> str | None:
    if c.max_usd_per_hour is not None and p.usd_per_hour > c.max_usd_per_hour:
        return "over_max_usd_per_hour"
    if c.max_hours is not None and p.est_hours is not None and p.est_hours > c.max_hours:
        return "over_max_hours"
    if (
        c.max_total_usd is not None
        and p.est_total_usd is not None
        and p.est_total_usd > c.max_total_usd
    ):
        return "over_max_total_usd"
    term = TERM_HOURS.get(p.offer.pricing_model)
    if term is not None and p.est_hours is None and not c.pricing_explicit:
        return "term_needs_run_length"
    if term is not None and p.est_hours is not None and p.est_hours < term * MIN_TERM_USE:
        return "run_too_short_for_term"
    return None


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
        warnings.append(f"{offer.gpu.slug} has no BF16: runs in FP16 with loss scaling.")
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
        and offer.intra_kind not in ("nvswitch", "nvlink", "infinity_fabric", "hccs")
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


def _collapse_regions(plans: list[Plan]) -> list[Plan]:
    """One plan per machine and price: the same offer at the same price in several regions is
    listed once, with the other regions named."""
    kept: dict[tuple, Plan] = {}
    for p in plans:
        key = (
            p.offer.provider,
            p.offer.instance_type,
            p.offer.pricing_model,
            p.nodes,
            round(p.usd_per_hour, 6),
        )
        first = kept.get(key)
        if first is None:
            kept[key] = p
        else:
            first.other_regions.append(p.offer.region)
    return list(kept.values())


def _annotate_alternatives(plans: list[Plan]) -> None:
    """Say when a subscription beats hourly for the same machine, and what spot saves."""
    by_machine: dict[tuple, dict[str, Plan]] = {}
    for p in plans:
        key = (p.offer.provider, p.offer.instance_type, p.offer.region, p.nodes)
        by_machine.setdefault(key, {})[p.offer.pricing_model] = p
    for models in by_machine.values():
        hourly = models.get("on_demand")
        if hourly is None or hourly.est_total_usd is None:
            continue
        for name in ("monthly", "yearly", "reserved_1y", "reserved_3y", "spot"):
            other = models.get(name)
            if (
                other is None
                or other.est_total_usd is None
                or other.est_total_usd >= hourly.est_total_usd
            ):
                continue
            saving = 100.0 * (1 - other.est_total_usd / hourly.est_total_usd)
            label = "Spot" if name == "spot" else name.replace("_", " ").capitalize()
            other.reasons.append(f"{label} beats on-demand by {saving:.0f}% for this run")


def _advice(
    workload: Workload, plans: list[Plan], rejected: Rejections, c: Constraints
) -> list[str]:
    advice: OrderedDict[str, None] = OrderedDict()
    spot = [p for p in plans if p.offer.pricing_model == "spot" and p.est_total_usd]
    on_demand = {
        (p.offer.provider, p.offer.instance_type, p.offer.region): p
        for p in plans
        if p.offer.pricing_model == "on_demand"
    }
    for p in spot:
        twin = on_demand.get((p.offer.provider, p.offer.instance_type, p.offer.region))
        if twin and twin.est_total_usd:
            saving = 100 * (1 - p.est_total_usd / twin.est_total_usd)
            if saving >= 20:
                advice[
                    f"Spot saves {saving:.0f}% on {p.offer.instance_type} with checkpoints every "
                    f"{SPOT_CHECKPOINT_MINUTES} minutes."
                ] = None
                break
    if rejected.count("stale_price") and not c.include_stale:
        advice[
            f"{rejected.count('stale_price')} offer(s) were left out because their prices are older than the "
            "staleness limit; set include_stale=true to see them flagged."
        ] = None
    if rejected.count("run_too_short_for_term"):
        advice["Monthly and reserved terms were left out: the run is shorter than half a term."] = (
            None
        )
    if not plans:
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
