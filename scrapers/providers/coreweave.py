"""CoreWeave: GPU instance prices from the public pricing page (https://www.coreweave.com/pricing).

The page is server-rendered Webflow: one list item per GPU node type with labelled meta values
(GPU count, VRAM, vCPUs, RAM, local storage) and labelled "On-Demand Price" / "Spot Price"
spans, under "REGION: NORTH AMERICA" / "REGION: EUROPE" markers. Prices are per instance-hour;
a few rows quote per GPU-hour instead. The page names no zone, so each node type's price is
repeated for the zones CoreWeave lists it in (AVAILABILITY, from the fixtures). No key needed.
See docs/providers/coreweave.md.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from decimal import Decimal
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from bs4 import BeautifulSoup, Tag

from scrapers.base import HttpClient, Page, ParseError, PriceRecord, Scraper, register

PRICING_PATH = "/pricing"

# Page model name (folded: lower case, without "NVIDIA"/"HGX") -> (CKS instance ID, GPU count).
# The count guards the mapping: a row that changes shape is not filed under the old ID.
INSTANCE_IDS: dict[str, tuple[str, int]] = {
    "b200": ("b200-8x", 8),
    "h200": ("gd-8xh200ib-i128", 8),
    "h100": ("gd-8xh100ib-i128", 8),
    "l40s": ("gd-8xl40s-i128", 8),
    "l40": ("gd-8xl40-i128", 8),
    "gh200": ("gd-1xgh200", 1),
    "a100": ("gd-8xa100-i128", 8),
    "gb200 nvl72": ("gb200-4x", 4),
    "rtx pro 6000 blackwell server edition": ("rtxp6000-8x", 8),
    "rtx pro 6000 blackwell server edition (high memory)": ("rtxp6000-8x", 8),
}

# Zones (CoreWeave region codes) each node type is listed in, split by the page's region
# sections; the same zones as fixtures/providers/coreweave.yaml (vllm-project/production-stack's
# CoreWeave Terraform region map of 2026-03-05 and CoreWeave's region pages).
AVAILABILITY: dict[str, dict[str, tuple[str, ...]]] = {
    "north_america": {
        "b200-8x": ("US-EAST-13", "US-CENTRAL-06", "US-CENTRAL-07", "US-WEST-01", "US-WEST-09"),
        "gd-8xh200ib-i128": ("US-EAST-01", "US-EAST-02", "US-EAST-04", "US-EAST-08", "US-WEST-04"),
        "gd-8xh100ib-i128": (
            "US-EAST-01",
            "US-EAST-04",
            "US-EAST-06",
            "RNO2",
            "US-WEST-01",
            "US-WEST-04",
            "US-WEST-09",
        ),
        "gd-8xl40s-i128": ("US-EAST-04",),
        "gd-8xl40-i128": ("US-EAST-02", "US-EAST-04", "RNO2"),
        "gd-1xgh200": ("US-EAST-04", "RNO2"),
        "gd-8xa100-i128": ("US-EAST-04", "RNO2"),
        "gb200-4x": ("US-EAST-01", "US-EAST-02", "US-EAST-08", "US-EAST-13", "US-WEST-01"),
        "rtxp6000-8x": (
            "US-EAST-01",
            "US-EAST-04",
            "US-EAST-06",
            "US-EAST-13",
            "US-EAST-14",
            "US-CENTRAL-06",
            "US-WEST-04",
            "US-WEST-09",
        ),
    },
    "europe": {
        "gd-8xh200ib-i128": ("EU-SOUTH-03",),
        "gb200-4x": ("EU-SOUTH-04",),
        "rtxp6000-8x": ("EU-SOUTH-04",),
    },
}
# A node type with no known zone in a section is filed under that section's largest General
# Access zone and flagged ``region_assumed`` for a curator to place.
FALLBACK_ZONES: dict[str, tuple[str, ...]] = {
    "north_america": ("US-EAST-04",),
    "europe": ("EU-SOUTH-03",),
}
REGION_SECTIONS = {"north america": "north_america", "europe": "europe"}

_REGION_MARKER = re.compile(r"REGION:\s*([A-Za-z ]+)", re.IGNORECASE)
_MONEY = re.compile(r"\$\s*([0-9][0-9,]*(?:\.[0-9]+)?)")
_NUMBER = re.compile(r"[0-9][0-9,]*(?:\.[0-9]+)?")


def _clean(text: str) -> str:
    return " ".join(text.split())


@register
class CoreWeaveScraper(Scraper):
    """CoreWeave on-demand and spot node prices from coreweave.com/pricing."""

    key = "coreweave"
    provider_slug = "coreweave"
    base_url = "https://www.coreweave.com"
    description = "CoreWeave public pricing page (GPU instances, North America and Europe)"

    def pricing_models(self) -> frozenset[str]:
        """The page lists on-demand and spot; reserved capacity is quoted by sales."""
        return frozenset({"on_demand", "spot"})

    def fetch(self, client: HttpClient) -> Iterator[Page]:
        """The single pricing page (every section is in the server-rendered HTML)."""
        yield client.get(self.base_url + PRICING_PATH, headers={"Accept": "text/html"})

    def parse(self, page: Page) -> list[PriceRecord]:
        """One record per zone and pricing model for each priced GPU row."""
        if "</html>" not in page.body[-2000:].lower():
            # A page cut short between rows would still parse, minus the rows that never came.
            raise ParseError("coreweave page: truncated (no closing </html>)")
        soup = BeautifulSoup(page.body, "html.parser")
        rows = []
        for row in soup.find_all(role="listitem"):
            kind = _row_kind(row)
            if kind == "gpu":
                rows.append(row)
            elif kind == "unknown" and (model := row.find(class_="table-model-name")) is not None:
                name = _clean(model.get_text(" "))
                self.note_skipped(name, f"row classes {row.get('class')} name no GPU pricing")
        if not rows:
            raise ParseError("coreweave page: no GPU pricing rows (div.kubernetes-gpu-pricing)")

        parts = urlsplit(page.url)
        source_url = urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))
        records: list[PriceRecord] = []
        for row in rows:
            records.extend(self._row_records(row, source_url))
        return records

    def _row_records(self, row: Tag, source_url: str) -> list[PriceRecord]:
        for footnote in row.find_all("sup"):
            footnote.decompose()  # "4<sup>1</sup>", "$49.24<sup>2</sup>": markers, not digits
        name_tag = row.find(class_="table-model-name")
        if name_tag is None or not _clean(name_tag.get_text(" ")):
            raise ParseError("coreweave page: GPU row without a model name (h3.table-model-name)")
        model = _clean(name_tag.get_text(" "))
        meta = _meta_values(row)
        gpu_count = _number(meta.get("gpu count"))
        if gpu_count is None or gpu_count <= 0:
            raise ParseError(f"coreweave page: {model}: no GPU Count")
        on_demand_span = row.find(class_="instance-price")
        spot_span = row.find(class_="spot-price")
        if on_demand_span is None and spot_span is None:
            raise ParseError(
                f"coreweave page: {model}: no labelled price (instance-price/spot-price)"
            )

        section = _section(row)
        instance, known = _instance_id(model, int(gpu_count))
        if not known:
            self.note_unmatched(
                "instance", f"{model} x{gpu_count}", "no CKS instance ID for this row; name kept"
            )
        zones = AVAILABILITY[section].get(instance) if known else None
        assumed = not zones
        zones = zones or FALLBACK_ZONES[section]
        vram = _number(meta.get("vram"))
        base_extra: dict[str, Any] = {
            "source_url": source_url,
            "model": model,
            "region_section": section,
            "vram_gb": float(vram) if vram is not None else None,
            "local_storage_tb": _float(meta.get("local storage")),
        }
        if not known:
            base_extra["instance_id_unknown"] = True
        if assumed:
            base_extra["region_assumed"] = True

        records: list[PriceRecord] = []
        for pricing_model, span in (("on_demand", on_demand_span), ("spot", spot_span)):
            price = _price(span, gpu_count)
            if price is None:
                continue  # no span, or "Contact sales"
            amount, per_gpu = price
            extra = dict(base_extra)
            if per_gpu is not None:
                extra["usd_per_gpu_hour"] = float(per_gpu)
            for zone in zones:
                records.append(
                    PriceRecord(
                        instance_type=instance,
                        gpu_name=model,
                        gpu_count=gpu_count,
                        region=zone,
                        pricing_model=pricing_model,
                        amount=amount,
                        currency="USD",
                        unit="hour",
                        vcpus=_int(meta.get("vcpus")),
                        # CoreWeave quotes RAM in GB; the catalog stores it as published.
                        ram_gib=_float(meta.get("system ram")),
                        extra=extra,
                    )
                )
        return records


def _row_kind(row: Tag) -> str:
    """ "gpu", "cpu" or "unknown" for a list row of the pricing page.

    Real captures of the page show GPU rows classed ``kubernetes-gpu-pricing``, ``gpu-pricing``
    and ``gpu-pricing-and-kubernetes-gpu-pricing`` over the years (public scrapers select each),
    so a row counts as a GPU row by any class ending in ``gpu-pricing``, or, when the classes
    changed again, by its labelled GPU Count.
    """
    classes = [str(c) for c in (row.get("class") or [])]
    if any(c.endswith("cpu-pricing") for c in classes):
        return "cpu"
    if any(c.endswith("gpu-pricing") for c in classes):
        return "gpu"
    if row.find(class_="table-model-name") is not None and "gpu count" in _meta_values(row):
        return "gpu"
    return "unknown"


def _meta_values(row: Tag) -> dict[str, str]:
    """Labelled figures: <div class="table-meta-value">8</div><div>GPU Count</div>."""
    values: dict[str, str] = {}
    for value in row.find_all(class_="table-meta-value"):
        label = value.find_next_sibling()
        if label is None:
            continue
        # "VRAM (GB)" -> "vram", "System RAM (GB)" -> "system ram": units stay out of the key.
        key = re.sub(r"\(.*?\)", "", _clean(label.get_text(" "))).strip().lower()
        values[key] = _clean(value.get_text(" "))
    return values


def _section(row: Tag) -> str:
    """The region section a row sits under; rows before any marker are North America."""
    marker = row.find_previous(string=_REGION_MARKER)
    if marker is None:
        return "north_america"
    found = _REGION_MARKER.search(marker)
    if found is None:  # find_previous matched this very pattern
        raise ParseError(f"coreweave page: region marker {marker!r} does not match")
    label = _clean(found.group(1)).lower()
    section = REGION_SECTIONS.get(label)
    if section is None:
        raise ParseError(f"coreweave page: unknown region section {label!r}")
    return section


def _instance_id(model: str, gpu_count: int) -> tuple[str, bool]:
    """CKS instance ID for a page row, or the page's own name when the row is not known."""
    folded = _clean(re.sub(r"\b(nvidia|hgx)\b", " ", model.lower()))
    known = INSTANCE_IDS.get(folded)
    if known and known[1] == gpu_count:
        return known[0], True
    return model, False


def _price(span: Tag | None, gpu_count: Decimal) -> tuple[Decimal, Decimal | None] | None:
    """Instance price and per-GPU price of a price span; None when there is no figure."""
    if span is None:
        return None
    value = span.find(class_="item-value")
    text = _clean((value or span).get_text(" "))
    match = _MONEY.search(text)
    if not match:
        return None
    price = Decimal(match.group(1).replace(",", ""))
    # "$1.25 / GPU / Hour": the unit follows the value, inside the span.
    if re.search(r"/\s*GPU\b", _clean(span.get_text(" ")), re.IGNORECASE):
        return (price * gpu_count).quantize(Decimal("0.01")), price
    return price, None


def _number(text: str | None) -> Decimal | None:
    if not text:
        return None
    match = _NUMBER.search(text)
    return Decimal(match.group(0).replace(",", "")) if match else None


def _int(text: str | None) -> int | None:
    number = _number(text)
    return int(number) if number is not None else None


def _float(text: str | None) -> float | None:
    number = _number(text)
    return float(number) if number is not None else None
