"""QLoRA under litgpt (Lightning's BitsandbytesPrecision + bitsandbytes' MatMul4Bit).

The head is stored in 4 bits, every dequantisation makes an fp16 copy and a bf16 cast, and the
previous step's 4-bit matmul inputs are still alive during the next forward (sizing/frameworks.py).
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from sizing.estimator import WorkloadError, estimate, parse_workload
from sizing.frameworks import FRAMEWORKS
from sizing.memory import (
    NF4_NO_DQ_BYTES_PER_PARAM,
    previous_step_4bit_inputs,
    quantizable_params,
    training_memory,
)
from sizing.presets import load_presets

PRESETS = load_presets()
LLAMA = PRESETS["llama-2-7b"]


def wl(**data):
    base = {
        "model": "llama-2-7b",
        "method": "qlora",
        "framework": "litgpt",
        "batch_size": 2,
        "seq_len": 512,
        "lora_targets": "qv",
        "gradient_checkpointing": "none",
    }
    return parse_workload({**base, **data}, PRESETS)


def test_previous_step_keeps_every_4bit_matmul_input():
    """Per layer: q/k/v input, attention output, MLP input, down input; plus the head's input."""
    h, o, inter = LLAMA.hidden_size, LLAMA.o_width, LLAMA.intermediate_size
    per_token = LLAMA.total_layers * (2 * h + o + inter) + h
    assert previous_step_4bit_inputs(wl()) == 2 * 512 * per_token * 2


@pytest.mark.parametrize(
    "data",
    [
        {"framework": "hf"},  # the Trainer drops the step's graph before the next one
        {"framework": "torchtune"},
        {"method": "lora"},  # autograd frees what save_for_backward kept
        {"gradient_checkpointing": "full"},
    ],
)
def test_nothing_kept_from_the_previous_step_elsewhere(data):
    assert previous_step_4bit_inputs(wl(**data)) == 0.0


def test_the_kept_inputs_raise_the_peak(monkeypatch):
    w = wl()
    kept = previous_step_4bit_inputs(w)
    on = estimate(w).breakdown["activations"]
    monkeypatch.setitem(
        FRAMEWORKS, "litgpt", replace(FRAMEWORKS["litgpt"], keeps_previous_step_graph=False)
    )
    off = estimate(w).breakdown["activations"]
    # They sit on the loss-head side of the peak (end of forward), so they add at most
    # themselves, and at least themselves less the backward buffers they replace.
    grew = (on - off) * 2**30
    assert 0 < grew <= kept * (1 + 1e-9)
    assert grew > 0.8 * kept


def test_litgpt_stores_the_head_in_4_bits_and_dequantises_it_via_fp16():
    r = training_memory(wl(), dp=1, sharding="none")
    head = LLAMA.vocab_size * LLAMA.hidden_size
    quant = quantizable_params(LLAMA) + head * LLAMA.params / LLAMA.counts.computed_total
    rest = LLAMA.params - quant
    # The head (32000 x 4096) is the largest matrix: an fp16 copy + its bf16 cast, 4 B.
    expected = quant * NF4_NO_DQ_BYTES_PER_PARAM + rest * 2 + head * 4
    assert r.weights == pytest.approx(expected, rel=1e-9)


def test_fp16_compute_needs_no_cast_of_the_dequantised_copy():
    bf16 = training_memory(wl(), dp=1, sharding="none").weights
    fp16 = training_memory(wl(precision="fp16"), dp=1, sharding="none").weights
    head = LLAMA.vocab_size * LLAMA.hidden_size
    assert bf16 - fp16 == pytest.approx(head * 2, rel=1e-9)


def test_hf_keeps_its_head_in_16_bits():
    w = wl(framework="hf")
    r = training_memory(w, dp=1, sharding="none")
    quant = quantizable_params(LLAMA)
    rest = LLAMA.params - quant
    biggest = LLAMA.hidden_size * LLAMA.intermediate_size
    # PEFT's prepare_model_for_kbit_training: unquantised parameters in fp32.
    assert r.weights == pytest.approx(quant * NF4_NO_DQ_BYTES_PER_PARAM + rest * 4 + biggest * 2)


def test_a_tied_model_gains_a_separate_4bit_head_under_litgpt():
    """litgpt copies a tied embedding into its own lm_head: the embedding stays 16-bit."""
    falcon = PRESETS["falcon-7b"]
    assert falcon.tied_embeddings
    r = training_memory(wl(model="falcon-7b"), dp=1, sharding="none")
    head = falcon.vocab_size * falcon.hidden_size
    quant = quantizable_params(falcon)
    rest = falcon.params - quant
    expected = (quant + head) * NF4_NO_DQ_BYTES_PER_PARAM + rest * 2 + head * 4
    assert r.weights == pytest.approx(expected, rel=1e-9)


def test_litgpt_qlora_defaults_to_bf16_true_without_checkpointing():
    """litgpt's --quantize refuses mixed precision; its single-device lora.py has no checkpointing."""
    w = parse_workload({"model": "llama-2-7b", "method": "qlora", "framework": "litgpt"}, PRESETS)
    assert w.mixed_precision is False
    assert w.gradient_checkpointing == "none"
    hf = parse_workload({"model": "llama-2-7b", "method": "qlora"}, PRESETS)
    assert hf.mixed_precision is True
    assert hf.gradient_checkpointing == "full"
    lora = parse_workload({"model": "llama-2-7b", "method": "lora", "framework": "litgpt"}, PRESETS)
    assert lora.mixed_precision is True  # litgpt trains LoRA in bf16-mixed by default
    given = parse_workload(
        {
            "model": "llama-2-7b",
            "method": "qlora",
            "framework": "litgpt",
            "gradient_checkpointing": "full",
        },
        PRESETS,
    )
    assert given.gradient_checkpointing == "full"


@pytest.mark.parametrize(
    ("framework", "expected"),
    [("hf", False), ("litgpt", False), ("torchtune", True), ("llama_factory", True)],
)
def test_double_quant_defaults_to_the_frameworks(framework, expected):
    """BitsAndBytesConfig and litgpt's bnb.nf4 store fp32 block constants; torchao's NF4 and
    LLaMA-Factory quantise them again."""
    w = parse_workload({"model": "llama-2-7b", "method": "qlora", "framework": framework}, PRESETS)
    assert w.double_quant is expected
    assert parse_workload({"model": "llama-2-7b", "method": "lora"}, PRESETS).double_quant is False


def test_double_quant_saves_its_share_of_every_4bit_weight():
    with_dq = training_memory(wl(double_quant=True), dp=1, sharding="none").weights
    without = training_memory(wl(double_quant=False), dp=1, sharding="none").weights
    head = LLAMA.vocab_size * LLAMA.hidden_size
    quant = quantizable_params(LLAMA) + head * LLAMA.params / LLAMA.counts.computed_total
    # fp32 absmax per 64 weights (4/64 B) against 8-bit constants + an fp32 per 256 blocks.
    assert without - with_dq == pytest.approx(quant * (4 / 64 - 0.127 / 8), rel=1e-9)


@pytest.mark.parametrize(
    "data",
    [{"method": "lora"}, {"method": "full"}, {"task": "inference", "method": None}],
)
def test_double_quant_outside_qlora_is_a_400_naming_the_field(data):
    body = {"model": "llama-2-7b", "double_quant": True, **data}
    body = {k: v for k, v in body.items() if v is not None}
    with pytest.raises(WorkloadError) as e:
        parse_workload(body, PRESETS)
    assert "double_quant" in e.value.errors


# --- litgpt refuses quantised training on more than one GPU ----------------------------------
LITGPT_QLORA = {
    "model": "llama-2-7b",
    "task": "finetune",
    "method": "qlora",
    "framework": "litgpt",
    "batch_size": 2,
    "seq_len": 512,
    "tokens": 20_000_000,
}


def _recommend(client, workload, objective="fastest", **constraints):
    body = {
        "workload": workload,
        "constraints": {"include_stale": True, "pricing": ["on_demand"], **constraints},
        "objective": objective,
        "limit": 50,
    }
    response = client.post("/api/recommend", body, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def test_litgpt_limits_quantised_training_to_one_gpu():
    """litgpt/finetune/lora.py @26857050 setup(): NotImplementedError when devices x num_nodes
    > 1 with --quantize; the other frameworks run QLoRA across GPUs."""
    from sizing.frameworks import quantised_gpu_limit

    assert FRAMEWORKS["litgpt"].quantised_max_gpus == 1
    assert quantised_gpu_limit("litgpt", "qlora", "finetune") == 1
    assert quantised_gpu_limit("litgpt", "lora", "finetune") is None  # LoRA without --quantize
    for name in ("hf", "torchtune", "llama_factory", "unsloth"):
        assert quantised_gpu_limit(name, "qlora", "finetune") is None


@pytest.mark.django_db
@pytest.mark.parametrize("objective", ["fastest", "cheapest"])
def test_the_planner_offers_litgpt_qlora_on_one_gpu_only(api_client, objective):
    body = _recommend(api_client, LITGPT_QLORA, objective)
    plans = body["recommendations"]
    assert plans
    assert all(p["gpu_count"] <= 1 and p["nodes"] == 1 for p in plans), [
        (p["instance_type"], p["gpu_count"], p["nodes"]) for p in plans
    ]
    entry = body["rejected"]["framework_gpu_limit"]
    assert entry["count"] > 0
    assert entry["text"].startswith("The framework does not train a quantised")
    example = entry["example_messages"][0]
    assert example["code"] == "example_framework_gpu_limit"
    assert example["params"]["gpu_count"] > 1 and example["params"]["max_gpus"] == 1
    assert "litgpt trains QLoRA on at most 1" in example["text"]
    advice = [m for m in body["advice_messages"] if m["code"] == "framework_gpu_limit_advice"]
    assert advice and advice[0]["params"]["count"] == entry["count"]
    assert "torchtune" in advice[0]["text"]
    # The same job under PEFT is offered on several GPUs, and nothing is rejected for it.
    hf = _recommend(api_client, {**LITGPT_QLORA, "framework": "hf"}, objective)
    assert "framework_gpu_limit" not in hf["rejected"]
    if objective == "fastest":
        assert any(p["gpu_count"] > 1 for p in hf["recommendations"])


@pytest.mark.django_db
def test_litgpt_qlora_too_big_for_one_gpu_says_so_and_not_allow_multi_node(api_client):
    big = {**LITGPT_QLORA, "model": "llama-3-70b", "batch_size": 8, "seq_len": 4096}
    body = _recommend(api_client, big, "cheapest", allow_multi_node=False, max_gpus=64)
    assert all(p["gpu_count"] <= 1 for p in body["recommendations"])
    assert body["rejected"]["framework_gpu_limit"]["count"] > 0
    codes = [m["code"] for m in body["advice_messages"]]
    assert "framework_gpu_limit_advice" in codes
    assert "allow_multi_node" not in codes


def test_an_estimate_of_litgpt_qlora_on_several_gpus_says_litgpt_refuses_it():
    from sizing.messages import MessageCode as C

    on_eight = estimate(wl(), gpu_count=8)
    notes = [m for m in on_eight.note_messages if m.code == C.NOTE_FRAMEWORK_GPU_LIMIT]
    assert notes and notes[0].params == {"framework": "litgpt", "max_gpus": 1, "gpu_count": 8}
    assert "torchtune" in notes[0].text
    assert not [m for m in estimate(wl()).note_messages if m.code == C.NOTE_FRAMEWORK_GPU_LIMIT]
    hf = estimate(wl(framework="hf"), gpu_count=8)
    assert not [m for m in hf.note_messages if m.code == C.NOTE_FRAMEWORK_GPU_LIMIT]
