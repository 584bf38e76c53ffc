"""Tencent Cloud scraper: doc-page and CVM API parsing, TC3 signing, fetch over loopback, faults."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import httpx
import pytest

from scrapers.base import FetchError, HttpClient, Page, ParseError, parse_all, parse_pages
from scrapers.providers.tencent import TencentScraper, tc3_headers
from tests.scrapers.loopback import LoopbackServer, quiet_client, timing_out

PAGES = Path(__file__).parent / "pages" / "tencent"
KEYS = {"tencent_secret_id": "AKIDexample", "tencent_secret_key": "example-secret"}


def page(name: str, **meta: str) -> Page:
    return Page(url=f"file://{name}", status=200, body=(PAGES / name).read_text("utf-8"), meta=meta)


def by_key(records):
    return {(r.instance_type, r.pricing_model): r for r in records}


# --- China-site doc page -----------------------------------------------------------------------
def test_cn_doc_gives_mainland_list_prices_for_every_row_and_model():
    records = TencentScraper().parse(page("price-overview-cn.html", kind="doc", site="cn"))
    assert len(records) == 60  # 30 instance types x (monthly, pay-as-you-go)
    assert {r.region for r in records} == {"ap-guangzhou"}
    assert {r.currency for r in records} == {"CNY"}
    gt4 = by_key(records)[("GT4.4XLARGE96", "on_demand")]
    assert gt4.amount == Decimal("28.64")
    assert gt4.unit == "hour"
    assert gt4.gpu_name == "NVIDIA A100-NVLINK-40G"  # from the column header, as Tencent writes it
    assert gt4.gpu_count == Decimal(1)
    assert (gt4.vcpus, gt4.ram_gib) == (16, 96.0)
    monthly = by_key(records)[("GT4.41XLARGE948", "monthly")]
    assert (monthly.amount, monthly.unit, monthly.gpu_count) == (Decimal(114016), "month", 8)


def test_cn_doc_price_range_keeps_the_standard_upper_figure():
    records = by_key(TencentScraper().parse(page("price-overview-cn.html")))
    gn10x = records[("GN10X.2XLARGE40", "on_demand")]
    assert gn10x.amount == Decimal("18.04")
    assert gn10x.extra["price_range"] == ["16.21", "18.04"]
    assert records[("GN10X.2XLARGE40", "monthly")].amount == Decimal(5190)


def test_cn_doc_vgpu_slices_are_fractional():
    records = by_key(TencentScraper().parse(page("price-overview-cn.html")))
    quarter = records[("GN7.LARGE20", "on_demand")]
    assert quarter.gpu_count == Decimal("0.25")
    assert quarter.extra["gpu_sharing"] == "vgpu"
    assert quarter.amount == Decimal("3.39")
    assert records[("GN7.2XLARGE40", "monthly")].gpu_count == Decimal("0.5")


def test_cn_doc_unclosed_row_in_gi3x_table_still_yields_every_row():
    records = by_key(TencentScraper().parse(page("price-overview-cn.html")))
    for name, amount in [("GI3X.8XLARGE64", "9.58"), ("GI3X.45XLARGE452", "38.33")]:
        assert records[(name, "on_demand")].amount == Decimal(amount)
    assert records[("GI3X.22XLARGE226", "monthly")].vcpus == 90


def test_cn_doc_matches_the_fixture_snapshot():
    records = by_key(TencentScraper().parse(page("price-overview-cn.html")))
    assert records[("GN6.14XLARGE96", "on_demand")].amount == Decimal("18.01")
    assert records[("GN7.20XLARGE320", "on_demand")].amount == Decimal("55.55")
    assert records[("GN10Xp.20XLARGE320", "monthly")].amount == Decimal(46000)


def test_cn_doc_non_price_table_is_ignored():
    records = TencentScraper().parse(page("price-overview-cn.html"))
    assert all(r.instance_type[0].isupper() and "." in r.instance_type for r in records)


def test_meta_free_page_is_recognised_from_its_body():
    # parse_page hands over a saved file with no meta: the doc kind and site come from the body.
    records = TencentScraper().parse(page("price-overview-intl.html"))
    assert {(r.region, r.currency) for r in records} == {("ap-guangzhou", "USD")}


# --- International doc page ----------------------------------------------------------------------
def test_intl_doc_gives_usd_guangzhou_prices_with_units_in_cells():
    records = by_key(TencentScraper().parse(page("price-overview-intl.html", site="intl")))
    assert records[("GN6S.LARGE20", "on_demand")].amount == Decimal("1.11")
    assert records[("GN7.LARGE20", "on_demand")].gpu_count == Decimal("0.25")
    assert records[("GN7.8XLARGE128", "on_demand")].amount == Decimal("2.77")
    assert all(model == "on_demand" for _, model in records)  # the intl site sells hourly only


def test_intl_doc_yuan_typo_rows_are_dropped_not_mislabelled():
    records = by_key(TencentScraper().parse(page("price-overview-intl.html", site="intl")))
    assert records[("GN8.LARGE56", "on_demand")].amount == Decimal("1.98")
    assert records[("GN8.LARGE56", "on_demand")].extra["price_is_from"] is True
    # "8.01 元/小时起" in a USD table is a doc error: no USD 8.01 and no CNY record either.
    assert ("GN8.7XLARGE224", "on_demand") not in records
    assert ("GN8.14XLARGE448", "on_demand") not in records


def test_intl_doc_gpu_memory_column_is_not_taken_for_the_gpu():
    records = by_key(TencentScraper().parse(page("price-overview-intl.html", site="intl")))
    gn8 = records[("GN8.3XLARGE112", "on_demand")]
    assert (gn8.gpu_name, gn8.gpu_count, gn8.extra["gpu_memory"]) == ("Tesla P40", 2, "48 GB")


# --- 2019 layout of the China-site page ------------------------------------------------------------
def test_2019_layout_with_units_in_cells_and_asterisks():
    records = by_key(TencentScraper().parse(page("price-overview-cn-2019.html", site="cn")))
    gn2 = records[("GN2.7XLARGE56", "monthly")]  # the doc writes "GN2.7XLARGE56*"
    assert (gn2.amount, gn2.unit, gn2.currency) == (Decimal(2928), "month", "CNY")
    assert records[("GN7.2XLARGE32", "on_demand")].gpu_count == 1  # "1 x Tesla T4"
    assert records[("GN7.20XLARGE320", "on_demand")].gpu_count == 4
    ga2 = records[("GA2.2XLARGE16", "on_demand")]
    assert (ga2.gpu_name, ga2.gpu_count, ga2.extra["price_is_from"]) == ("AMD S7150", 0.25, True)


# --- CVM API answer --------------------------------------------------------------------------------
def api_records():
    meta = {"kind": "api", "region": "ap-guangzhou", "currency": "CNY"}
    return by_key(TencentScraper().parse(page("api-ap-guangzhou.json", **meta)))


def test_api_takes_the_cheapest_zone_that_sells():
    gn7 = api_records()[("GN7.2XLARGE32", "on_demand")]
    assert gn7.amount == Decimal("8.2")  # ap-guangzhou-4; the 7.00 zone is SOLD_OUT
    assert gn7.extra["zones"] == {"ap-guangzhou-3": "8.68", "ap-guangzhou-4": "8.2"}
    assert (gn7.region, gn7.gpu_name, gn7.vcpus, gn7.ram_gib) == (
        "ap-guangzhou",
        "NVIDIA T4",
        8,
        32.0,
    )


def test_api_charge_types_map_to_pricing_models():
    records = api_records()
    assert records[("GT4.41XLARGE948", "monthly")].amount == Decimal("114016.0")
    assert records[("GT4.41XLARGE948", "monthly")].unit == "month"
    spot = records[("GN10Xp.2XLARGE40", "spot")]
    assert (spot.amount, spot.unit) == (Decimal("2.4"), "hour")


def test_api_traps_cpu_only_zero_price_and_vgpu():
    records = api_records()
    assert not any(name.startswith("S5.") for name, _ in records)  # Gpu 0: CPU-only family
    assert ("GN7.5XLARGE80", "on_demand") not in records  # UnitPrice 0.0 is "not priced", not free
    assert records[("GN7.LARGE20", "on_demand")].gpu_count == Decimal("0.25")
    assert records[("PNV4.7XLARGE116", "on_demand")].gpu_name == "NVIDIA A10"
    assert len(records) == 7


def test_api_empty_region_is_not_an_error():
    assert TencentScraper().parse(page("api-eu-frankfurt.json", kind="api")) == []


def test_api_error_answer_raises():
    with pytest.raises(ParseError, match=r"AuthFailure\.SignatureFailure"):
        TencentScraper().parse(page("api-error.json", kind="api"))


def test_api_renamed_price_field_raises():
    data = json.loads((PAGES / "api-ap-guangzhou.json").read_text("utf-8"))
    data["Response"]["InstanceTypeQuotaSet"][0]["Price"] = {"HourPrice": 8.68, "ChargeUnit": "HOUR"}
    broken = Page(url="x", status=200, body=json.dumps(data), meta={"kind": "api"})
    with pytest.raises(ParseError, match="no UnitPrice"):
        TencentScraper().parse(broken)


def test_api_renamed_list_raises():
    body = json.dumps({"Response": {"InstanceTypeQuotaSets": [], "RequestId": "x"}})
    with pytest.raises(ParseError, match="InstanceTypeQuotaSet"):
        TencentScraper().parse(Page(url="x", status=200, body=body, meta={"kind": "api"}))


# --- TC3 signature -----------------------------------------------------------------------------------
def test_tc3_signature_matches_tencent_worked_example():
    # Tencent Cloud API 3.0 "Signature v3" doc: DescribeInstances, timestamp 1551113065.
    payload = (
        b'{"Limit": 1, "Filters": [{"Values": ["\\u672a\\u547d\\u540d"], "Name": "instance-name"}]}'
    )
    headers = tc3_headers(
        secret_id="AKIDz8krbsJ5yKBZQpn74WFkmLPx3EXAMPLE",
        secret_key="Gu5t9xGARNpq86cd98joQYCN3EXAMPLE",
        host="cvm.tencentcloudapi.com",
        action="DescribeInstances",
        version="2017-03-12",
        region="ap-guangzhou",
        timestamp=1551113065,
        payload=payload,
    )
    assert headers["Authorization"] == (
        "TC3-HMAC-SHA256 Credential=AKIDz8krbsJ5yKBZQpn74WFkmLPx3EXAMPLE/2019-02-25/cvm/tc3_request, "
        "SignedHeaders=content-type;host, "
        "Signature=72e494ea809ad7a8c8f7a4507b9bddcbaa8e581f516e8da2f66e2c5a96525168"
    )
    assert headers["X-TC-Timestamp"] == "1551113065"
    assert headers["Content-Type"] == "application/json; charset=utf-8"


# --- fetch over loopback ------------------------------------------------------------------------------
def test_fetch_without_keys_reads_both_doc_pages():
    with LoopbackServer() as srv:
        scraper = TencentScraper(base_url=srv.base_url("tencent"))
        with HttpClient(retries=0, timeout_s=5) as client:
            pages = list(scraper.fetch(client))
    assert [p.meta["site"] for p in pages] == ["cn", "intl"]
    records = parse_all(scraper, pages)
    assert {r.currency for r in records} == {"CNY", "USD"}
    assert len(records) == 69


def test_fetch_with_keys_signs_api_calls_per_region_and_skips_the_intl_doc():
    with LoopbackServer() as srv:
        scraper = TencentScraper(
            base_url=srv.base_url("tencent"),
            credentials=KEYS,
            regions=["ap-guangzhou", "eu-frankfurt"],
        )
        with HttpClient(retries=0, timeout_s=5) as client:
            pages = list(scraper.fetch(client))
    assert [p.meta.get("region") for p in pages] == [None, "ap-guangzhou", "eu-frankfurt"]
    records = parse_all(scraper, pages)
    api = [r for r in records if r.region == "ap-guangzhou" and "zones" in r.extra]
    assert len(api) == 7
    assert {r.currency for r in records} == {"CNY"}  # no USD doc page when the API is used


def test_fetch_sends_tc3_headers_to_the_regional_endpoint():
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if request.method == "GET":
            return httpx.Response(200, text=(PAGES / "price-overview-cn.html").read_text("utf-8"))
        return httpx.Response(200, text=(PAGES / "api-eu-frankfurt.json").read_text("utf-8"))

    scraper = TencentScraper(credentials=KEYS, regions=["ap-shanghai"])
    with HttpClient(retries=0, transport=httpx.MockTransport(handler)) as client:
        list(scraper.fetch(client))
    api = seen[1]
    assert str(api.url) == "https://cvm.ap-shanghai.tencentcloudapi.com/"
    assert api.headers["X-TC-Action"] == "DescribeZoneInstanceConfigInfos"
    assert api.headers["X-TC-Region"] == "ap-shanghai"
    assert api.headers["Authorization"].startswith("TC3-HMAC-SHA256 Credential=AKIDexample/")
    assert api.content == b"{}"


# --- faults --------------------------------------------------------------------------------------------
def test_server_error_becomes_fetch_error_after_retry():
    with LoopbackServer() as srv:
        srv.override("tencent", "/document/product/560/8025", status=500, body="oops")
        scraper = TencentScraper(base_url=srv.base_url("tencent"))
        with (
            quiet_client() as client,
            pytest.raises(FetchError, match="HTTP 500"),
        ):
            list(scraper.fetch(client))


def test_timeout_becomes_fetch_error():
    scraper = TencentScraper()
    with (
        quiet_client(transport=timing_out()) as client,
        pytest.raises(FetchError, match="ReadTimeout"),
    ):
        list(scraper.fetch(client))


def test_truncated_api_json_raises_parse_error():
    with LoopbackServer() as srv:
        body = (PAGES / "api-ap-guangzhou.json").read_text("utf-8")[:700]
        srv.override("tencent", "/cvm.ap-guangzhou.tencentcloudapi.com/", body=body)
        scraper = TencentScraper(
            base_url=srv.base_url("tencent"), credentials=KEYS, regions=["ap-guangzhou"]
        )
        with HttpClient(retries=0, timeout_s=5) as client:
            pages = list(scraper.fetch(client))
    with pytest.raises(ParseError, match="invalid JSON"):
        parse_all(scraper, pages)


def test_html_instead_of_api_json_raises_parse_error():
    html = "<html><body><h1>502 Bad Gateway</h1></body></html>"
    with pytest.raises(ParseError, match="invalid JSON"):
        TencentScraper().parse(Page(url="x", status=200, body=html, meta={"kind": "api"}))


def test_json_instead_of_doc_html_raises_parse_error():
    with pytest.raises(ParseError, match="expected an HTML page"):
        TencentScraper().parse(Page(url="x", status=200, body='{"a": 1}', meta={"kind": "doc"}))


def test_doc_page_without_price_tables_raises():
    with LoopbackServer() as srv:
        srv.override(
            "tencent",
            "/document/product/560/8025",
            body="<html><body><p>文档维护中</p></body></html>",
            content_type="text/html",
        )
        scraper = TencentScraper(base_url=srv.base_url("tencent"))
        with HttpClient(retries=0, timeout_s=5) as client:
            pages = list(scraper.fetch(client))
    with pytest.raises(ParseError, match="no tables"):
        scraper.parse(pages[0])


def test_doc_table_with_renamed_price_column_raises():
    html = (PAGES / "price-overview-cn.html").read_text("utf-8")
    html = html.replace("包年包月", "预付费").replace("按量计费", "后付费")
    with pytest.raises(ParseError, match="no table has instance and price columns"):
        TencentScraper().parse(Page(url="x", status=200, body=html, meta={"site": "cn"}))


def test_api_entry_priced_per_another_charge_unit_is_skipped_alone():
    # One entry quoted per second must not cost the region its other prices (issue 13).
    data = json.loads((PAGES / "api-ap-guangzhou.json").read_text())
    items = data["Response"]["InstanceTypeQuotaSet"]
    hourly = [i for i in items if i["InstanceChargeType"] == "POSTPAID_BY_HOUR"]
    hourly[0]["Price"]["ChargeUnit"] = "SECOND"
    scraper = TencentScraper()
    meta = {"kind": "api", "region": "ap-guangzhou", "currency": "CNY"}
    result = parse_pages(scraper, [Page(url="x", status=200, body=json.dumps(data), meta=meta)])
    before = api_records()
    after = by_key(result.records)
    assert len(after) >= len(before) - 1 and after  # only that entry can be missing
    assert any("charge unit 'SECOND'" in n.reason for n in result.notes)


def test_doc_mainland_price_is_filed_under_guangzhou_as_assumed():
    records = TencentScraper().parse(page("price-overview-cn.html", kind="doc", site="cn"))
    assert records and {r.region for r in records} == {"ap-guangzhou"}
    assert all(r.extra["region_assumed"] for r in records)
