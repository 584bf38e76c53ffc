"""Azure scraper: recorded Retail Prices pages, NextPageLink pagination over loopback, faults."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import httpx
import pytest

from scrapers.base import REGISTRY, FetchError, HttpClient, Page, ParseError, parse_all
from scrapers.providers.azure import AzureScraper
from tests.scrapers.loopback import LoopbackServer, quiet_client, timing_out

PAGES = Path(__file__).resolve().parent / "pages" / "azure"
API = "/api/retail/prices"


def page(name: str) -> Page:
    return Page(url=f"file:///{name}", status=200, body=(PAGES / name).read_text())


def by_key(records):
    return {(r.instance_type, r.region, r.pricing_model): r for r in records}


@pytest.fixture
def eastus_first():
    return AzureScraper().parse(page("eastus-1.json"))


def test_registered():
    assert REGISTRY["azure"] is AzureScraper


def test_first_page_records(eastus_first):
    assert sorted({(r.instance_type, r.pricing_model) for r in eastus_first}) == [
        ("Standard_NC24ads_A100_v4", "on_demand"),
        ("Standard_NC24ads_A100_v4", "reserved_1y"),
        ("Standard_NC24ads_A100_v4", "reserved_3y"),
        ("Standard_NC24ads_A100_v4", "spot"),
        ("Standard_NC4as_T4_v3", "on_demand"),
        ("Standard_NC4as_T4_v3", "reserved_1y"),
        ("Standard_NC4as_T4_v3", "reserved_3y"),
        ("Standard_NC4as_T4_v3", "spot"),
        ("Standard_NC64as_T4_v3", "on_demand"),
        ("Standard_NC64as_T4_v3", "spot"),
        ("Standard_NC6s_v3", "on_demand"),
        ("Standard_NC6s_v3", "spot"),
    ]
    assert len(eastus_first) == 12
    assert {r.region for r in eastus_first} == {"eastus"}
    assert {(r.currency, r.unit) for r in eastus_first} == {("USD", "hour")}


def test_exact_consumption_and_spot(eastus_first):
    records = by_key(eastus_first)
    t4 = records[("Standard_NC4as_T4_v3", "eastus", "on_demand")]
    assert t4.amount == Decimal("0.526")
    assert (t4.gpu_name, t4.gpu_count, t4.vcpus, t4.ram_gib) == ("NVIDIA Tesla T4", 1, 4, 28.0)
    assert t4.extra["savings_plan_hourly"] == {"3 Years": "0.2367", "1 Year": "0.3524"}
    assert records[("Standard_NC4as_T4_v3", "eastus", "spot")].amount == Decimal("0.062699")
    assert records[("Standard_NC64as_T4_v3", "eastus", "on_demand")].gpu_count == 4


def test_reservation_totals_become_hourly(eastus_first):
    records = by_key(eastus_first)
    one = records[("Standard_NC4as_T4_v3", "eastus", "reserved_1y")]
    three = records[("Standard_NC4as_T4_v3", "eastus", "reserved_3y")]
    assert one.extra["term_total"] == "2765.0"
    assert one.amount == Decimal("0.3156392694")  # 2765 / 8760 h
    assert three.amount == (Decimal(5529) / Decimal(26280)).quantize(Decimal("1e-10"))
    assert one.unit == three.unit == "hour"


def test_traps_are_excluded(eastus_first):
    t4 = [r for r in eastus_first if r.instance_type == "Standard_NC4as_T4_v3"]
    # Windows (0.736), Low Priority (0.1052), Windows Spot (0.0891), DevTest and the non-primary
    # duplicate meter leave exactly one record per pricing model.
    assert sorted(r.pricing_model for r in t4) == [
        "on_demand",
        "reserved_1y",
        "reserved_3y",
        "spot",
    ]
    amounts = {r.amount for r in eastus_first}
    assert not amounts & {Decimal("0.736"), Decimal("0.1052"), Decimal("0.0891")}
    names = {r.instance_type for r in eastus_first}
    assert "Standard_D2s_v5" not in names and "Standard_NC6" not in names
    # The 5-year reservation is skipped rather than mislabelled.
    a100 = [r for r in eastus_first if r.instance_type == "Standard_NC24ads_A100_v4"]
    assert sorted(r.pricing_model for r in a100) == [
        "on_demand",
        "reserved_1y",
        "reserved_3y",
        "spot",
    ]


def test_second_page_fractional_and_new_sizes():
    records = by_key(AzureScraper().parse(page("eastus-2.json")))
    assert len(records) == 11
    nv6 = records[("Standard_NV6ads_A10_v5", "eastus", "on_demand")]
    assert (nv6.gpu_name, nv6.gpu_count, nv6.amount) == (
        "NVIDIA A10",
        Decimal("0.1667"),
        Decimal("0.454"),
    )
    h200 = records[("Standard_ND96isr_H200_v5", "eastus", "on_demand")]
    assert (h200.gpu_name, h200.gpu_count, h200.vcpus) == ("NVIDIA H200", 8, 96)
    nd = records[("Standard_ND96asr_v4", "eastus", "reserved_3y")]
    assert nd.amount == Decimal("10.8788051750")


def test_other_region_and_empty_region():
    records = AzureScraper().parse(page("southcentralus.json"))
    assert len(records) == 6
    assert by_key(records)[
        ("Standard_ND96amsr_A100_v4", "southcentralus", "on_demand")
    ].amount == Decimal("39.324")
    assert AzureScraper().parse(page("eastus2euap.json")) == []


def test_fetch_follows_next_page_link_through_loopback():
    with LoopbackServer() as srv:
        scraper = AzureScraper(
            base_url=srv.base_url("azure"), regions=["eastus", "southcentralus", "eastus2euap"]
        )
        with HttpClient(retries=0, timeout_s=5) as client:
            pages = list(scraper.fetch(client))
        base = srv.base_url("azure")
    assert [(p.meta["region"], p.meta["page"]) for p in pages] == [
        ("eastus", "1"),
        ("eastus", "2"),
        ("southcentralus", "1"),
        ("eastus2euap", "1"),
    ]
    # The NextPageLink names prices.azure.com; it was re-pointed at the configured base URL.
    assert pages[1].url.startswith(base + API) and "skip=1000" in pages[1].url
    assert len(parse_all(scraper, pages)) == 12 + 11 + 6


def test_next_link_keeps_path_and_query_but_swaps_host():
    scraper = AzureScraper(base_url="http://127.0.0.1:9/azure")
    link = scraper._next_link(page("eastus-1.json"))
    assert link.startswith("http://127.0.0.1:9/azure/api/retail/prices?api-version=")
    assert link.endswith("&$skip=1000")


def test_pagination_loop_is_stopped():
    looping = json.dumps(
        {
            "Items": [],
            "NextPageLink": "https://prices.azure.com/api/retail/prices?$skip=1000",
            "Count": 0,
        }
    )
    transport = httpx.MockTransport(lambda request: httpx.Response(200, text=looping))
    scraper = AzureScraper(regions=["eastus"])
    with (
        HttpClient(retries=0, transport=transport) as client,
        pytest.raises(FetchError, match="loops"),
    ):
        list(scraper.fetch(client))


# --- faults ------------------------------------------------------------------------------
def _fetch_with_override(**override):
    with LoopbackServer() as srv:
        srv.override("azure", API, **override)
        scraper = AzureScraper(base_url=srv.base_url("azure"), regions=["eastus"])
        with quiet_client(timeout_s=5) as client:
            return [scraper.parse(p) for p in scraper.fetch(client)]


def test_server_error_raises_fetch_error_after_retries():
    with pytest.raises(FetchError, match="HTTP 503"):
        _fetch_with_override(status=503, body="busy", content_type="text/plain")


def test_rate_limit_is_retried_then_fails():
    with pytest.raises(FetchError, match="HTTP 429"):
        _fetch_with_override(status=429, body='{"error": "too many requests"}')


def test_timeout_raises_fetch_error():
    scraper = AzureScraper(regions=["eastus"])
    with (
        quiet_client(transport=timing_out(httpx.ConnectTimeout)) as client,
        pytest.raises(FetchError, match="ConnectTimeout"),
    ):
        list(scraper.fetch(client))


def test_truncated_json_raises_parse_error():
    body = (PAGES / "eastus-1.json").read_text()[:3000]
    with pytest.raises(ParseError, match="invalid JSON"):
        _fetch_with_override(body=body)


def test_html_instead_of_json_raises_parse_error():
    with pytest.raises(ParseError, match="HTML"):
        _fetch_with_override(
            body="<html><body>Service Unavailable</body></html>", content_type="text/html"
        )


def _mutated(mutate) -> Page:
    data = json.loads((PAGES / "eastus-1.json").read_text())
    mutate(data)
    return Page(url="file:///mutated", status=200, body=json.dumps(data))


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d.update(items=d.pop("Items")), "Items"),
        (lambda d: d["Items"][0].update(price=d["Items"][0].pop("unitPrice")), "unitPrice"),
        (lambda d: d["Items"][0].pop("armSkuName"), "armSkuName"),
        (lambda d: d["Items"][0].update(unitOfMeasure="1 GB/Month"), "unitOfMeasure"),
        (lambda d: d["Items"][0].update(unitPrice="n/a"), "not a number"),
    ],
    ids=["Items", "unitPrice", "armSkuName", "unitOfMeasure", "price-text"],
)
def test_renamed_or_changed_fields_raise_parse_error(mutate, message):
    with pytest.raises(ParseError, match=message):
        AzureScraper().parse(_mutated(mutate))


def test_every_fixture_size_is_priced_by_the_scraper_with_the_same_hardware():
    # The live scraper and fixtures/providers/azure.yaml must describe each size alike (GPU via
    # gpus.yaml aliases, GPU count, vCPUs, RAM), and the scraper must know every size the snapshot
    # holds, or a live refresh would drop it as unmatched.
    import yaml

    from scrapers.providers.azure import GPU_SIZES

    root = Path(__file__).resolve().parents[2] / "fixtures"
    slugs = {}
    for gpu in yaml.safe_load((root / "gpus.yaml").read_text()):
        for name in [*gpu["aliases"], gpu["name"], gpu["slug"]]:
            slugs[name.lower()] = gpu["slug"]
    sizes = yaml.safe_load((root / "providers" / "azure.yaml").read_text())["instance_types"]
    fixture = {
        r["name"]: (r["gpu"], Decimal(str(r["gpu_count"])), r["vcpus"], float(r["ram_gib"]))
        for r in sizes
    }
    scraper = {
        name: (slugs.get(gpu.lower()), count, vcpus, float(ram))
        for name, (gpu, count, vcpus, ram) in GPU_SIZES.items()
    }
    assert scraper == fixture


def test_new_sizes_are_priced_and_v710_is_skipped_not_unmatched():
    item = json.loads((PAGES / "eastus-2.json").read_text())["Items"][0]
    items = []
    for sku, price in (
        ("Standard_NC144ds_xl_RTXPRO6000BSE_v6", 5.5),
        ("Standard_NC72ds_xl_RTXPRO6000BSE_v6", 2.83),  # a share of one GPU: skipped
        ("Standard_ND128isr_NDR_GB200_v6", 108.16),
        ("Standard_ND96is_MI300X_v5", 48.0),
        ("Standard_NV28adms_V710_v5", 2.5),
    ):
        items.append({**item, "armSkuName": sku, "unitPrice": price, "retailPrice": price})
    body = json.dumps({"Items": items, "NextPageLink": None, "Count": len(items)})
    scraper = AzureScraper()
    records = by_key(scraper.parse(Page(url="file:///x", status=200, body=body)))
    rtx = records[("Standard_NC144ds_xl_RTXPRO6000BSE_v6", "eastus", "on_demand")]
    assert (rtx.gpu_name, rtx.gpu_count, rtx.vcpus, rtx.ram_gib) == (
        "NVIDIA RTX PRO 6000 Blackwell Server Edition",
        1,
        144,
        516.0,
    )
    gb200 = records[("Standard_ND128isr_NDR_GB200_v6", "eastus", "on_demand")]
    assert (gb200.gpu_count, gb200.amount) == (4, Decimal("108.16"))
    assert ("Standard_ND96is_MI300X_v5", "eastus", "on_demand") in records
    assert len(records) == 3
    notes = {(n.kind, n.name): n.reason for n in scraper.notes}
    share = ("skipped", "Standard_NC72ds_xl_RTXPRO6000BSE_v6")
    assert notes.pop(share) == "a share of one GPU whose size is unpublished"
    assert notes == {
        ("skipped", "Standard_NV28adms_V710_v5"): "NVads V710 v5 (Radeon PRO V710 slices), graphics"
    }
