"""AWS EC2 GPU instance prices from the public Price List bulk offer files (one JSON file per region).

Source: ``https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws/AmazonEC2/current/<region>/index.json``
(no authentication). Each file lists ``products`` (SKU -> attributes) and ``terms`` (``OnDemand``
and ``Reserved``, keyed by SKU). A file is fetched into a temporary file and parsed streaming
(ijson), so memory stays flat however large the file (bench/aws_stream.py measures it). Spot prices are not in the Price List; they are read only when
``credentials["aws_spot_source_url"]`` names a copy of the EC2 Spot pricing feed (``spot.js``, the
JSONP file behind the public Spot pricing page). docs/providers/aws.md has the details.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from decimal import Decimal, InvalidOperation
from typing import IO, Any

import ijson

from scrapers.base import HttpClient, Page, ParseError, PriceRecord, Scraper, register

OFFER_PATH = "/offers/v1.0/aws/AmazonEC2/current/{region}/index.json"

# Hours in a reservation term (365-day years), to turn an All Upfront total into an hourly rate.
TERM_HOURS = {"1yr": Decimal(8760), "3yr": Decimal(26280)}
# The offer files quote hourly prices to 10 decimal places; converted totals are rounded alike.
HOURLY_QUANTUM = Decimal("0.0000000001")
TERM_MODEL = {"1yr": "reserved_1y", "3yr": "reserved_3y"}

# Instance family (the part of instanceType before the dot) -> GPU as we write it. The offer file
# gives only the GPU *count* (attribute ``gpu``), never the model, so the model comes from this
# table (AWS "Accelerated computing" instance pages). Names are spelled to match the aliases in
# fixtures/gpus.yaml. Families not listed (g4ad AMD Radeon, g5g T4G, p2 K80, dl1 Gaudi, ...) are
# skipped rather than guessed.
GPU_FAMILIES: dict[str, str] = {
    "g4dn": "NVIDIA T4",
    "g5": "NVIDIA A10G",
    "g6": "NVIDIA L4",
    "gr6": "NVIDIA L4",
    "g6e": "NVIDIA L40S",
    "p3": "NVIDIA V100",
    "p3dn": "NVIDIA V100 32GB",
    "p4d": "NVIDIA A100-SXM4-40GB",
    "p4de": "NVIDIA A100-SXM4-80GB",
    "p5": "NVIDIA H100",
    "p5e": "NVIDIA H200",
    "p5en": "NVIDIA H200",
    "p6-b200": "NVIDIA B200",
}

# GPU count per size for the Spot feed, which (unlike the offer file) carries no ``gpu`` attribute:
# family -> (default count, {size: count}).
SPOT_GPU_COUNTS: dict[str, tuple[int, dict[str, int]]] = {
    "g4dn": (1, {"12xlarge": 4, "metal": 8}),
    "g5": (1, {"12xlarge": 4, "24xlarge": 4, "48xlarge": 8}),
    "g6": (1, {"12xlarge": 4, "24xlarge": 4, "48xlarge": 8}),
    "gr6": (1, {}),
    "g6e": (1, {"12xlarge": 4, "24xlarge": 4, "48xlarge": 8}),
    "p3": (1, {"8xlarge": 4, "16xlarge": 8}),
    "p3dn": (8, {}),
    "p4d": (8, {}),
    "p4de": (8, {}),
    "p5": (8, {"4xlarge": 1}),
    "p5e": (8, {}),
    "p5en": (8, {}),
    "p6-b200": (8, {}),
}

# The Spot feed still uses some pre-2014 region names; everything else is already a region code.
SPOT_REGION_ALIASES = {
    "us-east": "us-east-1",
    "us-west": "us-west-1",
    "eu-ireland": "eu-west-1",
    "apac-sin": "ap-southeast-1",
    "apac-syd": "ap-southeast-2",
    "apac-tokyo": "ap-northeast-1",
}

# Attributes every "Compute Instance" product carries; the filter relies on them.
REQUIRED_ATTRIBUTES = frozenset(
    {
        "instanceType",
        "operatingSystem",
        "tenancy",
        "preInstalledSw",
        "capacitystatus",
        "licenseModel",
    }
)

# Bytes read from the page at a time by the streaming parser.
READ_CHUNK = 1024 * 1024
_ABSENT = object()
# What terms.Reserved may be when no entry was read: absent, null or an empty object.
_EMPTY_RESERVED = frozenset({None, "start_map", "null"})

_JSONP = re.compile(r"^\s*[A-Za-z_$][\w$]*\s*\((?P<body>.*)\)\s*;?\s*$", re.S)
_MEMORY = re.compile(r"^\s*([\d,]+(?:\.\d+)?)\s*GiB\s*$")


def _decimal(value: Any, what: str) -> Decimal:
    """A price string as Decimal; ParseError when it is not a number."""
    try:
        amount = Decimal(str(value).strip())
    except (InvalidOperation, TypeError):
        raise ParseError(f"{what} is not a number: {value!r}") from None
    if not amount.is_finite():
        raise ParseError(f"{what} is not a finite number: {value!r}")
    return amount


def _head(stream: IO[bytes]) -> tuple[dict[str, Any] | None, str]:
    """The top-level scalar members before the first object or array member, and that member's
    name ("" when there is none); None for the members when the document is not an object.

    Reads only the start of the file: in an offer file the members before ``products``.
    """
    members: dict[str, Any] = {}
    key = ""
    for prefix, event, value in ijson.parse(stream, buf_size=8 * 1024):
        if prefix == "":
            if event == "map_key":
                key = value
            elif event == "end_map":
                return members, ""
            elif event != "start_map":
                return None, ""  # an array or a scalar document
        elif prefix == key and event in ("start_map", "start_array"):
            return members, key
        elif prefix == key:
            members[key] = value
    return members, ""


def _kind_at(stream: IO[bytes], path: str) -> str | None:
    """The parse event that opens the member at dotted ``path`` ("start_map", "string", ...),
    None when absent. Walks every event: only for the rare case a streaming pass found nothing."""
    parent, _, name = path.rpartition(".")
    found = False
    event: str  # ijson's events are names ("start_map", "map_key", ...)
    for prefix, event, value in ijson.parse(stream, buf_size=64 * 1024):
        if found:
            return event
        found = prefix == parent and event == "map_key" and value == name
    return None


def _invalid(exc: ijson.JSONError) -> ParseError:
    """The streaming parser's error in one line (yajl adds lines that point at the spot)."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return ParseError(f"invalid JSON: {lines[0] if lines else type(exc).__name__}")


def _family(instance_type: str) -> str:
    return instance_type.split(".", 1)[0]


def gpu_for(instance_type: str) -> str | None:
    """The GPU of an instance type from the family table, or None for families we do not map."""
    return GPU_FAMILIES.get(_family(instance_type))


@register
class AwsScraper(Scraper):
    """EC2 Linux/shared GPU instances: on-demand and standard reserved (no upfront) per region."""

    key = "aws"
    provider_slug = "aws"
    base_url = "https://pricing.us-east-1.amazonaws.com"
    description = "AWS Price List bulk offer files (AmazonEC2, per region), optional Spot feed"
    reads_spooled_pages = True
    default_regions = (
        "us-east-1",
        "us-east-2",
        "us-west-2",
        "eu-west-1",
        "eu-central-1",
        "eu-north-1",
        "ap-northeast-1",
    )

    def fetch(self, client: HttpClient) -> Iterator[Page]:
        """One offer file per region, then the Spot feed when a source URL is configured."""
        for region in self.regions:
            url = self.base_url + OFFER_PATH.format(region=region)
            # Spooled: a region's file is hundreds of megabytes to gigabytes.
            yield client.get(url, meta={"kind": "offer", "region": region}, spool=True)
        spot_url = self.credential("aws_spot_source_url")
        if spot_url:
            yield client.get(spot_url, meta={"kind": "spot"})

    def parse(self, page: Page) -> list[PriceRecord]:
        """Records of an offer file or of the Spot feed (told apart by their shape).

        The offer file is read streaming (ijson) from ``page.open()``, never whole: a region's
        file is hundreds of megabytes to gigabytes. See ``_parse_offer``.
        """
        stream = page.open()
        start = stream.read(READ_CHUNK).lstrip()
        if start.startswith(b"<"):
            raise ParseError("expected JSON, got HTML/XML")
        if not start.startswith((b"{", b"[")):  # the Spot feed is wrapped in callback(...)
            stream.seek(0)
            return self._parse_small(stream.read().decode("utf-8", "replace"), page)
        try:
            head, first_container = _head(page.open())
            if first_container == "config":
                stream = page.open()
                return self._parse_small(stream.read().decode("utf-8", "replace"), page)
            return self._parse_offer(page, head)
        except ijson.JSONError as exc:
            raise _invalid(exc) from None

    def _parse_small(self, text: str, page: Page) -> list[PriceRecord]:
        """A small document read whole: the Spot feed (JSON or JSONP)."""
        body = text.strip()
        match = _JSONP.match(body)
        if match and not body.startswith("{"):
            body = match.group("body")
        try:
            data = json.loads(body)
        except json.JSONDecodeError as exc:
            raise ParseError(f"invalid JSON: {exc.msg} at line {exc.lineno}") from None
        if isinstance(data, dict) and "config" in data and "products" not in data:
            return self._parse_spot(data)
        offer = Page(url=page.url, status=page.status, body=body, meta=page.meta)
        try:
            return self._parse_offer(offer, _head(offer.open())[0])
        except ijson.JSONError as exc:
            raise _invalid(exc) from None

    # --- offer file -----------------------------------------------------------------------
    def _parse_offer(self, page: Page, head: dict[str, Any] | None) -> list[PriceRecord]:
        """Records of an offer file, in three streaming passes over ``page.open()``.

        1. ``products``: only the GPU products the filter keeps are held (tens, of ~10^5).
        2. ``terms.OnDemand`` and 3. ``terms.Reserved``: only the terms of those SKUs are read.
        Each pass holds one SKU's entry at a time, so memory does not grow with the file. The
        records come out in product order, on-demand then reserved, as from a whole-file read.
        """
        if head is None:
            raise ParseError("not an AmazonEC2 offer file (offerCode missing or different)")
        offer_code = head.get("offerCode", _ABSENT)
        if offer_code is _ABSENT:  # not among the members before products: look further
            offer_code = next(ijson.items(page.open(), "offerCode"), None)
        if offer_code != "AmazonEC2":
            raise ParseError("not an AmazonEC2 offer file (offerCode missing or different)")

        wanted: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}
        seen = 0
        for sku, product in ijson.kvitems(page.open(), "products", buf_size=READ_CHUNK):
            seen += 1
            kept = self._product(sku, product, page)
            if kept is not None:
                wanted[sku] = kept
        if not seen and _kind_at(page.open(), "products") != "start_map":
            raise ParseError("offer file lacks 'products' or 'terms'")

        on_demand: dict[str, tuple[Decimal, str]] = {}
        seen = 0
        for sku, offers in ijson.kvitems(page.open(), "terms.OnDemand", buf_size=READ_CHUNK):
            seen += 1
            if sku in wanted:
                price = self._on_demand(sku, offers)
                if price is not None:
                    on_demand[sku] = price
        if not seen:
            if _kind_at(page.open(), "terms") != "start_map":
                raise ParseError("offer file lacks 'products' or 'terms'")
            if _kind_at(page.open(), "terms.OnDemand") != "start_map":
                raise ParseError("offer file lacks terms.OnDemand")

        reserved: dict[str, dict[str, tuple[Decimal, str, str]]] = {}
        if wanted:  # a file without GPU products needs no reserved terms
            seen = 0
            for sku, offers in ijson.kvitems(page.open(), "terms.Reserved", buf_size=READ_CHUNK):
                seen += 1
                if sku in wanted:
                    reserved[sku] = self._reserved(sku, offers)
            if not seen and _kind_at(page.open(), "terms.Reserved") not in _EMPTY_RESERVED:
                raise ParseError("terms.Reserved is not an object")

        records: list[PriceRecord] = []
        for sku, (common, extra) in wanted.items():
            if sku in on_demand:
                amount, currency = on_demand[sku]
                records.append(
                    PriceRecord(
                        **common,
                        pricing_model="on_demand",
                        amount=amount,
                        currency=currency,
                        extra=extra,
                    )
                )
            for length, (amount, currency, option) in reserved.get(sku, {}).items():
                records.append(
                    PriceRecord(
                        **common,
                        pricing_model=TERM_MODEL[length],
                        amount=amount,
                        currency=currency,
                        extra={**extra, "purchase_option": option, "offering_class": "standard"},
                    )
                )
        return records

    def _product(
        self, sku: str, product: Any, page: Page
    ) -> tuple[dict[str, Any], dict[str, Any]] | None:
        """A product's record fields and extra when the filter keeps it, else None."""
        if not isinstance(product, dict):
            raise ParseError(f"product {sku} is not an object")
        attrs = product.get("attributes")
        if not isinstance(attrs, dict):
            raise ParseError(f"product {sku} has no attributes")
        if product.get("productFamily") == "Compute Instance":
            missing = REQUIRED_ATTRIBUTES - attrs.keys()
            if missing:
                # A renamed attribute would otherwise filter every product out silently.
                raise ParseError(f"product {sku} lacks attribute(s) {', '.join(sorted(missing))}")
        if not self._wanted(product, attrs):
            return None
        instance_type = attrs["instanceType"]
        gpu_name = gpu_for(instance_type)
        if gpu_name is None:
            return None
        gpu_count = _decimal(attrs.get("gpu"), f"gpu count of {instance_type}")
        region = attrs.get("regionCode") or page.meta.get("region") or ""
        if not region:
            raise ParseError(f"product {sku} has no regionCode and the page names no region")
        common = {
            "instance_type": instance_type,
            "gpu_name": gpu_name,
            "gpu_count": gpu_count,
            "region": region,
            "vcpus": self._vcpus(attrs),
            "ram_gib": self._memory(attrs),
        }
        extra = {"sku": sku}
        if attrs.get("gpuMemory") not in (None, "", "NA"):
            extra["gpu_memory"] = attrs["gpuMemory"]
        return common, extra

    @staticmethod
    def _wanted(product: dict[str, Any], attrs: dict[str, Any]) -> bool:
        """Linux, shared tenancy, no pre-installed software, no licence, capacity 'Used', has GPUs."""
        gpu = str(attrs.get("gpu", "")).strip()
        is_instance = product.get("productFamily") == "Compute Instance"
        if is_instance and not gpu and gpu_for(attrs["instanceType"]) is not None:
            raise ParseError(f"{attrs['instanceType']} has no 'gpu' attribute (renamed?)")
        return (
            is_instance
            and attrs.get("operatingSystem") == "Linux"
            and attrs.get("tenancy") == "Shared"
            and attrs.get("preInstalledSw") == "NA"
            and attrs.get("capacitystatus") == "Used"
            and attrs.get("licenseModel") == "No License required"
            and gpu not in ("", "NA", "0")
        )

    @staticmethod
    def _vcpus(attrs: dict[str, Any]) -> int | None:
        value = str(attrs.get("vcpu", "")).strip()
        return int(value) if value.isdigit() else None

    @staticmethod
    def _memory(attrs: dict[str, Any]) -> float | None:
        match = _MEMORY.match(str(attrs.get("memory", "")))
        return float(match.group(1).replace(",", "")) if match else None

    @staticmethod
    def _dimensions(sku: str, term: Any) -> list[dict[str, Any]]:
        if not isinstance(term, dict) or not isinstance(term.get("priceDimensions"), dict):
            raise ParseError(f"a term of {sku} has no priceDimensions")
        dims = list(term["priceDimensions"].values())
        for dim in dims:
            if not isinstance(dim, dict) or not isinstance(dim.get("pricePerUnit"), dict):
                raise ParseError(f"a price dimension of {sku} has no pricePerUnit")
        return dims

    @staticmethod
    def _price(dim: dict[str, Any], sku: str) -> tuple[Decimal, str]:
        per_unit = dim["pricePerUnit"]
        currency = "USD" if "USD" in per_unit else next(iter(per_unit), "")
        if not currency:
            raise ParseError(f"a price dimension of {sku} has an empty pricePerUnit")
        return _decimal(per_unit[currency], f"price of {sku}"), currency

    def _on_demand(self, sku: str, offers: Any) -> tuple[Decimal, str] | None:
        if offers is None:
            return None
        if not isinstance(offers, dict):
            raise ParseError(f"terms.OnDemand[{sku}] is not an object")
        for term in offers.values():
            for dim in self._dimensions(sku, term):
                if dim.get("unit") == "Hrs":
                    return self._price(dim, sku)
        raise ParseError(f"on-demand term of {sku} has no hourly (Hrs) price")

    def _reserved(self, sku: str, offers: Any) -> dict[str, tuple[Decimal, str, str]]:
        """Standard reservations per term length: No Upfront hourly, else All Upfront / term hours."""
        if offers is None:
            return {}
        if not isinstance(offers, dict):
            raise ParseError(f"terms.Reserved[{sku}] is not an object")
        found: dict[tuple[str, str], tuple[Decimal, str]] = {}
        for term in offers.values():
            attrs = term.get("termAttributes") if isinstance(term, dict) else None
            if not isinstance(attrs, dict):
                raise ParseError(f"a reserved term of {sku} has no termAttributes")
            length = attrs.get("LeaseContractLength")
            option = attrs.get("PurchaseOption")
            if attrs.get("OfferingClass") != "standard" or length not in TERM_HOURS:
                continue
            dims = self._dimensions(sku, term)
            if option == "No Upfront":
                hourly = [d for d in dims if d.get("unit") == "Hrs"]
                if not hourly:
                    raise ParseError(f"No Upfront term of {sku} has no hourly price")
                found[(length, option)] = self._price(hourly[0], sku)
            elif option == "All Upfront":
                upfront = [d for d in dims if d.get("unit") == "Quantity"]
                if not upfront:
                    raise ParseError(f"All Upfront term of {sku} has no upfront fee")
                fee, currency = self._price(upfront[0], sku)
                # All Upfront also carries an Hrs dimension, normally 0; add it to stay exact.
                recurring = sum(
                    (self._price(d, sku)[0] for d in dims if d.get("unit") == "Hrs"), Decimal(0)
                )
                amount = (fee / TERM_HOURS[length] + recurring).quantize(HOURLY_QUANTUM)
                found[(length, option)] = (amount, currency)
        result: dict[str, tuple[Decimal, str, str]] = {}
        for length in TERM_HOURS:
            for option in ("No Upfront", "All Upfront"):
                if (length, option) in found:
                    amount, currency = found[(length, option)]
                    result[length] = (amount, currency, option)
                    break
        return result

    # --- Spot feed --------------------------------------------------------------------------
    def _parse_spot(self, data: dict[str, Any]) -> list[PriceRecord]:
        config = data.get("config")
        regions = config.get("regions") if isinstance(config, dict) else None
        if not isinstance(regions, list):
            raise ParseError("Spot feed lacks config.regions")
        records: list[PriceRecord] = []
        for entry in regions:
            if not isinstance(entry, dict) or "region" not in entry:
                raise ParseError("a Spot feed region has no 'region'")
            named: str = entry["region"]
            region = SPOT_REGION_ALIASES.get(named, named)
            for group in entry.get("instanceTypes") or []:
                for size in group.get("sizes") or []:
                    record = self._spot_record(region, size)
                    if record is not None:
                        records.append(record)
        return records

    def _spot_record(self, region: str, size: Any) -> PriceRecord | None:
        if not isinstance(size, dict) or "size" not in size:
            raise ParseError(f"a Spot feed size in {region} has no 'size'")
        instance_type = size["size"]
        gpu_name = gpu_for(instance_type)
        counts = SPOT_GPU_COUNTS.get(_family(instance_type))
        if gpu_name is None or counts is None:
            return None
        for column in size.get("valueColumns") or []:
            if column.get("name") != "linux":
                continue
            prices = column.get("prices")
            if not isinstance(prices, dict) or "USD" not in prices:
                raise ParseError(f"Spot price of {instance_type} in {region} has no USD value")
            text = str(prices["USD"]).strip()
            if text.upper().startswith("N/A"):
                return None  # "N/A*": not offered as Spot there
            default, per_size = counts
            count = per_size.get(instance_type.split(".", 1)[1], default)
            return PriceRecord(
                instance_type=instance_type,
                gpu_name=gpu_name,
                gpu_count=Decimal(count),
                region=region,
                pricing_model="spot",
                amount=_decimal(text, f"Spot price of {instance_type}"),
                currency="USD",
                extra={"source": "spot_feed"},
            )
        return None
