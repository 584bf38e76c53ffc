"""Coded messages: every reason, warning, advice item and rejection the planner says, as a stable
code with parameters, rendered in English or Simplified Chinese. Pure: no Django.

The API returns ``{"code", "params", "text"}`` beside each English sentence it always had; pages
call ``message_render``. A test checks that every code has a template in every language and that
the templates of one code use the same parameters.
"""

from __future__ import annotations

import math
import string
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from functools import lru_cache
from typing import Any

from django.utils import translation

from catalog.pricing import PricingModel
from sizing.numbers import large

LANGUAGES = ("en", "zh-hans")
DEFAULT_LANGUAGE = "en"


# How messages name a pricing model, per language.
_PRICING_MODEL_WORDS = {
    "zh-hans": {
        PricingModel.ON_DEMAND: "按需",
        PricingModel.SPOT: "竞价",
        PricingModel.MONTHLY: "包月",
        PricingModel.YEARLY: "包年",
        PricingModel.RESERVED_1Y: "1 年预留",
        PricingModel.RESERVED_3Y: "3 年预留",
        PricingModel.CAPACITY_BLOCK: "容量块",
    },
}


# An offer named in a message: the English label is the ``offer`` param; these parts beside it
# (``offer_provider``, ...) let other languages write it their way.
OFFER_PARTS = ("provider", "instance_type", "region", "pricing_model")
OFFER_TEMPLATES = {"zh-hans": "{provider}/{instance_type}（{region}，{pricing}）"}


class RejectionCode(StrEnum):
    """Why an offer has no plan: the keys of a recommendation's ``rejected``."""

    STALE_PRICE = "stale_price"
    CONSUMER_GPU_EXCLUDED = "consumer_gpu_excluded"
    BELOW_MIN_GPU_MEMORY = "below_min_gpu_memory"
    DOES_NOT_FIT_MEMORY = "does_not_fit_memory"
    DOES_NOT_FIT_MEMORY_HIGH = "does_not_fit_memory_high"
    NEEDS_MULTI_NODE = "needs_multi_node"
    OVER_MAX_GPUS = "over_max_gpus"
    NO_THROUGHPUT_FIGURE = "no_throughput_figure"
    OVER_MAX_USD_PER_HOUR = "over_max_usd_per_hour"
    OVER_MAX_HOURS = "over_max_hours"
    OVER_MAX_TOTAL_USD = "over_max_total_usd"
    TERM_NEEDS_RUN_LENGTH = "term_needs_run_length"
    RUN_TOO_SHORT_FOR_TERM = "run_too_short_for_term"
    # planfix: more nodes would fit, but the instance has no network between instances.
    NO_INTER_NODE_FABRIC = "no_inter_node_fabric"
    # sizingfix: the framework refuses quantised (QLoRA) training on this many GPUs.
    FRAMEWORK_GPU_LIMIT = "framework_gpu_limit"


class MessageCode(StrEnum):
    """Reasons and warnings of a plan, advice of a run, rejection examples, compare verdicts."""

    # Reasons a plan is what it is.
    MEMORY_FIT = "memory_fit"
    MEMORY_FIT_SHARDED = "memory_fit_sharded"
    RUN_TIME = "run_time"
    TERM_BILLED = "term_billed"
    GPUS_JOINED = "gpus_joined"
    NODES_JOINED_RDMA = "nodes_joined_rdma"
    BEATS_ON_DEMAND = "beats_on_demand"
    # Warnings on a plan.
    HOST_RAM_LOW = "host_ram_low"
    HOST_VCPUS_LOW = "host_vcpus_low"
    HOST_NO_NVME = "host_no_nvme"
    NO_BF16_TRAINING = "no_bf16_training"
    NO_BF16 = "no_bf16"
    NO_FP8 = "no_fp8"
    PRICE_STALE = "price_stale"
    LOW_HEADROOM = "low_headroom"
    GEFORCE_DATACENTER = "geforce_datacenter"
    SHARED_GPU = "shared_gpu"
    SPOT_TRAINING = "spot_training"
    SPOT_SERVING = "spot_serving"
    PCIE_ONLY_TRAINING = "pcie_only_training"
    MULTI_NODE_WITHOUT_RDMA = "multi_node_without_rdma"
    MULTI_NODE_PLAIN_NETWORK = "multi_node_plain_network"
    MAINLAND_CHINA = "mainland_china"
    # Advice on a planning run.
    SPOT_SAVES = "spot_saves"
    STALE_LEFT_OUT = "stale_left_out"
    TERMS_LEFT_OUT = "terms_left_out"
    OVER_BUDGET = "over_budget"
    TRY_LORA = "try_lora"
    TRY_FULL_CHECKPOINTING = "try_full_checkpointing"
    ALLOW_MULTI_NODE = "allow_multi_node"
    WIDEN_CONSTRAINTS = "widen_constraints"
    CHECKPOINTING_FITS_80GB = "checkpointing_fits_80gb"
    QLORA_FITS_24GB = "qlora_fits_24gb"
    CAPPED_GPUS = "capped_gpus"
    FIT_ON_POINT = "fit_on_point"
    # Examples a rejection lists.
    EXAMPLE_OFFER = "example_offer"
    EXAMPLE_OVER_MAX_GPUS = "example_over_max_gpus"
    EXAMPLE_NO_FIT = "example_no_fit"
    EXAMPLE_NO_FIT_HIGH = "example_no_fit_high"
    EXAMPLE_NO_THROUGHPUT = "example_no_throughput"
    EXAMPLE_PLAN = "example_plan"
    EXAMPLE_PLAN_NO_TIME = "example_plan_no_time"
    # Why a compared target has no plan.
    NO_PRICE_IN_SCOPE = "no_price_in_scope"
    NOTHING_FITS = "nothing_fits"
    WHY_NOT = "why_not"
    # The example of a compared target's stale_price verdict: when, the shelf life, the way in.
    EXAMPLE_STALE = "example_stale"
    EXAMPLE_STALE_MARKETPLACE = "example_stale_marketplace"
    # Workload input errors (sizing/workload.py parse_workload), under the field they name.
    INPUT_NOT_AN_OBJECT = "input_not_an_object"
    INPUT_UNKNOWN_FIELD = "input_unknown_field"
    INPUT_UNKNOWN_FIELD_NEAR = "input_unknown_field_near"
    INPUT_CHOICE = "input_choice"
    INPUT_CHOICE_OR_BOOL = "input_choice_or_bool"
    INPUT_WHOLE_NUMBER = "input_whole_number"
    INPUT_NUMBER = "input_number"
    INPUT_BETWEEN = "input_between"
    INPUT_BOOL = "input_bool"
    INPUT_ONE_MODEL_SOURCE = "input_one_model_source"
    INPUT_PRESET_NAME = "input_preset_name"
    INPUT_UNKNOWN_PRESET = "input_unknown_preset"
    INPUT_UNKNOWN_PRESET_CLOSEST = "input_unknown_preset_closest"
    INPUT_MODEL_AND_PARAMS = "input_model_and_params"
    INPUT_NO_MODEL = "input_no_model"
    INPUT_CONFIG_OBJECT = "input_config_object"
    INPUT_CONFIG_JSON = "input_config_json"
    INPUT_CONFIG_REQUIRED = "input_config_required"
    INPUT_CONFIG_WHOLE = "input_config_whole"
    INPUT_CONFIG_EXPERTS = "input_config_experts"
    INPUT_CONFIG_HEAD_DIM = "input_config_head_dim"
    INPUT_GPU_SLUG = "input_gpu_slug"
    INPUT_PRETRAIN_ADAPTER = "input_pretrain_adapter"
    INPUT_METHOD_FOR_INFERENCE = "input_method_for_inference"
    INPUT_LOW_BIT_TRAINING = "input_low_bit_training"
    INPUT_LORA_INT4 = "input_lora_int4"
    INPUT_QLORA_PRECISION = "input_qlora_precision"
    INPUT_MIXED_PRECISION_COMPUTE = "input_mixed_precision_compute"
    INPUT_MIXED_PRECISION_INFERENCE = "input_mixed_precision_inference"
    INPUT_LORA_SETTINGS = "input_lora_settings"
    INPUT_DOUBLE_QUANT = "input_double_quant"
    INPUT_ACCUMULATION_INFERENCE = "input_accumulation_inference"
    INPUT_INFERENCE_FIELDS = "input_inference_fields"
    INPUT_NEEDS_TRANSFORMER = "input_needs_transformer"
    INPUT_GPU_COUNT_MULTIPLE = "input_gpu_count_multiple"
    INPUT_TP_HEADS = "input_tp_heads"
    # The estimator's own notes (sizing/estimator.py); the formula working of sizing/memory.py
    # and sizing/compute.py is English only.
    NOTE_SHARDING_CHOSEN = "note_sharding_chosen"
    NOTE_SHARDING_ONE_RANK = "note_sharding_one_rank"
    NOTE_SERVING_REPLICAS = "note_serving_replicas"
    RUN_OVER_A_YEAR = "run_over_a_year"
    NOTE_TRAINING_FLOPS = "note_training_flops"
    NOTE_TRAINING_FLOPS_RECOMPUTE = "note_training_flops_recompute"
    NOTE_FITS = "note_fits"
    NOTE_DOES_NOT_FIT = "note_does_not_fit"
    NOTE_GPUS_NEEDED = "note_gpus_needed"
    NOTE_NO_COUNT_FITS = "note_no_count_fits"
    NOTE_CHECKPOINTING_CUTS = "note_checkpointing_cuts"
    NOTE_RANGE = "note_range"
    NOTE_FIT_ON_HIGH = "note_fit_on_high"
    # planfix: how nodes are joined when a bandwidth is not published; instances without an
    # inter-node fabric; a compared target priced only under pricing models not asked for.
    NODES_JOINED_RDMA_FABRIC = "nodes_joined_rdma_fabric"
    NODES_JOINED_RDMA_UNPUBLISHED = "nodes_joined_rdma_unpublished"
    MULTI_NODE_WITHOUT_RDMA_UNPUBLISHED = "multi_node_without_rdma_unpublished"
    MULTI_NODE_PLAIN_UNPUBLISHED = "multi_node_plain_unpublished"
    MULTI_NODE_RDMA_SLOW = "multi_node_rdma_slow"
    MULTI_NODE_NEEDS_FABRIC = "multi_node_needs_fabric"
    EXAMPLE_NO_FABRIC = "example_no_fabric"
    NO_PRICE_IN_PRICING = "no_price_in_pricing"
    # sizingfix: a framework's GPU limit for quantised training.
    EXAMPLE_FRAMEWORK_GPU_LIMIT = "example_framework_gpu_limit"
    # sizingfix: a per-port fabric figure is not the node's; an unknown one is not timed.
    NODES_JOINED_RDMA_PORT = "nodes_joined_rdma_port"
    INTER_NODE_UNTIMED = "inter_node_untimed"
    NODES_JOINED_RDMA_FRONT_END = "nodes_joined_rdma_front_end"
    NOTE_FRAMEWORK_GPU_LIMIT = "note_framework_gpu_limit"
    FRAMEWORK_GPU_LIMIT_ADVICE = "framework_gpu_limit_advice"
    # inputfix: contexts past the model's limit, tensor parallel over KV heads, config.json
    # combinations that cannot be.
    INPUT_CONTEXT_OVER_MAX = "input_context_over_max"
    INPUT_CONTEXT_OVER_MAX_ALTERNATIVE = "input_context_over_max_alternative"
    INPUT_CONTEXT_OVER_CONFIG = "input_context_over_config"
    INPUT_TP_KV_HEADS = "input_tp_kv_heads"
    INPUT_CONFIG_ACTIVE_EXPERTS = "input_config_active_experts"
    INPUT_CONFIG_KV_HEADS = "input_config_kv_heads"
    INPUT_CONFIG_DENSE_LAYERS = "input_config_dense_layers"
    INPUT_CONFIG_LATENT_KEYS = "input_config_latent_keys"


# One template per code and language: str.format fields named by the message's params. Derived
# fields are filled in at rendering: ``pricing_model_words`` and ``pricing_model_title`` from a
# ``pricing_model`` param, ``reason_text`` from a ``reason`` param; a param that is itself a
# message (a dict with a code) is rendered in the same language.
TEMPLATES: dict[str, dict[str, str]] = {
    # Rejections: what each reason means.
    RejectionCode.STALE_PRICE: {
        "en": "Price older than the staleness limit",
        "zh-hans": "价格早于时效期限",
    },
    RejectionCode.CONSUMER_GPU_EXCLUDED: {
        "en": "GeForce GPU left out (datacenter only)",
        "zh-hans": "已排除 GeForce 消费级 GPU（仅限数据中心）",
    },
    RejectionCode.BELOW_MIN_GPU_MEMORY: {
        "en": "GPU memory below the minimum asked for",
        "zh-hans": "GPU 显存低于要求的最小值",
    },
    RejectionCode.DOES_NOT_FIT_MEMORY: {
        "en": "Does not fit in GPU memory",
        "zh-hans": "GPU 显存放不下",
    },
    RejectionCode.DOES_NOT_FIT_MEMORY_HIGH: {
        "en": "Fits on the estimate, but not on the high end of its memory range",
        "zh-hans": "按估算值放得下，但按显存区间的上限放不下",
    },
    RejectionCode.NEEDS_MULTI_NODE: {
        "en": "Needs more than one node, and multi-node is not allowed",
        "zh-hans": "需要多于一个节点，但未允许多节点",
    },
    RejectionCode.OVER_MAX_GPUS: {
        "en": "Needs more GPUs than the GPU limit",
        "zh-hans": "所需 GPU 数超过上限",
    },
    RejectionCode.NO_THROUGHPUT_FIGURE: {
        "en": "No throughput figure for this precision",
        "zh-hans": "该精度没有算力数据",
    },
    RejectionCode.OVER_MAX_USD_PER_HOUR: {
        "en": "Over the hourly price limit",
        "zh-hans": "超出每小时价格上限",
    },
    RejectionCode.OVER_MAX_HOURS: {
        "en": "Takes longer than the time limit",
        "zh-hans": "耗时超出时间上限",
    },
    RejectionCode.OVER_MAX_TOTAL_USD: {
        "en": "Over the total budget",
        "zh-hans": "超出总预算",
    },
    RejectionCode.TERM_NEEDS_RUN_LENGTH: {
        "en": "A commitment term needs a run length (training tokens)",
        "zh-hans": "包期计费需要已知的运行时长（训练 token 数）",
    },
    RejectionCode.RUN_TOO_SHORT_FOR_TERM: {
        "en": "The run is shorter than half a commitment term",
        "zh-hans": "运行时长不足半个计费周期",
    },
    # Reasons.
    MessageCode.MEMORY_FIT: {
        "en": "Needs {memory_gib:.1f} GiB per GPU of {capacity_gib:g} ({headroom_pct:.0f}% headroom)",
        "zh-hans": "每块 GPU 需要 {memory_gib:.1f} GiB，共 {capacity_gib:g} GiB（余量 {headroom_pct:.0f}%）",
    },
    MessageCode.MEMORY_FIT_SHARDED: {
        "en": "Needs {memory_gib:.1f} GiB per GPU of {capacity_gib:g} ({headroom_pct:.0f}% headroom) with {sharding} sharding",
        "zh-hans": "采用 {sharding} 分片时每块 GPU 需要 {memory_gib:.1f} GiB，共 {capacity_gib:g} GiB（余量 {headroom_pct:.0f}%）",
    },
    MessageCode.RUN_TIME: {
        "en": "About {hours:hours} h on {gpu_count:g} GPU(s) ({nodes} node(s))",
        "zh-hans": "在 {gpu_count:g} 块 GPU（{nodes} 个节点）上约 {hours:hours} 小时",
    },
    MessageCode.TERM_BILLED: {
        "en": "{terms} x {pricing_model_words} term billed in full",
        "zh-hans": "按 {terms} 个完整{pricing_model_words}周期计费",
    },
    MessageCode.GPUS_JOINED: {
        "en": "GPUs joined by {interconnect}",
        "zh-hans": "GPU 之间通过 {interconnect} 互联",
    },
    MessageCode.NODES_JOINED_RDMA: {
        "en": "Nodes joined by {interconnect} ({network_gbps:g} Gbit/s, RDMA)",
        "zh-hans": "节点之间通过 {interconnect} 互联（{network_gbps:g} Gbit/s，RDMA）",
    },
    MessageCode.BEATS_ON_DEMAND: {
        "en": "{pricing_model_title} beats on-demand by {saving_pct:.0f}% for this run",
        "zh-hans": "本次运行{pricing_model_title}比按需便宜 {saving_pct:.0f}%",
    },
    # Warnings.
    MessageCode.HOST_RAM_LOW: {
        "en": "Host RAM {ram_gib:g} GiB is {ratio:.1f}x the GPU memory; training wants at least {min_ratio:g}x for data loading and checkpoints.",
        "zh-hans": "主机内存 {ram_gib:g} GiB 仅为 GPU 显存的 {ratio:.1f} 倍；训练时数据加载和检查点至少需要 {min_ratio:g} 倍。",
    },
    MessageCode.HOST_VCPUS_LOW: {
        "en": "{vcpus_per_gpu:.0f} vCPUs per GPU may starve the data loader (about {min_vcpus_per_gpu:g} per GPU is the usual minimum).",
        "zh-hans": "每块 GPU 只有 {vcpus_per_gpu:.0f} 个 vCPU，数据加载可能跟不上（通常每块 GPU 至少约 {min_vcpus_per_gpu:g} 个）。",
    },
    MessageCode.HOST_NO_NVME: {
        "en": "No local NVMe: stream data from object storage or attach fast block storage.",
        "zh-hans": "没有本地 NVMe：请从对象存储流式读取数据，或挂载高速块存储。",
    },
    MessageCode.NO_BF16_TRAINING: {
        "en": "{gpu} has no BF16: runs in FP16 with loss scaling.",
        "zh-hans": "{gpu} 不支持 BF16：以 FP16 加损失缩放运行。",
    },
    MessageCode.NO_BF16: {
        "en": "{gpu} has no BF16: runs in FP16.",
        "zh-hans": "{gpu} 不支持 BF16：以 FP16 运行。",
    },
    MessageCode.NO_FP8: {
        "en": "{gpu} has no FP8 tensor cores: FP8 runs at 16-bit speed.",
        "zh-hans": "{gpu} 没有 FP8 张量核心：FP8 只能以 16 位的速度运行。",
    },
    MessageCode.PRICE_STALE: {
        "en": "Price observed {observed_on} is older than the staleness limit; check it.",
        "zh-hans": "价格采集于 {observed_on}，已超过时效期限，请核实。",
    },
    MessageCode.LOW_HEADROOM: {
        "en": "Only {headroom_pct:.0f}% GPU memory headroom: fragmentation or a longer batch may OOM.",
        "zh-hans": "GPU 显存余量仅 {headroom_pct:.0f}%：内存碎片或更长的批次可能导致显存不足（OOM）。",
    },
    MessageCode.GEFORCE_DATACENTER: {
        "en": "{gpu} is a GeForce part: NVIDIA's driver licence forbids datacenter deployment; fine for experiments, a risk for production.",
        "zh-hans": "{gpu} 是 GeForce 消费级显卡：NVIDIA 驱动许可禁止在数据中心部署；做实验可以，用于生产有风险。",
    },
    MessageCode.SHARED_GPU: {
        "en": "Shared GPU ({sharing}, {share:g} of a GPU): performance varies; not suited to training.",
        "zh-hans": "共享 GPU（{sharing}，{share:g} 块 GPU）：性能不稳定，不适合训练。",
    },
    MessageCode.SPOT_TRAINING: {
        "en": "Spot capacity can be reclaimed at any time: checkpoint at least every {minutes} minutes.",
        "zh-hans": "竞价实例随时可能被回收：至少每 {minutes} 分钟保存一次检查点。",
    },
    MessageCode.SPOT_SERVING: {
        "en": "Spot capacity can be reclaimed at any time: keep an on-demand replica for serving.",
        "zh-hans": "竞价实例随时可能被回收：推理服务请保留一个按需副本。",
    },
    MessageCode.PCIE_ONLY_TRAINING: {
        "en": "Multi-GPU training over PCIe only: gradient all-reduce will cost efficiency.",
        "zh-hans": "多卡训练只有 PCIe 互联：梯度 all-reduce 会降低效率。",
    },
    MessageCode.MULTI_NODE_WITHOUT_RDMA: {
        "en": "MULTI-NODE WITHOUT RDMA: {nodes} nodes over {network} ({network_gbps:g} Gbit/s); efficiency falls off a cliff. Prefer InfiniBand/RoCE/EFA >= {min_gbps:g} Gbit/s.",
        "zh-hans": "多节点但没有 RDMA：{nodes} 个节点经 {network} 互联（{network_gbps:g} Gbit/s），效率会断崖式下降。请选用 >= {min_gbps:g} Gbit/s 的 InfiniBand/RoCE/EFA。",
    },
    MessageCode.MULTI_NODE_PLAIN_NETWORK: {
        "en": "MULTI-NODE WITHOUT RDMA: {nodes} nodes over plain networking ({network_gbps:g} Gbit/s); efficiency falls off a cliff. Prefer InfiniBand/RoCE/EFA >= {min_gbps:g} Gbit/s.",
        "zh-hans": "多节点但没有 RDMA：{nodes} 个节点经普通网络互联（{network_gbps:g} Gbit/s），效率会断崖式下降。请选用 >= {min_gbps:g} Gbit/s 的 InfiniBand/RoCE/EFA。",
    },
    # {notes}: the provider's compliance notes, or MAINLAND_CHINA_RULES where it has none (so the
    # rules are said once, not once generically and again in the provider's words).
    MessageCode.MAINLAND_CHINA: {
        "en": "Mainland China region. {notes}",
        "zh-hans": "中国大陆地域。{notes}",
    },
    # Advice.
    MessageCode.SPOT_SAVES: {
        "en": "Spot saves {saving_pct:.0f}% on {instance_type} with checkpoints every {minutes} minutes.",
        "zh-hans": "{instance_type} 用竞价实例可省 {saving_pct:.0f}%，需每 {minutes} 分钟保存检查点。",
    },
    MessageCode.STALE_LEFT_OUT: {
        "en": "{count} offer(s) were left out because their prices are older than the staleness limit; set include_stale=true to see them flagged.",
        "zh-hans": "有 {count} 个报价因价格超过时效期限被排除；设置 include_stale=true 可带标记显示它们。",
    },
    MessageCode.TERMS_LEFT_OUT: {
        "en": "Monthly and reserved terms were left out: the run is shorter than half a term.",
        "zh-hans": "包月和预留计费已排除：运行时长不足半个计费周期。",
    },
    MessageCode.OVER_BUDGET: {
        "en": "Train on fewer tokens or raise max_total_usd / max_hours: some plans fit memory but not the budget.",
        "zh-hans": "减少训练 token 数，或提高 max_total_usd / max_hours：有些方案显存放得下，但超出了预算。",
    },
    MessageCode.TRY_LORA: {
        "en": "LoRA or QLoRA needs a fraction of the memory of a full fine-tune.",
        "zh-hans": "LoRA 或 QLoRA 所需显存只是全参数微调的一小部分。",
    },
    MessageCode.TRY_FULL_CHECKPOINTING: {
        "en": "Full gradient checkpointing cuts activation memory at about a third more compute.",
        "zh-hans": "完整梯度检查点可大幅减少激活显存，代价是约多三分之一的计算量。",
    },
    MessageCode.ALLOW_MULTI_NODE: {
        "en": "Allow multi-node (allow_multi_node=true) to shard over more GPUs.",
        "zh-hans": "允许多节点（allow_multi_node=true），以便在更多 GPU 上分片。",
    },
    MessageCode.WIDEN_CONSTRAINTS: {
        "en": "Widen the constraints (providers, regions, GPUs) to consider more offers.",
        "zh-hans": "放宽限制条件（云厂商、地域、GPU），以考虑更多报价。",
    },
    MessageCode.CHECKPOINTING_FITS_80GB: {
        "en": "Full gradient checkpointing would fit this on one 80 GB GPU ({memory_gib:.0f} GiB).",
        "zh-hans": "开启完整梯度检查点后，单块 80 GB GPU 即可放下（{memory_gib:.0f} GiB）。",
    },
    MessageCode.QLORA_FITS_24GB: {
        "en": "QLoRA fits a single 24 GB card ({memory_gib:.0f} GiB with full checkpointing).",
        "zh-hans": "改用 QLoRA 单块 24 GB 显卡即可放下（完整检查点下 {memory_gib:.0f} GiB）。",
    },
    MessageCode.CAPPED_GPUS: {
        "en": "Plans were capped at {max_gpus} GPUs; set max_gpus to weigh larger clusters.",
        "zh-hans": "方案最多只考虑 {max_gpus} 块 GPU；设置 max_gpus 可评估更大的集群。",
    },
    MessageCode.FIT_ON_POINT: {
        "en": "{count} offer(s) fit on the estimate but not on the high end of its memory range; deciding the fit on the estimate (fit_on=point) accepts them, at a real risk of running out of memory.",
        "zh-hans": "有 {count} 个报价按估算值放得下，但按显存区间的上限放不下；改为按估算值判断（fit_on=point）即可接受它们，但确有显存不足（OOM）的风险。",
    },
    # Rejection examples.
    MessageCode.EXAMPLE_OFFER: {"en": "{offer}", "zh-hans": "{offer}"},
    MessageCode.EXAMPLE_OVER_MAX_GPUS: {
        "en": "{offer}: needs more than {max_gpus} GPUs",
        "zh-hans": "{offer}：需要超过 {max_gpus} 块 GPU",
    },
    MessageCode.EXAMPLE_NO_FIT: {
        "en": "{offer}: needs {memory_gib:.1f} GiB per GPU on {total} GPU(s), has {capacity_gib:g}",
        "zh-hans": "{offer}：在 {total} 块 GPU 上每块需要 {memory_gib:.1f} GiB，实有 {capacity_gib:g} GiB",
    },
    MessageCode.EXAMPLE_NO_FIT_HIGH: {
        "en": "{offer}: needs {memory_gib:.1f} GiB per GPU on {total} GPU(s), up to {high_gib:.1f} GiB at the high end of the range, has {capacity_gib:g}",
        "zh-hans": "{offer}：在 {total} 块 GPU 上每块需要 {memory_gib:.1f} GiB，区间上限可达 {high_gib:.1f} GiB，实有 {capacity_gib:g} GiB",
    },
    MessageCode.EXAMPLE_NO_THROUGHPUT: {
        "en": "{offer}: the catalog has no dense {precision} figure for {gpu}",
        "zh-hans": "{offer}：目录中没有 {gpu} 的 {precision} 稠密算力数据",
    },
    MessageCode.EXAMPLE_PLAN: {
        "en": "{offer} x{nodes} node(s): ${usd_per_hour:,.2f}/h, {hours:hours} h, ${total_usd:,.0f}",
        "zh-hans": "{offer} x{nodes} 个节点：${usd_per_hour:,.2f}/小时，{hours:hours} 小时，共 ${total_usd:,.0f}",
    },
    MessageCode.EXAMPLE_PLAN_NO_TIME: {
        "en": "{offer} x{nodes} node(s): ${usd_per_hour:,.2f}/h, ?, ?",
        "zh-hans": "{offer} x{nodes} 个节点：${usd_per_hour:,.2f}/小时，时长未知，总价未知",
    },
    # Compare verdicts.
    MessageCode.NO_PRICE_IN_SCOPE: {
        "en": "no current price for {target} within the constraints",
        "zh-hans": "在限制条件内没有 {target} 的当前价格",
    },
    MessageCode.NOTHING_FITS: {"en": "nothing fits", "zh-hans": "没有可行方案"},
    MessageCode.WHY_NOT: {
        "en": "{reason}: {example}",
        "zh-hans": "{reason_text}：{example}",
    },
    MessageCode.EXAMPLE_STALE: {
        "en": "{offer}, observed {observed_on}, past the {shelf_life_days}-day shelf life of {pricing_model_words} prices; include_stale=true weighs it (flagged stale)",
        "zh-hans": "{offer}，观测于 {observed_on}，已超过{pricing_model_words}价格 {shelf_life_days} 天的时效期限；设置 include_stale=true 可将其计入（标记为过期）",
    },
    MessageCode.EXAMPLE_STALE_MARKETPLACE: {
        "en": "{offer}, observed {observed_on}, past the {shelf_life_days}-day shelf life of marketplace prices; include_stale=true weighs it (flagged stale)",
        "zh-hans": "{offer}，观测于 {observed_on}，已超过市场型报价 {shelf_life_days} 天的时效期限；设置 include_stale=true 可将其计入（标记为过期）",
    },
    # Workload input errors.
    MessageCode.INPUT_NOT_AN_OBJECT: {
        "en": "Expected an object of workload fields.",
        "zh-hans": "应为由工作负载字段组成的对象。",
    },
    MessageCode.INPUT_UNKNOWN_FIELD: {"en": "Unknown field.", "zh-hans": "未知字段。"},
    MessageCode.INPUT_UNKNOWN_FIELD_NEAR: {
        "en": "Unknown field. Did you mean {near!r}?",
        "zh-hans": "未知字段。是否想写 {near!r}？",
    },
    MessageCode.INPUT_CHOICE: {
        "en": "Must be one of: {allowed}.",
        "zh-hans": "必须是以下之一：{allowed}。",
    },
    MessageCode.INPUT_CHOICE_OR_BOOL: {
        "en": "Must be one of: {allowed} (or a boolean).",
        "zh-hans": "必须是以下之一：{allowed}（或布尔值）。",
    },
    MessageCode.INPUT_WHOLE_NUMBER: {"en": "Must be a whole number.", "zh-hans": "必须是整数。"},
    MessageCode.INPUT_NUMBER: {"en": "Must be a number.", "zh-hans": "必须是数字。"},
    MessageCode.INPUT_BETWEEN: {
        "en": "Must be between {low:bound} and {high:bound}.",
        "zh-hans": "必须介于 {low:bound} 与 {high:bound} 之间。",
    },
    MessageCode.INPUT_BOOL: {"en": "Must be true or false.", "zh-hans": "必须是 true 或 false。"},
    MessageCode.INPUT_ONE_MODEL_SOURCE: {
        "en": "Give one of {field_model}, {field_params_b} or {field_architecture}.",
        "zh-hans": "{field_model}、{field_params_b} 和 {field_architecture} 只能给出其中一个。",
    },
    MessageCode.INPUT_PRESET_NAME: {
        "en": "Must be a preset name.",
        "zh-hans": "必须是预设模型名。",
    },
    MessageCode.INPUT_UNKNOWN_PRESET: {
        "en": "Unknown model preset {model!r}.",
        "zh-hans": "未知的预设模型 {model!r}。",
    },
    MessageCode.INPUT_UNKNOWN_PRESET_CLOSEST: {
        "en": "Unknown model preset {model!r}. Closest: {closest}.",
        "zh-hans": "未知的预设模型 {model!r}。最接近的：{closest}。",
    },
    MessageCode.INPUT_MODEL_AND_PARAMS: {
        "en": "Give either {field_model} or {field_params_b}, not both.",
        "zh-hans": "{field_model} 和 {field_params_b} 只能给出其中一个。",
    },
    MessageCode.INPUT_NO_MODEL: {
        "en": "Give the model to size: {field_model} (a preset name), {field_params_b} or {field_architecture} (a config.json).",
        "zh-hans": "请给出要估算的模型：{field_model}（预设模型名）、{field_params_b} 或 {field_architecture}（一个 config.json）。",
    },
    MessageCode.INPUT_CONFIG_OBJECT: {
        "en": "Must be a JSON object (a Hugging Face config.json).",
        "zh-hans": "必须是 JSON 对象（Hugging Face 的 config.json）。",
    },
    MessageCode.INPUT_CONFIG_JSON: {
        "en": "Must hold only JSON values.",
        "zh-hans": "只能包含 JSON 值。",
    },
    MessageCode.INPUT_CONFIG_REQUIRED: {
        "en": "{key} is required.",
        "zh-hans": "缺少 {key}。",
    },
    MessageCode.INPUT_CONFIG_WHOLE: {
        "en": "{key} must be a whole number from 1 to {max:,}.",
        "zh-hans": "{key} 必须是 1 到 {max:,} 之间的整数。",
    },
    MessageCode.INPUT_CONFIG_EXPERTS: {
        "en": "The expert count must be a whole number of at least 1.",
        "zh-hans": "专家数必须是不小于 1 的整数。",
    },
    MessageCode.INPUT_CONFIG_HEAD_DIM: {
        "en": "head_dim is required when hidden_size is not a multiple of the heads.",
        "zh-hans": "hidden_size 不是注意力头数的整数倍时，必须给出 head_dim。",
    },
    MessageCode.INPUT_GPU_SLUG: {
        "en": "Must be a GPU slug such as 'h100-sxm'.",
        "zh-hans": "必须是 GPU 标识，例如 'h100-sxm'。",
    },
    MessageCode.INPUT_PRETRAIN_ADAPTER: {
        "en": "{method} adapts a pretrained model; pre-training trains every weight (use full).",
        "zh-hans": "{method} 用于微调已预训练的模型；预训练要训练全部权重（请用 full）。",
    },
    MessageCode.INPUT_METHOD_FOR_INFERENCE: {
        "en": "{method} is a training method; leave method out for inference.",
        "zh-hans": "{method} 是训练方法；推理时请不要填写 method。",
    },
    MessageCode.INPUT_LOW_BIT_TRAINING: {
        "en": "Training all weights in {precision} is not supported; use bf16/fp16/fp8 (or method qlora for a 4-bit base).",
        "zh-hans": "不支持以 {precision} 训练全部权重；请用 bf16/fp16/fp8（或用 qlora 方法配 4 位基座）。",
    },
    MessageCode.INPUT_LORA_INT4: {
        "en": "A 4-bit base with LoRA adapters is QLoRA: use method qlora.",
        "zh-hans": "4 位基座加 LoRA 适配器就是 QLoRA：请用 qlora 方法。",
    },
    MessageCode.INPUT_QLORA_PRECISION: {
        "en": "QLoRA keeps an NF4 base and computes in bf16/fp16; use bf16, fp16 or int4.",
        "zh-hans": "QLoRA 保存 NF4 基座并以 bf16/fp16 计算；请用 bf16、fp16 或 int4。",
    },
    MessageCode.INPUT_MIXED_PRECISION_COMPUTE: {
        "en": "Mixed precision needs bf16, fp16 or fp8 compute, not {precision}.",
        "zh-hans": "混合精度需要以 bf16、fp16 或 fp8 计算，不能是 {precision}。",
    },
    MessageCode.INPUT_MIXED_PRECISION_INFERENCE: {
        "en": "Mixed precision is a training setting; leave it out for inference.",
        "zh-hans": "混合精度是训练设置；推理时请不要填写。",
    },
    MessageCode.INPUT_LORA_SETTINGS: {
        "en": "LoRA settings need method lora or qlora.",
        "zh-hans": "LoRA 设置需要 lora 或 qlora 方法。",
    },
    MessageCode.INPUT_DOUBLE_QUANT: {
        "en": "Double quantisation is a QLoRA setting; it needs method qlora.",
        "zh-hans": "双重量化是 QLoRA 设置；需要 qlora 方法。",
    },
    MessageCode.INPUT_ACCUMULATION_INFERENCE: {
        "en": "Gradient accumulation is a training setting.",
        "zh-hans": "梯度累积是训练设置。",
    },
    MessageCode.INPUT_INFERENCE_FIELDS: {
        "en": "{field_context_len} and {field_concurrency} describe inference; use {field_seq_len} and {field_batch_size} for training.",
        "zh-hans": "{field_context_len} 和 {field_concurrency} 用于推理；训练请用 {field_seq_len} 和 {field_batch_size}。",
    },
    MessageCode.INPUT_NEEDS_TRANSFORMER: {
        "en": "{method} needs a transformer; {model} is a {kind}.",
        "zh-hans": "{method} 需要 Transformer 模型；{model} 是 {kind}。",
    },
    MessageCode.INPUT_GPU_COUNT_MULTIPLE: {
        "en": "Must be a multiple of {field_tensor_parallel} x {field_pipeline_parallel} ({model_parallel}).",
        "zh-hans": "必须是 {field_tensor_parallel} x {field_pipeline_parallel}（{model_parallel}）的整数倍。",
    },
    MessageCode.INPUT_TP_HEADS: {
        "en": "Must divide the {heads} attention heads of {model}.",
        "zh-hans": "必须能整除 {model} 的 {heads} 个注意力头。",
    },
    # The estimator's notes.
    MessageCode.NOTE_SHARDING_CHOSEN: {
        "en": "sharding: {sharding} chosen, the least-sharded strategy that fits {gpu_count} x {gpu}",
        "zh-hans": "分片：选用 {sharding}，即能放进 {gpu_count} x {gpu} 的分片最少的策略",
    },
    MessageCode.RUN_OVER_A_YEAR: {
        "en": "RUN OVER A YEAR: this plan runs {years:,.1f} years; check the tokens asked for, or allow more GPUs (max_gpus, allow_multi_node).",
        "zh-hans": "运行超过一年：此方案需运行 {years:,.1f} 年；请检查所填的 token 数，或允许更多 GPU（max_gpus、allow_multi_node）。",
    },
    MessageCode.NOTE_SERVING_REPLICAS: {
        "en": "serving: {gpu_count} GPUs as {replicas} replicas of tensor parallel {tp} (the largest degree the model's attention and KV heads split into that divides the GPU count), {sequences} sequences each",
        "zh-hans": "推理：{gpu_count} 块 GPU 组成 {replicas} 个张量并行度为 {tp} 的副本（能整除 GPU 数、且模型注意力头和 KV 头可均分的最大并行度），每个副本 {sequences} 条序列",
    },
    MessageCode.NOTE_SHARDING_ONE_RANK: {
        "en": "sharding: {sharding} on a single data-parallel rank shards nothing",
        "zh-hans": "分片：只有一个数据并行副本时，{sharding} 什么也分不了",
    },
    MessageCode.NOTE_TRAINING_FLOPS: {
        "en": "training FLOPs: {flops:sci} = {tokens:sci} x {per_token:sci} per token; give a GPU for time",
        "zh-hans": "训练 FLOPs：{flops:sci} = {tokens:sci} x 每 token {per_token:sci}；给出 GPU 才能估算时间",
    },
    MessageCode.NOTE_TRAINING_FLOPS_RECOMPUTE: {
        "en": "training FLOPs: {flops:sci} = {tokens:sci} x {per_token:sci} per token (incl. {recompute:sci} recomputation); give a GPU for time",
        "zh-hans": "训练 FLOPs：{flops:sci} = {tokens:sci} x 每 token {per_token:sci}（含重计算 {recompute:sci}）；给出 GPU 才能估算时间",
    },
    # ``headroom`` is the margin the fit requires of the estimate; ``free`` (derived from
    # memory_gib and capacity_gib, see message_render) is what it actually leaves.
    MessageCode.NOTE_FITS: {
        "en": "fit: {memory_gib:.1f} GiB per GPU fits {capacity_gib:g} GiB, leaving {free:.0%} free (at least {headroom:.0%} must stay free); {need}",
        "zh-hans": "显存：每块 GPU {memory_gib:.1f} GiB，放得进 {capacity_gib:g} GiB，剩余 {free:.0%}（至少须留出 {headroom:.0%}）；{need}",
    },
    MessageCode.NOTE_DOES_NOT_FIT: {
        "en": "fit: {memory_gib:.1f} GiB per GPU does not fit {capacity_gib:g} GiB with the required {headroom:.0%} left free; {need}",
        "zh-hans": "显存：每块 GPU {memory_gib:.1f} GiB，放进 {capacity_gib:g} GiB 后留不出所要求的 {headroom:.0%} 余量；{need}",
    },
    MessageCode.NOTE_GPUS_NEEDED: {
        "en": "at least {count} GPU(s) needed",
        "zh-hans": "至少需要 {count} 块 GPU",
    },
    MessageCode.NOTE_NO_COUNT_FITS: {
        "en": "no GPU count up to {max_gpus} fits",
        "zh-hans": "不超过 {max_gpus} 块的任何 GPU 数量都放不下",
    },
    MessageCode.NOTE_CHECKPOINTING_CUTS: {
        "en": "advice: activations take {activations_gib:.1f} GiB per GPU; gradient_checkpointing=full cuts them to {full_gib:.1f} GiB",
        "zh-hans": "建议：激活每块 GPU 占 {activations_gib:.1f} GiB；gradient_checkpointing=full 可降到 {full_gib:.1f} GiB",
    },
    MessageCode.NOTE_RANGE: {
        "en": "range: memory {memory_low:.1f}-{memory_high:.1f} GiB per GPU, the estimate x {low:.2f}-{high:.2f} ({basis}, {rows} calibration rows)",
        "zh-hans": "区间：每块 GPU 显存 {memory_low:.1f}-{memory_high:.1f} GiB，即估算值 x {low:.2f}-{high:.2f}（{basis}，{rows} 条校准数据）",
    },
    MessageCode.NOTE_FIT_ON_HIGH: {
        "en": "fit decided on the high end of the range: {high_gib:.1f} GiB must leave {headroom:.0%} of {capacity_gib:g} GiB free (fit_on=point decides on the estimate)",
        "zh-hans": "按区间上限判断能否放下：{high_gib:.1f} GiB 须在 {capacity_gib:g} GiB 中留出 {headroom:.0%} 余量（fit_on=point 则按估算值判断）",
    },
}


@dataclass(frozen=True)
class Message:
    """A coded sentence: ``code`` (a MessageCode or RejectionCode) and the figures it names."""

    code: str
    params: Mapping[str, Any] = field(default_factory=dict)

    @property
    def text(self) -> str:
        """The English sentence (what the API's plain string lists carry by default)."""
        return message_render(self.code, self.params, DEFAULT_LANGUAGE)

    def as_dict(self) -> dict[str, Any]:
        """Code and params only: what the answer cache keeps (text is rendered per request)."""
        return {"code": str(self.code), "params": _plain(self.params)}


def _plain(params: Mapping[str, Any]) -> dict[str, Any]:
    return {
        key: value.as_dict() if isinstance(value, Message) else value
        for key, value in params.items()
    }


def language_of(value: str | None) -> str | None:
    """The message language for a language tag (``zh``, ``zh-CN``, ``zh-Hans``, ``en-GB``...),
    or None when there is none for it."""
    if not value:
        return None
    tag = value.strip().lower().replace("_", "-")
    if tag.startswith("zh"):
        return "zh-hans" if tag in ("zh", "zh-hans", "zh-cn", "zh-sg") else None
    if tag == "en" or tag.startswith("en-"):
        return "en"
    return None


# What a mainland-China region asks of a renter, for a provider with no compliance notes.
MAINLAND_CHINA_RULES = {
    "en": "Real-name verification is required, and serving a website needs ICP filing.",
    "zh-hans": "需要实名认证，对外提供网站服务需要 ICP 备案。",
}

FIELD_PREFIX = "field_"  # template fields naming a request field: {field_params_b}


class _Formatter(string.Formatter):
    """str.format plus three specs: ``sci``, a count without e-notation (sizing.numbers.large),
    ``bound``, a limit as people write it (4096; 1,048,576; 0.5), never in e-notation, and
    ``hours``, a run length to 0.1 h that a run of minutes does not read as 0.0 (0.032)."""

    def format_field(self, value: Any, format_spec: str) -> Any:
        if format_spec == "sci":
            return large(float(value))
        if format_spec == "bound":
            return _bound(value)
        if format_spec == "hours":
            return _hours(value)
        return super().format_field(value, format_spec)


def _hours(value: Any) -> str:
    """Hours to one decimal (1,234.5); under 0.05 h to two significant digits (0.032), so a
    short run is never shown as 0.0 h; under 0.0001 h as <0.0001."""
    number = float(value)
    if number >= 0.05 or number <= 0:
        return f"{number:,.1f}"
    if number < 0.0001:
        return "<0.0001"
    places = 1 - math.floor(math.log10(number))
    return f"{number:.{places}f}"


def _bound(value: Any) -> str:
    """A whole number, with thousands separators from 10,000 (4096; 1,048,576); a fraction
    without e-notation (0.001)."""
    number = float(value)
    if number.is_integer():
        return f"{int(number):,}" if abs(number) >= 10_000 else str(int(number))
    return f"{number:,.6f}".rstrip("0").rstrip(".")


_FORMATTER = _Formatter()
_OWN_SPECS = frozenset({"sci", "bound", "hours"})


@lru_cache(maxsize=1024)
def _format_map_will_do(template: str) -> bool:
    """Whether ``template`` can be rendered by ``str.format_map``: none of its fields takes one
    of _Formatter's own specs, or a spec made of other fields (which could name one). The two
    then give the same text (both format a field with ``format(value, spec)``), and format_map
    does it in C: a request renders a hundred messages or more, and _Formatter's vformat is
    Python."""
    return not any(
        spec in _OWN_SPECS or "{" in spec
        for _, name, spec, _ in _FORMATTER.parse(template)
        if name is not None and spec
    )


def message_render(
    code: str, params: Mapping[str, Any] | None, lang: str = DEFAULT_LANGUAGE
) -> str:
    """The sentence for ``code`` with ``params`` in ``lang`` (``en`` or ``zh-hans``; anything
    else falls back to English). Unknown codes render as the code itself."""
    templates = TEMPLATES.get(code)
    if templates is None:
        return str(code)
    lang = lang if lang in templates else DEFAULT_LANGUAGE
    values = dict(params or {})
    for key, value in list(values.items()):
        if isinstance(value, Message):
            values[key] = message_render(value.code, value.params, lang)
        elif isinstance(value, Mapping) and "code" in value:
            values[key] = message_render(value["code"], value.get("params"), lang)
    model = values.get("pricing_model")
    if model is not None:
        words = _PRICING_MODEL_WORDS.get(lang, {}).get(model)
        if words is None:
            words = str(model).replace("_", " ")
            title = "Spot" if model == PricingModel.SPOT else words.capitalize()
        else:
            title = words
        values.setdefault("pricing_model_words", words)
        values.setdefault("pricing_model_title", title)
    memory, capacity = values.get("memory_gib"), values.get("capacity_gib")
    if isinstance(memory, (int, float)) and isinstance(capacity, (int, float)) and capacity > 0:
        # The share of the GPU's memory the workload leaves free (the API's headroom_pct / 100).
        values.setdefault("free", 1 - memory / capacity)
    reason = values.get("reason")
    if reason is not None:
        values.setdefault("reason_text", message_render(reason, {}, lang))
    parts = [values.get(f"offer_{part}") for part in OFFER_PARTS]
    if lang != DEFAULT_LANGUAGE and all(parts):
        # "aws/p5.48xlarge in us-east-1 (spot)" in the reader's language, from its parts.
        provider, instance_type, region, model = (str(part) for part in parts)
        names: dict[str, str] = {str(k): v for k, v in _PRICING_MODEL_WORDS.get(lang, {}).items()}
        words = names.get(model, model)
        values["offer"] = OFFER_TEMPLATES[lang].format(
            provider=provider, instance_type=instance_type, region=region, pricing=words
        )
    notes = values.get("notes")
    if code == MessageCode.MAINLAND_CHINA and not notes:
        values["notes"] = MAINLAND_CHINA_RULES.get(lang, MAINLAND_CHINA_RULES[DEFAULT_LANGUAGE])
    elif notes and lang != DEFAULT_LANGUAGE:
        # A provider's compliance note is curated in English; web/provider_notes.py marks each
        # one for translation (locale/zh_Hans), and one without a translation stays English.
        with translation.override(lang):
            values["notes"] = translation.gettext(str(notes))
    for name in template_fields(templates[lang]):
        if name.startswith(FIELD_PREFIX):
            # A field of the request, by the name the caller knows it under: the API's own name
            # unless the caller (the plan page: its form's labels) passed a field_<name> param.
            values.setdefault(name, name.removeprefix(FIELD_PREFIX))
    template = templates[lang]
    if _format_map_will_do(template):
        return template.format_map(values).strip()
    return _FORMATTER.vformat(template, (), values).strip()


def message_dict(
    message: Message | Mapping[str, Any], lang: str = DEFAULT_LANGUAGE
) -> dict[str, Any]:
    """``{"code", "params", "text"}`` for the API, from a Message or its ``as_dict()``."""
    if isinstance(message, Message):
        message = message.as_dict()
    code, params = message["code"], message.get("params") or {}
    return {"code": code, "params": params, "text": message_render(code, params, lang)}


@lru_cache(maxsize=1024)
def template_fields(template: str) -> frozenset[str]:
    """The field names a template uses (for the test that every language uses the same), once
    per template: every rendering reads them."""
    return frozenset(name for _, name, _, _ in string.Formatter().parse(template) if name)


# --- planfix: inter-node fabrics, instances without one, pricing models not asked for --------
TEMPLATES.update(
    {
        RejectionCode.NO_INTER_NODE_FABRIC: {
            "en": "Needs more than one node, but the instance has no inter-node fabric",
            "zh-hans": "需要多于一个节点，但该实例没有节点间互联网络",
        },
        MessageCode.NODES_JOINED_RDMA_FABRIC: {
            "en": "Nodes joined by {interconnect} ({network_gbps:g} Gbit/s as the fabric is rated; the instance's network figure is not published; RDMA)",
            "zh-hans": "节点之间通过 {interconnect} 互联（按该网络的额定 {network_gbps:g} Gbit/s；实例的网络带宽未公布；RDMA）",
        },
        MessageCode.NODES_JOINED_RDMA_UNPUBLISHED: {
            "en": "Nodes joined by {interconnect} (RDMA; bandwidth not published)",
            "zh-hans": "节点之间通过 {interconnect} 互联（RDMA；带宽未公布）",
        },
        MessageCode.MULTI_NODE_WITHOUT_RDMA_UNPUBLISHED: {
            "en": "MULTI-NODE WITHOUT RDMA: {nodes} nodes over {network} (bandwidth not published); efficiency falls off a cliff. Prefer InfiniBand/RoCE/EFA >= {min_gbps:g} Gbit/s.",
            "zh-hans": "多节点但没有 RDMA：{nodes} 个节点经 {network} 互联（带宽未公布），效率会断崖式下降。请选用 >= {min_gbps:g} Gbit/s 的 InfiniBand/RoCE/EFA。",
        },
        MessageCode.MULTI_NODE_PLAIN_UNPUBLISHED: {
            "en": "MULTI-NODE WITHOUT RDMA: {nodes} nodes over plain networking (bandwidth not published); efficiency falls off a cliff. Prefer InfiniBand/RoCE/EFA >= {min_gbps:g} Gbit/s.",
            "zh-hans": "多节点但没有 RDMA：{nodes} 个节点经普通网络互联（带宽未公布），效率会断崖式下降。请选用 >= {min_gbps:g} Gbit/s 的 InfiniBand/RoCE/EFA。",
        },
        MessageCode.MULTI_NODE_RDMA_SLOW: {
            "en": "SLOW INTER-NODE RDMA: {nodes} nodes over {network} at {network_gbps:g} Gbit/s, under the {min_gbps:g} Gbit/s multi-node training wants; expect poor scaling.",
            "zh-hans": "节点间 RDMA 偏慢：{nodes} 个节点经 {network} 互联，仅 {network_gbps:g} Gbit/s，低于多节点训练所需的 {min_gbps:g} Gbit/s；扩展效率会很差。",
        },
        MessageCode.MULTI_NODE_NEEDS_FABRIC: {
            "en": "{count} offer(s) would need {nodes} or more nodes, but these instances have no inter-node fabric recorded and run on one node only: {instance_types}. Look for instances with InfiniBand/RoCE/EFA between nodes, or make the job smaller.",
            "zh-hans": "{count} 个报价需要 {nodes} 个或更多节点，但以下实例没有记录节点间互联网络，只能单节点运行：{instance_types}。请选用节点间有 InfiniBand/RoCE/EFA 的实例，或缩小任务规模。",
        },
        MessageCode.EXAMPLE_NO_FABRIC: {
            "en": "{offer}: needs {nodes} nodes ({total} GPUs at {memory_gib:.1f} GiB each), but the instance has no inter-node fabric",
            "zh-hans": "{offer}：需要 {nodes} 个节点（{total} 块 GPU，每块 {memory_gib:.1f} GiB），但该实例没有节点间互联网络",
        },
        MessageCode.NO_PRICE_IN_PRICING: {
            "en": 'no current price for {target} under {asked}; it is sold under {sold_as}: ask for it with constraints.pricing (e.g. "pricing": ["{first}"])',
            "zh-hans": '{target} 在 {asked} 下没有当前价格；它以 {sold_as} 方式出售：请在 constraints.pricing 中指定（例如 "pricing": ["{first}"]）',
        },
    }
)


# --- sizingfix: a framework's GPU limit for quantised training (sizing/frameworks.py) --------
TEMPLATES.update(
    {
        RejectionCode.FRAMEWORK_GPU_LIMIT: {
            "en": "The framework does not train a quantised (QLoRA) model on this many GPUs",
            "zh-hans": "该框架不支持在这么多块 GPU 上进行量化（QLoRA）训练",
        },
        MessageCode.EXAMPLE_FRAMEWORK_GPU_LIMIT: {
            "en": "{offer}: {gpu_count:g} GPUs; {framework} trains QLoRA on at most {max_gpus}",
            "zh-hans": "{offer}：{gpu_count:g} 块 GPU；{framework} 的 QLoRA 训练最多只能用 {max_gpus} 块",
        },
        MessageCode.NODES_JOINED_RDMA_PORT: {
            "en": "Nodes joined by {interconnect} (RDMA, {port_gbps:g} Gbit/s per port; the ports per node and the instance's network figure are not published)",
            "zh-hans": "节点之间通过 {interconnect} 互联（RDMA，每个端口 {port_gbps:g} Gbit/s；每节点端口数和实例的网络带宽均未公布）",
        },
        MessageCode.NODES_JOINED_RDMA_FRONT_END: {
            "en": "Nodes joined by {interconnect} (RDMA, {port_gbps:g} Gbit/s per port; the instance's published {network_gbps:g} Gbit/s is under one such port, so it is its front-end network's, and the ports per node are not published)",
            "zh-hans": "节点之间通过 {interconnect} 互联（RDMA，每个端口 {port_gbps:g} Gbit/s；实例公布的 {network_gbps:g} Gbit/s 低于一个端口，应为其前端网络的带宽；每节点端口数未公布）",
        },
        MessageCode.NOTE_FRAMEWORK_GPU_LIMIT: {
            "en": "{framework} refuses quantised (QLoRA) training on more than {max_gpus} GPU(s); this estimate for {gpu_count} GPUs needs another framework (hf with PEFT and FSDP, or torchtune).",
            "zh-hans": "{framework} 不支持在超过 {max_gpus} 块 GPU 上进行量化（QLoRA）训练；此 {gpu_count} 块 GPU 的估算需改用其他框架（hf 配合 PEFT 与 FSDP，或 torchtune）。",
        },
        MessageCode.INTER_NODE_UNTIMED: {
            "en": "The bandwidth between nodes is not known, so the time leaves the communication between the {nodes} nodes out: the run may take longer than estimated.",
            "zh-hans": "节点间带宽未知，因此估算时间未计入 {nodes} 个节点之间的通信：实际运行可能比估算更久。",
        },
        MessageCode.FRAMEWORK_GPU_LIMIT_ADVICE: {
            "en": "{framework} refuses quantised (QLoRA) training on more than {max_gpus} GPU(s), so {count} offer(s) with more were left out. Run it on {max_gpus} GPU(s), or for QLoRA across GPUs use framework hf (PEFT with FSDP) or torchtune (lora_finetune_distributed).",
            "zh-hans": "{framework} 不支持在超过 {max_gpus} 块 GPU 上进行量化（QLoRA）训练，因此排除了 {count} 个 GPU 更多的报价。请在 {max_gpus} 块 GPU 上运行；若要多卡 QLoRA，请改用 hf 框架（PEFT + FSDP）或 torchtune（lora_finetune_distributed）。",
        },
    }
)


# --- inputfix: contexts past the model's limit, tensor parallel over KV heads, config.json
# combinations that cannot be (sizing/workload.py, sizing/specs.py) ---------------------------
TEMPLATES.update(
    {
        MessageCode.INPUT_CONTEXT_OVER_MAX: {
            "en": "Must be at most {max_position:bound}, the longest context {model} supports.",
            "zh-hans": "不能超过 {max_position:bound}，这是 {model} 支持的最长上下文。",
        },
        MessageCode.INPUT_CONTEXT_OVER_MAX_ALTERNATIVE: {
            "en": "Must be at most {max_position:bound}, the longest context {model} supports; presets of its family that support {asked:bound}: {alternatives}.",
            "zh-hans": "不能超过 {max_position:bound}，这是 {model} 支持的最长上下文；同系列中支持 {asked:bound} 的预设：{alternatives}。",
        },
        MessageCode.INPUT_CONTEXT_OVER_CONFIG: {
            "en": "Must be at most {max_position:bound}, the longest context the config.json given supports ({basis}).",
            "zh-hans": "不能超过 {max_position:bound}，这是所给 config.json 支持的最长上下文（{basis}）。",
        },
        MessageCode.INPUT_TP_KV_HEADS: {
            "en": "Must divide the {kv_heads} KV heads of {model} or be a multiple of them: tensor parallelism gives each GPU whole KV heads, split or copied.",
            "zh-hans": "必须能整除 {model} 的 {kv_heads} 个 KV 头，或是它的整数倍：张量并行给每块 GPU 完整的 KV 头（切分或复制）。",
        },
        MessageCode.INPUT_CONFIG_ACTIVE_EXPERTS: {
            "en": "num_experts_per_tok ({active}) must not exceed the {experts} experts ({key}).",
            "zh-hans": "num_experts_per_tok（{active}）不能超过专家数 {experts}（{key}）。",
        },
        MessageCode.INPUT_CONFIG_KV_HEADS: {
            "en": "num_key_value_heads ({kv_heads}) must divide num_attention_heads ({heads}).",
            "zh-hans": "num_key_value_heads（{kv_heads}）必须能整除 num_attention_heads（{heads}）。",
        },
        MessageCode.INPUT_CONFIG_DENSE_LAYERS: {
            "en": "first_k_dense_replace ({dense}) must not exceed num_hidden_layers ({layers}).",
            "zh-hans": "first_k_dense_replace（{dense}）不能超过 num_hidden_layers（{layers}）。",
        },
        MessageCode.INPUT_CONFIG_LATENT_KEYS: {
            "en": "kv_lora_rank (latent attention) needs {keys} as well.",
            "zh-hans": "给出 kv_lora_rank（潜在注意力）时还需要 {keys}。",
        },
    }
)
