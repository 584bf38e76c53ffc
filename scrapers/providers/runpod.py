"""RunPod: per-GPU pod prices from the GraphQL API (``POST https://api.runpod.io/graphql``).

The ``gpuTypes`` query answers without a key for public prices; ``credentials["runpod_api_key"]``
is sent as the ``api_key`` query parameter when set (RunPod's documented way). Prices are per
GPU-hour, one figure per GPU type for every data center, so records sit in region ``global`` and
a pod of N GPUs is N x the per-GPU price. Secure and Community Cloud are separate instance types
("1x H100 SXM (secure)"), each with an on-demand and a spot (interruptible, bid) price.
See docs/providers/runpod.md.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

from scrapers.base import HttpClient, Page, ParseError, PriceRecord, Scraper, register

GRAPHQL_PATH = "/graphql"
QUERY = (
    "query GpuTypes { gpuTypes { id displayName memoryInGb secureCloud communityCloud "
    "securePrice communityPrice secureSpotPrice communitySpotPrice "
    "maxGpuCount maxGpuCountSecureCloud maxGpuCountCommunityCloud "
    "lowestPrice(input: {gpuCount: 1}) { minimumBidPrice uninterruptablePrice minVcpu minMemory } } }"
)
REGION = "global"
# Pod shapes the catalog lists (fixtures/providers/runpod.yaml); RunPod rents any count up to the
# maximum, but 1/2/4/8 are the shapes people compare. The maximum is the type's ``maxGpuCount``
# (RunPod's own per-type limit: 4 for an RTX 3080, 10 for an A40, as SkyPilot's RunPod fetcher
# records it), narrowed by the per-cloud maxima when the answer has them. Without any maximum
# only the 1-GPU pod is listed: a larger shape is never assumed.
POD_GPU_COUNTS = (1, 2, 4, 8)
# Keys every gpuTypes entry must carry (a null value is fine: the cloud does not offer it).
REQUIRED = (
    "id",
    "displayName",
    "securePrice",
    "communityPrice",
    "secureSpotPrice",
    "communitySpotPrice",
)
CLOUDS = (
    ("secure", "secureCloud", "securePrice", "secureSpotPrice", "maxGpuCountSecureCloud"),
    (
        "community",
        "communityCloud",
        "communityPrice",
        "communitySpotPrice",
        "maxGpuCountCommunityCloud",
    ),
)


@register
class RunPodScraper(Scraper):
    """RunPod Secure and Community Cloud on-demand and spot prices from the GraphQL API."""

    key = "runpod"
    provider_slug = "runpod"
    base_url = "https://api.runpod.io"
    description = "RunPod GraphQL gpuTypes (public prices; api_key optional)"

    def pricing_models(self) -> frozenset[str]:
        """On-demand and spot (bid); savings plans are not in gpuTypes prices."""
        return frozenset({"on_demand", "spot"})

    def fetch(self, client: HttpClient) -> Iterator[Page]:
        """One GraphQL POST; gpuTypes is not paginated."""
        api_key = self.credential("runpod_api_key")
        params = {"api_key": api_key} if api_key else None
        yield client.request(
            "POST",
            self.base_url + GRAPHQL_PATH,
            params=params,
            json={"query": QUERY},
            headers={"Content-Type": "application/json", "Accept": "application/json"},
            meta={"query": "gpuTypes"},
        )

    def parse(self, page: Page) -> list[PriceRecord]:
        """On-demand and spot records for each GPU type, cloud and pod size it is offered in."""
        try:
            # Decimal straight from the text: 2.69 x 8 must be 21.52, not 21.519999...
            document = json.loads(page.body, parse_float=Decimal)
        except json.JSONDecodeError as exc:
            raise ParseError(f"runpod: not JSON ({exc.msg} at {exc.pos})") from exc
        if not isinstance(document, dict):
            raise ParseError("runpod: expected a GraphQL response object")
        if document.get("errors"):
            # GraphQL answers 200 with an errors list (bad field, auth); partial data is not trusted.
            first = document["errors"][0] if isinstance(document["errors"], list) else {}
            message = first.get("message", "?") if isinstance(first, dict) else str(first)
            raise ParseError(f"runpod GraphQL error: {message}")
        data = document.get("data")
        gpu_types = data.get("gpuTypes") if isinstance(data, dict) else None
        if not isinstance(gpu_types, list):
            raise ParseError("runpod: no data.gpuTypes list")

        source_url = page.url.split("?", 1)[0]  # never keep the api_key with a price
        records: list[PriceRecord] = []
        for entry in gpu_types:
            if not isinstance(entry, dict):
                raise ParseError("runpod: gpuTypes entry is not an object")
            missing = [key for key in REQUIRED if key not in entry]
            if missing:
                raise ParseError(
                    f"runpod: gpuTypes entry {entry.get('id')!r} lacks {', '.join(missing)}"
                )
            if not entry["id"] or str(entry["id"]).lower() == "unknown":
                self.note_skipped(str(entry["id"]), "RunPod's placeholder type")
                continue  # RunPod lists a placeholder "unknown" type with no prices
            records.extend(self._gpu_records(entry, source_url))
        return records

    def _gpu_records(self, entry: dict[str, Any], source_url: str) -> list[PriceRecord]:
        raw_lowest = entry.get("lowestPrice")
        lowest: dict[str, Any] = raw_lowest if isinstance(raw_lowest, dict) else {}
        min_vcpu = _positive(lowest.get("minVcpu"))
        min_memory = _positive(lowest.get("minMemory"))
        type_max = _positive(entry.get("maxGpuCount"))
        records: list[PriceRecord] = []
        for cloud, flag, on_demand_key, spot_key, max_key in CLOUDS:
            if entry.get(flag) is False:
                self.note_skipped(f"{entry['id']} ({cloud})", f"{flag} is false")
                continue  # not offered in this cloud, whatever stale price is left beside it
            limits = [m for m in (type_max, _positive(entry.get(max_key))) if m is not None]
            max_gpus = min(limits) if limits else Decimal(1)
            if not limits:
                self.note_skipped(
                    f"{entry['id']} ({cloud})", "no maxGpuCount: only the 1-GPU pod is listed"
                )
            for pricing_model, key in (("on_demand", on_demand_key), ("spot", spot_key)):
                per_gpu = _positive(entry.get(key))
                if per_gpu is None:
                    self.note_skipped(f"{entry['id']} ({cloud})", f"{key} is null or 0")
                    continue  # null or 0: not available at this price now
                for count in POD_GPU_COUNTS:
                    if count > max_gpus:
                        break
                    records.append(
                        PriceRecord(
                            instance_type=f"{count}x {entry['displayName']} ({cloud})",
                            # The GPU id is the full, unambiguous name ("NVIDIA A100-SXM4-80GB");
                            # the display name ("A100 SXM") drops the memory size.
                            gpu_name=str(entry["id"]),
                            gpu_count=Decimal(count),
                            region=REGION,
                            pricing_model=pricing_model,
                            amount=per_gpu * count,
                            currency="USD",
                            unit="hour",
                            vcpus=int(min_vcpu * count) if min_vcpu is not None else None,
                            ram_gib=float(min_memory * count) if min_memory is not None else None,
                            extra={
                                "source_url": source_url,
                                "gpu_id": str(entry["id"]),
                                "display_name": entry["displayName"],
                                "cloud": cloud,
                                "memory_gb": _json_number(entry.get("memoryInGb")),
                                "usd_per_gpu_hour": float(per_gpu),
                                "lowest_minimum_bid_usd_per_gpu_hour": _json_number(
                                    lowest.get("minimumBidPrice")
                                ),
                            },
                        )
                    )
        return records


def _positive(value: Any) -> Decimal | None:
    """A price or count above zero; RunPod writes null or 0 for 'not available'."""
    if isinstance(value, bool) or not isinstance(value, int | Decimal | float):
        return None
    number = Decimal(str(value)) if isinstance(value, float) else Decimal(value)
    return number if number > 0 else None


def _json_number(value: Any) -> float | int | None:
    """A number fit for the JSON ``extra`` column (Decimal is not JSON)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, Decimal):
        return float(value)
    return value if isinstance(value, int | float) else None
