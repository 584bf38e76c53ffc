"""Translatable names for the values the catalog and the planner store as plain codes.

The catalog's choice labels are English-only (the API and the admin speak English); the pages
show these instead, so a Chinese reader sees Chinese names for the same codes.
"""

from __future__ import annotations

from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _

PRICING_MODELS: dict[str, Promise] = {
    "on_demand": _("On demand"),
    "spot": _("Spot / preemptible"),
    "monthly": _("Monthly subscription"),
    "yearly": _("Yearly subscription"),
    "reserved_1y": _("Reserved, 1 year"),
    "reserved_3y": _("Reserved, 3 years"),
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
    "does_not_fit_memory": _("Does not fit in GPU memory"),
    "needs_multi_node": _("Needs more than one node"),
    "over_max_gpus": _("More GPUs than allowed"),
    "over_max_usd_per_hour": _("Over the hourly budget"),
    "over_max_total_usd": _("Over the total budget"),
    "over_max_hours": _("Takes longer than allowed"),
    "run_too_short_for_term": _("Run too short for the commitment term"),
    "term_needs_run_length": _("Commitment term needs a run length (tokens)"),
    "stale_price": _("Stale price"),
    "consumer_gpu_excluded": _("Consumer GPU excluded"),
    "below_min_gpu_memory": _("Below the minimum GPU memory"),
    "no_throughput_figure": _("No throughput figure for this precision"),
}


def label(mapping: dict[str, Promise], code: str | None) -> str:
    """The translated name of ``code``, or the code itself when it has none."""
    if code is None:
        return ""
    return str(mapping.get(code, code))
