"""The compare and plan pages say what /api/compare and /api/recommend say for the same question
(docs/web.md: the pages call the same service)."""

from __future__ import annotations

import pytest

from catalog.models import InstanceType

pytestmark = pytest.mark.django_db

WORKLOAD = {"model": "llama-3-8b", "task": "finetune", "method": "lora", "tokens": 1e8}


def _marketplace_offer() -> str:
    """A Vast.ai marketplace offer of the seed catalog: its price is past the marketplace shelf
    life (7 days) at the seed snapshot's age, so the API leaves it out by default."""
    found = InstanceType.objects.filter(
        provider__slug="vastai", name="A100 SXM4 80GB (marketplace, 1 GPU)"
    ).first()
    assert found is not None, "the seed catalog has Vast.ai's A100 SXM4 80GB marketplace offer"
    return found.name


def _api_rows(api_client, targets, constraints=None):
    body = {"workload": WORKLOAD, "targets": targets}
    if constraints:
        body["constraints"] = constraints
    response = api_client.post("/api/compare", body, format="json")
    assert response.status_code == 200, response.content
    return response.json()["rows"]


def _page_columns(client, offers, **extra):
    query = {"offer": offers, **{k: str(v) for k, v in WORKLOAD.items()}, **extra}
    response = client.get("/compare", query)
    assert response.status_code == 200
    return response, response.context["columns"]


@pytest.mark.parametrize("include_stale", [None, "true", "false"])
def test_compare_page_fits_as_the_api_says(client, api_client, include_stale):
    name = _marketplace_offer()
    offers = [f"vastai/{name}", "aws/p5.48xlarge", "lambda/gpu_1x_a10"]
    targets = [
        {"provider": o.split("/", 1)[0], "instance_type": o.split("/", 1)[1]} for o in offers
    ]
    extra = {} if include_stale is None else {"include_stale": include_stale}
    constraints = {} if include_stale is None else {"include_stale": include_stale == "true"}
    rows = _api_rows(api_client, targets, constraints)
    response, columns = _page_columns(client, offers, **extra)
    for column, row in zip(columns, rows, strict=True):
        plan = column["plan"]
        assert plan["fits"] == row["fits"], (column["key"], row.get("why_not"))
        if row["fits"]:
            for key in ("pricing_model", "region", "usd_per_hour", "est_total_usd", "stale"):
                assert plan[key] == row[key], key
        else:
            assert plan["why_not"] == row["why_not"]
    if include_stale is None:
        # The stale marketplace price is left out by default, as the API does.
        assert rows[0]["fits"] is False and rows[0]["why_not"].startswith("stale_price:")
        words = columns[0]["plan"]["why_not_text"]
        observed = rows[0]["why_not_message"]["params"]["example"]["params"]["observed_on"]
        assert words.startswith("Stale price (global, On demand): observed " + observed)
        assert "7-day shelf life" in words and "“Include stale prices” to Yes" in words
        assert "7-day shelf life of marketplace prices" in rows[0]["why_not"]
        assert words in response.content.decode().replace("&ldquo;", "“").replace("&rdquo;", "”")
    if include_stale == "true":
        assert rows[0]["fits"] is True and rows[0]["stale"] is True


def test_compare_page_default_workload_weighs_the_apis_default_pricing(client, api_client):
    """Without workload fields the page uses the plan page's default workload, and the API's
    default pricing models (not the plan form's two ticked boxes)."""
    response = client.get("/compare", {"offer": "aws/p5.48xlarge"})
    assert response.status_code == 200
    form = response.context["form"]
    assert not form.cleaned_data.get("pricing")
    rows = _api_rows(api_client, [{"provider": "aws", "instance_type": "p5.48xlarge"}])
    plan = response.context["columns"][0]["plan"]
    assert plan["fits"] == rows[0]["fits"]
    if rows[0]["fits"]:
        assert plan["pricing_model"] == rows[0]["pricing_model"]


@pytest.mark.parametrize("lang", ["en", "zh-hans"])
def test_plan_summary_says_how_old_the_prices_used_are(client, api_client, lang):
    query = "model=llama-3-8b&task=finetune&method=lora&tokens=2e8&pricing=on_demand&pricing=spot"
    response = client.get("/plan?" + query, HTTP_ACCEPT_LANGUAGE=lang)
    assert response.status_code == 200
    answer = response.context["answer"]
    observed = [r["price_observed_at"] for r in answer["recommendations"]]
    oldest, newest = min(observed), max(observed)
    assert answer["prices_oldest_observed_at"] == oldest
    body = response.content.decode()
    summary = body[body.index('id="prices-observed"') :].split("</div>", 1)[0]
    assert f'<time datetime="{oldest.isoformat()}">{oldest:%Y-%m-%d}</time>' in summary
    if newest.date() != oldest.date():
        assert f">{newest:%Y-%m-%d}</time>" in summary
    assert ("Prices used, observed" if lang == "en" else "所用价格的观测时间") in summary
    # The same span as the API gives for the same question.
    api = api_client.get(
        "/api/recommend?" + query.replace("&pricing=spot", ",spot") + "&limit=200&all_sizes=true"
    )
    assert api.json()["prices_oldest_observed_at"][:10] == f"{oldest:%Y-%m-%d}"


@pytest.mark.parametrize("path", ["/", "/providers"])
def test_pages_say_the_shelf_lives_the_server_is_set_to(client, settings, path):
    settings.PRICE_STALE_AFTER_DAYS = 21
    settings.PRICE_SHELF_LIFE_DAYS = {"spot": 3, "marketplace": 2, "reserved_1y": 400}
    body = client.get(path).content.decode()
    assert (
        "A price past its shelf life is marked stale: spot prices after 3 days, marketplace "
        "offers after 2, list prices after 21, commitment terms after 400."
        in " ".join(body.split())
    )
    assert "not refreshed for" not in body
    chinese = client.get(path, HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert "竞价价格 3 天，市场型报价 2 天，标价 21 天，承诺期限价格 400 天" in chinese  # noqa: RUF001
