"""AutoDL (算力云) GPU prices: the machine market list behind autodl.com/market.

The market page loads ``POST /api/v1/user/machine/list`` (pay-as-you-go, paged): one entry per
host machine with its region, GPU model, GPU count, idle GPUs and ``payg_price``, the price of one
GPU for one hour in thousandths of a yuan (1880 = 1.88 CNY). AutoDL rents per-GPU containers, so
an "instance type" is a GPU model at one GPU; records aggregate the machines of a GPU model per
region (median list price; min, max and idle GPUs in ``extra``) plus a ``market`` record over all
regions. ``autodl_token`` (a logged-in token) is sent as ``Authorization`` when configured.
See docs/providers/autodl.md.
"""

from __future__ import annotations

import json
import statistics
from collections import defaultdict
from collections.abc import Iterator
from decimal import Decimal, InvalidOperation
from typing import Any

from ..base import HttpClient, Page, ParseError, PriceRecord, Scraper, register

LIST_PATH = "/api/v1/user/machine/list"
PAGE_SIZE = 100
MAX_PAGES = 200
MILLI = Decimal(1000)
# One GPU-hour below 0.05 CNY or above 200 CNY is not a price AutoDL charges: units went wrong.
PLAUSIBLE_YUAN = (Decimal("0.05"), Decimal(200))

# Market answers name regions by display name (and a market sign like "foshan-A"); the catalog
# uses the region codes of AutoDL's developer API. Names as the fixtures give them.
REGION_BY_NAME = {
    "西北企业区": "westDC2",
    "西北B区": "westDC3",
    "北京A区": "beijingDC1",
    "北京B区": "beijingDC2",
    "V100专区": "beijingDC3",
    "华南A区": "beijingDC3",
    "L20专区": "beijingDC4",
    "北京C区": "beijingDC4",
    "内蒙A区": "neimengDC1",
    "内蒙B区": "neimengDC3",
    "佛山区": "foshanDC1",
    "重庆A区": "chongqingDC1",
    "3090专区": "yangzhouDC1",
}
CATALOG_REGIONS = set(REGION_BY_NAME.values())


def region_code(sign: str, name: str) -> str:
    """Catalog region code of a market entry: a developer-API code as is, else by display name."""
    if sign in CATALOG_REGIONS:
        return sign
    base_name = name.split("（")[0].split("(")[0].strip()  # noqa: RUF001 - Chinese brackets
    return REGION_BY_NAME.get(name) or REGION_BY_NAME.get(base_name) or sign or name


def list_body(page_index: int) -> dict[str, Any]:
    """The market page's own query: pay-as-you-go, every region and GPU, machines with a free GPU."""
    return {
        "charge_type": "payg",
        "region_sign": "",
        "gpu_type_name": [],
        "machine_tag_name": [],
        "gpu_idle_num": 1,
        "mount_net_disk": False,
        "instance_disk_size_order": "",
        "date_range": "",
        "date_from": "",
        "date_to": "",
        "page_index": page_index,
        "page_size": PAGE_SIZE,
        "pay_price_order": "",
        "gpu_idle_type": "",
        "default_order": True,
        "region_sign_list": [],
    }


def _median(values: list[Decimal]) -> Decimal:
    return Decimal(statistics.median(values)).quantize(Decimal("0.001")).normalize()


@register
class AutoDLScraper(Scraper):
    """AutoDL per-GPU pay-as-you-go prices (CNY per GPU-hour) per region and platform-wide."""

    key = "autodl"
    provider_slug = "autodl"
    base_url = "https://www.autodl.com"
    description = "AutoDL machine market list (payg_price in 0.001 CNY per GPU-hour)"

    def fetch(self, client: HttpClient) -> Iterator[Page]:
        """The whole market list as one answer: every page, page_index up to max_page, merged.

        Records are aggregates over all machines of a GPU model, so parsing page by page would
        give one partial median per page; the pages are joined into one answer of the same shape.
        """
        headers = {"Content-Type": "application/json;charset=UTF-8"}
        if token := self.credentials.get("autodl_token"):
            headers["Authorization"] = token
        pages: list[Page] = []
        for page_index in range(1, MAX_PAGES + 1):
            page = client.post(
                self.base_url + LIST_PATH,
                json=list_body(page_index),
                headers=headers,
                meta={"page_index": str(page_index)},
            )
            pages.append(page)
            if page_index >= self._max_page(page.body):
                break
        yield self._merged(pages)

    @staticmethod
    def _max_page(body: str) -> int:
        try:
            return int(json.loads(body)["data"]["max_page"])
        except (ValueError, KeyError, TypeError):
            return 0  # parse() reports the broken page; no point asking for more

    @staticmethod
    def _merged(pages: list[Page]) -> Page:
        """One page holding every machine; a page that is not a good answer is passed on as is."""
        if len(pages) == 1:
            return pages[0]
        machines: list[Any] = []
        for page in pages:
            try:
                data = json.loads(page.body)
                machines.extend(data["data"]["list"])
            except (ValueError, KeyError, TypeError):
                return page  # parse() says what is wrong with it
        first = json.loads(pages[0].body)
        first["data"].update({"list": machines, "page_index": 1, "max_page": 1})
        return Page(
            url=pages[0].url,
            status=pages[0].status,
            body=json.dumps(first, ensure_ascii=False),
            fetched_at=pages[-1].fetched_at,
            content_type=pages[0].content_type,
            meta={"pages_merged": str(len(pages))},
        )

    # --- parse ---------------------------------------------------------------------------
    def parse(self, page: Page) -> list[PriceRecord]:
        """Per-region and platform-wide records of one page of machines."""
        try:
            data = json.loads(page.body)
        except json.JSONDecodeError as exc:
            raise ParseError(f"AutoDL: invalid JSON ({exc.msg} at {exc.pos})") from None
        if not isinstance(data, dict):
            raise ParseError("AutoDL: expected a JSON object")
        # AutoDL answers "Success"; its own clients also accept "OK" (gpuhunter's autodl_client).
        if data.get("code") not in ("Success", "OK"):
            raise ParseError(f"AutoDL answered {data.get('code')!r}: {data.get('msg', '')}")
        machines = (
            (data.get("data") or {}).get("list") if isinstance(data.get("data"), dict) else None
        )
        if not isinstance(machines, list):
            raise ParseError("AutoDL: no data.list of machines")
        by_region: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
        for machine in machines:
            entry = self._machine(machine)
            if entry is None:
                name = machine.get("machine_alias") or machine.get("machine_id") or "?"
                self.note_skipped(str(name), "payg_price is 0 (offline or not rentable hourly)")
            else:
                by_region[(entry["gpu_name"], entry["region"])].append(entry)
        records = [
            self._record(gpu_name, region, entries)
            for (gpu_name, region), entries in sorted(by_region.items())
        ]
        # No platform-wide record: the catalog prices regions, and each region has its own.
        return records

    @staticmethod
    def _machine(machine: Any) -> dict[str, Any] | None:
        """One machine's GPU, region and per-GPU yuan price; None for one not priced."""
        if not isinstance(machine, dict):
            raise ParseError("AutoDL: machine entry is not an object")
        try:
            gpu_name = str(machine["gpu_name"]).strip()
            raw_price = machine["payg_price"]
        except KeyError as exc:
            raise ParseError(f"AutoDL: machine entry lacks {exc}") from None
        # The machine's GPU total is optional: market crawlers show ``gpu_number``, AutoDL's own
        # clients only ``gpu_order_num``/``gpu_idle_num`` (it only feeds ``extra``).
        raw_gpus = next(
            (machine[k] for k in ("gpu_number", "gpu_total_num") if machine.get(k) is not None),
            None,
        )
        try:
            gpus = int(raw_gpus) if raw_gpus is not None else None
            idle = int(machine.get("gpu_idle_num") or 0)
        except (TypeError, ValueError):
            raise ParseError("AutoDL: a GPU count is not a number") from None
        if "region_sign" not in machine and "region_name" not in machine:
            raise ParseError("AutoDL: machine entry names no region")
        try:
            milli = Decimal(str(raw_price))
        except InvalidOperation:
            raise ParseError(f"AutoDL: payg_price {raw_price!r} is not a number") from None
        if milli <= 0:
            return None  # offline or not rentable by the hour
        if milli != milli.to_integral_value():
            # Thousandths of a yuan are whole numbers; 1.88 means someone changed the unit.
            raise ParseError(f"AutoDL: payg_price {raw_price!r} is not in 0.001 CNY units")
        yuan = milli / MILLI
        if not PLAUSIBLE_YUAN[0] <= yuan <= PLAUSIBLE_YUAN[1]:
            raise ParseError(f"AutoDL: payg_price {raw_price!r} is {yuan} CNY per GPU-hour")
        region_name = str(machine.get("region_name", ""))
        return {
            "gpu_name": gpu_name,
            "region": region_code(str(machine.get("region_sign", "")), region_name),
            "region_name": region_name,
            "yuan": yuan,
            "gpus": gpus,
            "idle": idle,
        }

    @staticmethod
    def _record(gpu_name: str, region: str, entries: list[dict[str, Any]]) -> PriceRecord:
        prices = [entry["yuan"] for entry in entries]
        extra: dict[str, Any] = {
            "aggregate": "median list price over machines",
            "min": str(min(prices)),
            "max": str(max(prices)),
            "machines": len(entries),
            "gpus_total": (
                sum(entry["gpus"] for entry in entries)
                if all(entry["gpus"] is not None for entry in entries)
                else None
            ),
            "gpus_idle": sum(entry["idle"] for entry in entries),
            "price_unit_source": "payg_price / 1000",
        }
        extra["region_name"] = entries[0]["region_name"]
        return PriceRecord(
            instance_type=gpu_name,
            gpu_name=gpu_name,
            gpu_count=Decimal(1),  # per-GPU container; 1-8 GPUs of one host rent at n x this
            region=region,
            pricing_model="on_demand",
            amount=_median(prices),
            currency="CNY",
            unit="hour",
            extra=extra,
        )
