"""GET /api/recommend: a query name it does not take is reported under that name, with the
nearest of every name it does take (workload and constraint fields alike)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db


def test_a_misspelt_constraint_is_reported_under_its_own_name_with_the_right_suggestion(
    api_client,
):
    response = api_client.get("/api/recommend?model=llama-3-8b&method=lora&max_usd_per_hr=3")
    assert response.status_code == 400
    errors = response.json()["errors"]
    assert "workload" not in errors
    assert "max_usd_per_hr" in errors
    assert "max_usd_per_hour" in " ".join(errors["max_usd_per_hr"])


def test_a_misspelt_workload_field_gets_its_suggestion_and_chinese_too(api_client):
    response = api_client.get("/api/recommend?model=llama-3-8b&methd=lora&lang=zh-hans")
    assert response.status_code == 400
    errors = response.json()["errors"]
    assert "methd" in errors and "'method'" in errors["methd"][0]
    assert "未知字段" in errors["methd"][0]


def test_known_names_still_answer(api_client):
    response = api_client.get("/api/recommend?model=llama-3-8b&method=lora&max_usd_per_hour=3")
    assert response.status_code == 200, response.content
