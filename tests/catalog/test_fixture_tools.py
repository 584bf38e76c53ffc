"""The fixture generators' shared rules (fixtures/tools/_common.py) and their source parsers.

The generators are stand-alone scripts (run by hand, see fixtures/tools/README.md); these tests load them
from their folder the way they run.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from datetime import date
from pathlib import Path

import pytest
import yaml
from django.conf import settings

TOOLS = Path(settings.CATALOG_FIXTURES_DIR) / "tools"


def _load(name: str):
    sys.path.insert(0, str(TOOLS))
    try:
        spec = importlib.util.spec_from_file_location(f"fixture_tool_{name}", TOOLS / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(TOOLS))
    return module


@pytest.fixture(scope="module")
def common():
    return _load("_common")


def _row(
    common, amount, when, source="src", name="p5.48xlarge", region="us-east-1", model="on_demand"
):
    return common.price_row(
        name, region, model, amount, when, source, f"https://example.org/{source}"
    )


def test_keep_newest_names_the_older_figure_it_replaces(common):
    old = _row(common, 98.32, "2025-03-01", source="old")
    new = _row(common, 55.04, "2026-07-20", source="new")
    (kept,) = common.keep_newest([old, new])
    assert kept["amount"] == 55.04
    assert kept["observed_at"] == date(2026, 7, 20)
    assert "[newer than the 2025-03-01 figure 98.32 of https://example.org/old]" in kept["source"]


def test_keep_newest_adds_no_note_when_figures_agree_and_keeps_the_first_on_a_tie(common):
    first = _row(common, 10.0, "2026-01-21", source="first")
    second = _row(common, 12.0, "2026-01-21", source="second")
    same_newer = _row(common, 10.0, "2026-07-20", source="newer")
    (kept,) = common.keep_newest([first, second])
    assert kept["source"] == "first"
    (kept,) = common.keep_newest([first, same_newer])
    assert kept["source"] == "newer"


def test_keep_newest_keeps_one_row_per_type_region_and_model(common):
    rows = [
        _row(common, 1.0, "2026-01-21"),
        _row(common, 0.5, "2026-01-21", model="spot"),
        _row(common, 2.0, "2026-01-21", region="eu-west-1"),
    ]
    kept = common.keep_newest(rows)
    assert [(r["region"], r["pricing_model"]) for r in kept] == [
        ("eu-west-1", "on_demand"),
        ("us-east-1", "on_demand"),
        ("us-east-1", "spot"),
    ]


def test_merge_newer_writes_one_kept_note_however_often_it_is_regenerated(common):
    generated = [_row(common, 63.296, "2026-07-20", source="karpenter")]
    curated = _row(common, 67.7267, "2026-08-06", source="dstack PR")
    once = common.merge_newer(generated, [curated], {"p5.48xlarge"}, {"us-east-1"})
    twice = common.merge_newer(generated, once, {"p5.48xlarge"}, {"us-east-1"})
    assert once == twice
    assert (
        twice[0]["source"].count("[kept over the 2026-07-20 generated figure 63.296: newer]") == 1
    )


def test_merge_newer_keeps_equal_newer_rows_without_a_note_and_drops_older_ones(common):
    generated = [_row(common, 63.296, "2026-07-20", source="karpenter")]
    equal = _row(common, 63.296, "2026-08-06", source="dstack PR")
    (kept,) = common.merge_newer(generated, [equal], {"p5.48xlarge"}, {"us-east-1"})
    assert kept["source"] == "dstack PR"
    older_elsewhere = _row(common, 70.0, "2026-01-21", source="old", region="eu-west-1")
    newer_elsewhere = _row(common, 71.0, "2026-08-06", source="new", region="eu-north-1")
    merged = common.merge_newer(
        generated,
        [older_elsewhere, newer_elsewhere],
        {"p5.48xlarge"},
        {"us-east-1", "eu-west-1", "eu-north-1"},
    )
    assert {r["region"] for r in merged} == {"us-east-1", "eu-north-1"}


def test_aws_vantage_table_keeps_regions_and_maps_the_reserved_term(tmp_path):
    aws = _load("aws_prices")
    table = [
        {
            "name": "g6e.xlarge",
            "pricing": {
                "us-east-1": {"onDemand": 1.861, "reserved": 1.17243},
                "us-east-1-atl-1": {"onDemand": 2.0},  # a Local Zone, not a region
                "eu-north-1": {"onDemand": 1.97},
            },
        },
        {"name": "inf2.xlarge", "pricing": {"us-east-1": {"onDemand": 0.7582}}},  # no GPU
    ]
    path = tmp_path / "all_gpu_instances.js"
    path.write_text(
        "// header\nvar allGPUInstances = " + json.dumps(table) + ";\n", encoding="utf-8"
    )
    assert aws.parse_vantage(path) == {
        ("g6e.xlarge", "us-east-1"): {"on_demand": 1.861, "reserved_1y": 1.17243},
        ("g6e.xlarge", "eu-north-1"): {"on_demand": 1.97},
    }


def test_aws_capacity_blocks_keep_gpu_types_in_regions_and_cite_the_commit(tmp_path):
    aws = _load("aws_prices")
    reading = {
        "metadata": {"last_updated": "2026-07-22T07:14:56Z"},
        "instance_types": {
            "p5e.48xlarge": {
                "pricing": [
                    {"region_code": "us-east-2", "hourly_rate_usd": 47.76},
                    {"region_code": "us-west-2-phx-2a", "hourly_rate_usd": 47.76},  # Local Zone
                ]
            },
            "u-p6e-gb200x36": {  # an UltraServer unit, not an instance type
                "pricing": [{"region_code": "us-east-1", "hourly_rate_usd": 380.952}]
            },
            "trn1.32xlarge": {"pricing": [{"region_code": "us-east-1", "hourly_rate_usd": 9.5}]},
        },
    }
    path = tmp_path / "pricing.json"
    path.write_text(json.dumps(reading), encoding="utf-8")
    when, table = aws.parse_capacity_blocks(path)
    assert (when, table) == ("2026-07-22", {("p5e.48xlarge", "us-east-2"): 47.76})
    (row,) = aws.capacity_block_rows(table, "b3a54aee92b6" + "0" * 28, when, {"p5e.48xlarge"})
    assert row["pricing_model"] == "capacity_block" and row["unit"] == "hour"
    assert row["amount"] == 47.76 and str(row["observed_at"]) == "2026-07-22"
    assert "@b3a54aee9" in row["source"] and row["source_url"].endswith("/data/pricing.json")
    assert aws.capacity_block_rows(table, "b3a54aee92b6" + "0" * 28, when, set()) == []


def test_aws_capacity_block_refresh_replaces_only_those_rows_and_adds_the_types_they_need(
    tmp_path, monkeypatch
):
    aws = _load("aws_prices")
    monkeypatch.setattr(aws, "TARGET", tmp_path / "aws.yaml")
    old = {"instance_type": "p5.48xlarge", "region": "us-east-1", "currency": "USD", "unit": "hour",
           "observed_at": date(2026, 3, 1), "source": "old", "source_url": "https://x"}  # fmt: skip
    current = {
        "provider": {"slug": "aws"},
        "regions": [],
        "instance_types": [{"name": "p5.48xlarge", "gpu": "h100-sxm"}],
        "prices": [
            {**old, "pricing_model": "on_demand", "amount": 55.04},
            {**old, "pricing_model": "capacity_block", "amount": 31.464},
        ],
    }
    labels = {
        "p5e.48xlarge": {
            "instance-family": "p5e", "instance-gpu-memory": "144384", "instance-gpu-name": "h200",
            "instance-gpu-count": "8", "instance-network-bandwidth": "3200000", "instance-cpu": "192",
            "instance-memory": "2097152", "instance-local-nvme": "30400", "efa": "1",
        }
    }  # fmt: skip
    blocks = {("p5.48xlarge", "us-east-1"): 41.528, ("p5e.48xlarge", "us-east-2"): 47.76}
    args = argparse.Namespace(
        types_commit="692ccdd06" + "0" * 31,
        capacity_blocks_commit="b3a54aee9" + "0" * 31,
        capacity_blocks_date="2026-07-22",
    )
    curated = {row["name"]: row for row in current["instance_types"]}
    aws.refresh_in_place(current, curated, labels, blocks, args)
    written = yaml.safe_load(aws.TARGET.read_text(encoding="utf-8"))
    rows = {(p["instance_type"], p["region"], p["pricing_model"]): p for p in written["prices"]}
    assert rows[("p5.48xlarge", "us-east-1", "on_demand")]["amount"] == 55.04  # kept as it was
    assert rows[("p5.48xlarge", "us-east-1", "capacity_block")]["amount"] == 41.528  # replaced
    assert rows[("p5e.48xlarge", "us-east-2", "capacity_block")]["amount"] == 47.76
    p5e = next(t for t in written["instance_types"] if t["name"] == "p5e.48xlarge")
    assert (p5e["gpu"], p5e["gpu_count"], p5e["vcpus"], p5e["ram_gib"]) == (
        "h200-sxm",
        8,
        192,
        2048,
    )
    assert [r["code"] for r in written["regions"]] == ["us-east-1", "us-east-2"]


def test_aws_vantage_raw_records_read_linux_standard_no_upfront_terms(tmp_path):
    aws = _load("aws_prices")
    records = [
        {
            "instance_type": "p4d.24xlarge",
            "pricing": {
                "us-east-1": {
                    "linux": {
                        "ondemand": "21.957642",
                        "reserved": {
                            "yrTerm1Standard.noUpfront": "13.921094",
                            "yrTerm3Standard.noUpfront": "9.374219",
                            "yrTerm3Convertible.noUpfront": "11.0",
                        },
                    },
                    "mswin": {"ondemand": "25.0"},
                }
            },
        }
    ]
    path = tmp_path / "raw.json"
    path.write_text(json.dumps(records), encoding="utf-8")
    assert aws.parse_vantage_raw(path) == {
        ("p4d.24xlarge", "us-east-1"): {
            "on_demand": 21.957642,
            "reserved_1y": 13.921094,
            "reserved_3y": 9.374219,
        }
    }


def test_azure_retail_records_keep_linux_pay_as_you_go_and_spot_only(tmp_path):
    azure = _load("azure_prices")

    def item(sku, product, price, unit="1 Hour"):
        return {
            "armRegionName": "swedencentral",
            "productName": product,
            "skuName": sku,
            "retailPrice": price,
            "unitOfMeasure": unit,
        }

    records = {
        "a|1|Consumption|": item(
            "Standard_NC24ads_A100_v4", "Virtual Machines NCads A100 v4 Series", 4.775
        ),
        "a|2|Consumption|": item(
            "Standard_NC24ads_A100_v4 Spot", "Virtual Machines NCads A100 v4 Series", 1.464492
        ),
        "a|3|Consumption|": item(
            "Standard_NC24ads_A100_v4 Low Priority", "Virtual Machines NCads A100 v4 Series", 0.955
        ),
        "a|4|Consumption|": item(
            "Standard_NC24ads_A100_v4", "Virtual Machines NCads A100 v4 Series Windows", 5.879
        ),
        "a|5|Reservation|1 Year": item(
            "Standard_NC24ads_A100_v4", "Virtual Machines NCads A100 v4 Series", 25000.0, "1 Year"
        ),
        "a|6|Consumption|": item("Standard_D2s_v5", "Virtual Machines Dsv5 Series", 0.1),
    }
    path = tmp_path / "vm-swedencentral.json"
    path.write_text(json.dumps(records), encoding="utf-8")
    assert azure.parse_retail(path) == {
        ("Standard_NC24ads_A100_v4", "swedencentral", "on_demand"): 4.775,
        ("Standard_NC24ads_A100_v4", "swedencentral", "spot"): 1.464492,
    }


def test_azure_skypilot_spot_skips_the_pay_as_you_go_fallback_and_other_series(tmp_path):
    azure = _load("azure_prices")
    head = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region,Generation"
    rows = [
        "Standard_NC24ads_A100_v4,A100-80GB,1,24,220,A100-80GB,3.673,0.7346,eastus,V2",
        # no Spot SKU: SkyPilot repeats the pay-as-you-go price in the Spot column
        "Standard_ND96isr_H200_v5,H200,8,96,1850,H200,84.8,84.8,eastus2,V2",
        "Standard_NC4as_T4_v3,T4,1,4,28,T4,0.526,,westus,V2",  # no Spot price at all
        "Standard_D2s_v5,,,2,8,,0.096,0.0192,eastus,V1,V2",  # not N-series
    ]
    path = tmp_path / "vms.csv"
    path.write_text("\n".join([head, *rows]) + "\n", encoding="utf-8")
    assert azure.parse_skypilot_spot(path) == {("Standard_NC24ads_A100_v4", "eastus"): 0.7346}


def test_gcp_gpu_skus_read_plain_spot_and_commitment_skus_only():
    gcp = _load("gcp_prices")
    capture = Path(settings.BASE_DIR) / "tests/scrapers/pages/gcp/real/gpu-skus-2026-05.json"
    skus = gcp.parse_gpu_skus(capture)
    assert skus[("T4", "us-central1", "on_demand")] == (0.35, "88B8-C3ED-03F0", "2026-05-18")
    assert skus[("T4", "us-central1", "spot")][0] == pytest.approx(0.1654)
    assert skus[("T4", "us-central1", "reserved_1y")][0] == pytest.approx(0.22)
    assert skus[("V100", "us-east1", "on_demand")][0] == pytest.approx(2.48)
    # the DWS and Virtual Workstation SKUs never stand in for the plain price; A100/H100 are not N1 GPUs
    assert {gpu for gpu, _region, _model in skus} == {"T4", "P4", "P100", "V100"}


def test_gcp_n1_attachment_is_the_host_machine_plus_its_gpus_in_listed_regions_only():
    gcp = _load("gcp_prices")
    host = {"cost": {"us-central1": {"hour": 0.379998, "hour_spot": 0.13402, "month_1y": 174.7547}}}
    skus = {
        ("T4", "us-central1", "on_demand"): (0.35, "88B8-C3ED-03F0", "2026-05-18"),
        ("T4", "us-central1", "spot"): (0.1654, "1A25-07A3-AB6D", "2026-05-18"),
        ("T4", "us-east1", "on_demand"): (0.35, "88B8-C3ED-03F0", "2026-05-18"),
    }
    rows = gcp.attachment_prices(
        "n1-standard-8+2xT4",
        {"us-central1"},
        host,
        skus,
        "pricing.yml",
        ("capture", "https://x"),
        "2026-07-30",
    )
    by_model = {row["pricing_model"]: row for row in rows}
    # no T4 commitment SKU given, us-east1 not listed, and a Spot SKU is never combined with the host file
    assert set(by_model) == {"on_demand"}
    assert by_model["on_demand"]["amount"] == pytest.approx(0.379998 + 2 * 0.35)
    assert by_model["on_demand"]["observed_at"] == date(2026, 5, 18)  # the older of the two dates


def test_gcp_spot_only_shapes_keep_only_their_spot_rows_and_say_so(common):
    gcp = _load("gcp_prices")
    rows = [
        _row(common, 9.0, "2026-07-30", name=name, region="us-central1", model=model)
        for name in ("a3-highgpu-1g", "a3-highgpu-8g")
        for model in ("on_demand", "spot", "reserved_1y", "reserved_3y")
    ]
    kept = {(r["instance_type"], r["pricing_model"]) for r in gcp.sold_as_listed(rows)}
    assert kept == {("a3-highgpu-1g", "spot")} | {
        ("a3-highgpu-8g", m) for m in ("on_demand", "spot", "reserved_1y", "reserved_3y")
    }
    record = {"name": "a3-highgpu-2g", "notes": "1/4 of a host; sold through Flex-start only"}
    once = gcp.with_sold_only_note(record)
    assert once["notes"] == f"1/4 of a host; {gcp.SOLD_ONLY_NOTE}"
    assert gcp.with_sold_only_note(once) == once  # regenerating does not repeat it
    assert gcp.with_sold_only_note({"name": "a3-highgpu-8g", "notes": "x"})["notes"] == "x"


def test_gcp_excerpt_prices_gpu_machines_and_hosts_file_prices_n1_attachments(
    common, tmp_path, monkeypatch
):
    """--pricing an excerpt of a newer pricing.yml (GPU machine types only) and --hosts the full older
    file: GPU machines carry the excerpt's commit and date, an N1 attachment cites the hosts file."""
    gcp = _load("gcp_prices")
    attachment = {
        "name": "n1-standard-8+1xT4",
        "gpu": "t4",
        "gpu_count": 1,
        "gpu_sharing": "dedicated",
        "vcpus": 8,
        "ram_gib": 30,
        "source": "curated",
    }
    old = _row(common, 1.0, "2025-03-01", name=attachment["name"], region="us-central1")
    current = {"provider": {"slug": "gcp"}, "instance_types": [attachment], "prices": [old]}
    g2 = {"hour": 0.706832255, "hour_spot": 0.423956, "month_1y": 325.07215214}
    excerpt = {"g2-standard-4": {"l4": 1, "cpu": 4, "ram": 16, "cost": {"us-central1": g2}}}
    hosts = {"n1-standard-8": {"cpu": 8, "ram": 30, "cost": {"us-central1": {"hour": 0.379998}}}}
    files = {"gcp.yaml": current}
    files |= {"excerpt.yml": {"compute": {"instance": excerpt}}}
    files |= {"hosts.yml": {"compute": {"instance": hosts}}}
    for name, data in files.items():
        (tmp_path / name).write_text(yaml.safe_dump(data))
    capture = Path(settings.BASE_DIR) / "tests/scrapers/pages/gcp/real/gpu-skus-2026-05.json"
    monkeypatch.setattr(gcp, "TARGET", tmp_path / "gcp.yaml")
    argv = [
        "--pricing",
        str(tmp_path / "excerpt.yml"),
        "--commit",
        "d" * 40,
        "--date",
        "2026-08-20",
    ]
    argv += ["--hosts", str(tmp_path / "hosts.yml"), "--hosts-commit", "f" * 40]
    argv += ["--hosts-date", "2026-07-30", "--gpu-skus", str(capture)]
    argv += ["--gpu-skus-source", "capture @1", "--gpu-skus-url", "https://x"]
    monkeypatch.setattr(sys, "argv", ["gcp_prices.py", *argv])
    gcp.main()

    written = yaml.safe_load((tmp_path / "gcp.yaml").read_text())
    rows = {(r["instance_type"], r["pricing_model"]): r for r in written["prices"]}
    spot = rows[("g2-standard-4", "spot")]
    assert spot["observed_at"] == date(2026, 8, 20) and "d" * 40 in spot["source_url"]
    assert rows[("g2-standard-4", "reserved_1y")]["amount"] == pytest.approx(325.07215214 / 730)
    n1 = rows[("n1-standard-8+1xT4", "on_demand")]
    assert n1["amount"] == pytest.approx(0.379998 + 0.35)  # the hosts file's N1 plus one T4 SKU
    assert "@fffffff (generated 2026-07-30)" in n1["source"]
    assert n1["observed_at"] == date(2026, 5, 18)  # the SKU's date, older than either file
    assert {t["name"] for t in written["instance_types"]} == {"g2-standard-4", "n1-standard-8+1xT4"}


SKYPILOT_GCP_CSV = """\
InstanceType,vCPUs,MemoryGiB,AcceleratorName,AcceleratorCount,GpuInfo,Region,AvailabilityZone,Price,SpotPrice
n1-standard-8,8.0,30.0,,,,europe-west4,europe-west4-a,0.41834,0.0891
n1-standard-8,8.0,30.0,,,,europe-west4,europe-west4-b,0.41834,0.0891
n1-standard-8,8.0,30.0,,,,us-central1,us-central1-a,0.379998,0.08
n1-standard-8,8.0,30.0,,,,us-east1,us-east1-b,0.379998,0.08
,,,T4,1,{'Gpus': [{'MemoryInfo': {'SizeInMiB': 16384}}]},europe-west4,europe-west4-b,0.3675,0.11
,,,T4,2,{'Gpus': [{'MemoryInfo': {'SizeInMiB': 16384}}]},europe-west4,europe-west4-b,0.735,0.22
,,,T4,1,{'Gpus': [{'MemoryInfo': {'SizeInMiB': 16384}}]},us-central1,us-central1-a,0.35,0.1
,,,T4,1,{'Gpus': [{'MemoryInfo': {'SizeInMiB': 16384}}]},us-east1,us-east1-c,0.35,0.1
,,,A100,1,{'Gpus': [{'MemoryInfo': {'SizeInMiB': 40960}}]},us-central1,us-central1-a,2.9,1.0
"""


def test_gcp_skypilot_attachment_is_host_plus_gpus_in_one_zone_outside_sku_priced_regions(tmp_path):
    gcp = _load("gcp_prices")
    path = tmp_path / "vms.csv"
    path.write_text(SKYPILOT_GCP_CSV)
    sky = gcp.parse_skypilot_n1(path)
    assert ("us-central1", "us-central1-a", "A100x1") not in sky  # not an N1 attachment GPU
    rows = gcp.skypilot_attachment_prices(
        "n1-standard-8+1xT4", sky, {"us-central1"}, "note", "https://x", "2026-05-20"
    )
    # europe-west4: host and GPU share zone b; us-east1: the T4 zone has no N1 host listed;
    # us-central1 is priced from the SKU capture, so it is left to it
    assert [(r["region"], r["amount"]) for r in rows] == [("europe-west4", 0.78584)]
    assert rows[0]["pricing_model"] == "on_demand" and rows[0]["observed_at"] == date(2026, 5, 20)
    assert "n1-standard-8 $0.41834/h plus 1 x T4 $0.3675/h" in rows[0]["source"]
    two = gcp.skypilot_attachment_prices("n1-standard-8+2xT4", sky, set(), "n", "u", "2026-05-20")
    assert [(r["region"], r["amount"]) for r in two] == [("europe-west4", 1.15334)]


SKYPILOT_OFFERED_CSV = """\
InstanceType,vCPUs,MemoryGiB,AcceleratorName,AcceleratorCount,GpuInfo,Region,AvailabilityZone,Price,SpotPrice
g2-standard-4,4.0,16.0,,,,us-central1,us-central1-a,0.14679,0.05874
g2-standard-4,4.0,16.0,,,,us-central1,us-central1-b,0.14679,0.05874
,,,L4,1,{'Gpus': [{'MemoryInfo': {'SizeInMiB': 24576}}]},europe-north1,europe-north1-a,0.56,0.2
"""


def test_gcp_machine_types_keep_only_the_regions_their_zone_listing_gives_them(common, tmp_path):
    """pricing.yml prices g2-standard-4 wherever the Billing Catalog lists L4 SKUs (europe-north1 at 91%
    off Spot); SkyPilot's zone listing offers it in us-central1 only. Unlisted types and attachments stay."""
    gcp = _load("gcp_prices")
    path = tmp_path / "vms.csv"
    path.write_text(SKYPILOT_OFFERED_CSV)
    offered = gcp.parse_skypilot_offered(path)
    assert offered == {"g2-standard-4": {"us-central1"}}  # a GPU row names no machine type
    rows = [
        _row(common, 0.7068, "2026-08-20", name="g2-standard-4", region=region)
        for region in ("us-central1", "europe-north1")
    ]
    rows += [_row(common, 5.4, "2026-08-20", name="g4-standard-48", region="europe-north1")]
    rows += [_row(common, 0.73, "2026-05-18", name="n1-standard-8+1xT4", region="europe-north1")]
    kept, dropped = gcp.offered_only(rows, {"g2-standard-4", "g4-standard-48"}, offered)
    assert [(r["instance_type"], r["region"]) for r in dropped] == [
        ("g2-standard-4", "europe-north1")
    ]
    assert {r["instance_type"] for r in kept} == {
        "g2-standard-4",
        "g4-standard-48",
        "n1-standard-8+1xT4",
    }


def test_gcp_price_below_googles_largest_discount_is_dropped(common):
    gcp = _load("gcp_prices")
    rows = [
        _row(common, 1.0, "2026-08-20", name="g2-standard-4", model="on_demand"),
        _row(common, 0.09, "2026-08-20", name="g2-standard-4", model="spot"),  # 91% off: allowed
        _row(common, 0.2, "2026-08-20", name="g2-standard-4", model="reserved_3y"),  # 80% off
        _row(common, 0.05, "2026-08-20", name="a3-highgpu-1g", model="spot"),  # no on-demand pair
    ]
    kept, dropped = gcp.within_discount_floor(rows)
    assert [r["pricing_model"] for r in dropped] == ["reserved_3y"]
    assert len(kept) == 3
    rows[1]["amount"] = 0.08  # 92% off: more than Spot's published 60-91%
    assert [r["pricing_model"] for r in gcp.within_discount_floor(rows)[1]] == [
        "spot",
        "reserved_3y",
    ]


def test_gcp_generator_floors_keep_its_output_clear_of_audit_errors():
    """Nothing gcp_prices.py writes can be a discount_beyond_published error of catalog/audit.py."""
    from catalog import audit

    gcp = _load("gcp_prices")
    for model, floor in gcp.MIN_FRACTION_OF_ON_DEMAND.items():
        assert floor - gcp.ROUNDING >= audit.DISCOUNT_FLOORS[model][0]


def test_gcp_regenerating_does_not_bring_back_a_region_without_the_gpu(
    common, tmp_path, monkeypatch
):
    """The previous file's row for a region the zone listing does not give the type stays out."""
    gcp = _load("gcp_prices")
    record = {"name": "g2-standard-4", "gpu": "l4", "gpu_count": 1, "source": "curated"}
    stale = _row(
        common, 0.07, "2026-08-20", name="g2-standard-4", region="europe-north1", model="spot"
    )
    current = {"provider": {"slug": "gcp"}, "instance_types": [record], "prices": [stale]}
    g2 = {"hour": 0.706832255, "hour_spot": 0.423956}
    north = {"hour": 0.778293004, "hour_spot": 0.07006}
    excerpt = {"g2-standard-4": {"l4": 1, "cpu": 4, "ram": 16}}
    excerpt["g2-standard-4"]["cost"] = {"us-central1": g2, "europe-north1": north}
    (tmp_path / "gcp.yaml").write_text(yaml.safe_dump(current))
    (tmp_path / "previous.yaml").write_text(yaml.safe_dump(current))
    (tmp_path / "excerpt.yml").write_text(yaml.safe_dump({"compute": {"instance": excerpt}}))
    (tmp_path / "vms.csv").write_text(SKYPILOT_OFFERED_CSV)
    monkeypatch.setattr(gcp, "TARGET", tmp_path / "gcp.yaml")
    argv = [
        "--pricing",
        str(tmp_path / "excerpt.yml"),
        "--commit",
        "d" * 40,
        "--date",
        "2026-08-20",
    ]
    argv += ["--skypilot", str(tmp_path / "vms.csv"), "--skypilot-commit", "e" * 40]
    argv += ["--skypilot-date", "2026-05-20", "--previous", str(tmp_path / "previous.yaml")]
    monkeypatch.setattr(sys, "argv", ["gcp_prices.py", *argv])
    gcp.main()
    written = yaml.safe_load((tmp_path / "gcp.yaml").read_text())
    assert {(r["region"], r["pricing_model"]) for r in written["prices"]} == {
        ("us-central1", "on_demand"),
        ("us-central1", "spot"),
    }
    assert [r["code"] for r in written["regions"]] == ["us-central1"]


def test_gcp_g4_records_carry_the_gpu_share_of_the_machine_types_table():
    gcp = _load("gcp_prices")
    record = {
        "name": "g4-standard-6",
        "gpu_count": 1,
        "gpu_sharing": "dedicated",
        "notes": "",
        "source": "vCPU, memory, GPU count and local SSD from pricing.yml @fd66b26; network from the GCP GPU machine types page",
    }
    once = gcp.with_g4_docs(record)
    assert (once["gpu_count"], once["gpu_sharing"], once["network_gbps"]) == (
        0.125,
        "fractional",
        20,
    )
    assert "12 GB of its 96 GB" in once["notes"] and gcp.G4_DOC_NOTE in once["source"]
    assert "GPU count" not in once["source"].split(";")[0]  # pricing.yml no longer claims the count
    assert gcp.with_g4_docs(once) == once  # regenerating does not repeat the citation
    whole = gcp.with_g4_docs({**record, "name": "g4-standard-96"})
    assert (whole["gpu_count"], whole["gpu_sharing"], whole["network_gbps"]) == (
        2,
        "dedicated",
        100,
    )
    assert gcp.with_g4_docs({"name": "g2-standard-4", "gpu_count": 1}) == {
        "name": "g2-standard-4",
        "gpu_count": 1,
    }


# --- Alibaba (fixtures/tools/alibaba_prices.py) ------------------------------------------------------
ALIBABA_DOC = """\
gn6i包括的实例规格及指标数据如下表所示。

|实例规格|vCPU|内存(GiB)|GPU|GPU显存|网络带宽(Gbit/s)|网络收发包PPS(万)|存储IOPS基准(万)|多队列|弹性网卡|单网卡私有IP|
|:---|:-|:-|:-|:-|:-|:-|:-|:-|:-|:-|
|ecs.gn6i-c4g1.xlarge|4|15|NVIDIA T4 \\* 1|16GB \\* 1|4|50|无|2|2|10|
|ecs.gn6i-c24g1.24xlarge|96|372|NVIDIA T4 \\* 4|16GB \\* 4|30|480|25|24|8|10|
|ecs.vgn6i-m4.xlarge|4|23|NVIDIA T4 \\* 1/4|16GB \\* 1/4|3|50|2|4|10|

|实例规格|vCPU|内存(GiB)|本地存储(GiB)|GPU|GPU显存|网络带宽(Gbit/s)|网络收发包PPS(万)|多队列|弹性网卡|单网卡私有IP|
|:---|:-|:-|:-|:-|:-|:-|:-|:-|:-|:-|
|ecs.gn5-c4g1.xlarge|4|30|440|NVIDIA P100 \\* 1|16GB \\* 1|3|30|1|3|10|
""".translate(str.maketrans("()", "\uff08\uff09"))  # the doc's full-width brackets


def test_alibaba_doc_tables_give_whole_gpu_specs_by_header_name():
    tool = _load("alibaba_prices")
    specs = tool.doc_specs(ALIBABA_DOC)
    assert specs["ecs.gn6i-c24g1.24xlarge"] == {
        "vcpus": 96,
        "ram_gib": 372.0,
        "gpu_count": 4,
        "network_gbps": 30.0,
        "local_disk_gb": 0,
    }
    assert specs["ecs.gn5-c4g1.xlarge"]["local_disk_gb"] == 472  # 440 GiB
    assert specs["ecs.gn5-c4g1.xlarge"]["network_gbps"] == 3.0
    assert "ecs.vgn6i-m4.xlarge" not in specs  # a quarter T4: not a whole-GPU type


def test_alibaba_build_prices_doc_types_checks_them_and_falls_back_to_api_specs(tmp_path):
    tool = _load("alibaba_prices")

    def entry(vcpu, memory, gpu, price):
        return {"vcpu": vcpu, "memory": memory, "gpu": gpu, "onDemandPricePerHour": price}

    snapshot = {
        "cn-hangzhou": {
            "instanceTypePrices": {
                "ecs.gn6i-c4g1.xlarge": entry(4, 15, 1, 11.63),
                "ecs.gn6i-c24g1.24xlarge": entry(96, 384, 4, 68.75),  # RAM disagrees with the doc
                "ecs.gn6i-c40g1.10xlarge": entry(40, 155, 1, 14.819),  # newer than the doc
                "ecs.gn6v-c8g1.4xlarge": entry(16, 64, 2, 0),  # listed without a price
                "ecs.c6.large": entry(2, 4, 0, 0.39),  # CPU-only
            }
        },
        "me-east-1": {"instanceTypePrices": {"ecs.gn6i-c4g1.xlarge": entry(4, 15, 1, 9.0)}},
    }
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps(snapshot), encoding="utf-8")
    doc = tmp_path / "doc.md"
    doc.write_text(ALIBABA_DOC, encoding="utf-8")
    previous = {
        "provider": {"slug": "alibaba"},
        "regions": [{"code": "cn-hangzhou"}],
        "instance_types": [],
        "prices": [
            {
                "instance_type": "ecs.gn6i-c4g1.xlarge",
                "region": "cn-hangzhou",
                "pricing_model": "monthly",
                "amount": 1730.0,
                "currency": "CNY",
                "unit": "month",
                "observed_at": date(2026, 5, 10),
                "source": "curated",
                "source_url": "https://example.org/curated",
            }
        ],
    }
    prev = tmp_path / "prev.yaml"
    prev.write_text(yaml.safe_dump(previous, allow_unicode=True), encoding="utf-8")
    args = type(
        "Args",
        (),
        {
            "previous": str(prev),
            "prices": str(prices),
            "prices_commit": "a" * 40,
            "prices_date": "2024-10-09",
            "doc": [(str(doc), "b" * 40, "doc.md")],
        },
    )()
    data = tool.build(args)
    types = {t["name"]: t for t in data["instance_types"]}
    assert set(types) == {"ecs.gn6i-c4g1.xlarge", "ecs.gn6i-c40g1.10xlarge"}
    assert types["ecs.gn6i-c4g1.xlarge"]["network_gbps"] == 4.0
    assert "AlibabaCloudDocs/ecs doc.md" in types["ecs.gn6i-c4g1.xlarge"]["source"]
    api_only = types["ecs.gn6i-c40g1.10xlarge"]
    assert (api_only["vcpus"], api_only["ram_gib"], api_only["network_gbps"]) == (40, 155.0, None)
    assert "DescribeInstanceTypes" in api_only["source"]
    rows = {(p["instance_type"], p["region"], p["pricing_model"]): p for p in data["prices"]}
    assert set(rows) == {
        ("ecs.gn6i-c4g1.xlarge", "cn-hangzhou", "on_demand"),
        ("ecs.gn6i-c40g1.10xlarge", "cn-hangzhou", "on_demand"),
        ("ecs.gn6i-c4g1.xlarge", "cn-hangzhou", "monthly"),  # the newer curated row stays
    }
    on_demand = rows[("ecs.gn6i-c4g1.xlarge", "cn-hangzhou", "on_demand")]
    assert (on_demand["amount"], on_demand["currency"]) == (11.63, "CNY")
    assert on_demand["observed_at"] == date(2024, 10, 9)
    assert [r["code"] for r in data["regions"]] == ["cn-hangzhou"]  # me-east-1 is not listed


def test_alibaba_newer_flat_snapshot_supersedes_the_older_one_region_by_region(tmp_path):
    tool = _load("alibaba_prices")

    def entry(vcpu, memory, gpu, price):
        return {"vcpu": vcpu, "memory": memory, "gpu": gpu, "onDemandPricePerHour": price}

    older = {
        "cn-hangzhou": {
            "instanceTypePrices": {
                "ecs.gn6i-c4g1.xlarge": entry(4, 15, 1, 11.60),
                "ecs.gn6i-c40g1.10xlarge": entry(40, 155, 1, 14.819),  # gone from the newer table
            }
        },
        "cn-beijing": {
            "instanceTypePrices": {
                "ecs.gn6i-c4g1.xlarge": entry(4, 15, 1, 11.63),
                "ecs.gn7e-c16g1.4xlarge": entry(16, 125, 1, 0),  # API figures, no price
            }
        },
    }
    newer = {
        "cn-hangzhou": {"ecs.gn6i-c4g1.xlarge": 11.63, "ecs.gn5-c4g1.xlarge": 12.78},
        "cn-shanghai": {
            "ecs.gn6i-c40g1.10xlarge": 14.819,
            "ecs.gn7e-c16g1.4xlarge": 34.742,
            "ecs.gn7e-c16g1.8xlarge": 69.483,  # no vCPU/RAM source anywhere
            "ecs.ebmgn7e.32xlarge": 277.933,  # GPU model unsourced: not a modelled family
        },
    }
    (tmp_path / "older.json").write_text(json.dumps(older), encoding="utf-8")
    (tmp_path / "newer.json").write_text(json.dumps(newer), encoding="utf-8")
    (tmp_path / "doc.md").write_text(ALIBABA_DOC, encoding="utf-8")
    previous = {"provider": {"slug": "alibaba"}, "regions": [], "instance_types": [], "prices": []}
    (tmp_path / "prev.yaml").write_text(yaml.safe_dump(previous), encoding="utf-8")
    args = type(
        "Args",
        (),
        {
            "previous": str(tmp_path / "prev.yaml"),
            "prices": str(tmp_path / "older.json"),
            "prices_commit": "a" * 40,
            "prices_date": "2024-10-09",
            "newer_prices": [(str(tmp_path / "newer.json"), "c" * 40, "2024-12-30")],
            "doc": [(str(tmp_path / "doc.md"), "b" * 40, "doc.md")],
        },
    )()
    data = tool.build(args)
    rows = {(p["instance_type"], p["region"]): p for p in data["prices"]}
    assert set(rows) == {
        ("ecs.gn6i-c4g1.xlarge", "cn-hangzhou"),
        ("ecs.gn6i-c4g1.xlarge", "cn-beijing"),  # a region the newer table lacks keeps its figure
        ("ecs.gn5-c4g1.xlarge", "cn-hangzhou"),  # doc specs, no API figures needed
        ("ecs.gn6i-c40g1.10xlarge", "cn-shanghai"),  # API figures of the older snapshot
        ("ecs.gn7e-c16g1.4xlarge", "cn-shanghai"),
    }  # gn6i-c40g1 @ cn-hangzhou: no longer listed there
    hangzhou = rows[("ecs.gn6i-c4g1.xlarge", "cn-hangzhou")]
    assert (hangzhou["amount"], hangzhou["observed_at"]) == (11.63, date(2024, 12, 30))
    assert "karpenter-provider-alibabacloud" in hangzhou["source_url"]
    assert "figure 11.6 " in hangzhou["source"]  # the older figure it replaced is named
    assert rows[("ecs.gn6i-c4g1.xlarge", "cn-beijing")]["observed_at"] == date(2024, 10, 9)
    types = {t["name"]: t for t in data["instance_types"]}
    assert "no DescribeInstanceTypes figures" in types["ecs.gn5-c4g1.xlarge"]["source"]
    assert types["ecs.gn6i-c40g1.10xlarge"]["vcpus"] == 40
    gn7e = types["ecs.gn7e-c16g1.4xlarge"]
    assert (gn7e["gpu"], gn7e["vcpus"], gn7e["ram_gib"]) == ("a100-sxm4-80gb", 16, 125.0)
    assert "nvidia-smi" in gn7e["source"]  # the GPU model's own source, not the 2021 table


COREWEAVE_GO = """
var InstanceTypes = map[string]*InstanceType{
	"gd-1xgh200": {
		VCPU:               72,
		MemoryKi:           600218240,
		GPU:                1,
		EphemeralStorageKi: 7499362648,
		Architecture:       "arm64",
		MaxPods:            110,
	},
	"gd-8xh100ib-i128": {
		VCPU:               128,
		MemoryKi:           2112109804,
		GPU:                8,
		EphemeralStorageKi: 30003181568,
		Architecture:       "amd64",
		MaxPods:            110,
	},
}
"""
COREWEAVE_TF = """
  gpu_alias_to_instance_type = {
    H100    = "gd-8xh100ib-i128"
    GH200   = "gd-1xgh200"
    GB300   = "gb300-4x"
  }
  region_gpu_aliases = {
    "US-EAST-04"     = ["H100", "GH200"]
    "RNO2"           = ["H100"]
    "EU-SOUTH-03"    = ["H100", "NOSUCH"]
  }
"""


def test_coreweave_autoscaler_table_gives_node_capacity_per_instance_type():
    tool = _load("coreweave_prices")
    types = tool.autoscaler_types(COREWEAVE_GO)
    assert types["gd-8xh100ib-i128"] == {
        "vcpus": 128,
        "memory_ki": 2112109804,
        "gpus": 8,
        "storage_ki": 30003181568,
        "arch": "amd64",
    }
    assert types["gd-1xgh200"]["arch"] == "arm64"
    assert tool._tb(types["gd-8xh100ib-i128"]["storage_ki"]) == 30.72  # as CoreWeave lists it
    assert tool._tb(types["gd-1xgh200"]["storage_ki"]) == 7.68


def test_coreweave_terraform_map_gives_regions_per_instance_id_and_skips_unknown_aliases():
    tool = _load("coreweave_prices")
    zones = tool.terraform_zones(COREWEAVE_TF)
    assert zones == {
        "gd-8xh100ib-i128": ["US-EAST-04", "RNO2", "EU-SOUTH-03"],
        "gd-1xgh200": ["US-EAST-04"],
    }
    with pytest.raises(ValueError, match="region_gpu_aliases"):
        tool.terraform_zones("locals {}")


def _pod(name, count):
    return {
        "name": name,
        "gpu_count": count,
        "notes": f"A {count}-GPU pod costs {count} x $2.39 = ${2.39 * count:.2f}/hr, as RunPod bills it.",
    }


def test_runpod_table_prices_every_pod_of_its_gpu_and_names_what_it_replaces(common):
    tool = _load("runpod_prices")
    url = "https://example.org/table"
    previous = {
        "instance_types": [_pod("1x H100 PCIe (secure)", 1), _pod("2x H100 PCIe (secure)", 2)],
        "prices": [
            _row(common, 2.39, "2025-07-13", "old", "1x H100 PCIe (secure)", "global"),
            _row(common, 4.78, "2025-07-13", "old", "2x H100 PCIe (secure)", "global"),
        ],
    }
    table = {
        "offers": [
            {
                "provider": "runpod",
                "provisioning": "on-demand",
                "usd_per_gpu_hour": 2.89,
                "product": "H100 PCIe, Secure Cloud",
                "checked_at": date(2026, 9, 25),
            },
            {"provider": "lambda", "provisioning": "on-demand", "product": "1x A10"},
        ]
    }
    feed = {
        "collected_at": "2026-08-23T07:00:36+00:00",
        "offers": [
            {
                "provider": "runpod",
                "pricing_type": "on-demand",
                "gpu_count": 1,
                "gpu_key": "H100 80GB PCIe",
                "gpu_model_raw": "NVIDIA H100 PCIe",
                "notes": "secure cloud; stock unknown; up to 8 GPUs",
                "price_per_gpu_hr_usd": 2.79,
            },
            {  # a GPU the file has no pod for: skipped
                "provider": "runpod",
                "pricing_type": "on-demand",
                "gpu_count": 1,
                "gpu_key": "RTX 3070 8GB",
                "gpu_model_raw": "NVIDIA GeForce RTX 3070",
                "notes": "community cloud; stock Low",
                "price_per_gpu_hr_usd": 0.13,
            },
        ],
    }
    feed_url = "https://example.org/feed"
    sources = [
        (tool.table_offers(table), tool.Source("owner/repo file @abc", url)),
        (tool.feed_offers(feed), tool.Source("other/feed prices.json @def", feed_url)),
    ]
    data = tool.refreshed(previous, sources)
    two = next(r for r in data["prices"] if r["instance_type"] == "2x H100 PCIe (secure)")
    assert (two["amount"], two["observed_at"]) == (5.78, date(2026, 9, 25))
    assert "Secure Cloud, H100 PCIe $2.89/GPU/hr" in two["source"]
    # Sources are applied in turn: the table's figure names the file's, then the feed's older one.
    assert "[newer than the 2025-07-13 figure 4.78 of https://example.org/old]" in two["source"]
    assert f"[newer than the 2026-08-23 figure 5.58 of {feed_url}]" in two["source"]
    # The same sources given one run at a time write the same file.
    one_by_one = tool.refreshed(tool.refreshed(previous, sources[:1]), sources[1:])
    assert one_by_one == data
    assert "costs 2 x $2.89 = $5.78/hr" in data["instance_types"][1]["notes"]
    # Run again on its own output: nothing changes, no note is stacked.
    assert tool.refreshed(data, sources) == data
    table["offers"][0]["product"] = "H100 PCIe, Hyper Cloud"
    with pytest.raises(ValueError, match="unknown RunPod product"):
        tool.table_offers(table)


def test_lambda_table_prices_each_region_already_priced_and_notes_an_agreeing_figure(common):
    tool = _load("lambda_prices")
    previous = {
        "instance_types": [{"name": "gpu_8x_h100_sxm5", "gpu_count": 8}],
        "prices": [
            _row(common, 31.92, "2026-09-20", "page", "gpu_8x_h100_sxm5", "us-east-2"),
            _row(common, 31.92, "2026-11-01", "newer", "gpu_8x_h100_sxm5", "us-south-1"),
        ],
    }
    offer = {
        "provider": "lambda",
        "provisioning": "on-demand",
        "usd_per_gpu_hour": 3.99,
        "product": "8x H100 SXM",
        "checked_at": date(2026, 9, 25),
    }
    source = tool.Source("ref", "https://example.org/table")
    table = tool.table_offers({"offers": [offer]}, {"gpu_8x_h100_sxm5": 8})
    data = tool.refreshed(previous, [(table, source)])
    east, south = data["prices"]
    assert (east["region"], east["observed_at"], east["amount"]) == (
        "us-east-2",
        date(2026, 9, 25),
        31.92,
    )
    assert "$3.99/GPU/hr x 8 = $31.92/hr" in east["source"]
    assert "[the same figure as the 2026-09-20 one of https://example.org/page]" in east["source"]
    assert south == previous["prices"][1]  # newer than the table: kept as it was


def test_vastai_history_prices_one_gpu_classes_and_drops_leftover_classes(common):
    tool = _load("vastai_prices")

    def klass(name):
        return {"name": name, "notes": "the figure is a median over offers, not a list price"}

    previous = {
        "instance_types": [
            klass("L40S (marketplace, 1 GPU)"),
            klass("RTX A6000 (marketplace, 2 GPUs)"),
        ],
        "prices": [
            _row(common, 0.6, "2026-04-29", "april", "L40S (marketplace, 1 GPU)", "global"),
            _row(common, 0.8, "2026-04-29", "april", "RTX A6000 (marketplace, 2 GPUs)", "global"),
        ],
    }
    history = "\n".join(
        json.dumps(
            {"collected_at": f"2026-10-0{day}T12:00:00+00:00", "cheapest": {"vastai": prices}}
        )
        for day, prices in (
            (3, {"L40S 48GB": 0.5}),
            (4, {"L40S 48GB": 0.4741, "RTX A6000 48GB": 0.4}),
        )
    )
    line = tool.newest_line(history)
    assert line["collected_at"].startswith("2026-10-04")
    sources = [
        (
            tool.line_candidates(previous, line, "feed ref", "https://example.org/feed"),
            "https://example.org/feed",
        )
    ]
    data = tool.refreshed(previous, sources)
    (l40s,) = data["prices"]
    assert (l40s["amount"], l40s["observed_at"]) == (0.4741, date(2026, 10, 4))
    assert "lowest verified on-demand offer" in l40s["source"]
    assert "[newer than the 2026-04-29 figure 0.6 of https://example.org/april]" in l40s["source"]
    # The 2-GPU class is not priced by a per-GPU minimum and its April figure is a leftover: dropped.
    assert [t["name"] for t in data["instance_types"]] == ["L40S (marketplace, 1 GPU)"]
    assert "lowest verified on-demand offer" in data["instance_types"][0]["notes"]
    assert tool.refreshed(data, sources) == data


OBSERVATION_HEADER = "date,collected_at,source,provider,segment,pricing,gpu_model,sku,region,geo,gpu_count,usd_per_hour,usd_per_gpu_hour,sample_size"


def _observations(*rows: str) -> list[dict[str, str]]:
    import csv
    import io

    return list(csv.DictReader(io.StringIO("\n".join([OBSERVATION_HEADER, *rows]))))


def test_vastai_observations_median_replaces_an_older_lowest_offer_and_loses_to_a_newer_row(common):
    tool = _load("vastai_prices")
    lowest = "the figure is a dated statistic of the offers (the price's source says which: here the lowest verified on-demand offer), not a list price"
    previous = {
        "instance_types": [
            {"name": "L40S (marketplace, 1 GPU)", "notes": lowest},
            {"name": "H100 SXM (marketplace, 1 GPU)", "notes": "median"},
        ],
        "prices": [
            _row(common, 0.4741, "2026-10-04", "feed", "L40S (marketplace, 1 GPU)", "global"),
            _row(common, 2.4024, "2026-10-19", "newer", "H100 SXM (marketplace, 1 GPU)", "global"),
        ],
    }
    text = "\n".join(
        [
            OBSERVATION_HEADER,
            "2026-10-10,2026-10-10T12:33:53+00:00,vast,Vast.ai,marketplace,on_demand,L40S,median-offer,global,Global,1,0.6006,0.6006,26",
            "2026-10-10,2026-10-10T12:33:53+00:00,vast,Vast.ai,marketplace,on_demand,H100,median-offer,global,Global,1,4.0002,4.0002,7",
            "2026-10-10,2026-10-10T12:33:53+00:00,vast,Vast.ai,marketplace,on_demand,B200,median-offer,global,Global,1,7.8128,7.8128,32",
            "2026-10-10,2026-10-10T12:33:53+00:00,runpod,RunPod Secure Cloud,neocloud,on_demand,L40S,NVIDIA L40S,global,Global,1,0.86,0.86,",
        ]
    )
    url = "https://example.org/obs"
    sources = [(tool.observation_candidates(previous, text, "obs ref", url), url)]
    data = tool.refreshed(previous, sources)
    l40s, h100 = data["prices"]
    assert (l40s["amount"], l40s["observed_at"]) == (0.6006, date(2026, 10, 10))
    assert "median 1-GPU on-demand offer $0.6006/GPU/hr over 26 offers" in l40s["source"]
    assert "[newer than the 2026-10-04 figure 0.4741 of https://example.org/feed]" in l40s["source"]
    assert "here the median 1-GPU on-demand offer" in data["instance_types"][0]["notes"]
    assert (
        h100["amount"] == 2.4024
        and f"[newer than the 2026-10-10 figure 4.0002 of {url}]" in h100["source"]
    )
    assert tool.refreshed(data, sources) == data


def test_lambda_observations_price_the_shapes_by_sku_and_reject_an_unknown_one(common):
    tool = _load("lambda_prices")
    rows = _observations(
        "2026-10-10,2026-10-10T12:33:53+00:00,lambda,Lambda,neocloud,on_demand,H100,gpu_8x_h100_sxm_80gb,global,Global,8,31.92,3.99,",
        "2026-10-10,2026-10-10T12:33:53+00:00,vast,Vast.ai,marketplace,on_demand,H100,median-offer,global,Global,1,4.0,4.0,7",
    )
    (offer,) = tool.observation_offers(rows)
    assert (offer.name, offer.amount, offer.when) == ("gpu_8x_h100_sxm5", 31.92, "2026-10-10")
    rows[0]["sku"] = "gpu_16x_h100"
    with pytest.raises(ValueError, match="unknown Lambda sku"):
        tool.observation_offers(rows)


def test_runpod_observations_map_runpod_gpu_names_and_clouds_and_skip_unknown_gpus():
    tool = _load("runpod_prices")
    rows = _observations(
        "2026-10-10,2026-10-10T12:33:53+00:00,runpod,RunPod Secure Cloud,neocloud,on_demand,B200,NVIDIA B200,global,Global,1,7.99,7.99,",
        "2026-10-10,2026-10-10T12:33:53+00:00,runpod,RunPod Community Cloud,neocloud,on_demand,A30,NVIDIA A30,global,Global,1,0.2,0.2,",
    )
    (offer,) = tool.observation_offers(rows)
    assert (offer.gpu, offer.cloud, offer.per_gpu, offer.when) == (
        "B200",
        "secure",
        7.99,
        "2026-10-10",
    )


def test_coreweave_observations_price_every_placed_zone_and_note_an_agreeing_figure(
    common, tmp_path
):
    tool = _load("coreweave_prices")
    obs = tmp_path / "obs.csv"
    obs.write_text(
        "\n".join(
            [
                OBSERVATION_HEADER,
                "2026-10-10,2026-10-10T12:33:53+00:00,coreweave,CoreWeave,neocloud,on_demand,H100,hgx-h100,us,US,8,49.24,6.155,",
                "2026-10-10,2026-10-10T12:33:53+00:00,coreweave,CoreWeave,neocloud,spot,B300,nvidia-b300,us,US,8,35.84,4.48,",
            ]
        ),
        encoding="utf-8",
    )
    placed = {"gd-8xh100ib-i128": [("US-EAST-04", "map"), ("US-WEST-04", "docs")]}
    prices = [_row(common, 49.24, "2026-09-20", "page", "gd-8xh100ib-i128", "US-EAST-04")]
    merged = tool.with_observations(prices, placed, [str(obs), "owner/index", "obs.csv", "a" * 40])
    assert [(r["region"], r["observed_at"]) for r in merged] == [
        ("US-EAST-04", date(2026, 10, 10)),
        ("US-WEST-04", date(2026, 10, 10)),
    ]
    assert (
        "[the same figure as the 2026-09-20 one of https://example.org/page]" in merged[0]["source"]
    )
    assert "region from docs" in merged[1]["source"]


def test_azure_observations_supersede_older_figures_per_size_region_and_model(common, tmp_path):
    azure = _load("azure_prices")
    stamp = "2026-10-10,2026-10-10T12:33:53+00:00,azure,Microsoft Azure,hyperscaler"
    obs = tmp_path / "obs.csv"
    obs.write_text(
        "\n".join(
            [
                OBSERVATION_HEADER,
                f"{stamp},on_demand,H100,Standard_ND96isr_H100_v5,eastus,NA,8,98.32,12.29,1",
                f"{stamp},spot,H100,Standard_ND96isr_H100_v5,eastus,NA,8,18.1695,2.2712,1",
                f"{stamp},spot,H100-NVL,Standard_NC40ads_H100_v5,eastus,NA,1,1.2899,1.2899,1",
                f"{stamp},spot,H100-NVL,Standard_NC40ads_H100_v5,ukwest,EU,1,1.6891,1.6891,1",
                f"{stamp},on_demand,H100-NVL,Standard_NC40ads_H100_v5,westus,NA,1,9.074,9.074,1",
                f"{stamp},on_demand,H200,Standard_ND96isr_H200_v5,southcentralus2,NA,8,93.28,11.66,1",
                f"{stamp},on_demand,H100,Standard_ND96isr_H100_v5_flex,eastus,NA,8,98.32,12.29,1",
                "2026-10-10,2026-10-10T12:33:53+00:00,aws,AWS,hyperscaler,on_demand,H100,p5.48xlarge,us-east-1,NA,8,55.04,6.88,1",
            ]
        ),
        encoding="utf-8",
    )
    url = "https://github.com/owner/index/blob/" + "a" * 40 + "/obs.csv"
    observed = azure.observed_prices(obs, "owner/index obs.csv @aaaaaaaaa", url)
    assert len(observed) == 7  # the AWS row is not read
    assert observed[0][0]["amount"] == 98.32 and observed[0][1] == 8  # per VM-hour, not per GPU

    def row(name, region, model, amount, when, source):
        return common.price_row(
            name, region, model, amount, when, source, f"https://example.org/{source}"
        )

    h100, nvl = "Standard_ND96isr_H100_v5", "Standard_NC40ads_H100_v5"
    prices = [
        row(h100, "eastus", "on_demand", 98.32, "2026-06-18", "karpenter"),
        row(h100, "eastus", "spot", 18.169536, "2026-05-20", "skypilot"),
        row(nvl, "eastus", "spot", 2.192418, "2026-05-20", "skypilot"),
        row(nvl, "westus", "on_demand", 9.5, "2026-11-09", "curated"),
    ]
    gpus = {h100: 8, nvl: 1, "Standard_ND96isr_H200_v5": 8}
    merged, skipped = azure.with_observations(prices, observed, gpus)
    by_key = {(r["instance_type"], r["region"], r["pricing_model"]): r for r in merged}
    assert len(merged) == 5

    on_demand = by_key[(h100, "eastus", "on_demand")]
    assert on_demand["observed_at"] == date(2026, 10, 10)
    assert "$98.32/h per VM (8 GPUs)" in on_demand["source"]
    assert (
        "[the same figure as the 2026-06-18 one of https://example.org/karpenter]"
        in on_demand["source"]
    )
    spot = by_key[(h100, "eastus", "spot")]
    assert spot["amount"] == 18.1695
    assert (
        "[equal to the 2026-05-20 figure 18.169536 of https://example.org/skypilot at this file's four decimals]"
        in spot["source"]
    )
    cheaper = by_key[(nvl, "eastus", "spot")]
    assert (cheaper["amount"], cheaper["source_url"]) == (1.2899, url)
    assert (
        "[newer than the 2026-05-20 figure 2.192418 of https://example.org/skypilot]"
        in cheaper["source"]
    )
    # a size-region pair the older tables lack
    assert by_key[(nvl, "ukwest", "spot")]["observed_at"] == date(2026, 10, 10)
    curated = by_key[(nvl, "westus", "on_demand")]
    assert curated["amount"] == 9.5 and curated["observed_at"] == date(2026, 11, 9)
    assert f"[newer than the 2026-10-10 figure 9.074 of {url}]" in curated["source"]
    assert skipped == [
        "Standard_ND96isr_H200_v5 southcentralus2 on_demand (region not listed)",
        "Standard_ND96isr_H100_v5_flex eastus on_demand (no size record)",
    ]
    # regenerating changes nothing
    assert azure.with_observations(merged, observed, gpus)[0] == merged

    with pytest.raises(ValueError, match=r"the observations give 8\.0 GPUs, the size record 4"):
        azure.with_observations(prices, observed, {**gpus, h100: 4})


def test_gcp_observations_supersede_older_figures_and_respect_sold_only_as(common, tmp_path):
    gcp = _load("gcp_prices")
    stamp = "2026-10-10,2026-10-10T12:33:53+00:00,gcp,Google Cloud,hyperscaler"
    obs = tmp_path / "obs.csv"
    obs.write_text(
        "\n".join(
            [
                OBSERVATION_HEADER,
                f"{stamp},on_demand,A100-40GB,a2-highgpu-1g,us-central1,NA,1,3.6734,3.6734,1",
                f"{stamp},spot,A100-40GB,a2-highgpu-1g,us-central1,NA,1,2.204,2.204,1",
                f"{stamp},on_demand,H100,a3-highgpu-8g,us-central1,NA,8,88.49,11.0613,1",
                f"{stamp},spot,H100,a3-highgpu-8g,us-central1,NA,8,50.3153,6.2894,1",
                f"{stamp},on_demand,H200,a3-ultragpu-8g,us-central1,NA,8,84.8069,10.6009,1",
                f"{stamp},spot,H200,a3-ultragpu-8g,us-central1,NA,8,50.835,6.3544,1",
                f"{stamp},spot,B200,a4-highgpu-8g,us-central1,NA,8,39.6336,4.9542,1",
                f"{stamp},spot,B200,a4-highgpu-8g,mars-central1,NA,8,39.6336,4.9542,1",
                f"{stamp},spot,H100,a3-edgegpu-8g,us-central1,NA,8,40.0,5.0,1",
                "2026-10-10,2026-10-10T12:33:53+00:00,aws,AWS,hyperscaler,on_demand,H100,p5.48xlarge,us-east-1,NA,8,55.04,6.88,1",
            ]
        ),
        encoding="utf-8",
    )
    url = "https://github.com/owner/index/blob/" + "a" * 40 + "/obs.csv"
    observed = gcp.observed_prices(obs, "owner/index obs.csv @aaaaaaaaa", url)
    assert len(observed) == 9  # the AWS row is not read
    # per machine-hour, not per GPU
    assert observed[2][0]["amount"] == 88.49 and observed[2][1] == 8

    def row(name, region, model, amount, when, source):
        return common.price_row(
            name, region, model, amount, when, source, f"https://example.org/{source}"
        )

    prices = [
        row("a2-highgpu-1g", "us-central1", "on_demand", 3.673385, "2026-08-20", "pricing"),
        row("a2-highgpu-1g", "us-central1", "spot", 2.12081, "2026-08-20", "pricing"),
        row("a3-highgpu-8g", "us-central1", "on_demand", 88.49, "2026-08-20", "pricing"),
        row("a3-highgpu-8g", "us-central1", "spot", 40.0, "2026-11-20", "curated"),
    ]
    records = {"a2-highgpu-1g": 1, "a3-highgpu-8g": 8}
    for name in ("a3-ultragpu-8g", "a4-highgpu-8g"):
        record = gcp.observed_record(name)
        assert (record["gpu_count"], record["vcpus"], record["network_gbps"]) == (8, 224, 3600)
        records[name] = record["gpu_count"]
    assert gcp.observed_record("a3-edgegpu-8g") is None
    merged, skipped = gcp.with_observations(prices, observed, records)
    by_key = {(r["instance_type"], r["region"], r["pricing_model"]): r for r in merged}
    assert len(merged) == 6

    on_demand = by_key[("a2-highgpu-1g", "us-central1", "on_demand")]
    assert (on_demand["amount"], on_demand["observed_at"]) == (3.6734, date(2026, 10, 10))
    assert "$3.6734/h per machine (1 GPU)" in on_demand["source"]
    assert (
        "[equal to the 2026-08-20 figure 3.673385 of https://example.org/pricing at this file's four decimals]"
        in on_demand["source"]
    )
    spot = by_key[("a2-highgpu-1g", "us-central1", "spot")]
    assert (spot["amount"], spot["source_url"]) == (2.204, url)
    assert (
        "[newer than the 2026-08-20 figure 2.12081 of https://example.org/pricing]"
        in spot["source"]
    )
    same = by_key[("a3-highgpu-8g", "us-central1", "on_demand")]
    assert (
        "[the same figure as the 2026-08-20 one of https://example.org/pricing]" in same["source"]
    )
    # an older reading loses to a newer curated figure, which names it
    curated = by_key[("a3-highgpu-8g", "us-central1", "spot")]
    assert curated["amount"] == 40.0
    assert f"[newer than the 2026-10-10 figure 50.3153 of {url}]" in curated["source"]
    # shapes Google does not sell on demand keep only their Spot reading
    assert by_key[("a3-ultragpu-8g", "us-central1", "spot")]["amount"] == 50.835
    assert ("a3-ultragpu-8g", "us-central1", "on_demand") not in by_key
    assert by_key[("a4-highgpu-8g", "us-central1", "spot")]["amount"] == 39.6336
    assert skipped == [
        "a3-ultragpu-8g us-central1 on_demand (sold only as spot)",
        "a4-highgpu-8g mars-central1 spot (region not listed)",
        "a3-edgegpu-8g us-central1 spot (no machine type record)",
    ]
    # regenerating changes nothing
    assert gcp.with_observations(merged, observed, records)[0] == merged

    with pytest.raises(
        ValueError, match=r"the observations give 8 GPUs, the machine type record 4"
    ):
        gcp.with_observations(prices, observed, {**records, "a3-highgpu-8g": 4})


def test_aws_observations_re_date_confirmed_figures_add_new_pairs_and_keep_other_rows(
    tmp_path, monkeypatch, capsys
):
    from catalog import audit

    aws = _load("aws_prices")
    assert aws.SNAPSHOT_SPREAD_DAYS == audit.SNAPSHOT_SPREAD_DAYS
    monkeypatch.setattr(aws, "TARGET", tmp_path / "aws.yaml")
    stamp = "2026-10-10,2026-10-10T12:33:53+00:00,aws,AWS,hyperscaler,on_demand"
    obs = tmp_path / "obs.csv"
    obs.write_text(
        "\n".join(
            [
                OBSERVATION_HEADER,
                f"{stamp},A100-40GB,p4d.24xlarge,ap-northeast-1,APAC,8,30.0978,3.7622,1",
                f"{stamp},H100,p5.48xlarge,us-east-1,NA,8,55.04,6.88,1",
                f"{stamp},B200,p6-b200.48xlarge,ap-south-1,APAC,8,160.6453,20.0807,1",
                f"{stamp},H100,p5.4xlarge,us-east-1,NA,1,6.88,6.88,1",
                f"{stamp},H200,p5e.48xlarge,us-east-1,NA,8,50.0,6.25,1",
                "2026-10-10,2026-10-10T12:33:53+00:00,azure,Microsoft Azure,hyperscaler,spot,H100,"
                "Standard_ND96isr_H100_v5,eastus,NA,8,18.1695,2.2712,1",
            ]
        ),
        encoding="utf-8",
    )
    args = argparse.Namespace(
        observations=[str(obs), "owner/index", "obs.csv", "a" * 40], types_commit=None
    )
    observed = aws.read_observations(args)
    assert len(observed) == 5  # the Azure row is not read
    assert observed[1][0]["amount"] == 55.04 and observed[1][1] == 8  # per instance-hour

    common = _load("_common")

    def price(name, region, model, amount, when, source):
        return common.price_row(
            name, region, model, amount, when, source, f"https://example.org/{source}"
        )

    current = {
        "provider": {"slug": "aws"},
        "regions": [],
        "instance_types": [
            {"name": n, "gpu_count": c}
            for n, c in (
                ("p4d.24xlarge", 8),
                ("p5.48xlarge", 8),
                ("p5.4xlarge", 1),
                ("p6-b200.48xlarge", 8),
            )
        ],
        "prices": [
            price("p4d.24xlarge", "ap-northeast-1", "on_demand", 30.09784, "2026-01-21", "vantage"),
            price("p4d.24xlarge", "ap-northeast-1", "reserved_3y", 12.5, "2025-11-30", "raw"),
            price("p5.48xlarge", "us-east-1", "on_demand", 55.04, "2026-07-20", "karpenter"),
            price("p5.48xlarge", "us-east-1", "capacity_block", 41.528, "2026-07-22", "blocks"),
            price("p5.48xlarge", "us-east-1", "spot", 20.0, "2026-09-20", "recent"),
            price("p5.48xlarge", "us-east-2", "spot", 21.0, "2026-08-06", "dstack"),
            price("p5.4xlarge", "us-east-1", "on_demand", 7.5, "2026-11-09", "curated"),
        ],
    }
    curated = {r["name"]: r for r in current["instance_types"]}
    aws.refresh_in_place(current, curated, {}, {}, args, observed)
    first = aws.TARGET.read_text(encoding="utf-8")
    written = yaml.safe_load(first)
    rows = {(p["instance_type"], p["region"], p["pricing_model"]): p for p in written["prices"]}
    url = "https://github.com/owner/index/blob/" + "a" * 40 + "/obs.csv"

    confirmed = rows[("p4d.24xlarge", "ap-northeast-1", "on_demand")]
    assert (confirmed["amount"], confirmed["observed_at"], confirmed["source_url"]) == (
        30.0978,
        date(2026, 10, 10),
        url,
    )
    assert "Linux, shared tenancy" in confirmed["source"]
    assert "$30.0978/h per instance (8 GPUs); ap-northeast-1" in confirmed["source"]
    assert (
        "[equal to the 2026-01-21 figure 30.09784 of https://example.org/vantage at this file's four decimals]"
        in confirmed["source"]
    )
    same = rows[("p5.48xlarge", "us-east-1", "on_demand")]
    assert same["observed_at"] == date(2026, 10, 10)
    assert (
        "[the same figure as the 2026-07-20 one of https://example.org/karpenter]" in same["source"]
    )
    new = rows[("p6-b200.48xlarge", "ap-south-1", "on_demand")]
    assert (new["amount"], new["observed_at"]) == (160.6453, date(2026, 10, 10))
    # a newer curated figure wins and names the observed one
    newer = rows[("p5.4xlarge", "us-east-1", "on_demand")]
    assert (newer["amount"], newer["observed_at"]) == (7.5, date(2026, 11, 9))
    assert f"[newer than the 2026-10-10 figure 6.88 of {url}]" in newer["source"]
    # other models kept as they are, a spot price within 30 days of its re-dated on-demand price too
    assert rows[("p4d.24xlarge", "ap-northeast-1", "reserved_3y")]["amount"] == 12.5
    assert rows[("p5.48xlarge", "us-east-1", "capacity_block")]["amount"] == 41.528
    assert rows[("p5.48xlarge", "us-east-1", "spot")]["amount"] == 20.0
    assert rows[("p5.48xlarge", "us-east-2", "spot")]["amount"] == 21.0  # no on-demand beside it
    assert len(rows) == 8
    err = capsys.readouterr().err
    assert "observation not used: p5e.48xlarge us-east-1 on_demand (no instance type record)" in err
    assert "Newer on-demand readings" in first and url in first
    assert [r["code"] for r in written["regions"]] == [
        "us-east-1",
        "us-east-2",
        "ap-northeast-1",
        "ap-south-1",
    ]

    # regenerating from its own output changes nothing
    again = yaml.safe_load(first)
    aws.refresh_in_place(again, {}, {}, {}, args, observed)
    assert aws.TARGET.read_text(encoding="utf-8") == first

    # a spot row the re-dating leaves over 30 days behind is dropped, and reported
    current["prices"].append(price("p5.48xlarge", "us-east-1", "spot", 19.0, "2026-08-06", "old"))
    current["prices"] = [p for p in current["prices"] if p["source"] != "recent"]
    aws.refresh_in_place(current, curated, {}, {}, args, observed)
    dropped = yaml.safe_load(aws.TARGET.read_text(encoding="utf-8"))["prices"]
    assert not any(
        p["pricing_model"] == "spot"
        and p["region"] == "us-east-1"
        and p["instance_type"] == "p5.48xlarge"
        for p in dropped
    )
    assert "p5.48xlarge us-east-1 spot 19.0 of 2026-08-06 (on-demand of 2026-10-10)" in (
        capsys.readouterr().err
    )

    with pytest.raises(
        ValueError, match=r"the observations give 8\.0 GPUs, the instance type record 4"
    ):
        aws.with_observations([], observed, {"p5.48xlarge": 4})
    obs.write_text(
        OBSERVATION_HEADER + f"\n{stamp.replace('on_demand', 'spot')},H100,p5.48xlarge,"
        "us-east-1,NA,8,20.0,2.5,1",
        encoding="utf-8",
    )
    with pytest.raises(ValueError, match="unexpected AWS pricing 'spot'"):
        aws.read_observations(args)


@pytest.fixture(scope="module")
def gpuclouds():
    return _load("_gpuclouds")


def test_gpuclouds_source_of_cites_the_file_at_its_commit(gpuclouds):
    ref, url = gpuclouds.source_of("owner/repo", "data/x.csv", "0123456789abcdef" * 2 + "01234567")
    assert ref == "owner/repo data/x.csv @012345678"
    assert (
        url
        == "https://github.com/owner/repo/blob/" + "0123456789abcdef" * 2 + "01234567/data/x.csv"
    )


def test_gpuclouds_readers_keep_one_providers_on_demand_rows(gpuclouds, tmp_path):
    table = {
        "offers": [
            {"provider": "runpod", "provisioning": "on-demand", "product": "a"},
            {"provider": "runpod", "provisioning": "spot", "product": "b"},
            {"provider": "lambda", "provisioning": "on-demand", "product": "c"},
            {"provider": "runpod", "product": "d"},  # no provisioning: not on-demand
        ]
    }
    assert [o["product"] for o in gpuclouds.table_rows(table, "runpod")] == ["a"]
    path = tmp_path / "obs.csv"
    path.write_text(
        "\n".join(
            [
                OBSERVATION_HEADER,
                "2026-10-10,t,coreweave,CoreWeave,neocloud,on_demand,H100,hgx-h100,us,US,8,49.24,6.155,",
                "2026-10-10,t,coreweave,CoreWeave,neocloud,spot,H100,hgx-h100,us,US,8,24.62,3.0775,",
                "2026-10-10,t,vast,Vast.ai,marketplace,on_demand,H100,median-offer,global,Global,1,4.0,4.0,7",
            ]
        ),
        encoding="utf-8",
    )
    rows = gpuclouds.read_observations(path)
    assert [r["usd_per_hour"] for r in rows] == ["49.24", "24.62", "4.0"]  # strings, as written
    assert [r["pricing"] for r in gpuclouds.observation_rows(rows, "coreweave")] == [
        "on_demand",
        "spot",
    ]
    assert [r["usd_per_hour"] for r in gpuclouds.observation_rows(rows, "coreweave", "spot")] == [
        "24.62"
    ]
    assert list(gpuclouds.observation_rows(rows, "lambda")) == []


def test_gpuclouds_merged_names_agreeing_and_replaced_figures_and_skips_held_ones(
    common, gpuclouds
):
    old = _row(common, 2.39, "2025-07-13", "old", "1x H100 PCIe (secure)", "global")
    held = _row(common, 2.89, "2026-09-25", "table", "1x H100 PCIe (secure)", "global")
    prices = [old, held]
    # The same figure again (same date and amount) is left out, so the older 2.39 stays named.
    again = _row(common, 2.89, "2026-09-25", "again", "1x H100 PCIe (secure)", "global")
    (kept,) = gpuclouds.merged(prices, [again])
    assert kept["source_url"] == "https://example.org/table"
    assert "[newer than the 2025-07-13 figure 2.39 of https://example.org/old]" in kept["source"]
    # A newer figure of the same amount names the one it corroborates, unless told not to.
    newer = _row(common, 2.89, "2026-10-10", "obs", "1x H100 PCIe (secure)", "global")
    (kept,) = gpuclouds.merged([held], [newer])
    assert kept["observed_at"] == date(2026, 10, 10)
    assert "[the same figure as the 2026-09-25 one of https://example.org/table]" in kept["source"]
    (plain,) = gpuclouds.merged([held], [newer], name_agreeing=False)
    assert plain == newer
    # Another pricing model is another row: both stay.
    spot = _row(common, 2.89, "2026-09-25", "table", "1x H100 PCIe (secure)", "global", "spot")
    assert len(gpuclouds.merged([held], [spot])) == 2


def test_gpuclouds_without_own_notes_strips_only_the_given_sources_notes(gpuclouds):
    row = {
        "source": "x [newer than the 2026-08-23 figure 3.29 of https://a/f] [newer than the 2025-07-13"
        " figure 2.39 of https://a/old]"
    }
    (out,) = gpuclouds.without_own_notes([row], ["https://a/f"])
    assert out["source"] == "x [newer than the 2025-07-13 figure 2.39 of https://a/old]"
    assert row["source"].startswith("x [newer than the 2026-08-23")  # the input is not changed


def test_observation_rows_keep_one_source_date_each_row_and_stop_on_an_unlisted_pricing(
    common, tmp_path
):
    obs = tmp_path / "obs.csv"
    obs.write_text(
        "\n".join(
            [
                OBSERVATION_HEADER,
                "2026-10-10,2026-10-10T03:34:41+00:00,gcp,Google,hyperscaler,spot,H100,"
                "a3-highgpu-8g,us-central1,NA,8,50.3153,6.2894,1",
                "2026-10-09,2026-10-09T03:34:41+00:00,azure,Microsoft Azure,hyperscaler,on_demand,"
                "H100,Standard_NC40ads_H100_v5,eastus,NA,1,6.98,6.98,1",
                # another source's unusual pricing is not this reader's business
                "2026-10-10,2026-10-10T03:34:41+00:00,vast,Vast.ai,marketplace,reserved,H100,"
                "H100,global,NA,1,2.0,2.0,3",
                "2026-10-10,2026-10-10T03:34:41+00:00,gcp,Google,hyperscaler,on_demand,A100-40GB,"
                "a2-highgpu-1g,us-central1,NA,1,3.673,3.673,1",
            ]
        ),
        encoding="utf-8",
    )
    rows = common.observation_rows(obs, "gcp")
    assert [(row["sku"], row["pricing"], when) for row, when in rows] == [
        ("a3-highgpu-8g", "spot", "2026-10-10"),
        ("a2-highgpu-1g", "on_demand", "2026-10-10"),
    ]
    ((azure_row, azure_date),) = common.observation_rows(obs, "azure")
    assert (azure_row["usd_per_hour"], azure_date) == ("6.98", "2026-10-09")
    assert common.observation_rows(obs, "aws", ("on_demand",)) == []
    with pytest.raises(ValueError, match=r"obs\.csv: unknown pricing 'spot' for a3-highgpu-8g"):
        common.observation_rows(obs, "gcp", ("on_demand",))
    with pytest.raises(ValueError, match=r"unexpected GCP pricing 'spot' for a3-highgpu-8g"):
        common.observation_rows(obs, "gcp", ("on_demand",), unexpected="unexpected GCP pricing")


def test_observation_citation_and_gpu_phrase(common):
    commit = "ab49c8081de81f1dae5f8f7e7d46af80b68c35d6"
    ref, url = common.observation_citation(
        ["/tmp/x.csv", "ewyluda/gpu-price-index", "data/observations/2026/2026-10-10.csv", commit]
    )
    assert ref == "ewyluda/gpu-price-index data/observations/2026/2026-10-10.csv @ab49c8081"
    assert url == (
        f"https://github.com/ewyluda/gpu-price-index/blob/{commit}/data/observations/2026/2026-10-10.csv"
    )
    assert common.gpu_phrase("1") == "1 GPU"
    assert common.gpu_phrase("8") == "8 GPUs"


def test_the_three_hyperscaler_readers_cite_the_same_row_alike(tmp_path):
    """aws, azure and gcp_prices read their rows through _common.observation_rows: one row each, same citation."""
    obs = tmp_path / "obs.csv"
    stamp = "2026-10-10,2026-10-10T03:34:41+00:00"
    obs.write_text(
        "\n".join(
            [
                OBSERVATION_HEADER,
                f"{stamp},aws,AWS,hyperscaler,on_demand,H100,p5.4xlarge,us-east-1,NA,1,6.88,6.88,1",
                f"{stamp},azure,Microsoft Azure,hyperscaler,spot,H100,Standard_ND96isr_H100_v5,"
                "eastus,NA,8,12.5,1.5625,1",
                f"{stamp},gcp,Google,hyperscaler,spot,H100,a3-highgpu-8g,us-central1,NA,8,50.3153,6.2894,1",
            ]
        ),
        encoding="utf-8",
    )
    found = {}
    for name in ("aws_prices", "azure_prices", "gcp_prices"):
        ((row, count),) = _load(name).observed_prices(obs, "o/r p @aaaaaaaaa", "https://x")
        found[name] = (row["instance_type"], row["pricing_model"], row["amount"], count)
        assert row["observed_at"] == date(2026, 10, 10)
        assert row["source_url"] == "https://x"
        assert "recorded in o/r p @aaaaaaaaa" in row["source"]
    assert found == {
        "aws_prices": ("p5.4xlarge", "on_demand", 6.88, 1.0),
        "azure_prices": ("Standard_ND96isr_H100_v5", "spot", 12.5, 8.0),
        "gcp_prices": ("a3-highgpu-8g", "spot", 50.3153, 8),
    }
    assert "(1 GPU);" in _load("aws_prices").observed_prices(obs, "r", "u")[0][0]["source"]
    assert "(8 GPUs);" in _load("gcp_prices").observed_prices(obs, "r", "u")[0][0]["source"]
