"""Rebuild the recorded Lambda pages (run from the repo root; see README.md for provenance).

The pages are built, not downloaded: the sandbox that made them has no internet. Figures come
from fixtures/providers/lambda.yaml; the markup follows the documented layout of the sources.
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent

# (label, VRAM/GPU, vCPUs, RAM, storage, price cell) per tab; the price is per GPU-hour.
TABS: dict[str, list[tuple[str, str, str, str, str, str]]] = {
    "8x": [
        ("NVIDIA B200 SXM6", "180 GB", "208", "2900 GiB", "22 TiB SSD", "$6.69"),
        ("NVIDIA H100 SXM", "80 GB", "208", "1800 GiB", "22 TiB SSD", "$3.99"),
        ("NVIDIA A100 SXM", "80 GB", "240", "1800 GiB", "19.5 TiB SSD", "$2.79"),
        ("NVIDIA A100 SXM", "40 GB", "124", "1800 GiB", "5.8 TiB SSD", "$1.99"),
        ("NVIDIA Tesla V100", "16 GB", "92", "448 GiB", "5.9 TiB SSD", "$0.79"),
        ("NVIDIA B300 SXM6", "288 GB", "—", "—", "—", "Contact sales"),
    ],
    "4x": [
        ("NVIDIA B200 SXM6", "180 GB", "104", "1440 GiB", "11 TiB SSD", "$6.79"),
        ("NVIDIA H100 SXM", "80 GB", "104", "900 GiB", "11 TiB SSD", "$4.09"),
        ("NVIDIA A100 PCIe", "40 GB", "120", "800 GiB", "1 TiB SSD", "$1.99"),
        ("NVIDIA A6000", "48 GB", "56", "400 GiB", "1 TiB SSD", "$1.09"),
    ],
    "2x": [
        ("NVIDIA B200 SXM6", "180 GB", "52", "720 GiB", "5.5 TiB SSD", "$6.89"),
        ("NVIDIA H100 SXM", "80 GB", "52", "450 GiB", "5.5 TiB SSD", "$4.19"),
        ("NVIDIA A100 PCIe", "40 GB", "60", "400 GiB", "1 TiB SSD", "$1.99"),
        ("NVIDIA A6000", "48 GB", "28", "200 GiB", "1 TiB SSD", "$1.09"),
    ],
    "1x": [
        ("NVIDIA B200 SXM6", "180 GB", "26", "360 GiB", "2.8 TiB SSD", "$6.99"),
        ("NVIDIA H100 SXM", "80 GB", "26", "225 GiB", "2.8 TiB SSD", "<s>$4.49</s> $4.29"),
        ("NVIDIA GH200", "96 GB", "64", "432 GiB", "4 TiB SSD", "$2.29"),
        ("NVIDIA H100 PCIe", "80 GB", "26", "225 GiB", "1 TiB SSD", "$3.29"),
        ("NVIDIA A100 SXM", "40 GB", "30", "200 GiB", "512 GiB SSD", "$1.99"),
        ("NVIDIA A100 PCIe", "40 GB", "30", "200 GiB", "512 GiB SSD", "$1.99"),
        ("NVIDIA A10", "24 GB", "30", "226 GiB", "1.4 TiB SSD", "$1.29"),
        ("NVIDIA A6000", "48 GB", "14", "100 GiB", "200 GiB SSD", "$1.09"),
        ("NVIDIA A6000", "48 GB", "14", "100 GiB", "200 GiB SSD", "$1.09"),
        ("NVIDIA Quadro RTX 6000", "24 GB", "14", "46 GiB", "512 GiB SSD", "$0.58"),
    ],
}

HEAD = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>GPU Cloud - VMs for Deep Learning | Lambda</title>
<meta name="description" content="NVIDIA B200, H100, GH200 and A100 GPU instances billed by the minute.">
<link rel="canonical" href="https://lambda.ai/service/gpu-cloud">
<link rel="stylesheet" href="/assets/index-Bq3x9dKe.css">
<script type="module" crossorigin src="/assets/index-C4m1oTzA.js"></script>
</head>
<body>
<div class="banner">8x NVIDIA B200 instances are now available on-demand! <a href="/instances">Launch today</a></div>
<header class="_header_k2d9a_1"><nav><a href="/">Lambda</a><a href="/service/gpu-cloud">Cloud</a><a href="/pricing">Pricing</a><a href="https://docs.lambda.ai">Docs</a></nav></header>
<main>
<section class="_hero_z1nfw_1"><h1>The GPU cloud built for AI</h1><p>On-demand NVIDIA GPU instances, billed by the minute. No egress fees.</p></section>
<section class="_clusters_z1nfw_40" id="clusters">
<div class="h2">1-Click Clusters<br>pricing</div>
<p>16 to 2,000+ NVIDIA B200 GPUs interconnected with NVIDIA Quantum-2 InfiniBand, reserved from 2 weeks.</p>
<table class="_pricingTable_z1nfw_13">
<thead><tr><th>GPU</th><th>DURATION</th><th>PRICE/GPU/HR*</th></tr></thead>
<tbody>
<tr data-plan="NVIDIA HGX B200"><th scope="row">NVIDIA HGX B200</th><td data-label="DURATION">2 weeks</td><td data-label="PRICE/GPU/HR*">$9.86</td></tr>
<tr data-plan="NVIDIA HGX B200"><th scope="row">NVIDIA HGX B200</th><td data-label="DURATION">1 year</td><td data-label="PRICE/GPU/HR*">Contact sales</td></tr>
</tbody>
</table>
</section>
<section class="_instances_z1nfw_60" id="instances">
<h2 class="h2">Instances pricing</h2>
<p>On-demand instances. Pay by the minute. Same price in every region.</p>
"""

FOOT = """<p class="_footnote_z1nfw_90">* Prices are per GPU per hour and exclude applicable sales tax, VAT and GST.
Storage is local NVMe SSD. Availability varies by region.</p>
</section>
</main>
<footer><p>&copy; 2026 Lambda, Inc.</p></footer>
</body>
</html>
"""


def html() -> str:
    """The pricing page: a tablist (8x/4x/2x/1x) and one table per tab."""
    out = [HEAD, '<div role="tablist" class="_tabs_z1nfw_20">']
    for i, tab in enumerate(TABS):
        selected = "true" if i == 0 else "false"
        out.append(
            f'<button role="tab" id="tab-{tab}" aria-controls="panel-{tab}" '
            f'aria-selected="{selected}" class="_tab_z1nfw_20">{tab}</button>'
        )
    out.append("</div>")
    for i, (tab, rows) in enumerate(TABS.items()):
        hidden = "" if i == 0 else " hidden"
        out.append(f'<div role="tabpanel" id="panel-{tab}" aria-labelledby="tab-{tab}"{hidden}>')
        out.append('<table class="_pricingTable_z1nfw_13">')
        out.append(
            "<thead><tr><th>GPU</th><th>VRAM/GPU</th><th>vCPUs</th><th>RAM</th>"
            "<th>STORAGE</th><th>PRICE/GPU/HR*</th></tr></thead>"
        )
        out.append("<tbody>")
        for label, vram, vcpus, ram, storage, price in rows:
            out.append(
                f'<tr data-plan="{label}"><th scope="row">{label}</th>'
                f'<td data-label="VRAM/GPU">{vram}</td><td data-label="vCPUs">{vcpus}</td>'
                f'<td data-label="RAM">{ram}</td><td data-label="STORAGE">{storage}</td>'
                f'<td data-label="PRICE/GPU/HR*">{price}</td></tr>'
            )
        out.append("</tbody></table></div>")
    out.append(FOOT)
    return "\n".join(out)


REGION_NAMES = {
    "us-east-1": "Virginia, USA", "us-east-2": "Washington D.C., USA", "us-east-3": "Washington D.C., USA",
    "us-midwest-1": "Illinois, USA", "us-midwest-2": "Ohio, USA", "us-south-1": "Texas, USA",
    "us-south-2": "North Texas, USA", "us-west-1": "California, USA", "us-west-2": "Arizona, USA",
    "us-west-3": "Utah, USA", "europe-central-1": "Germany", "me-west-1": "Israel",
    "asia-south-1": "India", "asia-northeast-1": "Osaka, Japan", "asia-northeast-2": "Tokyo, Japan",
}  # fmt: skip

# name: (description, gpu_description, cents/h, vcpus, memory_gib, storage_gib, gpus, capacity now)
API_TYPES = [
    ("gpu_8x_b200_sxm6", "8x B200 (180 GB SXM6)", "B200 (180 GB SXM6)", 5352, 208, 2900, 22528, 8, []),
    ("gpu_4x_b200_sxm6", "4x B200 (180 GB SXM6)", "B200 (180 GB SXM6)", 2716, 104, 1440, 11264, 4, []),
    ("gpu_2x_b200_sxm6", "2x B200 (180 GB SXM6)", "B200 (180 GB SXM6)", 1378, 52, 720, 5632, 2, []),
    ("gpu_1x_b200_sxm6", "1x B200 (180 GB SXM6)", "B200 (180 GB SXM6)", 699, 26, 360, 2867, 1, []),
    ("gpu_8x_h100_sxm5", "8x H100 (80 GB SXM5)", "H100 (80 GB SXM5)", 3192, 208, 1800, 22528, 8, ["us-east-2"]),
    ("gpu_4x_h100_sxm5", "4x H100 (80 GB SXM5)", "H100 (80 GB SXM5)", 1636, 104, 900, 11264, 4, []),
    ("gpu_2x_h100_sxm5", "2x H100 (80 GB SXM5)", "H100 (80 GB SXM5)", 838, 52, 450, 5632, 2, ["us-south-1"]),
    ("gpu_1x_h100_sxm5", "1x H100 (80 GB SXM5)", "H100 (80 GB SXM5)", 429, 26, 225, 2867, 1, ["us-east-1", "us-south-1"]),
    ("gpu_1x_h100_pcie", "1x H100 (80 GB PCIe)", "H100 (80 GB PCIe)", 329, 26, 225, 1024, 1, ["us-west-1"]),
    ("gpu_1x_gh200", "1x GH200 (96 GB)", "GH200 (96 GB)", 229, 64, 432, 4096, 1, ["us-east-3"]),
    ("gpu_8x_a100_80gb_sxm4", "8x A100 (80 GB SXM4)", "A100 (80 GB SXM4)", 2232, 240, 1800, 20480, 8, []),
    ("gpu_8x_a100", "8x A100 (40 GB SXM4)", "A100 (40 GB SXM4)", 1592, 124, 1800, 6144, 8, ["us-east-1", "europe-central-1"]),
    ("gpu_1x_a100_sxm4", "1x A100 (40 GB SXM4)", "A100 (40 GB SXM4)", 199, 30, 200, 512, 1, ["us-west-2", "asia-south-1"]),
    ("gpu_1x_a100", "1x A100 (40 GB PCIe)", "A100 (40 GB PCIe)", 199, 30, 200, 512, 1, ["us-south-1"]),
    ("gpu_2x_a100", "2x A100 (40 GB PCIe)", "A100 (40 GB PCIe)", 398, 60, 400, 1024, 2, []),
    ("gpu_4x_a100", "4x A100 (40 GB PCIe)", "A100 (40 GB PCIe)", 796, 120, 800, 1024, 4, []),
    ("gpu_1x_a6000", "1x RTX A6000 (48 GB)", "RTX A6000 (48 GB)", 109, 14, 100, 200, 1, ["us-south-1"]),
    ("gpu_2x_a6000", "2x RTX A6000 (48 GB)", "RTX A6000 (48 GB)", 218, 28, 200, 1024, 2, []),
    ("gpu_4x_a6000", "4x RTX A6000 (48 GB)", "RTX A6000 (48 GB)", 436, 56, 400, 1024, 4, []),
    ("gpu_8x_v100", "8x Tesla V100 (16 GB)", "Tesla V100 (16 GB)", 632, 92, 448, 6042, 8, []),
    ("gpu_1x_a10", "1x A10 (24 GB PCIe)", "A10 (24 GB PCIe)", 129, 30, 226, 1434, 1, ["us-west-1", "us-south-2"]),
    ("gpu_1x_rtx6000", "1x RTX 6000 (24 GB)", "RTX 6000 (24 GB)", 58, 14, 46, 512, 1, ["us-south-1"]),
]  # fmt: skip


def api() -> str:
    """GET /api/v1/instance-types: {"data": {name: {"instance_type", "regions_with_capacity_available"}}}."""
    data = {}
    for name, desc, gpu_desc, cents, vcpus, mem, storage, gpus, capacity in API_TYPES:
        data[name] = {
            "instance_type": {
                "name": name,
                "description": desc,
                "gpu_description": gpu_desc,
                "price_cents_per_hour": cents,
                "specs": {"vcpus": vcpus, "memory_gib": mem, "storage_gib": storage, "gpus": gpus},
            },
            "regions_with_capacity_available": [
                {"name": code, "description": REGION_NAMES[code]} for code in capacity
            ],
        }
    return json.dumps({"data": data}, indent=2) + "\n"


if __name__ == "__main__":
    (HERE / "gpu-cloud.html").write_text(html(), encoding="utf-8")
    (HERE / "instance-types.json").write_text(api(), encoding="utf-8")
    error = {
        "error": {
            "code": "global/invalid-api-key",
            "message": "API key was invalid, expired, or deleted.",
            "suggestion": "Check your API key or create a new one, then try again.",
        }
    }
    (HERE / "instance-types-error.json").write_text(
        json.dumps(error, indent=2) + "\n", encoding="utf-8"
    )
