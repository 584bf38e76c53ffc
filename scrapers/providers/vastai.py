"""Vast.ai: marketplace statistics from the offer search API (``GET /api/v0/bundles/?q=<json>``).

Vast has no price list: independent hosts price each offer. The scraper reads every verified,
rentable offer of 1, 2, 4 or 8 GPUs, once as on-demand asks and once as interruptible ("bid")
offers, and summarises each (GPU model, GPU count, region) into ONE record: the median price,
with the minimum, maximum, offer count and per-country figures in ``extra``. On-demand uses
``dph_total`` (USD per hour for the whole offer, storage included); spot uses ``min_bid``.
The search works without a key; ``credentials["vastai_api_key"]`` is sent as a Bearer token.
See docs/providers/vastai.md.
"""

from __future__ import annotations

import json
import statistics
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import replace
from decimal import ROUND_HALF_EVEN, Decimal
from typing import Any
from urllib.parse import parse_qs, urlsplit

from scrapers.base import HttpClient, Page, ParseError, PriceRecord, Scraper, register

BUNDLES_PATH = "/api/v0/bundles/"
OFFER_TYPES = {"on-demand": ("on_demand", "dph_total"), "bid": ("spot", "min_bid")}
GPU_COUNTS = (1, 2, 4, 8)
# Public clients report the search answers at most 64 offers whatever limit is asked, and it has
# no cursor, so results are walked in price order: the next page asks for dph_total >= the last
# price seen.
PAGE_LIMIT = 64
MAX_PAGES = 40  # politeness cap: 40 x 64 offers per type is far beyond the verified market
# Vast writes "A100 SXM4" for both the 40 GB and the 80 GB part: these names get the memory
# size appended ("A100 SXM4 80GB") so the two are not averaged together.
MEMORY_AMBIGUOUS_PREFIXES = ("A100", "A800", "Tesla V100", "V100")
# Vast country (ISO code from geolocation) -> catalog region code. The fixture has a single
# 'global' region, so every country falls through to it and per-country figures go in extra.
COUNTRY_REGIONS: dict[str, str] = {}
DEFAULT_REGION = "global"
# Older hosts report the country by name, not "Region, CC".
COUNTRY_NAMES = {
    "united states": "US",
    "canada": "CA",
    "norway": "NO",
    "sweden": "SE",
    "germany": "DE",
    "france": "FR",
    "netherlands": "NL",
    "united kingdom": "GB",
    "finland": "FI",
    "poland": "PL",
    "czechia": "CZ",
    "spain": "ES",
    "japan": "JP",
    "taiwan": "TW",
    "hong kong": "HK",
    "china": "CN",
    "south korea": "KR",
    "australia": "AU",
}
_SIX = Decimal("0.000001")


def bundles_query(offer_type: str, *, min_dph: float | None = None) -> str:
    """The ``q`` parameter for one page, serialised the same way every time."""
    query: dict[str, Any] = {
        "verified": {"eq": True},
        "rentable": {"eq": True},
        "external": {"eq": False},
        "num_gpus": {"in": list(GPU_COUNTS)},
        "type": offer_type,
        "order": [["dph_total", "asc"]],
        "limit": PAGE_LIMIT,
    }
    if min_dph is not None:
        query["dph_total"] = {"gte": min_dph}
    return json.dumps(query, sort_keys=True, separators=(",", ":"))


@register
class VastAiScraper(Scraper):
    """Vast.ai marketplace medians per GPU model and count, on-demand and interruptible."""

    key = "vastai"
    provider_slug = "vastai"
    base_url = "https://console.vast.ai"
    description = "Vast.ai offer search (/api/v0/bundles/), summarised per GPU model and count"

    def pricing_models(self) -> frozenset[str]:
        """On-demand asks and interruptible bids; reserved rentals are not summarised."""
        return frozenset({"on_demand", "spot"})

    def fetch(self, client: HttpClient) -> Iterator[Page]:
        """One Page per offer type, its body the offers of every search page merged."""
        api_key = self.credential("vastai_api_key")
        headers = {"Accept": "application/json"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        for offer_type in OFFER_TYPES:
            yield self._fetch_type(client, offer_type, headers)

    def _fetch_type(self, client: HttpClient, offer_type: str, headers: dict[str, str]) -> Page:
        # A median needs every offer of a group at once, and pages cut groups anywhere, so the
        # pages are merged here into one document of the API's own shape ({"offers": [...]}).
        offers: dict[Any, dict[str, Any]] = {}
        urls: list[str] = []
        pages: list[Page] = []
        min_dph: float | None = None
        for _ in range(MAX_PAGES):
            page = client.get(
                self.base_url + BUNDLES_PATH,
                params={"q": bundles_query(offer_type, min_dph=min_dph)},
                headers=headers,
                meta={"type": offer_type},
            )
            pages.append(page)
            urls.append(page.url)
            try:
                batch = json.loads(page.body).get("offers")
            except (json.JSONDecodeError, AttributeError):
                return page  # not the expected document: parse says why
            if not isinstance(batch, list):
                return page
            new = 0
            for offer in batch:
                key = offer.get("id") if isinstance(offer, dict) else None
                if key is None or key not in offers:
                    offers[key if key is not None else f"row{len(offers)}"] = offer
                    new += 1
            prices = [o.get("dph_total") for o in batch if isinstance(o, dict)]
            numbers = [p for p in prices if isinstance(p, int | float)]
            if len(batch) < PAGE_LIMIT or new == 0 or not numbers:
                break
            # ">=" repeats the offers priced exactly at the boundary; the id check drops them.
            min_dph = max(numbers)
        return replace(
            pages[0],
            body=json.dumps({"offers": list(offers.values())}),
            meta={"type": offer_type, "pages": str(len(urls)), "urls": " ".join(urls)},
        )

    def parse(self, page: Page) -> list[PriceRecord]:
        """One record per (GPU model, GPU count, region) of the page's offer type."""
        try:
            document = json.loads(page.body, parse_float=Decimal)
        except json.JSONDecodeError as exc:
            raise ParseError(f"vastai: not JSON ({exc.msg} at {exc.pos})") from exc
        offers = document.get("offers") if isinstance(document, dict) else None
        if not isinstance(offers, list):
            raise ParseError("vastai: no 'offers' list")
        offer_type = _offer_type(page)
        pricing_model, price_field = OFFER_TYPES[offer_type]

        groups: dict[tuple[str, int, str], list[dict[str, Any]]] = defaultdict(list)
        raw_names: dict[tuple[str, int, str], str] = {}
        seen_ids: set[Any] = set()
        for offer in offers:
            if not isinstance(offer, dict):
                raise ParseError("vastai: offer is not an object")
            missing = [k for k in ("gpu_name", "num_gpus", price_field) if k not in offer]
            if missing:
                raise ParseError(f"vastai: offer {offer.get('id')!r} lacks {', '.join(missing)}")
            if offer.get("id") is not None:
                if offer["id"] in seen_ids:
                    continue  # the same offer on two search pages
                seen_ids.add(offer["id"])
            name = f"offer {offer.get('id')} ({offer.get('num_gpus')}x {offer.get('gpu_name')})"
            unusable = _unusable(offer)
            if unusable:
                self.note_skipped(name, unusable)
                continue
            price = _decimal(offer[price_field])
            num_gpus = offer["num_gpus"]
            if num_gpus not in GPU_COUNTS:
                self.note_skipped(name, f"{num_gpus} GPUs: not a 1/2/4/8-GPU shape")
                continue
            if price is None or price <= 0 or not offer["gpu_name"]:
                self.note_skipped(name, f"no {price_field} or no gpu_name")
                continue
            label = _gpu_label(str(offer["gpu_name"]), offer.get("gpu_ram"))
            country = _country(offer.get("geolocation"))
            region = COUNTRY_REGIONS.get(country, DEFAULT_REGION)
            key = (label, int(num_gpus), region)
            raw_names[key] = str(offer["gpu_name"])
            groups[key].append({**offer, "_price": price, "_country": country})

        source_url = page.url.split("?", 1)[0]
        records = []
        for (label, num_gpus, region), members in sorted(groups.items()):
            prices = sorted(m["_price"] for m in members)
            median = _money(statistics.median(prices))
            plural = "GPU" if num_gpus == 1 else "GPUs"
            records.append(
                PriceRecord(
                    instance_type=f"{label} (marketplace, {num_gpus} {plural})",
                    gpu_name=label,
                    gpu_count=Decimal(num_gpus),
                    region=region,
                    pricing_model=pricing_model,
                    amount=median,
                    currency="USD",
                    unit="hour",
                    # Typical host, not a guarantee: offers range widely.
                    vcpus=_median_int(m.get("cpu_cores_effective") for m in members),
                    ram_gib=_median_gib(m.get("cpu_ram") for m in members),
                    extra={
                        "source_url": source_url,
                        "offer_type": offer_type,
                        "price_field": price_field,
                        "vast_gpu_name": raw_names[(label, num_gpus, region)],
                        "offer_count": len(prices),
                        "min_usd_per_hour": float(prices[0]),
                        "median_usd_per_hour": float(median),
                        "max_usd_per_hour": float(prices[-1]),
                        "by_country": _by_country(members),
                    },
                )
            )
        return records


def _offer_type(page: Page) -> str:
    """on-demand or bid: from the page meta, else from the q parameter of the URL."""
    offer_type = page.meta.get("type")
    if offer_type is None:
        q = parse_qs(urlsplit(page.url).query).get("q")
        try:
            offer_type = json.loads(q[0]).get("type") if q else None
        except (json.JSONDecodeError, AttributeError):
            offer_type = None
    offer_type = offer_type or "on-demand"
    if offer_type not in OFFER_TYPES:
        raise ParseError(f"vastai: unknown offer type {offer_type!r}")
    return offer_type


def _unusable(offer: dict[str, Any]) -> str:
    """Why an offer the query should have filtered out is dropped ("" when it is usable)."""
    if offer.get("rentable") is False:
        return "not rentable"
    if offer.get("rented") is True:
        return "rented"
    if offer.get("external") is True:
        return "external offer"
    verification = offer.get("verification")
    if verification not in (None, "verified"):
        return f"verification {verification!r}"
    return ""


def _gpu_label(name: str, gpu_ram_mb: Any) -> str:
    """Vast's GPU name, with the memory size when the name alone does not tell the part."""
    memory = _decimal(gpu_ram_mb)
    if name.startswith(MEMORY_AMBIGUOUS_PREFIXES) and memory:
        return f"{name} {round(memory / 1024)}GB"
    return name


def _country(geolocation: Any) -> str:
    """ISO country code from 'Texas, US', 'Norway' or 'US'; 'unknown' when absent."""
    if not isinstance(geolocation, str) or not geolocation.strip():
        return "unknown"
    tail = geolocation.rsplit(",", 1)[-1].strip()
    if len(tail) == 2 and tail.isalpha():
        return tail.upper()
    return COUNTRY_NAMES.get(tail.lower(), "unknown")


def _by_country(members: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    by: dict[str, list[Decimal]] = defaultdict(list)
    for member in members:
        by[member["_country"]].append(member["_price"])
    return {
        country: {
            "offer_count": len(prices),
            "min_usd_per_hour": float(min(prices)),
            "median_usd_per_hour": float(_money(statistics.median(prices))),
        }
        for country, prices in sorted(by.items())
    }


def _decimal(value: Any) -> Decimal | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, Decimal | int):
        return Decimal(value)
    if isinstance(value, float):
        return Decimal(str(value))
    return None


def _money(value: Decimal) -> Decimal:
    return Decimal(value).quantize(_SIX, rounding=ROUND_HALF_EVEN)


def _median_int(values: Any) -> int | None:
    numbers = [d for d in (_decimal(v) for v in values) if d is not None and d > 0]
    return round(statistics.median(numbers)) if numbers else None


def _median_gib(values_mb: Any) -> float | None:
    numbers = [d for d in (_decimal(v) for v in values_mb) if d is not None and d > 0]
    return round(float(statistics.median(numbers)) / 1024, 1) if numbers else None
