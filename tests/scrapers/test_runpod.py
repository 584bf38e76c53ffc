"""RunPod scraper: gpuTypes GraphQL answers, null/zero prices, ids vs names, and fetch faults."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import httpx
import pytest

from scrapers.base import FetchError, HttpClient, Page, ParseError, parse_pages
from scrapers.providers.runpod import QUERY, RunPodScraper
from tests.scrapers.loopback import LoopbackServer, quiet_client, timing_out

PAGES = Path(__file__).resolve().parent / "pages" / "runpod"
BODY = (PAGES / "gpu-types.json").read_text(encoding="utf-8")


def page(body: str = BODY) -> Page:
    return Page(url="https://api.runpod.io/graphql", status=200, body=body)


def records_of(body: str = BODY):
    return RunPodScraper().parse(page(body))


def by_key(records):
    return {(r.instance_type, r.pricing_model): r for r in records}


def test_page_gives_on_demand_and_spot_per_cloud_and_pod_size():
    records = records_of()
    assert len(records) == 154
    assert sum(r.pricing_model == "on_demand" for r in records) == 79
    assert sum(r.pricing_model == "spot" for r in records) == 75
    assert {r.region for r in records} == {"global"}
    assert {(r.currency, r.unit) for r in records} == {("USD", "hour")}
    assert len({(r.instance_type, r.pricing_model) for r in records}) == len(records)


def test_pod_price_is_gpu_count_times_the_per_gpu_price():
    records = by_key(records_of())
    assert records[("1x H100 SXM (secure)", "on_demand")].amount == Decimal("3.99")
    assert records[("8x H100 SXM (secure)", "on_demand")].amount == Decimal("31.92")
    assert records[("8x H100 SXM (community)", "on_demand")].amount == Decimal("21.52")
    assert records[("4x B200 (community)", "on_demand")].amount == Decimal("23.92")
    assert records[("2x A40 (secure)", "on_demand")].amount == Decimal("0.88")
    eight = records[("8x H100 SXM (secure)", "on_demand")]
    assert eight.gpu_count == Decimal(8)
    assert (eight.vcpus, eight.ram_gib) == (160, 1000.0)
    assert eight.extra["usd_per_gpu_hour"] == 3.99


def test_spot_prices_come_from_the_per_cloud_spot_fields():
    records = by_key(records_of())
    assert records[("1x H100 SXM (secure)", "spot")].amount == Decimal("2.49")
    assert records[("2x H100 SXM (community)", "spot")].amount == Decimal("3.50")
    assert (
        records[("1x H100 SXM (community)", "spot")].extra["lowest_minimum_bid_usd_per_gpu_hour"]
        == 1.75
    )


def test_gpu_name_is_the_gpu_id_not_the_display_name():
    records = by_key(records_of())
    a100 = records[("1x A100 SXM (secure)", "on_demand")]
    assert a100.gpu_name == "NVIDIA A100-SXM4-80GB"
    assert a100.extra["display_name"] == "A100 SXM"
    assert records[("1x A100 PCIe (community)", "on_demand")].gpu_name == "NVIDIA A100 80GB PCIe"
    assert records[("1x MI300X (secure)", "on_demand")].gpu_name == "AMD Instinct MI300X OAM"


def test_null_or_zero_price_or_unavailable_cloud_gives_no_record():
    records = by_key(records_of())
    names = {name for name, _ in records}
    assert "1x H200 SXM (community)" not in names  # communityPrice null
    assert "1x A40 (community)" not in names  # communityPrice 0, communityCloud false
    assert "1x A100 SXM 40GB (secure)" not in names  # securePrice 0
    assert ("1x B200 (community)", "spot") not in records  # communitySpotPrice null
    assert not any("V100" in name for name in names)  # both clouds false, stale prices beside
    assert not any("unknown" in name for name in names)  # RunPod's placeholder type
    assert records[("8x A100 SXM 40GB (community)", "on_demand")].amount == Decimal("8.0")


def test_max_gpu_count_limits_the_pod_sizes():
    names = {r.instance_type for r in records_of() if r.pricing_model == "on_demand"}
    assert {
        "1x RTX 4090 (community)",
        "2x RTX 4090 (community)",
        "4x RTX 4090 (community)",
    } <= names
    assert "8x RTX 4090 (community)" not in names
    assert "8x RTX 4090 (secure)" in names


def test_graphql_errors_are_a_parse_error():
    body = (PAGES / "graphql-error.json").read_text(encoding="utf-8")
    with pytest.raises(ParseError, match="Cannot query field"):
        records_of(body)


def test_errors_beside_partial_data_are_a_parse_error():
    document = json.loads(BODY)
    document["errors"] = [{"message": "lowestPrice resolver timed out"}]
    with pytest.raises(ParseError, match="resolver timed out"):
        records_of(json.dumps(document))


def test_renamed_field_is_a_parse_error():
    with pytest.raises(ParseError, match="lacks communityPrice"):
        records_of(BODY.replace('"communityPrice"', '"communityCloudPrice"'))


def test_missing_gpu_types_is_a_parse_error():
    with pytest.raises(ParseError, match="gpuTypes"):
        records_of('{"data": {"gpuTypeList": []}}')


def test_truncated_json_is_a_parse_error():
    with pytest.raises(ParseError, match="not JSON"):
        records_of(BODY[:500])


def test_html_instead_of_json_is_a_parse_error():
    with pytest.raises(ParseError, match="not JSON"):
        records_of(
            "<html><head><title>502 Bad Gateway</title></head><body>cloudflare</body></html>"
        )


def test_empty_list_is_an_empty_result():
    assert records_of('{"data": {"gpuTypes": []}}') == []


def test_records_serialise_to_json():
    for record in records_of():
        json.dumps(record.as_json())


# --- fetch through the loopback server -----------------------------------------------------


def test_fetch_posts_the_query_without_a_key():
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, text=BODY, headers={"content-type": "application/json"})

    with HttpClient(retries=0, transport=httpx.MockTransport(answer)) as client:
        pages = list(RunPodScraper().fetch(client))
    assert len(pages) == 1
    assert seen[0].method == "POST"
    assert str(seen[0].url) == "https://api.runpod.io/graphql"
    assert json.loads(seen[0].content) == {"query": QUERY}


def test_fetch_sends_the_key_as_query_parameter_and_parse_drops_it():
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, text=BODY, headers={"content-type": "application/json"})

    scraper = RunPodScraper(credentials={"runpod_api_key": "rp_secret"})
    with HttpClient(retries=0, transport=httpx.MockTransport(answer)) as client:
        pages = list(scraper.fetch(client))
    assert seen[0].url.params["api_key"] == "rp_secret"
    records = scraper.parse(pages[0])
    assert all("rp_secret" not in json.dumps(r.as_json()) for r in records)


def test_fetch_through_loopback():
    with LoopbackServer() as srv:
        scraper = RunPodScraper(
            base_url=srv.base_url("runpod"), credentials={"runpod_api_key": "k"}
        )
        with HttpClient(retries=0, timeout_s=5) as client:
            pages = list(scraper.fetch(client))
    assert pages[0].url.split("?")[0].endswith("/runpod/graphql")
    assert len(scraper.parse(pages[0])) == 154


def test_fetch_500_is_a_fetch_error():
    with LoopbackServer() as srv:
        srv.override("runpod", "/graphql", status=500, body='{"error": "internal"}')
        scraper = RunPodScraper(base_url=srv.base_url("runpod"))
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
        list(RunPodScraper().fetch(client))


@pytest.mark.parametrize(
    ("body", "content_type", "message"),
    [
        (BODY[: len(BODY) // 3], "application/json", "not JSON"),
        (
            "<!DOCTYPE html><html><body>Attention Required! | Cloudflare</body></html>",
            "text/html",
            "not JSON",
        ),
        (BODY.replace('"securePrice"', '"secure_price"'), "application/json", "lacks securePrice"),
    ],
    ids=["truncated-json", "html-instead-of-json", "renamed-field"],
)
def test_fetched_bad_body_is_a_parse_error(body, content_type, message):
    with LoopbackServer() as srv:
        srv.override("runpod", "/graphql", body=body, content_type=content_type)
        scraper = RunPodScraper(base_url=srv.base_url("runpod"))
        with HttpClient(retries=0, timeout_s=5) as client:
            pages = list(scraper.fetch(client))
        with pytest.raises(ParseError, match=message):
            scraper.parse(pages[0])


def _one_type(**fields) -> str:
    entry = {
        "id": "NVIDIA GeForce RTX 3080",
        "displayName": "RTX 3080",
        "memoryInGb": 10,
        "secureCloud": False,
        "communityCloud": True,
        "securePrice": None,
        "communityPrice": 0.17,
        "secureSpotPrice": None,
        "communitySpotPrice": None,
        **fields,
    }
    return json.dumps({"data": {"gpuTypes": [entry]}})


def test_type_max_gpu_count_limits_the_pod_sizes():
    # RunPod's own per-type limit (maxGpuCount: 2) wins over any larger shape (issue 13).
    records = records_of(_one_type(maxGpuCount=2))
    assert sorted(r.gpu_count for r in records) == [1, 2]


def test_per_cloud_maximum_narrows_the_type_maximum():
    records = records_of(_one_type(maxGpuCount=8, maxGpuCountCommunityCloud=4))
    assert sorted(r.gpu_count for r in records) == [1, 2, 4]


def test_no_maximum_lists_only_the_one_gpu_pod():
    scraper = RunPodScraper()
    result = parse_pages(scraper, [page(_one_type())])
    assert [r.gpu_count for r in result.records] == [1]
    assert any("no maxGpuCount" in n.reason for n in result.notes)
