"""LoRA dropout: each adapter's dropped-out input and its mask are saved for lora_A's backward."""

from __future__ import annotations

import pytest

from sizing.estimator import WorkloadError, estimate, parse_workload
from sizing.memory import (
    BACKWARD_TRANSIENT_LAYERS,
    GIB,
    activation_bytes_per_token,
    lora_dropout_bytes_per_token,
    lora_params,
)
from sizing.presets import load_presets

PRESETS = load_presets()
LLAMA = PRESETS["llama-2-7b"]


def wl(**data):
    base = {"model": "llama-2-7b", "method": "lora", "batch_size": 2, "seq_len": 512}
    return parse_workload({**base, **data}, PRESETS)


def test_separate_adapters_each_keep_a_copy_of_their_input_and_a_mask():
    """PEFT/torchtune: q, k, v, o, gate, up and down each have their own dropout."""
    h, inter = LLAMA.hidden_size, LLAMA.intermediate_size
    w = wl(lora_targets="all_linear", lora_dropout=0.1, framework="hf")
    # bf16 dropout output (2 B) + bool mask (1 B) per input element of every adapted module.
    expected = (3 * h + LLAMA.o_width + 2 * h + inter) * 3
    assert lora_dropout_bytes_per_token(w, moe_layer=False) == expected
    none = wl(lora_targets="all_linear", lora_dropout=0, framework="hf")
    with_drop = activation_bytes_per_token(w, moe_layer=False)[0]
    assert with_drop - activation_bytes_per_token(none, moe_layer=False)[0] == expected


def test_litgpt_fused_qkv_applies_one_dropout_to_q_and_v():
    h = LLAMA.hidden_size
    lit = wl(lora_targets="qv", framework="litgpt")  # litgpt's default dropout: 0.05
    peft = wl(lora_targets="qv", framework="hf", lora_dropout=0.05)
    assert lit.lora_dropout == 0.05
    assert lora_dropout_bytes_per_token(lit, moe_layer=False) == h * 3
    assert lora_dropout_bytes_per_token(peft, moe_layer=False) == 2 * h * 3


def test_dropout_raises_memory_by_the_saved_copies_of_every_kept_layer():
    w0 = wl(lora_targets="all_linear", lora_dropout=0)
    w1 = wl(lora_targets="all_linear", lora_dropout=0.1)
    per_layer = 2 * 512 * lora_dropout_bytes_per_token(w1, moe_layer=False)
    layers = LLAMA.total_layers
    grew = (estimate(w1).breakdown["activations"] - estimate(w0).breakdown["activations"]) * GIB
    # Every layer keeps its copies; the backward buffers (one layer) may add one more layer's.
    assert layers * per_layer <= grew * (1 + 1e-6)
    assert grew <= (layers + BACKWARD_TRANSIENT_LAYERS) * per_layer * (1 + 1e-6)


def test_checkpointed_layers_hold_the_copies_only_while_recomputed():
    w0 = wl(lora_targets="all_linear", lora_dropout=0, gradient_checkpointing="full")
    w1 = wl(lora_targets="all_linear", lora_dropout=0.1, gradient_checkpointing="full")
    per_layer = 2 * 512 * lora_dropout_bytes_per_token(w1, moe_layer=False)
    grew = (estimate(w1).breakdown["activations"] - estimate(w0).breakdown["activations"]) * GIB
    assert 0 < grew <= (1 + BACKWARD_TRANSIENT_LAYERS) * per_layer * (1 + 1e-6)


def test_dropout_zero_changes_nothing():
    default = estimate(wl(framework="hf"))
    explicit = estimate(wl(framework="hf", lora_dropout=0))
    assert explicit.memory_per_gpu_gib == default.memory_per_gpu_gib
    assert explicit.breakdown == default.breakdown
    # With dropout 0 a fused-qkv framework and a per-module one save the same tensors.
    lit = wl(framework="litgpt", lora_dropout=0)
    hf = wl(framework="hf", lora_dropout=0)
    assert lora_dropout_bytes_per_token(lit, moe_layer=False) == 0
    assert activation_bytes_per_token(lit, moe_layer=False) == activation_bytes_per_token(
        hf, moe_layer=False
    )


def test_framework_defaults_and_the_note():
    assert wl(framework="torchtune").lora_dropout == 0.0
    assert wl(framework="hf").lora_dropout == 0.0
    e = estimate(wl(framework="litgpt"))
    assert any("LoRA dropout 0.05" in n for n in e.notes)
    assert not any("LoRA dropout" in n for n in estimate(wl(framework="hf")).notes)
    assert parse_workload({"model": "llama-2-7b"}, PRESETS).lora_dropout == 0.0  # full fine-tune


@pytest.mark.parametrize(
    "data",
    [
        {"method": "full", "lora_dropout": 0.1},
        {"task": "inference", "method": None, "lora_dropout": 0.1},
        {"lora_dropout": 1.5},
        {"lora_dropout": -0.1},
        {"lora_dropout": "a lot"},
    ],
)
def test_bad_lora_dropout_names_the_field(data):
    raw = {"model": "llama-2-7b", "method": "lora", **data}
    raw = {k: v for k, v in raw.items() if v is not None}
    with pytest.raises(WorkloadError) as exc:
        parse_workload(raw, PRESETS)
    assert "lora_dropout" in exc.value.errors


def test_qv_targets_adapt_q_and_v_only():
    h = LLAMA.hidden_size
    rank = 8
    per_layer = rank * ((h + LLAMA.q_width) + (h + LLAMA.v_width))
    assert lora_params(LLAMA, rank, "qv") == per_layer * LLAMA.total_layers
    assert lora_params(LLAMA, rank, "qv") < lora_params(LLAMA, rank, "attention")
