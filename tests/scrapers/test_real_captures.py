"""Contract tests: each parser against real answers others captured and published (issue 13).

Every expected figure below was worked out by hand from the capture (see the README beside each
file under tests/scrapers/pages/<provider>/real/), never by running the parser. When a capture
and its parser disagree, one of these tests fails.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

from scrapers.base import NOTE_SKIPPED, NOTE_UNMATCHED, Page, parse_pages
from scrapers.providers.autodl import AutoDLScraper
from scrapers.providers.gcp import GcpScraper
from scrapers.providers.lambda_cloud import LambdaScraper

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
    assert prices[("a2-megagpu-16g", "us-east1", "on_demand")] == Decimal("55.739504")
    # Four a2-highgpu sizes and a2-megagpu-16g, in three regions, on demand only; a2-ultragpu
    # (A100 80GB) has no GPU SKU in the capture, the IDR T2D/E2 SKUs are no GPU machine parts.
    assert len(prices) == 5 * 3
    assert {key[2] for key in prices} == {"on_demand"}
    assert result.unmatched() == []


def test_gcp_a3_skus_as_the_real_catalog_names_them():
    scraper = GcpScraper()  # default regions: us-central1 and asia-northeast1 among them
    result = parse_pages(scraper, [page("gcp/a3-real-names.json", kind="catalog")])
    prices = table(result.records)
    # 208 x 0.026924 + 1872 x 0.002344 + 8 x 10.344276 ("Nvidia H100 80GB Plus GPU", "A3Plus")
    assert prices[("a3-megagpu-8g", "us-central1", "on_demand")] == Decimal("92.742368")
    # 208 x 0.01 + 1872 x 0.002102 + 8 x 9.272460 ("... Mega GPU attached to Spot Preemptible")
    assert prices[("a3-megagpu-8g", "asia-northeast1", "spot")] == Decimal("80.194624")
    # 224 x 0.03 + 2952 x 0.004 + 8 x 10 ("H200 141GB GPU": no "Nvidia" in the name)
    assert prices[("a3-ultragpu-8g", "us-central1", "on_demand")] == Decimal("98.528")
    assert len(prices) == 3  # DWS and calendar-mode GPU SKUs are not on-demand prices
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
        n.kind == NOTE_SKIPPED and n.name.startswith("a3-ultragpu-8g us-central1")
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
