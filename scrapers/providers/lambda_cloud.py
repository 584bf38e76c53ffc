"""Lambda (lambda.ai): on-demand GPU instance prices.

Two sources, one price list. With ``credentials["lambda_api_key"]`` the Cloud API
``GET /api/v1/instance-types`` (JSON, price in US cents per instance-hour, regions with capacity
now); without it the public pricing page (HTML tables, price in USD per GPU-hour, the GPU count
only in the tab label). Lambda charges one price per instance type in every region, so a price
is repeated for each region the type is offered in. See docs/providers/lambda.md.

The scraper key is ``lambda``; the module is ``lambda_cloud`` because ``lambda`` is a Python
keyword and a module of that name could not be imported by name.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from decimal import Decimal, InvalidOperation
from typing import Any, ClassVar
from urllib.parse import urlsplit, urlunsplit

from bs4 import BeautifulSoup, Tag

from scrapers.base import HttpClient, Page, ParseError, PriceRecord, Scraper, register

HTML_PATH = "/service/gpu-cloud"
API_PATH = "/api/v1/instance-types"

# Regions each instance type is offered in, from fixtures/providers/lambda.yaml (prices section).
# The HTML page names no regions, and the API lists only regions with capacity *right now*, so
# this table keeps a price in place while a type is momentarily sold out.
DEFAULT_REGIONS: dict[str, tuple[str, ...]] = {
    "gpu_8x_b200_sxm6": ("us-midwest-2",),
    "gpu_4x_b200_sxm6": ("us-midwest-2",),
    "gpu_2x_b200_sxm6": ("us-midwest-2",),
    "gpu_1x_b200_sxm6": ("us-midwest-2",),
    "gpu_8x_h100_sxm5": ("us-west-3", "us-east-2", "us-south-1"),
    "gpu_4x_h100_sxm5": ("us-east-2", "us-south-1"),
    "gpu_2x_h100_sxm5": ("us-east-2", "us-south-1"),
    "gpu_1x_h100_sxm5": ("us-east-1", "us-east-2", "us-south-1"),
    "gpu_1x_h100_pcie": ("us-west-3", "us-west-1", "us-west-2"),
    "gpu_1x_gh200": ("us-east-3",),
    "gpu_8x_a100_80gb_sxm4": ("us-midwest-1", "us-east-1"),
    "gpu_8x_a100": (
        "us-east-1",
        "us-west-1",
        "us-west-2",
        "europe-central-1",
        "me-west-1",
        "asia-northeast-1",
        "asia-northeast-2",
    ),
    "gpu_1x_a100_sxm4": ("us-east-1", "us-west-2", "asia-south-1", "us-west-3"),
    "gpu_1x_a100": ("us-south-1",),
    "gpu_2x_a100": ("us-south-1",),
    "gpu_4x_a100": ("us-south-1",),
    "gpu_1x_a6000": ("us-south-1",),
    "gpu_2x_a6000": ("us-south-1",),
    "gpu_4x_a6000": ("us-south-1",),
    "gpu_8x_v100": ("us-south-1",),
    "gpu_1x_a10": ("us-east-1", "us-west-1", "us-west-2"),
}
# A type the table does not know yet (new on the page): its price is the same everywhere, so it
# is filed under Lambda's first region and flagged ``region_assumed`` for a curator to place.
FALLBACK_REGIONS: tuple[str, ...] = ("us-east-1",)

# Page label (as in the row's first cell) and VRAM per GPU -> the API's name stem. The page never
# shows API names; these are Lambda's instance type names for the same shapes.
HTML_NAME_STEMS: dict[tuple[str, int], str] = {
    ("nvidia b200 sxm6", 180): "b200_sxm6",
    ("nvidia h100 sxm", 80): "h100_sxm5",
    ("nvidia h100 pcie", 80): "h100_pcie",
    ("nvidia gh200", 96): "gh200",
    ("nvidia a100 sxm", 80): "a100_80gb_sxm4",
    ("nvidia a100 sxm", 40): "a100_sxm4",
    ("nvidia a100 pcie", 40): "a100",
    ("nvidia a6000", 48): "a6000",
    ("nvidia rtx a6000", 48): "a6000",
    ("nvidia tesla v100", 16): "v100",
    ("nvidia a10", 24): "a10",
    ("nvidia quadro rtx 6000", 24): "rtx6000",
}
# Lambda's oldest 8x A100 40 GB shape is plain "gpu_8x_a100" while its 1x sibling is
# "gpu_1x_a100_sxm4": the name stem is not uniform across counts.
HTML_NAME_EXCEPTIONS: dict[tuple[str, int, int], str] = {
    ("nvidia a100 sxm", 40, 8): "gpu_8x_a100",
}

_MONEY = re.compile(r"\$\s*([0-9][0-9,]*(?:\.[0-9]+)?)")
_NUMBER = re.compile(r"([0-9][0-9,]*(?:\.[0-9]+)?)")
_COUNT = re.compile(r"^\s*(\d+)\s*x\b", re.IGNORECASE)
_PRICING_TABLE_CLASS = re.compile(r"^_?pricingTable")
_ISLANDS = re.compile(r"\bvar\s+newIslands\s*=\s*")
_SIZE_UNITS_GIB = {"gib": Decimal(1), "gb": Decimal(1), "tib": Decimal(1024), "tb": Decimal(1024)}


def _clean(text: str) -> str:
    return " ".join(text.split())


def _strip_source_url(url: str) -> str:
    """The page URL without its query (never store credentials or tokens with a price)."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))


@register
class LambdaScraper(Scraper):
    """Lambda on-demand prices from the Cloud API (with a key) or the public pricing page."""

    key = "lambda"
    provider_slug = "lambda"
    base_url = "https://lambda.ai"
    # The API lives on another host; an overridden base_url (staging, loopback) serves both.
    api_base_url: ClassVar[str] = "https://cloud.lambda.ai"
    description = "Lambda Cloud API instance-types (with a key) or the lambda.ai pricing page"

    def __init__(self, *, base_url: str | None = None, **kwargs: Any) -> None:
        super().__init__(base_url=base_url, **kwargs)
        self.api_base = self.base_url if base_url else type(self).api_base_url.rstrip("/")

    def pricing_models(self) -> frozenset[str]:
        """Lambda publishes on-demand prices only (reserved clusters are quoted by sales)."""
        return frozenset({"on_demand"})

    def fetch(self, client: HttpClient) -> Iterator[Page]:
        """One page: the API listing when a key is configured, else the public pricing page."""
        api_key = self.credential("lambda_api_key")
        if api_key:
            yield client.get(
                self.api_base + API_PATH,
                headers={"Authorization": f"Bearer {api_key}", "Accept": "application/json"},
                meta={"format": "api"},
            )
        else:
            yield client.get(
                self.base_url + HTML_PATH,
                headers={"Accept": "text/html"},
                meta={"format": "html"},
            )

    def parse(self, page: Page) -> list[PriceRecord]:
        """Records of an API listing or of the pricing page (chosen by meta, else by sniffing)."""
        kind = page.meta.get("format")
        if kind is None:
            kind = "api" if page.body.lstrip().startswith("{") else "html"
        if kind == "api":
            return self._parse_api(page)
        return self._parse_html(page)

    # --- Cloud API ---------------------------------------------------------------------------
    def _parse_api(self, page: Page) -> list[PriceRecord]:
        try:
            # Decimals straight from the text: cents and GiB must not pass through binary floats.
            document = json.loads(page.body, parse_float=Decimal)
        except json.JSONDecodeError as exc:
            raise ParseError(f"lambda API: not JSON ({exc.msg} at {exc.pos})") from exc
        if not isinstance(document, dict):
            raise ParseError("lambda API: expected a JSON object")
        if "error" in document:  # Lambda's error envelope: {"error": {"code", "message"}}
            error = document["error"] if isinstance(document["error"], dict) else {}
            raise ParseError(
                f"lambda API error {error.get('code', '?')}: {error.get('message', '')}"
            )
        data = document.get("data")
        if not isinstance(data, dict):
            raise ParseError("lambda API: no 'data' object of instance types")

        source_url = _strip_source_url(page.url)
        records: list[PriceRecord] = []
        for key, entry in data.items():
            try:
                spec = entry["instance_type"]
                name = spec["name"]
                cents = spec["price_cents_per_hour"]
            except (KeyError, TypeError) as exc:
                raise ParseError(f"lambda API: {key!r} lacks field {exc}") from exc
            # Optional: the documented example and real answers omit specs (and gpus) at times;
            # the GPU count is then read from the type name ("gpu_8x_h100_sxm5").
            specs = spec.get("specs") if isinstance(spec.get("specs"), dict) else {}
            capacity = entry.get("regions_with_capacity_available") or []
            if not isinstance(capacity, list):
                raise ParseError(
                    f"lambda API: {name}: regions_with_capacity_available is not a list"
                )
            gpus = specs.get("gpus")
            if gpus is None:
                gpus = _count_from_name(name)
                if gpus is None:
                    self.note_unmatched("instance", name, "no specs.gpus and no count in the name")
                    continue
            if not gpus:
                self.note_skipped(name, "no GPUs (CPU-only type)")
                continue  # CPU-only instance types share the listing; not a GPU price
            try:
                amount = (Decimal(cents) / 100).quantize(Decimal("0.01"))
            except (InvalidOperation, TypeError) as exc:
                raise ParseError(f"lambda API: {name}: price {cents!r} is not a number") from exc
            available = [r["name"] for r in capacity if isinstance(r, dict) and r.get("name")]
            extra_base = {
                "source_url": source_url,
                "source": "api",
                "description": spec.get("description", ""),
                "storage_gib": _json_number(specs.get("storage_gib")),
                "price_cents_per_hour": _json_number(cents),
            }
            records.extend(
                self._records_for(
                    name=name,
                    gpu_name=spec.get("gpu_description") or _gpu_from_name(name),
                    gpu_count=Decimal(gpus),
                    amount=amount,
                    vcpus=_int_or_none(specs.get("vcpus")),
                    ram_gib=_float_or_none(specs.get("memory_gib")),
                    capacity=available,
                    extra=extra_base,
                )
            )
        return records

    # --- Public pricing page -----------------------------------------------------------------
    def _parse_html(self, page: Page) -> list[PriceRecord]:
        if "</html>" not in page.body[-2000:].lower():
            # A page cut short between tabs would still parse, minus the shapes that never came.
            raise ParseError("lambda page: truncated (no closing </html>)")
        soup = BeautifulSoup(page.body, "html.parser")
        section = _instances_section(soup)
        if section is not None:
            tables = section.find_all("table", class_=_PRICING_TABLE_CLASS)
            if not tables:
                raise ParseError("lambda page: 'Instances pricing' has no pricing table")
            counted = [(table, _tab_gpu_count(soup, table)) for table in tables]
        else:
            # The page also ships its tabs as hydration data ("var newIslands = [...]": a
            # TabsIsland whose tabs carry the table HTML); read them when no rendered section is.
            counted = self._island_tables(soup)
            if not counted:
                raise ParseError("lambda page: no 'Instances pricing' section (layout changed?)")

        source_url = _strip_source_url(page.url)
        records: list[PriceRecord] = []
        seen: set[tuple[str, str]] = set()
        for table, gpu_count in counted:
            headers = [_clean(th.get_text(" ")) for th in table.select("thead th")]
            for row in table.select("tbody tr"):
                cells = _row_cells(row, headers)
                label = _clean(cells.get("label", ""))
                price_key = next((k for k in cells if k.upper().startswith("PRICE")), None)
                if not label or price_key is None:
                    raise ParseError(
                        f"lambda page: row without a label or a price column: {label!r}"
                    )
                price = _money(cells[price_key])
                if price is None:
                    continue  # "Contact us", "Coming soon": no published price
                vram = _int_or_none(_first_number(cells.get("VRAM/GPU", "")))
                if vram is None:
                    raise ParseError(f"lambda page: {label}: no VRAM/GPU figure")
                per_gpu = "GPU" in price_key.upper()
                amount = (price * gpu_count if per_gpu else price).quantize(Decimal("0.01"))
                name, derived = _instance_name(label, vram, gpu_count)
                ram_gib = _size_gib(cells.get("RAM", ""))
                for record in self._records_for(
                    name=name,
                    # The page writes the model and its memory in two cells; together they tell
                    # A100 40 GB from 80 GB ("NVIDIA A100 SXM 40GB").
                    gpu_name=label if re.search(r"\d+\s*GB", label) else f"{label} {vram}GB",
                    gpu_count=Decimal(gpu_count),
                    amount=amount,
                    vcpus=_int_or_none(_first_number(cells.get("vCPUs", ""))),
                    ram_gib=float(ram_gib) if ram_gib is not None else None,
                    capacity=[],
                    extra={
                        "source_url": source_url,
                        "source": "html",
                        "usd_per_gpu_hour": float(price) if per_gpu else None,
                        "storage": _clean(cells.get("STORAGE", "")),
                        **({"name_derived": True} if derived else {}),
                    },
                ):
                    # The same shape can appear twice on the page (repeated across tabs).
                    if (record.instance_type, record.region) in seen:
                        continue
                    seen.add((record.instance_type, record.region))
                    records.append(record)
        return records

    def _island_tables(self, soup: BeautifulSoup) -> list[tuple[Tag, int]]:
        """(pricing table, GPUs per instance) from the TabsIsland hydration scripts.

        Only islands whose every tab is a GPU count ("8x", "4x", ...) are instance tabs; a table
        without a VRAM/GPU column (the 1-Click Clusters one) is noted and left out.
        """
        counted: list[tuple[Tag, int]] = []
        for script in soup.find_all("script"):
            text = script.string or ""
            for match in _ISLANDS.finditer(text):
                try:
                    islands, _ = json.JSONDecoder().raw_decode(text, match.end())
                except json.JSONDecodeError as exc:
                    raise ParseError(f"lambda page: island data is not JSON ({exc.msg})") from exc
                for island in islands if isinstance(islands, list) else []:
                    props = island.get("props") if isinstance(island, dict) else None
                    tabs = props.get("tabs") if isinstance(props, dict) else None
                    if not isinstance(tabs, list) or not tabs:
                        continue
                    labels = [str(t.get("label", "")) if isinstance(t, dict) else "" for t in tabs]
                    counts = [_COUNT.fullmatch(label.strip()) for label in labels]
                    if not all(counts):
                        continue  # not the instance-size tabs
                    for tab, label, found in zip(tabs, labels, counts, strict=True):
                        html = BeautifulSoup(str(tab.get("contentHtml") or ""), "html.parser")
                        count = int(found.group(1)) if found else 0
                        for table in html.find_all("table", class_=_PRICING_TABLE_CLASS):
                            columns = [_clean(th.get_text(" ")) for th in table.select("thead th")]
                            if "VRAM/GPU" not in columns:
                                self.note_skipped(f"{label} tab", "table without a VRAM/GPU column")
                                continue
                            counted.append((table, count))
        return counted

    # --- shared ------------------------------------------------------------------------------
    def _records_for(
        self,
        *,
        name: str,
        gpu_name: str,
        gpu_count: Decimal,
        amount: Decimal,
        vcpus: int | None,
        ram_gib: float | None,
        capacity: list[str],
        extra: dict[str, Any],
    ) -> list[PriceRecord]:
        """One record per region: the type's usual regions plus any with capacity now."""
        known = DEFAULT_REGIONS.get(name)
        regions = list(known or ())
        regions += [code for code in capacity if code not in regions]
        assumed = not regions
        if assumed:
            regions = list(FALLBACK_REGIONS)
        records = []
        for region in regions:
            region_extra = dict(extra)
            if extra.get("source") == "api":
                region_extra["capacity_available"] = region in capacity
            if assumed:
                region_extra["region_assumed"] = True
            records.append(
                PriceRecord(
                    instance_type=name,
                    gpu_name=gpu_name,
                    gpu_count=gpu_count,
                    region=region,
                    pricing_model="on_demand",
                    amount=amount,
                    currency="USD",
                    unit="hour",
                    vcpus=vcpus,
                    ram_gib=ram_gib,
                    extra=region_extra,
                )
            )
        return records


_NAME_COUNT = re.compile(r"^gpu_(\d+)x_(.+)$")


def _count_from_name(name: str) -> int | None:
    """GPUs per instance from Lambda's type name: gpu_8x_h100_sxm5 -> 8."""
    match = _NAME_COUNT.match(name)
    return int(match.group(1)) if match else None


def _gpu_from_name(name: str) -> str:
    """The GPU part of a type name (gpu_1x_a100_sxm4 -> "a100 sxm4"), for the alias lookup."""
    match = _NAME_COUNT.match(name)
    return match.group(2).replace("_", " ") if match else name


def _instances_section(soup: BeautifulSoup) -> Tag | None:
    """The part of the page under the 'Instances pricing' heading (not 1-Click Clusters)."""
    for heading in soup.find_all(["h1", "h2", "h3"]):
        if re.search(r"\binstances\s+pricing\b", _clean(heading.get_text(" ")), re.IGNORECASE):
            return heading.find_parent("section") or heading.parent
    return None


def _tab_gpu_count(soup: BeautifulSoup, table: Tag) -> int:
    """GPUs per instance: only the tab a table sits in says it ('8x', '4x', ...)."""
    panel = table.find_parent(attrs={"role": "tabpanel"})
    if panel is None:
        raise ParseError("lambda page: pricing table outside a tab panel (no GPU count)")
    label = ""
    if panel.get("aria-labelledby"):
        tab = soup.find(id=panel["aria-labelledby"])
        label = _clean(tab.get_text(" ")) if tab else ""
    match = _COUNT.match(label) or _COUNT.match(str(panel.get("data-tab", "")))
    if not match:
        raise ParseError(f"lambda page: tab label {label!r} gives no GPU count")
    return int(match.group(1))


def _row_cells(row: Tag, headers: list[str]) -> dict[str, str]:
    """Cells by their data-label (falling back to the header), with strike-through prices gone."""
    for struck in row.find_all(["s", "del", "strike"]):
        struck.decompose()  # the old price shown next to a discounted one
    cells: dict[str, str] = {}
    for index, cell in enumerate(row.find_all(["th", "td"], recursive=False)):
        if cell.name == "th" or index == 0:
            cells["label"] = cell.get_text(" ")
            continue
        key = cell.get("data-label") or (headers[index] if index < len(headers) else f"col{index}")
        cells[_clean(str(key)).replace(" ", "")] = cell.get_text(" ")
    if "label" not in cells or not _clean(cells["label"]):
        cells["label"] = str(row.get("data-plan", ""))
    return cells


def _instance_name(label: str, vram: int, gpu_count: int) -> tuple[str, bool]:
    """Lambda's API name for a page row, and whether it had to be derived."""
    folded = _clean(label.replace("*", "")).lower()
    exception = HTML_NAME_EXCEPTIONS.get((folded, vram, gpu_count))
    if exception:
        return exception, False
    stem = HTML_NAME_STEMS.get((folded, vram))
    if stem:
        return f"gpu_{gpu_count}x_{stem}", False
    slug = re.sub(r"[^a-z0-9]+", "_", folded.removeprefix("nvidia ")).strip("_")
    return f"gpu_{gpu_count}x_{slug}", True


def _money(text: str) -> Decimal | None:
    match = _MONEY.search(text)
    return Decimal(match.group(1).replace(",", "")) if match else None


def _first_number(text: str) -> str | None:
    match = _NUMBER.search(text)
    return match.group(1).replace(",", "") if match else None


def _size_gib(text: str) -> Decimal | None:
    """'2900 GiB', '1.8 TiB' -> GiB."""
    match = re.search(r"([0-9][0-9,]*(?:\.[0-9]+)?)\s*([GT]i?B)", text, re.IGNORECASE)
    if not match:
        return None
    return Decimal(match.group(1).replace(",", "")) * _SIZE_UNITS_GIB[match.group(2).lower()]


def _int_or_none(value: Any) -> int | None:
    try:
        return int(Decimal(str(value)))
    except (InvalidOperation, TypeError, ValueError):
        return None


def _float_or_none(value: Any) -> float | None:
    try:
        return float(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def _json_number(value: Any) -> float | int | None:
    """A number fit for the JSON ``extra`` column (Decimal is not JSON)."""
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    return value if isinstance(value, int | float) else None
