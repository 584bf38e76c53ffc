"""Translatable names for the values the catalog and the planner store as plain codes.

The catalog's choice labels are English-only (the API and the admin speak English); the pages
show these instead, so a Chinese reader sees Chinese names for the same codes.
"""

from __future__ import annotations

from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _

from catalog.pricing import PRICING_MODEL_LABELS
from sizing.messages import RejectionCode

# Listed once in catalog/pricing.py, where the msgids are marked for makemessages.
PRICING_MODELS: dict[str, Promise] = {
    model: _(label)  # a msgid marked with gettext_noop in catalog/pricing.py
    for model, label in PRICING_MODEL_LABELS.items()
}

OBJECTIVES: dict[str, Promise] = {
    "cheapest": _("Cheapest in total"),
    "fastest": _("Fastest"),
    "cheapest_hourly": _("Cheapest per hour"),
}

TASKS: dict[str, Promise] = {
    "finetune": _("Fine-tune"),
    "pretrain": _("Pre-train"),
    "inference": _("Inference"),
}

METHODS: dict[str, Promise] = {
    "full": _("Full (all weights)"),
    "lora": _("LoRA"),
    "qlora": _("QLoRA (4-bit base)"),
    "freeze": _("Freeze (top layers only)"),
}

OPTIMIZERS: dict[str, Promise] = {
    "adamw": _("AdamW"),
    "adamw_8bit": _("AdamW 8-bit"),
    "sgd": _("SGD with momentum"),
    "adafactor": _("Adafactor"),
}

# Training and serving frameworks: brand names, the same in every language.
FRAMEWORKS: dict[str, str] = {
    "hf": "Hugging Face Transformers",
    "torchtune": "torchtune",
    "litgpt": "LitGPT",
    "axolotl": "Axolotl",
    "unsloth": "Unsloth",
    "llama_factory": "LLaMA-Factory",
    "deepspeed": "DeepSpeed",
    "megatron": "Megatron-LM",
    "torchtitan": "TorchTitan",
    "vllm": "vLLM",
    "sglang": "SGLang",
    "gpt_fast": "gpt-fast",
    "torchao": "torchao",
    "exllamav2": "ExLlamaV2",
    "mlc_llm": "MLC LLM",
    "llama_cpp": "llama.cpp",
}

CHECKPOINTING: dict[str, Promise] = {
    "none": _("None"),
    "selective": _("Selective"),
    "op_selective": _("Selective, op level (matmul outputs kept)"),
    "full": _("Full"),
}

SHARDING: dict[str, Promise] = {
    "": _("Automatic (least that fits)"),
    "none": _("None (data parallel)"),
    "zero1": _("ZeRO-1"),
    "zero2": _("ZeRO-2"),
    "zero3": _("ZeRO-3"),
    "fsdp": _("FSDP"),
}

BREAKDOWN: dict[str, Promise] = {
    "weights": _("Weights"),
    "gradients": _("Gradients"),
    "optimizer": _("Optimizer states"),
    "activations": _("Activations"),
    "kv_cache": _("KV cache"),
    "adapters": _("Adapters"),
    "overhead": _("Framework overhead"),
}

SEGMENTS: dict[str, Promise] = {
    "consumer": _("Consumer (GeForce)"),
    "workstation": _("Workstation"),
    "datacenter": _("Datacenter"),
}

PROVIDER_KINDS: dict[str, Promise] = {
    "hyperscaler": _("Hyperscaler"),
    "regional_cloud": _("Regional cloud"),
    "gpu_cloud": _("GPU cloud"),
    "marketplace": _("Marketplace"),
}

SCRAPE_STATUS: dict[str, Promise] = {
    "running": _("Running"),
    "success": _("Success"),
    "partial": _("Partial"),
    "failed": _("Failed"),
}

GPU_SHARING: dict[str, Promise] = {
    "dedicated": _("Dedicated"),
    "vgpu": _("Virtual GPU (time-sliced)"),
    "fractional": _("Fraction of a GPU"),
}

BILLING: dict[str, Promise] = {
    "second": _("Per second"),
    "minute": _("Per minute"),
    "hour": _("Per hour"),
    "day": _("Per day"),
    "month": _("Per month"),
}

PRICE_UNITS: dict[str, Promise] = {
    "hour": _("hour"),
    "day": _("day"),
    "month": _("month"),
    "year": _("year"),
}

REJECTIONS: dict[str, Promise] = {
    RejectionCode.DOES_NOT_FIT_MEMORY: _("Does not fit in GPU memory"),
    RejectionCode.DOES_NOT_FIT_MEMORY_HIGH: _(
        "Fits on the estimate, not on the high end of its range"
    ),
    RejectionCode.NEEDS_MULTI_NODE: _("Needs more than one node"),
    RejectionCode.NO_INTER_NODE_FABRIC: _("Needs several nodes, but has no network between nodes"),
    RejectionCode.FRAMEWORK_GPU_LIMIT: _("More GPUs than the framework trains QLoRA on"),
    RejectionCode.OVER_MAX_GPUS: _("More GPUs than allowed"),
    RejectionCode.OVER_MAX_USD_PER_HOUR: _("Over the hourly budget"),
    RejectionCode.OVER_MAX_TOTAL_USD: _("Over the total budget"),
    RejectionCode.OVER_MAX_HOURS: _("Takes longer than allowed"),
    RejectionCode.RUN_TOO_SHORT_FOR_TERM: _("Run too short for the commitment term"),
    RejectionCode.TERM_NEEDS_RUN_LENGTH: _("Commitment term needs a run length (tokens)"),
    RejectionCode.STALE_PRICE: _("Stale price"),
    RejectionCode.CONSUMER_GPU_EXCLUDED: _("Consumer GPU excluded"),
    RejectionCode.BELOW_MIN_GPU_MEMORY: _("Below the minimum GPU memory"),
    RejectionCode.NO_THROUGHPUT_FIGURE: _("No throughput figure for this precision"),
}


def label(mapping: dict[str, Promise], code: str | None) -> str:
    """The translated name of ``code``, or the code itself when it has none."""
    if code is None:
        return ""
    return str(mapping.get(code, code))
