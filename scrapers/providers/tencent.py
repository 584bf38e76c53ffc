"""Tencent Cloud (腾讯云) GPU prices: the public price overview doc, or the CVM API with credentials.

Public source (default): the Cloud GPU Service "价格总览" (price overview) doc page, an HTML page of
tables, one per instance family, with the monthly (包年包月) and pay-as-you-go (按量计费) list price
of each GPU instance type. The China site gives one mainland list price in CNY (no region), the
International site gives Guangzhou Zone 3 pay-as-you-go prices in USD.

With ``tencent_secret_id`` / ``tencent_secret_key``: CVM ``DescribeZoneInstanceConfigInfos`` per
region (TC3-HMAC-SHA256 signed POST), which returns every instance type of every zone with its
price, charge type and sell status. See docs/providers/tencent.md.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import re
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from typing import Any, ClassVar

from bs4 import BeautifulSoup, Tag

from ..base import HttpClient, Page, ParseError, PriceRecord, Scraper, register

logger = logging.getLogger(__name__)

DOC_PATH = "/document/product/560/8025"
INTL_HOST = "www.tencentcloud.com"
INTL_DOC_PATH = "/zh/document/product/560/8025"
API_VERSION = "2017-03-12"
API_ACTION = "DescribeZoneInstanceConfigInfos"
CONTENT_TYPE_JSON = "application/json; charset=utf-8"
API_REQUIRED = ("InstanceType", "Zone", "InstanceChargeType", "Status", "Price", "Cpu", "Memory")

# The doc gives one mainland list price with no region; like the fixtures
# (fixtures/providers/tencent.yaml), file it under Guangzhou, the region the International doc
# names for its own (USD) figures, flagged ``region_assumed`` so nothing reads it as measured there.
MAINLAND_LIST_REGION = "ap-guangzhou"
# The International doc says its prices are those of Guangzhou Zone 3.
INTL_DOC_REGION = "ap-guangzhou"

# The CVM API names no GPU model; the family decides it (NVIDIA 系列实例 doc, spec tables).
FAMILY_GPU = {
    "GT4": "NVIDIA A100-NVLINK-40G",
    "GN10X": "Tesla V100-NVLINK-32G",
    "GN10Xp": "Tesla V100-NVLINK-32G",
    "GN8": "Tesla P40",
    "GN7": "NVIDIA T4",
    "GN7vw": "NVIDIA T4",
    "GI3X": "NVIDIA T4",
    "GN6": "Tesla P4",
    "GN6S": "Tesla P4",
    "PNV4": "NVIDIA A10",
}

_NAME_RE = re.compile(r"^[A-Z][A-Za-z0-9]*\.[A-Z0-9]+$")
_NUMBER_RE = re.compile(r"\d+(?:,\d{3})*(?:\.\d+)?")
_FRACTION_RE = re.compile(r"(\d+)\s*/\s*(\d+)")
_PARENS_RE = re.compile(r"[（(]\s*(.+?)\s*[)）]")  # noqa: RUF001 - the docs mix both bracket widths


def _sha256_hex(data: bytes | str) -> str:
    raw = data.encode() if isinstance(data, str) else data
    return hashlib.sha256(raw).hexdigest()


def _hmac_sha256(key: bytes, message: str) -> bytes:
    return hmac.new(key, message.encode(), "sha256").digest()


def tc3_headers(
    *,
    secret_id: str,
    secret_key: str,
    host: str,
    action: str,
    version: str,
    region: str,
    timestamp: int,
    payload: bytes,
    service: str = "cvm",
) -> dict[str, str]:
    """Headers of a TC3-HMAC-SHA256 signed POST (Tencent Cloud API 3.0, signature v3).

    Signs content-type and host, the minimum the scheme requires, as in Tencent's worked example.
    """
    date = datetime.fromtimestamp(timestamp, UTC).strftime("%Y-%m-%d")
    canonical_request = "\n".join(
        [
            "POST",
            "/",
            "",  # POST requests have no canonical query string
            f"content-type:{CONTENT_TYPE_JSON}\nhost:{host}\n",
            "content-type;host",
            _sha256_hex(payload),
        ]
    )
    scope = f"{date}/{service}/tc3_request"
    string_to_sign = "\n".join(
        ["TC3-HMAC-SHA256", str(timestamp), scope, _sha256_hex(canonical_request)]
    )
    signing_key = _hmac_sha256(
        _hmac_sha256(_hmac_sha256(f"TC3{secret_key}".encode(), date), service), "tc3_request"
    )
    signature = hmac.new(signing_key, string_to_sign.encode(), "sha256").hexdigest()
    return {
        "Authorization": (
            f"TC3-HMAC-SHA256 Credential={secret_id}/{scope}, "
            f"SignedHeaders=content-type;host, Signature={signature}"
        ),
        "Content-Type": CONTENT_TYPE_JSON,
        "X-TC-Action": action,
        "X-TC-Version": version,
        "X-TC-Timestamp": str(timestamp),
        "X-TC-Region": region,
    }


def _text(cell: Tag) -> str:
    return " ".join(cell.get_text(" ", strip=True).split())


def _decimal(text: str) -> Decimal:
    return Decimal(text.replace(",", ""))


@register
class TencentScraper(Scraper):
    """Tencent Cloud GPU instance prices (CNY mainland list price, USD International)."""

    key = "tencent"
    provider_slug = "tencent"
    base_url = "https://cloud.tencent.com"
    description = (
        "Tencent Cloud GPU price overview doc; CVM DescribeZoneInstanceConfigInfos with keys"
    )
    default_regions: ClassVar[tuple[str, ...]] = (
        "ap-guangzhou",
        "ap-shanghai",
        "ap-nanjing",
        "ap-beijing",
        "ap-chengdu",
        "ap-chongqing",
        "ap-hongkong",
        "ap-singapore",
        "na-siliconvalley",
        "eu-frankfurt",
    )

    # --- fetch ---------------------------------------------------------------------------
    def fetch(self, client: HttpClient) -> Iterator[Page]:
        """The China-site doc page; then the API per region with keys, else the International doc."""
        yield client.get(self.base_url + DOC_PATH, meta={"kind": "doc", "site": "cn"})
        if not self.has_credentials("tencent_secret_id", "tencent_secret_key"):
            yield client.get(
                self.host_url(INTL_HOST, INTL_DOC_PATH), meta={"kind": "doc", "site": "intl"}
            )
            return
        # The API answers in the account's billing currency: CNY for a China-site account.
        currency = self.credentials.get("tencent_currency") or "CNY"
        for region in self.regions:
            host = f"cvm.{region}.tencentcloudapi.com"
            payload = b"{}"  # no filters: every zone and charge type of the region in one answer
            headers = tc3_headers(
                secret_id=self.credentials["tencent_secret_id"],
                secret_key=self.credentials["tencent_secret_key"],
                host=host,
                action=API_ACTION,
                version=API_VERSION,
                region=region,
                timestamp=int(time.time()),
                payload=payload,
            )
            yield client.request(
                "POST",
                self.host_url(host, "/"),
                content=payload,
                headers=headers,
                meta={"kind": "api", "region": region, "currency": currency},
            )

    # --- parse ---------------------------------------------------------------------------
    def parse(self, page: Page) -> list[PriceRecord]:
        """Records of a doc page (HTML tables) or of a DescribeZoneInstanceConfigInfos answer."""
        kind = page.meta.get("kind") or ("api" if page.body.lstrip().startswith("{") else "doc")
        if kind == "api":
            return self._parse_api(page)
        return self._parse_doc(page)

    # Doc page -----------------------------------------------------------------------------
    def _parse_doc(self, page: Page) -> list[PriceRecord]:
        body = page.body.lstrip()
        if not body or body.startswith(("{", "[")):
            raise ParseError("Tencent price overview: expected an HTML page, got JSON or nothing")
        soup = BeautifulSoup(page.body, "html.parser")
        tables = soup.find_all("table")
        if not tables:
            raise ParseError("Tencent price overview: no tables on the page")
        site = page.meta.get("site") or ("intl" if "USD" in page.body else "cn")
        currency = "USD" if site == "intl" else "CNY"
        region = page.meta.get("region") or (
            INTL_DOC_REGION if site == "intl" else MAINLAND_LIST_REGION
        )
        records: list[PriceRecord] = []
        price_tables = 0
        for table in tables:
            columns = self._columns(table)
            if columns is None:
                continue  # not a price table (the page has other tables)
            price_tables += 1
            records.extend(self._table_records(table, columns, currency, region))
        if price_tables == 0:
            raise ParseError("Tencent price overview: no table has instance and price columns")
        if site == "cn" and not page.meta.get("region"):
            for record in records:
                record.extra["region_assumed"] = True
                record.extra["price_scope"] = "mainland China list price (the doc names no region)"
        return records

    @staticmethod
    def _header_cells(table: Tag) -> list[Tag]:
        for row in table.find_all("tr"):
            cells = row.find_all(["th", "td"], recursive=False)
            if cells:
                return cells
        return []

    def _columns(self, table: Tag) -> dict[str, Any] | None:
        """Column index per meaning, from the header row; None when not a price table."""
        columns: dict[str, Any] = {}
        for index, cell in enumerate(self._header_cells(table)):
            text = _text(cell)
            low = text.lower()
            if any(word in text for word in ("实例规格", "型号")) or low.startswith(
                ("instance", "model", "specification")
            ):
                columns.setdefault("name", index)
            elif "显存" in text or (low.startswith("gpu") and ("内存" in text or "memory" in low)):
                # "GPU 显存", "GPU 内存 (GDDR5)", "GPU Video Memory": memory of the GPU, not RAM
                columns["gpu_memory"] = index
            elif low.startswith("gpu"):
                columns["gpu"] = index
                match = _PARENS_RE.search(text)
                columns["gpu_name"] = match.group(1) if match else ""
            elif "vcpu" in low:
                columns["vcpus"] = index
            elif "内存" in text or "memory" in low:
                columns["ram"] = index
            elif "包年包月" in text or "monthly" in low:
                columns["monthly"] = index
            elif "按量计费" in text or "pay-as-you-go" in low:
                columns["on_demand"] = index
        if "name" not in columns or not ({"monthly", "on_demand"} & columns.keys()):
            return None
        if "gpu" not in columns:
            raise ParseError("Tencent price overview: a price table has no GPU column")
        return columns

    def _table_records(
        self, table: Tag, columns: dict[str, Any], currency: str, region: str
    ) -> list[PriceRecord]:
        records = []
        width = max(v for k, v in columns.items() if isinstance(v, int) and k != "gpu_name") + 1
        for row in table.find_all("tr"):
            # Direct cells only: the doc has a stray unclosed <tr>, which nests one row in another.
            cells = row.find_all("td", recursive=False)
            if len(cells) < width:
                continue
            name = _text(cells[columns["name"]]).rstrip("*\\ ").strip()
            if not _NAME_RE.match(name):
                continue
            gpu_text = _text(cells[columns["gpu"]])
            gpu_name = columns["gpu_name"] or self._gpu_name_from_cell(gpu_text)
            gpu_count = self._gpu_count(gpu_text, name)
            memory_text = _text(cells[columns["gpu_memory"]]) if "gpu_memory" in columns else ""
            shared = "vgpu" in (gpu_text + memory_text).lower() or gpu_count < 1
            vcpus = self._int(_text(cells[columns["vcpus"]])) if "vcpus" in columns else None
            ram = self._float(_text(cells[columns["ram"]])) if "ram" in columns else None
            for model, unit in (("on_demand", "hour"), ("monthly", "month")):
                if model not in columns:
                    continue
                price = self._price(_text(cells[columns[model]]), currency, unit, name)
                if price is None:
                    continue
                amount, extra = price
                extra.update({"family": name.split(".")[0], "gpu_memory": memory_text})
                if shared:
                    extra["gpu_sharing"] = "vgpu"
                records.append(
                    PriceRecord(
                        instance_type=name,
                        gpu_name=gpu_name,
                        gpu_count=gpu_count,
                        region=region,
                        pricing_model=model,
                        amount=amount,
                        currency=currency,
                        unit=unit,
                        vcpus=vcpus,
                        ram_gib=ram,
                        extra=extra,
                    )
                )
        return records

    @staticmethod
    def _gpu_name_from_cell(text: str) -> str:
        # "1 x Tesla T4" -> "Tesla T4"; "1/4 T4 vGPU*" -> "T4"
        cleaned = re.sub(r"^[\d/\s]+(?:x|颗)?\s*", "", text).replace("vGPU", "").strip(" *")
        if not cleaned:
            raise ParseError(f"Tencent price overview: no GPU model for {text!r}")
        return cleaned

    @staticmethod
    def _gpu_count(text: str, name: str) -> Decimal:
        fraction = _FRACTION_RE.search(text)
        if fraction:
            value = Decimal(fraction.group(1)) / Decimal(fraction.group(2))
            return value.quantize(Decimal("0.0001")).normalize()
        number = _NUMBER_RE.search(text)
        if not number:
            raise ParseError(f"Tencent price overview: no GPU count for {name} in {text!r}")
        return _decimal(number.group())

    @staticmethod
    def _int(text: str) -> int | None:
        number = _NUMBER_RE.search(text)
        return int(_decimal(number.group())) if number else None

    @staticmethod
    def _float(text: str) -> float | None:
        number = _NUMBER_RE.search(text)
        return float(_decimal(number.group())) if number else None

    @staticmethod
    def _price(
        text: str, currency: str, unit: str, name: str
    ) -> tuple[Decimal, dict[str, Any]] | None:
        """Amount and notes of a price cell; None when the cell holds no price or is unusable."""
        numbers = _NUMBER_RE.findall(text)
        if not numbers:
            return None  # "-" or empty: not sold under this model
        extra: dict[str, Any] = {}
        amounts = [_decimal(n) for n in numbers]
        if len(amounts) >= 2:
            # "4671 - 5190": a discounted range; the upper figure is the standard list price.
            extra["price_range"] = [str(min(amounts)), str(max(amounts))]
        if "起" in text or "from" in text.lower():
            extra["price_is_from"] = True  # "starting at": the cheapest zone/OS
        stated = "USD" if ("USD" in text or "美元" in text) else ("CNY" if "元" in text else None)
        if stated and stated != currency:
            # The International doc writes one GN8 price as 元/小时 in a USD table: a doc error.
            logger.warning("tencent: %s price %r is not in %s; row skipped", name, text, currency)
            return None
        stated_unit = (
            "hour" if re.search(r"/\s*(hr|h|小时)", text) else "month" if "/月" in text else None
        )
        if stated_unit and stated_unit != unit:
            raise ParseError(f"Tencent price overview: {name} price {text!r} is not per {unit}")
        amount = max(amounts)
        if amount <= 0:
            return None
        return amount, extra

    # API answer ---------------------------------------------------------------------------
    def _parse_api(self, page: Page) -> list[PriceRecord]:
        try:
            data = json.loads(page.body)
        except json.JSONDecodeError as exc:
            raise ParseError(f"Tencent API: invalid JSON ({exc.msg} at {exc.pos})") from None
        response = data.get("Response") if isinstance(data, dict) else None
        if not isinstance(response, dict):
            raise ParseError("Tencent API: no Response object")
        if "Error" in response:
            error = response["Error"] or {}
            raise ParseError(f"Tencent API error {error.get('Code')}: {error.get('Message')}")
        items = response.get("InstanceTypeQuotaSet")
        if not isinstance(items, list):
            raise ParseError("Tencent API: Response has no InstanceTypeQuotaSet list")
        currency = page.meta.get("currency") or "CNY"
        best: dict[tuple[str, str], dict[str, Any]] = {}
        for item in items:
            if not isinstance(item, dict):
                raise ParseError("Tencent API: instance type entry is not an object")
            missing = [field for field in API_REQUIRED if field not in item]
            if missing:
                raise ParseError(f"Tencent API: instance type entry lacks {', '.join(missing)}")
            name, zone = item["InstanceType"], item["Zone"]
            charge, status, price = item["InstanceChargeType"], item["Status"], item["Price"]
            gpu_count = self._api_gpu_count(item)
            if gpu_count <= 0:
                continue  # CPU-only families share the answer
            if status != "SELL":
                self.note_skipped(f"{name} {zone} {charge}", f"status {status}")
                continue  # sold out in this zone; its price is not on offer
            amount = self._api_amount(name, charge, price)
            if amount is None:
                continue
            model, unit, value = amount
            region = page.meta.get("region") or zone.rsplit("-", 1)[0]
            entry = best.setdefault(
                (name, model),
                {
                    "item": item,
                    "region": region,
                    "unit": unit,
                    "gpu_count": gpu_count,
                    "amount": value,
                    "zones": {},
                },
            )
            entry["zones"][zone] = str(value)
            if value < entry["amount"]:
                entry["amount"], entry["item"] = value, item
        records = []
        for (name, model), entry in best.items():
            item = entry["item"]
            family = item.get("InstanceFamily") or name.split(".")[0]
            if family not in FAMILY_GPU:
                self.note_unmatched("instance", family, "GPU family not in FAMILY_GPU")
            records.append(
                PriceRecord(
                    instance_type=name,
                    gpu_name=FAMILY_GPU.get(family, family),
                    gpu_count=entry["gpu_count"],
                    region=entry["region"],
                    pricing_model=model,
                    amount=entry["amount"],
                    currency=currency,
                    unit=entry["unit"],
                    vcpus=int(item["Cpu"]),
                    ram_gib=float(item["Memory"]),
                    extra={
                        "family": family,
                        "zones": entry["zones"],
                        "gpu_name_from": "family table" if family in FAMILY_GPU else "family code",
                        **({"gpu_sharing": "vgpu"} if entry["gpu_count"] < 1 else {}),
                    },
                )
            )
        return records

    @staticmethod
    def _api_gpu_count(item: dict[str, Any]) -> Decimal:
        # GpuCount is physical cards (below 1 for vGPU slices); Gpu is the older integer field.
        raw = item.get("GpuCount")
        if raw in (None, 0, 0.0):
            raw = item.get("Gpu", 0)
        try:
            return Decimal(str(raw)).normalize()
        except InvalidOperation:
            raise ParseError(f"Tencent API: GPU count {raw!r} is not a number") from None

    def _api_amount(self, name: str, charge: str, price: Any) -> tuple[str, str, Decimal] | None:
        """(pricing model, unit, amount) of one zone entry; None when it carries no usable price."""
        if not isinstance(price, dict):
            raise ParseError(f"Tencent API: {name} Price is not an object")
        if charge == "POSTPAID_BY_HOUR":
            field, model, unit = "UnitPrice", "on_demand", "hour"
        elif charge == "SPOTPAID":
            field, model, unit = "UnitPriceDiscount", "spot", "hour"
        elif charge == "PREPAID":
            # OriginalPrice is the list price of one month, before any duration discount.
            field, model, unit = "OriginalPrice", "monthly", "month"
        else:
            return None  # CDHPAID and other charge types are not instance prices
        if field not in price:
            raise ParseError(f"Tencent API: {name} {charge} Price has no {field}")
        if unit == "hour" and price.get("ChargeUnit", "HOUR") != "HOUR":
            # One entry priced per another unit says nothing about the others of the region.
            self.note_skipped(f"{name} {charge}", f"charge unit {price.get('ChargeUnit')!r}")
            return None
        value = Decimal(str(price[field]))
        # A 0 means "not priced this way" (the docs' own example has UnitPrice 0.0), never free.
        return (model, unit, value) if value > 0 else None
