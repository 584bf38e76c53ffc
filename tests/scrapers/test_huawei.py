"""Huawei Cloud scraper: calculator answers, BSS ratings, AK/SK signing, loopback fetch, faults."""

from __future__ import annotations

import hashlib
import hmac
import json
from decimal import Decimal
from pathlib import Path

import httpx
import pytest

from scrapers.base import FetchError, HttpClient, Page, ParseError, parse_all
from scrapers.providers.huawei import (
    HuaweiScraper,
    accelerator,
    sdk_authorization,
    sdk_canonical_request,
)
from tests.scrapers.loopback import LoopbackServer, quiet_client, timing_out

PAGES = Path(__file__).parent / "pages" / "huawei"
CALCULATOR = "/api/calculator/rest/cbc/portalcalculatornodeservice/v4/api/productInfo"
KEYS = {
    "huawei_access_key": "HPUAEXAMPLE",
    "huawei_secret_key": "example-secret",
    "huawei_project_id": "0123456789abcdef0123456789abcdef",
}


def page(name: str, **meta: str) -> Page:
    return Page(url=f"file://{name}", status=200, body=(PAGES / name).read_text("utf-8"), meta=meta)


def by_key(records):
    return {(r.instance_type, r.region, r.pricing_model): r for r in records}


# --- calculator answers ------------------------------------------------------------------------------
def north4():
    return by_key(HuaweiScraper().parse(page("productInfo-cn-north-4.json", region="cn-north-4")))


def test_calculator_gives_hour_month_and_year_for_gpu_flavors():
    records = north4()
    t4 = records[("pi2.2xlarge.4", "cn-north-4", "on_demand")]
    assert (t4.amount, t4.currency, t4.unit) == (Decimal("8.16"), "CNY", "hour")
    assert (t4.vcpus, t4.ram_gib, t4.gpu_count) == (8, 32.0, 1)
    assert records[("pi2.2xlarge.4", "cn-north-4", "monthly")].amount == Decimal("3900.0")
    yearly = records[("pi2.2xlarge.4", "cn-north-4", "yearly")]
    assert (yearly.amount, yearly.unit) == (Decimal("39780.0"), "year")  # 1 year, not 2 or 3


def test_calculator_gpu_names_keep_card_memory_and_fix_glued_vendor():
    records = north4()
    assert records[("pi2.2xlarge.4", "cn-north-4", "on_demand")].gpu_name == "NVIDIA T4 16GB"
    v100 = records[("p2s.2xlarge.8", "cn-north-4", "on_demand")]
    assert v100.gpu_name == "NVIDIA V100 32GB"
    assert v100.extra["accelerator_card"] == "1*NVIDIA V100 / 1*32GiB"
    assert records[("ai1s.large.4", "cn-north-4", "on_demand")].gpu_name == "Ascend 310 8GB"
    assert records[("pi2.4xlarge.4", "cn-north-4", "monthly")].gpu_count == 2


def test_calculator_traps_are_skipped():
    records = north4()
    names = {name for name, _, _ in records}
    assert "s6.large.2" not in names and "c7.xlarge.2" not in names  # no accelerator card
    assert records[("pi2.2xlarge.4", "cn-north-4", "on_demand")].amount == Decimal("8.16")  # Linux
    assert ("p2s.16xlarge.8", "cn-north-4", "on_demand") not in records  # no ONDEMAND plan
    assert ("pi2.8xlarge.4", "cn-north-4", "on_demand") not in records  # amount null
    assert ("pi2.8xlarge.4", "cn-north-4", "monthly") in records
    assert len(records) == 19


def test_calculator_region_comes_from_the_body_without_meta():
    records = HuaweiScraper().parse(page("productInfo-ap-southeast-1.json"))
    assert {r.region for r in records} == {"ap-southeast-1"}
    assert len(records) == 6


def test_calculator_empty_region_is_not_an_error():
    assert HuaweiScraper().parse(page("productInfo-cn-east-3.json")) == []


def test_skip_models_leaves_pay_per_use_to_bss():
    meta = {"region": "cn-north-4", "skip_models": "on_demand"}
    records = HuaweiScraper().parse(page("productInfo-cn-north-4.json", **meta))
    assert {r.pricing_model for r in records} == {"monthly", "yearly"}


@pytest.mark.parametrize(
    ("card", "expected"),
    [
        ("1*NVIDIAT4 / 1*16GiB", ("NVIDIA T4 16GB", Decimal(1))),
        # The form a public calculator reader tests (fuzzbuster/ec2instances.info, 2026-08-03):
        # spaces round "*" and the memory as "16G", no B; the memory must not be lost.
        ("2 * NVIDIA T4 / 2 * 16G", ("NVIDIA T4 16GB", Decimal(2))),
        ("1 * NVIDIA V100 / 1 * 32G", ("NVIDIA V100 32GB", Decimal(1))),
        ("NVIDIA A10*2", ("NVIDIA A10", Decimal(2))),
        ("", None),
        ("0", None),
        (None, None),
    ],
)
def test_accelerator_card_forms(card, expected):
    assert accelerator(card) == expected


# --- BSS ratings -------------------------------------------------------------------------------------
def bss_meta() -> dict[str, str]:
    names = sorted(
        [
            "ai1s.large.4",
            "p2s.16xlarge.8",
            "p2s.2xlarge.8",
            "p2v.2xlarge.8",
            "pi2.2xlarge.4",
            "pi2.4xlarge.4",
            "pi2.8xlarge.4",
        ]
    )
    products = {
        str(i): {"spec": n, "gpu_name": "g", "gpu_count": "1", "vcpus": 8, "ram_gib": 32.0}
        for i, n in enumerate(names, start=1)
    }
    return {"kind": "bss", "region": "cn-north-4", "products": json.dumps(products)}


def test_bss_official_price_in_yuan_and_fen():
    records = by_key(HuaweiScraper().parse(page("bss-on-demand-cn-north-4.json", **bss_meta())))
    assert records[("pi2.2xlarge.4", "cn-north-4", "on_demand")].amount == Decimal("8.16")
    # measure_id 3: the API answered in fen; 16840 fen is 168.40 yuan.
    big = records[("p2s.16xlarge.8", "cn-north-4", "on_demand")]
    assert big.amount == Decimal("168.400")
    assert big.extra["measure_id"] == 3
    assert len(records) == 7


def test_bss_error_answer_raises():
    with pytest.raises(ParseError, match=r"CBC\.0150"):
        HuaweiScraper().parse(page("bss-error.json", kind="bss"))


def test_bss_unknown_money_unit_raises():
    data = json.loads((PAGES / "bss-on-demand-cn-north-4.json").read_text("utf-8"))
    data["product_rating_results"][0]["measure_id"] = 9
    broken = Page(url="x", status=200, body=json.dumps(data), meta=bss_meta())
    with pytest.raises(ParseError, match="measure_id=9"):
        HuaweiScraper().parse(broken)


# --- AK/SK signing -----------------------------------------------------------------------------------
def test_canonical_request_follows_the_documented_example():
    # Huawei "API signing guide": GET .../vpcs?limit=2&marker=..., X-Sdk-Date 20191115T033655Z.
    request, signed = sdk_canonical_request(
        method="GET",
        path="/v1/77b6a44cba5143ab91d13ab9a8ff44fd/vpcs",
        query={"marker": "13551d6b-755d-4757-b956-536f674975c0", "limit": "2"},
        headers={
            "Host": "service.region.example.com",
            "X-Sdk-Date": "20191115T033655Z",
            "Content-Type": "application/json",
        },
        body=b"",
    )
    assert signed == "content-type;host;x-sdk-date"
    assert request == (
        "GET\n"
        "/v1/77b6a44cba5143ab91d13ab9a8ff44fd/vpcs/\n"  # the signed URI always ends with "/"
        "limit=2&marker=13551d6b-755d-4757-b956-536f674975c0\n"
        "content-type:application/json\n"
        "host:service.region.example.com\n"
        "x-sdk-date:20191115T033655Z\n"
        "\n"
        "content-type;host;x-sdk-date\n"
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    )


def test_authorization_is_hmac_of_the_documented_string_to_sign():
    headers = {"Host": "bss.myhuaweicloud.com", "X-Sdk-Date": "20261130T080000Z"}
    body = b'{"project_id":"p"}'
    auth = sdk_authorization(
        access_key="AK", secret_key="SK", method="POST", path="/v2/x", query={}, headers=headers,
        body=body,
    )  # fmt: skip
    request, _ = sdk_canonical_request(
        method="POST", path="/v2/x", query={}, headers=headers, body=body
    )
    string_to_sign = (
        "SDK-HMAC-SHA256\n20261130T080000Z\n" + hashlib.sha256(request.encode()).hexdigest()
    )
    expected = hmac.new(b"SK", string_to_sign.encode(), hashlib.sha256).hexdigest()
    assert auth == f"SDK-HMAC-SHA256 Access=AK, SignedHeaders=host;x-sdk-date, Signature={expected}"


# --- fetch over loopback -----------------------------------------------------------------------------
def test_fetch_reads_the_calculator_per_region():
    with LoopbackServer() as srv:
        scraper = HuaweiScraper(
            base_url=srv.base_url("huawei"), regions=["cn-north-4", "ap-southeast-1", "cn-east-3"]
        )
        with HttpClient(retries=0, timeout_s=5) as client:
            pages = list(scraper.fetch(client))
    assert [p.meta["region"] for p in pages] == ["cn-north-4", "ap-southeast-1", "cn-east-3"]
    records = parse_all(scraper, pages)
    assert len(records) == 25
    assert {r.currency for r in records} == {"CNY"}


def test_fetch_with_keys_takes_pay_per_use_from_bss():
    with LoopbackServer() as srv:
        scraper = HuaweiScraper(
            base_url=srv.base_url("huawei"), credentials=KEYS, regions=["cn-north-4"]
        )
        with HttpClient(retries=0, timeout_s=5) as client:
            pages = list(scraper.fetch(client))
    assert [p.meta["kind"] for p in pages] == ["calculator", "bss"]
    records = by_key(parse_all(scraper, pages))
    od = records[("p2s.2xlarge.8", "cn-north-4", "on_demand")]
    assert (od.amount, od.extra["source"], od.gpu_name) == (
        Decimal("21.05"),
        "bss",
        "NVIDIA V100 32GB",
    )
    assert records[("p2s.16xlarge.8", "cn-north-4", "on_demand")].amount == Decimal("168.400")
    assert records[("p2s.2xlarge.8", "cn-north-4", "monthly")].amount == Decimal("7400.0")
    assert len(records) == 19 + 2  # the two hourly prices the calculator lacked come from BSS


def test_fetch_bss_request_is_signed():
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if request.method == "GET":
            return httpx.Response(200, text=(PAGES / "productInfo-ap-southeast-1.json").read_text())
        return httpx.Response(200, text=(PAGES / "bss-error.json").read_text())

    scraper = HuaweiScraper(credentials=KEYS, regions=["ap-southeast-1"])
    with HttpClient(retries=0, transport=httpx.MockTransport(handler)) as client:
        pages = list(scraper.fetch(client))
    bss = seen[1]
    assert str(bss.url) == "https://bss.myhuaweicloud.com/v2/bills/ratings/on-demand-resources"
    assert bss.headers["Authorization"].startswith("SDK-HMAC-SHA256 Access=HPUAEXAMPLE, ")
    body = json.loads(bss.content)
    assert body["project_id"] == KEYS["huawei_project_id"]
    assert [p["resource_spec"] for p in body["product_infos"]] == [
        "p2s.2xlarge.8.linux",
        "pi2.2xlarge.4.linux",
    ]
    assert "region=ap-southeast-1" in str(seen[0].url)
    with pytest.raises(ParseError, match=r"CBC\.0150"):
        scraper.parse(pages[1])


# --- faults ------------------------------------------------------------------------------------------
def test_server_error_becomes_fetch_error_after_retry():
    with LoopbackServer() as srv:
        srv.override("huawei", CALCULATOR, status=502, body="bad gateway")
        scraper = HuaweiScraper(base_url=srv.base_url("huawei"), regions=["cn-north-4"])
        with (
            quiet_client() as client,
            pytest.raises(FetchError, match="HTTP 502"),
        ):
            list(scraper.fetch(client))


def test_timeout_becomes_fetch_error():
    with (
        quiet_client(transport=timing_out()) as client,
        pytest.raises(FetchError, match="ReadTimeout"),
    ):
        list(HuaweiScraper().fetch(client))


def test_truncated_json_raises_parse_error():
    with LoopbackServer() as srv:
        body = (PAGES / "productInfo-cn-north-4.json").read_text("utf-8")[:1200]
        srv.override("huawei", CALCULATOR, body=body)
        scraper = HuaweiScraper(base_url=srv.base_url("huawei"), regions=["cn-north-4"])
        with HttpClient(retries=0, timeout_s=5) as client:
            pages = list(scraper.fetch(client))
    with pytest.raises(ParseError, match="invalid JSON"):
        scraper.parse(pages[0])


def test_html_instead_of_json_raises_parse_error():
    html = "<!DOCTYPE html><html><body>华为云 - 价格计算器</body></html>"
    with pytest.raises(ParseError, match="invalid JSON"):
        HuaweiScraper().parse(Page(url="x", status=200, body=html, meta={"region": "cn-north-4"}))


def test_renamed_product_list_raises():
    data = json.loads((PAGES / "productInfo-cn-north-4.json").read_text("utf-8"))
    data["product"]["ecs_vm"] = data["product"].pop("ec2_vm")
    with pytest.raises(ParseError, match=r"no product\.ec2_vm"):
        HuaweiScraper().parse(Page(url="x", status=200, body=json.dumps(data)))


def test_renamed_plan_field_raises():
    data = json.loads((PAGES / "productInfo-cn-north-4.json").read_text("utf-8"))
    for plan in data["product"]["ec2_vm"][0]["planList"]:
        plan["price"] = plan.pop("amount")
    with pytest.raises(ParseError, match="lacks billingMode/amount"):
        HuaweiScraper().parse(Page(url="x", status=200, body=json.dumps(data)))


def test_calculator_value_forms_a_public_reader_records():
    # fuzzbuster/ec2instances.info's calculator reader (huaweicloud/scrape_test.go at
    # 6fa4f37e2f8af54159c9a64aad4e9a73daac4be0) tests cpu/mem written as i18n unit keys after the
    # number ("8BSSUNIT.pluralUnit.23") and the card as "2 * NVIDIA T4 / 2 * 16G". Built from those
    # forms; the price is that test's 4.25.
    vm = {
        "resourceSpecCode": "g6.2xlarge.4.linux",
        "cpu": "8BSSUNIT.pluralUnit.23",
        "mem": "32BSSUNIT.pluralUnit.102",
        "instanceArch": "x86",
        "acceleratorCard": "2 * NVIDIA T4 / 2 * 16G",
        "spec": "g6.2xlarge.4",
        "imageSpec": "linux",
        "planList": [{"billingMode": "ONDEMAND", "amount": 4.25}],
    }
    body = json.dumps({"region": "cn-north-4", "product": {"ec2_vm": [vm]}})
    [record] = HuaweiScraper().parse(Page(url="x", status=200, body=body, meta={}))
    assert (record.instance_type, record.vcpus, record.ram_gib) == ("g6.2xlarge.4", 8, 32.0)
    assert (record.gpu_name, record.gpu_count, record.amount) == (
        "NVIDIA T4 16GB",
        Decimal(2),
        Decimal("4.25"),
    )
