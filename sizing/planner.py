"""The recommendation planner: workload + live offers -> ranked, explained plans. Pure: no Django.

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
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from .estimator import Estimate, GPUSpec, Topology, Workload, choose_sharding, estimate

# --- Rules, each with where it comes from --------------------------------------------------
# Below this free share of GPU memory a plan is flagged: allocator fragmentation and batch
# variance eat ~5-10% in practice (PyTorch CUDA caching allocator notes).
HEADROOM_WARN_PCT = 10.0
# A plan must leave at least this share of GPU memory free to count as fitting; between this and
# HEADROOM_WARN_PCT it fits with a warning. /api/estimate's min_gpus uses the same margin.
FIT_HEADROOM = 0.05
# Multi-node over an instance whose network speed is not recorded, and that has no RDMA fabric:
# assume ordinary cloud networking.
PLAIN_NETWORK_GBPS = 10.0
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
    include_stale: bool = True


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


def _billed_amount(hourly: float, pricing_model: str, hours: float | None) -> float | None:
    """Total USD for the run at ``hourly`` for all nodes; commitment terms bill whole terms."""
    if hours is None:
        return None
    term = TERM_HOURS.get(pricing_model)
    if term is None:
        return hourly * hours
    terms = max(1, math.ceil(hours / term - 1e-9))
    return hourly * term * terms


def _billed_total(offer: Offer, nodes: int, hours: float | None) -> tuple[float | None, str | None]:
    """Total USD for the run; commitment terms bill whole terms. Returns (total, note)."""
    total = _billed_amount(offer.usd_per_hour * nodes, offer.pricing_model, hours)
    term = TERM_HOURS.get(offer.pricing_model)
    if total is None or term is None:
        return total, None
    terms = max(1, math.ceil(hours / term - 1e-9))
    return total, f"{terms} x {offer.pricing_model.replace('_', ' ')} term billed in full"


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


# Kinds of step a hardware profile takes through NODE_COUNTS (see _Profile).
_OVER_MAX, _NO_FIT, _NO_THROUGHPUT, _OK = range(4)
# Two steps whose leading sort-key figures (at 1 USD/h) are this close may swap order once the
# real price multiplies them (float rounding); both are then ranked at the real price.
_TIE_TOLERANCE = 1e-9


@dataclass(frozen=True)
class _Step:
    """One node count of one hardware profile: its estimate and what became of it."""

    kind: int
    nodes: int
    total: int
    sharding: str | None = None
    estimate: Estimate | None = None
    reason: str = ""


class _Profile:
    """Everything about an offer that does not depend on its price or pricing model: the device,
    the topology and, node count by node count, the estimate and whether it fits.

    Offers of the same instance type in every region and pricing model share one profile, so
    the estimator runs once per profile and node count. Steps are computed as they are asked for.
    """

    def __init__(
        self, offer: Offer, workload: Workload, c: Constraints, cache: _EstimateCache, max_gpus: int
    ) -> None:
        self.gpus_per_node = max(1, int(offer.gpu_count))
        self.device = _device(offer)
        self.capacity = self.device.memory_gib
        self.intra = _intra_node_class(offer, self.gpus_per_node)
        self.offer = offer
        self.workload = workload
        self.c = c
        self.cache = cache
        self.max_gpus = max_gpus
        self.steps: list[_Step] = []
        self._nodes = iter(NODE_COUNTS)
        self._done = False
        self.routes: dict[str, _Route] = {}

    def step(self, index: int) -> _Step | None:
        while len(self.steps) <= index and not self._done:
            self._advance()
        return self.steps[index] if index < len(self.steps) else None

    def _advance(self) -> None:
        nodes = next(self._nodes, None)
        offer, c = self.offer, self.c
        if nodes is None or (nodes > 1 and (not c.allow_multi_node or offer.gpu_count < 1)):
            self._done = True
            return
        if nodes > 1 and offer.inter_slug is None:
            # No network between instances is recorded (containers, single-GPU pods): one node only.
            self._done = True
            return
        if nodes > 1 and self.workload.task == "inference" and not offer.inter_rdma:
            # Tensor-parallel serving across nodes over plain networking is not worth offering.
            self._done = True
            return
        total = self.gpus_per_node * nodes
        if total > self.max_gpus:
            self.steps.append(_Step(_OVER_MAX, nodes, total))
            self._done = True
            return
        topology = Topology(
            gpu_count=total,
            gpus_per_node=self.gpus_per_node,
            intra_node=self.intra,
            intra_bandwidth_gb_s=offer.intra_bandwidth_gb_s,
            inter_node_rdma=offer.inter_rdma,
            inter_node_gbps=offer.network_gbps
            or (None if offer.inter_rdma else PLAIN_NETWORK_GBPS),
        )
        sharding, est = self.cache.get(self.device, total, topology)
        if est.memory_per_gpu_gib > self.capacity * (1 - FIT_HEADROOM):
            reason = (
                "does_not_fit_memory" if nodes == 1 or c.allow_multi_node else "needs_multi_node"
            )
            self.steps.append(_Step(_NO_FIT, nodes, total, sharding, est, reason))
            return
        workload = self.workload
        if workload.tokens and workload.task != "inference" and est.est_hours is None:
            self.steps.append(_Step(_NO_THROUGHPUT, nodes, total, sharding, est))
            self._done = True
            return
        self.steps.append(_Step(_OK, nodes, total, sharding, est))


@dataclass
class _Route:
    """What one profile gives under one pricing model when no limit depends on the price: the
    steps that survive (contenders: those that can rank first at some price), or the failure."""

    considered: int
    passing: list[_Step]
    contenders: list[_Step]
    failure: tuple[str, _Step | None] | None  # (reason, the step that failed)


class _Candidate:
    """The best step of one offer: enough to rank, collapse and advise; a Plan is built only for
    the plans returned."""

    __slots__ = ("est_hours", "est_total_usd", "gpu_count", "key", "nodes", "offer",
                 "other_regions", "step", "usd_per_hour")  # fmt: skip

    def __init__(self, offer: Offer, step: _Step, objective: str) -> None:
        est = step.estimate
        hourly = offer.usd_per_hour * step.nodes
        hours = est.est_hours
        total = _billed_amount(hourly, offer.pricing_model, hours)
        gpu_count = step.total if offer.gpu_count >= 1 else offer.gpu_count
        self.offer = offer
        self.step = step
        self.nodes = step.nodes
        self.gpu_count = gpu_count
        self.usd_per_hour = hourly
        self.est_hours = hours
        self.est_total_usd = total
        self.other_regions: list[str] = []
        # The same figures, in the same order, as Plan.sort_key.
        total_key = total if total is not None else math.inf
        hours_key = hours if hours is not None else math.inf
        if objective == "fastest":
            speed = -(est.tokens_per_second or 0.0) * gpu_count
            self.key = (hours_key, speed, total_key, hourly)
        elif objective == "cheapest_hourly":
            self.key = (hourly, total_key, hours_key)
        else:
            self.key = (total_key, hourly, hours_key)


def plan(
    workload: Workload,
    offers: list[Offer],
    constraints: Constraints,
    *,
    objective: str = "cheapest",
    limit: int = 10,
    headroom: float = FIT_HEADROOM,
) -> PlanResult:
    """Rank every eligible (offer, node count) for ``workload``; see the module docstring.

    Work is shared: offers with the same hardware share one profile (estimates per node count),
    and unless a limit depends on the price (max_usd_per_hour, max_total_usd) the surviving node
    counts per profile and pricing model are found once, leaving each offer a price comparison.
    """
    c = constraints
    cache = _EstimateCache(workload, headroom)
    rejected = Rejections()
    best: dict[int, _Candidate] = {}
    considered = 0
    max_gpus = c.max_gpus or DEFAULT_MAX_GPUS
    price_limits = c.max_usd_per_hour is not None or c.max_total_usd is not None
    first_only = objective != "fastest" and workload.task == "inference"
    profiles: dict[tuple, _Profile] = {}

    def reject(reason: str, make_example) -> None:
        entry = rejected.by_reason.setdefault(reason, {"count": 0, "examples": []})
        entry["count"] += 1
        if len(entry["examples"]) < rejected.max_examples:
            entry["examples"].append(make_example())

    for offer in offers:
        reason = _constraint_rejection(offer, c)
        if reason:
            reject(reason, lambda offer=offer: offer.label)
            continue
        key = (id(offer.gpu), offer.gpu_count, offer.intra_kind, offer.intra_slug,
               offer.intra_bandwidth_gb_s, offer.inter_rdma, offer.network_gbps)  # fmt: skip
        profile = profiles.get(key)
        if profile is None:
            profile = profiles[key] = _Profile(offer, workload, c, cache, max_gpus)
        if price_limits:
            counted, found, failure = _walk(profile, offer, c, objective, first_only)
        else:
            route = profile.routes.get(offer.pricing_model)
            if route is None:
                route = profile.routes[offer.pricing_model] = _route(
                    profile, offer, c, objective, first_only
                )
            counted, failure, found = route.considered, route.failure, None
            if route.passing:
                steps = route.contenders if offer.usd_per_hour > 0 else route.passing
                for step in steps:
                    candidate = _Candidate(offer, step, objective)
                    if found is None or candidate.key < found.key:
                        found = candidate
        considered += counted
        if found is not None:
            current = best.get(offer.price_id)
            if current is None or found.key < current.key:
                best[offer.price_id] = found
        if offer.price_id in best:
            continue
        if failure is None and not c.allow_multi_node:
            failure = ("needs_multi_node", None)
        if failure:
            name = failure[0]
            if name == "does_not_fit_memory" and not c.allow_multi_node:
                name = "needs_multi_node"
            reject(
                name,
                lambda offer=offer, failure=failure, profile=profile: _failure_example(
                    offer, failure, profile, workload, max_gpus
                ),
            )
    ranked = _collapse_regions(sorted(best.values(), key=lambda p: p.key))
    plans = [_plan_from(candidate, workload) for candidate in ranked[:limit]]
    _annotate_alternatives(plans, ranked)
    for rank, item in enumerate(plans, start=1):
        item.rank = rank
    advice = _advice(workload, ranked, rejected, constraints)
    advice.extend(_what_would_fit(workload, offers, ranked))
    if constraints.max_gpus is None and (
        rejected.count("over_max_gpus") or any(p.gpu_count >= DEFAULT_MAX_GPUS for p in plans)
    ):
        advice.append(
            f"Plans were capped at {DEFAULT_MAX_GPUS} GPUs; set max_gpus to weigh larger clusters."
        )
    return PlanResult(plans=plans, rejected=rejected, advice=advice, considered=considered)


class _Walk:
    """The node counts of one profile in order: how many were considered, the fitting steps, and
    the last reason one did not fit (what a rejection reports when none passes)."""

    def __init__(self, profile: _Profile) -> None:
        self.profile = profile
        self.considered = 0
        self.failure: tuple[str, _Step | None] | None = None

    def fitting(self) -> Iterator[_Step]:
        fitted_any = False
        index = 0
        while (step := self.profile.step(index)) is not None:
            index += 1
            if step.kind == _OVER_MAX:
                if not fitted_any and self.failure is None:
                    self.failure = ("over_max_gpus", step)
                return
            self.considered += 1
            if step.kind == _NO_FIT:
                self.failure = (step.reason, step)
                continue
            fitted_any = True
            if step.kind == _NO_THROUGHPUT:
                self.failure = ("no_throughput_figure", step)
                return
            yield step


def _route(
    profile: _Profile, offer: Offer, c: Constraints, objective: str, first_only: bool
) -> _Route:
    """Walk a profile's steps under one pricing model where no limit depends on the price."""
    walk = _Walk(profile)
    passing: list[_Step] = []
    for step in walk.fitting():
        limit_failure = _limit_failure(
            c, offer.pricing_model, step.estimate.est_hours, hourly=None, total=None
        )
        if limit_failure:
            walk.failure = (limit_failure, step)
            continue
        passing.append(step)
        if first_only:
            break
    contenders = passing
    if len(passing) > 1:
        # Rank at 1 USD/h: a step whose leading figure is clearly worse stays worse at any price.
        unit = replace(offer, usd_per_hour=1.0)
        leads = [_Candidate(unit, step, objective).key[0] for step in passing]
        bound = min(leads) * (1 + _TIE_TOLERANCE)
        contenders = [step for step, lead in zip(passing, leads, strict=True) if lead <= bound]
    return _Route(walk.considered, passing, contenders, None if passing else walk.failure)


def _walk(
    profile: _Profile, offer: Offer, c: Constraints, objective: str, first_only: bool
) -> tuple[int, _Candidate | None, tuple | None]:
    """Walk a profile's steps for one offer at its price (limits on the price apply)."""
    walk = _Walk(profile)
    found: _Candidate | None = None
    for step in walk.fitting():
        candidate = _Candidate(offer, step, objective)
        limit_failure = _limit_failure(
            c, offer.pricing_model, candidate.est_hours,
            hourly=candidate.usd_per_hour, total=candidate.est_total_usd,
        )  # fmt: skip
        if limit_failure:
            walk.failure = (limit_failure, step)
            continue
        if found is None or candidate.key < found.key:
            found = candidate
        if first_only:
            break
    return walk.considered, found, walk.failure


def _failure_example(
    offer: Offer, failure: tuple, profile: _Profile, workload: Workload, max_gpus: int
) -> str:
    """The example a rejection lists, written only for the first few of each reason."""
    step = failure[1]
    if step is None:
        return offer.label
    if step.kind == _OVER_MAX:
        return f"{offer.label}: needs more than {max_gpus} GPUs"
    if step.kind == _NO_FIT:
        return (
            f"{offer.label}: needs {step.estimate.memory_per_gpu_gib:.1f} GiB per GPU on "
            f"{step.total} GPU(s), has {profile.capacity:g}"
        )
    if step.kind == _NO_THROUGHPUT:
        return (
            f"{offer.label}: the catalog has no dense {workload.precision} figure for "
            f"{offer.gpu.slug}"
        )
    candidate = _Candidate(offer, step, "cheapest")
    return f"{offer.label} x{step.nodes} node(s): {_describe(candidate)}"


def _plan_from(candidate: _Candidate, workload: Workload) -> Plan:
    step = candidate.step
    device_capacity = _device(candidate.offer).memory_gib
    result = _make_plan(
        candidate.offer, workload, step.nodes, step.total, step.sharding, step.estimate,
        device_capacity,
    )  # fmt: skip
    result.other_regions = candidate.other_regions
    return result


def _describe(p) -> str:
    hours = "?" if p.est_hours is None else f"{p.est_hours:,.1f} h"
    total = "?" if p.est_total_usd is None else f"${p.est_total_usd:,.0f}"
    return f"${p.usd_per_hour:,.2f}/h, {hours}, {total}"


def _limit_failure(
    c: Constraints,
    pricing_model: str,
    hours: float | None,
    *,
    hourly: float | None,
    total: float | None,
) -> str | None:
    """Why a plan breaks a limit; ``hourly``/``total`` None when no limit on them is set."""
    if c.max_usd_per_hour is not None and hourly > c.max_usd_per_hour:
        return "over_max_usd_per_hour"
    if c.max_hours is not None and hours is not None and hours > c.max_hours:
        return "over_max_hours"
    if c.max_total_usd is not None and total is not None and total > c.max_total_usd:
        return "over_max_total_usd"
    term = TERM_HOURS.get(pricing_model)
    if term is not None and hours is None and not c.pricing_explicit:
        return "term_needs_run_length"
    if term is not None and hours is not None and hours < term * MIN_TERM_USE:
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


def _collapse_regions(plans: list) -> list:
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


def _annotate_alternatives(plans: list[Plan], ranked: list) -> None:
    """Say when a subscription beats hourly for the same machine, and what spot saves.

    ``ranked`` is every collapsed candidate (the same machine's on-demand plan may rank below
    the ones returned); only the returned ``plans`` get the reason.
    """
    on_demand: dict[tuple, Any] = {}
    for p in ranked:
        if p.offer.pricing_model == "on_demand":
            on_demand[(p.offer.provider, p.offer.instance_type, p.offer.region, p.nodes)] = p
    for other in plans:
        name = other.offer.pricing_model
        if name not in ("monthly", "yearly", "reserved_1y", "reserved_3y", "spot"):
            continue
        hourly = on_demand.get(
            (other.offer.provider, other.offer.instance_type, other.offer.region, other.nodes)
        )
        if hourly is None or hourly.est_total_usd is None:
            continue
        if other.est_total_usd is None or other.est_total_usd >= hourly.est_total_usd:
            continue
        saving = 100.0 * (1 - other.est_total_usd / hourly.est_total_usd)
        label = "Spot" if name == "spot" else name.replace("_", " ").capitalize()
        other.reasons.append(f"{label} beats on-demand by {saving:.0f}% for this run")


def _what_would_fit(workload: Workload, offers: list[Offer], ranked: list) -> list[str]:
    """Cheaper shapes of the same job, checked with the estimator: full checkpointing on one
    80 GB GPU, QLoRA on one 24 GB card. Said only when the best plan needs more than that."""
    if workload.task == "inference" or (ranked and ranked[0].gpu_count <= 1):
        return []
    cards: dict[int, GPUSpec] = {}
    for offer in offers:
        size = round(offer.gpu.memory_gib)
        if size in (24, 80) and offer.gpu_count >= 1:
            cards.setdefault(size, offer.gpu)
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


def _advice(workload: Workload, plans: list, rejected: Rejections, c: Constraints) -> list[str]:
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
    if rejected.count("run_too_short_for_term") and not any(
        p.offer.pricing_model in TERM_HOURS for p in plans
    ):
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
