"""The sizing estimator: memory, FLOPs and time of a deep-learning workload. Pure Python.

Entry points (the Django layer calls these; no Django, no I/O here):

    presets = load_presets()                              # sizing.presets
    w = parse_workload({"model": "llama-3-8b", "method": "lora"}, presets)
    e = estimate(w, gpu=GPUSpec(...), gpu_count=1)        # memory_per_gpu_gib, breakdown, ...
    min_gpus(w, gpu)                                      # smallest count that fits
    choose_sharding(w, gpu, 8)                            # least-sharded strategy that fits

The formulas and their sources live in sizing.memory (bytes) and sizing.compute (FLOPs, time).
Every Estimate carries `notes`, the working in words, and `assumptions`, the inputs used.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

from .compute import (
    ComputeResult,
    decode_speed,
    gpu_hours_floor,
    training_flops_per_token,
    training_speed,
)
from .frameworks import quantised_gpu_limit
from .inputs import HEADROOM
from .memory import GIB, MemoryResult, inference_memory, training_memory
from .messages import Message
from .messages import MessageCode as C
from .specs import GPUSpec, ModelArch, Topology
from .workload import Workload, WorkloadError, parse_workload

__all__ = [
    "BREAKDOWN_KEYS",
    "DEFAULT_HEADROOM",
    "Estimate",
    "GPUSpec",
    "ModelArch",
    "Topology",
    "Workload",
    "WorkloadError",
    "choose_sharding",
    "estimate",
    "gpu_hours_floor",
    "memory_per_gpu_gib",
    "min_gpus",
    "parse_workload",
]

BREAKDOWN_KEYS = (
    "weights",
    "gradients",
    "optimizer",
    "activations",
    "kv_cache",
    "adapters",
    "overhead",
)
# Memory left free on each GPU when `estimate()` is called on its own: the headroom setting's
# warning margin (sizing/inputs.py HEADROOM; the planner and /api/estimate pass its fit margin).
DEFAULT_HEADROOM = HEADROOM.warn
# Strategies tried, least sharded first; fsdp (FULL_SHARD) is ZeRO-3 by another name.
SHARDING_ORDER = ("none", "zero1", "zero2", "zero3")


@dataclass
class Estimate:
    """What a workload needs: memory per GPU with its breakdown, FLOPs, time, and the working.

    Figures are unrounded floats (GiB, FLOPs, tokens/s, hours); rounding is for the presenter.
    """

    memory_per_gpu_gib: float
    breakdown: dict[str, float]
    total_memory_gib: float
    min_gpus: int | None
    training_flops: float | None
    mfu: float | None
    tokens_per_second: float | None  # per GPU (training tokens, or generated tokens for inference)
    gpu_hours: float | None
    est_hours: float | None
    assumptions: dict[str, Any]
    notes: list[str]
    gpu: str | None = None
    gpu_count: int = 1
    sharding: str | None = None
    fits: bool | None = None
    headroom_pct: float | None = None
    tokens_per_second_total: float | None = None  # the whole job: tokens_per_second x gpu_count
    model_flops: float | None = None
    overhead_breakdown: dict[str, float] = field(default_factory=dict)
    # Multi-node training whose bandwidth between nodes is not known: the collective between
    # nodes is left out of the time, so est_hours is a lower bound (sizing/compute.py).
    inter_node_untimed: bool = False
    # The estimator's own notes (not the formula working) as coded messages; their English
    # text is in ``notes`` too.
    note_messages: list[Message] = field(default_factory=list)


def _default_topology(gpu: GPUSpec | None, gpu_count: int) -> Topology:
    nvlink = bool(gpu and gpu.nvlink_bandwidth_gb_s)
    return Topology(gpu_count=gpu_count, intra_node="nvlink" if nvlink else "pcie")


def _memory(w: Workload, n: int, sharding: str, explain: bool) -> MemoryResult:
    """Per-GPU memory on n GPUs. Without the working it depends only on its arguments and is
    remembered: the planner asks it for every machine shape, and shapes repeat."""
    if not explain:
        return _memory_kept(w.for_memory, w.arch, n, sharding)
    return _memory_of(w, n, sharding, explain)


@lru_cache(maxsize=8192)
def _memory_kept(w: Workload, arch: ModelArch, n: int, sharding: str) -> MemoryResult:
    return _memory_of(w, n, sharding, False)


def _memory_of(w: Workload, n: int, sharding: str, explain: bool) -> MemoryResult:
    if w.is_training:
        return training_memory(
            w, dp=max(1, n // w.model_parallel), sharding=sharding, explain=explain
        )
    tp, _, replica = _serving_layout(w, n)
    return inference_memory(replica, tp=tp, explain=explain)


def _serving_layout(w: Workload, n: int) -> tuple[int, int, Workload]:
    """How n GPUs serve: (tensor parallel degree, replicas, the workload one replica serves).
    The degree is the workload's ``tensor_parallel`` when it names one, else the largest degree
    that divides n and at which vLLM can load the model (``ModelArch.serves_at_tp``: a Qwen2.5-7B,
    28 heads and 4 KV heads, takes no TP 8, so 8 GPUs serve as 2 replicas of TP 4). The GPUs
    beyond one replica are further replicas (vLLM data parallel, or one server per replica
    behind a load balancer), each serving its share of the concurrent sequences."""
    n = max(1, n)
    if w.tensor_parallel > 1:
        tp = w.tensor_parallel
    else:
        tp = next(t for t in range(n, 0, -1) if n % t == 0 and w.arch.serves_at_tp(t))
    replicas = max(1, n // tp)
    if replicas == 1:
        return tp, 1, w
    sequences = w.concurrency or w.batch_size
    return tp, replicas, replace(w, concurrency=max(1, -(-sequences // replicas)))


def _replicated(
    comp: ComputeResult, w: Workload, replica: Workload, replicas: int, n: int
) -> ComputeResult:
    """One replica's decode speed as the whole layout's: every sequence decodes at the speed
    it has in its replica, so the layout serves the workload's sequences at that speed each."""
    if comp.tokens_per_second is None:
        return comp
    sequences = w.concurrency or w.batch_size
    per_sequence = comp.tokens_per_second / max(1, replica.concurrency or 1)
    comp.tokens_per_second = per_sequence * sequences
    comp.tokens_per_second_per_gpu = comp.tokens_per_second / n
    if w.tokens:
        comp.est_hours = w.tokens / comp.tokens_per_second / 3600
        comp.gpu_hours = comp.est_hours * n
    return comp


def _capacity(gpu: GPUSpec, headroom: float) -> float:
    return float(gpu.memory_gib) * GIB * (1 - headroom)


def memory_per_gpu_gib(workload: Workload, gpu_count: int) -> float:
    """Per-GPU memory (GiB) of ``workload`` on ``gpu_count`` GPUs with the sharding it names
    (none when it names none): ``estimate(...).memory_per_gpu_gib`` without the time, for
    checking a fit before paying for the rest of an estimate."""
    return _memory(workload, gpu_count, workload.sharding or "none", False).total / GIB


def choose_sharding(
    workload: Workload, gpu: GPUSpec, gpu_count: int, headroom: float = DEFAULT_HEADROOM
) -> str:
    """Least-sharded strategy (none < zero1 < zero2 < zero3) that fits `gpu_count` x `gpu`.

    Less sharding means less communication, so it wins whenever it fits; when nothing fits the
    most sharded strategy is returned (and the estimate reports that it does not fit).
    """
    if not workload.is_training:
        return "none"
    if workload.sharding:
        return workload.sharding
    dp = max(1, gpu_count // workload.model_parallel)
    return _choose_sharding(workload.for_memory, workload.arch, gpu, dp, headroom)


@lru_cache(maxsize=4096)
def _choose_sharding(
    workload: Workload, arch: ModelArch, gpu: GPUSpec, dp: int, headroom: float
) -> str:
    cap = _capacity(gpu, headroom)
    for s in SHARDING_ORDER:
        if s != "none" and dp == 1:
            break
        if training_memory(workload, dp=dp, sharding=s, explain=False).total <= cap:
            return s
    return SHARDING_ORDER[-1] if dp > 1 else "none"


def min_gpus(
    workload: Workload, gpu: GPUSpec, *, headroom: float = DEFAULT_HEADROOM, max_gpus: int = 4096
) -> int | None:
    """Smallest number of `gpu` that holds the workload with `headroom` free; None if none does.

    Training: with workload.sharding fixed, the smallest data-parallel degree (times tensor x
    pipeline parallel) that fits; left open, the smallest over none/zero1/zero2/zero3. Inference:
    the smallest tensor-parallel degree that divides the attention heads and fits.

    The answer depends only on its arguments (and the workload's architecture, which the
    workload's equality leaves out), so it is remembered: the planner asks it once per GPU
    rather than once per machine shape and node count.
    """
    return _min_gpus(workload.for_memory, workload.arch, gpu, headroom, max_gpus)


@lru_cache(maxsize=4096)
def _min_gpus(
    workload: Workload, arch: ModelArch, gpu: GPUSpec, headroom: float, max_gpus: int
) -> int | None:
    cap = _capacity(gpu, headroom)
    if not workload.is_training:
        if workload.tensor_parallel > 1:
            candidates = [workload.tensor_parallel]
        else:
            candidates = [
                n for n in range(1, min(max_gpus, 1024) + 1) if workload.arch.serves_at_tp(n)
            ]
        for n in candidates:
            if n <= max_gpus and inference_memory(workload, tp=n, explain=False).total <= cap:
                return n
        return None
    mp = workload.model_parallel
    max_dp = max_gpus // mp
    if max_dp < 1:
        return None
    strategies = (workload.sharding,) if workload.sharding else SHARDING_ORDER
    best: int | None = None
    for s in strategies:

        def fits(dp: int, s: str = s) -> bool:
            return training_memory(workload, dp=dp, sharding=s, explain=False).total <= cap

        if s == "none":
            found = 1 if fits(1) else None
        elif not fits(max_dp):
            found = None
        else:
            lo, hi = 1, max_dp  # memory per GPU never rises with dp: binary search
            while lo < hi:
                mid = (lo + hi) // 2
                if fits(mid):
                    hi = mid
                else:
                    lo = mid + 1
            found = lo
        if found is not None and (best is None or found * mp < best):
            best = found * mp
    return best


def estimate(
    workload: Workload,
    *,
    gpu: GPUSpec | None = None,
    gpu_count: int | None = None,
    topology: Topology | None = None,
    headroom: float = DEFAULT_HEADROOM,
    explain: bool = True,
    count_min_gpus: bool = True,
) -> Estimate:
    """Estimate memory per GPU, total memory, FLOPs and (with a GPU) utilisation and time.

    `gpu_count` defaults to workload.gpu_count, then to 1. Training with sharding left open picks
    the least-sharded strategy that fits the GPU. Set explain=False to skip building the notes,
    count_min_gpus=False to leave `min_gpus` None (a search over GPU counts the planner, which
    tries the counts it can rent, does not need).
    """
    w = workload
    n = int(gpu_count or w.gpu_count or (topology.gpu_count if topology else 1) or 1)
    if w.is_training and n % w.model_parallel:
        raise WorkloadError(
            {
                "gpu_count": [
                    Message(C.INPUT_GPU_COUNT_MULTIPLE, {"model_parallel": w.model_parallel})
                ]
            }
        )
    topo = topology or _default_topology(gpu, n)
    if topo.gpu_count != n:
        topo = replace(topo, gpu_count=n)
    notes: list[str] = []
    coded: list[Message] = []

    def note(code: str, **params: Any) -> None:
        message = Message(code, params)
        coded.append(message)
        notes.append(message.text)

    if w.is_training:
        if w.sharding:
            sharding = w.sharding
        elif gpu is not None:
            sharding = choose_sharding(w, gpu, n, headroom)
            if explain and n > 1:
                note(C.NOTE_SHARDING_CHOSEN, sharding=sharding, gpu_count=n, gpu=gpu.slug)
        else:
            sharding = "none"
    else:
        sharding = None
    # Serving: the layout its memory (through _memory), decode speed and assumptions share.
    tp, replicas, replica = (1, 1, w) if w.is_training else _serving_layout(w, n)
    mem = _memory(w, n, sharding or "none", explain)
    notes.extend(mem.notes)
    if (
        w.is_training
        and sharding in ("zero1", "zero2", "zero3", "fsdp")
        and n // w.model_parallel == 1
        and explain
    ):
        note(C.NOTE_SHARDING_ONE_RANK, sharding=sharding)
    cap = quantised_gpu_limit(w.framework, w.method, w.task)
    if explain and cap is not None and n > cap:
        # litgpt refuses --quantize on more than one device (sizing/frameworks.py).
        note(C.NOTE_FRAMEWORK_GPU_LIMIT, framework=w.framework, max_gpus=cap, gpu_count=n)

    comp: ComputeResult | None = None
    if gpu is not None and w.is_training:
        comp = training_speed(
            w,
            gpu,
            gpu_count=n,
            sharding=sharding or "none",
            topology=topo,
            trainable_params=mem.trainable_params,
            explain=explain,
        )
    elif gpu is not None:
        comp = decode_speed(replica, gpu, tp=tp, topology=topo, kv_cache_bytes_per_gpu=mem.kv_cache)
        if replicas > 1:
            comp = _replicated(comp, w, replica, replicas, n)
            if explain:
                note(
                    C.NOTE_SERVING_REPLICAS,
                    gpu_count=n,
                    replicas=replicas,
                    tp=tp,
                    sequences=replica.concurrency,
                )
    elif w.is_training and w.tokens:
        model, hardware, _, recompute = training_flops_per_token(w)
        comp = ComputeResult(training_flops=hardware * w.tokens, model_flops=model * w.tokens)
        if explain:  # comp.notes is empty: the note lands where comp's notes would
            flops = {"flops": comp.training_flops, "tokens": w.tokens, "per_token": hardware}
            if recompute:
                note(C.NOTE_TRAINING_FLOPS_RECOMPUTE, **flops, recompute=recompute)
            else:
                note(C.NOTE_TRAINING_FLOPS, **flops)
    if comp is not None and explain:
        notes.extend(comp.notes)

    per_gpu = mem.total / GIB
    breakdown = {
        "weights": mem.weights,
        "gradients": mem.gradients,
        "optimizer": mem.optimizer,
        "activations": mem.activations,
        "kv_cache": mem.kv_cache,
        "adapters": mem.adapters,
        "overhead": mem.overhead,
    }
    fits = headroom_pct = None
    need = None
    if gpu is not None:
        fits = mem.total <= _capacity(gpu, headroom)
        headroom_pct = round((1 - mem.total / (float(gpu.memory_gib) * GIB)) * 100, 1)
        need = min_gpus(w, gpu, headroom=headroom) if count_min_gpus or explain else None
        if explain:
            needed = (
                Message(C.NOTE_GPUS_NEEDED, {"count": need})
                if need
                else Message(C.NOTE_NO_COUNT_FITS, {"max_gpus": 4096})
            )
            note(
                C.NOTE_FITS if fits else C.NOTE_DOES_NOT_FIT,
                memory_gib=per_gpu,
                capacity_gib=gpu.memory_gib,
                headroom=headroom,
                need=needed,
            )
            if (
                not fits
                and w.is_training
                and w.gradient_checkpointing != "full"
                and w.arch.is_transformer
            ):
                lighter = replace(w, gradient_checkpointing="full")
                act = _memory(lighter, n, sharding or "none", False).activations
                note(
                    C.NOTE_CHECKPOINTING_CUTS,
                    activations_gib=mem.activations / GIB,
                    full_gib=act / GIB,
                )
    assumptions = _assumptions(w, w.arch)
    assumptions.update({"gpu_count": n, "sharding": sharding, "headroom": headroom})
    if not w.is_training:
        assumptions["tensor_parallel"] = tp
        assumptions["replicas"] = replicas
    return Estimate(
        memory_per_gpu_gib=per_gpu,
        breakdown={k: v / GIB for k, v in breakdown.items()},
        total_memory_gib=per_gpu * n,
        min_gpus=need,
        training_flops=comp.training_flops if comp else None,
        mfu=comp.mfu if comp else None,
        tokens_per_second=comp.tokens_per_second_per_gpu if comp else None,
        gpu_hours=comp.gpu_hours if comp else None,
        est_hours=comp.est_hours if comp else None,
        assumptions=assumptions,
        notes=notes,
        gpu=gpu.slug if gpu else w.gpu,
        gpu_count=n,
        sharding=sharding,
        fits=fits,
        headroom_pct=headroom_pct,
        tokens_per_second_total=comp.tokens_per_second if comp else None,
        model_flops=comp.model_flops if comp else None,
        inter_node_untimed=comp.inter_node_untimed if comp else False,
        overhead_breakdown={
            "cuda_context": mem.cuda_context / GIB,
            "allocator": mem.fragmentation / GIB,
        },
        note_messages=coded,
    )


@lru_cache(maxsize=1024)
def _workload_assumptions(w: Workload, arch: ModelArch) -> dict[str, Any]:
    return w.assumptions()


def _assumptions(w: Workload, arch: ModelArch) -> dict[str, Any]:
    """A fresh copy of the workload's assumptions (worked out once per workload)."""
    base = _workload_assumptions(w, arch)
    return {**base, "architecture": dict(base["architecture"])}
