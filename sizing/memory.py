"""Memory per GPU: weights, gradients, optimizer states, activations, KV cache, adapters, overhead.

Every figure is bytes per GPU. Sources for the formulas:
- Bytes per parameter of mixed-precision training: 2 (16-bit weights) + 2 (16-bit gradients)
  + 12 (fp32 master weights, Adam momentum and variance), Rajbhandari et al. 2020, "ZeRO:
  Memory Optimizations Toward Training Trillion Parameter Models", sec. 3.1; the same 16 bytes
  in EleutherAI's "Transformer Math 101" (Anthony, Biderman, Schoelkopf 2023).
- ZeRO-1/2/3 partitioning of optimizer states, gradients and parameters over the data-parallel
  degree: ZeRO paper sec. 5 (FSDP FULL_SHARD is ZeRO-3: Zhao et al. 2023, "PyTorch FSDP").
- Activations: Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer
  Models", sec. 4.1: 34 s b h + 5 a s^2 b bytes per layer for GPT with 16-bit activations. We
  count the same saved tensors term by term, so that GQA, SwiGLU, flash attention (no s^2
  term: Dao et al. 2022) and frozen weights (LoRA saves no input of a frozen linear) change the
  right terms; for GPT with eager attention the count reduces to Korthikanti's 34 + 5as/h.
- QLoRA: NF4 weights with blockwise absmax and double quantisation, Dettmers et al. 2023 sec. 3.
- KV cache: 2 x layers x KV heads x head dim x bytes per token (GQA: Ainslie et al. 2023),
  allocated in 16-token blocks (Kwon et al. 2023, vLLM PagedAttention, sec. 4.1); DeepSeek's
  latent attention caches kv_lora_rank + rope dims per token (DeepSeek-V2 report sec. 2.1).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from .frameworks import FRAMEWORKS
from .specs import ModelArch
from .workload import Workload

GIB = 2**30

# ---- bytes per parameter / element ---------------------------------------------------------
DTYPE_BYTES = {"fp32": 4.0, "bf16": 2.0, "fp16": 2.0, "fp8": 1.0, "int8": 1.0, "int4": 0.5}
# Master weights kept in fp32 by mixed-precision training (ZeRO paper sec. 3.1).
MASTER_WEIGHT_BYTES = 4.0
# Gradients in mixed precision are fp32 in the common stacks: torch.amp keeps fp32 .grad on fp32
# parameters, Megatron-LM accumulates into an fp32 main_grad buffer, FSDP mixed precision keeps
# fp32 sharded gradients. With the 16-bit working copy of the weights (autocast's weight cache,
# Megatron's bf16 params) that is 2 + 4 + 12 = 18 B per parameter; the ZeRO paper's 16 assumes
# 16-bit gradients. Pure low-precision training keeps gradients in the weight dtype.
MIXED_PRECISION_GRAD_BYTES = 4.0
# Optimizer state bytes per trainable parameter, fp32 states (ZeRO paper: Adam K=12 incl. master).
# adamw: momentum + variance; sgd: momentum; adamw_8bit: two 8-bit states (Dettmers et al. 2022,
# "8-bit Optimizers via Block-wise Quantization"; block statistics add < 0.5%).
OPTIMIZER_STATE_BYTES_FP32 = {"adamw": 8.0, "sgd": 4.0, "adamw_8bit": 2.0}
# Adafactor keeps row and column second-moment factors and no momentum by default
# (Shazeer & Stern 2018; HF Adafactor beta1=None): 4 bytes x (rows + cols) per matrix, i.e.
# about 4 x 2 / hidden bytes per parameter of an h x h matrix.
ADAFACTOR_FACTOR_BYTES = 4.0 * 2
# QLoRA NF4: 4-bit codes + one fp32 absmax per 64-weight block (0.5 bit/param); double
# quantisation stores the absmax in 8 bits with an fp32 constant per 256 blocks, cutting the
# constants to 0.127 bit/param (Dettmers et al. 2023, sec. 3); `workload.double_quant` picks it.
NF4_BYTES_PER_PARAM = 0.5 + 0.127 / 8
# Without double quantisation (bitsandbytes compress_statistics=False, transformers' default):
# one fp32 absmax per 64-weight block, 0.5 bit per weight (Dettmers et al. 2023, sec. 3).
NF4_NO_DQ_BYTES_PER_PARAM = 0.5 + 4 / 64


def nf4_bytes_per_param(w: Workload) -> float:
    """Bytes per 4-bit weight of a QLoRA base, with or without double quantisation."""
    return NF4_BYTES_PER_PARAM if w.double_quant else NF4_NO_DQ_BYTES_PER_PARAM


# Weight-only int4 for inference (GPTQ/AWQ, group size 128, fp16 scale + zero per group).
INT4_BYTES_PER_PARAM = 0.5 + 4 / 128
# LLaMA-Factory's "freeze" tuning trains the last 2 layers by default (freeze_trainable_layers=2).
FREEZE_TRAINABLE_LAYERS = 2

# ---- activations ---------------------------------------------------------------------------
# HF transformers (and litgpt) RMSNorm upcasts its input to fp32 and autograd keeps that copy:
# 4 extra bytes per element per norm in 16-bit training.
RMSNORM_FP32_UPCAST_BYTES = 4.0
# Loss head: HF causal-LM heads upcast logits to fp32 before cross-entropy, so per token and
# vocabulary entry we hold the fp32 logits (4), the saved log-softmax (4) and, in backward, the
# fp32 gradient (4). The 16-bit logits are freed after the cast.
LOSS_BYTES_PER_LOGIT = 12.0
# Bytes per logit by how the loss is computed (workload.loss; defaults per framework in
# sizing/frameworks.py). chunked, as torchtune's CEWithChunkedOutputLoss does it (pytorch/torchtune
# torchtune/modules/loss/ce_chunked_output_loss.py and TransformerDecoder.chunked_output @bd2a0fc7;
# Megatron's vocab-parallel CE alike): the bf16 logits of every chunk (2) stay until backward,
# and the fp32 upcast with its softmax and gradient exists for one of 8 chunks at a time
# (12 / 8); torchtune's README measures 8.1 GiB saved by chunking at 2 x 4096 tokens x 128k
# vocabulary (compile on in both rows). Compiled (torchtune's compile_loss compiles
# compute_cross_entropy, the per-chunk `F.cross_entropy(logits.float(), ...)`), Inductor fuses
# the upcast, log-softmax and gradient into kernels that read the bf16 chunk and write its bf16
# gradient: 2 + 2 / 8. fused (Unsloth's Triton cross-entropy): bf16 logits only, gradient in
# place.
LOSS_BYTES_BY_MODE = {"standard": LOSS_BYTES_PER_LOGIT, "chunked": 2 + 12 / 8, "fused": 2.0}
LOSS_CHUNKS = 8
COMPILED_CHUNKED_LOSS_BYTES = 2 + 2 / LOSS_CHUNKS
# litgpt's chunked_cross_entropy (Lightning-AI/litgpt litgpt/utils.py @5895df10, the lm_head run
# in 128-token chunks, finetune/lora.py `model(input_ids, lm_head_chunk_size=128)`) calls
# F.cross_entropy on each chunk in the logits' own dtype, no upcast: every chunk keeps its logits
# (2 B in bf16-true) and its saved log-softmax output (2 B) until backward; under autocast
# (16-mixed) cross_entropy runs in fp32, so the saved log-softmax is 4 B.
LITGPT_CHUNKED_LOSS_BYTES = {"16-bit": 2 + 2.0, "mixed": 2 + 4.0}
# torch.compile (workload.compile): Inductor partitions the joint forward/backward graph with
# AOTAutograd's min-cut rematerialisation (pytorch/pytorch torch/_inductor/compile_fx.py
# partition_fn -> torch/_functorch/partitioners.py min_cut_rematerialization_partition), which
# recomputes cheap pointwise ops in backward instead of saving their outputs. Per layer that drops
# the norms' fp32 upcast copies (the fused norm saves its 16-bit input and one statistic per
# token) and the MLP's pointwise outputs: act(gate) and act(gate) * up (SwiGLU keeps gate and
# up), or act(x) (GELU keeps its input). Under op-level selective checkpointing the policy, not the
# partitioner, decides what is saved, so nothing changes there.
# Op-level selective checkpointing (torchtitan `selective_ac_option = "op"`) saves the output of
# every other matmul plus the attention kernel's output and recomputes the rest of the layer.
OP_SELECTIVE_SAVED_MATMUL_SHARE = 0.5
# Activation offloading (torchtune enable_activation_offloading) streams saved activations to
# host memory; about two layers' worth stay on the GPU in flight (the one being offloaded and
# the one prefetched for backward).
OFFLOAD_LAYERS_ON_GPU = 2.0
# Backward keeps gradient buffers about the size of one layer's activations while it walks the
# layers; recomputation (full checkpointing) holds one recomputed layer on top.
BACKWARD_TRANSIENT_LAYERS = 1.0
# CNN / U-Net block checkpointing keeps block inputs only: about a quarter of the activations
# (a 3-4x saving is what diffusers / kohya users report for SD U-Nets; an assumption, not fitted).
CNN_RECOMPUTE_FACTOR = 0.25
# Inference: transient prefill working set, for the chunk vLLM runs at once
# (max_num_batched_tokens, 8192 in vLLM >= 0.6 with chunked prefill).
PREFILL_CHUNK_TOKENS = 8192
# vLLM allocates the KV cache in blocks of 16 tokens (Kwon et al. 2023).
KV_BLOCK_TOKENS = 16

# ---- overhead ------------------------------------------------------------------------------
# CUDA context, cuBLAS/cuDNN kernels and handles. The HF "model memory anatomy" guide measured
# 1.3 GB on a V100 before any tensor (CUDA 11, eager module loading); lazy loading (CUDA >= 11.7)
# roughly halves it. 1.0 GiB keeps fit checks on the safe side of both.
CUDA_CONTEXT_GIB = 1.0
# PyTorch caching allocator: reserved exceeds allocated by block rounding and splitting, mostly
# for the varying-size activation tensors; 10% of activations (typical reserved/allocated gap).
ALLOCATOR_FRAGMENTATION = 0.10


@dataclass
class MemoryResult:
    """Per-GPU bytes by component, with the working shown."""

    weights: float = 0.0
    gradients: float = 0.0
    optimizer: float = 0.0
    activations: float = 0.0
    kv_cache: float = 0.0
    adapters: float = 0.0
    cuda_context: float = 0.0
    fragmentation: float = 0.0
    trainable_params: float = 0.0
    explain: bool = True
    notes: list[str] = field(default_factory=list)

    def note(self, text: Callable[[], str]) -> None:
        """Record a line of working (built only when explaining: min_gpus calls this in a loop)."""
        if self.explain:
            self.notes.append(text())

    @property
    def overhead(self) -> float:
        """CUDA context plus allocator slack."""
        return self.cuda_context + self.fragmentation

    @property
    def total(self) -> float:
        """Bytes per GPU."""
        return (
            self.weights
            + self.gradients
            + self.optimizer
            + self.activations
            + self.kv_cache
            + self.adapters
            + self.overhead
        )


def _gib(x: float) -> str:
    return f"{x / GIB:.2f} GiB"


def lora_params(arch: ModelArch, rank: int, targets: str) -> float:
    """LoRA parameters: rank x (fan_in + fan_out) per adapted matrix (Hu et al. 2021, sec. 4.1).

    qv: q and v (the LoRA paper's setting, sec. 7.1); attention: q, k, v, o; all_linear adds
    every MLP matrix, each expert of an MoE layer included.
    """
    if not arch.is_transformer:
        return 0.0
    h = arch.hidden_size or 0
    if targets == "qv":
        attn = (h + arch.q_width) + (h + arch.v_width)
    else:
        attn = (h + arch.q_width) + 2 * (h + arch.kv_width) + (arch.o_width + h)
    per_layer_attn = attn * rank
    total = per_layer_attn * arch.total_layers
    if targets == "all_linear":
        mats = 3 if arch.gated_mlp else 2
        inter = arch.intermediate_size or 4 * h
        dense_mlp = mats * (h + inter) * rank
        c = arch.counts
        total += dense_mlp * c.dense_layers
        if arch.is_moe:
            e_inter = arch.moe_intermediate_size or inter
            expert = mats * (h + e_inter) * rank
            total += expert * (arch.experts + arch.shared_experts) * c.moe_layers
    return float(total)


def _scaled(arch: ModelArch, part: float) -> float:
    """Scale a computed parameter count so the parts add up to the official total."""
    c = arch.counts
    if c.computed_total <= 0:
        return part
    return part * arch.params / c.computed_total


def _layer_params(arch: ModelArch) -> float:
    c = arch.counts
    n = max(1, c.dense_layers + c.moe_layers)
    return _scaled(arch, c.layers_total / n)


def quantizable_params(arch: ModelArch) -> float:
    """Linear weights inside the blocks (what NF4 / int4 / int8 formats quantise)."""
    c = arch.counts
    if not arch.is_transformer:
        return arch.params
    return _scaled(arch, c.layers_total - (c.dense_layers + c.moe_layers) * c.layer_norms)


def _act_bytes(w: Workload) -> float:
    """Bytes per element of saved activations."""
    return 4.0 if w.precision == "fp32" else 2.0


def lora_dropout_bytes_per_token(w: Workload, *, moe_layer: bool) -> float:
    """Bytes per token one layer saves for LoRA dropout (0 when the dropout is 0).

    Every adapter with dropout runs `lora_A(dropout(x))` (huggingface/peft
    src/peft/tuners/lora/layer.py @00336949, torchtune/modules/peft/lora.py @031d89b8,
    Lightning-AI/litgpt litgpt/lora.py @01e39f50), and lora_A's weight is trained, so its
    input, the dropped-out copy of x, is saved for backward (activation dtype), and so is the
    dropout's mask (a bool tensor, 1 B per element, native_dropout's backward). With dropout 0
    the frameworks use nn.Identity (litgpt: `lambda x: x`): lora_A's input is x itself, which
    the layer keeps anyway, so nothing is added. One copy per adapted module, on its input
    width: PEFT and torchtune adapt q, k and v as separate modules (three copies of the
    attention input); litgpt's fused LoRAQKVLinear applies one dropout for all three.
    """
    if w.method not in ("lora", "qlora") or w.lora_dropout <= 0:
        return 0.0
    a = w.arch
    h = float(a.hidden_size or 0)
    targets = w.lora_targets or "all_linear"
    qkv = 3 if targets != "qv" else 2
    width = h if FRAMEWORKS[w.framework].lora_fused_qkv else qkv * h
    if targets != "qv":
        width += a.o_width
    if targets == "all_linear":
        mats_in = (2 if a.gated_mlp else 1) * h  # gate and up (or fc) read the MLP input
        if moe_layer:
            routed = a.active_experts + a.shared_experts
            width += routed * mats_in + a.moe_intermediate_active()
        else:
            width += mats_in + float(a.intermediate_size or 4 * h)
    return width * (_act_bytes(w) + 1.0)


def activation_bytes_per_token(w: Workload, *, moe_layer: bool) -> tuple[float, float]:
    """Saved activation bytes per token for one layer, as (linear term, per-context-token term).

    The second element multiplies the sequence length (eager attention's softmax/dropout
    buffers: Korthikanti's 5 a s^2 b); it is 0 with flash attention.
    """
    a = w.arch
    e = _act_bytes(w)
    h = float(a.hidden_size or 0)
    frozen_mlp = w.method == "lora" and w.lora_targets in ("qv", "attention")
    # Norm inputs: under autocast (mixed precision) the residual stream stays fp32, so norms
    # save fp32 inputs; RMSNorm also keeps an fp32 copy in 16-bit training.
    norm_e = (4.0 if w.mixed_precision else e) + (
        RMSNORM_FP32_UPCAST_BYTES if a.norm == "rmsnorm" and e == 2 and not w.compile else 0
    )
    out = 2 * h * norm_e
    # Attention: shared input of q/k/v, the q, k, v the kernel saves, the output (o_proj input).
    out += h * e + (a.q_width + a.kv_width + a.v_width) * e + a.o_width * e
    if a.dropout:
        out += 2 * h  # 1-byte dropout masks after attention and after the MLP
    # MLP.
    inter = float(a.moe_intermediate_active() if moe_layer else (a.intermediate_size or 4 * h))
    if a.gated_mlp:
        out += (2 if w.compile else 3) * inter * e  # gate and up outputs, act(gate)
    else:
        out += inter * e  # activation input
    if not frozen_mlp:
        out += h * e  # MLP input (input of a trainable linear)
        if not w.compile:  # compiled: recomputed from the saved pointwise inputs
            out += inter * e  # down/fc2 input
    if moe_layer:
        out += (
            2 * a.active_experts * h * e + a.experts * 4
        )  # dispatch/combine copies, fp32 router logits
    out += lora_dropout_bytes_per_token(w, moe_layer=moe_layer)
    # Eager attention keeps the softmax output (+ dropout mask and output) per key position.
    per_ctx = 0.0
    if w.attention == "eager":
        soft = 4.0 if (w.mixed_precision or e == 4) else e  # autocast runs softmax in fp32
        per_ctx = (a.heads or 0) * (soft + ((1 + soft) if a.dropout else 0))
    return out, per_ctx


def _activations(w: Workload, tp: int, explain: bool = True) -> tuple[float, str]:
    """Saved activations per GPU for one micro-batch, with the formula used (when explaining)."""
    a = w.arch
    b, s = w.batch_size, w.seq_len
    e = _act_bytes(w)
    ckpt = w.gradient_checkpointing
    if not a.is_transformer:
        per = (a.activation_gib_per_sample or 0.0) * GIB * (e / 2)
        if ckpt == "full":
            per *= CNN_RECOMPUTE_FACTOR
        return (
            b * per,
            f"b={b} x {per / GIB:.3f} GiB per sample ({a.reference_input or 'reference input'})",
        )
    c = a.counts
    lin_d, ctx_d = activation_bytes_per_token(w, moe_layer=False)
    lin_m, ctx_m = activation_bytes_per_token(w, moe_layer=True) if a.is_moe else (0.0, 0.0)
    if ckpt in ("selective", "op_selective", "full"):
        ctx_d = ctx_m = 0.0  # selective recomputation drops exactly the attention-core buffers
    layer_d = b * s * (lin_d + ctx_d * s)
    layer_m = b * s * (lin_m + ctx_m * s)
    if ckpt == "op_selective":
        layer_d = b * s * _op_selective_bytes_per_token(w, moe_layer=False)
        layer_m = b * s * _op_selective_bytes_per_token(w, moe_layer=True) if a.is_moe else 0.0
    n_dense, n_moe = c.dense_layers, c.moe_layers
    if w.method == "freeze":  # gradients flow only through the trained top layers
        n_moe = min(n_moe, FREEZE_TRAINABLE_LAYERS)
        n_dense = min(n_dense, FREEZE_TRAINABLE_LAYERS - n_moe)
    biggest = max(layer_d, layer_m)
    offload = w.activation_offloading
    logits = _logit_bytes(w)
    # The loss head's buffers (logits, saved softmax, their gradient) live from the end of the
    # forward pass until backward has gone through the output projection; the layers' backward
    # buffers (and, checkpointed, the recomputed layer) come after that, so the two never meet:
    # the peak holds the larger of them on top of what every layer saved.
    if ckpt == "full":
        n_kept = min(n_dense + n_moe, OFFLOAD_LAYERS_ON_GPU) if offload else n_dense + n_moe
        kept = n_kept * b * s * (a.hidden_size or 0) * e  # each layer's input
        backward = (1 + BACKWARD_TRANSIENT_LAYERS) * biggest
    elif offload:
        kept = OFFLOAD_LAYERS_ON_GPU * biggest
        backward = BACKWARD_TRANSIENT_LAYERS * biggest
    else:
        kept = n_dense * layer_d + n_moe * layer_m
        backward = BACKWARD_TRANSIENT_LAYERS * biggest
    retained = previous_step_4bit_inputs(w)
    total = (kept + max(backward, logits + retained)) / tp
    if ckpt != "full" and not offload and tp > 1:
        # The K and V a layer saves are copied with their heads past TP = KV heads: each GPU
        # holds kv_heads_per_gpu of them, not 1/tp (replicated_kv_params).
        share = _kv_copy_share(a, tp)
        total += (n_dense + n_moe) * b * s * (a.kv_width + a.v_width) * e * share
    if not explain:
        return total, ""
    if offload:
        how = (
            f"activations offloaded to host: {OFFLOAD_LAYERS_ON_GPU:g} layers in flight "
            f"({_gib(biggest)} each, {ckpt} checkpointing) + backward buffers"
        )
    elif ckpt == "full":
        how = (
            f"{n_dense + n_moe} layer inputs (s x b x h x {e:g} B) + "
            f"{1 + BACKWARD_TRANSIENT_LAYERS:g} recomputed layers ({_gib(biggest)} each)"
        )
    else:
        per_tok = (lin_d + ctx_d * s) / (a.hidden_size or 1)
        core = {"none": "no recomputation", "op_selective": "op-level selective recomputation"}.get(
            ckpt, "selective recomputation"
        )
        how = (
            f"{n_dense + n_moe} layers x s={s} x b={b} x h={a.hidden_size} x {per_tok:.1f} B "
            f"(Korthikanti 2022 counted term by term: {w.attention} attention, {core})"
            f" + {BACKWARD_TRANSIENT_LAYERS:g} layer of backward buffers"
        )
    if logits:
        how += (
            f"; at the peak the larger of those backward buffers ({_gib(backward)}) and the "
            f"loss head {_gib(logits)} (s x b x V={a.vocab_size} x "
            f"{loss_bytes_per_logit(w):g} B, {w.loss} loss"
            + (", compiled" if w.compile and w.loss == "chunked" else "")
            + "; freed before backward reaches the layers)"
        )
    if retained:
        how += (
            f"; + {_gib(retained)} at the end of the forward pass: the previous step's 4-bit "
            f"matmul inputs, kept by its graph ({w.framework}'s loop still holds its logits; "
            "bitsandbytes < 0.43.2 MatMul4Bit keeps its input on ctx)"
        )
    if tp > 1:
        how += f", / tensor_parallel {tp} (sequence parallel)"
    return total, how


def previous_step_4bit_inputs(w: Workload) -> float:
    """Bytes of the previous step's 4-bit matmul inputs still alive during the next forward.

    bitsandbytes' MatMul4Bit kept its input as a ctx attribute (`ctx.tensors = (A, B)`, 0.41 to
    0.43.1; bitsandbytes-foundation/bitsandbytes 9e753741 stopped it), which backward does not
    free: it lives as long as the graph node. A training loop that still references the
    previous step's output while the next forward runs (litgpt: `logits = model(...)` rebinds
    only afterwards, litgpt/finetune/lora.py @5895df10) keeps every one of them: per layer the
    q/k/v input, the attention output, the MLP input and the down projection's input (the head's
    input too when the head is 4-bit). Counted without checkpointing only (litgpt's
    single-device QLoRA has none); freed once the new logits are bound, before the loss.
    """
    a = w.arch
    fw = FRAMEWORKS[w.framework]
    if (
        w.method != "qlora"
        or not fw.keeps_previous_step_graph
        or w.gradient_checkpointing != "none"
        or w.activation_offloading
        or not a.is_transformer
    ):
        return 0.0
    e = _act_bytes(w)
    h = float(a.hidden_size or 0)
    c = a.counts
    dense = 2 * h + a.o_width + float(a.intermediate_size or 4 * h)
    moe = h + a.o_width + (a.active_experts + a.shared_experts) * h + a.moe_intermediate_active()
    per_token = c.dense_layers * dense + c.moe_layers * moe
    if fw.qlora_quantises_head and a.vocab_size:
        per_token += h
    return w.batch_size * w.seq_len * per_token * e


def loss_bytes_per_logit(w: Workload) -> float:
    """Bytes per logit the loss head holds at its peak, by loss mode, framework and compile."""
    if w.loss == "chunked" and w.framework == "litgpt":
        return LITGPT_CHUNKED_LOSS_BYTES["mixed" if w.mixed_precision else "16-bit"]
    if w.loss == "chunked" and w.compile:
        return COMPILED_CHUNKED_LOSS_BYTES
    return LOSS_BYTES_BY_MODE[w.loss]


def _logit_bytes(w: Workload) -> float:
    a = w.arch
    lm_head = a.kind in ("decoder", "encoder_decoder") or (
        a.kind == "encoder" and w.task == "pretrain"
    )
    if not lm_head or not a.vocab_size:
        return 0.0
    return w.batch_size * w.seq_len * a.vocab_size * loss_bytes_per_logit(w)


def _op_selective_bytes_per_token(w: Workload, *, moe_layer: bool) -> float:
    """Saved bytes per token of one layer under op-level selective checkpointing: the layer
    input, the attention output and OP_SELECTIVE_SAVED_MATMUL_SHARE of the matmul outputs."""
    a = w.arch
    e = _act_bytes(w)
    h = float(a.hidden_size or 0)
    inter = float(a.moe_intermediate_active() if moe_layer else (a.intermediate_size or 4 * h))
    matmul_out = a.q_width + a.kv_width + a.v_width + h + (2 if a.gated_mlp else 1) * inter + h
    return h * e + a.o_width * e + OP_SELECTIVE_SAVED_MATMUL_SHARE * matmul_out * e


def _optimizer_state_bytes(w: Workload, param_bytes: float) -> float:
    """Optimizer state bytes per trainable parameter (without master weights)."""
    opt = w.optimizer or "adamw"
    if opt == "adafactor":
        return ADAFACTOR_FACTOR_BYTES / max(1, w.arch.hidden_size or 1024)
    fp32_states = w.mixed_precision or w.precision == "fp32"
    if opt == "adamw_8bit":
        return OPTIMIZER_STATE_BYTES_FP32["adamw_8bit"]
    if fp32_states:
        return OPTIMIZER_STATE_BYTES_FP32[opt]
    # Pure low precision: states in the weight dtype (adamw: two, sgd: one).
    return (2 if opt == "adamw" else 1) * param_bytes


def training_memory(w: Workload, *, dp: int, sharding: str, explain: bool = True) -> MemoryResult:
    """Per-GPU memory of one training step at data-parallel degree `dp` with `sharding`."""
    a = w.arch
    r = MemoryResult(explain=explain)
    mp = w.model_parallel
    tp = w.tensor_parallel
    p_all = a.params
    zero_p = sharding in ("zero3", "fsdp")
    zero_g = sharding in ("zero2", "zero3", "fsdp")
    zero_o = sharding in ("zero1", "zero2", "zero3", "fsdp")
    shard = f" / {dp} ({sharding})"

    if w.method in ("lora", "qlora"):
        compute_b = 4.0 if w.precision == "fp32" else 2.0
        fw = FRAMEWORKS[w.framework]
        quant = quantizable_params(a)
        # litgpt's QLoRA stores the output head in 4 bits too (sizing/frameworks.py). litgpt's
        # GPT never ties it: a tied checkpoint's embedding is copied into its own lm_head
        # (litgpt/scripts/convert_hf_checkpoint.py @5895df10), so a tied model gains a 4-bit head
        # beside its 16-bit embedding.
        head_q = 0.0
        if w.method == "qlora" and fw.qlora_quantises_head and a.is_transformer:
            head_q = (
                float(a.vocab_size or 0) * (a.hidden_size or 0)
                if a.tied_embeddings
                else _scaled(a, a.counts.head_matmul)
            )
        rest = p_all - quant - (0.0 if a.tied_embeddings else head_q)
        quant += head_q
        if w.method == "qlora":
            base_b = nf4_bytes_per_param(w)
            fmt = (
                f"NF4 + double quant ({base_b:.3f} B)"
                if w.double_quant
                else f"NF4, fp32 block constants ({base_b:.4f} B)"
            )
        else:
            base_b = DTYPE_BYTES[w.precision] if w.precision != "fp8" else 2.0
            fmt = f"{w.precision} ({base_b:g} B)"
        # PEFT's prepare_model_for_kbit_training (the HF QLoRA path) casts every parameter it
        # did not quantise, embeddings, head and norms, to fp32 (sizing/frameworks.py). Sharded
        # QLoRA (FSDP or ZeRO-3 over more than one GPU) skips it: TRL's SFTTrainer finds the 4-bit
        # parameters on cpu/meta before sharding and then calls neither
        # prepare_model_for_kbit_training nor peft_module_casting_to_bf16, and builds the adapters
        # with autocast_adapter_dtype=False (huggingface/trl trl/trainer/sft_trainer.py,
        # `is_sharded_qlora`; huggingface/peft docs/source/accelerate/fsdp.md @6008f272), so
        # those parameters stay in the storage dtype the model was loaded in.
        sharded_qlora = zero_p and dp > 1
        rest_b = (
            4.0
            if w.method == "qlora"
            and FRAMEWORKS[w.framework].qlora_fp32_unquantised
            and not sharded_qlora
            else compute_b
        )
        weights = (quant * base_b + rest * rest_b) / mp
        weights += replicated_kv_params(a, tp) / w.pipeline_parallel * base_b
        if zero_p and dp > 1:
            weights /= dp
        r.weights = weights
        r.note(
            lambda: (
                f"weights: {_gib(r.weights)} = {quant / 1e9:.2f}B block linear "
                + ("and output head " if head_q else "")
                + f"params x {fmt} "
                f"+ {rest / 1e9:.2f}B embedding/norm params x {rest_b:g} B (frozen base"
                + (
                    ", fp32 after PEFT's prepare_model_for_kbit_training"
                    if rest_b > compute_b
                    else ""
                )
                + ")"
                + (f" / model parallel {mp}" if mp > 1 else "")
                + (shard if zero_p and dp > 1 else "")
            )
        )
        n_lora = lora_params(a, w.lora_rank or 16, w.lora_targets or "all_linear")
        r.trainable_params = n_lora
        ab = 4.0 if (w.mixed_precision or w.precision == "fp32") else compute_b
        states = _optimizer_state_bytes(w, ab)
        per = ab + ab + states
        # The adapters are ordinary trainable parameters to the sharder: ZeRO-1 splits their
        # optimizer states, ZeRO-2 also their gradients, ZeRO-3 / FSDP also the adapters
        # themselves (ZeRO paper sec. 5; torchtune's lora_finetune_distributed wraps every
        # layer, adapters included, with FSDP2 fully_shard).
        split = dp if dp > 1 else 1
        r.adapters = (
            n_lora
            * (
                ab / (split if zero_p else 1)
                + ab / (split if zero_g else 1)
                + states / (split if zero_o else 1)
            )
            / mp
        )
        r.note(
            lambda: (
                f"adapters: {_gib(r.adapters)} = {n_lora / 1e6:.1f}M LoRA params (rank {w.lora_rank}, "
                f"{w.lora_targets}) x ({ab:g} weight + {ab:g} grad + {per - 2 * ab:g} {w.optimizer}) B"
                + (f" / model parallel {mp}" if mp > 1 else "")
                + (shard if zero_o and dp > 1 else "")
            )
        )
        if w.method == "qlora" and a.is_transformer:
            # Every use of a 4-bit weight dequantises the whole matrix to the compute dtype first
            # (bitsandbytes MatMul4Bit: dequantize_4bit(B).to(A.dtype); torchao linear_nf4:
            # weight.to(input.dtype)), forward and backward alike: one matrix of the largest
            # linear is alive at a time.
            h = float(a.hidden_size or 0)
            inter = float(
                (a.moe_intermediate_size if a.is_moe else None) or a.intermediate_size or 4 * h
            )
            # A 4-bit head is the largest matrix of most models (V x h); it is dequantised at
            # every 128-token chunk of the forward pass and again in backward. Quantised from
            # an fp16 copy (Lightning's BitsandbytesPrecision), dequantize_4bit returns fp16 and
            # `.to(A.dtype)` makes the compute-dtype copy while the fp16 one is still alive.
            head_matrix = float(a.vocab_size or 0) * h if head_q else 0.0
            biggest = max(h * inter, h * a.q_width, head_matrix)
            via_fp16 = fw.qlora_dequant_via_fp16 and w.precision != "fp16"
            dq_b = compute_b + (DTYPE_BYTES["fp16"] if via_fp16 else 0.0)
            dequant = biggest * dq_b / mp
            r.weights += dequant
            r.note(
                lambda: (
                    f"weights: + {_gib(dequant)} dequantisation buffer (the largest 4-bit matrix"
                    + (", the output head" if biggest == head_matrix else "")
                    + f", {biggest / 1e6:.0f}M weights, in {dq_b:g} B while it is used"
                    + (": an fp16 copy and its compute-dtype cast" if via_fp16 else "")
                    + ")"
                )
            )
    else:
        if w.precision == "fp32":
            wb = 4.0
        elif w.precision == "fp8" and not w.mixed_precision:
            wb = 1.0
        else:
            wb = 2.0  # fp8 training keeps bf16 weights; fp8 copies are transient (Transformer Engine)
        if w.method == "freeze":
            trainable = (
                min(p_all, FREEZE_TRAINABLE_LAYERS * _layer_params(a))
                if a.is_transformer
                else p_all
            )
        else:
            trainable = p_all
        r.trainable_params = trainable
        master = MASTER_WEIGHT_BYTES if w.mixed_precision else 0.0
        states = _optimizer_state_bytes(w, wb)
        gb = MIXED_PRECISION_GRAD_BYTES if w.mixed_precision else wb
        r.weights = p_all * wb / mp
        r.gradients = trainable * gb / mp
        if w.optimizer_in_backward:  # each gradient is applied and freed as backward makes it
            biggest_tensor = max(_layer_params(a), float(a.vocab_size or 0) * (a.hidden_size or 0))
            r.gradients = min(trainable, biggest_tensor) * gb / mp
        r.optimizer = trainable * (master + states) / mp
        # K/V projections copied on every GPU past TP = KV heads (replicated_kv_params): their
        # weights, and for full training their gradients and optimizer states, once per copy.
        copies = replicated_kv_params(a, tp) / w.pipeline_parallel
        if copies:
            r.weights += copies * wb
            if w.method == "full":
                r.gradients += copies * gb
                r.optimizer += copies * (master + states)
            r.note(
                lambda: (
                    f"weights, gradients, optimizer include {copies / 1e6:.1f}M K/V projection "
                    f"params copied past TP {a.total_kv_heads} (one whole KV head per GPU at TP {tp})"
                )
            )
        if zero_o and dp > 1:
            r.optimizer /= dp
        if zero_g and dp > 1:
            r.gradients /= dp
        if zero_p and dp > 1:
            r.weights /= dp
        mpn = f" / model parallel {mp}" if mp > 1 else ""
        r.note(
            lambda: (
                f"weights: {_gib(r.weights)} = {p_all / 1e9:.3g}B params x {wb:g} B{mpn}"
                + (shard if zero_p and dp > 1 else "")
            )
        )
        r.note(
            lambda: (
                f"gradients: {_gib(r.gradients)} = {trainable / 1e9:.3g}B trainable x {gb:g} B{mpn}"
                + (shard if zero_g and dp > 1 else "")
            )
        )
        r.note(
            lambda: (
                f"optimizer: {_gib(r.optimizer)} = {trainable / 1e9:.3g}B x ({master:g} fp32 master + "
                f"{states:.3g} {w.optimizer} states) B{mpn}"
                + (shard if zero_o and dp > 1 else "")
                + (
                    " (ZeRO paper sec. 3.1: K = 12 B per param for mixed-precision Adam)"
                    if master
                    else ""
                )
            )
        )
    if zero_p and dp > 1 and a.is_transformer:
        # FSDP / ZeRO-3 all-gathers one layer at a time and prefetches the next one. A QLoRA
        # layer is gathered as it is stored, 4-bit (torchao's NF4Tensor implements FSDP2's
        # fsdp_pre_all_gather / fsdp_post_all_gather on its packed data and scales); it is
        # dequantised one matrix at a time when used (the buffer above).
        wb_gather = 2.0 if w.precision != "fp32" else 4.0
        gather_fmt = f"{wb_gather:g} B"
        layer = _scaled(a, a.counts.layer_max)
        if w.method == "qlora":
            layer_norms = _scaled(a, float(a.counts.layer_norms))
            gather = (
                2 * ((layer - layer_norms) * nf4_bytes_per_param(w) + layer_norms * wb_gather) / mp
            )
            gather_fmt = "NF4"
        else:
            gather = 2 * layer * wb_gather / mp
        what = "the gathered layer and the prefetched next one"
        if w.pipeline_parallel > 1:
            # FSDP2 under torch.distributed.pipelining (torchtitan): the stage's parameters stay
            # unsharded between micro-batches (torchtitan apply_fsdp: reshard_after_forward =
            # not pp_enabled; pipelining's backward_maybe_with_nosync: no reshard after
            # backward, no gradient sync until the last micro-batch), and the gradients
            # accumulate unsharded, in the fp32 reduce dtype under mixed precision.
            if w.method == "qlora":
                quant = quantizable_params(a)
                gather = (quant * nf4_bytes_per_param(w) + (p_all - quant) * wb_gather) / mp
            else:
                gather = p_all * wb_gather / mp
            what = "the pipeline stage's parameters, kept unsharded across micro-batches"
            if w.method not in ("lora", "qlora"):
                grad_b = MIXED_PRECISION_GRAD_BYTES if w.mixed_precision else wb_gather
                r.gradients = r.trainable_params * grad_b / mp
                r.note(
                    lambda: (
                        f"gradients: {_gib(r.gradients)} in place of the sharded figure: "
                        f"accumulated unsharded over the micro-batches ({grad_b:g} B), "
                        "reduce-scattered after the last"
                    )
                )
        r.weights += gather
        r.note(lambda: f"weights: + {_gib(gather)} for {what} ({gather_fmt})")

    r.activations, how = _activations(w, tp, explain)
    r.note(lambda: f"activations: {_gib(r.activations)} = {how}")
    drop = lora_dropout_bytes_per_token(w, moe_layer=False) if a.is_transformer else 0.0
    if drop:
        r.note(
            lambda: (
                f"activations include LoRA dropout {w.lora_dropout:g}: {drop:,.0f} B per token per "
                "layer (each adapter's dropped-out input + 1-byte mask, saved for lora_A's backward)"
            )
        )
    r.cuda_context = CUDA_CONTEXT_GIB * GIB
    r.fragmentation = ALLOCATOR_FRAGMENTATION * r.activations
    r.note(
        lambda: (
            f"overhead: {_gib(r.overhead)} = CUDA context {CUDA_CONTEXT_GIB:g} GiB + allocator slack "
            f"{ALLOCATOR_FRAGMENTATION:.0%} of activations"
        )
    )
    return r


def _kv_copy_share(arch: ModelArch, tp: int) -> float:
    """The share of the K/V heads one GPU holds beyond its 1/tp: kv_heads_per_gpu / kv heads
    - 1/tp, 0 unless TP exceeds the KV heads (and for latent attention)."""
    kv_all = arch.total_kv_heads
    if not arch.is_transformer or arch.uses_mla or tp <= 1 or not kv_all:
        return 0.0
    return max(0.0, arch.kv_heads_per_gpu(tp) / kv_all - 1 / tp)


def replicated_kv_params(arch: ModelArch, tp: int) -> float:
    """K and V projection parameters one GPU holds beyond its 1/tp share: vLLM's
    QKVParallelLinear gives each GPU whole KV heads, replicated when there are fewer heads than
    GPUs (vllm-project/vllm vllm/model_executor/layers/linear.py @0036d38d), so past TP = KV
    heads a GPU keeps 1/KV heads of the K/V weights, not 1/tp. 0 when TP divides the heads, and
    for latent attention (its shared projections are not split by KV head)."""
    share = _kv_copy_share(arch, tp)
    if not share:
        return 0.0
    h = float(arch.hidden_size or 0)
    bias = arch.bias or arch.qkv_bias
    per_layer = 2 * (h * arch.kv_width + (arch.kv_width if bias else 0))
    return _scaled(arch, per_layer * arch.total_layers) * share


def inference_memory(w: Workload, *, tp: int, explain: bool = True) -> MemoryResult:
    """Per-GPU memory of serving: weights + KV cache at context x concurrency, split over `tp` GPUs."""
    a = w.arch
    r = MemoryResult(explain=explain)
    p_all = a.params
    tp = max(1, tp)
    if w.precision in ("int4", "int8", "fp8"):
        qb = INT4_BYTES_PER_PARAM if w.precision == "int4" else 1.0
        quant = quantizable_params(a)
        r.weights = (quant * qb + (p_all - quant) * 2.0) / tp
        r.note(
            lambda: (
                f"weights: {_gib(r.weights)} = {quant / 1e9:.2f}B block linear params x {qb:.3f} B "
                f"({w.precision}) + {(p_all - quant) / 1e9:.2f}B embeddings/norms x 2 B"
                + (f", / TP {tp}" if tp > 1 else "")
            )
        )
    else:
        wb = DTYPE_BYTES[w.precision]
        r.weights = p_all * wb / tp
        r.note(
            lambda: (
                f"weights: {_gib(r.weights)} = {p_all / 1e9:.3g}B params x {wb:g} B"
                + (f" / TP {tp}" if tp > 1 else "")
            )
        )
    copies = replicated_kv_params(a, tp)
    if copies:
        kv_w_b = (
            (INT4_BYTES_PER_PARAM if w.precision == "int4" else 1.0)
            if w.precision in ("int4", "int8", "fp8")
            else DTYPE_BYTES[w.precision]
        )
        r.weights += copies * kv_w_b
        r.note(
            lambda: (
                f"weights: + {_gib(copies * kv_w_b)} K/V projections replicated past TP "
                f"{a.total_kv_heads} (one whole KV head per GPU at TP {tp}, vLLM QKVParallelLinear)"
            )
        )
    ctx = w.context_len or w.seq_len
    conc = w.concurrency or w.batch_size
    if a.is_transformer and a.kind != "encoder" and a.kind != "vit":
        kv_b = 4.0 if w.precision == "fp32" else 2.0
        per_tok = a.kv_cache_elems_per_token_layer * kv_b * a.total_layers
        tokens = math.ceil(ctx / KV_BLOCK_TOKENS) * KV_BLOCK_TOKENS * conc
        # Each GPU caches its own KV heads, at least one whole head: past TP = KV heads vLLM
        # replicates them (ModelArch.kv_heads_per_gpu). MLA's latent is one vector per token,
        # not split across heads: every GPU caches all of it (vLLM get_num_kv_heads: 1).
        kv_all = a.total_kv_heads
        kv_gpu = kv_all if a.uses_mla else a.kv_heads_per_gpu(tp)
        r.kv_cache = per_tok * tokens * kv_gpu / max(1, kv_all)
        what = (
            f"(kv_lora_rank {a.kv_lora_rank} + rope {a.qk_rope_head_dim})"
            if a.uses_mla
            else f"2 x {kv_all} KV heads x {a.head_dim_eff}"
        )
        r.note(
            lambda: (
                f"kv_cache: {_gib(r.kv_cache)} = {a.total_layers} layers x {what} x {kv_b:g} B "
                f"x {ctx} context x {conc} sequences (16-token blocks, vLLM)"
                + (
                    f" x {kv_gpu}/{kv_all} KV heads per GPU (TP {tp}"
                    + (", heads replicated: at least one per GPU)" if kv_gpu * tp > kv_all else ")")
                    if kv_gpu < kv_all
                    else ""
                )
            )
        )
        h = float(a.hidden_size or 0)
        inter = float(a.moe_intermediate_active() if a.is_moe else (a.intermediate_size or 4 * h))
        chunk = min(ctx * conc, PREFILL_CHUNK_TOKENS)
        r.activations = (chunk * (4 * h + 2 * inter) * 2.0 / tp) + conc * (a.vocab_size or 0) * 4.0
        r.note(
            lambda: (
                f"activations: {_gib(r.activations)} = prefill chunk of {chunk} tokens x (4h + 2 x MLP width) x 2 B"
                " + fp32 logits of the last token per sequence"
            )
        )
    elif a.is_transformer:
        r.activations = w.batch_size * w.seq_len * (a.hidden_size or 0) * 2.0 * 4 / tp
    else:
        r.activations = (
            w.batch_size * (a.activation_gib_per_sample or 0.0) * GIB * CNN_RECOMPUTE_FACTOR
        )
    r.cuda_context = CUDA_CONTEXT_GIB * GIB
    r.fragmentation = ALLOCATOR_FRAGMENTATION * r.activations
    r.note(
        lambda: (
            f"overhead: {_gib(r.overhead)} = CUDA context {CUDA_CONTEXT_GIB:g} GiB + allocator slack"
        )
    )
    return r
