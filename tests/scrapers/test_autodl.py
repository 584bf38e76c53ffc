"""AutoDL scraper: market list parsing and aggregation, paging, loopback fetch, faults."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import httpx
import pytest

from scrapers.base import FetchError, HttpClient, Page, ParseError, parse_all
from scrapers.providers.autodl import AutoDLScraper, region_code
from tests.scrapers.loopback import LoopbackServer, quiet_client, timing_out

PAGES = Path(__file__).parent / "pages" / "autodl"
LIST_PATH = "/api/v1/user/machine/list"


def page(name: str) -> Page:
    return Page(url=f"file://{name}", status=200, body=(PAGES / name).read_text("utf-8"))


def by_key(records):
    return {(r.instance_type, r.region): r for r in records}


def machines_page(machines: list[dict]) -> Page:
    body = {"code": "Success", "msg": "", "data": {"list": machines, "max_page": 1}}
    return Page(url="x", status=200, body=json.dumps(body, ensure_ascii=False))


def listed():
    return json.loads((PAGES / "machine-list.json").read_text("utf-8"))["data"]["list"]


# --- parse -------------------------------------------------------------------------------------------
def test_prices_are_thousandths_of_a_yuan_per_gpu_hour():
    records = by_key(AutoDLScraper().parse(page("machine-list.json")))
    rtx3090 = records[("RTX 3090", "beijingDC1")]
    assert (rtx3090.amount, rtx3090.currency, rtx3090.unit) == (Decimal("1.32"), "CNY", "hour")
    assert (rtx3090.gpu_name, rtx3090.gpu_count, rtx3090.pricing_model) == (
        "RTX 3090",
        1,
        "on_demand",
    )


def test_region_record_is_the_median_of_its_machines():
    west = by_key(AutoDLScraper().parse(page("machine-list.json")))[("RTX 4090", "westDC2")]
    assert west.amount == Decimal("1.88")  # 1880, 1880, 1980
    assert (west.extra["min"], west.extra["max"], west.extra["machines"]) == ("1.88", "1.98", 3)
    assert (west.extra["gpus_total"], west.extra["gpus_idle"]) == (24, 9)


def test_market_names_map_to_catalog_region_codes():
    records = by_key(AutoDLScraper().parse(page("machine-list.json")))
    assert ("A800-80GB", "neimengDC1") in records
    assert ("L20", "beijingDC4") in records  # the L20 zone name carries its old name too
    assert ("H20-NVLink", "westDC3") in records
    assert region_code("westDC2", "") == "westDC2"  # developer-API codes pass through


def test_traps_sold_out_offline_unknown_region_and_new_gpu():
    records = by_key(AutoDLScraper().parse(page("machine-list.json")))
    foshan = records[("RTX 4090", "foshanDC1")]
    assert foshan.extra["gpus_idle"] == 0  # every GPU rented: the list price still stands
    assert (
        records[("RTX 3090", "beijingDC1")].extra["machines"] == 2
    )  # the 0-priced one is left out
    assert ("RTX 3080 Ti", "nanjing-A") in records  # unknown region kept for ingest to report
    assert records[("vGPU-32GB", "westDC2")].amount == Decimal("1.58")
    assert len(records) == 10  # one record per GPU and region; no platform-wide pseudo-region


def test_fixture_list_prices_come_out_unchanged():
    records = by_key(AutoDLScraper().parse(page("machine-list.json")))
    expected = {"RTX 3090": "1.32", "RTX 4090": "1.88", "A800-80GB": "5.59", "RTX 5090": "2.78"}
    for name, amount in expected.items():
        assert any(r.amount == Decimal(amount) for (gpu, _), r in records.items() if gpu == name), (
            name
        )


def test_empty_market_is_not_an_error():
    assert AutoDLScraper().parse(page("machine-list-empty.json")) == []


def test_not_logged_in_answer_raises():
    with pytest.raises(ParseError, match="AuthorizeFailed"):
        AutoDLScraper().parse(page("not-logged-in.json"))


def test_price_already_in_yuan_raises():
    machines = listed()
    machines[0]["payg_price"] = 1.88  # someone changed the unit to yuan
    with pytest.raises(ParseError, match=r"not in 0\.001 CNY units"):
        AutoDLScraper().parse(machines_page(machines))


def test_price_in_fen_is_caught_by_the_plausible_range():
    machines = listed()
    machines[0]["payg_price"] = 188000  # 188 yuan per GPU-hour for a 4090: units went wrong
    machines[1]["payg_price"] = 188000000
    with pytest.raises(ParseError, match="CNY per GPU-hour"):
        AutoDLScraper().parse(machines_page(machines))


def test_renamed_price_field_raises():
    machines = listed()
    machines[0]["price"] = machines[0].pop("payg_price")
    with pytest.raises(ParseError, match=r"lacks 'payg_price'"):
        AutoDLScraper().parse(machines_page(machines))


def test_renamed_list_raises():
    body = json.dumps({"code": "Success", "data": {"machines": []}})
    with pytest.raises(ParseError, match=r"no data\.list"):
        AutoDLScraper().parse(Page(url="x", status=200, body=body))


# --- fetch -------------------------------------------------------------------------------------------
def test_fetch_over_loopback():
    with LoopbackServer() as srv:
        scraper = AutoDLScraper(base_url=srv.base_url("autodl"))
        with HttpClient(retries=0, timeout_s=5) as client:
            pages = list(scraper.fetch(client))
    assert len(pages) == 1
    assert len(parse_all(scraper, pages)) == 10


def test_fetch_follows_pages_and_merges_them():
    bodies: list[dict] = []
    answers = {1: "machine-list-page1.json", 2: "machine-list-page2.json"}

    def handler(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        bodies.append(body)
        return httpx.Response(200, text=(PAGES / answers[body["page_index"]]).read_text("utf-8"))

    scraper = AutoDLScraper(credentials={"autodl_token": "eyJ-token"})
    seen_auth: list[str] = []

    def recording(request: httpx.Request) -> httpx.Response:
        seen_auth.append(request.headers.get("Authorization", ""))
        return handler(request)

    with HttpClient(retries=0, transport=httpx.MockTransport(recording)) as client:
        pages = list(scraper.fetch(client))
    assert [b["page_index"] for b in bodies] == [1, 2]
    assert bodies[0]["charge_type"] == "payg" and bodies[0]["region_sign_list"] == []
    assert seen_auth == ["eyJ-token", "eyJ-token"]
    assert len(pages) == 1 and pages[0].meta["pages_merged"] == "2"
    # Same records as the single-page answer: medians span both pages.
    merged = by_key(scraper.parse(pages[0]))
    assert merged == by_key(AutoDLScraper().parse(page("machine-list.json")))


# --- faults ------------------------------------------------------------------------------------------
def test_server_error_becomes_fetch_error_after_retry():
    with LoopbackServer() as srv:
        srv.override("autodl", LIST_PATH, status=500, body='{"code":"InternalError"}')
        scraper = AutoDLScraper(base_url=srv.base_url("autodl"))
        with (
            quiet_client() as client,
            pytest.raises(FetchError, match="HTTP 500"),
        ):
            list(scraper.fetch(client))


def test_rate_limit_is_retried_then_succeeds():
    statuses = iter([429, 200])

    def handler(request: httpx.Request) -> httpx.Response:
        status = next(statuses)
        if status == 429:
            return httpx.Response(429, headers={"Retry-After": "1"}, text="slow down")
        return httpx.Response(200, text=(PAGES / "machine-list.json").read_text("utf-8"))

    slept: list[float] = []
    scraper = AutoDLScraper()
    with HttpClient(
        retries=2, sleep=slept.append, transport=httpx.MockTransport(handler)
    ) as client:
        pages = list(scraper.fetch(client))
    assert slept == [1.0] and len(pages) == 1


def test_timeout_becomes_fetch_error():
    with (
        quiet_client(transport=timing_out()) as client,
        pytest.raises(FetchError, match="ReadTimeout"),
    ):
        list(AutoDLScraper().fetch(client))


def test_truncated_json_raises_parse_error():
    with LoopbackServer() as srv:
        body = (PAGES / "machine-list.json").read_text("utf-8")[:800]
        srv.override("autodl", LIST_PATH, body=body)
        scraper = AutoDLScraper(base_url=srv.base_url("autodl"))
        with HttpClient(retries=0, timeout_s=5) as client:
            pages = list(scraper.fetch(client))
    with pytest.raises(ParseError, match="invalid JSON"):
        scraper.parse(pages[0])


def test_html_login_page_instead_of_json_raises_parse_error():
    with LoopbackServer() as srv:
        srv.override(
            "autodl",
            LIST_PATH,
            body="<!DOCTYPE html><html><head><title>AutoDL算力云 登录</title></head></html>",
            content_type="text/html",
        )
        scraper = AutoDLScraper(base_url=srv.base_url("autodl"))
        with HttpClient(retries=0, timeout_s=5) as client:
            pages = list(scraper.fetch(client))
    with pytest.raises(ParseError, match="invalid JSON"):
        scraper.parse(pages[0])
