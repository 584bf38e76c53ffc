"""The one description of what a sizing request may carry: workload and constraint fields.

Each `Field` names its type, allowed values, bounds, default and help text. Everything that
reads a workload or constraints is derived from these tables: `parse_workload` (validation),
the API serializers and so the OpenAPI schema, the plan form's fields, and the stand-alone CLI's
options (generated into clients/gpuatlas.py by `make schema`; a test keeps them in step). A new
field is one `Field(...)` line here plus its meaning in the estimator. Pure Python, no Django.
"""

from __future__ import annotations

from dataclasses import dataclass

from catalog.pricing import DEFAULT_PLANNER_PRICING_MODELS, PricingModel


def gettext_noop(text: str) -> str:
    """Marks a label for translation (makemessages extracts it) without importing Django."""
    return text


TASKS = ("pretrain", "finetune", "inference")
METHODS = ("full", "lora", "qlora", "freeze")
PRECISIONS = ("fp32", "bf16", "fp16", "fp8", "int8", "int4")
OPTIMIZERS = ("adamw", "adamw_8bit", "sgd", "adafactor")
CHECKPOINTING = ("none", "selective", "op_selective", "full")
FRAMEWORK_NAMES = (
    "hf",
    "torchtune",
    "litgpt",
    "axolotl",
    "unsloth",
    "llama_factory",
    "deepspeed",
    "megatron",
    "torchtitan",
    "vllm",
    "sglang",
    "gpt_fast",
    "torchao",
    "exllamav2",
    "mlc_llm",
    "llama_cpp",
)
LOSS_MODES = ("standard", "chunked", "fused")
SHARDINGS = ("none", "zero1", "zero2", "zero3", "fsdp")
LORA_TARGETS = ("qv", "attention", "all_linear")
ATTENTION_IMPLS = ("flash", "eager")
OBJECTIVES = ("cheapest", "fastest", "cheapest_hourly")  # the first is the default
# Whether a plan fits is decided on the high end of the memory range (sizing/uncertainty.py) or
# on the point estimate; unset: settings.SIZING_FIT_ON (default high).
FIT_ON = ("high", "point")
PRICING_MODELS = tuple(model.value for model in PricingModel)  # listed once: catalog/pricing.py
# What the planner weighs when a request names no pricing model: every model but capacity blocks,
# which are weighed only when named (catalog.pricing.ON_REQUEST_PRICING_MODELS, docs/api.md).
DEFAULT_PRICING_MODELS = tuple(model.value for model in DEFAULT_PLANNER_PRICING_MODELS)


@dataclass(frozen=True)
class Headroom:
    """GPU memory kept free for what the model does not see (allocator fragmentation bursts,
    NCCL buffers, a longer batch; the PyTorch caching allocator notes put it at 5-10%)."""

    fit: float  # a plan or /api/estimate's fit test must leave this share free
    warn: float  # below this share free a plan is flagged; the bare estimator's default margin


# The one headroom setting: the planner and /api/estimate reject above 95% of the card and warn
# under 10% free; `estimate()` called on its own keeps 10% (DESIGN.md).
HEADROOM = Headroom(fit=0.05, warn=0.10)


@dataclass(frozen=True)
class Field:
    """One input field: `kind` is choice, int, float, bool, text, object (a JSON object) or list
    (of text or choices)."""

    name: str
    kind: str
    label: str
    help: str = ""
    choices: tuple[str, ...] = ()
    bounds: tuple[float, float] | None = None  # inclusive; for a list of text: its length
    default: object = None  # the default when it does not depend on other fields
    extra: tuple[str, ...] = ()  # accepted besides `choices` (a synonym such as "auto")
    form: bool = True  # on the plan page
    cli: bool = True  # a CLI option
    api: bool = True  # in the API's workload schema (gpu and gpu_count are /api/estimate's)
    bare: str | None = None  # CLI: the value a bare `--flag` stands for
    count: bool = False  # CLI: accepts 2e9, 200M, 1.5B
    flag: str = ""  # CLI: the option's name when not the field's (an object is read from a file)


WORKLOAD: tuple[Field, ...] = (
    Field("model", "text", gettext_noop("Model preset"), "Model preset; see fixtures/models.yaml."),
    Field(
        "architecture",
        "object",
        gettext_noop("or a config.json (JSON)"),
        "A Hugging Face config.json object: hidden_size, num_hidden_layers, num_attention_heads, "
        "num_key_value_heads, head_dim, intermediate_size, vocab_size, tie_word_embeddings and the "
        "MoE names (num_local_experts, num_experts, n_routed_experts, num_experts_per_tok, "
        "moe_intermediate_size, n_shared_experts).",
        flag="config",
    ),
    Field(
        "params_b",
        "float",
        gettext_noop("or parameters (billions)"),
        "Parameters, billions.",
        bounds=(0.001, 3000),
    ),
    Field("task", "choice", gettext_noop("Task"), "", TASKS, default="finetune"),
    Field(
        "method",
        "choice",
        gettext_noop("Method"),
        "Training method (default full; none for inference).",
        METHODS,
    ),
    Field("precision", "choice", gettext_noop("Precision"), "Default bf16.", PRECISIONS),
    Field(
        "mixed_precision",
        "bool",
        gettext_noop("Mixed precision"),
        "fp32 master weights and gradients (default on for bf16/fp16/fp8 training; off for "
        "QLoRA under litgpt, which refuses it).",
        form=False,
    ),
    Field("optimizer", "choice", gettext_noop("Optimizer"), "Default AdamW.", OPTIMIZERS),
    Field(
        "batch_size",
        "int",
        gettext_noop("Batch size per GPU (sequences)"),
        "Per GPU.",
        bounds=(1, 4096),
    ),
    Field(
        "seq_len",
        "int",
        gettext_noop("Sequence length (tokens)"),
        "Tokens per sequence.",
        bounds=(1, 1_048_576),
    ),
    Field(
        "gradient_checkpointing",
        "choice",
        gettext_noop("Gradient checkpointing"),
        "Booleans accepted; a bare CLI flag means full.",
        CHECKPOINTING,
        bare="full",
    ),
    Field(
        "sharding",
        "choice",
        gettext_noop("Sharding"),
        "Leave out (or auto) to let the planner choose.",
        SHARDINGS,
        extra=("auto",),
    ),
    Field(
        "lora_rank",
        "int",
        gettext_noop("LoRA rank"),
        "Default 16.",
        bounds=(1, 1024),
        form=False,
    ),
    Field(
        "lora_targets",
        "choice",
        gettext_noop("LoRA targets"),
        "Default all_linear. qv: the q and v projections only; attention: q, k, v and o; "
        "all_linear: every linear of the blocks.",
        LORA_TARGETS,
        form=False,
    ),
    Field(
        "lora_dropout",
        "float",
        gettext_noop("LoRA dropout"),
        "Dropout on each adapter's input (0 to 1). Default: the framework's "
        "(PEFT, torchtune, LLaMA-Factory 0; litgpt 0.05).",
        bounds=(0, 1),
        form=False,
    ),
    Field(
        "tokens",
        "float",
        gettext_noop("Training tokens"),
        "Tokens to train on.",
        bounds=(1, 1e15),
        count=True,
    ),
    Field(
        "context_len",
        "int",
        gettext_noop("Context length (inference, tokens)"),
        "Inference.",
        bounds=(1, 1_048_576),
    ),
    Field(
        "concurrency",
        "int",
        gettext_noop("Concurrent sequences (inference)"),
        "Inference.",
        bounds=(1, 65_536),
    ),
    Field(
        "gpu",
        "text",
        gettext_noop("GPU"),
        "GPU slug (estimate only; GET /api/gpus/ lists them).",
        form=False,
        cli=False,
        api=False,
    ),
    Field(
        "gpu_count",
        "int",
        gettext_noop("GPUs"),
        "GPU count (estimate only).",
        bounds=(1, 4096),
        form=False,
        cli=False,
        api=False,
    ),
    Field(
        "tensor_parallel",
        "int",
        gettext_noop("Tensor parallel"),
        "",
        bounds=(1, 64),
        default=1,
        form=False,
        cli=False,
    ),
    Field(
        "pipeline_parallel",
        "int",
        gettext_noop("Pipeline parallel"),
        "",
        bounds=(1, 256),
        default=1,
        form=False,
        cli=False,
    ),
    Field(
        "gradient_accumulation",
        "int",
        gettext_noop("Gradient accumulation"),
        "Micro-batches per step.",
        bounds=(1, 65_536),
        form=False,
        cli=False,
    ),
    Field(
        "attention", "choice", gettext_noop("Attention"), "", ATTENTION_IMPLS, form=False, cli=False
    ),
    Field(
        "framework",
        "choice",
        gettext_noop("Framework"),
        "Sets the defaults of loss, activation_offloading, optimizer_in_backward, compile, "
        "lora_dropout and double_quant, and its QLoRA behaviour (litgpt: 4-bit head, no "
        "checkpointing, no mixed precision); for serving, the 4-bit decode kernel.",
        FRAMEWORK_NAMES,
        default="hf",
    ),
    Field(
        "loss",
        "choice",
        gettext_noop("Loss computation"),
        "standard: full fp32 logits; chunked; fused (default: the framework's).",
        LOSS_MODES,
        form=False,
    ),
    Field(
        "double_quant",
        "bool",
        gettext_noop("Double quantisation (QLoRA)"),
        "QLoRA: the NF4 block constants quantised again, 0.516 instead of 0.5625 bytes per "
        "4-bit weight (default: the framework's; off for hf, as BitsAndBytesConfig).",
        form=False,
    ),
    Field(
        "activation_offloading",
        "bool",
        gettext_noop("Offload activations to CPU"),
        "Saved activations kept in host memory (default: the framework's).",
        form=False,
    ),
    Field(
        "optimizer_in_backward",
        "bool",
        gettext_noop("Optimizer step in backward"),
        "Each gradient is applied and freed during backward (default: the framework's).",
        form=False,
    ),
    Field(
        "compile",
        "bool",
        gettext_noop("torch.compile"),
        "Training step compiled with torch.compile: pointwise ops fused and recomputed in "
        "backward instead of saved, and a faster step (default: the framework's).",
        form=False,
    ),
)

CONSTRAINTS: tuple[Field, ...] = (
    Field(
        "providers",
        "list",
        gettext_noop("Providers"),
        "Provider slugs (GET /api/providers/ lists them); none: all.",
        default=(),
    ),
    Field(
        "regions",
        "list",
        gettext_noop("Regions"),
        "Region codes (GET /api/regions/ lists them); none: all.",
        default=(),
        form=False,
    ),
    Field(
        "countries",
        "list",
        gettext_noop("Countries"),
        "ISO country codes; none: all.",
        bounds=(1, 2),
        default=(),
        form=False,
    ),
    Field(
        "mainland_china",
        "bool",
        gettext_noop("Mainland China"),
        "true: only mainland China; false: outside it; none: both.",
    ),
    Field(
        "pricing",
        "list",
        gettext_noop("Pricing models"),
        "None given: all but capacity_block (weighed only when named), with commitment terms "
        "only for long enough runs.",
        PRICING_MODELS,
        default=DEFAULT_PRICING_MODELS,
    ),
    Field(
        "max_usd_per_hour",
        "float",
        gettext_noop("Budget per hour (USD)"),
        "",
        bounds=(0, float("inf")),
    ),
    Field(
        "max_total_usd", "float", gettext_noop("Total budget (USD)"), "", bounds=(0, float("inf"))
    ),
    Field("max_hours", "float", gettext_noop("At most (hours)"), "", bounds=(0, float("inf"))),
    Field(
        "gpus",
        "list",
        gettext_noop("GPUs"),
        "GPU slugs (GET /api/gpus/ lists them); none: all.",
        default=(),
    ),
    Field(
        "min_gpu_memory_gb",
        "float",
        gettext_noop("GPU memory at least (GiB)"),
        "",
        bounds=(0, 4096),
    ),
    Field(
        "max_gpus",
        "int",
        gettext_noop("At most GPUs"),
        "Default 128.",
        bounds=(1, 100_000),
    ),
    Field(
        "allow_multi_node",
        "bool",
        gettext_noop("Allow several nodes"),
        "",
        default=True,
    ),
    Field(
        "datacenter_only",
        "bool",
        gettext_noop("Datacenter GPUs only"),
        "No GeForce parts.",
        default=False,
    ),
    Field(
        "include_stale",
        "bool",
        gettext_noop("Include stale prices"),
        "Unset: stale list prices are ranked (flagged), stale spot and marketplace prices are "
        "left out; true: every stale price is ranked, flagged; false: every stale price is left "
        "out.",
        default=None,
    ),
    Field(
        "fit_on",
        "choice",
        gettext_noop("Decide the fit on"),
        "high: the high end of the memory range (the estimate times the 95th percentile of "
        "comparable measurements over their estimates); point: the estimate itself. Unset: the "
        "server's SIZING_FIT_ON setting (default high).",
        FIT_ON,
    ),
)

WORKLOAD_BY_NAME = {f.name: f for f in WORKLOAD}
CONSTRAINTS_BY_NAME = {f.name: f for f in CONSTRAINTS}
# Bounds of the numeric workload fields: (low, high), inclusive.
BOUNDS: dict[str, tuple[float, float]] = {f.name: f.bounds for f in WORKLOAD if f.bounds}
INT_FIELDS = tuple(f.name for f in WORKLOAD if f.kind == "int")


def cli_options() -> list[tuple[str, str, str, str | None, str]]:
    """The CLI's workload options as (field, kind, help, bare value, flag) rows, in order: what
    `make schema` writes into clients/gpuatlas.py (a stdlib-only script that cannot import this)."""
    rows = []
    for f in WORKLOAD:
        if not f.cli:
            continue
        text = f.help
        if f.choices:
            text = f"{', '.join((*f.choices, *f.extra))}. {text}".strip()
        flag = "--" + (f.flag or f.name).replace("_", "-")
        rows.append((f.name, "count" if f.count else f.kind, text, f.bare, flag))
    return rows


CLI_BEGIN = "# --- Generated from sizing/inputs.py by `make schema`; do not edit. ---"
CLI_END = "# --- End of the generated options. ---"


def cli_block() -> str:
    """The Python source of the CLI's generated block (between CLI_BEGIN and CLI_END): the
    workload options, the constraint fields it sends (lists and single values; their flags are
    written by hand, tests/clients checks each has one), the pricing models (catalog/pricing.py)
    and the objectives."""
    lines = [CLI_BEGIN, "WORKLOAD_OPTIONS: list[tuple[str, str, str, str | None, str]] = ["]
    lines += [f"    {row!r}," for row in cli_options()]
    lines += ["]"]
    cli = [f for f in CONSTRAINTS if f.cli]
    lines += [f"CONSTRAINT_LISTS: list[str] = {[f.name for f in cli if f.kind == 'list']!r}"]
    lines += [f"CONSTRAINT_VALUES: list[str] = {[f.name for f in cli if f.kind != 'list']!r}"]
    lines += [f"PRICING_MODELS: tuple[str, ...] = {PRICING_MODELS!r}"]
    lines += [f"OBJECTIVES: tuple[str, ...] = {OBJECTIVES!r}", CLI_END]
    return "\n".join(lines) + "\n"
