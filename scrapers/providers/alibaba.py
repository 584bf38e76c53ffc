"""Alibaba Cloud (阿里云) ECS GPU prices: the public price files behind the ECS pricing pages.

Public source (default): ``instancePrice.json`` on Alibaba's CDN, the file the ECS pricing page
offers for download. The China site publishes it under ``ecs-price-info/<version>`` (CNY, mainland
and overseas regions) and the International site under ``ecs-price-info-intl/<version>`` (USD); the
version changes with every price update and is read from the pricing page first. Each entry is keyed
``region::instance_type::network::os::io`` with pay-as-you-go, weekly, monthly and yearly prices.
Only the China site's file is fetched by default (``AlibabaScraper.sites``), so every family is priced
in CNY in every region; the International file, when a scraper is given it, is read for Hong Kong and
overseas regions only.

With ``alibaba_access_key_id`` / ``alibaba_access_key_secret``: preemptible (spot) prices from
ECS ``DescribeSpotPriceHistory``, an RPC call signed with HMAC-SHA1 (signature version 1.0).
See docs/providers/alibaba.md.
"""

from __future__ import annotations

import base64
import hmac
import json
import logging
import re
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from decimal import Decimal, InvalidOperation
from typing import Any, ClassVar
from urllib.parse import quote

from ..base import FetchError, HttpClient, Page, ParseError, PriceRecord, Scraper, register

logger = logging.getLogger(__name__)

# Pricing pages that name the current price-file version, per site.
PRICING_PAGES = {
    "cn": ("www.aliyun.com", "/price/ecs/ecs-pricing/zh", "ecs-price-info"),
    "intl": ("www.alibabacloud.com", "/en/product/ecs/pricing", "ecs-price-info-intl"),
}
PRICE_FILE = "/aliyun/{package}/{version}/price/download/instancePrice.json"
API_HOST = "ecs.{region}.aliyuncs.com"  # regional endpoints exist for every region
API_VERSION = "2014-05-26"
SITE_CURRENCY = {"cn": "CNY", "intl": "USD"}
MAX_SPOT_PAGES = 20

# GPU model per instance family, from Alibaba's "GPU计算型实例" family pages. The price file names
# no GPU; families missing here are passed on under their family code for a curator to map.
FAMILY_GPU = {
    "gn5": "NVIDIA P100",
    "gn5i": "NVIDIA P4",
    "gn6v": "NVIDIA V100",
    "gn6e": "NVIDIA V100 32GB",
    "gn6i": "NVIDIA T4",
    "gn7i": "NVIDIA A10",
    "gn7": "NVIDIA A100 40GB",
    "ebmgn6v": "NVIDIA V100",
    "ebmgn6e": "NVIDIA V100 32GB",
    "ebmgn6i": "NVIDIA T4",
    "ebmgn7i": "NVIDIA A10",
    "ebmgn7": "NVIDIA A100 40GB",
    "vgn5i": "NVIDIA P4",
    "vgn6i": "NVIDIA T4",
    "vgn7i-vws": "NVIDIA A10",
    "sgn7i-vws": "NVIDIA A10",
}
# Bare-metal types name no GPU count; these are the counts of Alibaba's ECS Bare Metal family tables
# (AlibabaCloudDocs/ecs, 弹性裸金属服务器概述.md at c392877, 2021-06-08). Others stay uncounted.
BARE_METAL_GPU_COUNT = {
    "ecs.ebmgn6v.24xlarge": 8,
    "ecs.ebmgn6e.24xlarge": 8,
    "ecs.ebmgn6i.24xlarge": 4,
    "ecs.ebmgn7i.32xlarge": 4,
    "ecs.ebmgn7.26xlarge": 8,
}
# GPU memory (GB) of the card a vGPU family slices: "-m4" is a 4 GB slice of it.
SLICED_GPU_MEMORY = {"vgn5i": 8, "vgn6i": 16, "vgn7i-vws": 24, "sgn7i-vws": 24}

_GPU_FAMILY_RE = re.compile(r"^(?:ebm|s|v)?gn\d")
_SIZE_RE = re.compile(r"^(\d*)xlarge$")
_VERSION_RE_TEMPLATE = r"g\.alicdn\.com/aliyun/{package}/(\d+(?:\.\d+)+)/"


def _percent(value: str) -> str:
    """RFC 3986 encoding as the RPC signature wants it (space as %20, ~ kept)."""
    return quote(value, safe="-_.~")


def rpc_signed_query(params: dict[str, str], access_key_secret: str, method: str = "GET") -> str:
    """Canonical query string of an Alibaba RPC request with its HMAC-SHA1 ``Signature`` appended.

    StringToSign = METHOD & %2F & percent(sorted "k=v" pairs joined by &); the key is secret + "&".
    """
    canonical = "&".join(f"{_percent(k)}={_percent(v)}" for k, v in sorted(params.items()))
    string_to_sign = f"{method}&{_percent('/')}&{_percent(canonical)}"
    digest = hmac.new(f"{access_key_secret}&".encode(), string_to_sign.encode(), "sha1").digest()
    return f"{canonical}&Signature={_percent(base64.b64encode(digest).decode())}"


def latest_price_version(html: str, package: str) -> str | None:
    """Highest price-file version the pricing page references (as numbers: 2.0.421 > 2.0.96)."""
    pattern = re.compile(_VERSION_RE_TEMPLATE.format(package=re.escape(package)))
    versions: set[str] = set(pattern.findall(html))
    if not versions:
        return None
    return max(versions, key=lambda v: tuple(int(part) for part in v.split(".")))


def gpu_spec(instance_type: str) -> dict[str, Any] | None:
    """GPU name, count and vCPUs read from an ECS type name; None for a family without GPUs.

    ``ecs.gn6i-c4g1.xlarge``: 4 vCPUs (xlarge), one GPU per 4 vCPUs (c4g1) -> 1 x T4.
    ``ecs.gn8is-2x.8xlarge``: 2 GPUs. ``ecs.vgn6i-m4.xlarge``: a 4 GB slice of a 16 GB T4 -> 0.25.
    """
    name = instance_type.removeprefix("ecs.")
    family_part, _, size = name.rpartition(".")
    tokens = family_part.split("-")
    family = tokens[0]
    rest = tokens[1:]
    if rest[:1] == ["vws"]:
        family, rest = f"{family}-vws", rest[1:]
    if not _GPU_FAMILY_RE.match(family):
        return None
    size_match = _SIZE_RE.match(size)
    vcpus = None
    if size == "large":
        vcpus = 2
    elif size_match:
        vcpus = 4 * int(size_match.group(1) or 1)
    count: Decimal | None = None
    for token in rest:
        if m := re.fullmatch(r"m(\d+)", token):
            if family in SLICED_GPU_MEMORY:
                count = Decimal(m.group(1)) / Decimal(SLICED_GPU_MEMORY[family])
        elif m := re.fullmatch(r"(\d+)x", token):
            count = Decimal(m.group(1))
        elif (m := re.fullmatch(r"c(\d+)g(\d+)", token)) and vcpus:
            per_gpu, gpus = int(m.group(1)), int(m.group(2))
            if (vcpus * gpus) % per_gpu == 0:
                count = Decimal(vcpus * gpus // per_gpu)
    if count is None and instance_type in BARE_METAL_GPU_COUNT:
        count = Decimal(BARE_METAL_GPU_COUNT[instance_type])
    if count is not None:
        count = count.quantize(Decimal("0.0001")).normalize()
    return {
        "family": family,
        "gpu_name": FAMILY_GPU.get(family, family),
        "gpu_name_from": "family table" if family in FAMILY_GPU else "family code",
        "gpu_count": count,
        "vcpus": vcpus,
        "shared": family.startswith(("vgn", "sgn")),
    }


def _mainland(region: str) -> bool:
    return region.startswith("cn-") and region != "cn-hongkong"


@register
class AlibabaScraper(Scraper):
    """Alibaba Cloud ECS GPU prices: the China site's CNY list prices in every region; spot with keys."""

    key = "alibaba"
    provider_slug = "alibaba"
    base_url = "https://g.alicdn.com"
    description = (
        "Alibaba Cloud ECS instancePrice.json (China site, CNY in every region); spot via API"
    )
    # The regions of fixtures/providers/alibaba.yaml.
    default_regions: ClassVar[tuple[str, ...]] = (
        "cn-qingdao",
        "cn-beijing",
        "cn-zhangjiakou",
        "cn-huhehaote",
        "cn-wulanchabu",
        "cn-hangzhou",
        "cn-shanghai",
        "cn-nanjing",
        "cn-shenzhen",
        "cn-heyuan",
        "cn-guangzhou",
        "cn-chengdu",
        "cn-hongkong",
        "ap-northeast-1",
        "ap-northeast-2",
        "ap-southeast-1",
        "ap-southeast-3",
        "ap-southeast-5",
        "ap-southeast-7",
        "us-west-1",
        "us-east-1",
        "eu-central-1",
    )
    # Price files fetched: the China site's only, so that no family is priced in two currencies
    # (audit_catalog's mixed_currencies rule); "intl" adds the International site's USD file.
    sites: ClassVar[tuple[str, ...]] = ("cn",)

    # --- fetch ---------------------------------------------------------------------------
    def fetch(self, client: HttpClient) -> Iterator[Page]:
        """The price file of each site in ``sites`` (version read from its pricing page); then spot
        with keys."""
        lists: list[Page] = []
        for site in self.sites:
            host, path, package = PRICING_PAGES[site]
            index = client.get(self.host_url(host, path))
            version = latest_price_version(index.body, package)
            if version is None:
                raise FetchError(f"no {package} version referenced by {index.url}")
            url = self.base_url + PRICE_FILE.format(package=package, version=version)
            page = client.get(url, meta={"kind": "list", "site": site, "version": version})
            lists.append(page)
            yield page
        if self.has_credentials("alibaba_access_key_id", "alibaba_access_key_secret"):
            yield from self._fetch_spot(client, lists)

    def _fetch_spot(self, client: HttpClient, lists: list[Page]) -> Iterator[Page]:
        wanted: set[tuple[str, str]] = set()
        for page in lists:
            try:
                records = self.parse(page)
            except ParseError:
                continue  # the same page fails again in parse(), where the run reports it
            wanted |= {
                (r.region, r.instance_type) for r in records if r.pricing_model == "on_demand"
            }
        start = (datetime.now(UTC) - timedelta(hours=3)).strftime("%Y-%m-%dT%H:%M:%SZ")
        for region, instance_type in sorted(wanted):
            offset = 0
            pages: list[Page] = []
            for _ in range(MAX_SPOT_PAGES):
                params = {
                    "Action": "DescribeSpotPriceHistory",
                    "Version": API_VERSION,
                    "Format": "JSON",
                    "AccessKeyId": self.credentials["alibaba_access_key_id"],
                    "SignatureMethod": "HMAC-SHA1",
                    "SignatureVersion": "1.0",
                    "SignatureNonce": uuid.uuid4().hex,
                    "Timestamp": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
                    "RegionId": region,
                    "InstanceType": instance_type,
                    "NetworkType": "vpc",
                    "OSType": "linux",
                    "StartTime": start,
                }
                if offset:
                    params["Offset"] = str(offset)
                query = rpc_signed_query(params, self.credentials["alibaba_access_key_secret"])
                page = client.get(
                    f"{self.host_url(API_HOST.format(region=region), '/')}?{query}",
                    meta={"kind": "spot", "region": region, "instance_type": instance_type},
                )
                pages.append(page)
                next_offset = self._next_offset(page.body)
                if not next_offset or next_offset <= offset:
                    break
                offset = next_offset
            yield self._merged(pages)

    @staticmethod
    def _merged(pages: list[Page]) -> Page:
        """One spot answer for one type: history pages joined so parse sees every zone at once."""
        if len(pages) == 1:
            return pages[0]
        entries: list[Any] = []
        for page in pages:
            try:
                entries.extend(json.loads(page.body)["SpotPrices"]["SpotPriceType"])
            except (ValueError, KeyError, TypeError):
                return page  # parse() says what is wrong with it
        first = json.loads(pages[0].body)
        first["SpotPrices"]["SpotPriceType"] = entries
        first["NextOffset"] = 0
        return Page(
            url=pages[0].url,
            status=pages[0].status,
            body=json.dumps(first),
            fetched_at=pages[-1].fetched_at,
            content_type=pages[0].content_type,
            meta={**pages[0].meta, "pages_merged": str(len(pages))},
        )

    @staticmethod
    def _next_offset(body: str) -> int:
        """NextOffset of a spot answer; 0 when there is no further page (or no JSON to read)."""
        try:
            data = json.loads(body)
            entries = data["SpotPrices"]["SpotPriceType"]
            return int(data.get("NextOffset") or 0) if entries else 0
        except (ValueError, KeyError, TypeError):
            return 0  # parse() reports the broken page

    # --- parse ---------------------------------------------------------------------------
    def parse(self, page: Page) -> list[PriceRecord]:
        """Records of an instancePrice.json file or of a DescribeSpotPriceHistory answer."""
        try:
            data = json.loads(page.body)
        except json.JSONDecodeError as exc:
            raise ParseError(f"Alibaba: invalid JSON ({exc.msg} at {exc.pos})") from None
        if not isinstance(data, dict):
            raise ParseError("Alibaba: expected a JSON object")
        kind = page.meta.get("kind") or (
            "spot" if "SpotPrices" in data or "Code" in data else "list"
        )
        if kind == "spot":
            return self._parse_spot(page, data)
        return self._parse_list(page, data)

    def _parse_list(self, page: Page, data: dict[str, Any]) -> list[PriceRecord]:
        pricing = data.get("pricingInfo")
        currency = data.get("currency")
        if not isinstance(pricing, dict):
            raise ParseError("Alibaba price file: no pricingInfo object")
        if currency not in SITE_CURRENCY.values():
            raise ParseError(f"Alibaba price file: unexpected currency {currency!r}")
        site = page.meta.get("site") or ("cn" if currency == "CNY" else "intl")
        if SITE_CURRENCY[site] != currency:
            raise ParseError(f"Alibaba price file: {site} site priced in {currency}")
        records: list[PriceRecord] = []
        for key, entry in pricing.items():
            parts = key.split("::")
            if len(parts) != 5:
                raise ParseError(
                    f"Alibaba price file: key {key!r} is not region::type::net::os::io"
                )
            region, instance_type, network, os_type, io = parts
            if (network, os_type, io) != ("vpc", "linux", "optimized"):
                continue  # Windows licence, classic network and non-optimised I/O are other prices
            if currency == "USD" and _mainland(region):
                continue  # mainland regions are sold by the China site, in CNY
            if self.regions and region not in self.regions:
                continue
            spec = gpu_spec(instance_type)
            if spec is None:
                continue  # CPU-only family
            if spec["gpu_count"] is None:
                logger.warning(
                    "alibaba: GPU count of %s not derivable from its name", instance_type
                )
                continue
            if not isinstance(entry, dict) or not {"hours", "months", "years"} & entry.keys():
                raise ParseError(f"Alibaba price file: {key} has no hours/months/years prices")
            for field, model, unit in (
                ("hours", "on_demand", "hour"),
                ("months", "monthly", "month"),
                ("years", "yearly", "year"),
            ):
                amount = self._period_price(entry.get(field), key)
                if amount is None:
                    continue
                records.append(
                    PriceRecord(
                        instance_type=instance_type,
                        gpu_name=spec["gpu_name"],
                        gpu_count=spec["gpu_count"],
                        region=region,
                        pricing_model=model,
                        amount=amount,
                        currency=currency,
                        unit=unit,
                        vcpus=spec["vcpus"],
                        ram_gib=None,  # the price file carries no memory size
                        extra={
                            "family": spec["family"],
                            "gpu_name_from": spec["gpu_name_from"],
                            "site": site,
                            "price_file_version": data.get("version", ""),
                            **({"gpu_sharing": "vgpu"} if spec["shared"] else {}),
                        },
                    )
                )
        return records

    @staticmethod
    def _period_price(prices: Any, key: str) -> Decimal | None:
        """Price of the one-unit period (1 hour, 1 month, 1 year); None when not sold that way."""
        if prices is None:
            return None
        if not isinstance(prices, list):
            raise ParseError(f"Alibaba price file: {key} periods are not a list")
        for item in prices:
            if not isinstance(item, dict) or "price" not in item or "period" not in item:
                raise ParseError(f"Alibaba price file: {key} has a period without price/period")
            if str(item["period"]) != "1":
                continue
            raw = str(item["price"]).strip()
            if raw in ("", "-"):
                return None  # empty: not sold under this model in this region
            try:
                amount = Decimal(raw)
            except InvalidOperation:
                raise ParseError(f"Alibaba price file: {key} price {raw!r}") from None
            return amount if amount > 0 else None
        return None

    def _parse_spot(self, page: Page, data: dict[str, Any]) -> list[PriceRecord]:
        if "Code" in data and "SpotPrices" not in data:
            raise ParseError(f"Alibaba API error {data.get('Code')}: {data.get('Message')}")
        try:
            entries = data["SpotPrices"]["SpotPriceType"]
        except (KeyError, TypeError):
            raise ParseError("Alibaba spot answer: no SpotPrices.SpotPriceType list") from None
        if not isinstance(entries, list):
            raise ParseError("Alibaba spot answer: SpotPriceType is not a list")
        currency = data.get("Currency") or page.meta.get("currency") or "CNY"
        latest: dict[tuple[str, str], dict[str, Any]] = {}
        for entry in entries:
            try:
                instance_type, zone = entry["InstanceType"], entry["ZoneId"]
                stamp, price = entry["Timestamp"], Decimal(str(entry["SpotPrice"]))
            except (KeyError, TypeError, InvalidOperation) as exc:
                raise ParseError(f"Alibaba spot answer: entry lacks {exc}") from None
            asked = page.meta.get("instance_type")
            if asked and instance_type != asked:
                continue
            if entry.get("NetworkType", "vpc") != "vpc":
                continue
            # History: several prices per zone; only the latest one is the current price.
            held = latest.get((instance_type, zone))
            if held is None or stamp > held["Timestamp"]:
                latest[(instance_type, zone)] = {**entry, "Timestamp": stamp, "price": price}
        by_type: dict[str, dict[str, Any]] = {}
        for (instance_type, zone), entry in sorted(latest.items()):
            by_type.setdefault(instance_type, {})[zone] = entry
        records = []
        for instance_type, zones in by_type.items():
            spec = gpu_spec(instance_type)
            if spec is None or spec["gpu_count"] is None:
                reason = "not a GPU instance type" if spec is None else "no GPU count in the name"
                self.note_skipped(instance_type, reason)
                continue
            zone, cheapest = min(zones.items(), key=lambda item: item[1]["price"])
            region = page.meta.get("region") or re.sub(r"-?[a-z]$", "", zone)
            records.append(
                PriceRecord(
                    instance_type=instance_type,
                    gpu_name=spec["gpu_name"],
                    gpu_count=spec["gpu_count"],
                    region=region,
                    pricing_model="spot",
                    amount=cheapest["price"],
                    currency=currency,
                    unit="hour",
                    vcpus=spec["vcpus"],
                    extra={
                        "family": spec["family"],
                        "gpu_name_from": spec["gpu_name_from"],
                        "zones": {z: str(e["price"]) for z, e in zones.items()},
                        "origin_price": str(cheapest.get("OriginPrice", "")),
                        "as_of": cheapest["Timestamp"],
                    },
                )
            )
        return records
