"""Vast.ai scraper: offer pages, aggregation into medians, pagination, traps and fetch faults."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from urllib.parse import urlencode

import httpx
import pytest

from scrapers.base import FetchError, HttpClient, Page, ParseError
from scrapers.providers.vastai import PAGE_LIMIT, VastAiScraper, bundles_query
from tests.scrapers.loopback import LoopbackServer, quiet_client, timing_out

PAGES = Path(__file__).resolve().parent / "pages" / "vastai"
ON_DEMAND_1 = (PAGES / "bundles-on-demand-1.json").read_text(encoding="utf-8")
ON_DEMAND_2 = (PAGES / "bundles-on-demand-2.json").read_text(encoding="utf-8")
BID = (PAGES / "bundles-bid-1.json").read_text(encoding="utf-8")


def merged_on_demand() -> str:
    """What fetch hands to parse: both on-demand pages, offers merged by id."""
    offers = {
        o["id"]: o for o in json.loads(ON_DEMAND_1)["offers"] + json.loads(ON_DEMAND_2)["offers"]
    }
    return json.dumps({"offers": list(offers.values())})


def page(body: str, offer_type: str = "on-demand") -> Page:
    return Page(
        url="https://console.vast.ai/api/v0/bundles/",
        status=200,
        body=body,
        meta={"type": offer_type},
    )


def by_name(records):
    return {r.instance_type: r for r in records}


@pytest.fixture
def fetched_pages():
    with LoopbackServer() as srv:
        scraper = VastAiScraper(base_url=srv.base_url("vastai"))
        with HttpClient(retries=0, timeout_s=5) as client:
            yield scraper, list(scraper.fetch(client))


# --- parse ---------------------------------------------------------------------------------


def test_on_demand_groups_are_summarised_by_their_median():
    records = by_name(VastAiScraper().parse(page(merged_on_demand())))
    assert len(records) == 15
    h100 = records["H100 SXM (marketplace, 1 GPU)"]
    assert h100.amount == Decimal("2.4024")  # median of 4 offers: (2.3528 + 2.4520) / 2
    assert h100.extra["offer_count"] == 4
    assert h100.extra["min_usd_per_hour"] == 2.1333
    assert h100.extra["median_usd_per_hour"] == 2.4024
    assert (h100.region, h100.pricing_model, h100.currency, h100.unit) == (
        "global",
        "on_demand",
        "USD",
        "hour",
    )
    assert records["RTX 4090 (marketplace, 1 GPU)"].amount == Decimal("0.682")
    assert records["H200 (marketplace, 1 GPU)"].amount == Decimal("5.5826")
    assert records["B200 (marketplace, 1 GPU)"].amount == Decimal("4.492")


def test_median_resists_an_outlier_offer():
    records = by_name(VastAiScraper().parse(page(merged_on_demand())))
    rtx3090 = records["RTX 3090 (marketplace, 1 GPU)"]
    assert rtx3090.amount == Decimal("0.25")
    assert rtx3090.extra["max_usd_per_hour"] == 4.5


def test_multi_gpu_offers_are_whole_offer_prices():
    records = by_name(VastAiScraper().parse(page(merged_on_demand())))
    eight = records["H100 SXM (marketplace, 8 GPUs)"]
    assert eight.gpu_count == Decimal(8)
    assert eight.amount == Decimal("17.60")
    assert eight.vcpus == 208
    assert records["RTX 4090 (marketplace, 2 GPUs)"].amount == Decimal("1.385")


def test_a100_memory_sizes_are_not_mixed():
    records = by_name(VastAiScraper().parse(page(merged_on_demand())))
    big = records["A100 SXM4 80GB (marketplace, 1 GPU)"]
    small = records["A100 SXM4 40GB (marketplace, 1 GPU)"]
    assert (big.amount, small.amount) == (Decimal("1.7043"), Decimal("0.80"))
    assert big.gpu_name == "A100 SXM4 80GB"
    assert big.extra["vast_gpu_name"] == "A100 SXM4"


def test_unusable_offers_are_dropped():
    records = VastAiScraper().parse(page(merged_on_demand()))
    assert sum(r.extra["offer_count"] for r in records) == 69  # 74 offers less 5 traps
    assert not any("3 GPUs" in r.instance_type for r in records)  # not a catalog shape
    h100 = by_name(records)["H100 SXM (marketplace, 1 GPU)"]
    assert h100.extra["min_usd_per_hour"] > 1.05  # the deverified $1.05 offer is not counted


def test_per_country_figures_and_host_profile():
    records = by_name(VastAiScraper().parse(page(merged_on_demand())))
    rtx = records["RTX 4090 (marketplace, 1 GPU)"]
    countries = rtx.extra["by_country"]
    assert sum(c["offer_count"] for c in countries.values()) == 11
    assert set(countries) <= {"US", "CA", "NO", "SE", "DE", "TW", "HK", "unknown"}
    assert (rtx.vcpus, rtx.ram_gib) == (16, 62.9)  # cpu_ram is MB


def test_bid_page_uses_min_bid_for_spot():
    records = by_name(VastAiScraper().parse(page(BID, "bid")))
    assert len(records) == 5
    rtx3090 = records["RTX 3090 (marketplace, 1 GPU)"]
    assert rtx3090.pricing_model == "spot"
    assert rtx3090.amount == Decimal("0.24")
    assert rtx3090.extra["min_usd_per_hour"] == 0.18
    assert rtx3090.extra["price_field"] == "min_bid"
    assert records["L40S (marketplace, 1 GPU)"].extra["min_usd_per_hour"] == 0.4037
    # The RTX 4090 bid with a null min_bid is dropped.
    assert records["RTX 4090 (marketplace, 1 GPU)"].extra["offer_count"] == 4


def test_offer_type_comes_from_the_url_when_meta_is_absent():
    url = "https://console.vast.ai/api/v0/bundles/?" + urlencode({"q": bundles_query("bid")})
    records = VastAiScraper().parse(Page(url=url, status=200, body=BID))
    assert {r.pricing_model for r in records} == {"spot"}


def test_duplicate_offer_is_counted_once():
    document = json.loads(ON_DEMAND_1)
    document["offers"].append(dict(document["offers"][-1]))
    once = VastAiScraper().parse(page(ON_DEMAND_1))
    twice = VastAiScraper().parse(page(json.dumps(document)))
    assert [r.extra["offer_count"] for r in once] == [r.extra["offer_count"] for r in twice]


def test_empty_offer_list_is_an_empty_result():
    assert VastAiScraper().parse(page('{"offers": []}')) == []


def test_renamed_price_field_is_a_parse_error():
    with pytest.raises(ParseError, match="lacks dph_total"):
        VastAiScraper().parse(page(ON_DEMAND_1.replace('"dph_total"', '"dph"')))


def test_missing_offers_list_is_a_parse_error():
    with pytest.raises(ParseError, match="offers"):
        VastAiScraper().parse(
            page('{"success": false, "error": "invalid_request", "msg": "bad q"}')
        )


def test_truncated_json_is_a_parse_error():
    with pytest.raises(ParseError, match="not JSON"):
        VastAiScraper().parse(page(ON_DEMAND_1[:3000]))


def test_html_instead_of_json_is_a_parse_error():
    with pytest.raises(ParseError, match="not JSON"):
        VastAiScraper().parse(
            page("<html><body><h1>Vast.ai is down for maintenance</h1></body></html>")
        )


def test_records_serialise_to_json():
    scraper = VastAiScraper()
    for record in scraper.parse(page(merged_on_demand())) + scraper.parse(page(BID, "bid")):
        json.dumps(record.as_json())


# --- fetch through the loopback server -----------------------------------------------------


def test_fetch_follows_pages_and_merges_them(fetched_pages):
    scraper, pages = fetched_pages
    assert [p.meta["type"] for p in pages] == ["on-demand", "bid"]
    assert [p.meta["pages"] for p in pages] == ["2", "1"]
    on_demand = json.loads(pages[0].body)["offers"]
    assert len(on_demand) == 74  # 64 + 11, less the offer repeated at the page boundary
    assert len({o["id"] for o in on_demand}) == 74
    records = [r for p in pages for r in scraper.parse(p)]
    assert len(records) == 20
    on_demand = by_name(r for r in records if r.pricing_model == "on_demand")
    assert on_demand["H100 SXM (marketplace, 8 GPUs)"].amount == Decimal("17.60")


def test_fetch_stops_when_a_page_brings_nothing_new():
    calls: list[str] = []

    def same_page(request: httpx.Request) -> httpx.Response:
        calls.append(request.url.params["q"])
        body = ON_DEMAND_1 if '"on-demand"' in request.url.params["q"] else '{"offers": []}'
        return httpx.Response(200, text=body)

    with HttpClient(retries=0, transport=httpx.MockTransport(same_page)) as client:
        pages = list(VastAiScraper().fetch(client))
    assert len(calls) == 3  # on-demand twice (second adds nothing), bid once
    assert len(json.loads(pages[0].body)["offers"]) == PAGE_LIMIT


def test_fetch_sends_the_key_as_bearer_token():
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, text='{"offers": []}')

    scraper = VastAiScraper(credentials={"vastai_api_key": "vast_secret"})
    with HttpClient(retries=0, transport=httpx.MockTransport(answer)) as client:
        list(scraper.fetch(client))
    assert {r.headers["authorization"] for r in seen} == {"Bearer vast_secret"}
    assert all("vast_secret" not in str(r.url) for r in seen)
    assert str(seen[0].url).startswith("https://console.vast.ai/api/v0/bundles/?q=")


def test_fetch_without_key_sends_no_authorization():
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, text='{"offers": []}')

    with HttpClient(retries=0, transport=httpx.MockTransport(answer)) as client:
        list(VastAiScraper(credentials={"vastai_api_key": ""}).fetch(client))
    assert all("authorization" not in r.headers for r in seen)


def test_fetch_500_is_a_fetch_error():
    with LoopbackServer() as srv:
        srv.override("vastai", "/api/v0/bundles/", status=500, body='{"error": "internal"}')
        scraper = VastAiScraper(base_url=srv.base_url("vastai"))
        with (
            quiet_client() as client,
            pytest.raises(FetchError, match="HTTP 500"),
        ):
            list(scraper.fetch(client))


def test_fetch_timeout_is_a_fetch_error():
    with (
        quiet_client(transport=timing_out()) as client,
        pytest.raises(FetchError, match="ReadTimeout"),
    ):
        list(VastAiScraper().fetch(client))


@pytest.mark.parametrize(
    ("body", "content_type", "message"),
    [
        (ON_DEMAND_1[:5000], "application/json", "not JSON"),
        ("<!DOCTYPE html><html><body>502 Bad Gateway</body></html>", "text/html", "not JSON"),
        (ON_DEMAND_1.replace('"gpu_name"', '"gpu_model"'), "application/json", "lacks gpu_name"),
    ],
    ids=["truncated-json", "html-instead-of-json", "renamed-field"],
)
def test_fetched_bad_body_is_a_parse_error(body, content_type, message):
    with LoopbackServer() as srv:
        srv.override("vastai", "/api/v0/bundles/", body=body, content_type=content_type)
        scraper = VastAiScraper(base_url=srv.base_url("vastai"))
        with HttpClient(retries=0, timeout_s=5) as client:
            pages = list(scraper.fetch(client))
        with pytest.raises(ParseError, match=message):
            scraper.parse(pages[0])
