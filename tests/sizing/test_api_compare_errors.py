"""/api/compare names the field at fault in a target, and bounds read as people write them."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db

WORKLOAD = {"model": "llama-3-8b", "task": "finetune", "method": "lora", "tokens": 1e8}


def _errors(api_client, targets):
    response = api_client.post(
        "/api/compare", {"workload": WORKLOAD, "targets": targets}, format="json"
    )
    assert response.status_code == 400, response.content
    return response.json()["errors"]["targets"]


def test_an_unknown_gpu_target_is_named_by_its_field(api_client):
    # (a100-40gb is the catalog's alias "A100 40GB" folded, so it names a GPU: see below.)
    errors = _errors(api_client, [{"gpu": "h100-sxm"}, {"gpu": "a100-48gb"}])
    assert list(errors) == ["1"]
    assert list(errors["1"]) == ["gpu"]
    message = errors["1"]["gpu"][0]
    assert message.startswith("unknown GPU 'a100-48gb' (did you mean a100-")


def test_an_unknown_instance_type_or_provider_is_named_by_its_field(api_client):
    errors = _errors(
        api_client,
        [
            {"provider": "aws", "instance_type": "p4d.24xlarg"},
            {"provider": "aliyun", "instance_type": "ecs.gn7i-c8g1.2xlarge"},
        ],
    )
    assert list(errors["0"]) == ["instance_type"]
    assert "unknown instance type aws/p4d.24xlarg" in errors["0"]["instance_type"][0]
    assert "p4d.24xlarge" in errors["0"]["instance_type"][0]
    assert list(errors["1"]) == ["provider"]
    assert "did you mean alibaba?" in errors["1"]["provider"][0]


def test_a_target_naming_neither_or_both_stays_an_error_of_the_target(api_client):
    errors = _errors(api_client, [{"provider": "aws"}])
    assert "non_field_errors" in errors["0"]


def test_a_bound_is_not_in_e_notation(api_client):
    response = api_client.get("/api/recommend", {"model": "llama-3-8b", "seq_len": 9999999})
    assert response.status_code == 400
    assert response.json()["errors"]["workload"]["seq_len"] == ["Must be between 1 and 1,048,576."]
