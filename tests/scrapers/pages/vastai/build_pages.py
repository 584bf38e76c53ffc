"""Rebuild the recorded Vast.ai offer-search answers (run from the repo root; see README.md).

Built, not downloaded (no internet where it was made): the offer fields of Vast's
/api/v0/bundles/ search ({"offers": [...]}, gpu_ram/cpu_ram in MB, geolocation "Region, CC"),
with group medians set to the dated statistics in fixtures/providers/vastai.yaml. Offer ids,
hosts and specs are synthetic (seeded, reproducible). The manifest's q strings come from the
scraper's own query builder, i.e. exactly what fetch requests.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from scrapers.providers.vastai import PAGE_LIMIT, bundles_query

HERE = Path(__file__).resolve().parent
rng = random.Random(20261130)

PLACES = ["Texas, US", "California, US", "Nevada, US", "Quebec, CA", "Ontario, CA", "Norway",
          "Sweden, SE", "Bavaria, DE", "Taiwan, TW", "Hong Kong, HK", None]  # fmt: skip
# gpu_name, num_gpus, gpu_ram MB, cpu cores, cpu_ram MB, prices (dph_total)
ON_DEMAND = [
    ("RTX 4090", 1, 24564, 16, 64400, [0.38, 0.41, 0.45, 0.52, 0.61, 0.682, 0.70, 0.75, 0.80, 0.88, 0.95]),
    ("RTX 4090", 2, 24564, 32, 128800, [1.20, 1.35, 1.42, 1.60]),
    ("RTX 4090", 8, 24564, 128, 515200, [5.60, 6.40]),
    ("RTX 3090", 1, 24576, 12, 32200, [0.13, 0.16, 0.19, 0.22, 0.25, 0.28, 0.31, 0.35, 4.50]),
    ("RTX 5090", 1, 32607, 24, 96600, [0.62, 0.70, 0.79, 0.865, 0.92, 1.05, 1.141]),
    ("A100 SXM4", 1, 81920, 32, 257600, [1.1378, 1.45, 1.7043, 1.85, 2.10]),
    ("A100 SXM4", 1, 40960, 30, 193200, [0.72, 0.80, 0.95]),
    ("A100 SXM4", 8, 81920, 256, 2060800, [11.20, 12.80]),
    ("H100 SXM", 1, 81559, 26, 231800, [2.1333, 2.3528, 2.4520, 2.6667]),
    ("H100 SXM", 8, 81559, 208, 2060800, [16.00, 17.60, 19.20]),
    ("H100 NVL", 1, 95830, 32, 257600, [2.30, 2.525, 2.80]),
    ("H200", 1, 143771, 32, 257600, [3.20, 4.10, 5.5826, 6.40, 8.60]),
    ("B200", 1, 183359, 36, 257600, [3.80, 4.492, 5.10]),
    ("L40S", 1, 46068, 16, 128800, [0.55, 0.62, 0.67, 0.74, 0.89]),
    ("RTX 6000Ada", 1, 49140, 16, 128800, [0.55, 0.61, 0.77]),
]  # fmt: skip
BID = [
    ("RTX 3090", 1, 24576, 12, 32200, [0.18, 0.21, 0.24, 0.26, 0.30]),
    ("RTX 4090", 1, 24564, 16, 64400, [0.31, 0.34, 0.38, 0.42]),
    ("L40S", 1, 46068, 16, 128800, [0.4037, 0.45, 0.52]),
    ("H100 SXM", 1, 81559, 26, 231800, [1.10, 1.25, 1.40]),
    ("A100 SXM4", 1, 81920, 32, 257600, [0.70, 0.82]),
]  # fmt: skip

_next_id = 31_402_117


def offer(gpu_name, num_gpus, gpu_ram, cores, cpu_ram, dph, min_bid, **overrides) -> dict:
    """One offer with the fields the search returns (a realistic subset, same names and units)."""
    global _next_id
    _next_id += rng.randint(3, 900)
    machine = rng.randint(10_000, 45_000)
    storage_cost = round(rng.uniform(0.05, 0.2) * 10 / 720, 6)  # 10 GB default allocation
    row = {
        "id": _next_id,
        "ask_contract_id": _next_id,
        "bundle_id": _next_id + 7_000_000,
        "machine_id": machine,
        "host_id": rng.randint(1_000, 400_000),
        "gpu_name": gpu_name,
        "num_gpus": num_gpus,
        "gpu_frac": 1.0 if num_gpus == 8 else round(num_gpus / rng.choice([4, 8]), 3),
        "gpu_ram": gpu_ram,
        "gpu_total_ram": gpu_ram * num_gpus,
        "gpu_arch": "nvidia",
        "compute_cap": 900 if (gpu_name or "").startswith(("H1", "H2")) else 800,
        "cuda_max_good": 12.8,
        "driver_version": "570.133.07",
        "cpu_name": rng.choice(
            [
                "AMD EPYC 7B13 64-Core Processor",
                "Intel Xeon Platinum 8480+",
                "AMD Ryzen 9 7950X 16-Core Processor",
            ]
        ),
        "cpu_cores": cores * 2,
        "cpu_cores_effective": float(cores),
        "cpu_ram": cpu_ram,
        "disk_space": round(rng.uniform(200, 4000), 1),
        "disk_bw": round(rng.uniform(1500, 6000), 1),
        "inet_up": round(rng.uniform(100, 5000), 1),
        "inet_down": round(rng.uniform(100, 8000), 1),
        "dph_base": round(dph - storage_cost, 6),
        "dph_total": dph,
        "storage_cost": 0.15,
        "inet_up_cost": 0.0039,
        "inet_down_cost": 0.0039,
        "min_bid": min_bid,
        "is_bid": False,
        "reliability": round(rng.uniform(0.95, 0.999), 4),
        "reliability2": round(rng.uniform(0.95, 0.999), 6),
        "geolocation": rng.choice(PLACES),
        "verification": "verified",
        "rentable": True,
        "rented": False,
        "external": False,
        "hosting_type": rng.choice([0, 1]),
        "static_ip": rng.choice([True, False]),
        "direct_port_count": rng.choice([20, 100, 1000]),
        "dlperf": round(rng.uniform(20, 400), 3),
        "total_flops": round(rng.uniform(30, 1000), 3),
        "pci_gen": 4.0,
        "duration": round(rng.uniform(1e6, 3e7), 1),
        "end_date": 1_800_000_000 + rng.randint(0, 30_000_000),
        "start_date": 1_793_000_000.0,
        "webpage": None,
        "logo": "/static/logos/vastai_small2.png",
    }
    row.update(overrides)
    return row


def on_demand_offers() -> list[dict]:
    rows = []
    for name, n, ram, cores, cpu_ram, prices in ON_DEMAND:
        for price in prices:
            rows.append(offer(name, n, ram, cores, cpu_ram, price, round(price * 0.55, 4)))
    # Traps the query should have filtered, or data the host left incomplete.
    rows.append(offer("RTX 4090", 1, 24564, 16, 64400, 0.30, 0.17, rentable=False))
    rows.append(offer("RTX 4090", 3, 24564, 48, 193200, 2.10, 1.10))  # 3 GPUs: not a catalog shape
    rows.append(offer(None, 1, 24564, 16, 64400, 0.33, 0.18))  # host with no GPU name yet
    rows.append(offer("H100 SXM", 1, 81559, 26, 231800, 1.05, 0.60, verification="deverified"))
    rows.append(offer("RTX 3090", 1, 24576, 12, 32200, 0.0, 0.0))  # zero price
    return sorted(rows, key=lambda r: (r["dph_total"], r["id"]))


def bid_offers() -> list[dict]:
    rows = []
    for name, n, ram, cores, cpu_ram, bids in BID:
        for bid in bids:
            rows.append(offer(name, n, ram, cores, cpu_ram, round(bid * 1.8, 4), bid, is_bid=True))
    rows.append(offer("RTX 4090", 1, 24564, 16, 64400, 0.55, None, is_bid=True))  # no bid floor
    return sorted(rows, key=lambda r: (r["dph_total"], r["id"]))


def main() -> None:
    manifest = []
    rows = on_demand_offers()
    first, rest = rows[:PAGE_LIMIT], rows[PAGE_LIMIT:]
    boundary = first[-1]["dph_total"]
    # The server answers dph_total >= boundary: the offers priced at the boundary come again.
    second = [r for r in first if r["dph_total"] == boundary] + rest
    for name, page_rows, q in (
        ("bundles-on-demand-1.json", first, bundles_query("on-demand")),
        ("bundles-on-demand-2.json", second, bundles_query("on-demand", min_dph=boundary)),
        ("bundles-bid-1.json", bid_offers(), bundles_query("bid")),
    ):
        (HERE / name).write_text(json.dumps({"offers": page_rows}) + "\n", encoding="utf-8")
        manifest.append({"method": "GET", "path": "/api/v0/bundles/", "query": {"q": q}, "file": name,
                         "content_type": "application/json"})  # fmt: skip
    (HERE / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
