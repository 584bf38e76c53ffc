"""parse_page on every provider's recorded pages; refresh_prices and /api/refresh over loopback."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command

from catalog.models import Price, ScrapeRun
from scrapers.registry import scraper_keys
from tests.scrapers.loopback import PAGES, LoopbackServer, point_settings_at

ROOT = Path(__file__).resolve().parents[2]
PRICE_SOURCES = [
    key for key in sorted(p.name for p in PAGES.iterdir() if p.is_dir()) if key != "ecb"
]


def parse_page(provider: str, path: Path, url: str = "") -> subprocess.CompletedProcess:
    args = [sys.executable, "manage.py", "parse_page", "--provider", provider, str(path)]
    if url:
        args += ["--url", url]
    return subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=120)


def test_every_provider_has_a_scraper_and_recorded_pages():
    assert set(PRICE_SOURCES) == {
        "aws", "azure", "gcp", "alibaba", "tencent", "huawei", "lambda", "coreweave", "runpod",
        "vastai", "autodl",
    }  # fmt: skip
    assert set(PRICE_SOURCES) <= set(scraper_keys())


@pytest.mark.parametrize("provider", PRICE_SOURCES)
def test_parse_page_prints_records_of_a_recorded_page(provider):
    routes = json.loads((PAGES / provider / "manifest.json").read_text(encoding="utf-8"))
    printed = 0
    for route in routes:
        if route.get("status", 200) != 200:
            continue
        url = f"http://127.0.0.1/{provider}{route['path']}"
        out = parse_page(provider, PAGES / provider / route["file"], url=url)
        if out.returncode == 0:
            records = json.loads(out.stdout)
            for record in records:
                assert {
                    "instance_type",
                    "gpu_name",
                    "gpu_count",
                    "region",
                    "pricing_model",
                    "amount",
                    "currency",
                    "unit",
                } <= set(record)
            printed += len(records)
        else:
            assert out.stderr.count("\n") == 1 and "Traceback" not in out.stderr, out.stderr
    assert printed > 0


def test_parse_page_fails_in_one_line_on_garbage(tmp_path):
    garbage = tmp_path / "page.json"
    garbage.write_text('{"truncated": [1, 2', encoding="utf-8")
    for provider in ("aws", "runpod", "lambda"):
        out = parse_page(provider, garbage)
        assert out.returncode != 0
        assert (
            out.stderr.startswith("error:")
            and out.stderr.count("\n") == 1
            and "Traceback" not in out.stderr
        )
    unknown = parse_page("nosuchcloud", garbage)
    assert unknown.returncode != 0 and "nosuchcloud" in unknown.stderr


@pytest.mark.django_db
def test_refresh_prices_command_over_loopback(settings):
    with LoopbackServer() as server:
        point_settings_at(server, settings)
        call_command("refresh_prices", "--provider", "runpod")
    run = ScrapeRun.objects.get(provider__slug="runpod")
    assert run.status in ("success", "partial") and run.records_seen > 0
    assert Price.objects.filter(instance_type__provider__slug="runpod", source="scraper").exists()


@pytest.fixture
def eager_celery():
    """Run queued tasks in-process, whatever broker the settings name (CI's second pass has Redis)."""
    from config.celery_app import app

    before = app.conf.task_always_eager
    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = before


@pytest.mark.django_db
def test_refresh_api_needs_a_permitted_token(api_client, django_user_model, settings, eager_celery):
    from django.contrib.auth.models import Permission
    from rest_framework.authtoken.models import Token

    assert api_client.post("/api/refresh/runpod/").status_code == 401
    user = django_user_model.objects.create_user("bot", password="x-bot-pw-123")
    api_client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    assert api_client.post("/api/refresh/runpod/").status_code == 403
    user.user_permissions.add(Permission.objects.get(codename="add_scraperun"))
    with LoopbackServer() as server:
        point_settings_at(server, settings)
        response = api_client.post("/api/refresh/runpod/")
    assert response.status_code == 202 and response.json()["provider"] == "runpod"
    assert api_client.post("/api/refresh/no-such-cloud/").status_code == 404
    assert ScrapeRun.objects.filter(provider__slug="runpod", trigger="api").exists()


@pytest.mark.django_db
def test_providers_endpoint_shows_last_run(api_client, settings):
    with LoopbackServer() as server:
        point_settings_at(server, settings)
        call_command("refresh_prices", "--provider", "lambda")
    body = api_client.get("/api/providers/lambda/").json()
    assert body["last_run_status"] in ("success", "partial") and body["last_run_at"]
    assert body["scraper_key"] == "lambda" and body["price_count"] > 0
    runs = api_client.get("/api/scrape-runs/?provider=lambda").json()["results"]
    assert runs and runs[0]["records_seen"] > 0


@pytest.mark.django_db
def test_currency_refresh_stores_ecb_rates_and_renormalises(settings):
    from decimal import Decimal

    from catalog.models import CurrencyRate
    from scrapers.services import currency_rates_refresh

    price = Price.objects.filter(currency="CNY").select_related("instance_type").first()
    price.usd_per_hour = Decimal("999")
    price.save()
    with LoopbackServer() as server:
        settings.SCRAPER_BASE_URLS = {"ecb": server.base_url("ecb")}
        stored = currency_rates_refresh()
    assert stored >= 10 and CurrencyRate.objects.filter(currency="CNY").exists()
    price.refresh_from_db()
    assert price.usd_per_hour < Decimal("999")


def test_parse_page_explain_shows_rows_read_skipped_and_unmatched():
    out = io.StringIO()
    call_command(
        "parse_page", "--provider", "gcp", "--explain", "--meta", "kind=catalog",
        str(PAGES / "gcp" / "a3-real-names.json"), stdout=out,
    )  # fmt: skip
    text = out.getvalue()
    assert "read: 2 record(s)" in text  # A3 Ultra's on-demand sum is skipped (SOLD_ONLY_AS)
    assert "a3-ultragpu-8g us-central1 on_demand: sold only as spot" in text
    assert "a3-megagpu-8g | us-central1 | on_demand | 92.742368 USD/hour" in text
    assert "Reserved Nvidia H100 80GB Mega GPU in Americas in Calendar Mode: GPU booking" in text
    assert "unmatched: 1\n  sku A4 Nvidia B200 (1 gpu slice) running in Americas" in text
