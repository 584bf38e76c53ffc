"""The recommendation planner: workload + live offers -> ranked, explained plans. Pure: no Django.

For every eligible (instance type, region, pricing model, node count) it runs the estimator on the
topology that offer gives, rejects what does not fit or breaks a constraint (saying why), and
ranks the rest by the objective. Host rules and warnings follow the practice the seed guides
teach (see docs/sizing.md): RAM at least 2x GPU memory for training, about 4 vCPUs per GPU, NVMe
for data, RDMA of at least 100 Gbit/s between nodes, no GeForce in datacenters, no shared GPUs
for training, checkpoints on spot.
"""

from __future__ import annotations

import bisect
import heapq
import math
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from .estimator import (
    Estimate,
    GPUSpec,
    Topology,
    Workload,
    choose_sharding,
    estimate,
    gpu_hours_floor,
    memory_per_gpu_gib,
)

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


@dataclass(frozen=True, slots=True)
class Offer:
    """One current price of one instance type in one region. Slotted: a worker keeps tens of
    thousands (see sizing.selectors.offer_book)."""

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

    def covers(self, offer: Offer) -> bool:
        """Whether the caller asked about this offer at all (pricing models, GPUs, providers,
        regions, countries, mainland China). Offers outside are skipped, not counted as rejected.
        """
        return (
            offer.pricing_model in self.pricing
            and (not self.gpus or offer.gpu.slug in self.gpus)
            and (not self.providers or offer.provider in self.providers)
            and (not self.regions or offer.region in self.regions)
            and (not self.countries or offer.country in self.countries)
            and (self.mainland_china is None or offer.region_mainland_china == self.mainland_china)
        )


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
        return _rank_key(
            self.usd_per_hour, self.est_total_usd, self.est_hours, self.estimate, self.gpu_count,
            objective,
        )  # fmt: skip


@dataclass
class Rejections:
    """Counts by reason, with a few examples each."""

    max_examples: int = 3
    by_reason: dict[str, dict[str, Any]] = field(default_factory=dict)

    def add(self, reason: str, items: Sequence, example: Callable[[Any], str]) -> None:
        """Count ``items`` under ``reason``, writing examples for the first few only."""
        entry = self.by_reason.setdefault(reason, {"count": 0, "examples": []})
        entry["count"] += len(items)
        room = self.max_examples - len(entry["examples"])
        entry["examples"].extend(example(item) for item in items[: max(room, 0)])

    def count(self, reason: str) -> int:
        return self.by_reason.get(reason, {}).get("count", 0)


@dataclass
class PlanResult:
    plans: list[Plan]
    rejected: Rejections
    advice: list[str]
    considered: int


def _hardware_key(offer: Offer) -> tuple:
    """What an offer's estimates depend on: the GPU, how many, and how they are joined."""
    return (
        id(offer.gpu), offer.gpu_count, offer.intra_kind, offer.intra_slug,
        offer.intra_bandwidth_gb_s, offer.inter_slug is None, offer.inter_rdma, offer.network_gbps,
    )  # fmt: skip


class _Group:
    """Offers with the same hardware and pricing model, cheapest first (then in offer order):
    they share every estimate, so their ranking keys rise with their price."""

    __slots__ = ("entries", "first", "hardware", "pricing_model")

    def __init__(self, hardware: tuple, first: Offer) -> None:
        self.hardware = hardware
        self.pricing_model = first.pricing_model
        self.first = first
        self.entries: list[tuple[float, int, Offer]] = []


class OfferBook:
    """Offers arranged for the planner: grouped by hardware and pricing model, each group in
    price order, with an index from (provider, instance type, region, pricing model) to the
    offer. Building it is the costly part of loading a large catalog, so the selector keeps
    one per catalog version and every recommendation reuses it.
    """

    def __init__(self, offers: list[Offer]) -> None:
        self.offers = offers
        groups: dict[tuple, _Group] = {}
        self.by_machine: dict[tuple[str, str, str, str], Offer] = {}
        for index, offer in enumerate(offers):
            hardware = _hardware_key(offer)
            group = groups.get((hardware, offer.pricing_model))
            if group is None:
                group = groups[(hardware, offer.pricing_model)] = _Group(hardware, offer)
            group.entries.append((offer.usd_per_hour, index, offer))
            machine = (offer.provider, offer.instance_type, offer.region, offer.pricing_model)
            self.by_machine.setdefault(machine, offer)
        for group in groups.values():
            group.entries.sort(key=lambda entry: (entry[0], entry[1]))
        self.groups = list(groups.values())
        fresh = [offer.observed_at for offer in offers if not offer.stale]
        # When the first fresh price turns stale (the offers' stale flags are then out of date).
        self.oldest_fresh: datetime | None = min(fresh) if fresh else None

    def __len__(self) -> int:
        return len(self.offers)


class _EstimateCache:
    """Estimates for one workload per (GPU, GPU count, topology), without the working: the
    planner weighs thousands of shapes and writes notes only for the plans it returns."""

    def __init__(self, workload: Workload, headroom: float) -> None:
        self.workload = workload
        self.headroom = headroom
        self._cache: dict[tuple, tuple[str | None, Estimate]] = {}
        self._by_sharding: dict[str, Workload] = {}
        self._memory: dict[tuple, tuple[str | None, float]] = {}

    def _sharded(self, gpu: GPUSpec, gpu_count: int) -> Workload:
        """The workload with the sharding it runs with on ``gpu_count`` x ``gpu``."""
        workload = self.workload
        sharding = workload.sharding
        if sharding is None and workload.task != "inference":
            sharding = (
                choose_sharding(workload, gpu, gpu_count, self.headroom)
                if gpu_count > 1
                else "none"
            )
        if sharding is None or sharding == workload.sharding:
            return workload
        sharded = self._by_sharding.get(sharding)
        if sharded is None:
            sharded = self._by_sharding[sharding] = replace(workload, sharding=sharding)
        return sharded

    def memory(self, gpu: GPUSpec, gpu_count: int) -> tuple[str | None, float]:
        """The sharding and per-GPU memory (GiB) on ``gpu_count`` x ``gpu``: enough to tell a
        fit, for any topology."""
        key = (id(gpu), gpu_count)  # devices live as long as the planning run
        hit = self._memory.get(key)
        if hit is None:
            workload = self._sharded(gpu, gpu_count)
            hit = self._memory[key] = (workload.sharding, memory_per_gpu_gib(workload, gpu_count))
        return hit

    def get(self, gpu: GPUSpec, gpu_count: int, topology: Topology) -> tuple[str | None, Estimate]:
        key = (
            id(gpu), gpu_count, topology.gpus_per_node, topology.intra_node,
            topology.intra_bandwidth_gb_s, topology.inter_node_rdma, topology.inter_node_gbps,
        )  # fmt: skip
        hit = self._cache.get(key)
        if hit is None:
            workload = self._sharded(gpu, gpu_count)
            est = estimate(
                workload, gpu=gpu, gpu_count=gpu_count, topology=topology, explain=False,
                count_min_gpus=False,
            )  # fmt: skip
            hit = self._cache[key] = (workload.sharding, est)
        return hit

    def explained(self, gpu: GPUSpec, gpu_count: int, topology: Topology) -> Estimate:
        """The same estimate with its working (notes), for a plan that is returned."""
        workload = self._sharded(gpu, gpu_count)
        return estimate(workload, gpu=gpu, gpu_count=gpu_count, topology=topology)


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
    """Reasons an offer in scope is out before any estimate."""
    if offer.stale and not c.include_stale:
        return "stale_price"
    return _gpu_rejection(offer, c)


def _gpu_rejection(offer: Offer, c: Constraints) -> str | None:
    """Reasons every offer of this GPU is out (the same for a whole offer group)."""
    if c.datacenter_only and not offer.gpu_datacenter_use_allowed:
        return "consumer_gpu_excluded"
    if c.min_gpu_memory_gb is not None and offer.gpu.memory_gib < c.min_gpu_memory_gb:
        return "below_min_gpu_memory"
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
    estimate: Estimate | None = None  # None for a step that does not fit (memory_gib says why)
    reason: str = ""
    topology: Topology | None = None
    memory_gib: float = 0.0


class _Profile:
    """Everything about an offer that does not depend on its price or pricing model: the device,
    the topology and, node count by node count, the estimate and whether it fits.

    Offers of the same instance type in every region and pricing model share one profile, so
    the estimator runs once per profile and node count. Steps are computed as they are asked for,
    in two stages: a shape (node count and memory fit, cheap) and then the step (with the time
    model), so a walk can look past node counts it need not estimate.
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
        self.shapes: list[_Step] = []
        self.steps: list[_Step] = []
        self._nodes = iter(NODE_COUNTS)
        self._done = False
        self._steps_done = False
        self.routes: dict[tuple[str, bool], _Route] = {}

    def shape(self, index: int) -> _Step | None:
        """The step at ``index`` as far as memory tells: over the GPU cap, not fitting, or fitting
        (``_OK`` with no estimate yet). None past the last node count."""
        while len(self.shapes) <= index and not self._done:
            self._advance()
        return self.shapes[index] if index < len(self.shapes) else None

    def step(self, index: int) -> _Step | None:
        """The step at ``index`` with its estimate; None past the last one (a step without a
        throughput figure is the last)."""
        while len(self.steps) <= index and not self._steps_done:
            shape = self.shape(len(self.steps))
            if shape is None:
                self._steps_done = True
                break
            step = self._estimated(shape)
            self.steps.append(step)
            self._steps_done = step.kind == _NO_THROUGHPUT
        return self.steps[index] if index < len(self.steps) else None

    def _estimated(self, shape: _Step) -> _Step:
        if shape.kind != _OK:
            return shape
        sharding, est = self.cache.get(self.device, shape.total, shape.topology)
        workload = self.workload
        kind = _OK
        if workload.tokens and workload.task != "inference" and est.est_hours is None:
            kind = _NO_THROUGHPUT
        return _Step(
            kind, shape.nodes, shape.total, sharding, est, "", shape.topology, shape.memory_gib
        )

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
            self.shapes.append(_Step(_OVER_MAX, nodes, total))
            self._done = True
            return
        # Inside one node the network between nodes plays no part: machines that differ only
        # in their NICs share the estimate.
        one_node = nodes == 1
        topology = Topology(
            gpu_count=total,
            gpus_per_node=self.gpus_per_node,
            intra_node=self.intra,
            intra_bandwidth_gb_s=offer.intra_bandwidth_gb_s,
            inter_node_rdma=offer.inter_rdma and not one_node,
            inter_node_gbps=None
            if one_node
            else offer.network_gbps or (None if offer.inter_rdma else PLAIN_NETWORK_GBPS),
        )
        sharding, memory = self.cache.memory(self.device, total)
        if memory > self.capacity * (1 - FIT_HEADROOM):
            reason = (
                "does_not_fit_memory" if nodes == 1 or c.allow_multi_node else "needs_multi_node"
            )
            self.shapes.append(_Step(_NO_FIT, nodes, total, sharding, None, reason, None, memory))
            return
        self.shapes.append(_Step(_OK, nodes, total, sharding, None, "", topology, memory))


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
        self.key = _rank_key(hourly, total, hours, est, gpu_count, objective)


def _rank_key(
    hourly: float,
    total: float | None,
    hours: float | None,
    est: Estimate,
    gpu_count: float,
    objective: str,
) -> tuple:
    """The figures a plan ranks by, in the same order as Plan.sort_key."""
    total_key = total if total is not None else math.inf
    hours_key = hours if hours is not None else math.inf
    if objective == "fastest":
        return (hours_key, -(est.tokens_per_second or 0.0) * gpu_count, total_key, hourly)
    if objective == "cheapest_hourly":
        return (hourly, total_key, hours_key)
    return (total_key, hourly, hours_key)


def _entry_key(usd_per_hour: float, offer: Offer, step: _Step, objective: str) -> tuple:
    """_Candidate(offer, step, objective).key without building the candidate."""
    hourly = usd_per_hour * step.nodes
    hours = step.estimate.est_hours
    total = _billed_amount(hourly, offer.pricing_model, hours)
    gpu_count = step.total if offer.gpu_count >= 1 else offer.gpu_count
    return _rank_key(hourly, total, hours, step.estimate, gpu_count, objective)


def plan(
    workload: Workload,
    offers: list[Offer] | OfferBook,
    constraints: Constraints,
    *,
    objective: str = "cheapest",
    limit: int = 10,
    headroom: float = FIT_HEADROOM,
) -> PlanResult:
    """Rank every eligible (offer, node count) for ``workload``; see the module docstring.

    ``offers`` may hold offers outside the constraints' scope (providers, regions, countries,
    GPUs, pricing models): they are skipped without being counted.

    Work is shared, so a large catalog costs little more than a small one:
    - offers with the same hardware share one profile (estimates per node count);
    - unless a limit depends on the price (max_usd_per_hour, max_total_usd), the surviving node
      counts per profile and pricing model are found once, and a whole group of offers is
      accepted or rejected at once;
    - within a group the ranking key rises with the price, so groups are merged lazily and only
      the offers that can reach the answer are ranked one by one.
    """
    return _Planner(workload, constraints, objective, headroom).run(
        offers if isinstance(offers, OfferBook) else OfferBook(offers), limit
    )


class _OffersOf(Sequence):
    """The offers of a group's (usd, index, offer) entries, without copying them: a rejection
    counts them all but writes examples for the first few only."""

    __slots__ = ("entries",)

    def __init__(self, entries: list[tuple[float, int, Offer]]) -> None:
        self.entries = entries

    def __len__(self) -> int:
        return len(self.entries)

    def __getitem__(self, key: int | slice) -> Offer | list[Offer]:
        if isinstance(key, slice):
            return [entry[2] for entry in self.entries[key]]
        return self.entries[key][2]


# How many of the best spot plans the spot advice looks at for an on-demand twin.
SPOT_ADVICE_SCAN = 1000


class _Planner:
    """One planning run: the constraints, the shared estimates and profiles, the tallies."""

    def __init__(self, workload: Workload, c: Constraints, objective: str, headroom: float) -> None:
        self.workload = workload
        self.c = c
        self.objective = objective
        self.cache = _EstimateCache(workload, headroom)
        self.max_gpus = c.max_gpus or DEFAULT_MAX_GPUS
        self.price_limits = c.max_usd_per_hour is not None or c.max_total_usd is not None
        self.first_only = objective != "fastest" and workload.task == "inference"
        self.profiles: dict[tuple, _Profile] = {}
        self.rejected = Rejections()
        self.considered = 0
        self.cards: dict[int, GPUSpec] = {}  # a 24 GB and an 80 GB GPU among the offers asked about

    def profile(self, hardware: tuple, offer: Offer) -> _Profile:
        profile = self.profiles.get(hardware)
        if profile is None:
            profile = self.profiles[hardware] = _Profile(
                offer, self.workload, self.c, self.cache, self.max_gpus
            )
        return profile

    def route(self, profile: _Profile, offer: Offer, prune: bool = True) -> _Route:
        # Hourly pricing models (on demand, spot) bill alike, so they share one route; each
        # commitment term has its own.
        billing = offer.pricing_model if offer.pricing_model in TERM_HOURS else "hourly"
        route = profile.routes.get((billing, prune))
        if route is None:
            route = profile.routes[(billing, prune)] = _route(
                profile, offer, self.c, self.objective, self.first_only, prune
            )
        return route

    def reject(self, reason: str, offers: Sequence[Offer], failure: tuple | None = None) -> None:
        """Count ``offers`` under ``reason``; ``failure`` (reason, step) writes the examples."""

        def example(offer: Offer) -> str:
            if failure is None:
                return offer.label
            profile = self.profiles[_hardware_key(offer)]
            return _failure_example(offer, failure, profile, self.workload, self.max_gpus)

        self.rejected.add(reason, offers, example)

    def reject_failure(self, failure: tuple | None, offers: Sequence[Offer]) -> None:
        if failure is None and not self.c.allow_multi_node:
            failure = ("needs_multi_node", None)
        if failure is None:
            return
        name = failure[0]
        if name == "does_not_fit_memory" and not self.c.allow_multi_node:
            name = "needs_multi_node"
        self.reject(name, offers, failure)

    def eligible(self, group: _Group) -> list[tuple[float, int, Offer]]:
        """The group's offers in scope and not ruled out by a constraint (those are counted)."""
        c = self.c
        first = group.first
        if first.pricing_model not in c.pricing or (c.gpus and first.gpu.slug not in c.gpus):
            return []
        entries = group.entries
        if c.providers or c.regions or c.countries or c.mainland_china is not None:
            entries = [entry for entry in entries if c.covers(entry[2])]
        size = round(first.gpu.memory_gib)
        if entries and size in (24, 80) and first.gpu_count >= 1:
            self.cards.setdefault(size, first.gpu)  # for _what_would_fit, rejected or not
        if not c.include_stale:
            stale = [entry[2] for entry in entries if entry[2].stale]
            if stale:
                self.reject("stale_price", stale)
                entries = [entry for entry in entries if not entry[2].stale]
        if entries:
            reason = _gpu_rejection(first, c)
            if reason:
                self.reject(reason, _OffersOf(entries))
                return []
        return entries

    def stream(self, entries: list, route: _Route) -> Iterator[tuple]:
        """(key, offer index, offer, step) for each offer of a group, in rising key order."""
        for usd, index, offer in entries:
            key, step = _best_step(usd, offer, route, self.objective)
            yield key, index, offer, step

    def walk(self, group: _Group, entries: list) -> tuple[Any, int, int]:
        """A group under price limits (max_usd_per_hour, max_total_usd): which node counts pass
        depends on each offer's price. Rejects the offers nothing passes for, and returns a
        factory of streams of the others (in key order), how many passed and how many node
        counts were weighed.

        Every limit is monotone in the price and the group is in price order, so each step
        passes for a prefix of the offers: a bisection per step finds where, the offers fall
        into segments that share their passing steps, and each offer is ranked only against
        its segment's contenders. Same answers as walking every offer at its price (``_walk``).
        """
        c, objective = self.c, self.objective
        profile = self.profile(group.hardware, group.first)
        pricing_model = group.pricing_model
        n = len(entries)
        # The walk with the price left aside: steps that fit, with the node counts weighed up
        # to each, and what a walk that passes nothing ends on.
        ok: list[tuple[_Step, int]] = []
        # The last step of the whole walk: ("ok", step), (reason, step) for one that does not
        # fit, or ("pending", index) for a fitting one left unestimated (see below).
        last: tuple[str, Any] | None = None
        terminal: tuple[str, _Step] | None = None
        weighed_all = index = 0
        # Once a step passes every limit the price leaves alone and no larger node count can be
        # cheaper at any price (_dominated), larger counts can never be an offer's best plan:
        # wherever one passes the price limits, that step passes them too and ranks first. The
        # walk goes on through shapes only, to end where a full walk would (rejections report
        # its last step). Not for a free offer: at 0 USD/h every total ties.
        prune = objective in ("cheapest", "cheapest_hourly") and entries[0][0] > 0
        best_total: float | None = None  # lowest total at 1 USD/h among such steps
        dominated = False
        while (step := profile.shape(index) if dominated else profile.step(index)) is not None:
            index += 1
            if step.kind == _OVER_MAX:
                if last is None:
                    terminal = ("over_max_gpus", step)
                break
            if step.kind == _NO_FIT:
                weighed_all += 1
                last = (step.reason, step)
                continue
            if dominated:
                last = ("pending", index - 1)
                continue
            weighed_all += 1
            if step.kind == _NO_THROUGHPUT:
                terminal = ("no_throughput_figure", step)
                break
            ok.append((step, weighed_all))
            last = ("ok", step)
            if prune and _fixed_failure(c, pricing_model, step.estimate.est_hours) is None:
                total = _billed_amount(float(step.nodes), pricing_model, step.estimate.est_hours)
                if total is not None:
                    best_total = total if best_total is None else min(best_total, total)
                dominated = _dominated(profile, step, best_total, objective, c)

        def failure_at(step: _Step, usd: float) -> str | None:
            hourly = usd * step.nodes
            total = _billed_amount(hourly, pricing_model, step.estimate.est_hours)
            return _limit_failure(
                c, pricing_model, step.estimate.est_hours, hourly=hourly, total=total
            )

        # Step i passes for offers [0, cuts[i]).
        cuts = [
            bisect.bisect_left(
                range(n), True, key=lambda i, s=step: failure_at(s, entries[i][0]) is not None
            )
            for step, _ in ok
        ]
        passed = max(cuts, default=0)
        weighed = weighed_all * (n - passed)
        segments: list[tuple[int, int, list[_Step]]] = []
        start = 0
        for end in sorted(set(cuts)):
            if end <= start or start >= passed:
                continue
            steps = [(step, upto) for (step, upto), cut in zip(ok, cuts, strict=True) if cut >= end]
            if self.first_only:  # the walk stops at the first step that passes
                steps = steps[:1]
                weighed += steps[0][1] * (end - start)
            else:
                weighed += weighed_all * (end - start)
            passing = [step for step, _ in steps]
            leads = [_entry_key(1.0, group.first, step, objective)[0] for step in passing]
            segments.append((start, end, _Route(0, passing, _contenders(passing, leads), None)))
            start = end
        if passed < n:
            offers = _OffersOf(entries[passed:])
            if terminal is not None or last is None or last[0] not in ("ok", "pending"):
                self.reject_failure(terminal or last, offers)
            else:
                # The last step failed on a limit. Which limit is monotone in the price (the
                # hourly cap last), so the offers fall into at most three runs. A step left
                # unestimated is estimated now: rejections name the same reason as a full walk.
                step = last[1] if last[0] == "ok" else profile.step(last[1])
                begin = passed
                while begin < n:
                    reason = failure_at(step, entries[begin][0])
                    end = bisect.bisect_left(
                        range(begin, n), True,
                        key=lambda i, r=reason: failure_at(step, entries[i][0]) != r,
                    ) + begin  # fmt: skip
                    self.reject_failure((reason, step), offers[begin - passed : end - passed])
                    begin = end

        def stream() -> Iterator[tuple]:
            for seg_start, seg_end, route in segments:
                yield from self.stream(entries[seg_start:seg_end], route)

        return stream, passed, weighed

    def candidate(self, offer: Offer) -> _Candidate | None:
        """The best plan of one offer, or None when it is out of scope or nothing passes."""
        if not self.c.covers(offer) or _constraint_rejection(offer, self.c):
            return None
        profile = self.profile(_hardware_key(offer), offer)
        if self.price_limits:
            return _walk(profile, offer, self.c, self.objective, self.first_only)[1]
        route = self.route(profile, offer, prune=offer.usd_per_hour > 0)
        if not route.passing:
            return None
        _, step = _best_step(offer.usd_per_hour, offer, route, self.objective)
        return _Candidate(offer, step, self.objective)

    def run(self, book: OfferBook, limit: int) -> PlanResult:
        sources: list[tuple[str, Any]] = []  # (pricing model, a fresh stream of the group)
        priced = 0  # offers with at least one passing plan
        term_priced = False
        for group in book.groups:
            entries = self.eligible(group)
            if not entries:
                continue
            first = group.first
            if self.price_limits:
                make, passed, counted = self.walk(group, entries)
                self.considered += counted
            else:
                profile = self.profile(group.hardware, first)
                # A free offer ties every total, so it needs every node count weighed.
                route = self.route(profile, first, prune=entries[0][0] > 0)
                self.considered += route.considered * len(entries)
                if not route.passing:
                    self.reject_failure(route.failure, _OffersOf(entries))
                passed = len(entries) if route.passing else 0

                def make(entries=entries, route=route) -> Iterator[tuple]:
                    return self.stream(entries, route)

            if passed:
                sources.append((group.pricing_model, make))
                priced += passed
                term_priced = term_priced or group.pricing_model in TERM_HOURS
        ranked = self._top(sources, limit)
        plans = [self._plan_from(candidate) for candidate in ranked]
        for rank, item in enumerate(plans, start=1):
            item.rank = rank
        self._annotate_alternatives(plans, book)
        advice = self._advice(plans, priced, term_priced, sources, book)
        advice.extend(self._what_would_fit(self.cards, plans))
        if self.c.max_gpus is None and (
            self.rejected.count("over_max_gpus")
            or any(p.gpu_count >= DEFAULT_MAX_GPUS for p in plans)
        ):
            advice.append(
                f"Plans were capped at {DEFAULT_MAX_GPUS} GPUs; set max_gpus to weigh larger clusters."
            )
        return PlanResult(
            plans=plans, rejected=self.rejected, advice=advice, considered=self.considered
        )

    def _top(self, sources: list, limit: int) -> list[_Candidate]:
        """The best ``limit`` plans, one per machine and price: the same offer at the same price
        in several regions is listed once, with the other regions named."""
        kept: dict[tuple, _Candidate] = {}
        ranked: list[_Candidate] = []
        if limit <= 0:
            return ranked
        for key, _index, offer, step in heapq.merge(*(make() for _, make in sources)):
            if len(ranked) >= limit and key > ranked[-1].key:
                break  # every later offer ranks lower, and none can be a listed plan's twin
            same = (
                offer.provider, offer.instance_type, offer.pricing_model, step.nodes,
                round(offer.usd_per_hour * step.nodes, 6),
            )  # fmt: skip
            first = kept.get(same)
            if first is not None:
                first.other_regions.append(offer.region)
            elif len(ranked) < limit:
                kept[same] = candidate = _Candidate(offer, step, self.objective)
                ranked.append(candidate)
        return ranked

    def _plan_from(self, candidate: _Candidate) -> Plan:
        step = candidate.step
        device = _device(candidate.offer)
        est = self.cache.explained(device, step.total, step.topology)
        result = _make_plan(
            candidate.offer, self.workload, step.nodes, step.total, step.sharding, est,
            device.memory_gib,
        )  # fmt: skip
        result.other_regions = candidate.other_regions
        return result

    def _twin(self, offer: Offer, book: OfferBook) -> _Candidate | None:
        """The best plan of the same machine in the same region on demand, if it has one."""
        twin = book.by_machine.get((offer.provider, offer.instance_type, offer.region, "on_demand"))
        return None if twin is None else self.candidate(twin)

    def _annotate_alternatives(self, plans: list[Plan], book: OfferBook) -> None:
        """Say when a subscription or spot beats on-demand for the same machine and run."""
        for other in plans:
            name = other.offer.pricing_model
            if name not in ("monthly", "yearly", "reserved_1y", "reserved_3y", "spot"):
                continue
            hourly = self._twin(other.offer, book)
            if hourly is None or hourly.nodes != other.nodes or hourly.est_total_usd is None:
                continue
            if other.est_total_usd is None or other.est_total_usd >= hourly.est_total_usd:
                continue
            saving = 100.0 * (1 - other.est_total_usd / hourly.est_total_usd)
            label = "Spot" if name == "spot" else name.replace("_", " ").capitalize()
            other.reasons.append(f"{label} beats on-demand by {saving:.0f}% for this run")

    def _spot_saving(self, sources: list, book: OfferBook) -> str | None:
        """What spot saves on the best-ranked spot plan with an on-demand twin (20% or more)."""
        spot = [make() for pricing_model, make in sources if pricing_model == "spot"]
        for seen, (_key, _index, offer, step) in enumerate(heapq.merge(*spot)):
            if seen >= SPOT_ADVICE_SCAN:
                break
            plan_ = _Candidate(offer, step, self.objective)
            twin = self._twin(offer, book)
            if not (plan_.est_total_usd and twin and twin.est_total_usd):
                continue
            saving = 100 * (1 - plan_.est_total_usd / twin.est_total_usd)
            if saving >= 20:
                return (
                    f"Spot saves {saving:.0f}% on {offer.instance_type} with checkpoints every "
                    f"{SPOT_CHECKPOINT_MINUTES} minutes."
                )
        return None

    def _advice(
        self, plans: list[Plan], priced: int, term_priced: bool, sources: list, book: OfferBook
    ) -> list[str]:
        workload, c, rejected = self.workload, self.c, self.rejected
        advice: OrderedDict[str, None] = OrderedDict()
        spot = self._spot_saving(sources, book)
        if spot:
            advice[spot] = None
        if rejected.count("stale_price") and not c.include_stale:
            advice[
                f"{rejected.count('stale_price')} offer(s) were left out because their prices are older than the "
                "staleness limit; set include_stale=true to see them flagged."
            ] = None
        if rejected.count("run_too_short_for_term") and not term_priced:
            advice[
                "Monthly and reserved terms were left out: the run is shorter than half a term."
            ] = None
        if not priced:
            if rejected.count("over_max_total_usd") or rejected.count("over_max_hours"):
                advice[
                    "Train on fewer tokens or raise max_total_usd / max_hours: some plans fit memory but not the budget."
                ] = None
            if rejected.count("does_not_fit_memory") or rejected.count("needs_multi_node"):
                if workload.method in ("full", "freeze") and workload.task != "inference":
                    advice["LoRA or QLoRA needs a fraction of the memory of a full fine-tune."] = (
                        None
                    )
                if workload.gradient_checkpointing != "full" and workload.task != "inference":
                    advice[
                        "Full gradient checkpointing cuts activation memory at about a third more compute."
                    ] = None
                if not c.allow_multi_node:
                    advice["Allow multi-node (allow_multi_node=true) to shard over more GPUs."] = (
                        None
                    )
            if (
                c.datacenter_only
                or c.gpus
                or c.providers
                or c.regions
                or c.mainland_china is not None
            ):
                advice[
                    "Widen the constraints (providers, regions, GPUs) to consider more offers."
                ] = None
        return list(advice)

    def _what_would_fit(self, cards: dict[int, GPUSpec], plans: list[Plan]) -> list[str]:
        """Cheaper shapes of the same job, checked with the estimator: full checkpointing on one
        80 GB GPU, QLoRA on one 24 GB card. Said only when the best plan needs more than that."""
        workload = self.workload
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
    profile: _Profile,
    offer: Offer,
    c: Constraints,
    objective: str,
    first_only: bool,
    prune: bool = True,
) -> _Route:
    """Walk a profile's steps under one pricing model where no limit depends on the price.

    Steps are ranked by their leading figure at 1 USD/h (a step clearly worse there is worse at
    any price). For the cheapest objectives the walk stops once no larger node count can lead:
    the hourly price doubles with each step, and the total cannot fall below the compute-only
    GPU-hours floor (sizing.compute.gpu_hours_floor), which rises with the node count.
    """
    walk = _Walk(profile)
    passing: list[_Step] = []
    leads: list[float] = []
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
        leads.append(_entry_key(1.0, offer, step, objective)[0])
        if prune and _cannot_lead(profile, step.nodes * 2, min(leads), objective):
            break
    contenders = _contenders(passing, leads)
    return _Route(walk.considered, passing, contenders, None if passing else walk.failure)


def _contenders(steps: list[_Step], leads: list[float]) -> list[_Step]:
    """The steps that can rank first at some price: a step whose leading figure at 1 USD/h is
    clearly worse stays worse at any price."""
    if len(steps) <= 1:
        return steps
    bound = min(leads) * (1 + _TIE_TOLERANCE)
    return [step for step, lead in zip(steps, leads, strict=True) if lead <= bound]


def _best_step(usd: float, offer: Offer, route: _Route, objective: str) -> tuple[tuple, _Step]:
    """An offer's ranking key and best step at its price: among the contenders, or among all
    passing steps for a free offer (at 0 USD/h every total ties)."""
    best_key, best_step = None, None
    for step in route.contenders if usd > 0 else route.passing:
        key = _entry_key(usd, offer, step, objective)
        if best_key is None or key < best_key:
            best_key, best_step = key, step
    return best_key, best_step


def _cannot_lead(profile: _Profile, nodes: int, best: float, objective: str) -> bool:
    """Whether no step from ``nodes`` on can have a leading figure (at 1 USD/h) within the tie
    tolerance of ``best``."""
    if objective == "cheapest_hourly":
        lowest = float(nodes)  # hourly at 1 USD/h per node
    elif objective == "cheapest":
        # Total at 1 USD/h per node: nodes x hours >= GPU-hours / GPUs per node (terms bill more).
        floor = gpu_hours_floor(profile.workload, profile.device, nodes)
        if floor is None:
            return False
        lowest = floor / profile.gpus_per_node
    else:
        return False
    return lowest > best * (1 + _TIE_TOLERANCE)


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
            f"{offer.label}: needs {step.memory_gib:.1f} GiB per GPU on "
            f"{step.total} GPU(s), has {profile.capacity:g}"
        )
    if step.kind == _NO_THROUGHPUT:
        return (
            f"{offer.label}: the catalog has no dense {workload.precision} figure for "
            f"{offer.gpu.slug}"
        )
    candidate = _Candidate(offer, step, "cheapest")
    return f"{offer.label} x{step.nodes} node(s): {_describe(candidate)}"


def _describe(p) -> str:
    hours = "?" if p.est_hours is None else f"{p.est_hours:,.1f} h"
    total = "?" if p.est_total_usd is None else f"${p.est_total_usd:,.0f}"
    return f"${p.usd_per_hour:,.2f}/h, {hours}, {total}"


def _fixed_failure(c: Constraints, pricing_model: str, hours: float | None) -> str | None:
    """The limits the price leaves alone: max_hours and the commitment-term rules."""
    if c.max_hours is not None and hours is not None and hours > c.max_hours:
        return "over_max_hours"
    term = TERM_HOURS.get(pricing_model)
    if term is not None and hours is None and not c.pricing_explicit:
        return "term_needs_run_length"
    if term is not None and hours is not None and hours < term * MIN_TERM_USE:
        return "run_too_short_for_term"
    return None


def _dominated(
    profile: _Profile, step: _Step, best_total: float | None, objective: str, c: Constraints
) -> bool:
    """Whether every node count after ``step`` is beaten, at any positive price, by a step
    already found that passes max_hours and the term rules (``best_total``: its lowest total
    at 1 USD/h; None when the run has no length). Larger counts cost more per hour; they also
    cost more in total when their GPU-hours floor says so."""
    hours = step.estimate.est_hours
    if hours is None:
        return True  # ranked by the hourly price alone, and no total to limit
    if objective == "cheapest_hourly" and c.max_total_usd is None:
        return True
    return best_total is not None and _cannot_lead(profile, step.nodes * 2, best_total, "cheapest")


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
