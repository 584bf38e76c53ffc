"""Compute and time: training FLOPs, achievable utilisation, throughput, decode speed.

- Training FLOPs per token: 6 N (forward 2N, backward 4N; Kaplan et al. 2020, "Scaling Laws",
  sec. 2.1; Transformer Math 101) plus attention 12 L s d_attn (Narayanan et al. 2021,
  "Efficient Large-Scale Language Model Training on GPU Clusters using Megatron-LM", eq. 3:
  the s/6h term), plus one more forward of the layers under full recomputation (their 96 vs 72
  B s l h^2), plus the attention core only under selective recomputation (Korthikanti 2022).
  N is the parameters a token multiplies by: embeddings are looked up, not multiplied, and an
  MoE token uses only its active experts.
- Utilisation: the fraction of dense peak the matrix units sustain (hardware FLOPs utilisation,
  HFU) depends on how much bandwidth backs each FLOP (memory-bound kernels: norms, activations,
  softmax, optimizer), on layer width, precision and the interconnect. Constants below are
  derived from the MosaicML LLM Foundry benchmark tables (mosaicml/llm-foundry
  scripts/train/benchmarking/README.md: A100 40/80GB and H100, 125M-70B, seq 512-65k) and the
  other rows of bench/calibration.csv named at each constant. Because they were read off
  calibration rows, bench/sizing_accuracy.py (FITTED) fits each of them again without the
  source it is checking, so those rows are never judged by constants taken from themselves.
- Decode: each generated token streams the weights and the KV cache from HBM once, so tokens/s
  <= bandwidth / bytes per step (Pope et al. 2022, "Efficiently Scaling Transformer Inference").
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache

from .frameworks import FRAMEWORKS
from .memory import DTYPE_BYTES, FREEZE_TRAINABLE_LAYERS, INT4_BYTES_PER_PARAM, quantizable_params
from .numbers import large
from .specs import GPUSpec, ModelArch, Topology
from .workload import Workload

# ---- utilisation model ---------------------------------------------------------------------
# The constants below marked "fitted" are what `python bench/sizing_accuracy.py --fit` gives on
# every source of bench/calibration.csv (column "all"), rounded; tests/bench/test_sizing_accuracy.py
# fails when they drift more than 1% from that fit. The leave-one-source-out figures in
# bench/RESULTS.md judge this fitting method, so the estimator ships its all-source result.
#
# HFU a large dense transformer reaches on an A100-class GPU (bf16, NVLink node, FSDP): MosaicML
# A100-80GB rows at 7B-30B reach HFU 0.73-0.77 with checkpointing and MFU 0.60-0.64 without.
# Fitted: 0.7283.
HFU_REFERENCE = 0.73
# Machine balance (dense 16-bit FLOPs per byte of HBM bandwidth) of the reference: A100 SXM,
# 312 TFLOPS / 2.039 TB/s. Parts with more FLOPs per byte stall longer on memory-bound kernels.
BALANCE_REFERENCE = 312e12 / 2039e9
# HFU ~ balance^-0.46: MosaicML H100 rows run at 0.72-0.75x the A100 HFU for the same model
# (7B: 53.9 vs 73.1, 13B: 55.5 vs 76.8 at 4k) while the balance ratio is 295/153 = 1.93;
# 1.93^-0.46 = 0.74. Fitted on every dense throughput row on a part above the A100's balance
# (H100, H200, B200, RTX 4090): 0.4600.
BALANCE_EXPONENT = 0.46
# Narrow layers keep the GPU less busy: factor h / (h + 453). MosaicML A100-80GB rows without
# checkpointing at seq 2048: 125M (h 768) 45%, 350M (1024) 52%, 760M (1536) 57%, 1B (2048) 60%,
# 3B (2560) 62%, 7B (4096) 64% MFU; h/(h+453) gives 0.63, 0.69, 0.77, 0.82, 0.85, 0.90.
# Fitted on the narrow (h < 3000) A100 rows against the wide ones: 453.0.
WIDTH_HALF_POINT = 453
# Attention-core FLOPs (counted with full s^2 as Megatron and MosaicML count them) run at this
# fraction of the GEMM rate (the MosaicML 7B A100 rows from seq 4k to 64k: MFU 54.8 -> 47.0 as
# attention grows from 14% to 72% of the FLOPs); causal flash attention does half the counted
# work. Fitted on every dense throughput row at seq >= 8192: 1.022, i.e. the
# causal kernel does its (half) work at about half the GEMM efficiency.
ATTENTION_RELATIVE_EFFICIENCY = 1.02
# FP8 GEMMs reach a lower fraction of their (2x) peak: MosaicML H100 FP8 vs BF16 rows give
# 0.65-0.67 (3B at 512/2048, 1B at 512); Megatron-Bridge Llama 3 70B FP8 on H100 ~0.75.
# Fitted on every dense fp8 training-speed row (throughput and GPU-hours; memory rows do not
# depend on it): 0.6343.
FP8_RELATIVE_EFFICIENCY = 0.634
# MoE training: all-to-all dispatch, expert load imbalance and small expert GEMMs cost a share
# of the dense HFU. Fitted: the value that leaves the median of the MoE rows in
# bench/calibration.csv unbiased (Megatron-Bridge Qwen3-30B-A3B on H100 and B200, DeepSeek-V3
# on B200, GPT-OSS-120B on H100; DeepSeek-V3's own H800 run, whose DualPipe schedule does
# better): 0.5715.
MOE_EFFICIENCY = 0.572
# Software maturity relative to CUDA on Ampere/Hopper (no calibration row says otherwise):
# Volta/Turing: Megatron-LM v1.0 sustained 48% of a V100's peak against ~74% on A100 = 0.65.
# AMD CDNA and Huawei Ascend: assumed lower kernel maturity for training (not fitted).
ARCH_SOFTWARE_FACTOR = {
    "pascal": 0.4,
    "volta": 0.65,
    "turing": 0.65,
    "cdna 2": 0.6,
    "cdna 3": 0.75,
    "da vinci": 0.6,
}
# torch.compile (workload.compile) fuses the memory-bound pointwise ops (norms, rotary embedding,
# activation functions, residual adds) into fewer kernels, so a compiled step runs faster at the
# same FLOPs. The factor is fitted (bench/sizing_accuracy.py FITTED) on the compiled training
# throughput rows: torchtune's README tables and torchtitan's benchmark tables, which say
# compile was on; the same tables' uncompiled rows give +27% (torchtune 3B, A100) and +16%
# (torchtitan 8B, 8 x H100) for turning it on. Fitted: 1.096.
COMPILE_SPEEDUP = 1.1
# bitsandbytes NF4 dequantises every weight on every use: litgpt's A100 table shows QLoRA at
# 0.92 (phi-1.5), 0.68 (3B), 0.64 (7B), 0.50 (13B) of LoRA speed; 0.65 the median.
QLORA_SPEED_FACTOR = 0.65
# Share of the per-step data-parallel collective that overlaps with compute (DDP bucketing,
# FSDP prefetch). Fitted on the multi-node dense throughput rows (MosaicML 70B on 32 and 64
# H100, torchtitan's 8-512 GPU runs, Megatron-Bridge): the fit runs to its bound, 1.0: all of
# the collective time up to the compute time is hidden, only the excess is exposed.
COMM_OVERLAP = 1.0
# Achievable collective bandwidth as a fraction of the link rate: NVLink/NVSwitch ring
# all-reduce reaches ~80% of one direction's rate (nccl-tests bus bandwidth on DGX A100/H100);
# RDMA (InfiniBand/RoCE) ~80% of line rate; TCP sockets reach far less and burn CPU, which is
# why multi-node training without RDMA "falls off a cliff" (seed guides).
NVLINK_EFFICIENCY = 0.8
RDMA_EFFICIENCY = 0.8
TCP_EFFICIENCY = 0.25
# PCIe 4.0 x16 carries 32 GB/s per direction (the default when the topology gives no figure);
# NCCL rings through a CPU root complex reach about half of a link's rate.
PCIE_DEFAULT_GB_S = 32.0
PCIE_EFFICIENCY = 0.5
# Between nodes the time model takes the node's total network bandwidth from the topology
# (`Topology.inter_node_gbps`: the instance's published figure; a catalog fabric figure is per
# port or per adapter for InfiniBand, RoCE and EFA, fixtures/interconnects.yaml bandwidth_note,
# and the catalog records no ports per node, so it is not the node's). Where none is known the
# figure stays unknown: no fabric speed is assumed, the collective between nodes is left out of
# the time (bounded by the links inside a node only, so the hours are a lower bound) and the
# result says so (ComputeResult.inter_node_untimed), never a made-up default nor 0.
# Synchronising thousands of GPUs every step costs stragglers and jitter: efficiency
# 1 / (1 + 0.0335 log2 nodes). Llama 2 (~2k A100) ran at ~0.85 of the MosaicML small-cluster MFU
# after removing goodput; Llama 3 405B (16k H100) reports 38-43% MFU against ~50% on 64 GPUs.
# Fitted on the training-speed rows of runs on 64 nodes or more: 0.03345.
SCALE_PENALTY_PER_DOUBLING = 0.0335
# Pipeline bubble with m micro-batches per step: (p - 1) / (m + p - 1) (Narayanan 2021 sec. 2.2);
# large runs keep m ~ 8 p (global batch / data-parallel degree). The same m micro-batches share
# one gradient all-reduce (DDP, ZeRO-1/2); without pipelining we assume a sync every micro-batch.
PIPELINE_MICROBATCHES_PER_STAGE = 8
# Goodput: the share of wall time a training job spends on productive steps (checkpoints,
# evaluation, restarts and failures take the rest). Llama 3 paper sec. 3.3.4: "higher than 90%
# effective training time". Applied to wall hours and GPU-hours, not to tokens/s.
GOODPUT = 0.9

# ---- decode --------------------------------------------------------------------------------
# Memory-bandwidth utilisation of batch-1 decode kernels, per weight format, fitted on the
# single-GPU decode rows of bench/calibration.csv. bf16 (fp16 and fp32 follow it): gpt-fast
# (A100-80GB) and torchao's generate.py (its copy of gpt-fast's; torchao/quantization/README.md
# @03d01adc, A100) stream Llama-2-7B / Llama-3-8B at 0.66-0.70 of 2039 GB/s: fitted 0.713.
# int8 (weight-only, the same two sources): 0.52-0.65, fitted 0.621. fp8 has no row (0.65, not
# fitted). The int4 entry is for an engine whose kernel has no figure below (vLLM, SGLang, HF):
# fitted over every single-GPU 4-bit row as if the engine were unknown, 0.699.
DECODE_BANDWIDTH_EFFICIENCY = {
    "fp32": 0.713,
    "bf16": 0.713,
    "fp16": 0.713,
    "fp8": 0.65,
    "int8": 0.621,
    "int4": 0.699,
}
# 4-bit weight-only kernels differ up to twofold between engines (sizing/frameworks.py
# int4_kernel); each is fitted on the single-GPU 4-bit rows of the engines that run it, from
# two sources where there are two. tinygemm (gpt-fast G=32 and torchao int4wo-64, A100): 0.429.
# ExLlamaV2's GPTQ kernels (turboderp/exllamav2 README @1cefef95 on an RTX 4090;
# mlc-ai/llm-perf-bench README @d401356f on an RTX 4090 and 3090 Ti): 0.757. MLC LLM's
# q4f16_1 (0.823) and llama.cpp's Q4_0 (0.635): llm-perf-bench only, so left out of sample
# they take the 4-bit figure above.
DECODE_INT4_KERNEL_EFFICIENCY = {
    "tinygemm": 0.429,
    "exllamav2": 0.757,
    "mlc": 0.823,
    "ggml": 0.635,
}
# Decode matmuls at large batch run well below peak (weights are re-read per step, small M).
DECODE_COMPUTE_EFFICIENCY = 0.5
# Tensor-parallel decode adds two all-reduces per layer per token; their latency dominates:
# gpt-fast Llama-2-7B TP8 (328 tok/s) and 70B TP8 (62.5 tok/s) over NVLink leave ~25 us per
# all-reduce after the weight streaming time. PCIe all-reduces are taken as 2x slower; fitted on
# the tensor-parallel decode rows, NVLink (gpt-fast) and PCIe (MLC LLM on 2-8 A10Gs and two RTX
# 4090s, llm-perf-bench): 25.3 us.
ALLREDUCE_LATENCY_S = {"nvlink": 25.3e-6, "pcie": 50.6e-6}


@dataclass
class ComputeResult:
    """FLOPs, utilisation and speed, with the working."""

    training_flops: float | None = None
    model_flops: float | None = None
    flops_per_token: float | None = None
    mfu: float | None = None
    hfu: float | None = None
    tokens_per_second: float | None = None
    tokens_per_second_per_gpu: float | None = None
    est_hours: float | None = None
    gpu_hours: float | None = None
    # A multi-node job whose bandwidth between nodes is not known: that collective is not timed.
    inter_node_untimed: bool = False
    notes: list[str] = field(default_factory=list)


def _software_factor(gpu: GPUSpec) -> float:
    arch = (gpu.architecture or "").strip().lower()
    for prefix, factor in ARCH_SOFTWARE_FACTOR.items():
        if arch.startswith(prefix):
            return factor
    return 1.0


def peak_flops(gpu: GPUSpec, precision: str) -> tuple[float | None, str]:
    """Dense peak FLOP/s of `gpu` for the compute dtype of `precision`, and which figure it is."""
    order = {
        "fp32": ("fp32_tflops",),
        "bf16": ("bf16_tflops", "fp16_tflops"),
        "fp16": ("fp16_tflops", "bf16_tflops"),
        "fp8": ("fp8_tflops", "bf16_tflops", "fp16_tflops"),
        # Weight-only int8/int4 dequantise to 16-bit for the matmul.
        "int8": ("bf16_tflops", "fp16_tflops"),
        "int4": ("bf16_tflops", "fp16_tflops"),
    }[precision]
    for name in order:
        v = getattr(gpu, name)
        if v:
            return float(v) * 1e12, name
    return None, ""


def _matmul_params(arch: ModelArch) -> tuple[float, float]:
    """(all matmul params one token uses, those inside the blocks), scaled to the official count."""
    c = arch.counts
    if c.computed_total <= 0 or not arch.is_transformer:
        return arch.params, arch.params
    scale = arch.params / c.computed_total
    layers = c.layers_active * scale
    return layers + c.head_matmul * scale, layers


def routed_expert_params(arch: ModelArch) -> float:
    """Parameters in the routed experts (all of them), scaled to the official count."""
    c = arch.counts
    if not arch.is_moe or c.computed_total <= 0:
        return 0.0
    mats = 3 if arch.gated_mlp else 2
    expert = (
        mats * (arch.hidden_size or 0) * (arch.moe_intermediate_size or arch.intermediate_size or 0)
    )
    return c.moe_layers * arch.experts * expert * arch.params / c.computed_total


def _attention_flops_fwd(arch: ModelArch, s: float) -> float:
    """Forward attention-core FLOPs per token: QK^T and AV over s positions, every layer."""
    if arch.uses_mla:
        width = (arch.heads or 0) * (
            (arch.qk_nope_head_dim or 0) + (arch.qk_rope_head_dim or 0) + (arch.v_head_dim or 0)
        )
        return 2.0 * arch.total_layers * s * width
    return 4.0 * arch.total_layers * s * arch.q_width


# Op-level selective checkpointing (torchtitan) saves every other matmul's output, so half of
# the layers' matmuls run again in backward.
OP_SELECTIVE_RECOMPUTED_MATMULS = 0.5


def training_flops_per_token(w: Workload) -> tuple[float, float, float, float]:
    """(model FLOPs, hardware FLOPs, hardware FLOPs in the attention core, recompute FLOPs) per token.

    Full training: 6N + 3 x attention. LoRA/QLoRA: frozen weights need input gradients (2N) but
    no weight gradients, so 4N + 3 x attention. Freeze: forward everywhere, backward only through
    the trained top layers (and the frozen head's input gradient).
    """
    a = w.arch
    if not a.is_transformer:
        fwd = (a.forward_gflops_per_sample or 0.0) * 1e9
        recompute = fwd if w.gradient_checkpointing == "full" else 0.0
        return 3 * fwd, 3 * fwd + recompute, 0.0, recompute
    n_mm, n_layers = _matmul_params(a)
    attn = _attention_flops_fwd(a, w.seq_len)
    frac = 1.0
    if w.method in ("lora", "qlora"):
        dense = 4 * n_mm
    elif w.method == "freeze":
        frac = min(1.0, FREEZE_TRAINABLE_LAYERS / max(1, a.total_layers))
        dense = 2 * n_mm + 2 * (n_mm - n_layers) + 4 * n_layers * frac
    else:
        dense = 6 * n_mm
    attn_model = attn * (1 + 2 * frac)
    if w.gradient_checkpointing == "full":
        dense_re, attn_re = 2 * n_layers * frac, attn * frac
    elif w.gradient_checkpointing == "selective":
        dense_re, attn_re = 0.0, attn * frac
    elif w.gradient_checkpointing == "op_selective":
        # every other matmul is recomputed; the attention kernel's output is kept
        dense_re, attn_re = 2 * n_layers * frac * OP_SELECTIVE_RECOMPUTED_MATMULS, 0.0
    else:
        dense_re = attn_re = 0.0
    model = dense + attn_model
    recompute = dense_re + attn_re
    return model, model + recompute, attn_model + attn_re, recompute


@lru_cache(maxsize=4096)
def _flops_per_token(w: Workload, arch: ModelArch) -> tuple[float, float, float, float]:
    """training_flops_per_token, worked out once per workload (and its architecture)."""
    return training_flops_per_token(w)


@lru_cache(maxsize=4096)
def _utilisation(w: Workload, arch: ModelArch, gpu: GPUSpec) -> tuple[float, tuple[str, ...]]:
    """utilisation, worked out once per workload and GPU."""
    hfu, why = utilisation(w, gpu)
    return hfu, tuple(why)


def utilisation(w: Workload, gpu: GPUSpec) -> tuple[float, list[str]]:
    """Hardware FLOPs utilisation the matrix units can sustain for this workload on `gpu`."""
    why: list[str] = []
    peak16, _ = peak_flops(gpu, "bf16")
    bw = (gpu.memory_bandwidth_gb_s or 0) * 1e9
    hfu = HFU_REFERENCE
    if peak16 and bw:
        balance = peak16 / bw
        f = min(1.0, (balance / BALANCE_REFERENCE) ** -BALANCE_EXPONENT)
        hfu *= f
        why.append(f"balance {balance:.0f} FLOP/B -> x{f:.2f}")
    sw = _software_factor(gpu)
    if sw != 1.0:
        hfu *= sw
        why.append(f"{gpu.architecture} software x{sw:g}")
    a = w.arch
    if a.is_transformer:
        h = a.hidden_size or 0
        f = h / (h + WIDTH_HALF_POINT)
        hfu *= f
        why.append(f"width {h} x{f:.2f}")
    if w.precision == "fp8" and gpu.fp8_tflops:
        hfu *= FP8_RELATIVE_EFFICIENCY
        why.append(f"fp8 x{FP8_RELATIVE_EFFICIENCY:g}")
    if a.is_moe:
        hfu *= MOE_EFFICIENCY
        why.append(f"MoE x{MOE_EFFICIENCY:g}")
    if w.compile:
        hfu *= COMPILE_SPEEDUP
        why.append(f"torch.compile x{COMPILE_SPEEDUP:g}")
    if w.method == "qlora":
        hfu *= QLORA_SPEED_FACTOR
        why.append(f"NF4 dequantisation x{QLORA_SPEED_FACTOR:g}")
    return hfu, why


def _link(topology: Topology, gpu: GPUSpec) -> tuple[float, str]:
    """Collective bandwidth inside a node (bytes/s, one direction) and its kind."""
    kind = topology.intra_node
    if kind in ("nvlink", "nvswitch"):
        nv = topology.intra_bandwidth_gb_s or gpu.nvlink_bandwidth_gb_s
        if nv:
            return nv / 2 * 1e9 * NVLINK_EFFICIENCY, "nvlink"
        kind = "pcie"  # no NVLink on this part: the node falls back to PCIe
    if kind == "pcie":
        per_direction = (
            topology.intra_bandwidth_gb_s / 2
            if topology.intra_bandwidth_gb_s
            else PCIE_DEFAULT_GB_S
        )
        return per_direction * 1e9 * PCIE_EFFICIENCY, "pcie"
    return 0.0, "none"


def _dp_bandwidth(topology: Topology, gpu: GPUSpec, n_gpus: int) -> tuple[float, str]:
    """Collective bandwidth of a data-parallel group (bytes/s) and its label. Across nodes with
    no known bandwidth between them (``inter_node_gbps`` None, or not above 0): the links inside
    a node only, or no bound at all (math.inf) on one GPU per node (see ``inter_node_unknown``)."""
    intra, kind = _link(topology, gpu)
    if n_gpus <= topology.gpus_per_node:
        return intra, kind
    if inter_node_unknown(topology, n_gpus):
        return (intra if intra > 0 else math.inf), f"{kind} (between nodes: bandwidth unknown)"
    gbps = float(topology.inter_node_gbps or 0.0)
    eff = RDMA_EFFICIENCY if topology.inter_node_rdma else TCP_EFFICIENCY
    # Rail-aligned rings: the node's NICs together carry one copy of the message per step.
    inter = gbps / 8 * 1e9 * eff
    label = "RDMA" if topology.inter_node_rdma else "TCP (no RDMA)"
    if intra <= 0:
        return inter, label
    return min(intra, inter), label


# RDMA fabrics built apart from an instance's front-end network, with ports of their own
# (InfiniBand; RoCE NICs beside the VM's own). EFA is not: it runs over the instance's network,
# at the instance's figure (AWS g4dn.8xlarge: 50 Gbit/s with a 100 Gbit/s adapter).
SEPARATE_RDMA_FABRIC_KINDS = ("infiniband", "roce_v2")


def inter_node_network_gbps(
    network_gbps: float | None, *, rdma_kind: str | None, port_gbps: float | None
) -> float | None:
    """An instance's published network figure (Gbit/s) as its node's bandwidth between nodes,
    or None (unknown): unpublished or not above 0, or below one port (``port_gbps``) of a
    separate RDMA fabric (``rdma_kind`` in SEPARATE_RDMA_FABRIC_KINDS): a node joined by that
    fabric has at least one such port, so a lower figure is its front-end network's (Azure's
    ND series publish 24-80 Gbit/s beside their 8 x 200-400 Gbit/s InfiniBand)."""
    if network_gbps is None or network_gbps <= 0:
        return None
    if rdma_kind in SEPARATE_RDMA_FABRIC_KINDS and port_gbps and network_gbps < port_gbps:
        return None
    return network_gbps


def inter_node_unknown(topology: Topology, n_gpus: int) -> bool:
    """Whether a job on ``n_gpus`` spans nodes whose bandwidth between them is not known (no
    figure, or none above 0: a missing figure is never taken as 0)."""
    gbps = topology.inter_node_gbps
    return n_gpus > topology.gpus_per_node and not (gbps is not None and gbps > 0)


def training_speed(
    w: Workload,
    gpu: GPUSpec,
    *,
    gpu_count: int,
    sharding: str,
    topology: Topology,
    trainable_params: float,
    explain: bool = True,
) -> ComputeResult:
    """FLOPs, utilisation and tokens/s of a training job (tokens/s and hours when possible).

    explain=False leaves out the notes (the planner weighs thousands of shapes)."""
    r = ComputeResult()
    a = w.arch
    model, hardware, attn_hw, recompute = _flops_per_token(w, a)
    r.flops_per_token = model
    tokens = w.tokens
    unit = "token" if a.is_transformer else "sample"
    if tokens:
        r.model_flops = model * tokens
        r.training_flops = hardware * tokens
    if tokens and explain:
        r.notes.append(
            f"training FLOPs: {large(hardware * tokens)} = {large(tokens)} {unit}s x {large(hardware)} FLOPs/{unit} "
            f"(6N + 12 L s d_attn, Kaplan 2020 / Narayanan 2021"
            + (f"; + {large(recompute)} recomputation" if recompute else "")
            + (", frozen base: 4N" if w.method in ("lora", "qlora") else "")
            + ")"
        )
    if not hardware:
        r.notes.append("time: no FLOPs figure for this preset, so no time estimate")
        return r
    peak, which = peak_flops(gpu, w.precision if w.method != "qlora" else "bf16")
    if not peak:
        r.notes.append(f"time: {gpu.slug} has no dense rate for {w.precision} in the catalog")
        return r
    if w.precision == "fp8" and which != "fp8_tflops":
        r.notes.append(
            f"time: {gpu.slug} has no FP8 tensor cores; estimated at the {which[:-7]} rate"
        )
    if w.precision == "bf16" and which == "fp16_tflops":
        r.notes.append(
            f"time: {gpu.slug} has no BF16 tensor cores; estimated at the FP16 rate (use fp16)"
        )
    hfu, why = _utilisation(w, a, gpu)
    tp, pp = w.tensor_parallel, w.pipeline_parallel
    mp = tp * pp
    dp = max(1, gpu_count // mp)
    micro_tokens = w.batch_size * (w.seq_len if a.is_transformer else 1)
    t_tok = _seconds_per_token(hardware, attn_hw, peak, hfu)
    t_compute = micro_tokens * t_tok / mp
    # Data-parallel collective per micro-step.
    t_comm = 0.0
    link = "-"
    if dp > 1:
        bw, link = _dp_bandwidth(topology, gpu, gpu_count)
        r.inter_node_untimed = inter_node_unknown(topology, gpu_count)
        ring = (dp - 1) / dp
        wb = 4.0 if w.precision == "fp32" else 2.0
        if sharding in ("zero3", "fsdp"):
            # All-gather for forward and backward, reduce-scatter of gradients, every micro-batch.
            volume = ring * (2 * a.params + trainable_params) * wb / mp
        else:
            # One all-reduce of the gradients per optimizer step, shared by its micro-batches.
            accumulation = w.gradient_accumulation or (
                PIPELINE_MICROBATCHES_PER_STAGE * pp if pp > 1 else 1
            )
            volume = 2 * ring * trainable_params * wb / mp / accumulation
        t_comm = volume / bw if bw > 0 else float("inf")
    exposed = max(0.0, t_comm - COMM_OVERLAP * t_compute)
    # Tensor-parallel all-reduces of activations: 4 per layer per micro-step (2 fwd, 2 bwd).
    t_tp = 0.0
    if tp > 1 and a.is_transformer:
        intra, _ = _link(topology, gpu)
        vol = (
            4
            * (a.total_layers / pp)
            * micro_tokens
            * (a.hidden_size or 0)
            * 2.0
            * 2
            * (tp - 1)
            / tp
        )
        t_tp = vol / intra if intra > 0 else float("inf")
    step = t_compute + exposed + t_tp
    if pp > 1:
        m = w.gradient_accumulation or PIPELINE_MICROBATCHES_PER_STAGE * pp
        step /= 1 - (pp - 1) / (m + pp - 1)
    nodes = max(1, math.ceil(gpu_count / max(1, topology.gpus_per_node)))
    scale = _scale(nodes)
    per_gpu = micro_tokens / step / mp * scale
    r.hfu = hfu
    r.tokens_per_second_per_gpu = per_gpu
    r.tokens_per_second = per_gpu * gpu_count
    r.mfu = model * per_gpu / peak
    if tokens:
        r.est_hours = tokens / r.tokens_per_second / 3600 / GOODPUT
        r.gpu_hours = r.est_hours * gpu_count
    if not explain:
        return r
    r.notes.append(
        f"utilisation: HFU {hfu:.2f} of {peak / 1e12:.0f} TFLOPS ({which}; "
        + ", ".join(why)
        + f"), attention core at x{ATTENTION_RELATIVE_EFFICIENCY:g}; MFU {r.mfu:.2f}"
    )
    if dp > 1:
        r.notes.append(
            f"communication: {t_comm * 1e3:.0f} ms per micro-step over {link}, {exposed * 1e3:.0f} ms not hidden "
            f"behind {t_compute * 1e3:.0f} ms of compute ({sharding}, data parallel {dp})"
        )
    if r.inter_node_untimed:
        r.notes.append(
            f"communication between nodes: bandwidth not known, so the collective between the "
            f"{nodes} nodes is left out of the time (a lower bound: the run may take longer)"
        )
    if scale < 1:
        r.notes.append(f"scale: x{scale:.2f} for synchronising {nodes} nodes")
    r.notes.append(
        f"throughput: {per_gpu:,.0f} {unit}s/s per GPU, {r.tokens_per_second:,.0f} for {gpu_count} GPUs"
    )
    if tokens:
        r.notes.append(
            f"time: {r.est_hours:,.1f} h wall, {r.gpu_hours:,.0f} GPU-hours = {unit}s / throughput / "
            f"goodput {GOODPUT:g} (Llama 3: >90% effective training time)"
        )
    return r


def _seconds_per_token(hardware: float, attn_hw: float, peak: float, hfu: float) -> float:
    """GPU-seconds of compute per training token: dense FLOPs at HFU, the attention core slower."""
    dense_hw = hardware - attn_hw
    return dense_hw / (peak * hfu) + attn_hw / (peak * hfu * ATTENTION_RELATIVE_EFFICIENCY)


def _scale(nodes: int) -> float:
    """Throughput lost to synchronising `nodes` nodes (stragglers, jitter), per doubling."""
    return 1.0 / (1.0 + SCALE_PENALTY_PER_DOUBLING * math.log2(nodes)) if nodes > 1 else 1.0


def gpu_hours_floor(w: Workload, gpu: GPUSpec, nodes: int) -> float | None:
    """The fewest GPU-hours training `w.tokens` can take on `nodes` nodes of `gpu`, whatever the
    GPUs per node, sharding or links: compute time alone with the scale penalty of that many
    nodes. training_speed only adds to it (communication not hidden, tensor-parallel
    all-reduces, pipeline bubbles), so its GPU-hours are never below this figure, and the
    figure rises with the node count. The planner uses it to stop weighing node counts that
    cannot be cheaper than one already found. None without tokens or dense figures, and for
    inference (decode time is bound by memory traffic, not by these FLOPs).
    """
    if not w.is_training:
        return None
    a = w.arch
    _, hardware, attn_hw, _ = _flops_per_token(w, a)
    peak, _ = peak_flops(gpu, w.precision if w.method != "qlora" else "bf16")
    if not (w.tokens and hardware and peak):
        return None
    hfu, _ = _utilisation(w, a, gpu)
    return (
        w.tokens * _seconds_per_token(hardware, attn_hw, peak, hfu) / _scale(nodes) / 3600 / GOODPUT
    )


def decode_bandwidth_efficiency(w: Workload) -> float:
    """Fraction of HBM bandwidth a batch-1 decode step streams weights at: the engine's 4-bit
    kernel's figure where it has one, else the weight format's."""
    if w.precision == "int4":
        kernel = FRAMEWORKS[w.framework].int4_kernel
        if DECODE_INT4_KERNEL_EFFICIENCY.get(kernel):
            return DECODE_INT4_KERNEL_EFFICIENCY[kernel]
    return DECODE_BANDWIDTH_EFFICIENCY[w.precision]


def decode_speed(
    w: Workload, gpu: GPUSpec, *, tp: int, topology: Topology, kv_cache_bytes_per_gpu: float
) -> ComputeResult:
    """Decode tokens/s bounded by streaming weights + KV cache from HBM, or by compute."""
    r = ComputeResult()
    a = w.arch
    conc = w.concurrency or w.batch_size
    ctx = w.context_len or w.seq_len
    n_mm, _ = _matmul_params(a)
    flops_tok = 2 * n_mm + (_attention_flops_fwd(a, ctx) if a.is_transformer else 0.0)
    r.flops_per_token = flops_tok
    bw = (gpu.memory_bandwidth_gb_s or 0) * 1e9
    peak, _ = peak_flops(gpu, w.precision)
    if not bw or not peak:
        r.notes.append(f"decode: {gpu.slug} lacks a bandwidth or compute figure")
        return r
    # Bytes streamed per decode step on one GPU: its weight shard (MoE: the experts this batch
    # touches) and the KV cache of every sequence.
    if w.precision in ("int4", "int8", "fp8"):
        qb = INT4_BYTES_PER_PARAM if w.precision == "int4" else 1.0
        quant = quantizable_params(a)
        weight_bytes = quant * qb + (a.params - quant) * 2.0
    else:
        weight_bytes = a.params * DTYPE_BYTES[w.precision]
    if a.is_moe:
        # Experts a batch of `conc` tokens touches per layer: 1 - (1 - k/E)^conc of them.
        touched = 1 - (1 - a.active_experts / a.experts) ** conc
        routed = routed_expert_params(a)
        weight_bytes *= 1 - routed / a.params * (1 - touched)
    step_bytes = weight_bytes / tp + kv_cache_bytes_per_gpu
    eff = decode_bandwidth_efficiency(w)
    t_mem = step_bytes / (bw * eff)
    t_flops = conc * flops_tok / tp / (peak * DECODE_COMPUTE_EFFICIENCY)
    t_comm = 0.0
    if tp > 1:
        _, kind = _link(topology, gpu)
        t_comm = 2 * a.total_layers * ALLREDUCE_LATENCY_S.get(kind, ALLREDUCE_LATENCY_S["pcie"])
    step = max(t_mem, t_flops) + t_comm
    r.tokens_per_second = conc / step
    r.tokens_per_second_per_gpu = r.tokens_per_second / tp
    bound = "memory-bandwidth" if t_mem >= t_flops else "compute"
    r.notes.append(
        f"decode: {r.tokens_per_second:,.1f} tokens/s ({conc} sequences, {conc / step / conc:,.1f} per sequence), "
        f"{bound}-bound: {step_bytes / 1e9:.2f} GB per step at {eff:.0%} of {bw / 1e9:,.0f} GB/s"
        + (f", + {t_comm * 1e6:.0f} us of TP all-reduces" if t_comm else "")
    )
    if w.tokens:
        r.est_hours = w.tokens / r.tokens_per_second / 3600
        r.gpu_hours = r.est_hours * tp
        r.notes.append(f"time: {r.est_hours:,.2f} h to generate {large(w.tokens)} tokens")
    return r
