"""Ranges a new user meets (issue 18): jobs measured to fit must fit on the high end too, and
what a calibration row's ratio means for a range (bench/uncertainty.py, docs/sizing.md)."""

from __future__ import annotations

import csv

import pytest

from bench import uncertainty as generator
from bench.sizing_accuracy import CSV_PATH

pytestmark = pytest.mark.django_db


def estimate(api_client, workload, **top):
    response = api_client.post("/api/estimate", {"workload": workload, **top}, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def test_torchtunes_4090_lora_fits_a_4090_on_the_high_end(api_client):
    # Calibration row t8cm: torchtune's README measured this config at 16.2 GiB on one RTX 4090.
    workload = {
        "model": "llama-3.1-8b",
        "method": "lora",
        "lora_rank": 8,
        "batch_size": 2,
        "seq_len": 2048,
        "gradient_checkpointing": "full",
        "framework": "torchtune",
        "loss": "chunked",
        "compile": True,
    }
    answer = estimate(api_client, workload, gpu="rtx-4090")
    assert answer["fit_on"] == "high"
    assert answer["memory_per_gpu_gib_range"][1] <= 24 * 0.95
    assert answer["fits"] is True and answer["min_gpus"] == 1


def test_a_small_lora_fits_a_t4(api_client):
    answer = estimate(api_client, {"model": "qwen2.5-0.5b", "method": "lora"}, gpu="t4")
    assert answer["fits"] is True and answer["min_gpus"] == 1


def test_long_context_serving_of_70b_fits_eight_h100s(api_client):
    # Weights (70B x 2 B / 8) and KV cache (128k x 8 sequences / 8) are arithmetic: the range
    # comes from serving, not from training rows.
    workload = {
        "model": "llama-3.1-70b",
        "task": "inference",
        "context_len": 131072,
        "concurrency": 8,
    }
    answer = estimate(api_client, workload, gpu="h100-sxm", gpu_count=8)
    basis = answer["range_basis"]["memory"]["basis"]
    assert basis in ("method:inference", "fallback:inference")
    assert answer["fits"] is True and answer["min_gpus"] <= 8
    assert answer["memory_per_gpu_gib_range"][1] <= answer["memory_per_gpu_gib"] * 1.15


def test_serving_70b_in_4_bit_on_two_4090s_at_4k_context(api_client):
    workload = {
        "model": "llama-3.1-70b",
        "task": "inference",
        "precision": "int4",
        "context_len": 4096,
        "concurrency": 1,
    }
    answer = estimate(api_client, workload, gpu="rtx-4090", gpu_count=2)
    if answer["fits_point"]:  # the point estimate fits: the serving margin must not undo it
        assert answer["fits"] is True


def test_several_gpus_get_the_multi_gpu_range(api_client):
    workload = {"model": "llama-3-8b", "method": "lora", "sharding": "fsdp"}
    answer = estimate(api_client, workload, gpu="a100-sxm4-40gb", gpu_count=4)
    assert answer["range_basis"]["memory"]["basis"].endswith("multi")


# ---- what a row's ratio means (bench/uncertainty.py roles) ------------------------------------


def _row(**over: str) -> dict:
    base = {
        "id": "a",
        "kind": "memory",
        "model": "llama-3.1-8b",
        "method": "lora",
        "gpu": "rtx-4090",
        "gpu_count": "1",
        "measure": "reported",
        "measured_value": "16.2",
        "unit": "GiB",
        "source": "s",
        "notes": "",
        "source_key": "src",
    }
    return {**base, **over}


def test_the_same_setup_on_a_roomier_card_is_an_upper_bound_of_the_smaller():
    small = _row()
    roomy = _row(id="b", gpu="rtx-a6000", measured_value="30.3", notes="other note")
    other = _row(id="c", gpu="rtx-a6000", measured_value="30.3", model="llama-3-8b")
    role = generator.roles([small, roomy, other])
    assert role["a"][0] == "point" and role["c"][0] == "point"
    assert role["b"][0] == "upper_bound" and "a" in role["b"][1]


def test_upper_bounds_and_other_quantities_set_no_range():
    rows = [
        _row(id=f"p{i}", source_key=f"s{i % 3}", model=f"m{i}", measured_value="1")
        for i in range(6)
    ]
    rows.append(_row(id="ub", gpu="rtx-a6000", model="m0", source_key="s0", measured_value="9"))
    values = [1.0 + i / 100 for i in range(6)] + [3.0]
    role = generator.roles(rows)
    assert role["ub"][0] == "upper_bound"
    kinds = generator.build_kinds(rows, values, role)
    assert kinds["memory"]["method"]["lora/single"]["high"] <= 1.05
    assert kinds["memory"]["method"]["lora/single"]["rows"] == 6


def test_a_rows_own_source_never_informs_its_range():
    # Source s2's rows are far above the others: held out, they fall outside; the table built
    # with them would have held them.
    rows = [_row(id=f"r{i}", model=f"m{i}", source_key=f"s{i % 4}") for i in range(16)]
    values = [3.0 if i % 4 == 2 else 1.0 + (i % 4) / 100 for i in range(16)]
    role = generator.roles(rows)
    for _, row, spread in generator._held_out(rows, values, role):
        if row["source_key"] == "s2":
            assert spread.high < 3.0
    assert generator.build_kinds(rows, values, role)["memory"]["all"]["high"] == 3.0


def test_every_row_set_apart_by_name_is_a_calibration_row_whose_note_says_why():
    with open(CSV_PATH, encoding="utf-8", newline="") as fh:
        notes = {row["id"]: row["notes"] for row in csv.DictReader(fh)}
    clue = {"tq1m": "after model init", "t8bm": "spill to host"}
    assert set(generator.OTHER_QUANTITY) <= set(clue)
    for row_id in generator.OTHER_QUANTITY:
        assert clue[row_id] in notes[row_id]


def test_the_quantile_is_linear_between_order_statistics():
    assert generator.quantile([1.0, 2.0, 3.0, 4.0, 5.0], 0.5) == 3.0
    assert generator.quantile([1.0, 2.0], 0.95) == pytest.approx(1.95)
    assert generator.quantile([7.0], 0.05) == 7.0


@pytest.mark.parametrize("objective", ["cheapest", "fastest"])
def test_every_plan_states_its_gpu_hours_range_as_its_hours_range_times_its_gpus(
    api_client, objective
):
    body = {
        "workload": {"model": "llama-3-8b", "method": "lora", "tokens": 2e9},
        "constraints": {"include_stale": True, "allow_multi_node": True},
        "objective": objective,
        "limit": 10,
    }
    response = api_client.post("/api/recommend", body, format="json")
    assert response.status_code == 200, response.content
    plans = response.json()["recommendations"]
    assert plans
    if objective == "fastest":
        assert any(p["nodes"] > 1 for p in plans)  # a multi-node plan counts every node's GPUs
    for p in plans:
        low, high = p["gpu_hours_range"]
        hours_low, hours_high = p["est_hours_range"]
        gpus = p["gpu_count"]
        assert low == pytest.approx(hours_low * gpus, rel=1e-3, abs=0.01 * gpus)
        assert high == pytest.approx(hours_high * gpus, rel=1e-3, abs=0.01 * gpus)
        assert low <= p["est_hours"] * gpus * (1 + 1e-3) and p["est_hours"] * gpus <= high * (
            1 + 1e-3
        )


def test_a_plan_without_a_run_length_has_no_gpu_hours_range(api_client):
    body = {"workload": {"model": "llama-3-8b", "method": "lora"}, "limit": 3}
    plans = api_client.post("/api/recommend", body, format="json").json()["recommendations"]
    assert plans and all(p["gpu_hours_range"] is None for p in plans)
