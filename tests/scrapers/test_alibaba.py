"""Alibaba Cloud scraper: price files, spot answers, RPC signing, fetch over loopback, faults."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from scrapers.base import FetchError, HttpClient, Page, ParseError, parse_all
from scrapers.providers.alibaba import (
    AlibabaScraper,
    gpu_spec,
    latest_price_version,
    rpc_signed_query,
)
from tests.scrapers.loopback import LoopbackServer, quiet_client, timing_out

PAGES = Path(__file__).parent / "pages" / "alibaba"
KEYS = {"alibaba_access_key_id": "LTAIexample", "alibaba_access_key_secret": "example-secret"}


def page(name: str, **meta: str) -> Page:
    return Page(url=f"file://{name}", status=200, body=(PAGES / name).read_text("utf-8"), meta=meta)


def by_key(records):
    return {(r.instance_type, r.region, r.pricing_model): r for r in records}


# --- China-site price file ---------------------------------------------------------------------------
def cn_records():
    return by_key(AlibabaScraper().parse(page("instancePrice-cn.json", kind="list", site="cn")))


def test_cn_file_gives_hour_month_and_year_prices_in_cny():
    records = cn_records()
    t4 = records[("ecs.gn6i-c4g1.xlarge", "cn-hangzhou", "on_demand")]
    assert (t4.amount, t4.currency, t4.unit) == (Decimal("8.69"), "CNY", "hour")
    assert (t4.gpu_name, t4.gpu_count, t4.vcpus, t4.ram_gib) == ("NVIDIA T4", 1, 4, None)
    assert records[("ecs.gn6i-c4g1.xlarge", "cn-hangzhou", "monthly")].amount == Decimal("1730.00")
    yearly = records[("ecs.gn6i-c4g1.xlarge", "cn-hangzhou", "yearly")]
    assert (yearly.amount, yearly.unit) == (Decimal("17646.00"), "year")


def test_cn_file_multi_gpu_counts_come_from_the_type_name():
    records = cn_records()
    assert records[("ecs.gn6i-c24g1.24xlarge", "cn-hangzhou", "on_demand")].gpu_count == 4
    assert records[("ecs.gn7i-c32g1.32xlarge", "cn-hangzhou", "on_demand")].gpu_count == 4
    assert records[("ecs.gn8is-2x.8xlarge", "cn-hangzhou", "on_demand")].gpu_count == 2


def test_cn_file_vgpu_slices_are_fractional():
    records = cn_records()
    vgn6i = records[("ecs.vgn6i-m4.xlarge", "cn-hangzhou", "on_demand")]
    assert vgn6i.gpu_count == Decimal("0.25")
    assert vgn6i.extra["gpu_sharing"] == "vgpu"
    assert records[("ecs.sgn7i-vws-m2.xlarge", "cn-hangzhou", "on_demand")].gpu_count == Decimal(
        "0.0833"
    )


def test_cn_file_traps_are_skipped():
    wanted = ["cn-hangzhou", "cn-beijing", "cn-hongkong", "ap-southeast-1"]
    records = by_key(
        AlibabaScraper(regions=wanted).parse(page("instancePrice-cn.json", kind="list", site="cn"))
    )
    names = {name for name, _, _ in records}
    assert "ecs.g7.large" not in names  # CPU-only family
    assert "ecs.gn5-c4g1.xlarge" not in names  # classic network only
    assert "ecs.ebmgn7e.32xlarge" not in names  # GPU count not derivable: not guessed
    regions = {region for _, region, _ in records}
    assert regions == set(wanted)  # qingdao not wanted; HK/SG priced in CNY by the China site
    hk = records[("ecs.gn6i-c4g1.xlarge", "cn-hongkong", "on_demand")]
    assert (hk.amount, hk.currency) == (Decimal("12.40"), "CNY")
    windows = records[("ecs.gn6i-c4g1.xlarge", "cn-hangzhou", "on_demand")]
    assert windows.amount == Decimal("8.69")  # the Linux price, not the 9.05 Windows one
    assert len(records) == 34  # 28 mainland + hour/month/year for gn6i-c4g1 in HK and SG


def test_unsold_subscription_gives_no_monthly_record():
    records = cn_records()
    assert ("ecs.gn8is-2x.8xlarge", "cn-hangzhou", "on_demand") in records
    assert ("ecs.gn8is-2x.8xlarge", "cn-hangzhou", "monthly") not in records


def test_unknown_gpu_family_passes_its_family_code_for_a_curator():
    gn7e = cn_records()[("ecs.gn7e-c16g1.4xlarge", "cn-hangzhou", "on_demand")]
    assert gn7e.gpu_name == "gn7e"
    assert gn7e.extra["gpu_name_from"] == "family code"


# --- International price file ------------------------------------------------------------------------
def test_intl_file_gives_usd_for_overseas_regions_only():
    wanted = ["cn-hangzhou", "cn-hongkong", "ap-southeast-1", "us-west-1"]
    records = by_key(AlibabaScraper(regions=wanted).parse(page("instancePrice-intl.json")))
    sg = records[("ecs.gn6i-c4g1.xlarge", "ap-southeast-1", "on_demand")]
    assert (sg.amount, sg.currency) == (Decimal("1.754"), "USD")
    assert ("ecs.gn6i-c4g1.xlarge", "cn-hongkong", "monthly") in records
    regions = {region for _, region, _ in records}
    assert "cn-hangzhou" not in regions  # mainland USD price: mainland comes from the CNY file
    assert "eu-central-1" not in regions  # not a wanted region
    assert len(records) == 12


def test_price_file_with_wrong_currency_for_its_site_raises():
    with pytest.raises(ParseError, match="intl site priced in CNY"):
        AlibabaScraper().parse(page("instancePrice-cn.json", site="intl"))


# --- spot answers ------------------------------------------------------------------------------------
def test_spot_takes_latest_price_per_zone_then_cheapest_zone():
    meta = {"kind": "spot", "region": "cn-hangzhou", "instance_type": "ecs.gn6i-c4g1.xlarge"}
    (record,) = AlibabaScraper().parse(page("spot-cn-hangzhou-gn6i-c4g1.json", **meta))
    assert (record.pricing_model, record.amount, record.unit) == ("spot", Decimal("2.47"), "hour")
    assert record.extra["zones"] == {"cn-hangzhou-h": "2.47", "cn-hangzhou-i": "2.95"}
    assert record.extra["origin_price"] == "8.69"
    assert (record.region, record.currency, record.gpu_count) == ("cn-hangzhou", "CNY", 1)


def test_spot_region_comes_from_the_zone_without_meta():
    (record,) = AlibabaScraper().parse(page("spot-cn-hangzhou-gn7i-c8g1.json"))
    assert record.region == "cn-hangzhou"


def test_spot_empty_history_is_not_an_error():
    assert AlibabaScraper().parse(page("spot-empty.json", kind="spot")) == []


def test_api_error_answer_raises():
    with pytest.raises(ParseError, match=r"InvalidAccessKeyId\.NotFound"):
        AlibabaScraper().parse(page("api-error.json"))


# --- helpers -----------------------------------------------------------------------------------------
def test_rpc_signature_matches_alibaba_documented_examples():
    # Alibaba Cloud "RPC signature mechanism" example: DescribeRegions, testid / testsecret.
    params = {
        "AccessKeyId": "testid",
        "Action": "DescribeRegions",
        "Format": "XML",
        "SignatureMethod": "HMAC-SHA1",
        "SignatureNonce": "3ee8c1b8-83d3-44af-a94f-4e0ad82fd6cf",
        "SignatureVersion": "1.0",
        "Version": "2014-05-26",
    }
    query = rpc_signed_query({**params, "Timestamp": "2016-02-23T12:46:24Z"}, "testsecret")
    assert query.endswith("&Signature=OLeaidS1JvxuMvnyHOwuJ%2BuX5qY%3D")
    assert "Timestamp=2016-02-23T12%3A46%3A24Z" in query
    # The older revision of the same page spells the parameter "TimeStamp".
    query = rpc_signed_query({**params, "TimeStamp": "2016-02-23T12:46:24Z"}, "testsecret")
    assert query.endswith("&Signature=CT9X0VtwR86fNWSnsc6v8YGOjuE%3D")


def test_latest_version_compares_numbers_not_strings():
    html = (PAGES / "ecs-pricing-zh.html").read_text("utf-8")
    assert latest_price_version(html, "ecs-price-info") == "2.0.421"  # not "2.0.96"
    assert latest_price_version(html, "ecs-price-info-intl") is None


@pytest.mark.parametrize(
    ("name", "count", "vcpus"),
    [
        ("ecs.gn6i-c4g1.xlarge", Decimal(1), 4),
        ("ecs.gn6v-c8g1.16xlarge", Decimal(8), 64),
        ("ecs.vgn7i-vws-m12.7xlarge", Decimal("0.5"), 28),
        ("ecs.ebmgn7e.32xlarge", None, 128),
        ("ecs.ebmgn6v.24xlarge", 8, 96),  # bare metal: count from the family table
        ("ecs.ebmgn6i.24xlarge", 4, 96),
    ],
)
def test_gpu_spec_reads_counts_from_names(name, count, vcpus):
    spec = gpu_spec(name)
    assert (spec["gpu_count"], spec["vcpus"]) == (count, vcpus)


def test_bare_metal_and_gn7_families_name_their_gpu():
    assert gpu_spec("ecs.ebmgn6v.24xlarge")["gpu_name"] == "NVIDIA V100"
    assert gpu_spec("ecs.ebmgn6i.24xlarge")["gpu_name"] == "NVIDIA T4"
    gn7 = gpu_spec("ecs.gn7-c12g1.3xlarge")
    assert (gn7["gpu_name"], gn7["gpu_count"], gn7["gpu_name_from"]) == (
        "NVIDIA A100 40GB",
        1,
        "family table",
    )
    assert gpu_spec("ecs.ebmgn7e.32xlarge")["gpu_name_from"] == "family code"


def test_gpu_spec_ignores_cpu_families():
    assert gpu_spec("ecs.g7.large") is None
    assert gpu_spec("ecs.c8i.2xlarge") is None


# --- fetch over loopback -----------------------------------------------------------------------------
def test_fetch_reads_the_china_site_file_only_so_every_family_is_in_cny():
    with LoopbackServer() as srv:
        scraper = AlibabaScraper(base_url=srv.base_url("alibaba"))
        with HttpClient(retries=0, timeout_s=5) as client:
            pages = list(scraper.fetch(client))
    assert [(p.meta["site"], p.meta["version"]) for p in pages] == [("cn", "2.0.421")]
    records = parse_all(scraper, pages)
    assert {r.currency for r in records} == {"CNY"}
    assert {"cn-hongkong", "ap-southeast-1"} <= {r.region for r in records}


class _BothSites(AlibabaScraper):
    sites = ("cn", "intl")


def test_fetch_reads_both_sites_when_asked():
    with LoopbackServer() as srv:
        scraper = _BothSites(base_url=srv.base_url("alibaba"))
        with HttpClient(retries=0, timeout_s=5) as client:
            pages = list(scraper.fetch(client))
    assert [(p.meta["site"], p.meta["version"]) for p in pages] == [
        ("cn", "2.0.421"),
        ("intl", "2.0.421"),
    ]
    records = parse_all(scraper, pages)
    assert {r.currency for r in records} == {"CNY", "USD"}


def test_fetch_with_keys_adds_signed_spot_queries():
    with LoopbackServer() as srv:
        scraper = AlibabaScraper(
            base_url=srv.base_url("alibaba"), credentials=KEYS, regions=["cn-hangzhou"]
        )
        with HttpClient(retries=0, timeout_s=5) as client:
            pages = list(scraper.fetch(client))
    spot_pages = [p for p in pages if p.meta["kind"] == "spot"]
    assert len(spot_pages) == 8  # one per GPU type priced hourly in cn-hangzhou
    query = parse_qs(urlsplit(spot_pages[0].url).query)
    assert query["AccessKeyId"] == ["LTAIexample"]
    assert query["SignatureMethod"] == ["HMAC-SHA1"]
    assert query["Signature"]
    spot = [r for r in parse_all(scraper, pages) if r.pricing_model == "spot"]
    assert {(r.instance_type, r.amount) for r in spot} == {
        ("ecs.gn6i-c4g1.xlarge", Decimal("2.47")),
        ("ecs.gn7i-c8g1.2xlarge", Decimal("5.11")),
    }


def test_spot_pagination_follows_next_offset():
    def history(zone: str, price: float) -> dict:
        row = {"ZoneId": zone, "InstanceType": "ecs.gn6i-c4g1.xlarge", "SpotPrice": price}
        return {**row, "Timestamp": "2026-11-30T07:00:00Z", "NetworkType": "vpc"}

    empty = {"NextOffset": 0, "Currency": "CNY", "SpotPrices": {"SpotPriceType": []}}
    answers = [
        {
            "NextOffset": 1,
            "Currency": "CNY",
            "SpotPrices": {"SpotPriceType": [history("cn-beijing-h", 2.9)]},
        },
        {
            "NextOffset": 0,
            "Currency": "CNY",
            "SpotPrices": {"SpotPriceType": [history("cn-beijing-k", 2.6)]},
        },
    ]
    offsets: list[str | None] = []

    def handler(request: httpx.Request) -> httpx.Response:
        query = parse_qs(request.url.query.decode())
        if "Action" not in query:
            return httpx.Response(200, text=(PAGES / "ecs-pricing-zh.html").read_text("utf-8"))
        offsets.append(query.get("Offset", [None])[0])
        return httpx.Response(200, json=answers.pop(0) if answers else empty)

    scraper = AlibabaScraper(credentials=KEYS)
    one_list = [page("instancePrice-cn.json", kind="list", site="cn")]
    scraper.regions = ("cn-beijing",)
    with HttpClient(retries=0, transport=httpx.MockTransport(handler)) as client:
        pages = list(scraper._fetch_spot(client, one_list))
    # cn-beijing has two GPU types; the first answers in two pages, joined into one answer.
    assert offsets == [None, "1", None]
    assert pages[0].url.startswith("https://ecs.cn-beijing.aliyuncs.com/?")
    assert [p.meta.get("pages_merged") for p in pages] == ["2", None]
    (record,) = scraper.parse(pages[0])
    assert record.amount == Decimal("2.6")
    assert record.extra["zones"] == {"cn-beijing-h": "2.9", "cn-beijing-k": "2.6"}


# --- faults ------------------------------------------------------------------------------------------
def test_server_error_becomes_fetch_error_after_retry():
    with LoopbackServer() as srv:
        srv.override(
            "alibaba",
            "/aliyun/ecs-price-info/2.0.421/price/download/instancePrice.json",
            status=503,
            body="busy",
        )
        scraper = AlibabaScraper(base_url=srv.base_url("alibaba"))
        with (
            quiet_client() as client,
            pytest.raises(FetchError, match="HTTP 503"),
        ):
            list(scraper.fetch(client))


def test_pricing_page_without_version_is_a_fetch_error():
    with LoopbackServer() as srv:
        srv.override(
            "alibaba",
            "/www.aliyun.com/price/ecs/ecs-pricing/zh",
            body="<html><body>维护中</body></html>",
            content_type="text/html",
        )
        scraper = AlibabaScraper(base_url=srv.base_url("alibaba"))
        with (
            HttpClient(retries=0, timeout_s=5) as client,
            pytest.raises(FetchError, match="no ecs-price-info version"),
        ):
            list(scraper.fetch(client))


def test_timeout_becomes_fetch_error():
    with (
        quiet_client(transport=timing_out(httpx.ConnectTimeout)) as client,
        pytest.raises(FetchError, match="ConnectTimeout"),
    ):
        list(AlibabaScraper().fetch(client))


def test_truncated_price_file_raises_parse_error():
    with LoopbackServer() as srv:
        body = (PAGES / "instancePrice-cn.json").read_text("utf-8")[:900]
        srv.override(
            "alibaba", "/aliyun/ecs-price-info/2.0.421/price/download/instancePrice.json", body=body
        )
        scraper = AlibabaScraper(base_url=srv.base_url("alibaba"))
        with HttpClient(retries=0, timeout_s=5) as client:
            pages = list(scraper.fetch(client))
    with pytest.raises(ParseError, match="invalid JSON"):
        scraper.parse(pages[0])


def test_html_instead_of_json_raises_parse_error():
    html = (PAGES / "ecs-pricing-zh.html").read_text("utf-8")
    with pytest.raises(ParseError, match="invalid JSON"):
        AlibabaScraper().parse(Page(url="x", status=200, body=html, meta={"kind": "list"}))


def test_renamed_pricing_info_raises():
    data = json.loads((PAGES / "instancePrice-cn.json").read_text("utf-8"))
    data["priceInfo"] = data.pop("pricingInfo")
    with pytest.raises(ParseError, match="no pricingInfo"):
        AlibabaScraper().parse(Page(url="x", status=200, body=json.dumps(data)))


def test_renamed_period_fields_raise():
    data = json.loads((PAGES / "instancePrice-cn.json").read_text("utf-8"))
    key = "cn-hangzhou::ecs.gn6i-c4g1.xlarge::vpc::linux::optimized"
    data["pricingInfo"][key] = {"hour": [{"price": "8.69", "period": "1"}]}
    with pytest.raises(ParseError, match="no hours/months/years"):
        AlibabaScraper().parse(Page(url="x", status=200, body=json.dumps(data)))


def test_key_in_a_new_shape_raises():
    data = json.loads((PAGES / "instancePrice-intl.json").read_text("utf-8"))
    data["pricingInfo"]["ap-southeast-1|ecs.gn6i-c4g1.xlarge"] = {"hours": []}
    with pytest.raises(ParseError, match="is not region::type"):
        AlibabaScraper().parse(Page(url="x", status=200, body=json.dumps(data)))


def test_renamed_spot_list_raises():
    body = json.dumps({"RequestId": "x", "SpotPrices": {"SpotPrice": []}})
    with pytest.raises(ParseError, match="SpotPriceType"):
        AlibabaScraper().parse(Page(url="x", status=200, body=body, meta={"kind": "spot"}))
