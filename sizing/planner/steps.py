"""Hardware profiles and their steps: node count by node count, what the estimator says of one
offer's hardware. One small type per kind of step."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, NamedTuple

from ..compute import inter_node_network_gbps, training_speed
from ..estimator import (
    Estimate,
    GPUSpec,
    Topology,
    Workload,
    _memory,
    choose_sharding,
    estimate,
)
from ..memory import GIB
from ..messages import RejectionCode as R
from ..uncertainty import fit_factor, fit_headroom
from .offers import Constraints, Offer
from .rules import NODE_COUNTS, PLAIN_NETWORK_GBPS

if TYPE_CHECKING:
    from .fastpaths import _Route, _ShapeWalk


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
    """A node count that fits memory, its time model not yet run (and its Topology not yet made:
    ``_Profile.topology``, only for the node counts that are timed)."""

    nodes: int
    total: int
    sharding: str | None
    memory_gib: float


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
    # A Shape: a node count the walk left unestimated (fastpaths._quick_route); the planner
    # estimates it before an example names it (search.py).
    step: Step | Shape | None


class _EstimateCache:
    """Estimates for one workload per (GPU, GPU count, topology), without the working: the
    planner weighs thousands of shapes and writes notes only for the plans it returns."""

    # Memory verdicts depend on a GPU only through its memory (sharding is chosen for it, a fit
    # is held to it), so GPUs of one size share them, and machines alike in that size, their
    # GPUs per node and what ends their walk share one outline of node counts (``outline``).
    # Off: both per GPU object and per machine, as before (tests/sizing/test_planner_shared.py
    # compares the two).
    share = True

    def __init__(self, workload: Workload, headroom: float, fit_on: str = "point") -> None:
        self.workload = workload
        self.headroom = headroom
        # Fits are decided on memory x the fit factor of the plan's own GPU count (the high end
        # of the memory range for that layout, single or multi-GPU; or 1: the point estimate).
        self.fit_on = fit_on
        self._factors: dict[int, float] = {}
        self._cache: dict[tuple[object, ...], tuple[str | None, Estimate]] = {}
        self._by_sharding: dict[str, Workload] = {}
        self._memory: dict[tuple[float, int], tuple[str | None, float]] = {}
        self._sharded_for: dict[tuple[float, int], Workload] = {}
        self._hours: dict[tuple[object, ...], float | None] = {}
        self._trainable: dict[tuple[float, int], float] = {}
        self.verdicts: dict[tuple[float, int, int, bool], NoFit | Shape] = {}
        self._fabric: dict[tuple[float, int, int, int], NoFit | None] = {}
        self._outlines: dict[tuple[object, ...], _Outline] = {}

    def sized(self, gpu: GPUSpec) -> float:
        """What memory verdicts key a GPU by: its memory (GiB), or the object itself (its id;
        devices live as long as the planning run) when nothing is shared."""
        return gpu.memory_gib if self.share else id(gpu)

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
        key = (self.sized(gpu), gpu_count)
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
        key = (self.sized(gpu), gpu_count)
        hit = self._memory.get(key)
        if hit is None:
            workload = self._sharded(gpu, gpu_count)
            # memory_per_gpu_gib, keeping the trainable parameters the time model takes (hours)
            held = _memory(workload, gpu_count, workload.sharding or "none", False)
            self._trainable[key] = held.trainable_params
            hit = self._memory[key] = (workload.sharding, held.total / GIB)
        return hit

    @staticmethod
    def _key(gpu: GPUSpec, gpu_count: int, topology: Topology) -> tuple[object, ...]:
        return (
            id(gpu), gpu_count, topology.gpus_per_node, topology.intra_node,
            topology.intra_bandwidth_gb_s, topology.inter_node_rdma, topology.inter_node_gbps,
        )  # fmt: skip

    def _high(self, gpu: GPUSpec, total: int) -> tuple[str | None, float, float, float]:
        """The sharding, memory per GPU, its high end (memory x the fit factor of ``total``)
        and the limit they are held to, on ``total`` x ``gpu``."""
        sharding, memory = self.memory(gpu, total)
        limit = gpu.memory_gib * (1 - self.headroom)
        return sharding, memory, memory * self.fit_factor(total), limit

    def verdict(self, gpu: GPUSpec, nodes: int, total: int, multi_node: bool) -> NoFit | Shape:
        """Whether ``total`` x ``gpu`` on ``nodes`` nodes fits memory: the NoFit step if not
        (``multi_node``: whether more nodes are allowed, which names the reason), else its
        Shape. Once per run and GPU size: every machine with such a GPU shares it (neither
        holds anything of the machine)."""
        key = (self.sized(gpu), nodes, total, multi_node)
        hit = self.verdicts.get(key)
        if hit is None:
            sharding, memory, high, limit = self._high(gpu, total)
            if high <= limit:
                hit = Shape(nodes, total, sharding, memory)
            elif memory <= limit:  # the estimate fits, the high end of its range does not
                hit = NoFit(nodes, total, sharding, memory, R.DOES_NOT_FIT_MEMORY_HIGH, high)
            else:
                reason = R.DOES_NOT_FIT_MEMORY if nodes == 1 or multi_node else R.NEEDS_MULTI_NODE
                hit = NoFit(nodes, total, sharding, memory, reason)
            self.verdicts[key] = hit
        return hit

    def no_fabric(
        self, gpu: GPUSpec, gpus_per_node: int, nodes: int, max_gpus: int
    ) -> NoFit | None:
        """The first node count from ``nodes`` on (within ``max_gpus``) at which nodes of
        ``gpus_per_node`` x ``gpu`` would hold the job, as a step rejected for the missing
        fabric (NO_INTER_NODE_FABRIC); None if none would. Memory only, once per run."""
        key = (self.sized(gpu), gpus_per_node, nodes, max_gpus)
        if key in self._fabric:
            return self._fabric[key]
        found: NoFit | None = None
        for count in NODE_COUNTS[NODE_COUNTS.index(nodes) :]:
            total = gpus_per_node * count
            if total > max_gpus:
                break
            sharding, memory, high, limit = self._high(gpu, total)
            if high <= limit:
                found = NoFit(count, total, sharding, memory, R.NO_INTER_NODE_FABRIC)
                break
        self._fabric[key] = found
        return found

    def get(self, gpu: GPUSpec, gpu_count: int, topology: Topology) -> tuple[str | None, Estimate]:
        key = self._key(gpu, gpu_count, topology)
        hit = self._cache.get(key)
        if hit is None:
            workload = self._sharded(gpu, gpu_count)
            est = estimate(
                workload, gpu=gpu, gpu_count=gpu_count, topology=topology, explain=False,
                count_min_gpus=False,
            )  # fmt: skip
            hit = self._cache[key] = (workload.sharding, est)
        return hit

    def hours(self, gpu: GPUSpec, gpu_count: int, topology: Topology) -> float | None:
        """``get(...)[1].est_hours``, for training without building the estimate: the time model
        alone, called as ``estimate`` calls it (the sharded workload, its sharding, the trainable
        parameters of its memory). A rule that needs only the hours (the commitment terms) reads
        it for node counts no plan may come from; a quarter of the estimate's cost."""
        key = self._key(gpu, gpu_count, topology)
        hit = self._cache.get(key)
        if hit is not None:
            return hit[1].est_hours
        if key in self._hours:
            return self._hours[key]
        workload = self._sharded(gpu, gpu_count)
        if not workload.is_training or gpu_count % workload.model_parallel:
            return self.get(gpu, gpu_count, topology)[1].est_hours  # (which raises as it does)
        sharding = workload.sharding or "none"
        trainable = self._trainable.get((self.sized(gpu), gpu_count))
        if trainable is None:
            trainable = _memory(workload, gpu_count, sharding, False).trainable_params
        hours = self._hours[key] = training_speed(
            workload, gpu, gpu_count=gpu_count, sharding=sharding, topology=topology,
            trainable_params=trainable, explain=False,
        ).est_hours  # fmt: skip
        return hours

    def outline(self, device: GPUSpec, gpus_per_node: int, ends: _Ends, max_gpus: int) -> _Outline:
        """The node counts of machines of ``gpus_per_node`` x ``device`` whose walks end alike
        (``ends``), as memory tells them: one per run for all such machines."""
        if not self.share:
            return _Outline(self, device, gpus_per_node, ends, max_gpus)
        key = (device.memory_gib, gpus_per_node, ends, max_gpus)
        outline = self._outlines.get(key)
        if outline is None:
            outline = self._outlines[key] = _Outline(self, device, gpus_per_node, ends, max_gpus)
        return outline

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


class _Ends(NamedTuple):
    """What ends a machine's walk past one node, as ``_Outline`` reads it."""

    multi_node: bool  # more nodes are allowed (the constraint), which names a NoFit's reason
    whole: bool  # whole GPUs (a fraction of a shared GPU runs on one node only)
    fabric: bool  # a network between instances is recorded
    serving_plain: bool  # inference over plain networking (tensor parallel stops at one node)


class _Outline:
    """A machine's node counts as memory tells them, in order: NoFit, Shape (fits; no estimate,
    no Topology) or OverMax (past the GPU cap, the last), made as they are asked for.

    Nothing in them depends on the machine but its GPU's memory, its GPUs per node and what
    ends its walk (``_Ends``), so machines alike in these share one
    (``_EstimateCache.outline``), and the walk through it (``fastpaths._shape_walk``)."""

    def __init__(
        self,
        cache: _EstimateCache,
        device: GPUSpec,
        gpus_per_node: int,
        ends: _Ends,
        max_gpus: int,
    ) -> None:
        self.cache = cache
        self.device = device
        self.gpus_per_node = gpus_per_node
        self.ends = ends
        self.max_gpus = max_gpus
        self.shapes: list[ShapeStep] = []
        self.done = False
        self._nodes = iter(NODE_COUNTS)
        self.walked: _ShapeWalk | None = None  # fastpaths._shape_walk
        self._first: Shape | None = None  # first_fit's answer, once known
        self._first_known = False

    def shape(self, index: int) -> ShapeStep | None:
        """The node count at ``index``; None past the last one."""
        while len(self.shapes) <= index and not self.done:
            self._advance()
        return self.shapes[index] if index < len(self.shapes) else None

    def all_shapes(self) -> list[ShapeStep]:
        """Every node count's shape, to the last."""
        while not self.done:
            self._advance()
        return self.shapes

    def first_fit(self) -> Shape | None:
        """The first node count that fits memory, if one does before the GPU cap (once: every
        machine of the outline asks)."""
        if not self._first_known:
            self.shape(0)  # advances past every node count that does not fit
            self._first_known = True
            for shape in self.shapes:
                if not isinstance(shape, NoFit):
                    self._first = shape if isinstance(shape, Shape) else None
                    break
        return self._first

    def _no_fabric(self, nodes: int) -> None:
        """For an instance without an inter-node fabric whose one node does not hold even the
        estimate: the first node count from ``nodes`` on (within the GPU cap) that would fit,
        as a step rejected for the missing fabric (NO_INTER_NODE_FABRIC). Memory only."""
        last = self.shapes[-1] if self.shapes else None
        if not (isinstance(last, NoFit) and last.reason == R.DOES_NOT_FIT_MEMORY):
            return
        found = self.cache.no_fabric(self.device, self.gpus_per_node, nodes, self.max_gpus)
        if found is not None:
            self.shapes.append(found)

    def _advance(self) -> None:
        """Add the next node counts' shapes: those that do not fit, up to the next one that
        does (the last one), on memory alone."""
        cache, shapes, verdicts, ends = self.cache, self.shapes, self.cache.verdicts, self.ends
        device, gpus_per_node, multi_node = self.device, self.gpus_per_node, ends.multi_node
        sized = cache.sized(device)
        while True:
            nodes = next(self._nodes, None)
            if nodes is None:
                self.done = True
                return
            if nodes > 1:
                if not (multi_node and ends.whole):
                    self.done = True
                    return
                if not ends.fabric:
                    # No network between instances is recorded (containers, single-GPU pods):
                    # one node only. When one node does not hold the job, say how many it
                    # would take.
                    self._no_fabric(nodes)
                    self.done = True
                    return
                if ends.serving_plain:
                    # Tensor-parallel serving across nodes over plain networking: not offered.
                    self.done = True
                    return
            total = gpus_per_node * nodes
            if total > self.max_gpus:
                shapes.append(OverMax(nodes, total))
                self.done = True
                return
            verdict = verdicts.get((sized, nodes, total, multi_node))
            if verdict is None:
                verdict = cache.verdict(device, nodes, total, multi_node)
            shapes.append(verdict)
            if isinstance(verdict, Shape):
                return


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
        self.offer = offer
        self.workload = workload
        self.c = c
        self.cache = cache
        self.max_gpus = max_gpus
        ends = _Ends(
            multi_node=c.allow_multi_node,
            whole=offer.gpu_count >= 1,
            fabric=offer.inter_slug is not None,
            serving_plain=workload.task == "inference" and not offer.inter_rdma,
        )
        self.outline = cache.outline(self.device, self.gpus_per_node, ends, max_gpus)
        self.shapes = self.outline.shapes  # the outline's list, grown as it advances
        self.steps: list[Step] = []
        self._steps_done = False
        # Routes by billing (a commitment term, or "hourly"), walked with pruning and without
        # (a free offer ties every total): _Planner.route.
        self.routes: dict[str, _Route] = {}
        self.unpruned: dict[str, _Route] = {}
        self._topologies: dict[int, Topology] = {}  # nodes -> topology (made when timed)
        self._hours: dict[int, float | None] = {}  # index -> hours (``hours``)

    def shape(self, index: int) -> ShapeStep | None:
        """The step at ``index`` as far as memory tells: over the GPU cap, not fitting, or fitting
        (a Shape, with no estimate yet). None past the last node count."""
        return self.outline.shape(index)

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

    def hours(self, index: int) -> float | None:
        """The hours of the step at ``index``, a node count that fits memory (a Shape), without
        its estimate when the step has not been made (``_EstimateCache.hours``)."""
        if index in self._hours:  # a machine's terms read the same node counts' hours
            return self._hours[index]
        if index < len(self.steps):
            step = self.steps[index]
            assert isinstance(step, Fits | NoThroughput), "hours of a node count that fits"
            hours = step.estimate.est_hours
        else:
            shape = self.shapes[index]
            assert isinstance(shape, Shape), "hours of a node count that fits"
            hours = self.cache.hours(self.device, shape.total, self.topology(shape))
        self._hours[index] = hours
        return hours

    def estimated(self, shape: Shape) -> Step:
        """The step (with its estimate) of one of this profile's shapes."""
        index = next(i for i, held in enumerate(self.shapes) if held is shape)
        step = self.step(index)
        assert step is not None
        return step

    def _estimated(self, shape: ShapeStep) -> Step:
        if not isinstance(shape, Shape):
            return shape
        topology = self.topology(shape)
        sharding, est = self.cache.get(self.device, shape.total, topology)
        workload = self.workload
        kind: type[Fits] | type[NoThroughput] = Fits
        # A run length was asked for (training tokens, or tokens to generate for inference) and
        # this GPU has no figure to time it: the plan cannot be held to max_hours/max_total_usd
        # nor ranked on its total, so the walk ends here (rejected as no_throughput_figure).
        if workload.tokens and est.est_hours is None:
            kind = NoThroughput
        return kind(shape.nodes, shape.total, sharding, shape.memory_gib, topology, est)

    def topology(self, shape: Shape) -> Topology:
        """How the GPUs of ``shape`` are joined on this machine: made only for a node count
        that is timed (most node counts a run weighs are decided on memory and price alone),
        once per node count (a machine's pricing models time the same node counts)."""
        topology = self._topologies.get(shape.nodes)
        if topology is None:
            offer = self.offer
            # Inside one node the network between nodes plays no part: machines that differ
            # only in their NICs share the estimate.
            one_node = shape.nodes == 1
            topology = self._topologies[shape.nodes] = Topology(
                gpu_count=shape.total,
                gpus_per_node=self.gpus_per_node,
                intra_node=_intra_node_class(offer, self.gpus_per_node),
                intra_bandwidth_gb_s=offer.intra_bandwidth_gb_s,
                inter_node_rdma=offer.inter_rdma and not one_node,
                inter_node_gbps=None if one_node else _inter_node_gbps(offer),
            )
        return topology

    def all_shapes(self) -> list[ShapeStep]:
        """Every node count's shape, to the last."""
        return self.outline.all_shapes()

    def first_fit(self) -> Shape | None:
        """The first node count that fits memory, if one does before the GPU cap."""
        return self.outline.first_fit()
