"""Rebuilds the recorded gcp pages in this folder (see README.md); deterministic, byte for byte.

Run: PYTHONPATH=. .venv/bin/python tests/scrapers/pages/gcp/build_pages.py
"""

import json
import random
from decimal import Decimal
from pathlib import Path

random.seed(6081)
OUT = str(Path(__file__).resolve().parent)
GROUPS = {
    "Americas": ["us-central1", "us-east1", "us-west1"],
    "Virginia": ["us-east4"],
    "Netherlands": ["europe-west4"],
    "Taiwan": ["asia-east1"],
}
GEO = {
    "Americas": ("MULTI_REGIONAL", GROUPS["Americas"]),
    "Virginia": ("REGIONAL", ["us-east4"]),
    "Netherlands": ("REGIONAL", ["europe-west4"]),
    "Taiwan": ("REGIONAL", ["asia-east1"]),
}


def sid():
    return "-".join("".join(random.choice("0123456789ABCDEF") for _ in range(4)) for _ in range(3))


def money(x):
    d = Decimal(str(x))
    units = int(d)
    nanos = int((d - units) * 1000000000)
    return {"currencyCode": "USD", "units": str(units), "nanos": nanos}


def sku(
    desc, family, group, usage, place, price, unit, unit_desc, base, base_desc, factor, tiers=None
):
    s = sid()
    geo_type, regs = GEO[place]
    rates = tiers or [{"startUsageAmount": 0, "unitPrice": money(price)}]
    return {
        "name": f"services/6F81-5844-456A/skus/{s}",
        "skuId": s,
        "description": desc,
        "category": {
            "serviceDisplayName": "Compute Engine",
            "resourceFamily": family,
            "resourceGroup": group,
            "usageType": usage,
        },
        "serviceRegions": GROUPS[place],
        "pricingInfo": [
            {
                "summary": "",
                "pricingExpression": {
                    "usageUnit": unit,
                    "displayQuantity": 1,
                    "tieredRates": rates,
                    "usageUnitDescription": unit_desc,
                    "baseUnit": base,
                    "baseUnitDescription": base_desc,
                    "baseUnitConversionFactor": factor,
                },
                "currencyConversionRate": 1,
                "effectiveTime": "2026-11-29T10:38:08.497364Z",
            }
        ],
        "serviceProviderName": "Google",
        "geoTaxonomy": {"type": geo_type, "regions": regs},
    }


def core(stem, group, usage, place, price):
    pre = {"OnDemand": "", "Preemptible": "Spot Preemptible "}[usage]
    return sku(
        f"{pre}{stem} running in {place}",
        "Compute",
        group,
        usage,
        place,
        price,
        "h",
        "hour",
        "s",
        "second",
        3600,
    )


def ram(stem, group, usage, place, price):
    pre = {"OnDemand": "", "Preemptible": "Spot Preemptible "}[usage]
    return sku(
        f"{pre}{stem} running in {place}",
        "Compute",
        group,
        usage,
        place,
        price,
        "GiBy.h",
        "gibibyte hour",
        "By.s",
        "byte second",
        3865470566400,
    )


def gpu(stem, usage, place, price):
    desc = (
        f"{stem} running in {place}"
        if usage == "OnDemand"
        else f"{stem} attached to Spot Preemptible VMs running in {place}"
    )
    return sku(desc, "Compute", "GPU", usage, place, price, "h", "hour", "s", "second", 3600)


def commit(stem, kind, years, place, price):
    usage = f"Commit{years}Yr"
    unit, ud, base, bd, f = (
        ("h", "hour", "s", "second", 3600)
        if kind != "ram"
        else ("GiBy.h", "gibibyte hour", "By.s", "byte second", 3865470566400)
    )
    grp = {"core": "CPU", "ram": "RAM", "gpu": "GPU"}[kind]
    return sku(
        f"Commitment v1: {stem} in {place} for {years} Year",
        "Compute",
        grp,
        usage,
        place,
        price,
        unit,
        ud,
        base,
        bd,
        f,
    )


p1 = []
p2 = []
# N1 core/RAM (page 1)
N1 = {
    "Americas": (0.031611, 0.006975, 0.004237, 0.00135),
    "Virginia": (0.035605, 0.00654, 0.004771, 0.001269),
    "Netherlands": (0.034806, 0.01245, 0.004663, 0.001868),
    "Taiwan": (0.036602, 0.006599, 0.004906, 0.001056),
}
for place, (c, cs, r, rs) in N1.items():
    p1 += [
        core("N1 Predefined Instance Core", "N1Standard", "OnDemand", place, c),
        core("N1 Predefined Instance Core", "N1Standard", "Preemptible", place, cs),
        ram("N1 Predefined Instance Ram", "N1Standard", "OnDemand", place, r),
        ram("N1 Predefined Instance Ram", "N1Standard", "Preemptible", place, rs),
    ]
p1 += [
    commit("N1 Cpu", "core", 1, "Americas", 0.019915),
    commit("N1 Ram", "ram", 1, "Americas", 0.002669),
    commit("N1 Cpu", "core", 3, "Americas", 0.014225),
    commit("N1 Ram", "ram", 3, "Americas", 0.001907),
]
# traps on page 1
p1.append(core("Custom Instance Core", "N1Standard", "OnDemand", "Americas", 0.033174))
p1.append(core("Sole Tenancy Instance Core", "CPU", "OnDemand", "Americas", 0.034773))
p1.append(
    sku(
        "Storage PD Capacity",
        "Storage",
        "PDStandard",
        "OnDemand",
        "Americas",
        0.04,
        "GiBy.mo",
        "gibibyte month",
        "By.s",
        "byte second",
        2.8759101014016e15,
    )
)
p1.append(
    sku(
        "Network Internet Egress from Americas to Americas",
        "Network",
        "PremiumInternetEgress",
        "OnDemand",
        "Americas",
        0.12,
        "GiBy",
        "gibibyte",
        "By",
        "byte",
        1073741824,
    )
)
lic = sku(
    "Licensing Fee for Windows Server 2022 Datacenter Edition (CPU cost)",
    "License",
    "SoftwareLicense",
    "OnDemand",
    "Americas",
    0.046,
    "h",
    "hour",
    "s",
    "second",
    3600,
)
p1.append(lic)
# G2 (page 1), L4 (page 2)
G2 = {
    "Americas": (0.024988, 0.009995, 0.0029279, 0.0011725),
    "Virginia": (0.024906, 0.009955, 0.0029177, 0.001168),
    "Netherlands": (0.026264, 0.010505, 0.0030773, 0.0012325),
    "Taiwan": (0.028934, 0.007, 0.0033903, 0.000821),
}
for place, (c, cs, r, rs) in G2.items():
    p1 += [
        core("G2 Instance Core", "CPU", "OnDemand", place, c),
        core("G2 Instance Core", "CPU", "Preemptible", place, cs),
        ram("G2 Instance Ram", "RAM", "OnDemand", place, r),
        ram("G2 Instance Ram", "RAM", "Preemptible", place, rs),
    ]
# A2 / A3 core+RAM (page 1)
p1 += [
    core("A2 Instance Core", "CPU", "OnDemand", "Americas", 0.031611),
    core("A2 Instance Core", "CPU", "Preemptible", "Americas", 0.01264),
    ram("A2 Instance Ram", "RAM", "OnDemand", "Americas", 0.004237),
    ram("A2 Instance Ram", "RAM", "Preemptible", "Americas", 0.001695),
    commit("A2 Cpu", "core", 1, "Americas", 0.019915),
    commit("A2 Ram", "ram", 1, "Americas", 0.002669),
]
p1 += [
    core("A3 Instance Core", "CPU", "OnDemand", "Virginia", 0.022981),
    core("A3 Instance Core", "CPU", "Preemptible", "Virginia", 0.0045603),
    ram("A3 Instance Ram", "RAM", "OnDemand", "Virginia", 0.0025),
    ram("A3 Instance Ram", "RAM", "Preemptible", "Virginia", 0.0004033),
]
for place, (cs, rs) in {
    "Americas": (0.0057988, 0.0005178),
    "Virginia": (0.0045603, 0.0004033),
}.items():
    p1 += [
        core("A3 Mega Instance Core", "CPU", "OnDemand", place, 0.022981),
        core("A3 Mega Instance Core", "CPU", "Preemptible", place, cs),
        ram("A3 Mega Instance Ram", "RAM", "OnDemand", place, 0.0025),
        ram("A3 Mega Instance Ram", "RAM", "Preemptible", place, rs),
    ]
for place, (cs, rs) in {
    "Americas": (0.0062949, 0.000478),
    "Virginia": (0.0049326, 0.000374),
}.items():
    p1 += [
        core("A3 Ultra Instance Core", "CPU", "OnDemand", place, 0.0275),
        core("A3 Ultra Instance Core", "CPU", "Preemptible", place, cs),
        ram("A3 Ultra Instance Ram", "RAM", "OnDemand", place, 0.0020684),
        ram("A3 Ultra Instance Ram", "RAM", "Preemptible", place, rs),
    ]
# GPUs (page 2)
GPUS = {
    "Nvidia Tesla T4 GPU": {
        "Americas": (0.35, 0.14),
        "Virginia": (0.37, 0.1123),
        "Netherlands": (0.3675, 0.14),
        "Taiwan": (0.35, 0.14),
    },
    "Nvidia Tesla P4 GPU": {
        "Americas": (0.6, 0.24),
        "Virginia": (0.6, 0.1734),
        "Netherlands": (0.63, 0.0822),
    },
    "Nvidia Tesla P100 GPU": {
        "Americas": (1.46, 0.584),
        "Netherlands": (1.533, 0.3265),
        "Taiwan": (1.6, 0.1852),
    },
    "Nvidia Tesla V100 GPU": {"Americas": (2.48, 0.992), "Netherlands": (2.604, 0.7148)},
    "Nvidia L4 GPU": {
        "Americas": (0.56004, 0.2231),
        "Virginia": (0.55821, 0.2233),
        "Netherlands": (0.58804, 0.2106),
        "Taiwan": (0.64847, 0.2118),
    },
    "Nvidia Tesla A100 GPU": {"Americas": (2.933908, 1.1472)},
    "Nvidia Tesla A100 80GB GPU": {"Americas": (3.92808, 1.57)},
    "Nvidia H100 80GB GPU": {"Virginia": (9.79655, 1.7632)},
    "Nvidia H100 80GB Mega GPU": {
        "Americas": (10.34427625, 2.3791),
        "Virginia": (10.34428, 1.8619),
    },
    "Nvidia H200 141GB GPU": {"Americas": (9.31174, 3.7247), "Virginia": (9.31174, 3.4826)},
}
for stem, places in GPUS.items():
    for place, (od, spot) in places.items():
        p2 += [gpu(stem, "OnDemand", place, od), gpu(stem, "Preemptible", place, spot)]
p2 += [
    commit("Nvidia Tesla T4 GPU", "gpu", 1, "Americas", 0.22),
    commit("Nvidia Tesla T4 GPU", "gpu", 3, "Americas", 0.16),
]
# GPU traps (page 2)
p2.append(gpu("Nvidia Tesla T4 Virtual Workstation GPU", "OnDemand", "Americas", 0.55))
p2.append(
    sku(
        "Nvidia H100 80GB GPU attached to DWS Defined Duration VMs running in Virginia",
        "Compute",
        "GPU",
        "OnDemand",
        "Virginia",
        5.8779,
        "h",
        "hour",
        "s",
        "second",
        3600,
    )
)
TOKEN = "CiQwMDZFLUEyMUMtMDQ4MxIMCgoxLTU4NDQtNDU2QRoGCJjQ7ZsG"
Path(OUT, "catalog-1.json").write_text(json.dumps({"skus": p1, "nextPageToken": TOKEN}, indent=2))
Path(OUT, "catalog-2.json").write_text(json.dumps({"skus": p2, "nextPageToken": ""}, indent=2))
print(len(p1), len(p2))

# ------------- public page (2022-era layout: table in an iframe document)
FRAME = "gpus-pricing_3f0c1b7a2d4e9f6c8b5a1e0d7c6b9a8f2e4d1c3b5a7f9e0d2c4b6a8f1e3d5c7b.frame"
CODES = [
    ("io", "Iowa", "us-central1"),
    ("nv", "Northern Virginia", "us-east4"),
    ("nether", "Netherlands", "europe-west4"),
    ("tw", "Taiwan", "asia-east1"),
    ("ja", "Tokyo", "asia-northeast1"),
]


def cell(vals):
    attrs = " ".join(f'{c}-hourly="${v} per GPU"' for c, v in vals.items())
    return f"<td cloud-pricer {attrs}></td>"


ROWS = [
    (
        "NVIDIA T4",
        ["1 GPU", "2 GPUs", "4 GPUs"],
        "16 GB GDDR6",
        {"io": "0.35", "nv": "0.37", "nether": "0.3675", "tw": "0.35"},
        {"io": "0.14", "nv": "0.1123", "nether": "0.14", "tw": "0.14"},
        {"io": "0.22"},
        {"io": "0.16"},
    ),
    (
        "NVIDIA P4",
        ["1 GPU", "2 GPUs", "4 GPUs"],
        "8 GB GDDR5",
        {"io": "0.60", "nv": "0.60", "nether": "0.63"},
        {"io": "0.24", "nv": "0.1734", "nether": "0.0822"},
        {},
        {},
    ),
    (
        "NVIDIA V100",
        ["1 GPU", "2 GPUs", "4 GPUs", "8 GPUs"],
        "16 GB HBM2",
        {"io": "2.48", "nether": "2.604"},
        {"io": "0.992", "nether": "0.7148"},
        {},
        {},
    ),
    (
        "NVIDIA P100",
        ["1 GPU", "2 GPUs", "4 GPUs"],
        "16 GB HBM2",
        {"io": "1.46", "nether": "1.533", "tw": "1.60"},
        {"io": "0.584", "nether": "0.3265", "tw": "0.1852"},
        {},
        {},
    ),
    (
        "NVIDIA L4",
        ["1 GPU", "2 GPUs", "4 GPUs", "8 GPUs"],
        "24 GB GDDR6",
        {"io": "0.56004", "nv": "0.55821", "nether": "0.58804", "tw": "0.64847", "ja": "0.7192"},
        {"io": "0.2231", "nv": "0.2233", "nether": "0.2106", "tw": "0.2118", "ja": "0.2853"},
        {},
        {},
    ),
    (
        "NVIDIA A100 40GB",
        ["1 GPU", "2 GPUs", "4 GPUs", "8 GPUs", "16 GPUs"],
        "40 GB HBM2",
        {"io": "2.933908"},
        {"io": "1.1472"},
        {},
        {},
    ),
    (
        "NVIDIA K80",
        ["1 GPU", "2 GPUs", "4 GPUs", "8 GPUs"],
        "12 GB GDDR5",
        {"io": "0.45"},
        {"io": "0.0375"},
        {},
        {},
    ),
    (
        "NVIDIA T4 Virtual Workstation",
        ["1 GPU", "2 GPUs", "4 GPUs"],
        "16 GB GDDR6",
        {"io": "0.55", "nv": "0.57"},
        {"io": "0.34"},
        {},
        {},
    ),
]
rows = []
for model, counts, mem, od, spot, c1, c3 in ROWS:
    rows.append(
        f'      <tr>\n        <td rowspan="{len(counts)}">{model}</td>\n        <td>{counts[0]}</td>\n        <td rowspan="{len(counts)}">{mem}</td>\n        {cell(od)}\n        {cell(spot)}\n        {cell(c1)}\n        {cell(c3)}\n      </tr>'
    )
    for c in counts[1:]:
        rows.append(f"      <tr>\n        <td>{c}</td>\n      </tr>")
options = "\n".join(f'      <md-option value="{c}">{n} ({r})</md-option>' for c, n, r in CODES)
frame = f"""<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="robots" content="noindex">
  <title>GPU pricing</title>
  <link rel="stylesheet" href="/_static/css/cloud-pricer.css">
</head>
<body class="cloud-pricer-frame">
  <div class="cloud-pricer-region-select">
    <md-select ng-model="region" aria-label="Region" placeholder="Iowa (us-central1)">
{options}
    </md-select>
  </div>
  <div class="devsite-table-wrapper">
  <table class="cloud-pricer-table">
    <thead>
      <tr>
        <th>Model</th>
        <th>GPUs</th>
        <th>GPU memory</th>
        <th>GPU price (USD)</th>
        <th>Spot price* (USD)</th>
        <th>1-year commitment price* (USD)</th>
        <th>3-year commitment price* (USD)</th>
      </tr>
    </thead>
    <tbody>
{chr(10).join(rows)}
    </tbody>
  </table>
  </div>
  <p>* Spot prices are dynamic and can change up to once every 30 days. Commitment prices require a reservation.</p>
  <script src="/_static/js/cloud-pricer.js"></script>
</body>
</html>
"""
Path(OUT, "gpus-pricing.frame.html").write_text(frame)
main = f"""<!DOCTYPE html>
<html lang="en" dir="ltr">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>GPU pricing &nbsp;|&nbsp; Compute Engine: Virtual Machines (VMs) &nbsp;|&nbsp; Google Cloud</title>
  <link rel="canonical" href="https://cloud.google.com/compute/gpus-pricing">
</head>
<body class="devsite-doc-page" template="page">
  <devsite-header></devsite-header>
  <main role="main" class="devsite-main-content">
    <article class="devsite-article">
      <h1 class="devsite-page-title">GPU pricing</h1>
      <div class="devsite-article-body clearfix">
        <p>This page describes the pricing information for Compute Engine GPUs. This page does not cover disk and images, networking, sole-tenant nodes pricing or VM instance pricing.</p>
        <h2 id="gpus" data-text="GPU pricing">GPU pricing</h2>
        <p>You can attach GPUs to your instances to accelerate specific workloads. Each GPU adds to the cost of your instance in addition to the cost of the machine type.</p>
        <p>GPU prices are listed per region. Use the drop-down menu to see the prices for a region.</p>
        <iframe class="cloud-pricer-frame" src="/compute/{FRAME}" width="100%" height="720" frameborder="0"></iframe>
        <h2 id="whats-next" data-text="What's next">What's next</h2>
        <ul><li>Read the <a href="/compute/docs/gpus">GPU documentation</a>.</li></ul>
      </div>
    </article>
  </main>
  <devsite-footer-linkboxes></devsite-footer-linkboxes>
</body>
</html>
"""
Path(OUT, "gpus-pricing.html").write_text(main)
print(FRAME)
