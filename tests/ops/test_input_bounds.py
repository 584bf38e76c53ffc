"""Hostile requests get a JSON 4xx, never a 5xx: deep nesting, huge integers, oversized and
chunked bodies, a bad Host header, unknown API URLs."""

from __future__ import annotations

import io
import json
import logging

import pytest
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db
POST_OPERATIONS = ["/api/estimate", "/api/recommend", "/api/compare"]
WORKLOAD = {"model": "llama-3-8b", "method": "lora", "tokens": 200_000_000}


@pytest.fixture
def api():
    return APIClient(raise_request_exception=False)


def _post(api, path: str, body: str | bytes, **extra):
    return api.generic("POST", path, body, content_type="application/json", **extra)


@pytest.mark.parametrize("path", POST_OPERATIONS)
@pytest.mark.parametrize("depth", [40, 1000, 100_000])
def test_deeply_nested_json_is_a_400(api, path, depth):
    response = _post(api, path, "[" * depth + "]" * depth)
    assert response.status_code == 400
    assert "nested deeper than 32" in response.json()["detail"]


def test_nesting_within_the_bound_reaches_the_view(api):
    body = {"workload": {**WORKLOAD, "x": [[[[1]]]]}}
    response = _post(api, "/api/estimate", json.dumps(body))
    assert response.status_code == 400 and "nested" not in response.content.decode()


@pytest.mark.parametrize("field", ["tokens", "params_b"])
def test_integers_beyond_float_range_are_a_400_naming_the_field(api, field):
    body = json.dumps({"workload": {**WORKLOAD, field: 1}}).replace(": 1}", ": 1" + "0" * 309 + "}")
    assert ("0" * 309) in body
    response = _post(api, "/api/estimate", body)
    assert response.status_code == 400, response.content[:300]
    assert field in response.json()["errors"]["workload"], response.json()


def test_nan_and_infinity_literals_are_a_parse_error(api):
    body = json.dumps({"workload": WORKLOAD}).replace("200000000", "NaN")
    response = _post(api, "/api/estimate", body)
    assert response.status_code == 400 and "NaN" in response.json()["detail"]


def test_an_oversized_body_is_a_json_413_before_it_is_read(api, settings):
    settings.REQUEST_MAX_BODY_BYTES = 1000
    response = _post(api, "/api/estimate", b"x" * 10_000)
    assert response.status_code == 413
    assert "larger than 1000 bytes" in response.json()["detail"]


def test_ten_megabytes_is_refused_with_json(api):
    response = _post(api, "/api/recommend", b" " * (10 * 1024 * 1024))
    assert response.status_code == 413 and response["Content-Type"] == "application/json"


def _chunked(body: bytes) -> dict:
    return {
        "CONTENT_LENGTH": "",
        "HTTP_TRANSFER_ENCODING": "chunked",
        "wsgi.input": io.BytesIO(body),
    }


def test_a_chunked_body_is_read(api):
    body = json.dumps({"workload": WORKLOAD}).encode()
    response = _post(api, "/api/estimate", body, **_chunked(body))
    assert response.status_code == 200, response.content[:300]
    assert response.json()["memory_per_gpu_gib"] > 0


def test_an_oversized_chunked_body_is_a_413(api, settings):
    settings.REQUEST_MAX_BODY_BYTES = 1000
    body = b"[" + b"1," * 2000 + b"1]"
    response = _post(api, "/api/estimate", body, **_chunked(body))
    assert response.status_code == 413


def test_invalid_content_length_is_a_400(api):
    response = _post(api, "/api/estimate", b"{}", CONTENT_LENGTH="abc")
    assert response.status_code == 400 and response.json()["detail"] == "invalid Content-Length"


def test_a_bad_host_is_a_json_400_on_the_api_logged_once_without_traceback(api, client, caplog):
    caplog.set_level(logging.INFO)
    response = api.get("/api/gpus/", HTTP_HOST="evil.example")
    assert response.status_code == 400
    assert response.json() == {"detail": "Host header not served here"}
    page = client.get("/gpus", HTTP_HOST="evil.example")
    assert page.status_code == 400 and page["Content-Type"].startswith("text/html")
    host_lines = [r for r in caplog.records if "evil.example" in r.getMessage()]
    assert len(host_lines) == 2  # one per request
    from ops.logging import ClientErrorFilter

    for record in host_lines:
        ClientErrorFilter().filter(record)
        assert record.levelno == logging.WARNING and record.exc_info is None


def test_unknown_api_urls_are_a_json_404(api):
    response = api.get("/api/no-such-thing/")
    assert response.status_code == 404 and response.json() == {"detail": "Not found."}


@pytest.mark.parametrize("field", ["tensor_parallel", "pipeline_parallel"])
def test_recommend_and_compare_refuse_a_fixed_parallel_layout_with_a_400(api, field):
    response = api.get(f"/api/recommend?model=llama-3-70b&method=lora&tokens=1e8&{field}=8")
    assert response.status_code == 400
    assert field in response.json()["errors"]["workload"]
    body = {"workload": {**WORKLOAD, field: 2}}
    posted = _post(api, "/api/recommend", json.dumps(body))
    assert posted.status_code == 400 and field in posted.json()["errors"]["workload"]
    compare = {"workload": {**WORKLOAD, field: 2}, "targets": [{"gpu": "h100-sxm"}]}
    compared = _post(api, "/api/compare", json.dumps(compare))
    assert compared.status_code == 400 and field in compared.json()["errors"]["workload"]


def test_recommend_accepts_the_default_layout(api):
    response = api.get("/api/recommend?model=llama-3-8b&method=lora&tokens=1e8&tensor_parallel=1")
    assert response.status_code == 200


@pytest.mark.parametrize("name", ["gpu", "provider", "region"])
@pytest.mark.parametrize("value", ["%s", "%", "%(x)s", "100%"])
def test_percent_signs_in_name_filters_are_a_400_naming_the_filter(api, name, value):
    response = api.get("/api/prices/", {name: value})
    assert response.status_code == 400
    messages = response.json()["errors"][name]
    assert any(value in message for message in messages)


@pytest.mark.parametrize(
    "path",
    ["/api/providers/", "/api/regions/", "/api/prices/", "/api/gpus/", "/api/interconnects/"],
)
def test_boolean_filters_refuse_values_they_do_not_understand(api, path):
    name = (
        "rdma"
        if "interconnects" in path
        else ("datacenter_use_allowed" if "gpus" in path else "mainland_china")
    )
    bad = api.get(path, {name: "maybe"})
    assert bad.status_code == 400 and bad.json()["errors"][name] == ["must be true or false"]


def test_boolean_filters_accept_1_0_true_false(api):
    everyone = api.get("/api/providers/").json()["count"]
    mainland = [
        api.get("/api/providers/", {"mainland_china": v}).json()["count"]
        for v in ("1", "true", "True", "yes")
    ]
    elsewhere = [
        api.get("/api/providers/", {"mainland_china": v}).json()["count"]
        for v in ("0", "false", "no")
    ]
    assert len(set(mainland)) == 1 and len(set(elsewhere)) == 1
    assert 0 < mainland[0] < everyone and mainland[0] + elsewhere[0] == everyone


@pytest.mark.parametrize("offset", ["+16:00", "-18:30", "+23:59", "+00:00", "Z"])
def test_time_zone_offsets_are_compared_in_utc(api, offset):
    value = "2020-01-01T00:00:00" + offset
    for path, name in (
        ("/api/scrape-runs/", "since"),
        ("/api/prices/history/", "since"),
        ("/api/prices/history/", "until"),
    ):
        response = api.get(path, {name: value})
        assert response.status_code == 200, (path, name, response.content[:200])


def test_a_time_zone_offset_of_a_day_or_more_is_a_400(api):
    response = api.get("/api/scrape-runs/", {"since": "2020-01-01T00:00:00+24:00"})
    assert response.status_code == 400 and "since" in response.json()["errors"]


@pytest.mark.parametrize("name", ["gpus", "providers", "regions"])
def test_constraint_name_lists_are_bounded(api, name):
    from sizing.api.serializers import MAX_LIST_ITEMS, MAX_NAME_CHARS

    many = [f"no-such-{i}" for i in range(MAX_LIST_ITEMS + 1)]
    body = {"workload": WORKLOAD, "constraints": {name: many}}
    response = _post(api, "/api/recommend", json.dumps(body))
    assert response.status_code == 400
    errors = response.json()["errors"]["constraints"][name]
    assert len(json.dumps(errors)) < 1000  # one message, not one per name
    long_name = {"workload": WORKLOAD, "constraints": {name: ["x" * (MAX_NAME_CHARS + 1)]}}
    assert _post(api, "/api/recommend", json.dumps(long_name)).status_code == 400
