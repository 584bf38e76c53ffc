"""Workload input: names, allowed values, bounds, defaults and contradictions.

`parse_workload` turns a plain dict (JSON body or query parameters) into a frozen `Workload`,
or raises `WorkloadError` naming every bad field at once.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from functools import lru_cache
from typing import Any

from catalog.suggest import close_names

from .frameworks import FRAMEWORKS
from .inputs import (  # noqa: F401  (re-exported: the names callers import from here)
    ATTENTION_IMPLS,
    BOUNDS,
    CHECKPOINTING,
    INT_FIELDS,
    LORA_TARGETS,
    METHODS,
    OPTIMIZERS,
    PRECISIONS,
    SHARDINGS,
    TASKS,
    WORKLOAD,
    WORKLOAD_BY_NAME,
)
from .messages import DEFAULT_LANGUAGE, FIELD_PREFIX, Message, message_render
from .messages import MessageCode as C
from .specs import (
    ModelArch,
    arch_from_config,
    config_max_context,
    generic_arch,
    hash_once,
    state_without_hash,
)

# Defaults, each with the reason it is the default.
DEFAULT_SEQ_LEN = 2048  # the common pre-training / SFT context of 2023-24 recipes
DEFAULT_BATCH_SIZE = 1  # per-GPU micro-batch; gradient accumulation supplies the rest
DEFAULT_CONTEXT_LEN = 4096  # inference: prompt + generated tokens held in the KV cache
DEFAULT_LORA_RANK = 16
# QLoRA paper (Dettmers et al. 2023, sec. 4) adapts every linear layer; so do Unsloth and
# LLaMA-Factory by default, so "all_linear" is the default for LoRA too.
DEFAULT_LORA_TARGETS = "all_linear"

# Families whose max_position is not a limit on the sequence: T5's relative position biases
# bucket every offset past 128 into one (Raffel et al. 2020, sec. 2.1), so its 512 (n_positions)
# is the length it was trained at, not one it cannot exceed.
UNBOUNDED_POSITION_FAMILIES = frozenset({"t5"})
# Presets a too-long-context error names as supporting the length asked for.
CONTEXT_ALTERNATIVES = 3

_SLUG = re.compile(r"^[a-z0-9][a-z0-9._+-]{0,99}$")
_TRUE = {"true", "1", "yes", "on"}
_FALSE = {"false", "0", "no", "off"}


class WorkloadError(ValueError):
    """Bad workload input; `.errors` maps each field to its English sentences (the API returns
    them as a 400), `.coded` to the same as coded messages (sizing/messages.py) where they have
    a code; `rendered(lang)` gives the sentences in another language."""

    def __init__(self, errors: Mapping[str, Sequence[str | Message]]):
        self.coded: dict[str, list[Message]] = {
            k: [m for m in v if isinstance(m, Message)] for k, v in errors.items()
        }
        self._items = {k: list(v) for k, v in errors.items()}
        self.errors: dict[str, list[str]] = self.rendered(DEFAULT_LANGUAGE)
        super().__init__("; ".join(f"{k}: {' '.join(v)}" for k, v in self.errors.items()))

    def rendered(
        self, lang: str, field_names: Mapping[str, str] | None = None
    ) -> dict[str, list[str]]:
        """The sentences in ``lang`` (those without a code stay as written). ``field_names``
        renames the request fields a sentence names (a form's labels instead of API names)."""
        names = {f"{FIELD_PREFIX}{k}": v for k, v in (field_names or {}).items()}
        return {
            k: [
                m if isinstance(m, str) else message_render(m.code, {**names, **m.params}, lang)
                for m in v
            ]
            for k, v in self._items.items()
        }


@lru_cache(maxsize=256)
def _one_of(workload: Workload, arch: ModelArch) -> Workload:
    """The first workload seen equal to ``workload`` (with an equal architecture, which its
    equality leaves out): one object per value, so the estimator's memos, keyed by
    ``Workload.for_memory``, find a new question's key by identity instead of comparing every
    field of it with the one they hold (hundreds of times a planning run)."""
    return workload


@dataclass(frozen=True)
class Workload:
    """A validated workload with every default filled in; `arch` is the resolved architecture."""

    __hash__ = hash_once
    __getstate__ = state_without_hash

    model: str | None
    params_b: float
    task: str
    method: str | None
    precision: str
    mixed_precision: bool | None
    optimizer: str | None
    batch_size: int
    seq_len: int
    gradient_checkpointing: str
    sharding: str | None  # None: choose automatically (least sharded that fits)
    lora_rank: int | None
    lora_targets: str | None
    tokens: float | None
    context_len: int | None
    concurrency: int | None
    gpu: str | None
    gpu_count: int | None
    tensor_parallel: int = 1
    pipeline_parallel: int = 1
    gradient_accumulation: int | None = (
        None  # micro-batches per optimizer step (None: 1, or 8 x pp)
    )
    attention: str = "flash"
    framework: str = "hf"
    loss: str = "standard"  # how the loss head is computed (sizing/frameworks.py)
    activation_offloading: bool = False
    optimizer_in_backward: bool = False
    compile: bool = False  # torch.compile on the training step (sizing/frameworks.py)
    lora_dropout: float = 0.0  # dropout on each adapter's input (sizing/frameworks.py default)
    double_quant: bool = False  # QLoRA: NF4 block constants quantised again (framework default)
    architecture: str | None = None  # the config.json given, as canonical JSON
    arch: ModelArch = field(default=None, repr=False, compare=False)  # type: ignore[assignment]

    @property
    def for_memory(self) -> Workload:
        """This workload without what memory does not depend on (tokens to train, the hardware
        asked about): the key of the estimator's memory memos, so a new question that differs
        only in its token count reuses every memory figure. Kept on the instance once made (and
        never as a reference to itself, which would be a cycle for the garbage collector)."""
        if self.tokens is None and self.gpu is None and self.gpu_count is None:
            return self
        kept = self.__dict__.get("_for_memory")
        if kept is None:
            kept = _one_of(replace(self, tokens=None, gpu=None, gpu_count=None), self.arch)
            self.__dict__["_for_memory"] = kept  # frozen: written past __setattr__
        return kept

    @property
    def is_training(self) -> bool:
        """Pre-training or fine-tuning (not inference)."""
        return self.task != "inference"

    @property
    def model_parallel(self) -> int:
        """GPUs one model replica spans (tensor x pipeline parallel)."""
        return self.tensor_parallel * self.pipeline_parallel

    def assumptions(self) -> dict[str, Any]:
        """The filled-in inputs (defaults included) plus the architecture used."""
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "arch"}
        out["sharding"] = self.sharding if self.sharding is not None else "auto"
        a = self.arch
        out["architecture"] = {
            "name": a.name,
            "kind": a.kind,
            "params_b": a.params_b,
            "active_params_b": round(a.active_params / 1e9, 3),
            "layers": a.total_layers or None,
            "hidden_size": a.hidden_size,
            "heads": a.heads,
            "kv_heads": a.kv_heads or a.heads,
            "vocab_size": a.vocab_size,
            "experts": a.experts,
            "source": a.source,
        }
        return out


def _closest(name: str, presets: dict[str, ModelArch]) -> list[str]:
    return close_names(name.lower(), presets, limit=5)


def _as_int(v: object) -> int | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, float) and v.is_integer():
        return int(v)
    if isinstance(v, str) and re.fullmatch(r"\s*\d+\s*", v):
        return int(v)
    return None


def _as_float(v: object) -> float | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        f = float(v)
    elif isinstance(v, str):
        try:
            f = float(v.strip())
        except ValueError:
            return None
    else:
        return None
    return f if math.isfinite(f) else None


def _as_bool(v: object) -> bool | None:
    if isinstance(v, bool):
        return v
    if isinstance(v, str) and v.strip().lower() in _TRUE | _FALSE:
        return v.strip().lower() in _TRUE
    return None


def _choice(v: object, allowed: tuple[str, ...]) -> str | None:
    if isinstance(v, str) and v.strip().lower() in allowed:
        return v.strip().lower()
    return None


def parse_workload(data: dict[str, Any], presets: dict[str, ModelArch]) -> Workload:
    """Validate `data`, fill defaults and resolve the architecture; raise WorkloadError on bad input.

    Defaults: task finetune; training: method full, precision bf16, mixed precision on for
    bf16/fp16/fp8, optimizer adamw, batch 1, seq 2048 (capped at the model's context),
    checkpointing none (full for QLoRA, as in the QLoRA paper, unless the framework has none for
    it), mixed precision off for QLoRA where the framework refuses it, LoRA rank 16 on all linear
    layers; inference: context 4096, concurrency 1. Sharding left out (or "auto") is chosen by
    the estimator. Strings that spell numbers or booleans are accepted (query parameters).
    """
    errors: dict[str, list[str | Message]] = {}

    def err(name: str, msg: str | Message) -> None:
        errors.setdefault(name, []).append(msg)

    def bad(name: str, code: str, **params: Any) -> None:
        err(name, Message(code, params))

    if not isinstance(data, dict):
        raise WorkloadError({"workload": [Message(C.INPUT_NOT_AN_OBJECT)]})
    known = {f.name for f in WORKLOAD}
    for key in data:
        if key not in known:
            near = close_names(str(key), known, limit=1)
            if near:
                bad(str(key), C.INPUT_UNKNOWN_FIELD_NEAR, near=near[0])
            else:
                bad(str(key), C.INPUT_UNKNOWN_FIELD)
    raw = {k: v for k, v in data.items() if k in known and v is not None and v != ""}
    for name in list(raw):  # a synonym of "not given" (sharding: auto)
        extra = WORKLOAD_BY_NAME[name].extra
        if extra and isinstance(raw[name], str) and raw[name].strip().lower() in extra:
            del raw[name]

    def choice(name: str) -> str | None:
        if name not in raw:
            return None
        allowed = WORKLOAD_BY_NAME[name].choices
        val = _choice(raw[name], allowed)
        if val is None:
            bad(name, C.INPUT_CHOICE, allowed=", ".join(allowed))
        return val

    def number(name: str) -> float | int | None:
        if name not in raw:
            return None
        as_int = WORKLOAD_BY_NAME[name].kind == "int"
        val = _as_int(raw[name]) if as_int else _as_float(raw[name])
        lo, hi = BOUNDS[name]
        if val is None:
            bad(name, C.INPUT_WHOLE_NUMBER if as_int else C.INPUT_NUMBER)
            return None
        if not lo <= val <= hi:
            bad(name, C.INPUT_BETWEEN, low=lo, high=hi)
            return None
        return val

    def whole(name: str) -> int | None:
        """A whole-number field (kind "int"): number() already refused anything else."""
        val = number(name)
        return None if val is None else int(val)

    # Model: a preset name, a size or a config.json.
    arch: ModelArch | None = None
    model = raw.get("model")
    params_b = number("params_b")
    config, architecture = _config(raw.get("architecture"), err)
    if config is not None and (model is not None or params_b is not None):
        bad("architecture", C.INPUT_ONE_MODEL_SOURCE)
    elif config is not None:
        try:
            arch = arch_from_config(config)
        except ValueError as exc:
            for message in exc.args[0]:
                err("architecture", message)
    elif model is not None:
        if not isinstance(model, str):
            bad("model", C.INPUT_PRESET_NAME)
        elif model.strip().lower() not in presets:
            close = _closest(model.strip(), presets)
            if close:
                bad("model", C.INPUT_UNKNOWN_PRESET_CLOSEST, model=model, closest=", ".join(close))
            else:
                bad("model", C.INPUT_UNKNOWN_PRESET, model=model)
        else:
            model = model.strip().lower()
            arch = presets[model]
        if params_b is not None:
            bad("params_b", C.INPUT_MODEL_AND_PARAMS)
    elif params_b is not None:
        arch = generic_arch(float(params_b))
    elif "params_b" not in errors and "architecture" not in errors:
        bad("model", C.INPUT_NO_MODEL)

    task = choice("task") or ("finetune" if "task" not in raw else None)
    method = choice("method")
    precision = choice("precision")
    optimizer = choice("optimizer")
    sharding = choice("sharding")
    lora_targets = choice("lora_targets")
    attention = choice("attention")
    framework = choice("framework")
    loss = choice("loss")
    flags: dict[str, bool | None] = {}
    for name in ("activation_offloading", "optimizer_in_backward", "compile", "double_quant"):
        flags[name] = None
        if name in raw:
            flags[name] = _as_bool(raw[name])
            if flags[name] is None:
                bad(name, C.INPUT_BOOL)
    ckpt = None
    if "gradient_checkpointing" in raw:
        v = raw["gradient_checkpointing"]
        b = _as_bool(v)
        ckpt = ("full" if b else "none") if b is not None else _choice(v, CHECKPOINTING)
        if ckpt is None:
            bad("gradient_checkpointing", C.INPUT_CHOICE_OR_BOOL, allowed=", ".join(CHECKPOINTING))
    mixed = None
    if "mixed_precision" in raw:
        mixed = _as_bool(raw["mixed_precision"])
        if mixed is None:
            bad("mixed_precision", C.INPUT_BOOL)
    batch_size = whole("batch_size")
    seq_len = whole("seq_len")
    lora_rank = whole("lora_rank")
    lora_dropout = number("lora_dropout")
    tokens = number("tokens")
    context_len = whole("context_len")
    concurrency = whole("concurrency")
    gpu_count = whole("gpu_count")
    tp = whole("tensor_parallel") or 1
    pp = whole("pipeline_parallel") or 1
    accumulation = whole("gradient_accumulation")
    gpu = raw.get("gpu")
    if gpu is not None:
        if not isinstance(gpu, str) or not _SLUG.match(gpu.strip().lower()):
            bad("gpu", C.INPUT_GPU_SLUG)
            gpu = None
        else:
            gpu = gpu.strip().lower()

    # Contradictions, once the single fields are known.
    if task is not None:
        training = task != "inference"
        if task == "pretrain" and method in ("lora", "qlora", "freeze"):
            bad("method", C.INPUT_PRETRAIN_ADAPTER, method=method)
        if not training and method in ("lora", "qlora", "freeze"):
            bad("method", C.INPUT_METHOD_FOR_INFERENCE, method=method)
        if training and precision in ("int8", "int4") and method in (None, "full", "freeze"):
            bad("precision", C.INPUT_LOW_BIT_TRAINING, precision=precision)
        if method == "lora" and precision == "int4":
            bad("precision", C.INPUT_LORA_INT4)
        if method == "qlora" and precision in ("int8", "fp8"):
            bad("precision", C.INPUT_QLORA_PRECISION)
        if mixed and precision in ("fp32", "int8", "int4"):
            bad("mixed_precision", C.INPUT_MIXED_PRECISION_COMPUTE, precision=precision)
        if not training and mixed:
            bad("mixed_precision", C.INPUT_MIXED_PRECISION_INFERENCE)
        if not training and (lora_rank is not None or lora_targets is not None):
            bad("lora_rank" if lora_rank is not None else "lora_targets", C.INPUT_LORA_SETTINGS)
        if not training and accumulation is not None:
            bad("gradient_accumulation", C.INPUT_ACCUMULATION_INFERENCE)
        if training and (context_len is not None or concurrency is not None):
            bad(
                "context_len" if context_len is not None else "concurrency",
                C.INPUT_INFERENCE_FIELDS,
            )
    if task != "inference" and method not in ("lora", "qlora") and (lora_rank or lora_targets):
        bad("lora_rank" if lora_rank else "lora_targets", C.INPUT_LORA_SETTINGS)
    if lora_dropout is not None and (task == "inference" or method not in ("lora", "qlora")):
        bad("lora_dropout", C.INPUT_LORA_SETTINGS)
    if flags["double_quant"] is not None and (task == "inference" or method != "qlora"):
        bad("double_quant", C.INPUT_DOUBLE_QUANT)
    if arch is not None and not arch.is_transformer and method in ("lora", "qlora"):
        bad("method", C.INPUT_NEEDS_TRANSFORMER, method=method, model=arch.name, kind=arch.kind)
    if gpu_count is not None and gpu_count % (tp * pp):
        bad("gpu_count", C.INPUT_GPU_COUNT_MULTIPLE, model_parallel=tp * pp)
    if arch is not None and arch.is_transformer and tp > 1 and (arch.heads or 1) % tp:
        bad("tensor_parallel", C.INPUT_TP_HEADS, heads=arch.heads, model=arch.name)
    elif (
        arch is not None
        and arch.is_transformer
        and tp > 1
        and not arch.uses_mla
        and arch.total_kv_heads % tp
        and tp % arch.total_kv_heads
    ):
        # Each GPU gets whole KV heads: split over the GPUs, or each head copied on tp / kv
        # of them when there are fewer heads than GPUs; a degree that does neither is refused
        # (vLLM QKVParallelLinear `divide(...)`, vllm-project/vllm
        # vllm/model_executor/layers/linear.py @0036d38d; Megatron-LM's
        # `divide(num_query_groups, world_size)`, NVIDIA/Megatron-LM
        # megatron/core/transformer/attention.py @f41b4fd4, refuses even the copies, with
        # which StarCoder's single KV head was trained at TP 4: Li et al. 2023, sec. 5).
        bad(
            "tensor_parallel",
            C.INPUT_TP_KV_HEADS,
            kv_heads=arch.total_kv_heads,
            model=arch.name,
        )
    if arch is not None:
        limit = context_limit(arch)
        for name, asked in (("seq_len", seq_len), ("context_len", context_len)):
            if limit is not None and asked is not None and asked > limit:
                err(name, _over_context(arch, config, asked, limit, presets))
    if errors:
        raise WorkloadError(errors)
    assert arch is not None and task is not None

    # Defaults.
    training = task != "inference"
    framework = framework or "hf"
    habits = FRAMEWORKS[framework]
    if training:
        method = method or "full"
        precision = precision or "bf16"
        if method == "qlora" and precision == "int4":
            precision = "bf16"  # the NF4 base is implied; compute runs in bf16
        if mixed is None:
            mixed = precision in ("bf16", "fp16", "fp8") and (
                method != "qlora" or habits.qlora_mixed_precision
            )
        optimizer = optimizer or "adamw"
        if ckpt is None:
            # QLoRA's reference setup (and PEFT's prepare_model_for_kbit_training) turns it on;
            # a framework without checkpointing for QLoRA says so (sizing/frameworks.py).
            ckpt = habits.qlora_checkpointing if method == "qlora" else "none"
        if method in ("lora", "qlora"):
            lora_rank = lora_rank or DEFAULT_LORA_RANK
            lora_targets = lora_targets or DEFAULT_LORA_TARGETS
    else:
        method = None
        precision = precision or "bf16"
        mixed = None
        optimizer = None
        ckpt = "none"
        # The default fits the model (GPT-2 serves 1024 tokens at most); one asked for is
        # checked above.
        context_len = context_len or min(
            DEFAULT_CONTEXT_LEN, context_limit(arch) or DEFAULT_CONTEXT_LEN
        )
        concurrency = concurrency or 1
    if seq_len is None:
        seq_len = _default_seq_len(arch, context_len if not training else None)
    batch_size = batch_size or ((concurrency or 1) if not training else DEFAULT_BATCH_SIZE)
    if attention is None:
        attention = "eager" if precision == "fp32" else "flash"
    if not arch.is_transformer:
        attention = "eager"
    offload = flags["activation_offloading"]
    in_backward = flags["optimizer_in_backward"]
    return Workload(
        model=model if isinstance(model, str) else None,
        params_b=arch.params_b,
        task=task,
        method=method,
        precision=precision,
        mixed_precision=mixed,
        optimizer=optimizer,
        batch_size=int(batch_size),
        seq_len=int(seq_len),
        gradient_checkpointing=ckpt,
        sharding=sharding,
        lora_rank=lora_rank,
        lora_targets=lora_targets,
        tokens=tokens,
        context_len=context_len,
        concurrency=concurrency,
        gpu=gpu,
        gpu_count=gpu_count,
        tensor_parallel=int(tp),
        pipeline_parallel=int(pp),
        gradient_accumulation=accumulation,
        attention=attention,
        architecture=architecture,
        framework=framework,
        loss=loss or habits.loss,
        activation_offloading=habits.activation_offloading if offload is None else offload,
        optimizer_in_backward=(habits.optimizer_in_backward if in_backward is None else in_backward)
        and training,
        compile=(habits.compile if flags["compile"] is None else flags["compile"]) and training,
        lora_dropout=(
            float(habits.lora_dropout if lora_dropout is None else lora_dropout)
            if method in ("lora", "qlora")
            else 0.0
        ),
        double_quant=bool(
            (habits.qlora_double_quant if flags["double_quant"] is None else flags["double_quant"])
            and method == "qlora"
        ),
        arch=arch,
    )


def _config(
    value: object, err: Callable[[str, str | Message], None]
) -> tuple[dict[str, Any] | None, str | None]:
    """The config.json object given (a JSON string is read too), and its canonical JSON."""
    if value is None:
        return None, None
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            err("architecture", Message(C.INPUT_CONFIG_OBJECT))
            return None, None
    if not isinstance(value, dict):
        err("architecture", Message(C.INPUT_CONFIG_OBJECT))
        return None, None
    try:
        return value, json.dumps(value, sort_keys=True, separators=(",", ":"))
    except (TypeError, ValueError):
        err("architecture", Message(C.INPUT_CONFIG_JSON))
        return None, None


def context_limit(arch: ModelArch) -> int | None:
    """The longest sequence (prompt and output) the model supports: its max_position; None
    where it names none or the number is not a limit (UNBOUNDED_POSITION_FAMILIES). vLLM refuses
    a longer max_model_len (vllm-project/vllm vllm/config/model.py @18ec6629,
    _get_and_verify_max_len: past it "RoPE ... lead[s] to nan", absolute positions run out of
    bounds), and training past it leaves positions the model never learned."""
    if not arch.is_transformer or not arch.max_position:
        return None
    if arch.family in UNBOUNDED_POSITION_FAMILIES:
        return None
    return int(arch.max_position)


def _over_context(
    arch: ModelArch,
    config: dict[str, Any] | None,
    asked: int,
    limit: int,
    presets: dict[str, ModelArch],
) -> Message:
    """The error of a sequence longer than the model supports, naming the presets of the same
    family that support it (nearest in size first)."""
    if config is not None:
        _, basis = config_max_context(config) or (limit, f"max_position_embeddings {limit}")
        return Message(C.INPUT_CONTEXT_OVER_CONFIG, {"max_position": limit, "basis": basis})
    longer = [
        (abs(math.log(max(other.params_b, 1e-9) / max(arch.params_b, 1e-9))), name)
        for name, other in presets.items()
        if other.family == arch.family
        and other.kind == arch.kind
        and name != arch.name
        and (context_limit(other) or 0) >= asked
    ]
    params = {"max_position": limit, "model": arch.name}
    if not longer:
        return Message(C.INPUT_CONTEXT_OVER_MAX, params)
    names = [name for _, name in sorted(longer)[:CONTEXT_ALTERNATIVES]]
    return Message(
        C.INPUT_CONTEXT_OVER_MAX_ALTERNATIVE,
        {**params, "alternatives": ", ".join(names), "asked": asked},
    )


def _default_seq_len(arch: ModelArch, context_len: int | None) -> int:
    if context_len:
        return context_len
    if arch.kind == "vit":
        return int((arch.image_size or 224) // (arch.patch_size or 16)) ** 2 + 1
    if arch.kind in ("cnn", "unet"):
        return 1
    if arch.max_position:
        return min(DEFAULT_SEQ_LEN, arch.max_position)
    return DEFAULT_SEQ_LEN
