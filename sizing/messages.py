"""Coded messages: every reason, warning, advice item and rejection the planner says, as a stable
code with parameters, rendered in English or Simplified Chinese. Pure: no Django.

The API returns ``{"code", "params", "text"}`` beside each English sentence it always had; pages
call ``message_render``. A test checks that every code has a template in every language and that
the templates of one code use the same parameters.
"""

from __future__ import annotations

import string
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from catalog.pricing import PricingModel

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
    },
}


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
        "en": "About {hours:,.1f} h on {gpu_count:g} GPU(s) ({nodes} node(s))",
        "zh-hans": "在 {gpu_count:g} 块 GPU（{nodes} 个节点）上约 {hours:,.1f} 小时",
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
    MessageCode.MAINLAND_CHINA: {
        "en": "Mainland China region: real-name verification is required, and serving a website needs ICP filing. {notes}",
        "zh-hans": "中国大陆地域：需要实名认证，对外提供网站服务需要 ICP 备案。{notes}",
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
        "en": "{offer} x{nodes} node(s): ${usd_per_hour:,.2f}/h, {hours:,.1f} h, ${total_usd:,.0f}",
        "zh-hans": "{offer} x{nodes} 个节点：${usd_per_hour:,.2f}/小时，{hours:,.1f} 小时，共 ${total_usd:,.0f}",
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
    reason = values.get("reason")
    if reason is not None:
        values.setdefault("reason_text", message_render(reason, {}, lang))
    return templates[lang].format_map(values).strip()


def message_dict(
    message: Message | Mapping[str, Any], lang: str = DEFAULT_LANGUAGE
) -> dict[str, Any]:
    """``{"code", "params", "text"}`` for the API, from a Message or its ``as_dict()``."""
    if isinstance(message, Message):
        message = message.as_dict()
    code, params = message["code"], message.get("params") or {}
    return {"code": code, "params": params, "text": message_render(code, params, lang)}


def template_fields(template: str) -> set[str]:
    """The field names a template uses (for the test that every language uses the same)."""
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}
