"""Advice names a change that would help: no "what would fit" hint when memory was not what
stood in the way or when the job already fits there, none on a card the constraints exclude,
and a cap the caller set is named when it hid every plan."""

from __future__ import annotations

import pytest

from sizing.messages import MessageCode as C

pytestmark = pytest.mark.django_db

LORA_8B = {"model": "llama-3-8b", "method": "lora", "tokens": 2e8}


def advice_codes(api_client, body):
    response = api_client.post("/api/recommend", body, format="json")
    assert response.status_code == 200, response.content
    answer = response.json()
    return answer, [m["code"] for m in answer["advice_messages"]]


def test_no_fit_hint_when_only_stale_prices_were_left_out(api_client):
    body = {
        "workload": {**LORA_8B, "gradient_checkpointing": "full"},
        "constraints": {"pricing": ["spot"]},
    }
    answer, codes = advice_codes(api_client, body)
    assert not answer["recommendations"]
    assert set(answer["rejected"]) == {"stale_price"}
    assert C.STALE_LEFT_OUT in codes
    assert C.QLORA_FITS_24GB not in codes
    assert C.CHECKPOINTING_FITS_80GB not in codes


def test_no_checkpointing_hint_for_a_job_one_80gb_gpu_already_holds(api_client):
    body = {
        "workload": {**LORA_8B, "gradient_checkpointing": "none"},
        "constraints": {"max_total_usd": 0, "include_stale": True},
    }
    answer, codes = advice_codes(api_client, body)
    assert not answer["recommendations"]
    assert C.OVER_BUDGET in codes
    assert C.CHECKPOINTING_FITS_80GB not in codes


def test_no_24gb_hint_when_the_constraints_exclude_every_24gb_card(api_client):
    body = {
        "workload": {"model": "llama-3-8b", "method": "full", "tokens": 2e8},
        "constraints": {"gpus": ["rtx-4090"], "datacenter_only": True, "include_stale": True},
    }
    answer, codes = advice_codes(api_client, body)
    assert not answer["recommendations"]
    assert C.QLORA_FITS_24GB not in codes


def test_a_cap_the_caller_set_is_named_when_it_hid_every_plan(api_client):
    body = {
        "workload": {
            "model": "llama-3-70b",
            "method": "full",
            "gradient_checkpointing": "full",
            "tokens": 1e9,
        },
        "constraints": {"max_gpus": 8, "include_stale": True, "allow_multi_node": True},
    }
    answer, _ = advice_codes(api_client, body)
    assert not answer["recommendations"]
    capped = [m for m in answer["advice_messages"] if m["code"] == C.CAPPED_GPUS]
    assert capped and capped[0]["params"]["max_gpus"] == 8


def test_a_run_of_centuries_is_warned_of(api_client):
    body = {
        "workload": {"model": "llama-3-70b", "method": "qlora", "tokens": 1e15},
        "constraints": {"include_stale": True},
        "limit": 1,
    }
    response = api_client.post("/api/recommend", body, format="json")
    assert response.status_code == 200, response.content
    plan = response.json()["recommendations"][0]
    years = plan["est_hours"] / 8760
    assert years > 100
    warned = [m for m in plan["warning_messages"] if m["code"] == C.RUN_OVER_A_YEAR]
    assert warned and warned[0]["params"]["years"] == pytest.approx(years, rel=1e-3)


def test_a_run_of_days_is_not(api_client):
    body = {"workload": {**LORA_8B}, "constraints": {"include_stale": True}, "limit": 3}
    response = api_client.post("/api/recommend", body, format="json")
    for plan in response.json()["recommendations"]:
        assert C.RUN_OVER_A_YEAR not in [m["code"] for m in plan["warning_messages"]]


def test_mi300x_plans_say_their_gpus_are_joined_by_infinity_fabric(api_client):
    body = {
        "workload": {"model": "llama-3-70b", "method": "lora", "tokens": 1e8},
        "constraints": {"gpus": ["mi300x"], "include_stale": True},
        "limit": 3,
    }
    response = api_client.post("/api/recommend", body, format="json")
    plans = [p for p in response.json()["recommendations"] if p["gpu_count"] > 1]
    assert plans
    for plan in plans:
        joined = [m for m in plan["reason_messages"] if m["code"] == C.GPUS_JOINED]
        assert joined and joined[0]["params"]["interconnect"] == "infinity-fabric"
