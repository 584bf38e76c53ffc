"""Contract tests: each parser against real answers others captured and published (issue 13).

Every expected figure below was worked out by hand from the capture (see the README beside each
file under tests/scrapers/pages/<provider>/real/), never by running the parser. When a capture
and its parser disagree, one of these tests fails.
"""

from __future__ import annotations

import json
from datetime import date
from decimal import Decimal
from pathlib import Path

from scrapers.base import NOTE_SKIPPED, NOTE_UNMATCHED, Page, parse_pages
from scrapers.providers.alibaba import AlibabaScraper
from scrapers.providers.autodl import AutoDLScraper
from scrapers.providers.azure import AzureScraper
from scrapers.providers.ecb import parse_rates
from scrapers.providers.gcp import GcpScraper
from scrapers.providers.lambda_cloud import LambdaScraper
from scrapers.providers.runpod import RunPodScraper
from scrapers.providers.tencent import TencentScraper
from scrapers.providers.vastai import VastAiScraper

PAGES = Path(__file__).resolve().parent / "pages"


def page(path: str, **meta: str) -> Page:
    return Page(url=f"file:///{path}", status=200, body=(PAGES / path).read_text(), meta=meta)


def table(records) -> dict[tuple[str, str, str], Decimal]:
    return {(r.instance_type, r.region, r.pricing_model): r.amount for r in records}


# --- GCP, Billing Catalog API (key) ---------------------------------------------------------


def test_gcp_real_opencost_skus_price_the_a2_machines():
    scraper = GcpScraper(regions=["us-central1", "us-east1", "us-west1"])
    result = parse_pages(scraper, [page("gcp/real/opencost-skus-2023.json", kind="catalog")])
    prices = table(result.records)
    # 12 x 0.031611 + 85 x 0.004237 + 2.933908; 96 x 0.031611 + 680 x 0.004237 + 8 x 2.933908
    assert prices[("a2-highgpu-1g", "us-central1", "on_demand")] == Decimal("3.673385")
    assert prices[("a2-highgpu-8g", "us-west1", "on_demand")] == Decimal("29.387080")
    # 96 x 0.031611 + 1360 x 0.004237 + 16 x 2.933908
    assert prices[("a2-megagpu-16g", "us-central1", "on_demand")] == Decimal("55.739504")
    # Four a2-highgpu sizes in three regions and a2-megagpu-16g in us-central1 (the "Americas" SKUs price
    # it in us-east1/us-west1 too, where no zone offers it: OFFERED_REGIONS), on demand only; a2-ultragpu
    # (A100 80GB) has no GPU SKU in the capture, the IDR T2D/E2 SKUs are no GPU machine parts.
    assert len(prices) == 4 * 3 + 1
    assert {key[2] for key in prices} == {"on_demand"}
    assert result.unmatched() == []


def test_gcp_real_gpu_skus_of_2026_are_all_mapped_or_reported():
    # GPU SKUs only (no vCPU/RAM SKUs): every GPU is recognised, no machine can be priced, and
    # the one SKU the parser does not know is reported, not dropped.
    scraper = GcpScraper(regions=["us-central1"])
    result = parse_pages(scraper, [page("gcp/real/gpu-skus-2026-05.json", kind="catalog")])
    assert result.records == []
    skipped = {n.name: n.reason for n in result.notes if n.kind == NOTE_SKIPPED}
    # "H200 141GB GPU" (no "Nvidia") and "Nvidia H100 80GB Plus GPU" name the A3 Ultra and Mega GPUs.
    assert skipped["a3-ultragpu-8g us-central1 on_demand"].startswith(
        "GPU SKU priced but no a3ultra"
    )
    assert skipped["a3-megagpu-8g us-central1 on_demand"].startswith("GPU SKU priced but no a3mega")
    assert skipped["a3-highgpu-8g us-central1 reserved_1y"].startswith("GPU SKU priced but no a3 ")
    assert skipped["Reserved Nvidia Tesla A100 GPU in Americas"] == "GPU booking mode not priced"
    dws = "Nvidia Tesla T4 GPU attached to DWS Defined Duration VMs running in Americas"
    assert skipped[dws] == "GPU booking mode not priced"
    [unmatched] = result.unmatched()
    assert (unmatched.category, unmatched.name) == ("sku", "1/8 vGPU no lssd running in Iowa")


def test_gcp_real_2026_gpu_price_with_real_2023_a2_host_prices():
    # Two real pages read together: the A100 80GB GPU of 2026 ($3.928080) on the A2 vCPU and RAM
    # SKUs of 2023 (opencost). 12 x 0.031611 + 170 x 0.004237 + 3.928080; not a price of any one
    # date, but it shows the GPU figure is read from the real SKU.
    # Joined into one catalog the way fetch() joins the API's pages.
    skus = [
        sku
        for name in ("gcp/real/opencost-skus-2023.json", "gcp/real/gpu-skus-2026-05.json")
        for sku in json.loads((PAGES / name).read_text())["skus"]
    ]
    joined = Page(url="x", status=200, body=json.dumps({"skus": skus}), meta={"kind": "catalog"})
    prices = table(parse_pages(GcpScraper(regions=["us-central1"]), [joined]).records)
    assert prices[("a2-ultragpu-1g", "us-central1", "on_demand")] == Decimal("5.027702")
    # The A100 40GB SKU (039F-D0DA-4055) is on both pages at the same $2.933908.
    assert prices[("a2-highgpu-1g", "us-central1", "on_demand")] == Decimal("3.673385")


def test_gcp_a3_skus_as_the_real_catalog_names_them():
    scraper = GcpScraper()  # default regions: us-central1 and asia-northeast1 among them
    result = parse_pages(scraper, [page("gcp/a3-real-names.json", kind="catalog")])
    prices = table(result.records)
    # 208 x 0.026924 + 1872 x 0.002344 + 8 x 10.344276 ("Nvidia H100 80GB Plus GPU", "A3Plus")
    assert prices[("a3-megagpu-8g", "us-central1", "on_demand")] == Decimal("92.742368")
    # 208 x 0.01 + 1872 x 0.002102 + 8 x 9.272460 ("... Mega GPU attached to Spot Preemptible")
    assert prices[("a3-megagpu-8g", "asia-northeast1", "spot")] == Decimal("80.194624")
    # "H200 141GB GPU" (no "Nvidia" in the name) and the A3Ultra host SKUs all map, but A3 Ultra
    # cannot be started on demand (SOLD_ONLY_AS): their sum is noted as skipped, not recorded.
    assert ("a3-ultragpu-8g", "us-central1", "on_demand") not in prices
    reasons = {n.name: n.reason for n in result.notes if n.kind == NOTE_SKIPPED}
    assert reasons["a3-ultragpu-8g us-central1 on_demand"].startswith("sold only as spot")
    assert len(prices) == 2  # DWS and calendar-mode GPU SKUs are not on-demand prices
    unmatched = result.unmatched()
    assert [n.name for n in unmatched] == ["A4 Nvidia B200 (1 gpu slice) running in Americas"]
    assert unmatched[0].category == "sku"
    skipped = {n.name for n in result.notes if n.kind == NOTE_SKIPPED}
    assert "Reserved Nvidia H100 80GB Mega GPU in Americas in Calendar Mode" in skipped


def test_gcp_gpu_priced_without_its_host_family_is_reported_not_silent():
    body = (PAGES / "gcp/a3-real-names.json").read_text().replace("A3Ultra Instance", "A3U Inst")
    scraper = GcpScraper()
    result = parse_pages(scraper, [Page(url="x", status=200, body=body, meta={"kind": "catalog"})])
    assert ("a3-ultragpu-8g", "us-central1", "on_demand") not in table(result.records)
    assert any(
        n.kind == NOTE_SKIPPED
        and n.name.startswith("a3-ultragpu-8g us-central1")
        and n.reason.startswith("GPU SKU priced but no a3ultra")
        for n in result.notes
    )


# --- Lambda, Cloud API (key) ----------------------------------------------------------------


def test_lambda_real_trimmed_answer_without_specs():
    result = parse_pages(
        LambdaScraper(), [page("lambda/real/instance-types-2026-07-30-trimmed.json", format="api")]
    )
    prices = table(result.records)
    assert prices[("gpu_1x_a10", "us-west-2", "on_demand")] == Decimal("1.29")
    assert prices[("gpu_1x_a6000", "us-south-1", "on_demand")] == Decimal("1.09")
    assert prices[("gpu_1x_a100", "europe-central-1", "on_demand")] == Decimal("1.99")
    assert prices[("gpu_1x_h100_pcie", "us-west-3", "on_demand")] == Decimal("3.29")
    eight = [r for r in result.records if r.instance_type == "gpu_8x_a100"]
    assert {r.gpu_count for r in eight} == {Decimal(8)}  # from the name: no specs.gpus
    assert {r.amount for r in eight} == {Decimal("15.92")}
    assert len(eight) == 7  # its seven usual regions (us-east-1 has capacity among them)
    # 1 + 3 + 2 + 4 + 3 + 7 records for the six types
    assert len(result.records) == 20
    assert result.unmatched() == []


# --- Lambda, pricing page (keyless) -------------------------------------------------------------


def test_lambda_real_page_tables_in_island_scripts_only():
    # The trimmed real page holds the price tabs only as hydration data (TabsIsland contentHtml);
    # per-GPU prices times the tab's count: 8 x 6.69, 8 x 3.99, 4 x 6.79, 4 x 4.09.
    result = parse_pages(
        LambdaScraper(), [page("lambda/real/pricing-islands-trimmed.html", format="html")]
    )
    amounts = {r.instance_type: r.amount for r in result.records}
    assert amounts == {
        "gpu_8x_b200_sxm6": Decimal("53.52"),
        "gpu_8x_h100_sxm5": Decimal("31.92"),
        "gpu_4x_b200_sxm6": Decimal("27.16"),
        "gpu_4x_h100_sxm5": Decimal("16.36"),
    }
    b200 = next(r for r in result.records if r.instance_type == "gpu_8x_b200_sxm6")
    assert (b200.gpu_count, b200.vcpus, b200.ram_gib) == (Decimal(8), 208, 2900.0)
    assert b200.extra["usd_per_gpu_hour"] == 6.69
    assert result.unmatched() == []


# --- AutoDL, machine market list --------------------------------------------------------------


def test_autodl_real_machine_without_gpu_number():
    result = parse_pages(AutoDLScraper(), [page("autodl/real/machine-list-gpuhunter.json")])
    [record] = result.records
    assert (record.instance_type, record.region, record.amount, record.currency) == (
        "RTX 4090",
        "westDC3",
        Decimal("2.72"),
        "CNY",
    )
    assert record.extra["gpus_total"] is None
    assert not [n for n in result.notes if n.kind == NOTE_UNMATCHED]


# --- RunPod, GraphQL gpuTypes -----------------------------------------------------------------


def test_runpod_real_gpu_types_respect_max_gpu_count():
    result = parse_pages(RunPodScraper(), [page("runpod/real/gpu-types-2025-06-21.json")])
    prices = table(result.records)
    # RTX 3080: maxGpuCount 2, community only (secureCloud false, securePrice 0).
    rtx3080 = {key: amount for key, amount in prices.items() if "RTX 3080 (" in key[0]}
    assert rtx3080 == {
        ("1x RTX 3080 (community)", "global", "on_demand"): Decimal("0.17"),
        ("2x RTX 3080 (community)", "global", "on_demand"): Decimal("0.34"),
        ("1x RTX 3080 (community)", "global", "spot"): Decimal("0.09"),
        ("2x RTX 3080 (community)", "global", "spot"): Decimal("0.18"),
    }
    # RTX A4500: maxGpuCount 4, so 1/2/4 and no 8-GPU pod.
    assert prices[("4x RTX A4500 (secure)", "global", "on_demand")] == Decimal("1.00")
    assert ("8x RTX A4500 (secure)", "global", "on_demand") not in prices
    # H100 SXM (id "NVIDIA H100 80GB HBM3"): both clouds, maxGpuCount 8.
    assert prices[("8x H100 SXM (secure)", "global", "on_demand")] == Decimal("23.92")
    assert prices[("8x H100 SXM (community)", "global", "spot")] == Decimal("12.0")
    # MI300X: communityCloud false beside a communityPrice of 0.5: community is not listed.
    assert prices[("1x MI300X (secure)", "global", "spot")] == Decimal("1.49")
    assert not [key for key in prices if key[0].endswith("MI300X (community)")]
    # H200: spot prices null in both clouds, so on demand only.
    assert prices[("1x H200 SXM (community)", "global", "on_demand")] == Decimal("3.59")
    assert ("1x H200 SXM (secure)", "global", "spot") not in prices
    h100 = [r for r in result.records if r.instance_type == "2x H100 SXM (secure)"]
    assert {(r.gpu_name, r.gpu_count) for r in h100} == {("NVIDIA H100 80GB HBM3", Decimal(2))}
    # No lowestPrice in this answer: vCPUs and RAM unknown, not guessed.
    assert {r.vcpus for r in result.records} == {None}
    # 38 types; counted by hand per type, cloud, price and allowed pod size (README).
    assert len(result.records) == 375
    skipped = {(n.name, n.reason) for n in result.notes if n.kind == NOTE_SKIPPED}
    assert ("unknown", "RunPod's placeholder type") in skipped
    assert ("AMD Instinct MI300X OAM (community)", "communityCloud is false") in skipped
    assert result.unmatched() == []


# --- Azure, Retail Prices API -----------------------------------------------------------------


def test_azure_real_unfiltered_page_keeps_the_one_priced_gpu_size():
    result = parse_pages(
        AzureScraper(), [page("azure/real/retail-prices-unfiltered-2022-04-19.json")]
    )
    [record] = result.records
    # productName "NCads A100 v4 Series Linux" (no "Virtual Machines" prefix), 1 Hour, Consumption.
    assert (record.instance_type, record.region, record.pricing_model) == (
        "Standard_NC48ads_A100_v4",
        "eastus2",
        "on_demand",
    )
    assert (record.amount, record.currency) == (Decimal("7.346"), "USD")
    assert (record.gpu_name, record.gpu_count) == ("NVIDIA A100 80GB PCIe", Decimal(2))
    assert record.extra["meter_id"] == "00230cfc-461f-54a1-80ac-cdacb8293e3c"
    # The NV4as v4 Spot meter (1/8 of an AMD MI25) is left out, and says so.
    skipped = {n.name: n.reason for n in result.notes if n.kind == NOTE_SKIPPED}
    assert skipped == {"Standard_NV4as_v4": "NVv4-series: a slice of an AMD MI25, graphics"}
    assert result.unmatched() == []


def test_azure_gpu_size_the_parser_does_not_know_is_reported_not_dropped():
    body = (PAGES / "azure/real/retail-prices-unfiltered-2022-04-19.json").read_text()
    body = body.replace("Standard_NC48ads_A100_v4", "Standard_NC48ads_B100_v9")
    result = parse_pages(AzureScraper(), [Page(url="x", status=200, body=body, meta={})])
    assert result.records == []
    [note] = result.unmatched()
    assert (note.category, note.name) == ("instance", "Standard_NC48ads_B100_v9")


# --- Vast.ai, offer search -----------------------------------------------------------------------


def test_vastai_real_search_answer_drops_what_the_query_would_filter():
    # Four offers of one host (RTX 4090, "Alberta, CA"); none is verified-and-rentable.
    result = parse_pages(
        VastAiScraper(), [page("vastai/real/search-offers-raw-2025-01-17.json", type="on-demand")]
    )
    assert result.records == []
    skipped = {n.name: n.reason for n in result.notes if n.kind == NOTE_SKIPPED}
    assert skipped == {
        "offer 16014632 (1x RTX 4090)": "verification 'deverified'",
        "offer 16014633 (2x RTX 4090)": "not rentable",
        "offer 16014638 (4x RTX 4090)": "not rentable",
        "offer 16014636 (6x RTX 4090)": "not rentable",
    }


def test_vastai_real_offer_once_verified_is_priced_from_dph_total():
    # The same real answer with the first offer's "deverified" read as "verified": its own
    # dph_total, 0.40138888888888885 (GPU 0.4 + storage 0.00138...), rounded to 6 places.
    body = (PAGES / "vastai/real/search-offers-raw-2025-01-17.json").read_text()
    body = body.replace('"deverified"', '"verified"', 1)
    result = parse_pages(
        VastAiScraper(), [Page(url="x", status=200, body=body, meta={"type": "on-demand"})]
    )
    [record] = result.records
    assert (record.instance_type, record.region, record.amount) == (
        "RTX 4090 (marketplace, 1 GPU)",
        "global",
        Decimal("0.401389"),
    )
    assert record.extra["by_country"]["CA"]["offer_count"] == 1
    assert (record.vcpus, record.ram_gib) == (21, 83.9)  # 21.33 cores, 85934 MB / 1024


# --- Tencent, CVM DescribeZoneInstanceConfigInfos (keys) ---------------------------------------


def test_tencent_api_reference_example_is_read_without_error():
    # The documented answer: one CPU-only S2.SMALL1 entry, POSTPAID_BY_HOUR with UnitPrice 0.
    result = parse_pages(
        TencentScraper(),
        [
            page(
                "tencent/real/describe-zone-instance-config-infos-doc-example.json",
                kind="api",
                region="ap-guangzhou",
            )
        ],
    )
    assert result.records == []
    assert result.unmatched() == []


# --- Alibaba, ECS DescribeSpotPriceHistory (keys) ---------------------------------------------


def test_alibaba_spot_api_reference_example_is_read_and_explained():
    # The documented answer: two hourly prices of ecs.g5.large (a CPU type) in cn-hangzhou-g.
    result = parse_pages(
        AlibabaScraper(),
        [page("alibaba/real/describe-spot-price-history-doc-example.json", kind="spot")],
    )
    assert result.records == []
    skipped = {n.name: n.reason for n in result.notes if n.kind == NOTE_SKIPPED}
    assert skipped == {"ecs.g5.large": "not a GPU instance type"}


# --- ECB euro reference rates -------------------------------------------------------------------


def test_ecb_real_daily_file_of_2017_03_08():
    body = (PAGES / "ecb/real/eurofxref-daily-2017-03-08.xml").read_text()
    rates = {r.currency: r for r in parse_rates(Page(url="x", status=200, body=body))}
    assert {r.as_of for r in rates.values()} == {date(2017, 3, 8)}
    # 31 listed currencies (HRK and RUB still among them) plus EUR.
    assert len(rates) == 32
    assert rates["USD"].usd_per_unit == Decimal(1)
    assert rates["EUR"].usd_per_unit == Decimal("1.0556")
    # 1.0556 / 120.65, 1.0556 / 7.2953, 1.0556 / 0.86753, 1.0556 / 14144.80 to 10 places
    assert rates["JPY"].usd_per_unit == Decimal("0.0087492748")
    assert rates["CNY"].usd_per_unit == Decimal("0.1446959001")
    assert rates["GBP"].usd_per_unit == Decimal("1.2167878921")
    assert rates["IDR"].usd_per_unit == Decimal("0.0000746281")
    assert "HRK" in rates and "RUB" in rates


# --- Bookkeeping ---------------------------------------------------------------------------------


def test_every_real_capture_is_cited_and_checked():
    # A capture nobody tests, or that no README cites, is not a contract.
    source = Path(__file__).read_text()
    captures = sorted(p for p in PAGES.glob("*/real/*") if p.name != "README.md")
    assert captures
    for capture in captures:
        relative = f"{capture.parent.parent.name}/real/{capture.name}"
        assert f'"{relative}"' in source, f"no test reads {relative}"
        readme = (capture.parent / "README.md").read_text()
        assert f"`{capture.name}`" in readme, f"{capture.parent}/README.md does not cite it"
