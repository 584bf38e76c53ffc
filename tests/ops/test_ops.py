"""Operations: deploy checks, health, metrics, request ids, throttling, auth rules."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from unittest import mock

import pytest
import yaml
from django.core.cache import cache

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.django_db


def test_check_deploy_is_clean_with_production_settings():
    env = {k: v for k, v in os.environ.items() if k not in ("DJANGO_DEBUG",)}
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings.production",
        DJANGO_SECRET_KEY="k" * 20 + "-not-a-real-secret-but-long-and-random-enough-9f8e7d6c5b4a",
        DJANGO_ALLOWED_HOSTS="gpuatlas.example.org",
    )
    out = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert out.returncode == 0, out.stdout + out.stderr
    assert "no issues" in out.stdout


def test_healthz_reports_database_redis_and_refresh_ages(client):
    response = client.get("/healthz")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok" and body["checks"]["database"]["ok"]
    assert set(body["providers"]) >= {"aws", "lambda", "autodl"}


def test_healthz_is_503_when_the_database_is_down(client):
    with mock.patch("ops.views.connection.cursor", side_effect=RuntimeError("connection refused")):
        response = client.get("/healthz")
    assert response.status_code == 503
    assert response.json()["checks"]["database"]["ok"] is False


def test_healthz_is_503_when_redis_is_down(client, settings):
    settings.REDIS_URL = "redis://127.0.0.1:1/0"  # nothing listens on port 1
    response = client.get("/healthz")
    assert response.status_code == 503
    assert response.json()["checks"]["redis"]["ok"] is False


def test_metrics_in_prometheus_text_format(client):
    client.get("/api/gpus/")
    response = client.get("/metrics")
    assert response.status_code == 200 and response["Content-Type"].startswith("text/plain")
    text = response.content.decode()
    for name in (
        "gpuatlas_http_requests_total", "gpuatlas_http_request_duration_seconds_bucket",
        "gpuatlas_prices{", "gpuatlas_prices_stale{", "gpuatlas_scrape_runs",
    ):  # fmt: skip
        assert name in text, name


def test_metrics_token(client, settings):
    settings.METRICS_TOKEN = "s3cret-token"
    assert client.get("/metrics").status_code == 401
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer s3cret-token").status_code == 200


def test_request_id_is_kept_or_made(client):
    given = client.get("/api/gpus/t4/", HTTP_X_REQUEST_ID="ci-run-42")
    assert given["X-Request-ID"] == "ci-run-42"
    made = client.get("/api/gpus/t4/", HTTP_X_REQUEST_ID="bad id with spaces")
    assert len(made["X-Request-ID"]) == 32


def test_json_logs_carry_the_request_id():
    import logging

    from ops.context import request_id
    from ops.logging import JsonFormatter, RequestIdFilter

    token = request_id.set("abc123")
    try:
        record = logging.makeLogRecord(
            {"msg": "refreshed %s", "args": ("aws",), "levelname": "INFO", "name": "t"}
        )
        RequestIdFilter().filter(record)
        line = json.loads(JsonFormatter().format(record))
    finally:
        request_id.reset(token)
    assert line["message"] == "refreshed aws" and line["request_id"] == "abc123"


def test_anonymous_reads_are_throttled(api_client, settings):
    from rest_framework.throttling import AnonRateThrottle

    cache.clear()
    with mock.patch.object(AnonRateThrottle, "THROTTLE_RATES", {"anon": "3/minute"}):
        codes = [api_client.get("/api/interconnects/").status_code for _ in range(5)]
    cache.clear()
    assert codes[:3] == [200, 200, 200] and codes[-1] == 429


def test_token_users_are_not_throttled_as_anonymous(staff_client):
    from rest_framework.throttling import AnonRateThrottle

    cache.clear()
    with mock.patch.object(AnonRateThrottle, "THROTTLE_RATES", {"anon": "1/minute"}):
        codes = [staff_client.get("/api/interconnects/").status_code for _ in range(3)]
    assert codes == [200, 200, 200]


def test_admin_is_staff_only(client, django_user_model):
    user = django_user_model.objects.create_user("viewer", password="x-viewer-pw-1")
    client.force_login(user)
    response = client.get("/admin/catalog/price/")
    assert response.status_code == 302 and "/admin/login/" in response["Location"]


def test_docker_compose_wires_the_production_services():
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    services = compose["services"]
    assert {"postgres", "redis", "web", "worker", "beat"} <= set(services)
    assert "postgres-data:/var/lib/postgresql/data" in services["postgres"]["volumes"]
    for name in ("postgres", "redis"):
        assert services[name]["healthcheck"]["test"]
    assert "gunicorn" in services["web"]["command"] and "migrate" in services["web"]["command"]
    assert "worker" in services["worker"]["command"] and "beat" in services["beat"]["command"]
    assert "django_celery_beat.schedulers:DatabaseScheduler" in services["beat"]["command"]
    for name in ("web", "worker", "beat"):
        env = services[name]["environment"]
        assert env["DATABASE_URL"].startswith("postgres://") and env["REDIS_URL"].startswith(
            "redis://"
        )
        assert services[name]["depends_on"]["postgres"]["condition"] == "service_healthy"
    text = (ROOT / "docker-compose.yml").read_text()
    assert "POSTGRES_PASSWORD: ${POSTGRES_PASSWORD" in text  # from the environment, never written


def test_env_example_lists_every_setting_the_code_reads():
    import re

    example = (ROOT / ".env.example").read_text()
    names = set()
    for path in (ROOT / "config" / "settings").glob("*.py"):
        names |= set(re.findall(r'env(?:\.\w+)?\(\s*"([A-Z_]+)"', path.read_text()))
    missing = sorted(n for n in names if n not in example)
    assert not missing, missing


def test_no_secrets_in_the_repository():
    tracked = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True
    ).stdout.split()
    assert ".env" not in tracked
