"""The estimator against hand-worked figures, the seed guides' rules of thumb, and bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from sizing.compute import DECODE_BANDWIDTH_EFFICIENCY, DECODE_INT4_KERNEL_EFFICIENCY
from sizing.estimator import (
    BREAKDOWN_KEYS,
    GPUSpec,
    Topology,
    WorkloadError,
    choose_sharding,
    estimate,
    min_gpus,
    parse_workload,
)
from sizing.memory import GIB
from sizing.presets import load_presets

PRESETS = load_presets()
ROOT = Path(__file__).resolve().parents[2]
with open(ROOT / "fixtures" / "gpus.yaml", encoding="utf-8") as _fh:
    GPUS = {g["slug"]: GPUSpec.from_mapping(g) for g in yaml.safe_load(_fh)}


def wl(**data):
    return parse_workload(data, PRESETS)


# ---- seed scenarios (shared/seeds: rules of thumb from the Chinese guides) -------------------


def test_7b_qlora_stays_under_10_gib_and_fits_a_16gb_t4():
    """Seed: QLoRA brings a 7B fine-tune under 10 GB, even onto a single T4."""
    w = wl(model="llama-2-7b", method="qlora", batch_size=1, seq_len=1024)
    e = estimate(w, gpu=GPUS["t4"])
    assert e.memory_per_gpu_gib < 10
    assert e.fits and e.min_gpus == 1
    # NF4 with fp32 block constants (BitsAndBytesConfig's default: no double quant), 0.5625 B;
    # embeddings, head and norms in fp32 (PEFT's prepare_model_for_kbit_training, the default
    # hf framework); one MLP matrix (4096 x 11008) dequantised to 16 bits while it is used.
    unquantised = 2 * 32000 * 4096 + 65 * 4096
    quant = PRESETS["llama-2-7b"].params - unquantised
    expected = (quant * 0.5625 + unquantised * 4 + 4096 * 11008 * 2) / 2**30
    assert e.breakdown["weights"] == pytest.approx(expected, abs=0.05)
    # torchtune (torchao NF4, double-quantised) keeps them in bf16: against hf with double
    # quantisation too, 2 bytes less for each.
    hf_dq = estimate(
        wl(model="llama-2-7b", method="qlora", batch_size=1, seq_len=1024, double_quant=True),
        gpu=GPUS["t4"],
    )
    torchtune = estimate(
        wl(model="llama-2-7b", method="qlora", batch_size=1, seq_len=1024, framework="torchtune"),
        gpu=GPUS["t4"],
    )
    assert hf_dq.breakdown["weights"] - torchtune.breakdown["weights"] == pytest.approx(
        unquantised * 2 / 2**30, rel=1e-3
    )


def test_llama3_8b_lora_fits_one_a100_40gb():
    """Seed: LoRA on Llama-3-8B needs only a single A100 40GB."""
    w = wl(model="llama-3-8b", method="lora", batch_size=1, seq_len=2048)
    assert min_gpus(w, GPUS["a100-sxm4-40gb"]) == 1


def test_70b_full_finetune_needs_at_least_eight_80gb_gpus_with_zero3():
    """Seed: 70B needs multi-GPU, 80 GB cards, total memory well above 500 GB."""
    w = wl(
        model="llama-2-70b", method="full", optimizer="adamw", sharding="zero3",
        gradient_checkpointing="full", batch_size=1, seq_len=2048,
    )  # fmt: skip
    need = min_gpus(w, GPUS["a100-sxm4-80gb"])
    assert need is not None and need >= 8
    e = estimate(w, gpu=GPUS["a100-sxm4-80gb"], gpu_count=need)
    assert e.total_memory_gib > 500
    assert e.assumptions["mixed_precision"] is True


def test_16bit_weights_take_two_bytes_per_parameter():
    """Seed: in FP16/BF16, weights in GB ~ parameters (billions) x 2."""
    e = estimate(wl(model="llama-2-7b", task="inference", context_len=16))
    assert e.breakdown["weights"] * GIB / 1e9 == pytest.approx(6.738 * 2, rel=0.001)


def test_full_adamw_training_is_18_bytes_per_parameter_before_activations():
    e = estimate(wl(model="llama-2-7b", method="full", batch_size=1, seq_len=1))
    states = e.breakdown["weights"] + e.breakdown["gradients"] + e.breakdown["optimizer"]
    assert states * GIB == pytest.approx(6.738e9 * 18, rel=0.001)
    pure = estimate(wl(model="llama-2-7b", method="full", mixed_precision=False, seq_len=1))
    pure_states = (
        pure.breakdown["weights"] + pure.breakdown["gradients"] + pure.breakdown["optimizer"]
    )
    assert pure_states * GIB == pytest.approx(6.738e9 * 8, rel=0.001)  # bf16 weights, grads, m, v


# ---- memory components ------------------------------------------------------------------------


def test_breakdown_has_exactly_the_contract_keys_and_sums_to_the_total():
    e = estimate(wl(model="mistral-7b", method="lora"), gpu=GPUS["a10g"])
    assert tuple(e.breakdown) == BREAKDOWN_KEYS
    assert sum(e.breakdown.values()) == pytest.approx(e.memory_per_gpu_gib, abs=0.01)


def test_kv_cache_counts_kv_heads_not_attention_heads():
    # Llama 3 8B: 32 layers x 2 x 8 KV heads x 128 x 2 B = 128 KiB per token -> 1 GiB at 8192.
    gqa = estimate(wl(model="llama-3-8b", task="inference", context_len=8192, concurrency=1))
    assert gqa.breakdown["kv_cache"] == pytest.approx(1.0, rel=1e-6)
    # Llama 2 7B has 32 KV heads: 4x as much (at 4096, its longest context: 2 GiB, not 0.5).
    mha = estimate(wl(model="llama-2-7b", task="inference", context_len=4096, concurrency=1))
    assert mha.breakdown["kv_cache"] == pytest.approx(2.0, rel=1e-6)
    busy = estimate(wl(model="llama-3-8b", task="inference", context_len=8192, concurrency=16))
    assert busy.breakdown["kv_cache"] == pytest.approx(16.0, rel=1e-6)


def test_latent_attention_caches_the_compressed_vector():
    e = estimate(wl(model="deepseek-v3", task="inference", context_len=4096, concurrency=1))
    # 61 layers x (512 + 64) x 2 B x 4096 tokens
    assert e.breakdown["kv_cache"] * GIB == pytest.approx(61 * 576 * 2 * 4096, rel=2e-3)


def test_activation_formula_reduces_to_korthikanti_for_gpt():
    """GPT-2 block with eager attention and dropout: 34 s b h + 5 a s^2 b bytes per layer."""
    from sizing.memory import activation_bytes_per_token

    w = wl(model="gpt2", method="full", mixed_precision=False, attention="eager", precision="bf16")
    linear, per_ctx = activation_bytes_per_token(w, moe_layer=False)
    assert linear == 34 * 768
    assert per_ctx == 5 * 12


def test_large_vocabulary_logits_dominate_at_long_sequences():
    w = wl(model="llama-3.1-8b", method="lora", seq_len=32768, gradient_checkpointing="full")
    e = estimate(w)
    loss_head = 32768 * 128256 * 12 / GIB
    layer_inputs = 32 * 32768 * 4096 * 2 / GIB
    assert loss_head > 0.5 * e.breakdown["activations"]
    assert loss_head > 5 * layer_inputs
    assert any("loss head" in n for n in e.notes)


def test_gradient_checkpointing_cuts_activations():
    kwargs = dict(model="llama-3-8b", method="full", seq_len=4096, batch_size=2)
    none = estimate(wl(gradient_checkpointing="none", **kwargs)).breakdown["activations"]
    full = estimate(wl(gradient_checkpointing="full", **kwargs)).breakdown["activations"]
    assert full < none / 2


def test_sharding_divides_the_right_terms():
    base = dict(model="llama-2-13b", method="full", gradient_checkpointing="full")
    one = estimate(wl(sharding="none", **base), gpu_count=8).breakdown
    z1 = estimate(wl(sharding="zero1", **base), gpu_count=8).breakdown
    z2 = estimate(wl(sharding="zero2", **base), gpu_count=8).breakdown
    z3 = estimate(wl(sharding="zero3", **base), gpu_count=8).breakdown
    assert z1["optimizer"] == pytest.approx(one["optimizer"] / 8, rel=1e-3)
    assert z1["gradients"] == one["gradients"]
    assert z2["gradients"] == pytest.approx(one["gradients"] / 8, rel=1e-3)
    assert z3["weights"] < one["weights"] / 4
    fsdp = estimate(wl(sharding="fsdp", **base), gpu_count=8).breakdown
    assert fsdp == z3


def test_moe_counts_all_experts_for_memory_and_active_ones_for_flops():
    moe = wl(model="mixtral-8x7b", method="full", tokens=1e9, seq_len=2048)
    dense = wl(params_b=46.7, method="full", tokens=1e9, seq_len=2048)
    em, ed = estimate(moe), estimate(dense)
    assert em.breakdown["weights"] == pytest.approx(ed.breakdown["weights"], rel=0.01)
    assert em.training_flops < ed.training_flops / 2.5
    # 6 x active params per token dominates: 6 x 12.9B x 1e9 ~ 7.7e19.
    assert em.training_flops == pytest.approx(6 * 12.9e9 * 1e9, rel=0.15)


def test_qlora_quantises_only_block_linears():
    e = estimate(wl(model="llama-3-8b", method="qlora", framework="torchtune"))
    arch = PRESETS["llama-3-8b"]
    embeddings = 2 * 128256 * 4096  # embedding + untied head stay 16-bit
    block_linear = arch.params - embeddings - 65 * 4096  # minus norms
    expected = block_linear * (0.5 + 0.127 / 8) + (embeddings + 65 * 4096) * 2
    dequantised = 4096 * 14336 * 2  # the largest block matrix, in 16 bits while it is used
    assert e.breakdown["weights"] * GIB == pytest.approx(expected + dequantised, rel=0.001)


def test_fsdp_shards_the_adapters_and_gathers_qlora_layers_in_4_bit():
    """Adapters are trainable parameters to FSDP (split over the ranks with their gradients and
    Adam states); a QLoRA layer is all-gathered as stored, NF4, not as 16-bit weights."""
    one = estimate(wl(model="llama-3-70b", method="lora", sharding="none"), gpu_count=1)
    eight = estimate(wl(model="llama-3-70b", method="lora", sharding="fsdp"), gpu_count=8)
    assert eight.breakdown["adapters"] == pytest.approx(one.breakdown["adapters"] / 8, rel=1e-6)
    layer = PRESETS["llama-3-70b"].counts.layer_max
    lora = estimate(wl(model="llama-3-70b", method="lora", sharding="fsdp"), gpu_count=8)
    qlora = estimate(wl(model="llama-3-70b", method="qlora", sharding="fsdp"), gpu_count=8)
    gathered_16 = 2 * layer * 2 / GIB
    assert any(f"+ {gathered_16:.2f} GiB for the gathered layer" in n for n in lora.notes)
    assert not any(f"+ {gathered_16:.2f} GiB for the gathered layer" in n for n in qlora.notes)
    assert any("gathered layer and the prefetched next one (NF4)" in n for n in qlora.notes)


def test_sharded_qlora_keeps_the_unquantised_parameters_in_16_bit():
    """TRL skips prepare_model_for_kbit_training for QLoRA under FSDP / ZeRO-3, so the
    embeddings, head and norms stay bf16 there, as in torchtune; on one GPU hf casts them to
    fp32 (2 more bytes each)."""
    from sizing.memory import quantizable_params

    def weights(framework: str, sharding: str, n: int) -> float:
        w = wl(
            model="llama-2-70b",
            method="qlora",
            sharding=sharding,
            framework=framework,
            double_quant=True,
        )
        return estimate(w, gpu_count=n).breakdown["weights"] * GIB

    rest = PRESETS["llama-2-70b"].params - quantizable_params(PRESETS["llama-2-70b"])
    assert weights("hf", "none", 1) - weights("torchtune", "none", 1) == pytest.approx(rest * 2)
    assert weights("hf", "fsdp", 2) == pytest.approx(weights("torchtune", "fsdp", 2))
    assert weights("hf", "zero3", 2) == pytest.approx(weights("torchtune", "zero3", 2))


def test_the_loss_head_and_the_layers_backward_buffers_do_not_add_up():
    """The logits and their gradient are freed once backward has passed the output projection,
    before the first layer is recomputed: the peak holds the larger of the two."""
    from sizing.memory import BACKWARD_TRANSIENT_LAYERS, _logit_bytes, activation_bytes_per_token

    w = wl(
        model="llama-3.1-8b",
        method="full",
        batch_size=2,
        seq_len=2048,
        gradient_checkpointing="full",
        framework="torchtune",
    )
    e = estimate(w, gpu_count=1)
    lin, _ = activation_bytes_per_token(w, moe_layer=False)
    layer = 2 * 2048 * lin
    kept = 32 * 2 * 2048 * 4096 * 2
    logits = _logit_bytes(w)
    backward = (1 + BACKWARD_TRANSIENT_LAYERS) * layer
    assert e.breakdown["activations"] * GIB == pytest.approx(kept + max(logits, backward))
    assert e.breakdown["activations"] * GIB < kept + logits + backward


def test_loss_head_bytes_follow_the_framework_and_compile():
    """torchtune's chunked loss compiled: bf16 logits + one chunk's bf16 gradient (2 + 2/8 B);
    eager: + one chunk's fp32 upcast, softmax and gradient (2 + 12/8); litgpt's chunked
    cross-entropy keeps each chunk's bf16 log-softmax (2 + 2), fp32 under autocast (2 + 4)."""
    from sizing.memory import loss_bytes_per_logit

    base = {"model": "llama-3.1-8b", "method": "lora", "loss": "chunked"}
    assert loss_bytes_per_logit(wl(**base, framework="torchtune", compile=True)) == 2.25
    assert loss_bytes_per_logit(wl(**base, framework="torchtune")) == 3.5
    assert loss_bytes_per_logit(wl(**base, framework="litgpt", mixed_precision=False)) == 4.0
    assert loss_bytes_per_logit(wl(**base, framework="litgpt", mixed_precision=True)) == 6.0
    assert loss_bytes_per_logit(wl(model="llama-3.1-8b", framework="hf")) == 12.0


def test_fsdp_with_pipeline_stages_keeps_the_stage_unsharded():
    """FSDP2 under torch pipelining (torchtitan) keeps a stage's parameters gathered between
    micro-batches and accumulates its gradients unsharded (fp32) until the last one."""
    common = {"model": "llama-3-70b", "sharding": "fsdp", "tensor_parallel": 8}
    flat = estimate(wl(**common), gpu_count=64)
    staged = estimate(wl(**common, pipeline_parallel=4), gpu_count=64)
    params = PRESETS["llama-3-70b"].params
    stage = params / (8 * 4)
    assert staged.breakdown["gradients"] * GIB == pytest.approx(stage * 4, rel=1e-6)
    assert staged.breakdown["weights"] * GIB == pytest.approx(
        stage * 2 / 2 + stage * 2, rel=1e-6
    )  # its shard (dp 2) plus the whole stage held unsharded
    assert flat.breakdown["gradients"] * GIB == pytest.approx(params / 8 * 4 / 8, rel=1e-6)


def test_lora_adapters_are_rank_times_fan_in_plus_fan_out():
    from sizing.memory import lora_params

    arch = PRESETS["llama-2-7b"]
    assert lora_params(arch, 8, "attention") == 32 * 4 * 8 * (4096 + 4096)
    mlp = 3 * 8 * (4096 + 11008)
    assert lora_params(arch, 8, "all_linear") == 32 * (4 * 8 * 8192 + mlp)


# ---- compute and time ---------------------------------------------------------------------------


def test_training_flops_follow_6nd_plus_attention():
    w = wl(model="llama-2-7b", task="pretrain", tokens=2e12, seq_len=4096)
    e = estimate(w)
    arch = PRESETS["llama-2-7b"]
    n_mm = arch.params - 32000 * 4096  # the input embedding is looked up, not multiplied
    attention = 12 * 32 * 4096 * 4096
    assert e.training_flops == pytest.approx((6 * n_mm + attention) * 2e12, rel=1e-3)
    ckpt = estimate(
        wl(
            model="llama-2-7b",
            task="pretrain",
            tokens=2e12,
            seq_len=4096,
            gradient_checkpointing="full",
        )
    )
    assert ckpt.training_flops > e.training_flops * 1.25


def test_llama2_7b_gpu_hours_are_within_20_percent_of_the_paper():
    """Llama 2 paper Table 2: 184,320 A100-80GB GPU-hours for 2T tokens."""
    w = wl(
        model="llama-2-7b", task="pretrain", tokens=2e12, seq_len=4096, sharding="fsdp",
        gradient_checkpointing="selective",
    )  # fmt: skip
    e = estimate(w, gpu=GPUS["a100-sxm4-80gb"], gpu_count=2048)
    assert e.gpu_hours == pytest.approx(184_320, rel=0.2)
    assert e.est_hours == pytest.approx(e.gpu_hours / 2048)
    assert 0.3 < e.mfu < 0.7


def test_time_fields_need_tokens_and_a_gpu():
    w = wl(model="llama-3-8b", method="lora")
    e = estimate(w, gpu=GPUS["h100-sxm"])
    assert e.tokens_per_second and e.gpu_hours is None and e.est_hours is None
    bare = estimate(wl(model="llama-3-8b", method="lora", tokens=1e8))
    assert bare.training_flops and bare.gpu_hours is None and bare.min_gpus is None


def test_newer_gpus_train_faster_but_at_lower_utilisation():
    w = wl(model="llama-3-8b", method="full", tokens=1e10, gradient_checkpointing="full")
    a100 = estimate(w, gpu=GPUS["a100-sxm4-80gb"], gpu_count=8)
    h100 = estimate(w, gpu=GPUS["h100-sxm"], gpu_count=8)
    assert h100.est_hours < a100.est_hours / 2
    assert h100.mfu < a100.mfu


def test_pcie_scales_worse_than_nvlink_and_no_rdma_falls_off_a_cliff():
    w = wl(
        model="llama-2-13b",
        method="full",
        sharding="zero3",
        gradient_checkpointing="full",
        tokens=1e10,
    )
    gpu = GPUS["a100-sxm4-80gb"]
    nvlink = estimate(
        w, gpu=gpu, gpu_count=8, topology=Topology(gpu_count=8, intra_node="nvswitch")
    )
    pcie = estimate(w, gpu=gpu, gpu_count=8, topology=Topology(gpu_count=8, intra_node="pcie"))
    assert pcie.tokens_per_second < nvlink.tokens_per_second * 0.8
    assert nvlink.tokens_per_second_total == pytest.approx(nvlink.tokens_per_second * 8)
    rdma = estimate(w, gpu=gpu, gpu_count=32, topology=Topology(gpu_count=32, inter_node_gbps=800))
    tcp = estimate(
        w,
        gpu=gpu,
        gpu_count=32,
        topology=Topology(gpu_count=32, inter_node_gbps=800, inter_node_rdma=False),
    )
    assert tcp.tokens_per_second < rdma.tokens_per_second * 0.5
    assert any("no RDMA" in n for n in tcp.notes)


def test_decode_is_bounded_by_memory_bandwidth():
    w = wl(model="llama-2-7b", task="inference", context_len=512, concurrency=1)
    e = estimate(w, gpu=GPUS["a100-sxm4-80gb"])
    ceiling = 2039e9 / (6.738e9 * 2)  # every token streams the weights once
    assert e.tokens_per_second < ceiling
    assert e.tokens_per_second > 0.5 * ceiling
    batched = estimate(
        wl(model="llama-2-7b", task="inference", context_len=512, concurrency=64),
        gpu=GPUS["a100-sxm4-80gb"],
    )
    assert batched.tokens_per_second > 20 * e.tokens_per_second


def test_4bit_decode_speed_follows_the_engines_kernel():
    """The engine's 4-bit kernel sets the bandwidth a decode step streams at (gpt-fast's
    tinygemm about half of ExLlamaV2's); an engine without a listed kernel gets the 4-bit
    figure, and 16-bit decode does not depend on the engine."""
    gpu = GPUS["rtx-4090"]

    def speed(framework: str, precision: str = "int4") -> float:
        w = wl(
            model="llama-2-7b",
            task="inference",
            precision=precision,
            context_len=256,
            concurrency=1,
            framework=framework,
        )
        return estimate(w, gpu=gpu).tokens_per_second

    assert speed("gpt_fast") < 0.7 * speed("exllamav2")
    assert speed("torchao") == speed("gpt_fast")
    assert speed("llama_cpp") < speed("exllamav2") < speed("mlc_llm")
    ratio = DECODE_BANDWIDTH_EFFICIENCY["int4"] / DECODE_INT4_KERNEL_EFFICIENCY["exllamav2"]
    assert speed("vllm") == pytest.approx(speed("exllamav2") * ratio, rel=0.01)
    assert speed("vllm", "bf16") == speed("exllamav2", "bf16") == speed("hf", "bf16")


def test_fp8_on_a_gpu_without_fp8_falls_back_with_a_note():
    e = estimate(
        wl(model="llama-3-8b", method="full", precision="fp8", tokens=1e9),
        gpu=GPUS["a100-sxm4-80gb"],
    )
    assert e.tokens_per_second
    assert any("no FP8" in n for n in e.notes)


# ---- GPU counts and sharding choice --------------------------------------------------------------


def test_choose_sharding_picks_the_least_sharded_strategy_that_fits():
    small = wl(model="llama-3.2-1b", method="full")
    assert choose_sharding(small, GPUS["h100-sxm"], 8) == "none"
    big = wl(model="llama-3-8b", method="full", gradient_checkpointing="full")
    chosen = choose_sharding(big, GPUS["a100-sxm4-40gb"], 8)
    assert chosen in ("zero1", "zero2", "zero3")
    e = estimate(big, gpu=GPUS["a100-sxm4-40gb"], gpu_count=8)
    assert e.sharding == chosen and e.fits


def test_min_gpus_for_inference_uses_tensor_parallel():
    w = wl(model="llama-3-70b", task="inference", context_len=4096, concurrency=8)
    need = min_gpus(w, GPUS["h100-sxm"])
    assert need in (2, 4)
    e = estimate(w, gpu=GPUS["h100-sxm"], gpu_count=need)
    assert e.fits and e.assumptions["tensor_parallel"] == need
    assert min_gpus(wl(model="llama-3.2-1b", task="inference"), GPUS["t4"]) == 1


def test_min_gpus_is_none_when_nothing_fits():
    w = wl(model="llama-3.1-405b", method="full", sharding="none")
    assert min_gpus(w, GPUS["h100-sxm"]) is None


def test_estimate_is_deterministic_and_reports_assumptions():
    w = wl(model="qwen2.5-7b", method="lora")
    a = estimate(w, gpu=GPUS["l40s"], gpu_count=2)
    b = estimate(w, gpu=GPUS["l40s"], gpu_count=2)
    assert a == b
    s = a.assumptions
    assert s["optimizer"] == "adamw" and s["mixed_precision"] is True
    assert s["lora_rank"] == 16 and s["lora_targets"] == "all_linear"
    assert s["gradient_checkpointing"] == "none" and s["gpu_count"] == 2
    assert s["architecture"]["name"] == "qwen2.5-7b"
    assert a.total_memory_gib == pytest.approx(a.memory_per_gpu_gib * 2, abs=0.01)


def test_notes_show_the_working_with_sources():
    e = estimate(
        wl(model="llama-3-8b", method="full", tokens=1e9), gpu=GPUS["h100-sxm"], gpu_count=8
    )
    text = "\n".join(e.notes)
    for fragment in ("Korthikanti", "ZeRO", "Kaplan", "HFU", "GPU-hours"):
        assert fragment in text
    quiet = estimate(wl(model="llama-3-8b", method="full"), gpu=GPUS["h100-sxm"], explain=False)
    assert quiet.notes == []


def test_non_transformer_presets_use_their_per_sample_figures():
    e = estimate(wl(model="resnet-50", method="full", batch_size=32, tokens=1e6), gpu=GPUS["t4"])
    assert e.breakdown["activations"] == pytest.approx(32 * 0.06 * 2 / 2, rel=0.01)
    assert e.training_flops == pytest.approx(3 * 8.18e9 * 1e6, rel=1e-6)
    unet = estimate(
        wl(model="sdxl-unet", method="full", gradient_checkpointing=True, tokens=1000),
        gpu=GPUS["a100-sxm4-80gb"],
    )
    assert unet.breakdown["activations"] == pytest.approx(6.0, rel=0.01)
    assert unet.gpu_hours is None  # no published FLOPs figure


# ---- validation ----------------------------------------------------------------------------------


def errors_of(**data) -> dict[str, list[str]]:
    with pytest.raises(WorkloadError) as exc:
        parse_workload(data, PRESETS)
    return exc.value.errors


def test_unknown_preset_lists_the_closest_names():
    errs = errors_of(model="lama-3-8b")
    assert "llama-3-8b" in errs["model"][0]


def test_contradictions_are_explained():
    assert (
        "pre-training"
        in errors_of(model="llama-3-8b", task="pretrain", method="qlora")["method"][0]
    )
    assert "int4" in errors_of(model="llama-3-8b", method="full", precision="int4")["precision"][0]
    assert (
        "int8" in errors_of(model="llama-3-8b", task="pretrain", precision="int8")["precision"][0]
    )
    assert (
        "inference" in errors_of(model="llama-3-8b", task="inference", method="lora")["method"][0]
    )
    assert "qlora" in errors_of(model="llama-3-8b", method="lora", precision="int4")["precision"][0]
    assert errors_of(model="llama-3-8b", method="full", lora_rank=8)["lora_rank"]
    assert errors_of(model="llama-3-8b", precision="fp32", mixed_precision=True)["mixed_precision"]
    assert errors_of(model="llama-3-8b", task="finetune", context_len=4096)["context_len"]
    assert errors_of(model="resnet-50", method="lora")["method"]


def test_every_bad_field_is_named_at_once():
    errs = errors_of(
        model="llama-3-8b", task="train", method="dora", precision="fp4", optimizer="lion",
        batch_size=0, seq_len=2_000_000, gradient_checkpointing="maybe", sharding="zero4",
        lora_targets="mlp", gpu_count=5000, tokens=-1, bogus=1,
    )  # fmt: skip
    assert set(errs) == {
        "task", "method", "precision", "optimizer", "batch_size", "seq_len",
        "gradient_checkpointing", "sharding", "lora_targets", "gpu_count", "tokens", "bogus",
    }  # fmt: skip


@pytest.mark.parametrize(
    "data, field",
    [
        ({}, "model"),
        ({"model": "llama-3-8b", "params_b": 8}, "params_b"),
        ({"params_b": 5000}, "params_b"),
        ({"params_b": "abc"}, "params_b"),
        ({"model": "llama-3-8b", "batch_size": True}, "batch_size"),
        ({"model": "llama-3-8b", "batch_size": 2.5}, "batch_size"),
        ({"model": "llama-3-8b", "lora_rank": 2048, "method": "lora"}, "lora_rank"),
        ({"model": "llama-3-8b", "gpu_count": 6, "tensor_parallel": 4}, "gpu_count"),
        ({"model": "llama-3-8b", "tensor_parallel": 3}, "tensor_parallel"),
        ({"model": "llama-3-8b", "gpu": "H100 SXM!"}, "gpu"),
        ({"model": "llama-3-8b", "mixed_precision": "sometimes"}, "mixed_precision"),
    ],
)
def test_bounds_and_types(data, field):
    assert field in errors_of(**data)


def test_strings_and_booleans_from_query_parameters_are_accepted():
    w = parse_workload(
        {"model": "Llama-3-8B", "batch_size": "4", "seq_len": "1024", "gradient_checkpointing": "true",
         "mixed_precision": "false", "tokens": "1e9", "gpu_count": "2"},
        PRESETS,
    )  # fmt: skip
    assert (w.model, w.batch_size, w.seq_len) == ("llama-3-8b", 4, 1024)
    assert w.gradient_checkpointing == "full" and w.mixed_precision is False
    assert w.tokens == 1e9 and w.gpu_count == 2
    assert (
        parse_workload(
            {"model": "gpt2", "gradient_checkpointing": False}, PRESETS
        ).gradient_checkpointing
        == "none"
    )


def test_defaults_are_filled_per_task_and_method():
    inf = wl(model="llama-3-8b", task="inference")
    assert (inf.method, inf.optimizer, inf.context_len, inf.concurrency) == (None, None, 4096, 1)
    q = wl(model="llama-3-8b", method="qlora", precision="int4")
    assert q.precision == "bf16" and q.gradient_checkpointing == "full"
    assert wl(model="vit-l-16").seq_len == 197
    assert wl(params_b=7).arch.family == "generic"
    assert wl(model="gpt2", sharding="auto").sharding is None


def test_the_input_description_names_every_workload_field_once():
    """sizing/inputs.py is the one list: parse_workload, the serializers, the form and the CLI
    all read it, so it must name exactly the Workload dataclass's inputs."""
    from dataclasses import fields

    from sizing import inputs
    from sizing.workload import Workload

    names = [f.name for f in inputs.WORKLOAD]
    assert len(names) == len(set(names))
    assert set(names) == {f.name for f in fields(Workload)} - {"arch"}


def test_one_headroom_setting_drives_estimator_and_planner():
    from sizing import estimator, inputs, planner

    assert inputs.HEADROOM.warn == estimator.DEFAULT_HEADROOM
    assert inputs.HEADROOM.fit == planner.FIT_HEADROOM
    assert 100 * inputs.HEADROOM.warn == planner.HEADROOM_WARN_PCT


def _mem(**fields):
    from sizing.estimator import estimate, parse_workload
    from sizing.presets import load_presets

    w = parse_workload({"model": "llama-3.1-8b", "batch_size": 2, **fields}, load_presets())
    return w, estimate(w, gpu=None, gpu_count=1)


def test_framework_sets_the_loss_default_and_an_explicit_field_wins():
    w, _ = _mem(framework="torchtune")
    assert w.loss == "chunked"
    w, _ = _mem(framework="torchtune", loss="standard")
    assert w.loss == "standard"
    assert _mem()[0].loss == "standard"  # hf


def test_chunked_and_fused_losses_shrink_only_the_loss_head():
    _, std = _mem()
    _, chunked = _mem(loss="chunked")
    _, fused = _mem(loss="fused")
    assert fused.breakdown["activations"] < chunked.breakdown["activations"]
    assert chunked.breakdown["activations"] < std.breakdown["activations"]
    assert chunked.breakdown["weights"] == std.breakdown["weights"]


def test_op_selective_checkpointing_sits_between_none_and_full():
    acts = {
        ckpt: _mem(gradient_checkpointing=ckpt)[1].breakdown["activations"]
        for ckpt in ("none", "selective", "op_selective", "full")
    }
    assert acts["full"] < acts["op_selective"] < acts["selective"] <= acts["none"]


def test_offloading_and_optimizer_in_backward_save_what_they_should():
    _, base = _mem(gradient_checkpointing="full")
    _, off = _mem(gradient_checkpointing="full", activation_offloading=True)
    assert off.breakdown["activations"] < base.breakdown["activations"]
    _, fused = _mem(optimizer_in_backward=True)
    _, plain = _mem()
    assert fused.breakdown["gradients"] < plain.breakdown["gradients"] / 10


def test_compile_drops_the_pointwise_activations_and_speeds_the_step():
    """torch.compile recomputes pointwise outputs in backward: per layer and token, Llama 3.1 8B
    (h 4096, SwiGLU 14336, RMSNorm, bf16) saves 2 x 4096 x 4 B fewer (norm upcasts) and
    2 x 14336 x 2 B fewer (act(gate) and the down_proj input)."""
    from sizing.compute import COMPILE_SPEEDUP
    from sizing.memory import activation_bytes_per_token

    w, eager = _mem(framework="torchtune", gradient_checkpointing="none")
    wc, compiled = _mem(framework="torchtune", gradient_checkpointing="none", compile=True)
    assert not w.compile and wc.compile  # torchtune's default is off
    lin, _ = activation_bytes_per_token(w, moe_layer=False)
    lin_c, _ = activation_bytes_per_token(wc, moe_layer=False)
    assert lin - lin_c == 2 * 4096 * 4 + 2 * 14336 * 2
    assert compiled.breakdown["activations"] < eager.breakdown["activations"]
    assert compiled.breakdown["weights"] == eager.breakdown["weights"]
    # op-level selective checkpointing saves what its policy says, compiled or not
    _, sel = _mem(gradient_checkpointing="op_selective")
    _, sel_c = _mem(gradient_checkpointing="op_selective", compile=True)
    assert sel_c.breakdown["activations"] == sel.breakdown["activations"]
    # the step: utilisation x COMPILE_SPEEDUP; serving ignores the flag
    from bench.sizing_accuracy import load_gpus
    from sizing.estimator import estimate

    gpu = load_gpus()["a100-sxm4-80gb"]
    t_eager = estimate(w, gpu=gpu, gpu_count=1).tokens_per_second
    t_comp = estimate(wc, gpu=gpu, gpu_count=1).tokens_per_second
    assert t_comp is not None and t_eager is not None
    assert abs(t_comp / t_eager - COMPILE_SPEEDUP) < 0.01
    wi, _ = _mem(task="inference", compile=True)
    assert not wi.compile


def test_bad_framework_fields_are_named():
    import pytest

    from sizing.estimator import WorkloadError, parse_workload
    from sizing.presets import load_presets

    with pytest.raises(WorkloadError) as exc:
        parse_workload(
            {"model": "llama-3.1-8b", "framework": "jax", "activation_offloading": "maybe"},
            load_presets(),
        )
    assert {"framework", "activation_offloading"} <= set(exc.value.errors)


LLAMA_31_8B_CONFIG = {
    "model_type": "llama",
    "hidden_size": 4096,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "intermediate_size": 14336,
    "vocab_size": 128256,
    "max_position_embeddings": 131072,
    "tie_word_embeddings": False,
}


def test_a_config_json_sizes_like_the_preset_it_describes():
    from sizing.estimator import estimate, parse_workload
    from sizing.presets import load_presets

    presets = load_presets()
    by_config = parse_workload({"architecture": LLAMA_31_8B_CONFIG, "method": "lora"}, presets)
    by_name = parse_workload({"model": "llama-3.1-8b", "method": "lora"}, presets)
    assert by_config.params_b == pytest.approx(by_name.params_b, rel=1e-3)
    a = estimate(by_config, gpu=None, gpu_count=1).memory_per_gpu_gib
    b = estimate(by_name, gpu=None, gpu_count=1).memory_per_gpu_gib
    assert a == pytest.approx(b, rel=1e-3)
    as_text = parse_workload({"architecture": json.dumps(LLAMA_31_8B_CONFIG)}, presets)
    assert as_text.params_b == by_config.params_b


def test_moe_config_names_are_read():
    from sizing.specs import arch_from_config

    arch = arch_from_config(
        {
            "model_type": "deepseek_v2",
            "hidden_size": 2048,
            "num_hidden_layers": 27,
            "num_attention_heads": 16,
            "intermediate_size": 10944,
            "moe_intermediate_size": 1408,
            "n_routed_experts": 64,
            "n_shared_experts": 2,
            "num_experts_per_tok": 6,
            "first_k_dense_replace": 1,
            "kv_lora_rank": 512,
            "qk_nope_head_dim": 128,
            "qk_rope_head_dim": 64,
            "v_head_dim": 128,
            "vocab_size": 102400,
        }
    )
    assert arch.experts == 64 and arch.shared_experts == 2 and arch.first_dense_layers == 1
    assert arch.params_b == pytest.approx(15.7, rel=0.02)  # DeepSeek-V2-Lite's model card


def test_bad_architecture_is_a_named_error():
    from sizing.estimator import WorkloadError, parse_workload
    from sizing.presets import load_presets

    for bad in ({"hidden_size": 0}, "not json", [1], {"hidden_size": 64}):
        with pytest.raises(WorkloadError) as exc:
            parse_workload({"architecture": bad}, load_presets())
        assert "architecture" in exc.value.errors
    with pytest.raises(WorkloadError) as exc:
        parse_workload({"architecture": LLAMA_31_8B_CONFIG, "model": "llama-3-8b"}, load_presets())
    assert "architecture" in exc.value.errors
