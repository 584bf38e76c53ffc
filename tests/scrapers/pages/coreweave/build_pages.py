"""Rebuild the recorded CoreWeave pricing page (run from the repo root; see README.md).

Built, not downloaded (no internet where it was made): Webflow markup as CoreWeave serves it
(role="listitem" rows, h3.table-model-name, div.table-meta-value + label, span.instance-price /
span.spot-price with span.item-value), figures from fixtures/providers/coreweave.yaml and the
2026-09-20 transcription of the page cited there.
"""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent

# (model, data-product, GPU count cell, VRAM, vCPUs, RAM, storage TB, on-demand span, spot span)
NORTH_AMERICA = [
    ("NVIDIA GB200 NVL72", "nvidia-gb200-nvl72", "4<sup>1</sup>", "186", "144", "960", "30.72",
     "$42.00", None),
    ("NVIDIA HGX B200", "nvidia-b200", "8", "180", "128", "2,048", "30.72", "$68.80", "$34.11"),
    ("NVIDIA HGX B300", "nvidia-hgx-b300", "8", "288", "128", "4,096", "61.44", "Contact sales",
     "$35.84"),
    ("NVIDIA GB300 NVL72", "nvidia-gb300-nvl72", "4<sup>1</sup>", "279", "144", "960", "30.72",
     "Contact sales", None),
    ("NVIDIA HGX H200", "nvidia-hgx-h200", "8", "141", "128", "2,048", "30.72", "$50.44", "$20.93"),
    ("NVIDIA HGX H100", "nvidia-hgx-h100", "8", "80", "128", "2,048", "30.72",
     "$49.24<sup>2</sup>", "$19.71"),
    ("NVIDIA RTX PRO 6000 Blackwell Server Edition", "nvidia-rtx-pro-6000", "8", "96", "128",
     "1,024", "7.68", "$20.00", None),
    ("NVIDIA GH200", "nvidia-gh200", "1", "96", "72", "480", "7.68", "$6.50", None),
    ("NVIDIA L40S", "nvidia-l40s", "8", "48", "128", "1,024", "7.68", "$18.00", None),
    ("NVIDIA L40", "nvidia-l40", "8", "48", "128", "1,024", "7.68", "$1.25|gpu", None),
    ("NVIDIA A100", "nvidia-a100", "8", "80", "128", "2,048", "7.68", "$21.60", "$9.65"),
]  # fmt: skip
EUROPE = [
    ("NVIDIA HGX B200", "nvidia-b200", "8", "180", "128", "2,048", "30.72", "$71.12", None),
    ("NVIDIA HGX H200", "nvidia-hgx-h200", "8", "141", "128", "2,048", "30.72", "$52.16", None),
]
CPU = [
    ("AMD Genoa (9274F) High Performance", "amd-genoa-9274f", "96", "768", "$6.42", "$3.50"),
    ("Intel Ice Lake (6342) General Purpose", "intel-icelake-6342", "96", "384", "$3.36", "$2.29"),
]


def price_span(css: str, label: str, value: str | None) -> str:
    if value is None:
        return ""
    unit = "/ Hour"
    if value.endswith("|gpu"):
        value, unit = value.removesuffix("|gpu"), "/ GPU / Hour"
    return f'<span class="{css}">{label}: <span class="item-value">{value}</span> {unit}<br></span>'


def gpu_row(model, product, count, vram, vcpus, ram, storage, on_demand, spot) -> str:
    cells = [
        ("GPU Count", count),
        ("VRAM (GB)", vram),
        ("vCPUs", vcpus),
        ("System RAM (GB)", ram),
        ("Local Storage (TB)", storage),
    ]
    meta = "".join(
        f'<div class="table-v2-cell"><div class="table-meta-value">{v}</div>\n<div>{k}</div></div>'
        for k, v in cells
    )
    plain = on_demand.removesuffix("|gpu") if on_demand else ""
    return (
        '<div role="listitem" class="table-row-v2 w-dyn-item kubernetes-gpu-pricing">'
        '<div class="table-grid">'
        f'<div class="table-v2-cell table-v2-cell--name"><h3 data-product="{product}" '
        f'class="table-model-name">{model}</h3></div>{meta}'
        '<div class="table-v2-cell table-v2-cell--price">'
        f"{price_span('instance-price', 'On-Demand Price', on_demand)}"
        f"{price_span('spot-price', 'Spot Price', spot)}</div>"
        # The mobile layout repeats the price without a label: not a second price.
        f'<div class="table-v2-cell table-v2-cell--mobile"><div>{plain}</div></div>'
        "</div></div>"
    )


def cpu_row(model, product, vcpus, ram, on_demand, spot) -> str:
    return (
        '<div role="listitem" class="table-row-v2 w-dyn-item kubernetes-cpu-pricing">'
        '<div class="table-grid">'
        f'<div class="table-v2-cell table-v2-cell--name"><h3 data-product="{product}" '
        f'class="table-model-name">{model}</h3></div>'
        f'<div class="table-v2-cell"><div class="table-meta-value">{vcpus}</div>\n<div>vCPUs</div></div>'
        f'<div class="table-v2-cell"><div class="table-meta-value">{ram}</div>\n<div>System RAM (GB)</div></div>'
        f'<div class="table-v2-cell table-v2-cell--price">{price_span("instance-price", "On-Demand Price", on_demand)}'
        f"{price_span('spot-price', 'Spot Price', spot)}</div>"
        "</div></div>"
    )


def table(rows: list[str], css: str) -> str:
    return (
        f'<div class="table-v2 {css}"><div class="table-v2-header">'
        "<div>GPU Model</div><div>GPU Count</div><div>VRAM (GB)</div><div>vCPUs</div>"
        "<div>System RAM (GB)</div><div>Local Storage (TB)</div><div>Instance Price</div></div>"
        f'<div role="list" class="table-v2-body w-dyn-items">{"".join(rows)}</div></div>'
    )


def html() -> str:
    return f"""<!DOCTYPE html>
<!-- Last Published: Mon Nov 30 2026 06:12:44 GMT+0000 (Coordinated Universal Time) -->
<html data-wf-domain="www.coreweave.com" data-wf-page="64f1c0a9e4b0d1a2b3c4d5e6" lang="en">
<head>
<meta charset="utf-8">
<title>Pricing | CoreWeave</title>
<meta content="CoreWeave's pricing for GPU and CPU compute, storage and networking." name="description">
<link href="https://cdn.prod.website-files.com/coreweave.webflow.shared.css" rel="stylesheet" type="text/css">
</head>
<body>
<div class="navbar w-nav"><a href="/" class="brand w-nav-brand">CoreWeave</a><a href="/pricing" class="nav-link w--current">Pricing</a></div>
<section class="section pricing-hero"><h1>Pricing</h1><p>Instance pricing is per hour and billed by the minute. Reserved capacity: up to 60% discounts over our On-Demand prices for committed usage. <a href="/contact-us">Contact sales</a></p></section>
<section class="section pricing-gpu" id="gpu-pricing">
<h2>On-demand GPU instances</h2>
<div class="pricing-region-tabs w-tabs">
<div class="pricing-region-label">REGION: NORTH AMERICA</div>
{table([gpu_row(*r) for r in NORTH_AMERICA], "kubernetes-gpu-pricing")}
<div class="pricing-region-label">REGION: EUROPE</div>
{table([gpu_row(*r) for r in EUROPE], "kubernetes-gpu-pricing")}
</div>
<div class="pricing-footnotes">
<p><sup>1</sup> GB200 NVL72 and GB300 NVL72 are sold as 4-GPU instances (one Grace Blackwell compute tray) within a 72-GPU NVLink domain.</p>
<p><sup>2</sup> Includes NVIDIA Quantum-2 InfiniBand networking (3.2 Tbps per node).</p>
<p>GPU instance prices include the host's vCPU, RAM and local NVMe storage. Prices exclude applicable taxes.</p>
</div>
</section>
<section class="section pricing-cpu" id="cpu-pricing">
<h2>On-demand CPU instances</h2>
{table([cpu_row(*r) for r in CPU], "kubernetes-cpu-pricing")}
</section>
<section class="section pricing-storage" id="storage">
<h2>Storage</h2>
<div class="storage-row"><h3>AI Object Storage Hot</h3><div class="item-value">$0.06/GB/mo</div></div>
<div class="storage-row"><h3>Distributed File Storage</h3><div class="item-value">$0.070/GB/mo</div></div>
</section>
<footer class="footer"><p>&copy; 2026 CoreWeave, Inc.</p></footer>
</body>
</html>
"""


if __name__ == "__main__":
    (HERE / "pricing.html").write_text(html(), encoding="utf-8")
