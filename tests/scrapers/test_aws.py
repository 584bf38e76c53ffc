"""AWS scraper: recorded Price List offer files and Spot feed, loopback fetches, faults."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from scrapers.base import REGISTRY, FetchError, HttpClient, Page, ParseError, parse_all
from scrapers.providers.aws import AwsScraper
from tests.scrapers.loopback import LoopbackServer, quiet_client, timing_out

PAGES = Path(__file__).resolve().parent / "pages" / "aws"
US_EAST_1 = "/offers/v1.0/aws/AmazonEC2/current/us-east-1/index.json"


def page(name: str, **meta: str) -> Page:
    return Page(url=f"file:///{name}", status=200, body=(PAGES / name).read_text(), meta=meta)


def by_key(records):
    return {(r.instance_type, r.region, r.pricing_model): r for r in records}


@pytest.fixture
def us_east_1():
    return AwsScraper().parse(page("us-east-1.json", region="us-east-1"))


def test_registered():
    assert REGISTRY["aws"] is AwsScraper
    assert AwsScraper.provider_slug == "aws"


def test_us_east_1_record_set(us_east_1):
    keys = {(r.instance_type, r.pricing_model) for r in us_east_1}
    on_demand = {
        "g4dn.xlarge", "g4dn.2xlarge", "g4dn.12xlarge", "g4dn.metal", "g5.xlarge", "g5.48xlarge",
        "g6.xlarge", "g6e.xlarge", "gr6.4xlarge", "p3.2xlarge", "p3dn.24xlarge", "p4d.24xlarge",
        "p4de.24xlarge", "p5.48xlarge", "p5en.48xlarge", "p6-b200.48xlarge",
    }  # fmt: skip
    reserved = {
        ("g4dn.xlarge", "reserved_1y"), ("g4dn.xlarge", "reserved_3y"),
        ("g5.xlarge", "reserved_1y"), ("g5.xlarge", "reserved_3y"),
        ("p4d.24xlarge", "reserved_1y"), ("p4d.24xlarge", "reserved_3y"),
        ("p5.48xlarge", "reserved_1y"),
    }  # fmt: skip
    assert keys == {(t, "on_demand") for t in on_demand} | reserved
    assert len(us_east_1) == 23
    assert {r.region for r in us_east_1} == {"us-east-1"}
    assert {r.currency for r in us_east_1} == {"USD"}
    assert {r.unit for r in us_east_1} == {"hour"}


def test_exact_on_demand_and_hardware(us_east_1):
    records = by_key(us_east_1)
    g4dn = records[("g4dn.xlarge", "us-east-1", "on_demand")]
    assert g4dn.amount == Decimal("0.526")
    assert (g4dn.gpu_name, g4dn.gpu_count, g4dn.vcpus, g4dn.ram_gib) == ("NVIDIA T4", 1, 4, 16.0)
    assert g4dn.extra["sku"] and g4dn.extra["gpu_memory"] == "16 GiB"
    p4d = records[("p4d.24xlarge", "us-east-1", "on_demand")]
    assert p4d.amount == Decimal("32.7726")
    assert (p4d.gpu_name, p4d.gpu_count, p4d.ram_gib) == ("NVIDIA A100-SXM4-40GB", 8, 1152.0)
    assert records[("p3dn.24xlarge", "us-east-1", "on_demand")].gpu_name == "NVIDIA V100 32GB"
    assert records[("g4dn.metal", "us-east-1", "on_demand")].gpu_count == 8


def test_new_instance_type_carries_hardware(us_east_1):
    b200 = by_key(us_east_1)[("p6-b200.48xlarge", "us-east-1", "on_demand")]
    assert (b200.gpu_name, b200.gpu_count, b200.vcpus, b200.ram_gib) == (
        "NVIDIA B200",
        8,
        192,
        2048.0,
    )
    assert b200.amount == Decimal("113.9328")


def test_traps_are_excluded(us_east_1):
    # Windows 0.71, RHEL 0.5548, SQL Web 0.574, Dedicated 0.5786, capacity reservations and BYOL
    # all describe g4dn.xlarge: only the one Linux/shared/Used on-demand price survives.
    g4dn = [r for r in us_east_1 if r.instance_type == "g4dn.xlarge"]
    assert sorted(r.pricing_model for r in g4dn) == ["on_demand", "reserved_1y", "reserved_3y"]
    amounts = {r.amount for r in us_east_1}
    for trap in ("0.71", "0.5548", "0.574", "0.5786", "0.515", "36.0499", "0.08", "0.01"):
        assert Decimal(trap) not in amounts
    families = {r.instance_type.split(".")[0] for r in us_east_1}
    assert not families & {"g4ad", "g5g", "m5"}
    assert all(r.instance_type != "p4d" for r in us_east_1)  # the Dedicated Host product


def test_reservations_standard_no_upfront_hourly(us_east_1):
    records = by_key(us_east_1)
    one = records[("g4dn.xlarge", "us-east-1", "reserved_1y")]
    three = records[("g4dn.xlarge", "us-east-1", "reserved_3y")]
    # No Upfront wins over Partial/All Upfront; convertible (0.379 / 0.273) is ignored.
    assert (one.amount, three.amount) == (Decimal("0.331"), Decimal("0.227"))
    assert one.unit == "hour" and one.extra["purchase_option"] == "No Upfront"
    # p5 has a standard 1-year offer but only a convertible 3-year one.
    assert ("p5.48xlarge", "us-east-1", "reserved_3y") not in records


def test_all_upfront_total_is_converted_to_hourly(us_east_1):
    p4d = by_key(us_east_1)[("p4d.24xlarge", "us-east-1", "reserved_3y")]
    assert p4d.amount == (Decimal(298069) / Decimal(26280)).quantize(Decimal("1e-10"))
    assert p4d.amount == Decimal("11.3420471842")
    assert p4d.unit == "hour"
    assert p4d.extra["purchase_option"] == "All Upfront"


def test_other_region_file():
    records = AwsScraper().parse(page("us-west-2.json"))
    assert sorted((r.instance_type, str(r.amount)) for r in records) == [
        ("g5.xlarge", "1.0060000000"),
        ("g6e.48xlarge", "30.1311800000"),
        ("p4de.24xlarge", "40.9657500000"),
    ]
    assert {r.region for r in records} == {"us-west-2"}  # read from regionCode, no meta needed


def test_region_without_gpu_products_is_empty():
    assert AwsScraper().parse(page("eu-north-1.json", region="eu-north-1")) == []


def test_spot_feed():
    records = AwsScraper().parse(page("spot.js"))
    assert {r.pricing_model for r in records} == {"spot"}
    got = {(r.instance_type, r.region): (r.amount, r.gpu_count) for r in records}
    assert got == {
        ("g4dn.xlarge", "us-east-1"): (Decimal("0.1845"), 1),
        ("g4dn.12xlarge", "us-east-1"): (Decimal("1.2684"), 4),
        ("g5.xlarge", "us-east-1"): (Decimal("0.397"), 1),
        ("p4d.24xlarge", "us-east-1"): (Decimal("5.0933"), 8),
        ("g5.xlarge", "us-west-2"): (Decimal("0.357"), 1),
        ("p4de.24xlarge", "us-west-2"): (Decimal("6.8849"), 8),
        ("g4dn.xlarge", "ap-northeast-1"): (Decimal("0.2264"), 1),  # legacy "apac-tokyo"
    }
    # p5.48xlarge is "N/A*"; m5/g4ad are not GPU families we map; mswin prices are ignored.


def test_fetch_through_loopback_without_spot_source():
    with LoopbackServer() as srv:
        scraper = AwsScraper(
            base_url=srv.base_url("aws"), regions=["us-east-1", "us-west-2", "eu-north-1"]
        )
        with HttpClient(retries=0, timeout_s=5) as client:
            pages = list(scraper.fetch(client))
    assert [p.meta["region"] for p in pages] == ["us-east-1", "us-west-2", "eu-north-1"]
    assert all(p.status == 200 and p.url.endswith("/index.json") for p in pages)
    assert len(parse_all(scraper, pages)) == 26


def test_fetch_with_spot_source():
    with LoopbackServer() as srv:
        scraper = AwsScraper(
            base_url=srv.base_url("aws"),
            regions=["us-west-2"],
            credentials={"aws_spot_source_url": srv.base_url("aws") + "/spot/spot.js"},
        )
        with HttpClient(retries=0, timeout_s=5) as client:
            pages = list(scraper.fetch(client))
    assert [p.meta["kind"] for p in pages] == ["offer", "spot"]
    records = parse_all(scraper, pages)
    assert sum(r.pricing_model == "spot" for r in records) == 7


def test_default_regions_match_fixture_codes():
    assert AwsScraper().regions == AwsScraper.default_regions
    assert "us-east-1" in AwsScraper.default_regions


# --- faults ------------------------------------------------------------------------------
def _fetch_with_override(**override):
    with LoopbackServer() as srv:
        srv.override("aws", US_EAST_1, **override)
        scraper = AwsScraper(base_url=srv.base_url("aws"), regions=["us-east-1"])
        with quiet_client(timeout_s=5) as client:
            return [scraper.parse(p) for p in scraper.fetch(client)]


def test_server_error_raises_fetch_error_after_retries():
    with pytest.raises(FetchError, match="HTTP 500"):
        _fetch_with_override(status=500, body="internal error", content_type="text/plain")


def test_timeout_raises_fetch_error():
    transport = timing_out()
    scraper = AwsScraper(regions=["us-east-1"])
    client = quiet_client(transport=transport)
    with client, pytest.raises(FetchError, match="ReadTimeout"):
        list(scraper.fetch(client))


def test_truncated_json_raises_parse_error():
    body = (PAGES / "us-east-1.json").read_text()[:5000]
    with pytest.raises(ParseError, match="invalid JSON"):
        _fetch_with_override(body=body)


def test_html_instead_of_json_raises_parse_error():
    html = "<!DOCTYPE html><html><body><h1>Access Denied</h1></body></html>"
    with pytest.raises(ParseError, match="HTML"):
        _fetch_with_override(body=html, content_type="text/html")


def _mutated(mutate) -> Page:
    data = json.loads((PAGES / "us-east-1.json").read_text())
    mutate(data)
    return Page(url="file:///mutated", status=200, body=json.dumps(data))


def _first_gpu_product(data):
    return next(p for p in data["products"].values() if p["attributes"].get("gpu"))


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d.update(Products=d.pop("products")), "products"),
        (lambda d: d["terms"].update(onDemand=d["terms"].pop("OnDemand")), "OnDemand"),
        (lambda d: d.update(offerCode="AmazonRDS"), "AmazonEC2"),
        (
            lambda d: _first_gpu_product(d)["attributes"].update(
                os=_first_gpu_product(d)["attributes"].pop("operatingSystem")
            ),
            "operatingSystem",
        ),
        (lambda d: _first_gpu_product(d)["attributes"].pop("gpu"), "gpu"),
    ],
    ids=["products", "OnDemand", "offerCode", "operatingSystem", "gpu"],
)
def test_renamed_fields_raise_parse_error(mutate, message):
    with pytest.raises(ParseError, match=message):
        AwsScraper().parse(_mutated(mutate))


def test_renamed_price_field_raises_parse_error():
    def rename(data):
        for offers in data["terms"]["OnDemand"].values():
            for term in offers.values():
                for dim in term["priceDimensions"].values():
                    dim["price"] = dim.pop("pricePerUnit")

    with pytest.raises(ParseError, match="pricePerUnit"):
        AwsScraper().parse(_mutated(rename))


def test_non_numeric_price_raises_parse_error():
    def garble(data):
        for offers in data["terms"]["OnDemand"].values():
            for term in offers.values():
                for dim in term["priceDimensions"].values():
                    dim["pricePerUnit"]["USD"] = "call us"

    with pytest.raises(ParseError, match="not a number"):
        AwsScraper().parse(_mutated(garble))


def test_spot_feed_without_regions_raises_parse_error():
    with pytest.raises(ParseError, match=r"config\.regions"):
        AwsScraper().parse(Page(url="x", status=200, body='callback({"vers":0.01,"config":{}});'))
