"""Google Cloud GPU machine prices: Cloud Billing Catalog API with a key, else the public GPU page.

With ``credentials["gcp_api_key"]``: ``GET https://cloudbilling.googleapis.com/v1/services/
6F81-5844-456A/skus`` (Compute Engine), paginated by ``nextPageToken``. The catalog prices
*components* (vCPU-hours, GiB-hours of memory, GPU-hours), so an instance price is a sum:

* N1 + attached GPUs (named ``n1-standard-8+1xT4`` as in the catalog fixtures):
  N1 core x vCPUs + N1 RAM x GiB + GPU x count;
* A2, A3, G2: family core x vCPUs + family RAM x GiB + GPU x count (their GPUs are billed as
  separate GPU SKUs too).

Those components can sit on different API pages, so ``fetch`` joins the pages into one document
of the API's own shape before ``parse`` sees it: page by page, keeping only the SKUs ``parse``
reads (GPU, core and RAM components; most of the catalog is disks, network and licences).

Without a key: the public page ``https://cloud.google.com/compute/gpus-pricing`` (its price table
is served in an iframe ``*.frame`` document; cells carry one attribute per region code). That page
prices GPUs only, so the fallback yields per-GPU attachment records (``extra["component"] ==
"gpu_only"``), not whole machines. docs/providers/gcp.md has the details.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from decimal import Decimal, InvalidOperation
from typing import Any, ClassVar
from urllib.parse import urlsplit

from bs4 import BeautifulSoup, Tag

from scrapers.base import FetchError, HttpClient, Page, ParseError, PriceRecord, Scraper, register

COMPUTE_SERVICE = "6F81-5844-456A"
SKUS_PATH = f"/v1/services/{COMPUTE_SERVICE}/skus"
GPU_PAGE_PATH = "/compute/gpus-pricing"
MAX_PAGES = 100  # Compute Engine has a few thousand SKUs; 5,000 a page

USAGE_MODEL = {
    "OnDemand": "on_demand",
    "Preemptible": "spot",  # Spot VMs are billed on the "Preemptible" SKUs
    "Commit1Yr": "reserved_1y",
    "Commit3Yr": "reserved_3y",
}
MODEL_ORDER = ("on_demand", "spot", "reserved_1y", "reserved_3y")

# SKU description stem -> priced component. Descriptions read "<stem> running in <place>",
# "Spot Preemptible <stem> running in <place>", "<GPU stem> attached to Spot Preemptible VMs
# running in <place>" or "Commitment v1: <stem> in <place> for 1 Year". Stems are compared
# folded (``_fold``: lower case, a leading "Nvidia " and "Tesla " dropped), because Google names
# newer GPUs without the vendor ("H200 141GB GPU", real catalog 2025-2026) and older ones with it
# ("Nvidia Tesla T4 GPU"). Stems not listed here (custom and sole-tenant cores, virtual-workstation
# GPUs, ...) are ignored; GPU SKUs among them are reported as unmatched (see IGNORED_GPU_STEMS).
COMPONENTS: dict[str, str] = {
    "N1 Predefined Instance Core": "n1:core",
    "N1 Predefined Instance Ram": "n1:ram",
    "N1 Cpu": "n1:core",
    "N1 Ram": "n1:ram",
    "A2 Instance Core": "a2:core",
    "A2 Instance Ram": "a2:ram",
    "A2 Cpu": "a2:core",
    "A2 Ram": "a2:ram",
    "G2 Instance Core": "g2:core",
    "G2 Instance Ram": "g2:ram",
    "G2 Cpu": "g2:core",
    "G2 Ram": "g2:ram",
    "A3 Instance Core": "a3:core",
    "A3 Instance Ram": "a3:ram",
    # A3 Mega bills its host as "A3Plus" (real SKU names, e.g. "Spot Preemptible A3Plus Instance
    # Ram running in Tokyo"; github.com/mayocream/gcp-spot-pricing README).
    "A3Plus Instance Core": "a3mega:core",
    "A3Plus Instance Ram": "a3mega:ram",
    "A3 Mega Instance Core": "a3mega:core",
    "A3 Mega Instance Ram": "a3mega:ram",
    "A3Ultra Instance Core": "a3ultra:core",
    "A3Ultra Instance Ram": "a3ultra:ram",
    "A3 Ultra Instance Core": "a3ultra:core",
    "A3 Ultra Instance Ram": "a3ultra:ram",
    "Nvidia Tesla T4 GPU": "gpu:nvidia-tesla-t4",
    "Nvidia Tesla P4 GPU": "gpu:nvidia-tesla-p4",
    "Nvidia Tesla P100 GPU": "gpu:nvidia-tesla-p100",
    "Nvidia Tesla V100 GPU": "gpu:nvidia-tesla-v100",
    "Nvidia Tesla A100 GPU": "gpu:nvidia-tesla-a100",
    "Nvidia Tesla A100 80GB GPU": "gpu:nvidia-a100-80gb",
    "Nvidia L4 GPU": "gpu:nvidia-l4",
    "Nvidia H100 80GB GPU": "gpu:nvidia-h100-80gb",
    # A3 Mega's GPU has carried three names: "... Mega GPU", "H100 Mega 80GB" and "... Plus GPU".
    "Nvidia H100 80GB Mega GPU": "gpu:nvidia-h100-mega-80gb",
    "Nvidia H100 Mega 80GB GPU": "gpu:nvidia-h100-mega-80gb",
    "Nvidia H100 80GB Plus GPU": "gpu:nvidia-h100-mega-80gb",
    "H200 141GB GPU": "gpu:nvidia-h200-141gb",
}
# GPU SKUs left out on purpose: prices of a special booking mode or a licence, not of a VM's GPU.
IGNORED_GPU_STEMS = ("reserved ", "dws ", "calendar", "flex", "workstation", "commitment")


def _fold(stem: str) -> str:
    """A description stem compared loosely: lower case, no leading "Nvidia "/"Tesla "."""
    folded = " ".join(stem.split()).lower()
    for prefix in ("nvidia ", "tesla "):
        folded = folded.removeprefix(prefix)
    return folded


_FOLDED_COMPONENTS = {_fold(stem): component for stem, component in COMPONENTS.items()}
# Core and GPU SKUs are priced per hour, memory per GiB-hour; anything else would mis-add.
EXPECTED_UNIT = {"core": "h", "ram": "GiBy.h", "gpu": "h"}

# Machine types we price: name -> (core/RAM family, vCPUs, RAM GiB, GPU accelerator type, GPUs).
# Figures from the Compute Engine "GPU machine types" and "Accelerator-optimized machine family"
# docs. The GPU is named by its accelerator type (``nvidia-tesla-t4``), as gcloud and the API do.
MACHINE_TYPES: dict[str, tuple[str, int, int, str, int]] = {
    "n1-standard-4+1xT4": ("n1", 4, 15, "nvidia-tesla-t4", 1),
    "n1-standard-8+1xT4": ("n1", 8, 30, "nvidia-tesla-t4", 1),
    "n1-standard-8+2xT4": ("n1", 8, 30, "nvidia-tesla-t4", 2),
    "n1-standard-8+1xP4": ("n1", 8, 30, "nvidia-tesla-p4", 1),
    "n1-standard-8+1xP100": ("n1", 8, 30, "nvidia-tesla-p100", 1),
    "n1-standard-64+4xV100": ("n1", 64, 240, "nvidia-tesla-v100", 4),
    "n1-standard-64+8xV100": ("n1", 64, 240, "nvidia-tesla-v100", 8),
    "g2-standard-4": ("g2", 4, 16, "nvidia-l4", 1),
    "g2-standard-8": ("g2", 8, 32, "nvidia-l4", 1),
    "g2-standard-12": ("g2", 12, 48, "nvidia-l4", 1),
    "g2-standard-16": ("g2", 16, 64, "nvidia-l4", 1),
    "g2-standard-24": ("g2", 24, 96, "nvidia-l4", 2),
    "g2-standard-32": ("g2", 32, 128, "nvidia-l4", 1),
    "g2-standard-48": ("g2", 48, 192, "nvidia-l4", 4),
    "g2-standard-96": ("g2", 96, 384, "nvidia-l4", 8),
    "a2-highgpu-1g": ("a2", 12, 85, "nvidia-tesla-a100", 1),
    "a2-highgpu-2g": ("a2", 24, 170, "nvidia-tesla-a100", 2),
    "a2-highgpu-4g": ("a2", 48, 340, "nvidia-tesla-a100", 4),
    "a2-highgpu-8g": ("a2", 96, 680, "nvidia-tesla-a100", 8),
    "a2-megagpu-16g": ("a2", 96, 1360, "nvidia-tesla-a100", 16),
    "a2-ultragpu-1g": ("a2", 12, 170, "nvidia-a100-80gb", 1),
    "a2-ultragpu-2g": ("a2", 24, 340, "nvidia-a100-80gb", 2),
    "a2-ultragpu-4g": ("a2", 48, 680, "nvidia-a100-80gb", 4),
    "a2-ultragpu-8g": ("a2", 96, 1360, "nvidia-a100-80gb", 8),
    "a3-highgpu-1g": ("a3", 26, 234, "nvidia-h100-80gb", 1),
    "a3-highgpu-2g": ("a3", 52, 468, "nvidia-h100-80gb", 2),
    "a3-highgpu-4g": ("a3", 104, 936, "nvidia-h100-80gb", 4),
    "a3-highgpu-8g": ("a3", 208, 1872, "nvidia-h100-80gb", 8),
    "a3-megagpu-8g": ("a3mega", 208, 1872, "nvidia-h100-mega-80gb", 8),
    "a3-ultragpu-8g": ("a3ultra", 224, 2952, "nvidia-h200-141gb", 8),
}

# Where each machine type is offered: the regions with a zone that lists it (for an N1 attachment, a zone
# listing both the N1 host and that GPU count). The Billing Catalog is no guide: it lists GPU SKUs in regions
# that have no such GPU (A100 40GB in 39 regions, offered in 10), priced there at the 91% maximum Spot discount,
# so a sum of SKUs would price machines nobody can start. Source: SkyPilot's GCP zone listing, read per zone
# from the Compute Engine API, as committed to anycloud-sh/catalog gcp/vms.csv @62ff0a987 ("Update catalogs
# 2026-05-20"), the listing fixtures/tools/gcp_prices.py keeps gcp.yaml to (tests/scrapers/test_gcp.py checks
# that every region gcp.yaml prices a type in is listed here, so a refresh never marks those prices gone).
# fmt: off
_A2_STANDARD = frozenset({
    "asia-northeast1", "asia-northeast3", "asia-southeast1", "europe-west4", "me-west1", "us-central1",
    "us-east1", "us-west1", "us-west3", "us-west4",
})
_A2_MEGA = frozenset({"asia-southeast1", "europe-west4", "us-central1"})
_A2_ULTRA = frozenset({"asia-southeast1", "europe-west4", "us-central1", "us-east4", "us-east5"})
_A3_HIGH = frozenset({
    "asia-east1", "asia-northeast1", "asia-south1", "asia-south2", "asia-southeast1",
    "australia-southeast1", "europe-north1", "europe-west1", "europe-west3", "europe-west4",
    "europe-west9", "us-central1", "us-east4", "us-east5", "us-west1", "us-west4",
})
_A3_MEGA = frozenset({
    "asia-east1", "asia-northeast1", "asia-southeast1", "australia-southeast1", "europe-north1",
    "europe-west1", "europe-west3", "europe-west4", "us-central1", "us-east4", "us-east5", "us-west1",
    "us-west4",
})
_A3_ULTRA = frozenset({
    "asia-south1", "asia-south2", "europe-west1", "europe-west4", "us-central1", "us-east4", "us-east5",
    "us-south1", "us-west1",
})
_G2 = frozenset({
    "asia-east1", "asia-northeast1", "asia-northeast3", "asia-south1", "asia-southeast1", "europe-west1",
    "europe-west2", "europe-west3", "europe-west4", "europe-west6", "me-central2", "northamerica-northeast1",
    "northamerica-northeast2", "us-central1", "us-east1", "us-east4", "us-west1", "us-west4",
})
_N1_T4 = frozenset({
    "asia-east1", "asia-east2", "asia-northeast1", "asia-northeast3", "asia-south1", "asia-southeast1",
    "asia-southeast2", "australia-southeast1", "europe-central2", "europe-west1", "europe-west2",
    "europe-west3", "europe-west4", "me-west1", "northamerica-northeast1", "southamerica-east1",
    "us-central1", "us-east1", "us-east4", "us-west1", "us-west2", "us-west3", "us-west4",
})
_N1_P4 = frozenset({
    "asia-southeast1", "australia-southeast1", "europe-west4", "northamerica-northeast1", "us-central1",
    "us-east4", "us-west2",
})
_N1_P100 = frozenset({
    "asia-east1", "australia-southeast1", "europe-west1", "europe-west4", "us-central1", "us-east1",
    "us-west1",
})
_N1_V100 = frozenset({"asia-east1", "europe-west4", "us-central1", "us-east1", "us-west1"})
_OFFERED_BY_PREFIX = (  # machine-type name prefix -> regions
    ("a2-highgpu-", _A2_STANDARD), ("a2-megagpu-", _A2_MEGA), ("a2-ultragpu-", _A2_ULTRA),
    ("a3-highgpu-", _A3_HIGH), ("a3-megagpu-", _A3_MEGA), ("a3-ultragpu-", _A3_ULTRA), ("g2-", _G2),
)
_N1_OFFERED = {"T4": _N1_T4, "P4": _N1_P4, "P100": _N1_P100, "V100": _N1_V100}
# fmt: on


def _offered(name: str) -> frozenset[str]:
    """The regions ``name`` (a MACHINE_TYPES key) is offered in; KeyError for a type the table lacks."""
    if name.startswith("n1-"):
        return _N1_OFFERED[name.rsplit("x", 1)[1]]
    for prefix, regions in _OFFERED_BY_PREFIX:
        if name.startswith(prefix):
            return regions
    raise KeyError(name)


OFFERED_REGIONS: dict[str, frozenset[str]] = {name: _offered(name) for name in MACHINE_TYPES}

# Machine types Google does not sell on demand nor under commitments (Compute Engine docs,
# "Accelerator-optimized machine family", consumption options by machine type: A3 High with 1, 2
# or 4 GPUs is Spot or Flex-start only; dstackai/gpuhunt PR #176 of 2025-09-13 drops the same
# offers). The Billing Catalog still prices their cores, RAM and GPUs per resource, so a sum of
# those rates would be a price nobody can pay: only the pricing models listed here are recorded.
# fixtures/tools/gcp_prices.py reads this table too.
SOLD_ONLY_AS: dict[str, tuple[str, ...]] = {
    "a3-highgpu-1g": ("spot",),  # Spot or Flex-start (DWS) only
    "a3-highgpu-2g": ("spot",),
    "a3-highgpu-4g": ("spot",),
    # A3 Ultra is sold through reservations, Flex-start and Spot (same docs page): the sum of its
    # per-resource rates is what a reservation without a commitment is billed, not a VM anyone
    # can start on demand.
    "a3-ultragpu-8g": ("spot",),
    # A4 (B200) likewise: Spot, Flex-start or reservations, no on-demand (same docs page; dstackai/gpuhunt
    # PR #176 offers it as Spot only).
    "a4-highgpu-8g": ("spot",),
}

# Public GPU page: model as printed -> accelerator type (the record's instance_type). Models not
# listed (K80, virtual-workstation rows, ...) are skipped.
PAGE_MODELS: dict[str, str] = {
    "NVIDIA T4": "nvidia-tesla-t4",
    "NVIDIA P4": "nvidia-tesla-p4",
    "NVIDIA P100": "nvidia-tesla-p100",
    "NVIDIA V100": "nvidia-tesla-v100",
    "NVIDIA A100 40GB": "nvidia-tesla-a100",
    "NVIDIA A100 80GB": "nvidia-a100-80gb",
    "NVIDIA L4": "nvidia-l4",
    "NVIDIA H100 80GB": "nvidia-h100-80gb",
    "NVIDIA H100 80GB Mega": "nvidia-h100-mega-80gb",
    "NVIDIA H200 141GB": "nvidia-h200-141gb",
}
# Page column header (lower-case, starts with) -> pricing model.
PAGE_COLUMNS = (
    ("gpu price", "on_demand"),
    ("spot price", "spot"),
    ("1-year commitment", "reserved_1y"),
    ("3-year commitment", "reserved_3y"),
)

_DESCRIPTION = re.compile(
    r"^(?:Commitment v1: )?(?:Spot Preemptible |Preemptible )?(?P<stem>.+?)"
    r"(?: attached to (?:Spot )?Preemptible VMs)? (?:running )?in (?P<place>.+?)"
    r"(?: for [0-9]+ Years?)?$"
)
_DOLLARS = re.compile(r"\$\s*([0-9][0-9,]*(?:\.[0-9]+)?)")
_REGION_IN_PARENS = re.compile(r"\(([a-z]+-[a-z]+[0-9]+)\)")


def _money(unit_price: Any, what: str) -> tuple[Decimal, str]:
    """A google.type.Money ({currencyCode, units: "int64 as string", nanos}) as Decimal."""
    if not isinstance(unit_price, dict) or "currencyCode" not in unit_price:
        raise ParseError(f"{what}: unitPrice is not a Money object")
    try:
        units = Decimal(str(unit_price.get("units", "0") or "0"))
        nanos = Decimal(int(unit_price.get("nanos", 0) or 0))
    except (InvalidOperation, ValueError, TypeError):
        raise ParseError(f"{what}: unitPrice units/nanos are not numbers") from None
    return units + nanos / Decimal(1_000_000_000), str(unit_price["currencyCode"])


@register
class GcpScraper(Scraper):
    """Compute Engine GPU machines from the Billing Catalog API (key) or the public GPU page."""

    key = "gcp"
    provider_slug = "gcp"
    base_url = "https://cloudbilling.googleapis.com"
    # The public pages live on another host; with a custom base_url both come from base_url.
    public_base_url: ClassVar[str] = "https://cloud.google.com"
    description = (
        "Cloud Billing Catalog API (Compute Engine SKUs), else the public GPU pricing page"
    )
    default_regions = ("us-central1", "us-east4", "europe-west4", "asia-east1", "asia-northeast1")
    # Machine type -> regions it is offered in; a type not named here is priced wherever its SKUs are.
    offered_regions: ClassVar[dict[str, frozenset[str]]] = OFFERED_REGIONS

    @property
    def public_base(self) -> str:
        """Where the public pricing page is fetched from (base_url when it was overridden)."""
        if self.base_url != type(self).base_url.rstrip("/"):
            return self.base_url
        return self.public_base_url

    # --- fetch ----------------------------------------------------------------------------
    def fetch(self, client: HttpClient) -> Iterator[Page]:
        """The joined catalog (with an API key) or the GPU pricing table documents (without)."""
        api_key = self.credential("gcp_api_key")
        if api_key:
            yield from self._fetch_catalog(client, api_key)
        else:
            yield from self._fetch_public(client)

    def _fetch_catalog(self, client: HttpClient, api_key: str) -> Iterator[Page]:
        # The key goes in a header, not ?key=, so it never lands in stored page URLs or logs.
        headers = {"X-Goog-Api-Key": api_key}
        skus: list[Any] = []
        first: Page | None = None
        token = ""
        for number in range(1, MAX_PAGES + 1):
            params = {"currencyCode": "USD", "pageSize": "5000"}
            if token:
                params["pageToken"] = token
            page = client.get(
                self.base_url + SKUS_PATH, params=params, headers=headers, meta={"kind": "catalog"}
            )
            first = first or page
            try:
                data = self._load_json(page)
                # Only the SKUs parse() reads are kept (GPU, core and RAM components, and any
                # it would report): Compute Engine lists tens of thousands, most of them disks,
                # network and licences, so the catalog is never held whole.
                skus.extend(sku for sku in data["skus"] if self._sku_read(sku))
            except (ParseError, KeyError, TypeError):
                yield page  # cannot be joined; parse() will say what is wrong with it
                return
            token = data.get("nextPageToken") or ""
            if not token:
                joined = json.dumps({"skus": skus, "nextPageToken": ""})
                yield Page(
                    url=first.url,
                    status=page.status,
                    body=joined,
                    fetched_at=page.fetched_at,
                    content_type=page.content_type,
                    meta={"kind": "catalog", "pages": str(number)},
                )
                return
        raise FetchError(f"Cloud Billing catalog exceeded {MAX_PAGES} pages")

    def _fetch_public(self, client: HttpClient) -> Iterator[Page]:
        page = client.get(self.public_base + GPU_PAGE_PATH, meta={"kind": "gpu_page"})
        soup = BeautifulSoup(page.body, "html.parser")
        frames = [
            str(frame["src"])
            for frame in soup.find_all("iframe", src=True)
            if str(frame["src"]).split("?", 1)[0].endswith(".frame")
        ]
        if not frames:
            yield page  # table inline (or missing: parse() reports it)
            return
        for src in frames:
            yield client.get(self._public_url(src), meta={"kind": "gpu_page_frame"})

    def _public_url(self, src: str) -> str:
        """An iframe src resolved against the public base (absolute ones re-pointed there too)."""
        parts = urlsplit(src)
        path = parts.path if parts.path.startswith("/") else "/compute/" + parts.path
        return self.public_base + path + (f"?{parts.query}" if parts.query else "")

    # --- parse ----------------------------------------------------------------------------
    def parse(self, page: Page) -> list[PriceRecord]:
        """Machine records from a catalog document, or GPU-only records from the public table."""
        if page.body.lstrip().startswith("<"):
            if page.meta.get("kind") == "catalog":
                raise ParseError("expected JSON from the Billing Catalog API, got HTML/XML")
            return self._parse_public(page)
        return self._parse_catalog(self._load_json(page))

    @staticmethod
    def _load_json(page: Page) -> dict[str, Any]:
        try:
            data = json.loads(page.body)
        except json.JSONDecodeError as exc:
            raise ParseError(f"invalid JSON: {exc.msg} at line {exc.lineno}") from None
        if not isinstance(data, dict) or not isinstance(data.get("skus"), list):
            raise ParseError("catalog response has no 'skus' list")
        return data

    def _parse_catalog(self, data: dict[str, Any]) -> list[PriceRecord]:
        wanted = set(self.regions)
        # (model, region, component) -> (price, currency, skuId)
        prices: dict[tuple[str, str, str], tuple[Decimal, str, str]] = {}
        for index, sku in enumerate(data["skus"]):
            for entry in self._sku_prices(index, sku, self):
                model, region, component, price, currency, sku_id = entry
                if not wanted or region in wanted:
                    prices[(model, region, component)] = (price, currency, sku_id)
        regions = [r for r in self.regions if any(k[1] == r for k in prices)] or sorted(
            {k[1] for k in prices}
        )
        records: list[PriceRecord] = []
        for name, (family, vcpus, ram_gib, accelerator, gpus) in MACHINE_TYPES.items():
            parts = (
                (f"{family}:core", vcpus),
                (f"{family}:ram", ram_gib),
                (f"gpu:{accelerator}", gpus),
            )
            offered = self.offered_regions.get(name)
            for region in regions:
                if offered is not None and region not in offered:
                    if any(
                        all(prices.get((model, region, c)) for c, _ in parts)
                        for model in MODEL_ORDER
                    ):
                        self.note_skipped(
                            f"{name} {region}",
                            "not offered in this region (no zone lists it); the Billing Catalog "
                            "prices its SKUs there anyway",
                        )
                    continue
                for model in MODEL_ORDER:
                    found = [prices.get((model, region, component)) for component, _ in parts]
                    if found[2] is not None and any(f is None for f in found[:2]):
                        # The GPU is priced here but its host family is not: a renamed core or
                        # RAM SKU would silently drop the machine (A3 Mega's "A3Plus").
                        self.note_skipped(
                            f"{name} {region} {model}",
                            f"GPU SKU priced but no {family} core/RAM SKU in this region",
                        )
                    if any(f is None for f in found):
                        continue  # machine not offered there (or not with this pricing model)
                    if model not in SOLD_ONLY_AS.get(name, (model,)):
                        self.note_skipped(
                            f"{name} {region} {model}",
                            f"sold only as {'/'.join(SOLD_ONLY_AS[name])} (and Flex-start)",
                        )
                        continue
                    currencies = {f[1] for f in found if f}
                    if len(currencies) != 1:
                        raise ParseError(f"{name} in {region}: components in several currencies")
                    amount = sum(
                        (f[0] * qty for f, (_, qty) in zip(found, parts, strict=True) if f),
                        Decimal(0),
                    )
                    records.append(
                        PriceRecord(
                            instance_type=name,
                            gpu_name=accelerator,
                            gpu_count=Decimal(gpus),
                            region=region,
                            pricing_model=model,
                            amount=amount,
                            currency=currencies.pop(),
                            vcpus=vcpus,
                            ram_gib=float(ram_gib),
                            extra={
                                "sku_ids": [f[2] for f in found if f],
                                "vcpu_hour": str(found[0][0]) if found[0] else "",
                                "gib_hour": str(found[1][0]) if found[1] else "",
                                "gpu_hour": str(found[2][0]) if found[2] else "",
                            },
                        )
                    )
        return records

    def _sku_read(self, sku: Any) -> bool:
        """Whether parse() would read anything of this SKU: a price of a component, a note (an
        unmatched or skipped GPU SKU) or an error. False only for SKUs it passes over silently."""
        try:
            if self._sku_prices(0, sku):
                return True
        except ParseError:
            return True
        category: dict[str, str] = sku["category"]
        return (
            category.get("resourceFamily") == "Compute" and category.get("resourceGroup") == "GPU"
        )

    @staticmethod
    def _sku_prices(
        index: int, sku: Any, scraper: Scraper | None = None
    ) -> list[tuple[str, str, str, Decimal, str, str]]:
        """(model, region, component, price, currency, skuId) for each region a SKU serves."""
        if not isinstance(sku, dict):
            raise ParseError(f"sku {index} is not an object")
        for name in ("skuId", "description", "category", "serviceRegions", "pricingInfo"):
            if name not in sku:
                raise ParseError(f"sku {index} lacks '{name}'")
        category = sku["category"]
        if not isinstance(category, dict) or "usageType" not in category:
            raise ParseError(f"sku {sku['skuId']} has no category.usageType")
        if category.get("resourceFamily") != "Compute":
            return []  # storage, network, licences
        model = USAGE_MODEL.get(category["usageType"])
        match = _DESCRIPTION.match(str(sku["description"]))
        stem = _fold(match.group("stem")) if match else ""
        component = _FOLDED_COMPONENTS.get(stem)
        if component is None and scraper is not None and category.get("resourceGroup") == "GPU":
            if any(word in stem for word in IGNORED_GPU_STEMS):
                scraper.note_skipped(str(sku["description"]), "GPU booking mode not priced")
            else:
                scraper.note_unmatched(
                    "sku", str(sku["description"]), "GPU SKU not in the component table"
                )
        if model is None or component is None:
            return []
        info = sku["pricingInfo"]
        if not isinstance(info, list) or not info:
            raise ParseError(f"sku {sku['skuId']} has no pricingInfo")
        expression = info[-1].get("pricingExpression") if isinstance(info[-1], dict) else None
        if not isinstance(expression, dict) or not expression.get("tieredRates"):
            raise ParseError(f"sku {sku['skuId']} has no pricingExpression.tieredRates")
        unit = expression.get("usageUnit")
        if (
            unit
            != EXPECTED_UNIT["gpu" if component.startswith("gpu:") else component.split(":")[1]]
        ):
            raise ParseError(f"sku {sku['skuId']} ({sku['description']}) is priced per {unit!r}")
        # The last tier is the rate past any free allowance; GPU/core/RAM SKUs have one tier.
        price, currency = _money(expression["tieredRates"][-1].get("unitPrice"), sku["skuId"])
        regions = sku["serviceRegions"]
        if not isinstance(regions, list):
            raise ParseError(f"sku {sku['skuId']} serviceRegions is not a list")
        return [(model, str(r), component, price, currency, str(sku["skuId"])) for r in regions]

    # --- public page ------------------------------------------------------------------------
    def _parse_public(self, page: Page) -> list[PriceRecord]:
        soup = BeautifulSoup(page.body, "html.parser")
        frame = soup.find("iframe", src=re.compile(r"\.frame(\?|$)"))
        if frame is not None and soup.find("md-option") is None:
            raise ParseError(
                f"the price table is in the iframe {frame['src']}; parse that document"
            )
        regions = self._page_regions(soup)
        table, columns = self._price_table(soup)
        wanted = set(self.regions)
        records: list[PriceRecord] = []
        mapped_rows = priced = 0
        for row in table.find_all("tr"):
            cells = row.find_all(["td", "th"], recursive=False)
            if len(cells) != columns["__width__"] or row.find("th"):
                continue  # header rows and the continuation rows of a rowspan
            model_text = " ".join(cells[columns["model"]].get_text(" ", strip=True).split())
            accelerator = PAGE_MODELS.get(model_text)
            if accelerator is None:
                continue  # virtual workstations, retired or unmapped models
            mapped_rows += 1
            for code, region in regions.items():
                for model in MODEL_ORDER:
                    amount = (
                        self._cell_price(cells[columns[model]], code) if model in columns else None
                    )
                    if amount is None:
                        continue
                    priced += 1
                    if wanted and region not in wanted:
                        continue
                    records.append(
                        PriceRecord(
                            instance_type=accelerator,
                            gpu_name=accelerator,
                            gpu_count=Decimal(1),
                            region=region,
                            pricing_model=model,
                            amount=amount,
                            currency="USD",
                            extra={
                                "component": "gpu_only",
                                "model": model_text,
                                "note": "price of one attached GPU; the host VM is billed separately",
                            },
                        )
                    )
        if mapped_rows and not priced:
            # Known GPUs but no regional price attributes: the cell layout has changed.
            raise ParseError("GPU price table has no per-region prices (<code>-hourly attributes)")
        return records

    @staticmethod
    def _page_regions(soup: BeautifulSoup) -> dict[str, str]:
        """Region selector: <md-option value="io">Iowa (us-central1)</md-option> -> {io: us-central1}."""
        regions = {}
        for option in soup.find_all("md-option"):
            match = _REGION_IN_PARENS.search(option.get_text())
            if option.get("value") and match:
                regions[str(option["value"])] = match.group(1)
        if not regions:
            raise ParseError("GPU pricing page has no region selector (md-option)")
        return regions

    @staticmethod
    def _price_table(soup: BeautifulSoup) -> tuple[Tag, dict[str, int]]:
        for table in soup.find_all("table"):
            header = table.find("tr")
            if header is None:
                continue
            titles = [
                " ".join(c.get_text(" ", strip=True).split()).lower()
                for c in header.find_all(["th", "td"], recursive=False)
            ]
            if not any(t.startswith("gpu price") for t in titles):
                continue
            columns: dict[str, int] = {"__width__": len(titles)}
            for i, title in enumerate(titles):
                if title == "model":
                    columns["model"] = i
                for prefix, model in PAGE_COLUMNS:
                    if title.startswith(prefix):
                        columns[model] = i
            if "model" not in columns or "on_demand" not in columns:
                raise ParseError("GPU price table lacks the 'Model' or 'GPU price' column")
            return table, columns
        raise ParseError("no GPU price table (header 'GPU price') on the page")

    @staticmethod
    def _cell_price(cell: Tag, code: str) -> Decimal | None:
        """A region's price from a cloud-pricer cell ("$0.35 per GPU"); None where not offered."""
        text = cell.get(f"{code}-hourly")
        if text is None:
            return None  # no attribute for this region: not offered there
        match = _DOLLARS.search(str(text))
        if not match:
            return None  # "Not available in this region"
        return Decimal(match.group(1).replace(",", ""))
