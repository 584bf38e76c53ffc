"""The estimator's ranges (sizing/uncertainty.py) and deciding fits on their high end."""

from __future__ import annotations

import json

import pytest

from bench import uncertainty as generator
from sizing.uncertainty import TABLE_PATH, Spread, spread, spread_from, table

pytestmark = pytest.mark.django_db

LORA_8B = {"model": "llama-3-8b", "method": "lora", "batch_size": 1, "tokens": 1e8}
A100_40 = "a100-sxm4-40gb"


def estimate(api_client, workload, **top):
    response = api_client.post("/api/estimate", {"workload": workload, **top}, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def tight(api_client) -> dict:
    """A LoRA workload whose estimate fits one 40 GB A100 while the high end of its range does
    not, found by trying sequence lengths (so the tests hold as the model moves)."""
    for seq_len in (256, 512, 1024, 1536, 2048, 3072, 4096, 6144, 8192):
        workload = {**LORA_8B, "seq_len": seq_len}
        answer = estimate(api_client, workload, gpu=A100_40, fit_on="point")
        if answer["fits"] and answer["memory_per_gpu_gib_range"][1] > 40 * 0.95:
            return workload
    pytest.fail("no sequence length puts LoRA 8B between the estimate and the high end")


def test_the_range_table_is_current_with_the_calibration_rows_and_the_model():
    """Fails after a change to bench/calibration.csv or to the model until the table is made
    again: python bench/uncertainty.py."""
    committed = json.loads(TABLE_PATH.read_text(encoding="utf-8"))
    fresh = generator.build()
    assert committed["calibration_csv_sha256"] == fresh["calibration_csv_sha256"], (
        "bench/calibration.csv changed: run python bench/uncertainty.py"
    )
    assert generator.same(committed, fresh), "the model changed: run python bench/uncertainty.py"


def test_the_table_says_how_it_was_made_and_on_what():
    made = table()
    assert made["command"] == "python bench/uncertainty.py"
    assert made["generated"] and made["calibration_rows"] >= 100
    for kind in ("memory", "time"):
        groups = made["kinds"][kind]
        levels = ("method", "framework_method", "layout")
        every = [groups["all"], *(e for level in levels for e in groups.get(level, {}).values())]
        for entry in every:
            assert entry["low"] <= entry["median"] <= entry["high"]
            assert entry["rows"] >= made["min_rows"] and entry["sources"] >= made["min_sources"]


def test_the_narrowest_group_with_enough_rows_is_used():
    kinds = {
        "memory": {
            "all": {"low": 0.7, "high": 1.8, "rows": 60},
            "layout": {"multi": {"low": 0.8, "high": 1.6, "rows": 19}},
            "method": {"lora/single": {"low": 0.8, "high": 1.9, "rows": 16}},
            "framework_method": {"litgpt/lora/single": {"low": 1.1, "high": 1.3, "rows": 8}},
        },
        "time": {
            "all": {"low": 0.7, "high": 1.3, "rows": 90},
            "method": {"lora": {"low": 0.9, "high": 1.2, "rows": 9}},
            "framework_method": {},
        },
    }
    assert spread_from(kinds, "memory", "litgpt", "lora") == Spread(
        1.0, 1.3, "framework_method:litgpt/lora/single", 8
    )
    assert spread_from(kinds, "memory", "hf", "lora").basis == "method:lora/single"
    # Memory is looked up by layout: several GPUs never borrow the one-GPU groups.
    assert spread_from(kinds, "memory", "litgpt", "lora", "multi").basis == "layout:multi"
    assert spread_from(kinds, "memory", "hf", "qlora").basis == "all"
    assert spread_from(kinds, "time", "hf", "lora", "multi").basis == "method:lora"
    assert spread_from(kinds, "time", "hf", "qlora").basis == "all"
    assert spread_from({}, "time", "hf", "qlora") == Spread(1.0, 1.0, "none", 0)


def test_inference_memory_never_takes_the_training_rows_spread():
    kinds = {"memory": {"all": {"low": 0.7, "high": 1.8, "rows": 60}, "method": {}}}
    fallback = spread_from(kinds, "memory", "vllm", "inference")
    assert fallback.basis == "fallback:inference" and fallback.rows == 0
    assert (fallback.low, fallback.high) == (0.95, 1.05)
    kinds["memory"]["inference_fallback"] = {"low": 0.99, "high": 1.064, "rows": 5}
    assert spread_from(kinds, "memory", "vllm", "inference") == Spread(
        0.99, 1.064, "fallback:inference", 5
    )
    kinds["memory"]["method"]["inference"] = {"low": 0.9, "high": 1.2, "rows": 12}
    assert spread_from(kinds, "memory", "vllm", "inference").basis == "method:inference"


@pytest.mark.parametrize(
    "workload",
    [
        LORA_8B,
        {"model": "llama-2-7b", "method": "qlora", "tokens": 1e7},
        {"model": "llama-3-8b", "method": "full", "framework": "torchtitan", "tokens": 1e9},
        {"model": "llama-3-70b", "task": "pretrain", "tokens": 1e10},
        {"model": "llama-2-13b", "task": "inference", "tokens": 1e6},
    ],
)
def test_every_range_holds_its_estimate(api_client, workload):
    answer = estimate(api_client, workload, gpu="h100-sxm", gpu_count=8)
    pairs = [
        ("memory_per_gpu_gib", "memory_per_gpu_gib_range"),
        ("gpu_hours", "gpu_hours_range"),
        ("est_hours", "est_hours_range"),
        ("tokens_per_second", "tokens_per_second_range"),
    ]
    for point, span in pairs:
        if answer[point] is None:
            assert answer[span] is None
            continue
        low, high = answer[span]
        assert low <= answer[point] * 1.001 and answer[point] <= high * 1.001, (point, answer[span])
    basis = answer["range_basis"]["memory"]
    assert basis["rows"] > 0 or basis["basis"] == "fallback:inference"


def test_fits_is_decided_on_the_high_end_unless_asked_otherwise(api_client, settings):
    # The estimate fits a 40 GB card, but LoRA rows of other sources reached well above theirs.
    workload = tight(api_client)
    on_high = estimate(api_client, workload, gpu=A100_40)
    high = on_high["memory_per_gpu_gib_range"][1]
    assert on_high["memory_per_gpu_gib"] <= 40 * 0.95 < high
    assert on_high["fit_on"] == "high"
    assert on_high["fits"] is False and on_high["fits_point"] is True

    on_point = estimate(api_client, workload, gpu=A100_40, fit_on="point")
    assert on_point["fit_on"] == "point" and on_point["fits"] is True

    settings.SIZING_FIT_ON = "point"
    assert estimate(api_client, workload, gpu=A100_40)["fits"] is True
    assert estimate(api_client, workload, gpu=A100_40, fit_on="high")["fits"] is False


def test_the_planner_rejects_on_the_high_end_and_says_so(api_client, settings):
    body = {
        "workload": tight(api_client),
        "constraints": {"gpus": [A100_40], "max_gpus": 1, "pricing": ["on_demand"]},
        "limit": 3,
    }
    answer = api_client.post("/api/recommend", body, format="json").json()
    assert answer["recommendations"] == []
    entry = answer["rejected"]["does_not_fit_memory_high"]
    assert entry["count"] > 0 and entry["code"] == "does_not_fit_memory_high"
    example = entry["example_messages"][0]
    assert example["code"] == "example_no_fit_high"
    assert example["params"]["memory_gib"] <= 40 * 0.95 < example["params"]["high_gib"]
    assert "fit_on_point" in [m["code"] for m in answer["advice_messages"]]

    body["constraints"]["fit_on"] = "point"
    flipped = api_client.post("/api/recommend", body, format="json").json()
    assert flipped["recommendations"] and "does_not_fit_memory_high" not in flipped["rejected"]
    for item in flipped["recommendations"]:
        low, high = item["memory_per_gpu_gib_range"]
        assert low <= item["memory_per_gpu_gib"] <= high
        low, high = item["est_total_usd_range"]
        assert low <= item["est_total_usd"] <= high

    settings.SIZING_FIT_ON = "point"
    del body["constraints"]["fit_on"]
    by_setting = api_client.post("/api/recommend", body, format="json").json()
    assert by_setting["recommendations"]


def test_chinese_rejection_text_for_the_high_end(api_client):
    body = {
        "workload": tight(api_client),
        "constraints": {"gpus": [A100_40], "max_gpus": 1},
        "limit": 1,
    }
    answer = api_client.post("/api/recommend?lang=zh-hans", body, format="json").json()
    entry = answer["rejected"]["does_not_fit_memory_high"]
    assert "上限" in entry["text"] and "上限" in entry["example_messages"][0]["text"]


def test_a_workload_spread_follows_its_framework_and_method():
    from sizing.presets import load_presets
    from sizing.workload import parse_workload

    presets = load_presets()
    full = parse_workload({"model": "llama-3-8b", "method": "full"}, presets)
    lora = parse_workload({"model": "llama-3-8b", "method": "lora"}, presets)
    serving = parse_workload({"model": "llama-3-8b", "task": "inference"}, presets)
    sharded = parse_workload({"model": "llama-3-8b", "method": "lora", "sharding": "fsdp"}, presets)
    groups = table()["kinds"]["memory"]
    for workload, layout in ((full, "single"), (lora, "single"), (sharded, "multi")):
        method = workload.method
        expected = next(
            f"{level}:{key}"
            for level, key in (
                ("framework_method", f"hf/{method}/{layout}"),
                ("method", f"{method}/{layout}"),
                ("layout", layout),
            )
            if key in groups.get(level, {})
        )
        assert spread("memory", workload).basis == expected
    # The hardware asked about decides the layout where the workload leaves it open.
    assert spread("memory", lora, gpu_count=4).basis == spread("memory", sharded).basis
    assert spread("memory", serving).basis in ("method:inference", "fallback:inference")
