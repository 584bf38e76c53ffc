"""Hardware profiles and their steps: node count by node count, what the estimator says of one
offer's hardware. One small type per kind of step."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, NamedTuple

from ..compute import inter_node_network_gbps
from ..estimator import (
    Estimate,
    GPUSpec,
    Topology,
    Workload,
    choose_sharding,
    estimate,
    memory_per_gpu_gib,
)
from ..messages import RejectionCode as R
from ..uncertainty import fit_factor, fit_headroom
from .offers import Constraints, Offer
from .rules import NODE_COUNTS, PLAIN_NETWORK_GBPS

if TYPE_CHECKING:
    from .fastpaths import _Route


@dataclass(frozen=True, slots=True)
class OverMax:
    """A node count past the GPU cap (max_gpus): the walk ends here."""

    nodes: int
    total: int


@dataclass(frozen=True, slots=True)
class NoFit:
    """A node count whose per-GPU memory (or the high end of its range, when fits are decided
    on it) leaves less than the fit headroom free."""

    nodes: int
    total: int
    sharding: str | None
    memory_gib: float
    # does_not_fit_memory, needs_multi_node, does_not_fit_memory_high or no_inter_node_fabric
    # (this node count would fit, but the instance has no network between nodes)
    reason: str
    high_gib: float | None = None  # the high end of the memory range, when it decided


@dataclass(frozen=True, slots=True)
class Shape:
    """A node count that fits memory, its time model not yet run."""

    nodes: int
    total: int
    sharding: str | None
    memory_gib: float
    topology: Topology


@dataclass(frozen=True, slots=True)
class Fits:
    """A node count that fits, with its estimate."""

    nodes: int
    total: int
    sharding: str | None
    memory_gib: float
    topology: Topology
    estimate: Estimate


@dataclass(frozen=True, slots=True)
class NoThroughput:
    """A node count that fits memory but whose GPU has no throughput figure for the precision:
    no run length, so the walk ends here."""

    nodes: int
    total: int
    sharding: str | None
    memory_gib: float
    topology: Topology
    estimate: Estimate


# What profile.shape gives (memory only) and what profile.step gives (with the estimate).
ShapeStep = OverMax | NoFit | Shape
Step = OverMax | NoFit | Fits | NoThroughput


class Failure(NamedTuple):
    """Why an offer has no plan: the reason a rejection counts, and the step it failed at."""

    reason: str
    step: Step | None


class _EstimateCache:
    """Estimates for one workload per (GPU, GPU count, topology), without the working: the
    planner weighs thousands of shapes and writes notes only for the plans it returns."""

    def __init__(self, workload: Workload, headroom: float, fit_on: str = "point") -> None:
        self.workload = workload
        self.headroom = headroom
        # Fits are decided on memory x the fit factor of the plan's own GPU count (the high end
        # of the memory range for that layout, single or multi-GPU; or 1: the point estimate).
        self.fit_on = fit_on
        self._factors: dict[int, float] = {}
        self._cache: dict[tuple[object, ...], tuple[str | None, Estimate]] = {}
        self._by_sharding: dict[str, Workload] = {}
        self._memory: dict[tuple[int, int], tuple[str | None, float]] = {}
        self._sharded_for: dict[tuple[int, int], Workload] = {}

    def fit_factor(self, gpu_count: int) -> float:
        """What the fit test multiplies the memory estimate on ``gpu_count`` GPUs by: the high
        end of the range of that layout (one GPU or several), or 1 on the point estimate."""
        factor = self._factors.get(gpu_count)
        if factor is None:
            factor = self._factors[gpu_count] = fit_factor(self.workload, self.fit_on, gpu_count)
        return factor

    def sharding_headroom(self, gpu_count: int) -> float:
        """The headroom sharding is chosen for on ``gpu_count`` GPUs: memory x that count's fit
        factor leaves ``headroom`` free."""
        return fit_headroom(self.headroom, self.fit_factor(gpu_count))

    def _sharded(self, gpu: GPUSpec, gpu_count: int) -> Workload:
        """The workload with the sharding it runs with on ``gpu_count`` x ``gpu`` (once per
        device and count: ``choose_sharding`` hashes the workload and the GPU on every call)."""
        key = (id(gpu), gpu_count)  # devices live as long as the planning run
        sharded = self._sharded_for.get(key)
        if sharded is None:
            sharded = self._sharded_for[key] = self._sharding(gpu, gpu_count)
        return sharded

    def _sharding(self, gpu: GPUSpec, gpu_count: int) -> Workload:
        workload = self.workload
        sharding = workload.sharding
        if sharding is None and workload.task != "inference":
            sharding = (
                choose_sharding(workload, gpu, gpu_count, self.sharding_headroom(gpu_count))
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


def _inter_node_gbps(offer: Offer) -> float | None:
    """The time model's bandwidth between nodes (Gbit/s), never a missing figure taken as zero:
    the instance's network figure where it is the node's (``inter_node_network_gbps``). Else,
    over RDMA, None (unknown: a catalog RDMA figure is per port and no ports per node are
    recorded); over a plain fabric, its own figure, or ordinary cloud networking."""
    kind = offer.inter_kind if offer.inter_rdma else None
    network = inter_node_network_gbps(
        offer.network_gbps, rdma_kind=kind, port_gbps=offer.inter_bandwidth_gbps
    )
    if network is not None:
        return network
    if offer.inter_rdma:
        return None
    return offer.inter_bandwidth_gbps or PLAIN_NETWORK_GBPS


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
        memory_bandwidth_gb_s=scaled(offer.gpu.memory_bandwidth_gb_s),
        fp32_tflops=scaled(offer.gpu.fp32_tflops),
        tf32_tflops=scaled(offer.gpu.tf32_tflops),
        bf16_tflops=scaled(offer.gpu.bf16_tflops),
        fp16_tflops=scaled(offer.gpu.fp16_tflops),
        fp8_tflops=scaled(offer.gpu.fp8_tflops),
        int8_tops=scaled(offer.gpu.int8_tops),
    )


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
        self.shapes: list[ShapeStep] = []
        self.steps: list[Step] = []
        self._nodes = iter(NODE_COUNTS)
        self._done = False
        self._steps_done = False
        self.routes: dict[tuple[str, bool], _Route] = {}

    def shape(self, index: int) -> ShapeStep | None:
        """The step at ``index`` as far as memory tells: over the GPU cap, not fitting, or fitting
        (a Shape, with no estimate yet). None past the last node count."""
        while len(self.shapes) <= index and not self._done:
            self._advance()
        return self.shapes[index] if index < len(self.shapes) else None

    def step(self, index: int) -> Step | None:
        """The step at ``index`` with its estimate; None past the last one (a step without a
        throughput figure is the last)."""
        while len(self.steps) <= index and not self._steps_done:
            shape = self.shape(len(self.steps))
            if shape is None:
                self._steps_done = True
                break
            step = self._estimated(shape)
            self.steps.append(step)
            self._steps_done = isinstance(step, NoThroughput)
        return self.steps[index] if index < len(self.steps) else None

    def _estimated(self, shape: ShapeStep) -> Step:
        if not isinstance(shape, Shape):
            return shape
        sharding, est = self.cache.get(self.device, shape.total, shape.topology)
        workload = self.workload
        kind: type[Fits] | type[NoThroughput] = Fits
        # A run length was asked for (training tokens, or tokens to generate for inference) and
        # this GPU has no figure to time it: the plan cannot be held to max_hours/max_total_usd
        # nor ranked on its total, so the walk ends here (rejected as no_throughput_figure).
        if workload.tokens and est.est_hours is None:
            kind = NoThroughput
        return kind(shape.nodes, shape.total, sharding, shape.memory_gib, shape.topology, est)

    def _no_fit(self, total: int) -> tuple[str | None, float, float, float]:
        """The sharding, memory per GPU, its high end (memory x the fit factor of ``total``)
        and the limit they are held to, on ``total`` GPUs."""
        sharding, memory = self.cache.memory(self.device, total)
        limit = self.capacity * (1 - self.cache.headroom)
        return sharding, memory, memory * self.cache.fit_factor(total), limit

    def _no_fabric(self, nodes: int) -> None:
        """For an instance without an inter-node fabric whose one node does not hold even the
        estimate: the first node count from ``nodes`` on (within the GPU cap) that would fit,
        as a step rejected for the missing fabric (NO_INTER_NODE_FABRIC). Memory only."""
        last = self.shapes[-1] if self.shapes else None
        if not (isinstance(last, NoFit) and last.reason == R.DOES_NOT_FIT_MEMORY):
            return
        for count in NODE_COUNTS[NODE_COUNTS.index(nodes) :]:
            total = self.gpus_per_node * count
            if total > self.max_gpus:
                return
            sharding, memory, high, limit = self._no_fit(total)
            if high <= limit:
                self.shapes.append(NoFit(count, total, sharding, memory, R.NO_INTER_NODE_FABRIC))
                return

    def _advance(self) -> None:
        nodes = next(self._nodes, None)
        offer, c = self.offer, self.c
        if nodes is None or (nodes > 1 and (not c.allow_multi_node or offer.gpu_count < 1)):
            self._done = True
            return
        if nodes > 1 and offer.inter_slug is None:
            # No network between instances is recorded (containers, single-GPU pods): one node
            # only. When one node does not hold the job, say how many it would take.
            self._no_fabric(nodes)
            self._done = True
            return
        if nodes > 1 and self.workload.task == "inference" and not offer.inter_rdma:
            # Tensor-parallel serving across nodes over plain networking is not worth offering.
            self._done = True
            return
        total = self.gpus_per_node * nodes
        if total > self.max_gpus:
            self.shapes.append(OverMax(nodes, total))
            self._done = True
            return
        sharding, memory, high, limit = self._no_fit(total)
        if high > limit:
            if memory <= limit:  # the estimate fits, the high end of its range does not
                self.shapes.append(
                    NoFit(nodes, total, sharding, memory, R.DOES_NOT_FIT_MEMORY_HIGH, high)
                )
                return
            reason = (
                R.DOES_NOT_FIT_MEMORY if nodes == 1 or c.allow_multi_node else R.NEEDS_MULTI_NODE
            )
            self.shapes.append(NoFit(nodes, total, sharding, memory, reason))
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
            inter_node_gbps=None if one_node else _inter_node_gbps(offer),
        )
        self.shapes.append(Shape(nodes, total, sharding, memory, topology))
