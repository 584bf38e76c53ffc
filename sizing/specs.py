"""Plain value types the sizing engine works on: a GPU, a model architecture, a cluster topology.

No Django, no I/O. `ModelArch.counts` derives the parameter split (attention, MLP, experts,
embeddings) from the architecture numbers once and caches it; every formula downstream reads it.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from functools import cached_property
from typing import Any

from .messages import Message
from .messages import MessageCode as C

# Kinds of model the estimator knows.
TRANSFORMER_KINDS = ("decoder", "encoder", "encoder_decoder", "vit")
MODEL_KINDS = (*TRANSFORMER_KINDS, "cnn", "unet")


def hash_once(self: Any) -> int:
    """``__hash__`` for frozen value types: the fields' hash, worked out on first use and kept.

    A frozen dataclass rehashes every field on every call; GPUs, topologies, architectures and
    workloads key the estimator's memos, which the planner consults thousands of times a request.
    Equal objects still hash equally (same fields, as the generated hash uses).
    """
    kept = self.__dict__.get("_hash")
    if kept is None:
        kept = hash(tuple(getattr(self, f.name) for f in fields(self) if f.compare))
        self.__dict__["_hash"] = kept  # frozen: written past __setattr__, as cached_property does
    return int(kept)


def state_without_hash(self: Any) -> dict[str, Any]:
    """``__getstate__`` leaving out the kept hash: string hashes differ between processes."""
    state = dict(self.__dict__)
    state.pop("_hash", None)
    return state


@dataclass(frozen=True)
class GPUSpec:
    """Catalog figures for one GPU; dense tensor rates only, None where the part lacks the format."""

    __hash__ = hash_once
    __getstate__ = state_without_hash

    slug: str
    memory_gib: float
    memory_bandwidth_gb_s: float | None = None
    fp32_tflops: float | None = None
    tf32_tflops: float | None = None
    bf16_tflops: float | None = None
    fp16_tflops: float | None = None
    fp8_tflops: float | None = None
    int8_tops: float | None = None
    architecture: str | None = None
    vendor: str | None = None
    nvlink_bandwidth_gb_s: float | None = None

    @classmethod
    def from_mapping(cls, data: dict[str, Any]) -> GPUSpec:
        """Build from a catalog record (fixtures/gpus.yaml row or API dict); unknown keys are ignored."""
        names = cls.__dataclass_fields__.keys()
        values: dict[str, Any] = {k: data.get(k) for k in names if k in data}
        return cls(**values)


@dataclass(frozen=True)
class Topology:
    """How the GPUs of a job are wired: inside a node and between nodes.

    `intra_bandwidth_gb_s` is per GPU, both directions summed as vendors quote NVLink; None means
    "take the GPU's NVLink figure" (or a PCIe default). `inter_node_gbps` is the node's total
    network bandwidth in Gbit/s.
    """

    __hash__ = hash_once
    __getstate__ = state_without_hash

    gpu_count: int = 1
    gpus_per_node: int = 8
    intra_node: str = "nvlink"  # 'nvswitch' | 'nvlink' | 'pcie' | 'none'
    intra_bandwidth_gb_s: float | None = None
    inter_node_rdma: bool = True
    inter_node_gbps: float | None = None

    @property
    def nodes(self) -> int:
        """Nodes the job spans (at least one)."""
        return max(1, -(-self.gpu_count // max(1, self.gpus_per_node)))


@dataclass(frozen=True)
class ArchCounts:
    """Parameter split derived from a ModelArch (counts of scalars, not bytes)."""

    computed_total: float  # parameters implied by the architecture numbers
    embedding: float  # input token (+ position) embeddings: looked up, not multiplied
    lm_head: float  # output projection when untied (0 when tied to the embedding)
    head_matmul: float  # parameters the output projection multiplies by (tied or not)
    layer_attention: float  # attention projections of one layer
    layer_dense_mlp: float  # MLP of one dense layer
    layer_moe_total: float  # MLP of one MoE layer, all experts + router + shared experts
    layer_moe_active: float  # MLP parameters one token touches in an MoE layer
    layer_norms: float  # norm weights of one layer
    dense_layers: int
    moe_layers: int
    layer_max: float  # largest layer (the unit FSDP / ZeRO-3 gathers)

    @property
    def layers_total(self) -> float:
        """All transformer-block parameters."""
        per_common = self.layer_attention + self.layer_norms
        return (
            (self.dense_layers + self.moe_layers) * per_common
            + self.dense_layers * self.layer_dense_mlp
            + self.moe_layers * self.layer_moe_total
        )

    @property
    def layers_active(self) -> float:
        """Transformer-block parameters one token passes through (MoE: active experts only)."""
        per_common = self.layer_attention + self.layer_norms
        return (
            (self.dense_layers + self.moe_layers) * per_common
            + self.dense_layers * self.layer_dense_mlp
            + self.moe_layers * self.layer_moe_active
        )


@dataclass(frozen=True)
class ModelArch:
    """Architecture numbers of a model preset (fixtures/models.yaml) or of a generic model.

    Transformers carry layer counts and widths; `cnn` and `unet` presets carry only the official
    parameter count, a per-sample activation figure and forward FLOPs at a reference input size.
    """

    __hash__ = hash_once
    __getstate__ = state_without_hash

    name: str  # preset slug (or "generic-7b")
    family: str
    kind: str
    params_b: float  # official count, billions
    layers: int | None = None  # decoder layers (encoder layers for encoders / T5 encoder)
    hidden_size: int | None = None
    heads: int | None = None
    kv_heads: int | None = None
    head_dim: int | None = None
    intermediate_size: int | None = None
    vocab_size: int | None = None
    max_position: int | None = None
    gated_mlp: bool = True
    norm: str = "rmsnorm"  # 'rmsnorm' | 'layernorm'
    norms_per_layer: int = 2
    tied_embeddings: bool = False
    bias: bool = False  # biases on every linear (GPT-2, BERT)
    qkv_bias: bool = False  # biases on q, k, v only (Qwen2)
    qk_norm: bool = False  # per-head q/k RMSNorm (Qwen3)
    dropout: bool = False  # residual and attention dropout active in training (BERT, GPT-2, T5)
    learned_positions: int = 0  # rows of a learned absolute position table
    token_types: int = 0  # BERT segment embeddings
    pooler: bool = False  # BERT pooler (h x h + h)
    decoder_layers: int = 0  # encoder-decoder: decoder layers (cross-attention included)
    experts: int = 1
    active_experts: int = 1
    moe_intermediate_size: int | None = None
    shared_experts: int = 0
    first_dense_layers: int = 0  # MoE models whose first layers are dense (DeepSeek)
    q_lora_rank: int | None = None  # Multi-head latent attention (DeepSeek-V2/V3)
    kv_lora_rank: int | None = None
    qk_nope_head_dim: int | None = None
    qk_rope_head_dim: int | None = None
    v_head_dim: int | None = None
    patch_size: int | None = None  # ViT
    image_size: int | None = None
    num_classes: int | None = None
    activation_gib_per_sample: float | None = (
        None  # cnn/unet: 16-bit, reference input, no recompute
    )
    forward_gflops_per_sample: float | None = None  # cnn/unet: at the reference input
    reference_input: str | None = None
    display_name: str = ""
    source: str = ""
    source_url: str = ""
    notes: str = ""

    @property
    def is_transformer(self) -> bool:
        """True when the layer formulas apply."""
        return self.kind in TRANSFORMER_KINDS and bool(self.layers and self.hidden_size)

    @property
    def is_moe(self) -> bool:
        """Mixture of experts: all experts count for memory, active ones for FLOPs."""
        return self.experts > 1

    @property
    def uses_mla(self) -> bool:
        """Multi-head latent attention (compressed KV cache)."""
        return bool(self.kv_lora_rank)

    @property
    def head_dim_eff(self) -> int:
        """Per-head width (head_dim when given, else hidden / heads)."""
        if self.head_dim:
            return self.head_dim
        return (self.hidden_size or 0) // max(1, self.heads or 1)

    @property
    def q_width(self) -> int:
        """Width of the query projection output (heads x head dim; MLA: nope + rope dims)."""
        if self.uses_mla:
            return (self.heads or 0) * ((self.qk_nope_head_dim or 0) + (self.qk_rope_head_dim or 0))
        return (self.heads or 0) * self.head_dim_eff

    @property
    def kv_width(self) -> int:
        """Width of one of K or V (KV heads x head dim); MLA: per-head K width."""
        if self.uses_mla:
            return self.q_width
        return (self.kv_heads or self.heads or 0) * self.head_dim_eff

    @property
    def v_width(self) -> int:
        """Width of V and of the attention output."""
        if self.uses_mla:
            return (self.heads or 0) * (self.v_head_dim or 0)
        return self.kv_width

    @property
    def o_width(self) -> int:
        """Width of the attention output fed to the output projection."""
        if self.uses_mla:
            return self.v_width
        return self.q_width

    @property
    def total_layers(self) -> int:
        """Blocks a token passes through (encoder + decoder for encoder-decoders)."""
        return (self.layers or 0) + self.decoder_layers

    @property
    def total_kv_heads(self) -> int:
        """KV heads of one attention layer (attention heads when the config names none)."""
        return self.kv_heads or self.heads or 0

    def kv_heads_per_gpu(self, tp: int) -> int:
        """KV heads each of `tp` tensor-parallel GPUs holds when serving: the heads are split,
        and replicated when there are fewer of them than GPUs, so every GPU keeps at least one
        whole head (vLLM ModelConfig.get_num_kv_heads, `max(1, total_num_kv_heads //
        tensor_parallel_size)`, vllm-project/vllm vllm/config/model.py @18ec6629;
        QKVParallelLinear replicates the K/V projections the same way,
        vllm/model_executor/layers/linear.py @0036d38d)."""
        return max(1, self.total_kv_heads // max(1, tp))

    def serves_at_tp(self, tp: int) -> bool:
        """Whether vLLM can serve this model at tensor parallel ``tp``: the attention heads
        split evenly and each GPU gets whole KV heads, split or copied (the checks
        sizing/workload.py makes of an explicit ``tensor_parallel``: vLLM's
        ``divide(total_num_heads, tp_size)`` and QKVParallelLinear, vllm-project/vllm
        vllm/model_executor/layers/linear.py @0036d38d). Models without attention heads
        take any degree."""
        if tp <= 1 or not self.is_transformer or not self.heads:
            return True
        if self.heads % tp:
            return False
        kv = self.total_kv_heads
        return self.uses_mla or not kv or kv % tp == 0 or tp % kv == 0

    @property
    def kv_cache_elems_per_token_layer(self) -> int:
        """Elements cached per token per layer: 2 x KV heads x head dim (vLLM, GQA); MLA: latent + rope key."""
        if self.uses_mla:
            return (self.kv_lora_rank or 0) + (self.qk_rope_head_dim or 0)
        return 2 * self.kv_width

    def moe_intermediate_active(self) -> int:
        """Expert MLP width one token runs through in an MoE layer (active + shared experts)."""
        width = self.moe_intermediate_size or self.intermediate_size or 0
        return (self.active_experts + self.shared_experts) * width

    @cached_property
    def counts(self) -> ArchCounts:
        """Parameter split from the architecture numbers (cached; the dataclass stays immutable)."""
        return _count(self)

    @property
    def params(self) -> float:
        """Official parameter count, as a number of scalars."""
        return self.params_b * 1e9

    @property
    def active_params(self) -> float:
        """Parameters one token uses (MoE: active experts only), scaled to the official count."""
        c = self.counts
        if not self.is_transformer or c.computed_total <= 0:
            return self.params
        active = c.layers_active + c.embedding + c.lm_head
        return self.params * active / c.computed_total


def _linear(n_in: float, n_out: float, bias: bool) -> float:
    return n_in * n_out + (n_out if bias else 0)


def _count(a: ModelArch) -> ArchCounts:
    """Count parameters layer by layer from the config numbers (HF config.json conventions)."""
    if not a.is_transformer:
        total = a.params
        return ArchCounts(total, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0, 0, total)
    h = float(a.hidden_size or 0)
    b = a.bias
    # Attention projections.
    if a.uses_mla:
        heads = a.heads or 0
        qk_head = (a.qk_nope_head_dim or 0) + (a.qk_rope_head_dim or 0)
        if a.q_lora_rank:
            attn = _linear(h, a.q_lora_rank, False) + a.q_lora_rank
            attn += _linear(a.q_lora_rank, heads * qk_head, False)
        else:
            attn = _linear(h, heads * qk_head, False)
        kvr = a.kv_lora_rank or 0
        attn += _linear(h, kvr + (a.qk_rope_head_dim or 0), False) + kvr
        attn += _linear(kvr, heads * ((a.qk_nope_head_dim or 0) + (a.v_head_dim or 0)), False)
        attn += _linear(heads * (a.v_head_dim or 0), h, False)
    else:
        qb = b or a.qkv_bias
        attn = _linear(h, a.q_width, qb) + 2 * _linear(h, a.kv_width, qb) + _linear(a.q_width, h, b)
        if a.qk_norm:
            attn += 2 * a.head_dim_eff
    norm_w = 2 if a.norm == "layernorm" else 1  # LayerNorm has a bias too
    norms = a.norms_per_layer * norm_w * h
    # MLPs.
    inter = float(a.intermediate_size or 4 * h)
    mats = 3 if a.gated_mlp else 2
    dense_mlp = mats * h * inter + ((inter + h) if b else 0)
    if a.is_moe:
        e_inter = float(a.moe_intermediate_size or inter)
        expert = mats * h * e_inter
        router = h * a.experts
        moe_total = a.experts * expert + a.shared_experts * expert + router
        moe_active = (a.active_experts + a.shared_experts) * expert + router
        moe_layers = (a.layers or 0) - a.first_dense_layers
        dense_layers = a.first_dense_layers
    else:
        moe_total = moe_active = 0.0
        moe_layers = 0
        dense_layers = a.layers or 0
    # Encoder-decoder: decoder blocks add cross-attention (one more attention + norm).
    dec_extra = a.decoder_layers * (attn + norms / a.norms_per_layer)
    dense_layers_all = dense_layers + a.decoder_layers
    vocab = float(a.vocab_size or 0)
    embedding = vocab * h + a.learned_positions * h + a.token_types * h
    if a.kind == "vit":
        patch = float(a.patch_size or 16)
        tokens = (float(a.image_size or 224) / patch) ** 2 + 1
        embedding = 3 * patch * patch * h + h + tokens * h + h  # patch conv + bias, positions, cls
    head = 0.0 if a.tied_embeddings else vocab * h
    head_matmul = vocab * h
    if a.kind == "vit":
        head = head_matmul = _linear(h, a.num_classes or 1000, True)
    extras = norm_w * h  # final norm
    if a.norm == "layernorm" and a.kind == "encoder":
        extras += 2 * h  # embedding LayerNorm
    if a.pooler:
        extras += _linear(h, h, True)
    if a.kind == "encoder_decoder":
        extras += norm_w * h  # second final norm (encoder and decoder each end with one)
    total = (
        (dense_layers + moe_layers + a.decoder_layers) * (attn + norms)
        + dense_layers_all * dense_mlp
        + moe_layers * moe_total
        + dec_extra
        + embedding
        + head
        + extras
    )
    layer_max = attn + norms + max(dense_mlp, moe_total)
    # Fold encoder-decoder cross-attention into the per-layer attention figure, averaged.
    n_blocks = dense_layers + moe_layers + a.decoder_layers
    attn_avg = attn + (dec_extra / n_blocks if n_blocks else 0.0)
    return ArchCounts(
        computed_total=total,
        embedding=embedding,
        lm_head=head + extras,
        head_matmul=head_matmul,
        layer_attention=attn_avg,
        layer_dense_mlp=dense_mlp,
        layer_moe_total=moe_total,
        layer_moe_active=moe_active,
        layer_norms=norms,
        dense_layers=dense_layers_all,
        moe_layers=moe_layers,
        layer_max=layer_max,
    )


def generic_arch(params_b: float) -> ModelArch:
    """A Llama-shaped decoder of `params_b` billion parameters, for workloads given by size alone.

    Shape rule read off the Llama 2/3 and Qwen2.5 configs: layers ~ hidden / 128 and a SwiGLU MLP
    of 8/3 hidden, so block parameters ~ 12 L h^2 = 12 h^3 / 128. We take L = round(h / 128) from
    that cube rule, then the hidden size that gives the block parameters exactly,
    h = sqrt(N_blocks / 12 L), so the shape (and every memory term) grows smoothly with N.
    Multi-head attention (KV heads = heads) and a 32k vocabulary are assumed, which errs on the
    large side for the KV cache and the small side for the logits.
    """
    n = max(params_b, 0.001) * 1e9
    vocab = 32000
    h0 = (n * 128 / 12) ** (1 / 3)
    layers = max(1, round(h0 / 128))
    blocks = max(n - 2 * vocab * h0, n / 2)
    hidden = max(64, round((blocks / (12 * layers)) ** 0.5))
    heads = max(1, round(hidden / 128))
    inter = max(64, round(8 / 3 * hidden))
    return ModelArch(
        name=f"generic-{params_b:g}b",
        family="generic",
        kind="decoder",
        params_b=params_b,
        layers=layers,
        hidden_size=hidden,
        heads=heads,
        kv_heads=heads,
        head_dim=128,
        intermediate_size=inter,
        vocab_size=vocab,
        source="generic Llama-like shape inferred from params_b (sizing.specs.generic_arch)",
    )


# Hugging Face config.json names read by `arch_from_config`, with the ModelArch field each feeds.
CONFIG_REQUIRED = ("hidden_size", "num_hidden_layers", "num_attention_heads", "vocab_size")
CONFIG_INTS = {
    "hidden_size": "hidden_size",
    "num_hidden_layers": "layers",
    "num_attention_heads": "heads",
    "num_key_value_heads": "kv_heads",
    "head_dim": "head_dim",
    "intermediate_size": "intermediate_size",
    "vocab_size": "vocab_size",
    "max_position_embeddings": "max_position",
    "num_experts_per_tok": "active_experts",
    "moe_intermediate_size": "moe_intermediate_size",
    "n_shared_experts": "shared_experts",
    "first_k_dense_replace": "first_dense_layers",
    "q_lora_rank": "q_lora_rank",
    "kv_lora_rank": "kv_lora_rank",
    "qk_nope_head_dim": "qk_nope_head_dim",
    "qk_rope_head_dim": "qk_rope_head_dim",
    "v_head_dim": "v_head_dim",
}
CONFIG_EXPERT_NAMES = ("num_local_experts", "num_experts", "n_routed_experts")
# Largest value accepted for any count in a config (a typo guard, not a model limit).
CONFIG_MAX_INT = 10_000_000
# model_type families whose MLP is not gated and whose norms are LayerNorm.
CONFIG_PLAIN_MLP = {
    "gpt2",
    "gpt_neox",
    "falcon",
    "phi",
    "bloom",
    "opt",
    "starcoder2",
    "gpt_bigcode",
}
CONFIG_QKV_BIAS = {"qwen2", "qwen2_moe", "qwen2_vl"}
CONFIG_QK_NORM = {"qwen3", "qwen3_moe", "olmo2", "gemma3", "gemma3_text"}
CONFIG_FOUR_NORMS = {"gemma2", "gemma3", "gemma3_text"}
CONFIG_SHARED_EXPERT = {"llama4", "llama4_text"}  # one shared expert per MoE layer


def arch_from_config(config: dict[str, Any]) -> ModelArch:
    """A ModelArch from a Hugging Face config.json object (a `text_config` inside is used), with
    the parameter count computed from it; raises ValueError listing every bad key (coded
    messages, sizing/messages.py)."""
    if not isinstance(config, dict):
        raise ValueError([Message(C.INPUT_CONFIG_OBJECT)])
    text = config.get("text_config")
    cfg = {**config, **text} if isinstance(text, dict) else dict(config)
    problems = [
        Message(C.INPUT_CONFIG_REQUIRED, {"key": key})
        for key in CONFIG_REQUIRED
        if cfg.get(key) is None
    ]
    kwargs: dict[str, Any] = {}
    for key, field_name in CONFIG_INTS.items():
        value = cfg.get(key)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= CONFIG_MAX_INT:
            problems.append(Message(C.INPUT_CONFIG_WHOLE, {"key": key, "max": CONFIG_MAX_INT}))
            continue
        kwargs[field_name] = value
    experts = next((cfg[k] for k in CONFIG_EXPERT_NAMES if cfg.get(k) is not None), None)
    if experts is not None:
        if isinstance(experts, bool) or not isinstance(experts, int) or experts < 1:
            problems.append(Message(C.INPUT_CONFIG_EXPERTS))
        else:
            kwargs["experts"] = experts
    if problems:
        raise ValueError(problems)
    model_type = str(cfg.get("model_type") or "custom")
    heads = kwargs["heads"]
    if kwargs["hidden_size"] % heads and "head_dim" not in kwargs:
        raise ValueError([Message(C.INPUT_CONFIG_HEAD_DIM)])
    problems = _config_contradictions(cfg, kwargs)
    if problems:
        raise ValueError(problems)
    limit = config_max_context(cfg)
    if limit is not None:
        kwargs["max_position"] = limit[0]
    kwargs.setdefault("kv_heads", heads)
    kwargs.setdefault(
        "intermediate_size", kwargs.get("moe_intermediate_size", 4 * kwargs["hidden_size"])
    )
    if kwargs.get("experts", 1) > 1:
        kwargs.setdefault("moe_intermediate_size", kwargs["intermediate_size"])
        kwargs.setdefault("active_experts", min(2, kwargs["experts"]))
        if model_type in CONFIG_SHARED_EXPERT:
            kwargs.setdefault("shared_experts", 1)
        elif cfg.get("shared_expert_intermediate_size"):
            width = int(cfg["shared_expert_intermediate_size"])
            kwargs.setdefault(
                "shared_experts", max(1, round(width / kwargs["moe_intermediate_size"]))
            )
    else:
        kwargs.pop("active_experts", None)
    plain = model_type in CONFIG_PLAIN_MLP
    arch = ModelArch(
        name=f"config-{model_type}",
        family=model_type,
        kind="decoder",
        params_b=1.0,  # replaced below by the count the numbers imply
        gated_mlp=not plain,
        norm="layernorm" if plain else "rmsnorm",
        tied_embeddings=bool(cfg.get("tie_word_embeddings", False)),
        qkv_bias=model_type in CONFIG_QKV_BIAS or bool(cfg.get("attention_bias", False)),
        qk_norm=model_type in CONFIG_QK_NORM,
        norms_per_layer=4 if model_type in CONFIG_FOUR_NORMS else 2,
        display_name=str(cfg.get("_name_or_path") or f"{model_type} from config.json"),
        source="config.json given with the workload",
        **kwargs,
    )
    total = arch.counts.computed_total
    return replace(arch, params_b=total / 1e9) if total > 0 else arch


# Keys latent attention (kv_lora_rank, DeepSeek-V2/V3) needs besides the rank: without them the
# per-head query, key and value widths are unknown (DeepSeek-V2 report sec. 2.1).
CONFIG_LATENT_KEYS = ("qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim")
# RoPE scaling types whose max_position_embeddings already is the extended context (vLLM
# _get_and_verify_max_len skips the factor for these, vllm-project/vllm vllm/config/model.py
# @18ec6629); gemma3's is already scaled too.
ROPE_TYPES_ALREADY_SCALED = ("su", "longrope", "llama3", "default")
CONFIG_ROPE_ALREADY_SCALED_MODELS = ("gemma3",)


def _config_contradictions(cfg: dict[str, Any], kwargs: dict[str, Any]) -> list[Message]:
    """Combinations of config.json numbers no model can have (each certain, not a style rule)."""
    problems = []
    heads, kv_heads = kwargs["heads"], kwargs.get("kv_heads")
    # Grouped-query attention shares each KV head among heads / kv_heads query heads
    # (Ainslie et al. 2023; HF repeat_kv, num_key_value_groups = heads // kv_heads).
    if kv_heads is not None and heads % kv_heads:
        problems.append(Message(C.INPUT_CONFIG_KV_HEADS, {"kv_heads": kv_heads, "heads": heads}))
    experts_key = next((k for k in CONFIG_EXPERT_NAMES if cfg.get(k) is not None), None)
    active = kwargs.get("active_experts")
    if experts_key is not None and active is not None and active > kwargs["experts"]:
        problems.append(
            Message(
                C.INPUT_CONFIG_ACTIVE_EXPERTS,
                {"active": active, "experts": kwargs["experts"], "key": experts_key},
            )
        )
    dense = kwargs.get("first_dense_layers")
    if dense is not None and dense > kwargs["layers"]:
        problems.append(
            Message(C.INPUT_CONFIG_DENSE_LAYERS, {"dense": dense, "layers": kwargs["layers"]})
        )
    if "kv_lora_rank" in kwargs:
        missing = [key for key in CONFIG_LATENT_KEYS if CONFIG_INTS[key] not in kwargs]
        if missing:
            problems.append(Message(C.INPUT_CONFIG_LATENT_KEYS, {"keys": ", ".join(missing)}))
    return problems


def config_max_context(config: dict[str, Any]) -> tuple[int, str] | None:
    """The longest context a config.json supports, and how it follows from the config (None
    without a valid max_position_embeddings): that number, times the RoPE scaling factor where
    the scaling extends it (yarn: original_max_position_embeddings x factor), as vLLM derives
    max_model_len (_get_and_verify_max_len, vllm-project/vllm vllm/config/model.py @18ec6629)."""
    text = config.get("text_config")
    cfg = {**config, **text} if isinstance(text, dict) else config
    max_position = cfg.get("max_position_embeddings")
    if (
        isinstance(max_position, bool)
        or not isinstance(max_position, int)
        or not 0 < max_position <= CONFIG_MAX_INT
    ):
        return None
    rope = cfg.get("rope_scaling") or cfg.get("rope_parameters")
    model_type = str(cfg.get("model_type") or "")
    basis = f"max_position_embeddings {max_position}"
    if not isinstance(rope, dict) or any(
        m in model_type for m in CONFIG_ROPE_ALREADY_SCALED_MODELS
    ):
        return max_position, basis
    kind = str(rope.get("rope_type") or rope.get("type") or "default")
    factor = rope.get("factor")
    if kind in ROPE_TYPES_ALREADY_SCALED or isinstance(factor, bool):
        return max_position, basis
    if not isinstance(factor, (int, float)) or not 0 < factor <= CONFIG_MAX_INT:
        return max_position, basis
    base, base_name = max_position, "max_position_embeddings"
    original = rope.get("original_max_position_embeddings")
    if kind == "yarn" and isinstance(original, int) and not isinstance(original, bool):
        base, base_name = original, "original_max_position_embeddings"
    return int(base * factor), f"{base_name} {base} x {kind} factor {factor:g}"
