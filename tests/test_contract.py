"""The API contract: the OpenAPI schema only grows, CSV exports round-trip, reads revalidate."""

from __future__ import annotations

import csv
import gzip
import io
import json
from pathlib import Path

import pytest
from drf_spectacular.generators import SchemaGenerator

ROOT = Path(__file__).resolve().parent.parent
COMMITTED = ROOT / "docs" / "openapi.json"


def _current_schema() -> dict:
    schema = SchemaGenerator().get_schema(request=None, public=True)
    return json.loads(json.dumps(schema, default=str))


def _properties(schema: dict, name: str) -> dict:
    return schema.get("components", {}).get("schemas", {}).get(name, {}).get("properties", {})


def test_schema_carries_a_version():
    assert _current_schema()["info"]["version"]


def test_no_path_field_or_parameter_was_removed_or_renamed():
    """Adding is fine; removing or renaming a path, method, parameter or response field breaks
    other teams' tools. Regenerate docs/openapi.json (make schema) only for additions."""
    old, new = json.loads(COMMITTED.read_text()), _current_schema()
    problems = []
    for path, methods in old["paths"].items():
        if path not in new["paths"]:
            problems.append(f"path removed: {path}")
            continue
        for method, operation in methods.items():
            if method not in new["paths"][path]:
                problems.append(f"method removed: {method.upper()} {path}")
                continue
            kept = {p["name"] for p in new["paths"][path][method].get("parameters", [])}
            for parameter in operation.get("parameters", []):
                if parameter["name"] not in kept:
                    problems.append(
                        f"parameter removed: {method.upper()} {path} {parameter['name']}"
                    )
    for name, component in old.get("components", {}).get("schemas", {}).items():
        now = _properties(new, name)
        if name not in new.get("components", {}).get("schemas", {}):
            problems.append(f"schema removed: {name}")
            continue
        for field, spec in component.get("properties", {}).items():
            if field not in now:
                problems.append(f"field removed: {name}.{field}")
            elif spec.get("type") and now[field].get("type") and spec["type"] != now[field]["type"]:
                problems.append(
                    f"field type changed: {name}.{field} {spec['type']} -> {now[field]['type']}"
                )
    assert not problems, "\n".join(problems)


def test_committed_schema_is_up_to_date_with_additions():
    old, new = json.loads(COMMITTED.read_text()), _current_schema()
    assert set(new["paths"]) == set(old["paths"]), "run `make schema` and commit docs/openapi.json"


@pytest.mark.django_db
@pytest.mark.parametrize(
    "url",
    [
        "/api/prices/?provider=aws&format=csv",
        "/api/gpus/?format=csv",
        "/api/instance-types/?format=csv",
    ],
)
def test_csv_round_trips(api_client, url):
    response = api_client.get(url)
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    as_json = api_client.get(url.replace("format=csv", "page_size=1000")).json()
    assert len(rows) == as_json["count"]  # the whole filtered set, not one page
    first = as_json["results"][0]
    for key in ("slug", "name", "usd_per_hour", "gpu_count"):
        if key in first:
            assert str(first[key]) == rows[0][key] or float(rows[0][key]) == pytest.approx(
                float(first[key])
            )


@pytest.mark.django_db
def test_csv_by_accept_header_and_for_recommendations(api_client):
    response = api_client.get("/api/gpus/", HTTP_ACCEPT="text/csv")
    assert response["Content-Type"].startswith("text/csv")
    rec = api_client.get(
        "/api/recommend?model=llama-3-8b&method=qlora&tokens=1e7&limit=5&format=csv"
    )
    assert rec.status_code == 200, rec.content
    rows = list(csv.DictReader(io.StringIO(rec.content.decode())))
    assert len(rows) == 5 and {
        "rank",
        "provider",
        "instance_type",
        "est_total_usd",
        "interconnect.intra_node",
    } <= set(rows[0])


@pytest.mark.django_db
def test_conditional_get_answers_304_until_the_data_changes(api_client):
    from catalog.models import Price

    first = api_client.get("/api/prices/?provider=lambda")
    etag = first["ETag"]
    assert etag and "no-cache" in first["Cache-Control"]
    again = api_client.get("/api/prices/?provider=lambda", HTTP_IF_NONE_MATCH=etag)
    assert again.status_code == 304
    price = (
        Price.objects.filter(instance_type__provider__slug="lambda")
        .order_by("usd_per_gpu_hour")
        .first()
    )
    price.amount += 1
    price.usd_per_hour += 1
    price.save()
    changed = api_client.get("/api/prices/?provider=lambda", HTTP_IF_NONE_MATCH=etag)
    assert changed.status_code == 200


@pytest.mark.django_db
def test_large_responses_are_gzipped(api_client):
    response = api_client.get("/api/prices/?page_size=500", HTTP_ACCEPT_ENCODING="gzip")
    assert response["Content-Encoding"] == "gzip"
    assert json.loads(gzip.decompress(response.content))["results"]


def test_client_file_is_served(client):
    response = client.get("/client/gpuatlas.py")
    assert response.status_code == 200
    body = b"".join(response.streaming_content)
    assert b"def main" in body


@pytest.mark.django_db
def test_estimates_and_plans_carry_their_ranges(api_client):
    """Issue 18: every estimate and plan states [low, high] beside its figures, in the schema
    and in the answers."""
    schema = _current_schema()
    estimate_keys = {
        "memory_per_gpu_gib_range",
        "gpu_hours_range",
        "est_hours_range",
        "tokens_per_second_range",
        "range_basis",
        "fit_on",
        "fits_point",
    }
    assert estimate_keys <= set(_properties(schema, "EstimateOutput"))
    plan_keys = {
        "memory_per_gpu_gib_range",
        "est_hours_range",
        "gpu_hours_range",
        "est_total_usd_range",
    }
    assert plan_keys <= set(_properties(schema, "Recommendation"))
    assert "fit_on" in _properties(schema, "ConstraintsRequest")
    assert "fit_on" in _properties(schema, "EstimateInputRequest")

    body = {"workload": {"model": "llama-3-8b", "method": "lora", "tokens": 1e8}, "gpu": "h100-sxm"}
    answer = api_client.post("/api/estimate", body, format="json").json()
    assert estimate_keys <= set(answer)
    low, high = answer["memory_per_gpu_gib_range"]
    assert low <= answer["memory_per_gpu_gib"] <= high
    rec = api_client.post(
        "/api/recommend", {"workload": body["workload"], "limit": 2}, format="json"
    ).json()
    assert rec["recommendations"]
    for item in rec["recommendations"]:
        assert plan_keys <= set(item)


# --- The schema tells the truth about errors and access (api/schema.py) -------------------


def _operations(schema: dict):
    for path, methods in schema["paths"].items():
        for method, operation in methods.items():
            yield path, method, operation


def test_every_operation_documents_its_error_answers():
    schema = _current_schema()
    for path, method, operation in _operations(schema):
        codes = set(operation["responses"])
        expected = {"400", "401", "406", "414", "429", "503"}
        if method == "post":
            expected |= {"403", "413", "415"}
        if "{" in path:
            expected.add("404")
        assert expected <= codes, f"{method.upper()} {path} lacks {sorted(expected - codes)}"
        bad = operation["responses"]["400"]["content"]["application/json"]["schema"]
        assert {"$ref": "#/components/schemas/ValidationError"} in bad["oneOf"]
        for code in ("429", "503"):
            assert "Retry-After" in operation["responses"][code]["headers"]
    errors = schema["components"]["schemas"]["ValidationError"]
    assert errors["required"] == ["errors"]


def test_anonymous_operations_say_they_need_no_token():
    by_operation = {
        (path, method): operation.get("security", [])
        for path, method, operation in _operations(_current_schema())
    }
    assert {} in by_operation[("/api/gpus/", "get")]
    assert {} in by_operation[("/api/recommend/", "post")]  # computes only: anonymous allowed
    refresh = by_operation[("/api/refresh/{provider}/", "post")]
    assert refresh and {} not in refresh


def test_anonymous_reads_need_a_token_in_the_schema_when_the_api_does(settings):
    settings.API_REQUIRE_TOKEN_FOR_READS = True
    gpus = _current_schema()["paths"]["/api/gpus/"]["get"]
    assert {} not in gpus["security"]


def test_nullable_fields_presets_and_filter_types():
    schema = _current_schema()
    components = schema["components"]["schemas"]
    assert components["GPU"]["properties"]["export_variant_of"]["nullable"] is True
    for name in ("interconnect_intra", "interconnect_inter"):
        assert components["InstanceType"]["properties"][name]["nullable"] is True
    from sizing.presets import load_presets

    model = components["WorkloadSchemaRequest"]["properties"]["model"]
    refs = [item["$ref"].rsplit("/", 1)[1] for item in model.get("oneOf", model.get("allOf"))]
    enum = {value for ref in refs for value in components[ref]["enum"]} - {None}
    assert enum == set(load_presets()) and model["nullable"] is True  # null: not given
    parameters = {
        p["name"]: p for p in schema["paths"]["/api/instance-types/"]["get"]["parameters"]
    }
    assert parameters["min_vcpus"]["schema"]["type"] == "number"  # ?min_vcpus=0.5 is taken
    assert parameters["provider_id"]["schema"]["type"] == "integer"
    assert parameters["rdma"]["allowEmptyValue"] is True
    assert parameters["page_size"]["schema"]["maximum"] == 1000


def _validates(schema: dict, name: str, body: dict) -> None:
    import jsonschema

    component = schema["components"]["schemas"][name]
    jsonschema.validate(body, component)


@pytest.mark.django_db
@pytest.mark.parametrize(
    "url, field",
    [
        ("/api/gpus/?vendor=nvidia&vendor=amd", "vendor"),
        ("/api/gpus/?format=xml", "format"),
        ("/api/prices/?format=csv&page=first", "page"),
        ("/api/scrape-runs/health/?provider=nosuch", "provider"),
        ("/api/recommend?model=llama-3-8b&format=yaml", "format"),
    ],
)
def test_refusals_are_400s_naming_the_parameter_in_the_documented_shape(api_client, url, field):
    response = api_client.get(url)
    assert response.status_code == 400, response.content
    if response["Content-Type"].startswith("text/csv"):  # rendered as asked, as one row
        assert f"errors.{field}" in response.content.decode().splitlines()[0]
        return
    body = json.loads(response.content)
    assert field in body["errors"]
    _validates(_current_schema(), "ValidationError", body)


@pytest.mark.django_db
def test_the_committed_schema_documents_what_the_api_answers(api_client):
    committed = json.loads(COMMITTED.read_text())
    body = api_client.get("/api/gpus/no-such-gpu/").json()
    _validates(committed, "Error", body)
    assert "404" in committed["paths"]["/api/gpus/{slug}/"]["get"]["responses"]


@pytest.mark.parametrize(
    "module", ["api.errors", "api.filters", "api.pagination", "api.renderers", "api.schema"]
)
def test_each_api_module_loads_first_in_a_fresh_process(module):
    """The REST_FRAMEWORK settings name api classes that DRF imports while its own views load;
    an import cycle shows only in the order where an api module comes first."""
    import subprocess
    import sys

    code = (
        "import django; django.setup(); import " + module + "; "
        "from rest_framework.settings import api_settings as s; "
        "s.DEFAULT_CONTENT_NEGOTIATION_CLASS, s.DEFAULT_PAGINATION_CLASS, s.DEFAULT_SCHEMA_CLASS"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]


@pytest.mark.django_db
def test_the_schemas_example_requests_are_answered(api_client):
    """The example requests the schema shows (and schemathesis sends first) reach the planner
    over the curated catalog; the workload says what its model is (a null reads as not given)."""
    committed = json.loads(COMMITTED.read_text())
    sent = 0
    for path, method, operation in _operations(committed):
        content = operation.get("requestBody", {}).get("content", {}).get("application/json", {})
        for example in content.get("examples", {}).values():
            response = api_client.post(path, example["value"], format="json")
            assert response.status_code == 200, (path, response.content[:500])
            sent += 1
        query = {
            p["name"]: next(iter(p["examples"].values()))["value"]
            for p in operation.get("parameters", [])
            if p.get("examples")
        }
        if method == "get" and query:
            response = api_client.get(path, query)
            assert response.status_code == 200, (path, response.content[:500])
            assert response.json()["recommendations"]
            sent += 1
    assert sent >= 4  # estimate, recommend (POST and GET), compare
    workload = committed["components"]["schemas"]["WorkloadSchemaRequest"]
    assert workload["anyOf"] == [
        {"required": ["model"]},
        {"required": ["params_b"]},
        {"required": ["architecture"]},
    ]
    assert workload["additionalProperties"] is False


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("field", "value"),
    [
        # booleans take only true or false
        *(("include_stale", value) for value in (0, 1, "yes", "on")),
        # numbers take no booleans
        *(("min_gpu_memory_gb", value) for value in (False, True)),
        # name lists take only strings
        ("countries", [0]),
    ],
)
def test_constraints_take_only_their_own_type(api_client, field, value):
    body = {"workload": {"model": "llama-3-8b"}, "constraints": {field: value}}
    response = api_client.post("/api/recommend", body, format="json")
    assert response.status_code == 400
    assert field in response.json()["errors"]["constraints"]
