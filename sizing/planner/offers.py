"""What the planner weighs: offers, the caller's constraints, and the offer book that groups
offers sharing hardware and a pricing model."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import overload

from ..estimator import GPUSpec
from ..inputs import PRICING_MODELS


@dataclass(frozen=True, slots=True)
class Offer:
    """One current price of one instance type in one region. Slotted: a worker keeps tens of
    thousands (see sizing.selectors.offer_book)."""

    price_id: int
    provider: str
    provider_mainland_china: bool
    compliance_notes: str
    region: str
    country: str
    region_mainland_china: bool
    instance_type: str
    gpu: GPUSpec
    gpu_segment: str
    gpu_datacenter_use_allowed: bool
    gpu_count: float
    gpu_sharing: str
    vcpus: int
    ram_gib: float
    local_disk_gb: float
    local_disk_type: str
    intra_slug: str | None
    intra_kind: str | None
    intra_bandwidth_gb_s: float | None
    inter_slug: str | None
    inter_kind: str | None
    inter_rdma: bool
    network_gbps: float | None
    pricing_model: str
    usd_per_hour: float
    observed_at: datetime
    stale: bool
    # Spot and marketplace prices move daily: past their shelf life they are left out unless the
    # caller asks for stale prices (Constraints.leaves_out).
    volatile: bool = False
    # When this price turns stale (its shelf life ends); None when the reader did not say.
    stale_at: datetime | None = None

    @property
    def label(self) -> str:
        return f"{self.provider}/{self.instance_type} in {self.region} ({self.pricing_model})"

    @property
    def label_params(self) -> dict[str, str]:
        """A message's ``offer`` (the English label) and its parts, from which
        ``sizing.messages`` writes the offer in another language."""
        return {
            "offer": self.label,
            "offer_provider": self.provider,
            "offer_instance_type": self.instance_type,
            "offer_region": self.region,
            "offer_pricing_model": self.pricing_model,
        }


@dataclass(frozen=True)
class Constraints:
    """What the caller allows; None means no limit."""

    providers: tuple[str, ...] = ()
    regions: tuple[str, ...] = ()
    countries: tuple[str, ...] = ()
    mainland_china: bool | None = None
    pricing: tuple[str, ...] = PRICING_MODELS
    # Commitment terms are weighed without a known run length only when asked for by name.
    pricing_explicit: bool = False
    max_usd_per_hour: float | None = None
    max_total_usd: float | None = None
    max_hours: float | None = None
    gpus: tuple[str, ...] = ()
    min_gpu_memory_gb: float | None = None
    max_gpus: int | None = None
    allow_multi_node: bool = True
    datacenter_only: bool = False
    # None: stale list prices are ranked (flagged), stale spot and marketplace prices are left
    # out; True: every stale price is ranked, flagged; False: every stale price is left out.
    include_stale: bool | None = None
    # "high": a plan fits when the high end of the memory range does (sizing/uncertainty.py);
    # "point": when the estimate itself does.
    fit_on: str = "high"

    def leaves_out(self, offer: Offer) -> bool:
        """Whether a stale price is left out of the ranking (counted as ``stale_price``)."""
        if not offer.stale or self.include_stale:
            return False
        return self.include_stale is False or offer.volatile

    def covers(self, offer: Offer) -> bool:
        """Whether the caller asked about this offer at all (pricing models, GPUs, providers,
        regions, countries, mainland China). Offers outside are skipped, not counted as rejected.
        """
        return (
            offer.pricing_model in self.pricing
            and (not self.gpus or offer.gpu.slug in self.gpus)
            and (not self.providers or offer.provider in self.providers)
            and (not self.regions or offer.region in self.regions)
            and (not self.countries or offer.country in self.countries)
            and (self.mainland_china is None or offer.region_mainland_china == self.mainland_china)
        )


# What an offer's estimates depend on (see _hardware_key).
HardwareKey = tuple[object, ...]
# (usd per hour, index in the book, offer): a group's entries sort by price, then book order.
Entry = tuple[float, int, Offer]


def _hardware_key(offer: Offer) -> HardwareKey:
    """What an offer's estimates depend on: the GPU, how many, and how they are joined."""
    return (
        id(offer.gpu), offer.gpu_count, offer.intra_kind, offer.intra_slug,
        offer.intra_bandwidth_gb_s, offer.inter_slug is None, offer.inter_rdma, offer.network_gbps,
    )  # fmt: skip


class _Group:
    """Offers with the same hardware and pricing model, cheapest first (then in offer order):
    they share every estimate, so their ranking keys rise with their price."""

    __slots__ = (
        "entries", "first", "hardware", "pricing_model", "stale", "stale_volatile",
        "without_stale", "without_stale_volatile",
    )  # fmt: skip

    def __init__(self, hardware: HardwareKey, first: Offer) -> None:
        self.hardware = hardware
        self.pricing_model = first.pricing_model
        self.first = first
        self.entries: list[Entry] = []
        # The stale flags are fixed for the book's life (it is replaced before a fresh price
        # turns stale), so what each include_stale setting leaves out is split off once here,
        # not per request: stale entries, the volatile ones among them, and the entries left
        # without each (the same list object when nothing is left out), all in entry order.
        self.stale: list[Entry] = []
        self.stale_volatile: list[Entry] = []
        self.without_stale: list[Entry] = self.entries
        self.without_stale_volatile: list[Entry] = self.entries

    def split_stale(self) -> None:
        """Split off the stale entries (after ``entries`` is sorted)."""
        entries = self.entries
        self.stale = [entry for entry in entries if entry[2].stale]
        self.stale_volatile = [entry for entry in self.stale if entry[2].volatile]
        self.without_stale = entries
        if self.stale:
            self.without_stale = [entry for entry in entries if not entry[2].stale]
        self.without_stale_volatile = entries
        if self.stale_volatile:
            self.without_stale_volatile = [
                entry for entry in entries if not (entry[2].stale and entry[2].volatile)
            ]


class OfferBook:
    """Offers arranged for the planner: grouped by hardware and pricing model, each group in
    price order, with an index from (provider, instance type, region, pricing model) to the
    offer. Building it is the costly part of loading a large catalog, so the selector keeps
    one per catalog version and every recommendation reuses it.
    """

    def __init__(self, offers: list[Offer], *, version: str = "") -> None:
        self.offers = offers
        # The catalog version the offers were read at (sizing.selectors.catalog_version).
        self.version = version
        groups: dict[tuple[HardwareKey, str], _Group] = {}
        self.by_machine: dict[tuple[str, str, str, str], Offer] = {}
        for index, offer in enumerate(offers):
            hardware = _hardware_key(offer)
            group = groups.get((hardware, offer.pricing_model))
            if group is None:
                group = groups[(hardware, offer.pricing_model)] = _Group(hardware, offer)
            group.entries.append((offer.usd_per_hour, index, offer))
            machine = (offer.provider, offer.instance_type, offer.region, offer.pricing_model)
            self.by_machine.setdefault(machine, offer)
        for group in groups.values():
            group.entries.sort(key=lambda entry: (entry[0], entry[1]))
            group.split_stale()
        self.groups = list(groups.values())
        # When the first fresh price turns stale (the offers' stale flags are then out of date).
        ends = [o.stale_at for o in offers if not o.stale and o.stale_at is not None]
        self.fresh_until: datetime | None = min(ends) if ends else None

    def __len__(self) -> int:
        return len(self.offers)


class _OffersOf(Sequence[Offer]):
    """The offers of a group's (usd, index, offer) entries, without copying them: a rejection
    counts them all but writes examples for the first few only."""

    __slots__ = ("entries",)

    def __init__(self, entries: list[Entry]) -> None:
        self.entries = entries

    def __len__(self) -> int:
        return len(self.entries)

    @overload
    def __getitem__(self, key: int) -> Offer: ...
    @overload
    def __getitem__(self, key: slice) -> list[Offer]: ...
    def __getitem__(self, key: int | slice) -> Offer | list[Offer]:
        if isinstance(key, slice):
            return [entry[2] for entry in self.entries[key]]
        return self.entries[key][2]
