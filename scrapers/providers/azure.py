"""Azure GPU VM prices from the public Retail Prices REST API (JSON, paginated, no authentication).

Source: ``https://prices.azure.com/api/retail/prices?api-version=2023-01-01-preview&$filter=...``,
one query per region, following ``NextPageLink``. Every item is one meter: pay-as-you-go
(``type`` "Consumption", with Spot and Low Priority as separate meters), reservations
(``type`` "Reservation", where ``unitPrice`` is the TOTAL for the term) and dev/test rates.
docs/providers/azure.md has the details.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from decimal import Decimal, InvalidOperation
from typing import Any
from urllib.parse import urlsplit

from scrapers.base import FetchError, HttpClient, Page, ParseError, PriceRecord, Scraper, register

API_PATH = "/api/retail/prices"
API_VERSION = "2023-01-01-preview"
# A region's Virtual Machines meters span a few thousand items (1,000 a page); far more pages
# than this means the API is looping.
MAX_PAGES = 200

# Reservation unitPrice is the total for the term; divided by these hours (365-day years).
TERM_HOURS = {"1 Year": Decimal(8760), "3 Years": Decimal(26280)}
TERM_MODEL = {"1 Year": "reserved_1y", "3 Years": "reserved_3y"}
HOURLY_QUANTUM = Decimal("0.0000000001")

# armSkuName -> (GPU as we write it, GPUs, vCPUs, RAM GiB). The API carries no hardware figures,
# so they come from the Azure VM size pages (NCasT4_v3, NCv3, NC A100 v4, NCads H100 v5, NDv2,
# ND A100 v4, NDm A100 v4, ND H100 v5, ND H200 v5, ND MI300X v5, NVadsA10 v5; NCads A10 v4, NCC H100
# v5, ND GB200 v6 and NC RTX PRO 6000 v6 from the Resource SKUs figures microsoft/aspire
# AksNodeVmSizes.Generated.cs @03085453a lists, GPU counts of GB200 v6 and ND MI300X v5 from their
# size pages: the same figures fixtures/providers/azure.yaml carries). GPU names are
# spelled to match aliases in fixtures/gpus.yaml. NV-series A10 v5 sizes below 36 vCPUs hold a
# fraction of one GPU. GPU sizes not listed (retired NC/NV v1/v2, ...) are skipped, not guessed.
RTX_PRO_6000 = "NVIDIA RTX PRO 6000 Blackwell Server Edition"
GPU_SIZES: dict[str, tuple[str, Decimal, int, float]] = {
    "Standard_NC4as_T4_v3": ("NVIDIA Tesla T4", Decimal(1), 4, 28),
    "Standard_NC8as_T4_v3": ("NVIDIA Tesla T4", Decimal(1), 8, 56),
    "Standard_NC16as_T4_v3": ("NVIDIA Tesla T4", Decimal(1), 16, 110),
    "Standard_NC64as_T4_v3": ("NVIDIA Tesla T4", Decimal(4), 64, 440),
    "Standard_NC6s_v3": ("Tesla V100-PCIE-16GB", Decimal(1), 6, 112),
    "Standard_NC12s_v3": ("Tesla V100-PCIE-16GB", Decimal(2), 12, 224),
    "Standard_NC24s_v3": ("Tesla V100-PCIE-16GB", Decimal(4), 24, 448),
    "Standard_NC24rs_v3": ("Tesla V100-PCIE-16GB", Decimal(4), 24, 448),
    "Standard_NC24ads_A100_v4": ("NVIDIA A100 80GB PCIe", Decimal(1), 24, 220),
    "Standard_NC48ads_A100_v4": ("NVIDIA A100 80GB PCIe", Decimal(2), 48, 440),
    "Standard_NC96ads_A100_v4": ("NVIDIA A100 80GB PCIe", Decimal(4), 96, 880),
    "Standard_NC40ads_H100_v5": ("NVIDIA H100 NVL", Decimal(1), 40, 320),
    "Standard_NC80adis_H100_v5": ("NVIDIA H100 NVL", Decimal(2), 80, 640),
    "Standard_ND40rs_v2": ("Tesla V100-SXM2-32GB", Decimal(8), 40, 672),
    "Standard_ND96asr_v4": ("NVIDIA A100-SXM4-40GB", Decimal(8), 96, 900),
    "Standard_ND96amsr_A100_v4": ("NVIDIA A100-SXM4-80GB", Decimal(8), 96, 1900),
    "Standard_ND96isr_H100_v5": ("NVIDIA H100 80GB HBM3", Decimal(8), 96, 1900),
    "Standard_ND96isr_H200_v5": ("NVIDIA H200", Decimal(8), 96, 1850),
    "Standard_ND96isr_MI300X_v5": ("AMD Instinct MI300X", Decimal(8), 96, 1850),
    "Standard_ND96is_MI300X_v5": ("AMD Instinct MI300X", Decimal(8), 96, 1850),  # no InfiniBand
    "Standard_ND128isr_NDR_GB200_v6": ("NVIDIA GB200", Decimal(4), 128, 864),
    "Standard_NCC40ads_H100_v5": ("NVIDIA H100 NVL", Decimal(1), 40, 320),  # confidential
    "Standard_NC16ads_A10_v4": ("NVIDIA A10", Decimal(1), 16, 200),
    "Standard_NC32ads_A10_v4": ("NVIDIA A10", Decimal(2), 32, 400),
    # NC RTXPRO6000BSE v6: the 144- and 288-vCPU sizes (one and two whole GPUs); the smaller ones hold
    # an unpublished share of one (SKIPPED_N_SERIES), and the 16 other sizes of the price list are not
    # on the Resource SKUs lists read here (Karpenter's known SKUs, Aspire's size list): unmatched.
    "Standard_NC144lds_xl_RTXPRO6000BSE_v6": (RTX_PRO_6000, Decimal(1), 144, 264),
    "Standard_NC144ds_xl_RTXPRO6000BSE_v6": (RTX_PRO_6000, Decimal(1), 144, 516),
    "Standard_NC288lds_xl_RTXPRO6000BSE_v6": (RTX_PRO_6000, Decimal(2), 288, 516),
    "Standard_NC288ds_xl_RTXPRO6000BSE_v6": (RTX_PRO_6000, Decimal(2), 288, 1032),
    "Standard_NV6ads_A10_v5": ("NVIDIA A10", Decimal("0.1667"), 6, 55),
    "Standard_NV12ads_A10_v5": ("NVIDIA A10", Decimal("0.3333"), 12, 110),
    "Standard_NV18ads_A10_v5": ("NVIDIA A10", Decimal("0.5"), 18, 220),
    "Standard_NV36ads_A10_v5": ("NVIDIA A10", Decimal(1), 36, 440),
    "Standard_NV36adms_A10_v5": ("NVIDIA A10", Decimal(1), 36, 880),
    "Standard_NV72ads_A10_v5": ("NVIDIA A10", Decimal(2), 72, 880),
}

# N-series sizes (armSkuName "Standard_N...") hold GPUs or FPGAs. Those the parser knows and leaves
# out on purpose, with the reason ``parse_page --explain`` shows; any other N-series size missing
# from GPU_SIZES is a new GPU size and is reported as unmatched (drift), never dropped silently.
SKIPPED_N_SERIES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^Standard_NC\d+r?(_Promo)?$"), "NC-series (Tesla K80), retired"),
    (re.compile(r"^Standard_NC\d+r?s_v2$"), "NCv2-series (Tesla P100), retired"),
    (re.compile(r"^Standard_ND\d+r?s$"), "ND-series (Tesla P40), retired"),
    (re.compile(r"^Standard_NV\d+(_Promo)?$"), "NV-series (Tesla M60), retired"),
    (re.compile(r"^Standard_NV\d+s_v3$"), "NVv3-series (Tesla M60), graphics"),
    (re.compile(r"^Standard_NV\d+as_v4$"), "NVv4-series: a slice of an AMD MI25, graphics"),
    (re.compile(r"^Standard_NG\d+\w*_V620_v1$"), "NGads V620-series (Radeon PRO V620), gaming"),
    (re.compile(r"^Standard_NP\d+s$"), "NP-series: Xilinx FPGA, not a GPU"),
    (
        re.compile(r"^Standard_NV\d+adm?s_V710_v5$"),
        "NVads V710 v5 (Radeon PRO V710 slices), graphics",
    ),
    # The SKU list gives these 1 GPU, but they are priced as a share of one; the share is unpublished
    # (fixtures/tools/azure_prices.py UNPUBLISHED_GPU_SHARE).
    (
        re.compile(
            r"^Standard_NC(24lds|36l?ds|72l?ds)_xl_RTXPRO6000BSE_v6$|^Standard_NC8ads_A10_v4$"
        ),
        "a share of one GPU whose size is unpublished",
    ),
)
_N_SERIES = re.compile(r"^Standard_N[A-Z]*\d")

# Fields every item must carry; a renamed one must fail loudly rather than drop every item.
REQUIRED_FIELDS = (
    "currencyCode",
    "unitPrice",
    "armRegionName",
    "armSkuName",
    "productName",
    "skuName",
    "meterName",
    "serviceName",
    "unitOfMeasure",
    "type",
)
_HOURS = re.compile(r"^\s*(\d+)\s*Hours?\s*$")


def _decimal(value: Any, what: str) -> Decimal:
    """A JSON number as an exact Decimal (via its text, not a float round trip)."""
    if isinstance(value, bool) or not isinstance(value, int | float | str | Decimal):
        raise ParseError(f"{what} is not a number: {value!r}")
    try:
        amount = Decimal(str(value))
    except InvalidOperation:
        raise ParseError(f"{what} is not a number: {value!r}") from None
    if not amount.is_finite():
        raise ParseError(f"{what} is not a finite number: {value!r}")
    return amount


def _filter(region: str) -> str:
    """OData filter for one region's VM meters (values are case-sensitive since 2023-01-01)."""
    return f"serviceName eq 'Virtual Machines' and armRegionName eq '{region}'"


@register
class AzureScraper(Scraper):
    """Azure GPU VM sizes: pay-as-you-go, Spot and 1/3-year reservations (Linux), per region."""

    key = "azure"
    provider_slug = "azure"
    base_url = "https://prices.azure.com"
    description = "Azure Retail Prices REST API (Virtual Machines, per region, paginated)"
    default_regions = ("eastus", "eastus2", "southcentralus", "westus", "westus2", "westus3")

    def fetch(self, client: HttpClient) -> Iterator[Page]:
        """Every page of each region's Virtual Machines meters, following NextPageLink."""
        for region in self.regions:
            page = client.get(
                self.base_url + API_PATH,
                params={"api-version": API_VERSION, "$filter": _filter(region)},
                meta={"region": region, "page": "1"},
            )
            seen: set[str] = set()
            for number in range(2, MAX_PAGES + 2):
                yield page
                link = self._next_link(page)
                if not link:
                    break
                if link in seen:
                    raise FetchError(f"Azure pagination loops at {link}")
                seen.add(link)
                page = client.get(link, meta={"region": region, "page": str(number)})
            else:
                raise FetchError(f"Azure pagination for {region} exceeded {MAX_PAGES} pages")

    def _next_link(self, page: Page) -> str:
        """NextPageLink with its scheme and host replaced by base_url (so staging/loopback work)."""
        try:
            link = self._load(page).get("NextPageLink")
        except ParseError:
            return ""  # parse() reports the broken page; there is no link to follow

        if not link:
            return ""
        if not isinstance(link, str):
            raise ParseError(f"NextPageLink is not a URL: {link!r}")
        parts = urlsplit(link)
        return self.base_url + parts.path + (f"?{parts.query}" if parts.query else "")

    @staticmethod
    def _load(page: Page) -> dict[str, Any]:
        body = page.body.lstrip()
        if body.startswith("<"):
            raise ParseError("expected JSON, got HTML/XML")
        try:
            data = json.loads(body, parse_float=Decimal)  # exact prices, no float rounding
        except json.JSONDecodeError as exc:
            raise ParseError(f"invalid JSON: {exc.msg} at line {exc.lineno}") from None
        if not isinstance(data, dict) or not isinstance(data.get("Items"), list):
            raise ParseError("response has no 'Items' list")
        return data

    def parse(self, page: Page) -> list[PriceRecord]:
        """GPU VM records of one page; Windows, Low Priority, dev/test and other meters skipped."""
        records: list[PriceRecord] = []
        for index, item in enumerate(self._load(page)["Items"]):
            if not isinstance(item, dict):
                raise ParseError(f"item {index} is not an object")
            missing = [name for name in REQUIRED_FIELDS if name not in item]
            if missing:
                raise ParseError(f"item {index} lacks {', '.join(missing)}")
            record = self._record(item)
            if record is not None:
                records.append(record)
        return records

    def _record(self, item: dict[str, Any]) -> PriceRecord | None:
        if item["serviceName"] != "Virtual Machines":
            return None
        size = GPU_SIZES.get(item["armSkuName"])
        if size is None:
            self._note_unpriced_size(item["armSkuName"])
            return None
        # The preview API also returns non-primary meters: duplicates billed under another region.
        if item.get("isPrimaryMeterRegion") is False:
            return None
        names = f"{item['skuName']} {item['meterName']}"
        if "Windows" in item["productName"] or "Low Priority" in names:
            return None
        price = _decimal(item["unitPrice"], f"unitPrice of {item['armSkuName']}")
        kind = item["type"]
        if kind == "Consumption":
            hours = _HOURS.match(item["unitOfMeasure"])
            if not hours:
                raise ParseError(
                    f"unexpected unitOfMeasure {item['unitOfMeasure']!r} for {item['armSkuName']}"
                )
            amount = price / Decimal(hours.group(1))
            model = "spot" if "Spot" in names else "on_demand"
        elif kind == "Reservation":
            term = item.get("reservationTerm")
            if term not in TERM_HOURS:
                return None  # e.g. "5 Years", offered for a few sizes only
            amount = (price / TERM_HOURS[term]).quantize(HOURLY_QUANTUM)
            model = TERM_MODEL[term]
        else:
            return None  # DevTestConsumption and anything newer
        gpu_name, gpu_count, vcpus, ram_gib = size
        extra: dict[str, Any] = {
            "meter_id": item.get("meterId", ""),
            "sku_id": item.get("skuId", ""),
            "product_name": item["productName"],
            "effective_start": item.get("effectiveStartDate", ""),
        }
        if kind == "Reservation":
            extra["term_total"] = str(price)
        if model == "on_demand":
            plans = self._savings_plans(item)
            if plans:
                extra["savings_plan_hourly"] = plans
        return PriceRecord(
            instance_type=item["armSkuName"],
            gpu_name=gpu_name,
            gpu_count=gpu_count,
            region=item["armRegionName"],
            pricing_model=model,
            amount=amount,
            currency=item["currencyCode"],
            vcpus=vcpus,
            ram_gib=float(ram_gib),
            extra=extra,
        )

    def _note_unpriced_size(self, sku: str) -> None:
        """An N-series size without hardware figures: skipped when known, else unmatched."""
        if not _N_SERIES.match(sku):
            return  # not a GPU size (D, E, F, M, ...)
        for pattern, reason in SKIPPED_N_SERIES:
            if pattern.match(sku):
                self.note_skipped(sku, reason)
                return
        self.note_unmatched("instance", sku, "N-series (GPU) size not in GPU_SIZES")

    @staticmethod
    def _savings_plans(item: dict[str, Any]) -> dict[str, str]:
        """Savings-plan hourly rates (preview API only), kept as extra: {"1 Year": "0.39", ...}."""
        plans = item.get("savingsPlan")
        if not isinstance(plans, list):
            return {}
        result = {}
        for plan in plans:
            if isinstance(plan, dict) and "term" in plan and "unitPrice" in plan:
                result[str(plan["term"])] = str(
                    _decimal(plan["unitPrice"], f"savings plan of {item['armSkuName']}")
                )
        return result
