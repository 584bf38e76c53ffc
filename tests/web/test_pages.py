"""The pages over the curated catalog, through Django's test client: status, filters, CSV, i18n."""

from __future__ import annotations

import csv
import io
import re
from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone
from django.utils.html import strip_tags

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


def rows_of(response) -> list:
    """Every offer row of the browser's filtered set (all pages)."""
    return list(response.context["page"].paginator.object_list)


def test_price_browser_lists_offers_with_freshness(client):
    response = client.get("/")
    assert response.status_code == 200
    body = text(response)
    offers = set(
        Price.objects.filter(gone_at__isnull=True).values_list("instance_type_id", "region_id")
    )
    assert f"{len(offers)} offers" in body
    assert "Current prices, observed between" in body
    assert 'lang="en"' in body and 'name="viewport"' in body
    assert "<caption" in body and 'scope="col"' in body
    assert "stale" in body  # the seed snapshot is older than PRICE_STALE_AFTER_DAYS
    assert len(response.context["page"].object_list) == 100  # paginated


def test_price_browser_builds_only_the_rows_it_shows_in_a_few_queries(
    client, django_assert_max_num_queries
):
    # Sorting and counting read plain values; model instances are built for the page only
    # (building every offer's was most of the page's second under load).
    with django_assert_max_num_queries(12):
        response = client.get("/")
    rows = response.context["page"].paginator.object_list
    assert len(rows) > 1000
    assert len(rows._built) == len(response.context["page"].object_list) == 100


def test_price_browser_says_which_query_parameters_it_ignored(client):
    response = client.get("/?gpus=xyz&gpu=h100-sxm")
    assert response.status_code == 200
    body = text(response)
    assert "Unknown filter <code>gpus=xyz</code>, ignored: did you mean <code>gpu" in body
    assert response.context["unknown_params"][0]["name"] == "gpus"
    assert 'id="unknown-params"' not in text(client.get("/?gpu=h100-sxm&page=2"))


def test_compare_an_offer_whose_name_holds_a_comma_with_dates_and_reasons_in_words(client):
    from catalog.models import InstanceType

    comma = InstanceType.objects.filter(name__contains=",", prices__gone_at__isnull=True).first()
    assert comma is not None, "the seed catalog has marketplace names with commas"
    small = "alibaba/ecs.gn7i-c8g1.2xlarge"  # one A10 (24 GB): a LoRA of an 8B does not fit
    response = client.get(
        "/compare",
        {
            "offer": [f"{comma.provider.slug}/{comma.name}", small],
            "model": "llama-3-8b",
            "task": "finetune",
            "method": "lora",
            "tokens": "2e8",
        },
    )
    assert response.status_code == 200
    first, second = response.context["columns"]
    assert len(first["rows"]) >= 1 and first["best"] is not None  # "Regions priced 0" before
    assert first["observed_from"] is not None
    body = text(response)
    assert "Prices observed" in body and "Price observed" in body
    assert "stale_price:" not in body and "does_not_fit_memory:" not in body
    if not second["plan"]["fits"]:
        assert second["plan"]["why_not_text"].startswith("Does not fit in GPU memory")


def test_price_browser_puts_pricing_models_of_one_offer_in_one_row(client):
    rows = rows_of(client.get("/"))
    keys = [(r.instance.pk, r.region.pk) for r in rows]
    assert len(keys) == len(set(keys))
    both = [r for r in rows if r.on_demand and r.spot]
    assert both, "the seed catalog has offers with on-demand and spot prices"
    row = both[0]
    stored = Price.objects.filter(
        gone_at__isnull=True, instance_type=row.instance, region=row.region
    )
    assert {p.pk for p in row.prices.values()} == {p.pk for p in stored}


def test_price_browser_filters_take_several_values(client):
    response = client.get("/?gpu=h100-sxm&gpu=a100-sxm4-80gb&pricing_model=spot")
    assert response.status_code == 200
    rows = rows_of(response)
    assert {r.instance.gpu.slug for r in rows} == {"h100-sxm", "a100-sxm4-80gb"}
    assert all(r.spot for r in rows)  # rows with a spot price, shown with their other prices
    assert "H100" in response.context["multi_fields"][0][1]


def test_price_browser_filters_by_provider_region_and_memory(client):
    response = client.get(
        "/?provider=aws&provider=gcp&region=us-east-1&region=us-central1&min_gpu_memory_gib=80"
    )
    rows = rows_of(response)
    assert rows
    assert {r.instance.provider.slug for r in rows} <= {"aws", "gcp"}
    assert {r.region.code for r in rows} <= {"us-east-1", "us-central1"}
    assert min(r.instance.gpu.memory_gib for r in rows) >= 80


def test_price_range_applies_per_gpu_or_instance_per_hour_or_month(client):
    per_gpu = rows_of(client.get("/?min_price=1&max_price=2&per=gpu"))
    assert per_gpu and all(
        any(Decimal(1) <= p.usd_per_gpu_hour <= Decimal(2) for p in r.prices.values())
        for r in per_gpu
    )
    per_instance = rows_of(client.get("/?max_price=1&per=instance"))
    assert per_instance and all(
        any(p.usd_per_hour <= Decimal(1) for p in r.prices.values()) for r in per_instance
    )
    monthly = client.get("/?max_price=730&per=gpu&period=month")
    assert {r.instance.pk for r in rows_of(monthly)} == {
        r.instance.pk for r in rows_of(client.get("/?max_price=1&per=gpu"))
    }
    assert "USD per GPU-month" in text(monthly)


def test_month_toggle_multiplies_by_730(client):
    hourly = client.get("/?provider=lambda&sort=on_demand")
    monthly = client.get("/?provider=lambda&sort=on_demand&period=month")
    price = rows_of(hourly)[0].on_demand
    assert f"${float(price.usd_per_gpu_hour) * 730:,.2f}" in text(monthly)


def test_mainland_china_and_freshness_filters(client):
    china = rows_of(client.get("/?mainland_china=true"))
    assert china and all(r.region.mainland_china for r in china)
    fresh = rows_of(client.get("/?freshness=fresh"))
    stale = rows_of(client.get("/?freshness=stale"))
    assert stale and all(r.any_stale for r in stale)
    assert all(not all(p.is_stale for p in r.prices.values()) for r in fresh)


def test_mainland_prices_show_yuan_beside_dollars(client):
    body = text(client.get("/?provider=autodl"))
    assert re.search(r'class="sub native">¥[0-9.,]+<', body)


def _sort_value(row, key):
    price = getattr(row, key)
    return None if price is None else price.usd_per_gpu_hour


@pytest.mark.parametrize(
    ("sort", "key"),
    [
        ("on_demand", lambda r: _sort_value(r, "on_demand")),
        ("-spot", lambda r: _sort_value(r, "spot")),
        ("memory", lambda r: r.instance.gpu.memory_gib),
        ("-observed", lambda r: r.oldest_observed_at),
    ],
)
def test_price_browser_sorts_on_the_server(client, sort, key):
    response = client.get(f"/?sort={sort}")
    values = [key(r) for r in rows_of(response)]
    present = [v for v in values if v is not None]
    assert present == sorted(present, reverse=sort.startswith("-"))
    assert values[: len(present)] == present  # offers without that price come last
    column = sort.lstrip("-")
    direction = "descending" if sort.startswith("-") else "ascending"
    assert f'aria-sort="{direction}"' in text(response)
    # The header link of the sorted column flips the direction and keeps the other parameters.
    flipped = column if sort.startswith("-") else f"-{column}"
    assert f"?sort={flipped}" in text(response)


def test_old_and_unknown_sorts_fall_back_to_on_demand(client):
    for sort in ("password", "usd_per_gpu_hour"):
        response = client.get(f"/?sort={sort}")
        assert response.status_code == 200
        values = [r.on_demand.usd_per_gpu_hour for r in rows_of(response) if r.on_demand]
        assert values == sorted(values)


def test_column_picker_adds_host_specs(client):
    plain = text(client.get("/?provider=aws"))
    assert ">vCPUs<" not in plain.replace("\n", "")
    body = text(client.get("/?provider=aws&col=vcpus&col=ram&col=network&col=interconnect"))
    for heading in ("vCPUs", "RAM", "Network", "Interconnect"):
        assert f'data-label="{heading}"' in body
    assert "Gbit/s" in body


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
    rows = rows_of(response)
    assert [r.on_demand.pk for r in rows] == [fresh.pk] and rows[0].any_stale is False
    assert "stale-badge" not in text(response)


def test_rows_link_to_the_instance_page_and_compare(client):
    body = text(client.get("/?provider=aws&gpu=h100-sxm"))
    assert 'href="/instances/aws/p5.48xlarge"' in body
    assert 'name="offer" form="compare-form" value="aws/p5.48xlarge"' in body


# --- Instance pages and compare ---------------------------------------------------------------


def test_instance_page_has_host_specs_and_prices_by_region(client):
    response = client.get("/instances/aws/p5.48xlarge")
    assert response.status_code == 200
    body = text(response)
    for fact in ("vCPUs", "RAM", "Network", "Between machines", "H100"):
        assert fact in body
    regions = set(
        Price.objects.filter(gone_at__isnull=True, instance_type__name="p5.48xlarge").values_list(
            "region__code", flat=True
        )
    )
    assert {r.region.code for r in response.context["rows"]} == regions


def test_unknown_instance_is_404(client):
    assert client.get("/instances/aws/no-such-box").status_code == 404


def test_compare_uses_the_compare_service(client):
    from sizing import selectors as sizing_selectors
    from sizing.estimator import parse_workload
    from sizing.planner import Constraints
    from sizing.presets import load_presets

    url = "/compare?offer=aws/p5.48xlarge&offer=lambda/gpu_1x_a10&model=llama-3-8b&task=finetune"
    response = client.get(url + "&method=lora&tokens=1e8")
    assert response.status_code == 200
    columns = response.context["columns"]
    assert [c["key"] for c in columns] == ["aws/p5.48xlarge", "lambda/gpu_1x_a10"]
    workload = parse_workload(
        {"model": "llama-3-8b", "task": "finetune", "method": "lora", "tokens": 1e8},
        load_presets(),
    )
    expected = sizing_selectors.compare(
        workload,
        [
            {"provider": "aws", "instance_type": "p5.48xlarge"},
            {"provider": "lambda", "instance_type": "gpu_1x_a10"},
        ],
        Constraints(),
    )
    for column, row in zip(columns, expected["rows"], strict=True):
        assert column["plan"]["fits"] == row["fits"]
        if row["fits"]:
            assert column["plan"]["est_total_usd"] == row["est_total_usd"]


def test_compare_without_workload_uses_the_default_one(client):
    response = client.get("/compare?offer=aws/p5.48xlarge")
    assert response.status_code == 200
    assert response.context["answer"] is not None
    assert 'value="aws/p5.48xlarge"' in text(response)


def test_compare_unknown_offer_is_400(client):
    response = client.get("/compare?offer=aws/nope")
    assert response.status_code == 400
    assert "No instance type aws/nope." in text(response)


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
    assert [r["position"] for r in rows] == list(range(1, len(rows) + 1))
    totals = [r["est_total_usd"] for r in rows]
    assert totals == sorted(totals)
    assert response.context["shown_count"] > len(rows)  # the scatter draws more than the table
    # Drawn twice, for a screen and for a phone.
    assert body.count('<circle class="point') == 2 * response.context["shown_count"]
    assert "Estimated total cost (USD)" in body and "Estimated time (hours)" in body
    assert 'class="segment"' in body and "Weights" in body  # the memory breakdown bar
    assert "GiB" in body and "$" in body


def test_plans_on_mainland_clouds_show_yuan_beside_dollars(client):
    response = client.get(PLAN_QUERY + "&mainland_china=true", HTTP_ACCEPT_LANGUAGE="zh-CN")
    rows = response.context["rows"]
    assert rows and all(row["native_per_hour"].startswith("¥") for row in rows)
    assert all(row["native_total"].startswith("¥") for row in rows)
    # A yuan is worth less than a dollar: the figure in yuan is the larger one.
    first = rows[0]
    assert float(first["native_per_hour"][1:].replace(",", "")) > first["usd_per_hour"]
    body = text(response)
    assert re.search(r'class="sub native">¥[0-9.,]+<', body)
    # Outside mainland China every plan is in dollars only.
    outside = client.get(PLAN_QUERY + "&mainland_china=false").context["rows"]
    assert outside and not any(row["native_per_hour"] for row in outside)
    compare = client.get("/compare?offer=autodl/H800&offer=aws/p5.48xlarge")
    assert compare.status_code == 200
    assert re.search(r'class="sub native">¥[0-9.,]+<', text(compare))


def test_inference_with_tokens_and_a_time_limit_shows_only_timed_plans(client):
    """Tokens to generate give inference a run length: a GPU without the figures to time it
    cannot be held to "At most (hours)", so it is left out, not ranked as if it met it."""
    query = "model=llama-3-8b&task=inference&tokens=1e9&max_hours=1000"
    response = client.get(f"/plan?{query}")
    assert response.status_code == 200
    rows = response.context["rows"]
    assert rows and all(r["est_hours"] and r["est_hours"] <= 1000 for r in rows)
    assert response.context["timed"]
    assert "no run length" not in text(response)
    answer = client.get(f"/api/recommend?{query}&limit=200").json()
    assert answer["recommendations"]
    assert all(r["est_hours"] is not None for r in answer["recommendations"])
    assert "no_throughput_figure" in answer["rejected"]


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
    response = client.get("/plan?model=llama-3-8b&task=finetune&method=lora")
    assert response.status_code == 200
    assert 'id="plans-table"' in text(response)
    assert response.context["scatter"] == ""
    assert "training tokens" in text(response)
    assert "ranked by price per hour" in text(response)


def test_inference_is_not_said_to_be_ranked_by_total(client):
    response = client.get("/plan?model=llama-3-8b&task=inference")
    body = text(response)
    assert response.context["rows"] and not response.context["timed"]
    assert "ranked by Cheapest in total" not in body and "ranked by price per hour" in body
    assert "Est. total" not in body  # no column of dashes
    assert "training tokens" not in body
    assert "tokens to generate" in body
    timed = client.get("/plan?model=llama-3-8b&task=inference&tokens=1e8")
    assert timed.context["timed"] and "Est. total" in text(timed)


def test_shared_plan_url_without_task_shows_the_task_it_was_made_with(client):
    response = client.get("/plan?model=llama-3-8b&method=lora&tokens=2e8")
    assert response.status_code == 200
    body = text(response)
    select = re.search(r'<select name="task".*?</select>', body, re.S).group(0)
    assert re.findall(r'<option value="(\w+)" selected', select) == ["finetune"]
    # Pressing Plan again sends what the form shows: the same plan, not a 400.
    again = client.get("/plan?model=llama-3-8b&method=lora&tokens=2e8&task=finetune")
    assert again.status_code == 200
    first = response.context["rows"][0]
    assert again.context["rows"][0]["instance_type"] == first["instance_type"]


def test_submitted_plan_with_empty_fields_goes_to_the_url_without_them(client):
    response = client.get(
        "/plan?model=llama-3-8b&params_b=&task=finetune&method=lora&tokens=2e8&max_hours="
        "&pricing=spot&pricing=on_demand"
    )
    assert response.status_code == 302
    location = response["Location"]
    assert location.endswith("#results")
    assert "params_b" not in location and "max_hours" not in location
    assert "pricing=spot&pricing=on_demand" in location
    assert client.get(location.split("#")[0]).status_code == 200


def test_plan_form_submits_to_the_results(client):
    assert 'action="/plan#results"' in text(client.get("/plan"))
    assert 'id="results"' in text(client.get(PLAN_QUERY))


def test_plan_shows_plausible_candidates_only(client):
    response = client.get("/plan?model=llama-2-7b&task=pretrain&tokens=1e11")
    assert response.status_code == 200
    shown = response.context["shown"]
    hours = [p["est_hours"] for p in shown.plans]
    assert shown.too_slow > 0
    limit = min(min(hours) * 10, 8760)
    assert shown.time_limit_hours == limit
    for plan in shown.plans[1:]:  # past the limit only what no faster plan matches on cost
        if plan["est_hours"] > limit:
            assert not any(
                o["est_hours"] < plan["est_hours"] and o["est_total_usd"] <= plan["est_total_usd"]
                for o in shown.plans
            )
    offers = {}
    for plan in shown.plans:
        # One offer at any size: RunPod's "1x B200" ... "8x B200" are one GPU, region, pricing.
        key = (plan["provider"], plan["region"], plan["gpu"], plan["pricing_model"])
        offers.setdefault(key, []).append((plan["est_hours"], plan["est_total_usd"]))
    top = (shown.plans[0]["est_hours"], shown.plans[0]["est_total_usd"])
    for variants in offers.values():  # no size of an offer beaten by another on both
        for h, c in variants:
            if (h, c) == top:  # the plan ranked first is always shown
                continue
            assert not any(
                (h2 < h * 0.995 and c2 <= c * 1.005) or (h2 <= h * 1.005 and c2 < c * 0.995)
                for h2, c2 in variants
            ), variants
    assert not any("LoRA" in line for line in response.context["advice"])


def test_plan_page_shows_the_plan_ranked_first_and_describes_it(client):
    # The review's plan: the fastest (8x B200) is far faster than the cheapest; ranked by total
    # cost, the cheapest must still be row 1, and the headline figures must be about it.
    response = client.get(
        "/plan?model=llama-3-8b&task=finetune&method=lora&gradient_checkpointing=full"
        "&tokens=200000000&pricing=on_demand&pricing=spot"
    )
    assert response.status_code == 200
    answer, rows = response.context["answer"], response.context["rows"]
    first = answer["recommendations"][0]
    assert rows[0]["rank"] == 1
    assert (rows[0]["provider"], rows[0]["instance_type"]) == (
        first["provider"],
        first["instance_type"],
    )
    assert rows[0]["est_total_usd"] == min(p["est_total_usd"] for p in answer["recommendations"])
    assert response.context["top_gpu"][0] == rows[0]["gpu_name"]
    assert answer["estimate"]["gpu"] == rows[0]["gpu"]
    assert "Memory per GPU of plan #1" in text(response)


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
        ("model=llama-3-8b&max_gpus=999999", "max_gpus", "less than or equal to 100,000."),
        ("model=llama-3-8b&max_hours=0", "max_hours", "Must be more than 0"),
        ("model=llama-3-8b&max_total_usd=0", "max_total_usd", "Must be more than 0"),
        ("model=llama-3-8b&seq_len=99999999", "seq_len", "between 1 and 1,048,576."),
        ("task=finetune", "model", "“Model preset” (a preset name), “Parameters (billions)” or “A"),
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
    body = text(response)
    assert "Nothing fits these constraints" in body
    assert "The best 0 plans" not in body and "of the top plan" not in body
    assert "chart needs" not in body and "training tokens" not in body


def test_nothing_fits_names_the_nearest_misses_and_the_field_to_relax(client):
    response = client.get(
        "/plan?model=llama-3-70b&task=finetune&method=full&tokens=1e9&max_total_usd=10"
    )
    assert response.status_code == 200
    misses = response.context["misses"]
    assert misses and misses[0]["label"] == "Total budget (USD)"
    assert misses[0]["value"] == "$10.00"
    cheapest = misses[0]["plans"][0]["est_total_usd"]
    assert cheapest > 10
    body = text(response)
    assert "Relax <strong>Total budget (USD)</strong>" in body
    results = body[body.index('id="results"') : body.index('class="site-footer"')]
    assert "max_total_usd" not in results  # advice and examples name the form's label
    # ... and the choice as the form shows it, not the API's value ("fit_on=point").
    words = strip_tags(results)
    assert not re.search(r"\b[a-z]+_[a-z_]+=\w", words), re.findall(r"\b[a-z]+_[a-z_]+=\w+", words)
    assert "“Decide the fit on”: The estimate itself" in words
    assert "“Include stale prices”: Yes" in words


# --- GPUs and providers -----------------------------------------------------------------------


def test_gpu_list(client):
    response = client.get("/gpus")
    assert response.status_code == 200
    assert text(response).count('href="/gpus/') == GPU.objects.count()


def test_gpu_list_filters_and_sorts(client):
    response = client.get("/gpus?vendor=nvidia&has_fp8=on&min_memory_gib=80&sort=-memory")
    assert response.status_code == 200
    gpus = list(response.context["gpus"])
    assert gpus and all(g.vendor == "nvidia" and g.fp8_tflops and g.memory_gib >= 80 for g in gpus)
    assert [g.memory_gib for g in gpus] == sorted((g.memory_gib for g in gpus), reverse=True)
    assert 'aria-sort="descending"' in text(response)
    # The drop-down says what is chosen by name, and the caption what the table is sorted by.
    assert '<summary aria-describedby="id_vendor-label">NVIDIA</summary>' in text(response)
    assert "sorted by Memory" in text(response)
    assert "FP8 only</label>" in text(response)  # a ticked box's label has no colon
    cheap = list(client.get("/gpus?rented=on&sort=on_demand").context["gpus"])
    values = [g.min_on_demand for g in cheap if g.min_on_demand is not None]
    assert values == sorted(values) and all(g.instance_count for g in cheap)
    assert {g.slug for g in client.get("/gpus?q=h100").context["gpus"]} >= {"h100-sxm"}
    assert client.get("/gpus?min_memory_gib=lots").status_code == 400


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
    # In Chinese the provider's own note is Chinese too (web/provider_notes.py, locale/zh_Hans).
    for slug in ("alibaba", "runpod"):
        body = text(client.get(f"/providers/{slug}", HTTP_ACCEPT_LANGUAGE="zh-Hans"))
        note = body[body.index('id="main"') : body.index('id="regions-heading"')]
        assert not ENGLISH_RUN.search(strip_tags(note)), ENGLISH_RUN.findall(strip_tags(note))
        assert ("实名认证才能购买资源" in note) == (slug == "alibaba")


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


def test_lang_query_parameter_is_for_the_api_only(client):
    """docs/web.md: pages take their language from Accept-Language or the cookie, not `?lang=`, so
    a shared link reads in each reader's language; the API's `?lang=zh-hans` still answers in Chinese."""
    page = client.get(PLAN_QUERY + "&lang=zh-hans", HTTP_ACCEPT_LANGUAGE="en")
    assert page.status_code == 200
    assert 'lang="en"' in text(page) and "跳到正文" not in text(page)
    chinese = client.get(PLAN_QUERY + "&lang=en", HTTP_ACCEPT_LANGUAGE="zh-CN")
    assert 'lang="zh-hans"' in text(chinese)


def test_chinese_labels_on_the_plan_page(client):
    body = text(client.get(PLAN_QUERY, HTTP_ACCEPT_LANGUAGE="zh-Hans"))
    assert "规划" in body and "每 GPU 显存" in body and "竞价" in body
    assert '<option value="finetune" selected>微调</option>' in body  # form choices too
    assert "按量付费" in body


CJK = re.compile(r"[\u4e00-\u9fff]")
# Five English words in a row: a sentence left untranslated (names are shorter runs).
ENGLISH_RUN = re.compile(r"\b[A-Za-z]{2,}(?:[ ,;'()-]+[A-Za-z]{2,}){4,}")


def test_chinese_mainland_plans_warn_in_chinese_only(client):
    """The mainland-China warning carries the provider's note: in Chinese, all of it."""
    query = "/plan?model=llama-3-8b&method=lora&tokens=2e8&mainland_china=true"
    rows = client.get(query, HTTP_ACCEPT_LANGUAGE="zh-Hans").context["rows"]
    warnings = [w for row in rows for w in row["warnings"]]
    assert any("实名认证" in w for w in warnings), warnings
    for line in warnings + [r for row in rows for r in row["reasons"]]:
        assert not ENGLISH_RUN.search(line), line
    english = client.get(query, HTTP_ACCEPT_LANGUAGE="en").context["rows"]
    assert any("real-name verification" in w for row in english for w in row["warnings"])


def test_chinese_plan_page_gives_the_decision_in_chinese(client):
    zh = client.get(PLAN_QUERY, HTTP_ACCEPT_LANGUAGE="zh-Hans").context
    en = client.get(PLAN_QUERY, HTTP_ACCEPT_LANGUAGE="en").context
    row_zh, row_en = zh["rows"][0], en["rows"][0]
    assert row_zh["instance_type"] == row_en["instance_type"]  # the same plan
    assert all(CJK.search(reason) for reason in row_zh["reasons"]), row_zh["reasons"]
    assert not any(CJK.search(reason) for reason in row_en["reasons"])
    warnings = [w for row in zh["rows"] for w in row["warnings"]]
    assert warnings and all(CJK.search(w) for w in warnings)
    assert zh["advice"] and all(CJK.search(line) for line in zh["advice"])
    # Examples that say more than the offer's name ("aws/p5.48xlarge in us-east-1 (spot)") say it
    # in Chinese.
    examples = [e for entry in zh["rejected"] for e in entry["examples"]]
    sentences = [e for e in examples if "\uff1a" in e or ": " in e]  # a colon, full-width or not
    assert sentences and all(CJK.search(e) for e in sentences), sentences
    # ... and the offer itself is written in Chinese too: aws/p5 (us-east-1, 竞价) with
    # full-width brackets and comma.
    pricing_code = re.compile(r"\((on_demand|spot|monthly|yearly|reserved_\w+|marketplace)\)")
    assert not any(" in " in e or pricing_code.search(e) for e in examples), examples
    assert any("\uff08" in e and "\uff0c" in e for e in examples), examples


def test_chinese_nothing_fits_names_the_chinese_label(client):
    url = "/plan?model=llama-3-70b&task=finetune&method=full&tokens=1e9&max_total_usd=10"
    response = client.get(url, HTTP_ACCEPT_LANGUAGE="zh-Hans")
    assert response.context["misses"][0]["label"].startswith("总预算")
    assert all(CJK.search(line) for line in response.context["advice"])


def test_favicon_ico_is_the_pages_icon(client):
    # Pages that name no icon (the admin's) make the browser ask for /favicon.ico.
    response = client.get("/favicon.ico")
    assert response.status_code == 301 and response["Location"].endswith("favicon.svg")
    from django.contrib.staticfiles import finders

    assert finders.find("web/favicon.svg")


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
    for needle in ('src="http', 'href="//', "cdn.", "//cdn", "googleapis"):
        assert needle not in markup
    assert "/static/web/atlas.css" in body
    # One script, this service's own, deferred: the page is whole without it.
    assert re.findall(r"<script[^>]*>", markup) == ['<script src="/static/web/atlas.js" defer>']


def test_stylesheet_is_served(client):
    from django.contrib.staticfiles import finders

    assert finders.find("web/atlas.css")
    assert finders.find("web/atlas.js")
    assert finders.find("web/favicon.svg")


def test_pages_work_without_login_and_only_answer_get(client):
    assert client.post("/plan", {"model": "llama-3-8b"}).status_code == 405
    assert client.head("/gpus").status_code == 200


# --- Error pages and API docs -----------------------------------------------------------------


def test_unknown_gpu_page_is_a_styled_404_naming_close_gpus(client):
    response = client.get("/gpus/h100")
    assert response.status_code == 404
    body = text(response)
    assert "Page not found" in body and "No GPU h100." in body
    assert 'href="/gpus/h100-sxm"' in body  # did you mean
    assert "/static/web/atlas.css" in body


def test_unknown_provider_page_is_a_styled_404_in_chinese(client):
    response = client.get("/providers/awz", HTTP_ACCEPT_LANGUAGE="zh-Hans")
    assert response.status_code == 404
    body = text(response)
    assert "页面不存在" in body and 'href="/providers/aws"' in body


def test_unknown_address_is_the_styled_404_and_json_under_the_api(client):
    body = text(client.get("/no/such/page"))
    assert "Page not found" in body and "URLconf" not in body
    api = client.get("/api/no-such-endpoint")
    assert api.status_code == 404 and api.json() == {"detail": "Not found."}


def test_server_error_page_is_styled_in_both_languages(rf):
    from django.utils import translation

    from web.views import server_error

    response = server_error(rf.get("/plan"))
    assert response.status_code == 500
    assert "Something went wrong" in text(response) and "atlas.css" in text(response)
    with translation.override("zh-hans"):
        assert "出错了" in text(server_error(rf.get("/plan")))
    assert server_error(rf.get("/api/gpus/")).status_code == 500


def test_api_docs_load_nothing_from_outside(client):
    body = text(client.get("/api/redoc/"))
    assert "googleapis" not in body and "<redoc spec-url=" in body
    assert not re.search(r'(src|href)="(https?:)?//', body)
