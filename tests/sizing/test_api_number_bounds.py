"""Numbers past float range (docs/api.md, "Request bounds"): JSON 1e309 and integers of more
than 308 digits read as floats (infinity past 1.8e308), which no field takes: a 400 naming the
field, in a JSON body and in GET /api/recommend's query string alike, never a 500."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db

HUGE = ["1e309", "-1e309", "1" + "0" * 400, "2" + "0" * 308, "1" + "0" * 5000]


@pytest.mark.parametrize("raw", HUGE, ids=lambda raw: raw[:6] + f"..{len(raw)}")
def test_a_number_past_float_range_is_a_400_naming_the_field(api_client, raw):
    body = '{"workload": {"model": "llama-3-8b", "method": "lora", "tokens": ' + raw + "}}"
    posted = api_client.generic("POST", "/api/recommend", body, content_type="application/json")
    got = api_client.get(f"/api/recommend?model=llama-3-8b&method=lora&tokens={raw}")
    for response in (posted, got):
        assert response.status_code == 400, response.content[:200]
        assert response.json()["errors"]["workload"]["tokens"] == ["Must be a number."]
    constraint = (
        '{"workload": {"model": "llama-3-8b", "method": "lora"}, '
        '"constraints": {"max_hours": ' + raw + "}}"
    )
    response = api_client.generic(
        "POST", "/api/recommend", constraint, content_type="application/json"
    )
    assert response.status_code == 400
    assert "max_hours" in response.json()["errors"]["constraints"]


def test_a_large_finite_number_says_its_bounds(api_client):
    response = api_client.get("/api/recommend?model=llama-3-8b&method=lora&tokens=1e308")
    assert response.status_code == 400
    (message,) = response.json()["errors"]["workload"]["tokens"]
    assert message.startswith("Must be between")


@pytest.mark.parametrize("path", ["/api/recommend", "/api/recommend/"])
def test_the_sizing_operations_answer_with_or_without_the_slash(api_client, path):
    """docs/api.md names /api/recommend, the OpenAPI schema /api/recommend/: both answer."""
    response = api_client.get(path + "?model=llama-3-8b&method=lora&limit=1")
    assert response.status_code == 200
    compare = api_client.post(
        path.replace("recommend", "compare"),
        {"workload": {"model": "llama-3-8b", "method": "lora"}, "targets": [{"gpu": "h100-sxm"}]},
        format="json",
    )
    assert compare.status_code == 200
