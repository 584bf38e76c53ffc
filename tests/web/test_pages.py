"""The pages over the curated catalog, through Django's test client: status, filters, CSV, i18n."""

from __future__ import annotations

import csv
import io
import re
from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from catalog.models import GPU, Price, ScrapeRun
from tests.factories import InstanceTypeFactory, PriceFactory, ProviderFactory, RegionFactory

pytestmark = pytest.mark.django_db

PLAN_QUERY = (
    "/plan?model=llama-3-8b&task=finetune&method=lora&precision=bf16&tokens=2e8"
    "&pricing=on_demand&pricing=spot&objective=cheapest"
)


def text(response) -> str:
    return response.content.decode()


def csv_rows(response) -> list[dict[str, str]]:
    body = b"".join(response.streaming_content).decode()
    return list(csv.DictReader(io.StringIO(body)))


# --- Price browser ----------------------------------------------------------------------------


def test_price_browser_lists_prices_with_freshness(client):
    response = client.get("/")
    assert response.status_code == 200
    body = text(response)
    assert f"{Price.objects.filter(gone_at__isnull=True).count()} prices" in body
    assert 'lang="en"' in body and 'name="viewport"' in body
    assert "<caption" in body and 'scope="col"' in body
    assert "stale" in body  # the seed snapshot is older than PRICE_STALE_AFTER_DAYS
    assert len(response.context["page"].object_list) == 100  # paginated


def test_price_browser_filters_by_gpu_and_pricing_model(client):
    response = client.get("/?gpu=h100-sxm&pricing_model=spot")
    assert response.status_code == 200
    rows = list(response.context["page"].object_list)
    assert rows
    assert {p.instance_type.gpu.slug for p in rows} == {"h100-sxm"}
    assert {p.pricing_model for p in rows} == {"spot"}


def test_price_browser_filters_by_provider_region_and_memory(client):
    response = client.get("/?provider=aws&region=us-east-1&min_gpu_memory_gib=80")
    rows = list(response.context["page"].object_list)
    assert rows
    assert {p.instance_type.provider.slug for p in rows} == {"aws"}
    assert {p.region.code for p in rows} == {"us-east-1"}
    assert min(p.instance_type.gpu.memory_gib for p in rows) >= 80


def test_price_range_applies_per_gpu_hour_or_per_instance_hour(client):
    per_gpu = client.get("/?min_price=1&max_price=2&per=gpu").context["page"].paginator.object_list
    assert per_gpu.exists()
    assert all(Decimal(1) <= p.usd_per_gpu_hour <= Decimal(2) for p in per_gpu)
    per_instance = client.get("/?max_price=1&per=instance").context["page"].paginator.object_list
    assert per_instance.exists()
    assert all(p.usd_per_hour <= Decimal(1) for p in per_instance)


def test_mainland_china_and_freshness_filters(client):
    china = client.get("/?mainland_china=true").context["page"].paginator.object_list
    assert china.exists() and all(p.region.mainland_china for p in china)
    fresh = client.get("/?freshness=fresh").context["page"].paginator.object_list
    stale = client.get("/?freshness=stale").context["page"].paginator.object_list
    assert fresh.count() + stale.count() == Price.objects.filter(gone_at__isnull=True).count()
    assert all(p.is_stale for p in stale)


@pytest.mark.parametrize(
    ("sort", "key"),
    [
        ("usd_per_gpu_hour", lambda p: p.usd_per_gpu_hour),
        ("-usd_per_hour", lambda p: -p.usd_per_hour),
        ("memory", lambda p: p.instance_type.gpu.memory_gib),
        ("-observed", lambda p: -p.observed_at.timestamp()),
    ],
)
def test_price_browser_sorts_on_the_server(client, sort, key):
    response = client.get(f"/?sort={sort}")
    rows = list(response.context["page"].object_list)
    assert [key(p) for p in rows] == sorted(key(p) for p in rows)
    column = sort.lstrip("-")
    direction = "descending" if sort.startswith("-") else "ascending"
    assert f'aria-sort="{direction}"' in text(response)
    # The header link of the sorted column flips the direction and keeps the other parameters.
    flipped = column if sort.startswith("-") else f"-{column}"
    assert f"?sort={flipped}" in text(response)


def test_unknown_sort_falls_back_to_the_default(client):
    response = client.get("/?sort=password")
    assert response.status_code == 200
    rows = list(response.context["page"].object_list)
    assert [p.usd_per_gpu_hour for p in rows] == sorted(p.usd_per_gpu_hour for p in rows)


def test_price_browser_bad_filter_is_a_400_page_with_the_message(client):
    response = client.get("/?min_price=cheap&gpu=no-such-gpu")
    assert response.status_code == 400
    body = text(response)
    assert "errorlist" in body and "Correct the filters above." in body


def test_page_out_of_range_shows_the_last_page(client):
    response = client.get("/?page=9999")
    assert response.status_code == 200
    page = response.context["page"]
    assert page.number == page.paginator.num_pages


def test_stale_price_is_marked_and_fresh_one_is_not(client):
    fresh = PriceFactory(observed_at=timezone.now() - timedelta(days=1))
    response = client.get(f"/?provider={fresh.instance_type.provider.slug}")
    rows = list(response.context["page"].object_list)
    assert [p.pk for p in rows] == [fresh.pk] and rows[0].is_stale is False
    assert "stale-badge" not in text(response)


# --- CSV --------------------------------------------------------------------------------------


def test_csv_download_has_the_filtered_set(client):
    response = client.get("/prices.csv?gpu=a100-sxm4-80gb&pricing_model=on_demand&page=3")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    assert "attachment" in response["Content-Disposition"]
    rows = csv_rows(response)
    expected = Price.objects.filter(
        gone_at__isnull=True, instance_type__gpu__slug="a100-sxm4-80gb", pricing_model="on_demand"
    ).count()
    assert len(rows) == expected > 0  # every row, not one page
    assert {r["gpu"] for r in rows} == {"a100-sxm4-80gb"}
    assert {r["pricing_model"] for r in rows} == {"on_demand"}
    assert set(rows[0]) >= {"provider", "region", "usd_per_hour", "usd_per_gpu_hour", "stale"}
    values = [Decimal(r["usd_per_gpu_hour"]) for r in rows]
    assert values == sorted(values)


def test_csv_keeps_currency_as_listed(client):
    rows = csv_rows(client.get("/prices.csv?provider=autodl"))
    assert rows and "CNY" in {r["currency"] for r in rows}
    for row in rows:
        if row["currency"] == "CNY":  # normalised through the rate: a yuan is worth under a dollar
            assert Decimal(row["usd_per_hour"]) < Decimal(row["amount"])


def test_csv_bad_filter_is_400(client):
    assert client.get("/prices.csv?max_price=-1").status_code == 400


def test_browser_links_to_csv_with_the_same_filters(client):
    body = text(client.get("/?gpu=h100-sxm&page=2"))
    assert "/prices.csv?gpu=h100-sxm" in body
    assert "/prices.csv?gpu=h100-sxm&amp;page" not in body


# --- Plan -------------------------------------------------------------------------------------


def test_plan_form_alone_is_200_without_results(client):
    response = client.get("/plan")
    assert response.status_code == 200
    body = text(response)
    assert '<label for="id_model"' in body and '<label for="id_tokens"' in body
    assert "plans-table" not in body


def test_plan_gives_ranked_table_scatter_and_memory_bar(client):
    response = client.get(PLAN_QUERY)
    assert response.status_code == 200
    body = text(response)
    assert 'id="plans-table"' in body
    rows = response.context["rows"]
    assert 1 <= len(rows) <= 20
    assert [r["rank"] for r in rows] == list(range(1, len(rows) + 1))
    totals = [r["est_total_usd"] for r in rows]
    assert totals == sorted(totals)
    assert response.context["candidate_count"] > len(rows)  # the scatter draws more than the table
    assert body.count('<circle class="point') == response.context["candidate_count"]
    assert "Estimated total cost (USD)" in body and "Estimated time (hours)" in body
    assert 'class="segment"' in body and "Weights" in body  # the memory breakdown bar
    assert "GiB" in body and "$" in body


def test_plan_respects_constraints(client):
    response = client.get(PLAN_QUERY + "&providers=aws&providers=gcp&max_usd_per_hour=10")
    rows = response.context["answer"]["recommendations"]
    assert rows
    assert {r["provider"] for r in rows} <= {"aws", "gcp"}
    assert all(r["usd_per_hour"] <= 10 for r in rows)


def test_plan_matches_the_api(client):
    page = client.get(PLAN_QUERY).context["answer"]["recommendations"][:5]
    api = client.get(
        "/api/recommend?model=llama-3-8b&task=finetune&method=lora&precision=bf16"
        "&tokens=200000000&pricing=on_demand,spot&limit=5"
    ).json()["recommendations"]
    key = ("provider", "region", "instance_type", "pricing_model", "est_total_usd")
    assert [tuple(r[k] for k in key) for r in page] == [tuple(r[k] for k in key) for r in api]


def test_plan_url_carries_the_form(client):
    body = text(client.get(PLAN_QUERY + "&max_hours=50"))
    assert 'name="max_hours" value="50' in body
    assert '<option value="llama-3-8b" selected>' in body
    assert 'value="spot"' in body and "checked" in body


def test_plan_without_tokens_explains_the_missing_scatter(client):
    response = client.get("/plan?model=llama-3-8b&task=inference")
    assert response.status_code == 200
    assert 'id="plans-table"' in text(response)
    assert response.context["scatter"] == ""
    assert "training tokens" in text(response)


@pytest.mark.parametrize(
    ("query", "field", "message"),
    [
        ("model=no-such-model", "model", "Select a valid choice"),
        ("model=llama-3-8b&tokens=lots", "tokens", "Enter a number"),
        ("model=llama-3-8b&task=pretrain&method=lora", "method", "adapts a pretrained model"),
        ("model=llama-3-8b&batch_size=0", "batch_size", "Must be between"),
        ("params_b=5000", "params_b", "Must be between"),
        ("model=llama-3-8b&params_b=7", "params_b", "not both"),
        ("model=llama-3-8b&max_gpus=0", "max_gpus", "greater than or equal to 1"),
        ("task=finetune", "model", "Give a model preset name or params_b"),
    ],
)
def test_bad_plan_shows_errors_next_to_fields(client, query, field, message):
    response = client.get(f"/plan?{query}")
    assert response.status_code == 400
    form = response.context["form"]
    assert any(message in error for error in form.errors[field]), form.errors
    body = text(response)
    assert f'id="id_{field}_error"' in body
    assert "plans-table" not in body


def test_plan_that_fits_nothing_is_still_200_with_reasons(client):
    response = client.get("/plan?model=llama-3.1-405b&method=full&tokens=1e9&max_gpus=1")
    assert response.status_code == 200
    assert response.context["rows"] == []
    assert response.context["rejected"]
    assert "Nothing fits these constraints" in text(response)


# --- GPUs and providers -----------------------------------------------------------------------


def test_gpu_list(client):
    response = client.get("/gpus")
    assert response.status_code == 200
    assert text(response).count('href="/gpus/') == GPU.objects.count()


def test_gpu_page_has_specs_sources_instances_and_history(client):
    response = client.get("/gpus/h100-sxm")
    assert response.status_code == 200
    body = text(response)
    gpu = GPU.objects.get(slug="h100-sxm")
    assert gpu.name in body and "3,350 GB/s" in body and "TFLOPS" in body
    assert gpu.source_url in body
    instances = list(response.context["instances"])
    assert instances and {i.gpu_id for i in instances} == {gpu.pk}
    assert response.context["history"]  # one series per provider
    assert '<polyline class="line"' in body and 'role="img"' in body


def test_gpu_page_history_by_pricing_model(client):
    response = client.get("/gpus/h100-sxm?pricing_model=spot")
    assert response.context["pricing_model"] == "spot"
    bogus = client.get("/gpus/h100-sxm?pricing_model=<script>")
    assert bogus.status_code == 200 and bogus.context["pricing_model"] == "on_demand"


def test_gpu_history_follows_changes_and_disappearances():
    from web.selectors import gpu_price_history

    provider = ProviderFactory(name="Step Cloud")
    region = RegionFactory(provider=provider)
    gpu = GPU.objects.get(slug="l4")
    cheap = InstanceTypeFactory(provider=provider, gpu=gpu, gpu_count=1)
    dear = InstanceTypeFactory(provider=provider, gpu=gpu, gpu_count=1)
    now = timezone.now()
    from catalog.models import PriceHistory

    def event(instance, kind, value, days_ago):
        PriceHistory.objects.create(
            instance_type=instance,
            region=region,
            pricing_model="on_demand",
            event=kind,
            amount=value,
            currency="USD",
            unit="hour",
            usd_per_hour=value,
            usd_per_gpu_hour=value,
            observed_at=now - timedelta(days=days_ago),
            source="curator",
        )

    event(dear, "appeared", Decimal("2.0"), 30)
    event(cheap, "appeared", Decimal("1.0"), 20)
    event(cheap, "changed", Decimal("0.5"), 10)
    event(cheap, "disappeared", None, 5)
    series = gpu_price_history(gpu=gpu, pricing_model="on_demand")["Step Cloud"]
    assert [value for _, value in series] == [2.0, 1.0, 0.5, 2.0]
    # The provider stops listing the GPU altogether: its line ends there.
    event(dear, "disappeared", None, 2)
    series = gpu_price_history(gpu=gpu, pricing_model="on_demand")["Step Cloud"]
    assert [value for _, value in series] == [2.0, 1.0, 0.5, 2.0, None]


def test_unknown_gpu_is_404(client):
    assert client.get("/gpus/no-such-gpu").status_code == 404


def test_provider_list(client):
    response = client.get("/providers")
    assert response.status_code == 200
    assert "Tencent Cloud" in text(response)


def test_provider_page_has_regions_freshness_and_runs(client):
    provider = ProviderFactory(slug="runs-cloud", name="Runs Cloud")
    RegionFactory(provider=provider, code="rc-1", name="Runs One")
    started = timezone.now() - timedelta(hours=2)
    ScrapeRun.objects.create(
        provider=provider,
        started_at=started,
        finished_at=started + timedelta(minutes=3),
        status="failed",
        error="HTTP 503 from the price API",
    )
    ScrapeRun.objects.create(
        provider=provider, started_at=started - timedelta(days=1), status="success", created=12
    )
    response = client.get("/providers/runs-cloud")
    assert response.status_code == 200
    body = text(response)
    assert "rc-1" in body and "Runs One" in body
    assert "HTTP 503 from the price API" in body
    runs = response.context["runs"]
    assert [r.status for r in runs] == ["failed", "success"]


def test_seed_provider_page(client):
    response = client.get("/providers/aws")
    assert response.status_code == 200
    regions = list(response.context["regions"])
    assert (
        regions and sum(r.price_count for r in regions) == response.context["provider"].price_count
    )
    assert "No refresh has run yet" in text(response)


def test_chinese_provider_shows_compliance(client):
    body = text(client.get("/providers/alibaba"))
    assert "real-name verification" in body


def test_unknown_provider_is_404(client):
    assert client.get("/providers/no-such-provider").status_code == 404


# --- Language, static files, no outside requests ----------------------------------------------


@pytest.mark.parametrize(
    "url",
    ["/", "/plan", PLAN_QUERY, "/gpus", "/gpus/a100-sxm4-80gb", "/providers", "/providers/alibaba"],
)
def test_simplified_chinese_by_accept_language(client, url):
    response = client.get(url, HTTP_ACCEPT_LANGUAGE="zh-CN,zh;q=0.9,en;q=0.5")
    assert response.status_code == 200
    body = text(response)
    assert 'lang="zh-hans"' in body
    assert "跳到正文" in body  # "Skip to content"
    assert "价格" in body


def test_chinese_labels_on_the_plan_page(client):
    body = text(client.get(PLAN_QUERY, HTTP_ACCEPT_LANGUAGE="zh-Hans"))
    assert "规划" in body and "每 GPU 显存" in body and "竞价" in body
    assert '<option value="finetune" selected>微调</option>' in body  # form choices too
    assert "按量付费" in body


def test_english_is_the_default(client):
    body = text(client.get("/", HTTP_ACCEPT_LANGUAGE="fr-FR"))
    assert 'lang="en"' in body and "Skip to content" in body


def test_language_switch_sets_the_cookie(client):
    response = client.post("/i18n/setlang/", {"language": "zh-hans", "next": "/gpus"})
    assert response.status_code == 302 and response["Location"] == "/gpus"
    assert "跳到正文" in text(client.get("/gpus"))


@pytest.mark.parametrize("url", ["/", PLAN_QUERY, "/gpus/h100-sxm", "/providers/aws"])
def test_pages_reference_nothing_outside_the_server(client, url):
    body = text(client.get(url))
    # The CSRF token is random text and may spell anything, "cdn" included.
    markup = re.sub(r'name="csrfmiddlewaretoken" value="[^"]*"', "", body).lower()
    assert "csrfmiddlewaretoken" in body
    for needle in ('src="http', 'href="//', "cdn.", "//cdn", "googleapis", "<script"):
        assert needle not in markup
    assert "/static/web/atlas.css" in body


def test_stylesheet_is_served(client):
    from django.contrib.staticfiles import finders

    assert finders.find("web/atlas.css")
    assert finders.find("web/favicon.svg")


def test_pages_work_without_login_and_only_answer_get(client):
    assert client.post("/plan", {"model": "llama-3-8b"}).status_code == 405
    assert client.head("/gpus").status_code == 200
