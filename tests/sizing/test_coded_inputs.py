"""Workload input errors and the estimator's notes come coded, in the request's language, with
the English sentences they always had (issue 14)."""

from __future__ import annotations

import pytest

from sizing.messages import MessageCode
from sizing.presets import load_presets
from sizing.workload import WorkloadError, parse_workload

pytestmark = pytest.mark.django_db


def errors_of(data: dict) -> WorkloadError:
    with pytest.raises(WorkloadError) as exc:
        parse_workload(data, load_presets())
    return exc.value


def test_the_english_sentences_are_the_ones_callers_always_had():
    exc = errors_of(
        {"model": "llama-3-8bb", "task": "pretrain", "method": "lora", "batch_size": 0, "tokenz": 1}
    )
    assert exc.errors["batch_size"] == ["Must be between 1 and 4096."]
    assert exc.errors["method"] == [
        "lora adapts a pretrained model; pre-training trains every weight (use full)."
    ]
    assert exc.errors["model"][0].startswith("Unknown model preset 'llama-3-8bb'. Closest: ")
    assert exc.errors["tokenz"] == ["Unknown field. Did you mean 'tokens'?"]
    codes = {field: [m.code for m in messages] for field, messages in exc.coded.items()}
    assert codes["batch_size"] == [MessageCode.INPUT_BETWEEN]
    assert codes["method"] == [MessageCode.INPUT_PRETRAIN_ADAPTER]
    assert codes["model"] == [MessageCode.INPUT_UNKNOWN_PRESET_CLOSEST]
    assert codes["tokenz"] == [MessageCode.INPUT_UNKNOWN_FIELD_NEAR]


def test_errors_render_in_chinese():
    exc = errors_of({"model": "llama-3-8b", "mixed_precision": "perhaps", "batch_size": 0})
    zh = exc.rendered("zh-hans")
    assert zh["mixed_precision"] == ["必须是 true 或 false。"]
    assert zh["batch_size"] == ["必须介于 1 与 4096 之间。"]


def test_api_errors_carry_codes_and_follow_the_language(api_client):
    body = {"workload": {"model": "llama-3-8b", "task": "inference", "method": "lora"}}
    english = api_client.post("/api/estimate", body, format="json")
    assert english.status_code == 400
    answer = english.json()
    assert answer["errors"]["workload"]["method"] == [
        "lora is a training method; leave method out for inference."
    ]
    coded = answer["error_messages"]["workload"]["method"][0]
    assert coded["code"] == "input_method_for_inference"
    assert coded["params"] == {"method": "lora"}

    chinese = api_client.post("/api/recommend?lang=zh-hans", body, format="json").json()
    said = "lora 是训练方法；推理时请不要填写 method。"  # noqa: RUF001
    assert chinese["errors"]["workload"]["method"] == [said]
    assert chinese["error_messages"]["workload"]["method"][0]["code"] == (
        "input_method_for_inference"
    )


def test_a_layout_error_of_the_estimate_is_coded_too(api_client):
    body = {
        "workload": {"model": "llama-3-8b", "tensor_parallel": 2, "pipeline_parallel": 2},
        "gpu": "h100-sxm",
        "gpu_count": 6,
    }
    answer = api_client.post("/api/estimate?lang=zh-hans", body, format="json").json()
    assert answer["errors"]["gpu_count"] == [
        "必须是 tensor_parallel x pipeline_parallel（4）的整数倍。"  # noqa: RUF001
    ]
    coded = answer["error_messages"]["gpu_count"][0]
    assert coded["code"] == "input_gpu_count_multiple" and coded["params"] == {"model_parallel": 4}


def test_estimate_notes_are_coded_and_translated(api_client):
    body = {"workload": {"model": "llama-3-70b", "method": "full"}, "gpu": "h100-sxm"}
    english = api_client.post("/api/estimate", body, format="json").json()
    codes = [m["code"] for m in english["note_messages"]]
    assert "note_does_not_fit" in codes and "note_range" in codes
    assert "note_fit_on_high" in codes
    fit = next(m for m in english["note_messages"] if m["code"] == "note_does_not_fit")
    assert fit["text"] in english["notes"] and fit["text"].startswith("fit: ")
    assert fit["params"]["need"]["code"] in ("note_gpus_needed", "note_no_count_fits")

    chinese = api_client.post("/api/estimate?lang=zh-hans", body, format="json").json()
    zh_fit = next(m for m in chinese["note_messages"] if m["code"] == "note_does_not_fit")
    assert zh_fit["text"].startswith("显存") and zh_fit["text"] in chinese["notes"]
    assert fit["text"] not in chinese["notes"]
    # The formula working stays English, in both.
    working = [n for n in english["notes"] if n.startswith("weights")]
    assert working and set(working) <= set(chinese["notes"])


def test_plan_page_shows_input_errors_in_the_pages_language(client):
    response = client.get(
        "/plan?model=llama-3-8b&task=inference&method=lora", HTTP_ACCEPT_LANGUAGE="zh-hans"
    )
    assert response.status_code == 400
    assert "lora 是训练方法" in response.content.decode()


def test_config_json_problems_are_coded():
    exc = errors_of({"architecture": {"hidden_size": 4096, "num_hidden_layers": True}})
    assert "num_attention_heads is required." in exc.errors["architecture"]
    assert (
        "num_hidden_layers must be a whole number from 1 to 10,000,000."
        in (exc.errors["architecture"])
    )
    codes = {m.code for m in exc.coded["architecture"]}
    assert {MessageCode.INPUT_CONFIG_REQUIRED, MessageCode.INPUT_CONFIG_WHOLE} <= codes
    zh = exc.rendered("zh-hans")["architecture"]
    assert "缺少 num_attention_heads。" in zh
