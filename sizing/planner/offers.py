"""What the planner weighs: offers, the caller's constraints, and the offer book that keeps
offers as columns and groups those sharing hardware and a pricing model."""

from __future__ import annotations

import bisect
from array import array
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, fields
from datetime import UTC, datetime, timedelta
from itertools import compress
from typing import Any, overload

from ..estimator import GPUSpec
from ..inputs import DEFAULT_PRICING_MODELS


@dataclass(frozen=True, slots=True)
class Offer:
    """One current price of one instance type in one region. The offer book keeps its figures as
    columns (``OfferColumns``) and builds an Offer only for the offers a request ranks or names."""

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
    # The inter-node interconnect's own bandwidth in Gbit/s (its catalog figure: per port or per
    # instance, as its note says); None without a fabric. Stands in where network_gbps is missing.
    inter_bandwidth_gbps: float | None
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
    def inter_node_gbps(self) -> float | None:
        """Bandwidth between nodes, Gbit/s: the instance's network figure, else its inter-node
        fabric's own; None where neither is published (unknown, never zero)."""
        return self.network_gbps if self.network_gbps is not None else self.inter_bandwidth_gbps

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
    pricing: tuple[str, ...] = DEFAULT_PRICING_MODELS  # capacity blocks only when named
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
# An instance type's planner values, shared by its offers in every region: (provider, its
# mainland China flag, its compliance notes) and (instance type .. inter_bandwidth_gbps), in Offer's
# field order but for the GPU, held as its index in ``OfferColumns.gpus``, and the hardware key of
# its offers. Holding no object the garbage collector tracks, these tuples drop out of its sight
# after one collection: a quarter of a million offers add little to every full collection.
Kind = tuple[tuple[Any, ...], tuple[Any, ...], HardwareKey]
# A region's planner values: (code, country, mainland China flag).
Place = tuple[str, str, bool]

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
# stale_at of an offer whose reader did not say when it turns stale.
NO_INSTANT = -(2**63)


def packed(rows: Iterable[int]) -> bytes:
    """Rows (ints) as native 32-bit ints in one ``bytes``: how the book's indexes hold them.

    An index of tens of thousands of keys holding ``array`` values is a tracked container of
    tracked objects (arrays are, from Python 3.10), which every full collection of a worker
    walks after an update made its own copy (tens of milliseconds, all threads stopped, several
    times per update, bench/RESULTS.md); ``bytes`` are never tracked, nor is a dict of them."""
    return array("i", rows).tobytes()


def unpacked(rows: bytes) -> memoryview:
    """The rows ``packed`` holds, as a sequence of ints (no copy)."""
    return memoryview(rows).cast("i")


def instant_us(moment: datetime) -> int:
    """Microseconds from the Unix epoch to ``moment`` (time-zone aware), exactly."""
    delta = moment - EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def instant(us: int) -> datetime:
    """The UTC instant ``us`` microseconds after the Unix epoch (``instant_us`` reversed)."""
    return EPOCH + timedelta(microseconds=us)


def _hardware(
    gpu: GPUSpec,
    gpu_count: Any,
    intra_kind: Any,
    intra_slug: Any,
    intra_bandwidth: Any,
    inter_slug: Any,
    inter_rdma: Any,
    network: Any,
    inter_bandwidth: Any,
) -> HardwareKey:
    """What an offer's estimates depend on: the GPU, how many, and how they are joined (the one
    definition of the key both ways of reaching an offer's figures use). The bandwidth between
    nodes is the one the planner uses (``Offer.inter_node_gbps``)."""
    between = network if network is not None else inter_bandwidth
    return (
        id(gpu), gpu_count, intra_kind, intra_slug, intra_bandwidth, inter_slug is None,
        inter_rdma, between,
    )  # fmt: skip


def _hardware_key(offer: Offer) -> HardwareKey:
    """``_hardware`` of an offer."""
    return _hardware(
        offer.gpu, offer.gpu_count, offer.intra_kind, offer.intra_slug,
        offer.intra_bandwidth_gb_s, offer.inter_slug, offer.inter_rdma, offer.network_gbps,
        offer.inter_bandwidth_gbps,
    )  # fmt: skip


def tail_hardware_key(tail: tuple[Any, ...], gpus: Sequence[GPUSpec]) -> HardwareKey:
    """``_hardware`` of the offers of an instance type, from its tail (see ``Kind``)."""
    intra_slug, intra_kind, intra_bandwidth, inter_slug, _, inter_rdma, network, between = tail[
        10:18
    ]
    return _hardware(
        gpus[tail[1]], tail[4], intra_kind, intra_slug, intra_bandwidth, inter_slug, inter_rdma,
        network, between,
    )  # fmt: skip


class OfferColumns:
    """Every offer of a book as columns: one array per per-offer figure (price id, USD per hour,
    observed-at and stale-at in microseconds, flags) and indexes into tables shared by many offers
    (instance types as ``Kind``, regions as ``Place``, pricing models). A quarter of a million
    offers take about 15 MB this way against ~250 MB as objects; ``offer`` builds the ``Offer``
    of one row when a request ranks or names it.

    A book read from the catalog has its rows in price-id order (``ordered``). A book updated by
    one provider's offers (``sizing.selectors``) keeps every other row where it was: the
    provider's old rows are marked ``dead`` and its offers read again are appended, so an update
    costs what that provider holds, not the catalog; ``compacted`` puts the live rows back in
    price-id order. ``kind_ids`` and ``place_ids`` map the catalog's instance type and region ids
    to table rows, ``kind_rows`` each instance type's live rows (``packed``, for the next update).
    """

    __slots__ = (
        "dead", "dead_count", "gpus", "kind", "kind_ids", "kind_rows", "kinds", "model", "models",
        "observed", "ordered", "place", "place_ids", "places", "price_id", "stale", "stale_at",
        "usd", "volatile",
    )  # fmt: skip

    def __init__(
        self,
        kinds: Sequence[Kind] | None = None,
        places: list[Place] | None = None,
        models: list[str] | None = None,
        gpus: list[GPUSpec] | None = None,
    ) -> None:
        self.gpus: list[GPUSpec] = gpus if gpus is not None else []
        # A tuple once read (a tuple of untracked tuples drops out of the collector's sight; a
        # list of 50,000 instance types would be walked by every full collection).
        self.kinds: Sequence[Kind] = kinds if kinds is not None else ()
        self.places: list[Place] = places if places is not None else []
        self.models: list[str] = models if models is not None else []
        self.kind_ids: dict[int, int] = {}
        self.place_ids: dict[int, int] = {}
        self.price_id = array("q")
        self.usd = array("d")
        self.observed = array("q")
        self.stale_at = array("q")
        self.kind = array("i")
        self.place = array("i")
        self.model = array("B")
        self.stale = bytearray()
        self.volatile = bytearray()
        self.dead = bytearray()  # 1: a row no longer in the book (see the class docstring)
        self.dead_count = 0
        self.ordered = True  # the rows (dead ones left aside) are in price-id order
        self.kind_rows: dict[int, bytes] = {}  # packed rows

    def __len__(self) -> int:
        return len(self.price_id)

    @property
    def live(self) -> int:
        """How many rows are offers of the book (not dead)."""
        return len(self.price_id) - self.dead_count

    def live_rows(self) -> list[int]:
        """The rows of the book's offers, in price-id order."""
        rows = [row for row in range(len(self.price_id)) if not self.dead[row]]
        return rows if self.ordered else sorted(rows, key=self.price_id.__getitem__)

    def index_kinds(self) -> None:
        """``kind_rows`` from scratch: each instance type's live rows."""
        index: dict[int, array[int]] = {}
        dead = self.dead
        for row, kind in enumerate(self.kind):
            if not dead[row]:
                rows = index.get(kind)
                if rows is None:
                    rows = index[kind] = array("i")
                rows.append(row)
        self.kind_rows = {kind: rows.tobytes() for kind, rows in index.items()}

    def copy(self) -> OfferColumns:
        """Columns of their own holding the same rows, to be updated while these keep answering:
        the per-offer arrays are copied (memcpy), the tables an update changes (pricing models,
        ``kind_rows``) shallow-copied, the others shared: the instance types and ``kind_ids`` too,
        which an update copies before it changes them (sizing.selectors)."""
        copied = OfferColumns(self.kinds, self.places, list(self.models), self.gpus)
        copied.kind_ids, copied.place_ids = self.kind_ids, self.place_ids
        copied.kind_rows = dict(self.kind_rows)
        for name in _ROW_COLUMNS:
            setattr(copied, name, getattr(self, name)[:])
        copied.dead_count, copied.ordered = self.dead_count, self.ordered
        return copied

    def kill_kinds(self, kinds: Iterable[int]) -> list[int]:
        """Mark every live row of ``kinds`` dead; returns those rows."""
        dropped: list[int] = []
        for kind in kinds:
            rows = self.kind_rows.pop(kind, None)
            if rows:
                dropped.extend(unpacked(rows))
        for row in dropped:
            self.dead[row] = 1
        self.dead_count += len(dropped)
        return dropped

    def compacted(self) -> OfferColumns:
        """These columns' live rows alone, in price-id order, ``kind_rows`` worked out again."""
        if self.ordered and not self.dead_count:
            return self
        columns = self.take(self.live_rows())
        columns.index_kinds()
        return columns

    def stale_flags_current(self, now: datetime) -> bool:
        """Whether every live row's stale flag is as ``restamp(now)`` would set it (C-speed
        scans: no row is looked at in Python)."""
        cutoff = instant_us(now)
        flip = bytes.maketrans(b"\x00\x01", b"\x01\x00")
        dead = int.from_bytes(self.dead, "little")
        stale = int.from_bytes(self.stale, "little")
        size = len(self.dead)
        fresh = (stale | dead).to_bytes(size, "little").translate(flip)
        stale_live = (stale & ~dead).to_bytes(size, "little") if size else b""
        earliest = min(compress(self.stale_at, fresh), default=None)
        if earliest == NO_INSTANT:  # rows without a stale-at instant never turn stale
            earliest = min((at for at in compress(self.stale_at, fresh) if at != NO_INSTANT),
                           default=None)  # fmt: skip
        latest = max(compress(self.stale_at, stale_live), default=None)
        return (earliest is None or earliest > cutoff) and (latest is None or latest <= cutoff)

    @classmethod
    def from_offers(cls, offers: Iterable[Offer]) -> OfferColumns:
        """Columns holding ``offers`` as given, in their order (time-zone-aware instants)."""
        columns = cls()
        table: list[Kind] = []  # the instance types, a tuple once all are in
        kinds: dict[tuple[Any, ...], int] = {}
        places: dict[Place, int] = {}
        models: dict[str, int] = {}
        gpus: dict[int, int] = {}  # id(GPUSpec) -> its index
        for offer in offers:
            fields = tuple(getattr(offer, name) for name in _OFFER_FIELDS)
            gpu = gpus.get(id(offer.gpu))
            if gpu is None:
                gpu = gpus[id(offer.gpu)] = len(columns.gpus)
                columns.gpus.append(offer.gpu)
            head, tail = fields[1:4], (fields[7], gpu, *fields[9:25])
            place: Place = fields[4:7]
            kind = kinds.get(head + tail)
            if kind is None:
                kind = kinds[head + tail] = len(table)
                table.append((head, tail, tail_hardware_key(tail, columns.gpus)))
            where = places.get(place)
            if where is None:
                where = places[place] = len(columns.places)
                columns.places.append(place)
            model = models.get(offer.pricing_model)
            if model is None:
                model = models[offer.pricing_model] = len(columns.models)
                columns.models.append(offer.pricing_model)
            columns.append(
                offer.price_id, kind, where, model, offer.usd_per_hour,
                instant_us(offer.observed_at),
                NO_INSTANT if offer.stale_at is None else instant_us(offer.stale_at),
                stale=offer.stale, volatile=offer.volatile,
            )  # fmt: skip
        columns.kinds = tuple(table)
        return columns

    def append(
        self,
        price_id: int,
        kind: int,
        place: int,
        model: int,
        usd_per_hour: float,
        observed_us: int,
        stale_at_us: int,
        *,
        stale: bool,
        volatile: bool,
    ) -> None:
        """Add one offer at the end (its tables' rows already added)."""
        self.price_id.append(price_id)
        self.kind.append(kind)
        self.place.append(place)
        self.model.append(model)
        self.usd.append(usd_per_hour)
        self.observed.append(observed_us)
        self.stale_at.append(stale_at_us)
        self.stale.append(stale)
        self.volatile.append(volatile)
        self.dead.append(0)

    def take(self, rows: Iterable[int]) -> OfferColumns:
        """The offers at ``rows`` (live ones, in price-id order) in new columns that share these
        tables. Runs of consecutive rows are copied as slices."""
        rows = array("i", rows)
        runs: list[tuple[int, int]] = []  # [start, end) of each run of consecutive rows
        start = end = -1
        for row in rows:
            if row != end:
                if end > start:
                    runs.append((start, end))
                start = row
            end = row + 1
        if end > start:
            runs.append((start, end))
        taken = OfferColumns(self.kinds, self.places, self.models, self.gpus)
        taken.kind_ids, taken.place_ids = self.kind_ids, self.place_ids
        for name in _ROW_COLUMNS:
            column = getattr(self, name)
            if len(runs) * 8 < len(rows):
                copied = column[:0]
                for start, end in runs:
                    copied += column[start:end]
            elif isinstance(column, bytearray):
                copied = bytearray(map(column.__getitem__, rows))
            else:
                copied = array(column.typecode, map(column.__getitem__, rows))
            setattr(taken, name, copied)
        taken.dead = bytearray(len(rows))
        return taken

    def restamp(self, now: datetime) -> None:
        """Set every stale flag as of ``now`` from the stale-at instants (offers read from the
        catalog all have one)."""
        cutoff = instant_us(now)
        self.stale = bytearray(at != NO_INSTANT and at <= cutoff for at in self.stale_at)

    def offer(self, row: int) -> Offer:
        """The ``Offer`` of one row."""
        head, tail, _ = self.kinds[self.kind[row]]
        stale_at = self.stale_at[row]
        make: Callable[..., Offer] = Offer  # positional, in field order
        return make(
            self.price_id[row], *head, *self.places[self.place[row]], tail[0],
            self.gpus[tail[1]], *tail[2:],
            self.models[self.model[row]], self.usd[row], instant(self.observed[row]),
            bool(self.stale[row]), bool(self.volatile[row]),
            None if stale_at == NO_INSTANT else instant(stale_at),
        )  # fmt: skip


_OFFER_FIELDS = tuple(f.name for f in fields(Offer))
# The per-offer arrays of OfferColumns.
_ROW_COLUMNS = (
    "price_id", "usd", "observed", "stale_at", "kind", "place", "model", "stale", "volatile",
    "dead",
)  # fmt: skip


class _Group:
    """Offers (rows of the book) with the same hardware and pricing model, cheapest first (then
    in book order): they share every estimate, so their ranking keys rise with their price."""

    __slots__ = (
        "entries", "first", "first_row", "hardware", "kinds", "order", "pricing_model", "stale",
        "stale_volatile", "without_stale", "without_stale_volatile",
    )  # fmt: skip

    def __init__(self, hardware: HardwareKey, first: Offer, entries: array[int]) -> None:
        self.hardware = hardware
        self.pricing_model = first.pricing_model
        self.first = first  # the offer with the lowest price id
        self.first_row = -1  # its row in the book (set by OfferBook._group)
        self.order = first.price_id  # groups are listed in the order of their first offers
        self.entries: Sequence[int] = entries
        # The stale flags are fixed for the book's life (it is replaced before a fresh price
        # turns stale), so what each include_stale setting leaves out is split off once here,
        # not per request: stale rows, the volatile ones among them, and the rows left without
        # each (the same object when nothing is left out), all in entry order.
        self.stale: Sequence[int] = ()
        self.stale_volatile: Sequence[int] = ()
        self.without_stale: Sequence[int] = entries
        self.without_stale_volatile: Sequence[int] = entries

    def split_stale(self, stale: bytearray, volatile: bytearray) -> None:
        """Split off the stale rows (after ``entries`` is sorted)."""
        entries = self.entries
        self.stale = array("i", [row for row in entries if stale[row]])
        self.stale_volatile = array("i", [row for row in self.stale if volatile[row]])
        self.without_stale = entries
        if self.stale:
            self.without_stale = array("i", [row for row in entries if not stale[row]])
        self.without_stale_volatile = entries
        if self.stale_volatile:
            self.without_stale_volatile = array(
                "i", [row for row in entries if not (stale[row] and volatile[row])]
            )


class OfferBook:
    """Offers arranged for the planner: kept as columns (``OfferColumns``), grouped by hardware
    and pricing model, each group's rows in price order, with a sorted index from (instance type,
    region, pricing model) to the row. Building it is the costly part of loading a large
    catalog, so the selector keeps one per catalog version and every recommendation reuses it;
    ``Offer`` objects are built only for the rows a request ranks or names.
    """

    def __init__(self, offers: Sequence[Offer] | OfferColumns, *, version: str = "") -> None:
        columns = offers if isinstance(offers, OfferColumns) else OfferColumns.from_offers(offers)
        columns = columns.compacted()  # arranged from scratch: rows in price-id order
        self.columns = columns
        # The catalog version the offers were read at (sizing.selectors.catalog_version).
        self.version = version
        kinds = columns.kinds
        width = max(len(columns.models), 1)
        rows_of: dict[int, array[int]] = {}  # kind x pricing model -> its rows, in book order
        for row, (kind, model) in enumerate(zip(columns.kind, columns.model, strict=True)):
            rows = rows_of.get(kind * width + model)
            if rows is None:
                rows = rows_of[kind * width + model] = array("i")
            rows.append(row)
        merged: dict[tuple[HardwareKey, int], list[array[int]]] = {}
        for key, rows in rows_of.items():
            merged.setdefault((kinds[key // width][2], key % width), []).append(rows)
        self._groups: dict[tuple[HardwareKey, int], _Group] = {}
        for (hardware, model), parts in merged.items():
            rows = parts[0] if len(parts) == 1 else array("i", sorted(r for p in parts for r in p))
            self._groups[(hardware, model)] = self._group(hardware, rows)
        self._list_groups()
        # The machine index: the rows of each (instance type, pricing model) key in price-id
        # order (``packed``); instance types sorted by (provider, name) for looking them up by name.
        self._width = width
        self._machines: dict[int, bytes] = {key: rows.tobytes() for key, rows in rows_of.items()}
        names = [(head[0], tail[0]) for head, tail, _ in kinds]
        self._kinds_named = array("i", sorted(set(columns.kind), key=names.__getitem__))
        self._gpu_index: dict[str, bytes] | None = None  # gpu_rows's (packed), built on first use
        self._set_fresh_until()

    def updated(
        self,
        columns: OfferColumns,
        dropped: Sequence[int],
        added: Sequence[int],
        *,
        version: str = "",
    ) -> OfferBook:
        """``OfferBook(columns)``, worked out from this book when ``columns`` holds this book's
        rows (a ``copy`` of its columns) with ``dropped`` marked dead and ``added`` appended (the
        providers read again), no kept offer's stale flag changed. Only the groups and
        machine-index entries that lose or gain an offer are worked out again; every other group
        is carried over as it is, its rows unmoved: the cost follows the changed providers, not
        the catalog (tests/sizing/test_offer_book_incremental.py holds it to a book arranged from
        scratch)."""
        width = max(len(columns.models), 1)
        if width != self._width:  # a new pricing model: every key moves
            return OfferBook(columns, version=version)
        book = OfferBook.__new__(OfferBook)
        book.columns, book.version, book._width = columns, version, width
        old_kinds, kinds = self.columns.kinds, columns.kinds
        book._gpu_index = self._gpu_index_updated(columns, dropped, added)
        machines = dict(self._machines)
        touched: dict[tuple[HardwareKey, int], list[int]] = {}
        for row in dropped:  # an instance type's rows all go (its provider's are read again)
            kind, model = columns.kind[row], columns.model[row]
            machines.pop(kind * width + model, None)
            touched.setdefault((old_kinds[kind][2], model), [])
        arriving_at: dict[int, array[int]] = {}  # machine key -> its rows read again
        for row in added:  # appended in price-id order
            kind, model = columns.kind[row], columns.model[row]
            key = kind * width + model
            at = arriving_at.get(key)
            if at is None:
                at = arriving_at[key] = array("i")
            at.append(row)
            touched.setdefault((kinds[kind][2], model), []).append(row)
        for key, at in arriving_at.items():
            machines[key] = machines.get(key, b"") + at.tobytes()
        book._machines = machines
        groups = dict(self._groups)
        dead, usd, ids = columns.dead, columns.usd, columns.price_id

        def price_order(row: int) -> tuple[float, int]:
            return usd[row], ids[row]

        for where, arriving in touched.items():
            group = groups.pop(where, None)
            # The group's kept rows stay in price order; the few arriving are put in their
            # places (a group spans providers: re-sorting it would cost what it holds).
            rows = [row for row in group.entries if not dead[row]] if group else []
            for row in sorted(arriving, key=price_order):
                bisect.insort(rows, row, key=price_order)
            if rows:
                # The lowest price id: the held group's first when it stays, else the lowest
                # arriving one; worked out over every row only when the first one went.
                first = None
                if group is not None and not dead[group.first_row]:
                    first = group.first_row
                    if arriving:
                        low = min(arriving, key=ids.__getitem__)
                        first = low if ids[low] < ids[first] else first
                groups[where] = book._group(where[0], rows, in_price_order=True, first=first)
        book._groups = groups
        book._list_groups()
        named = self._kinds_named
        book._kinds_named = array("i", named)
        listed = set(named)
        for kind in sorted({columns.kind[row] for row in added} - listed):
            bisect.insort(book._kinds_named, kind, key=lambda k: (kinds[k][0][0], kinds[k][1][0]))
        book._set_fresh_until()
        return book

    def _gpu_index_updated(
        self, columns: OfferColumns, dropped: Sequence[int], added: Sequence[int]
    ) -> dict[str, bytes] | None:
        """This book's index by GPU (when built) for ``updated``'s book: the rows of the GPUs
        the changed providers' offers leave or join worked out again, the others shared."""
        index = self._gpu_index
        if index is None:
            return None  # built on first use
        gpus, ids, dead = columns.gpus, columns.price_id, columns.dead
        old_kinds, kinds = self.columns.kinds, columns.kinds
        arriving: dict[str, list[int]] = {}
        touched = {gpus[old_kinds[columns.kind[row]][1][1]].slug for row in dropped}
        for row in added:
            arriving.setdefault(gpus[kinds[columns.kind[row]][1][1]].slug, []).append(row)
        updated = dict(index)
        for slug in touched | arriving.keys():
            rows = [row for row in unpacked(index.get(slug, b"")) if not dead[row]]
            if slug in arriving:
                rows = sorted(rows + arriving[slug], key=ids.__getitem__)
            if rows:
                updated[slug] = packed(rows)
            else:
                updated.pop(slug, None)
        return updated

    def _group(
        self,
        hardware: HardwareKey,
        rows: Sequence[int],
        *,
        in_price_order: bool = False,
        first: int | None = None,
    ) -> _Group:
        """The group of ``rows`` (in price-id order, or already in price order), in price order
        (equal prices in price-id order), its stale rows split off; ``first``, when known, the
        row with the lowest price id (rows in price order)."""
        columns = self.columns
        if in_price_order:
            if first is None:
                first = min(rows, key=columns.price_id.__getitem__)
            entries = array("i", rows)
        else:  # stable: equal prices stay in price-id order
            first, entries = rows[0], array("i", sorted(rows, key=columns.usd.__getitem__))
        group = _Group(hardware, columns.offer(first), entries)
        group.first_row = first
        group.split_stale(columns.stale, columns.volatile)
        return group

    def _list_groups(self) -> None:
        """The groups in the order of their first offers (as the catalog is read)."""
        self.groups = sorted(self._groups.values(), key=lambda group: group.order)

    def _set_fresh_until(self) -> None:
        """When the first fresh price turns stale (the offers' stale flags are then out of date),
        and the newest observation among the book's offers (C-speed scans of the live rows)."""
        columns = self.columns
        flip = bytes.maketrans(b"\x00\x01", b"\x01\x00")
        size = len(columns)
        dead = int.from_bytes(columns.dead, "little")
        fresh = (int.from_bytes(columns.stale, "little") | dead).to_bytes(size, "little")
        fresh = fresh.translate(flip)
        end = min(compress(columns.stale_at, fresh), default=None)
        if end == NO_INSTANT:  # rows without a stale-at instant never turn stale
            end = min((at for at in compress(columns.stale_at, fresh) if at != NO_INSTANT),
                      default=None)  # fmt: skip
        self.fresh_until: datetime | None = None if end is None else instant(end)
        live = columns.dead.translate(flip)
        newest = max(compress(columns.observed, live), default=None)
        self.newest_observed_at: datetime | None = None if newest is None else instant(newest)

    def offer(self, row: int) -> Offer:
        """The offer at ``row`` of the book."""
        return self.columns.offer(row)

    def __len__(self) -> int:
        return self.columns.live

    @property
    def offers(self) -> list[Offer]:
        """Every offer, in price-id order (builds them all: for tests and small books)."""
        return [self.columns.offer(row) for row in self.columns.live_rows()]

    def machine_rows(
        self, provider: str, instance_type: str, region: str | None = None,
        pricing_model: str | None = None,
    ) -> list[int]:  # fmt: skip
        """The rows of one instance type (in one region under one pricing model, when given),
        in price-id order."""
        columns = self.columns
        kinds, named = columns.kinds, self._kinds_named

        def name(kind: int) -> tuple[str, str]:
            return kinds[kind][0][0], kinds[kind][1][0]

        low = bisect.bisect_left(named, (provider, instance_type), key=name)
        high = bisect.bisect_right(named, (provider, instance_type), lo=low, key=name)
        if pricing_model is None:
            models: Iterable[int] = range(self._width)
        elif pricing_model in columns.models:
            models = [columns.models.index(pricing_model)]
        else:
            return []
        machines, found = self._machines, list[int]()
        for kind in named[low:high]:
            for model in models:
                rows = machines.get(kind * self._width + model)
                if rows:
                    found.extend(unpacked(rows))
        if region is not None:
            places = columns.places
            found = [row for row in found if places[columns.place[row]][0] == region]
        return sorted(found, key=columns.price_id.__getitem__)

    def find(
        self, provider: str, instance_type: str, region: str, pricing_model: str
    ) -> Offer | None:
        """The offer of one machine in one region under one pricing model (the first in book
        order), or None."""
        rows = self.machine_rows(provider, instance_type, region, pricing_model)
        return self.columns.offer(rows[0]) if rows else None

    def gpu_rows(self, gpu: str) -> list[int]:
        """The rows of every offer of one GPU (by slug), in price-id order. The index by GPU is built
        on the first call, in one pass over the book, and kept with it (a compare names several
        GPUs per request, and the book serves every request of its catalog version)."""
        index = self._gpu_index
        if index is None:
            columns = self.columns
            kinds, gpus = columns.kinds, columns.gpus
            slug_of = {kind: gpus[kinds[kind][1][1]].slug for kind in set(columns.kind)}
            lists: dict[str, list[int]] = {}
            kind_of = columns.kind
            for row in columns.live_rows():
                lists.setdefault(slug_of[kind_of[row]], []).append(row)
            index = self._gpu_index = {slug: packed(rows) for slug, rows in lists.items()}
        return list(unpacked(index.get(gpu, b"")))

    def covered(self, rows: Sequence[int], c: Constraints) -> list[int]:
        """``rows`` whose offers ``c`` covers (``Constraints.covers``), in order."""
        columns = self.columns
        models = [name in c.pricing for name in columns.models]
        kinds, gpus = columns.kinds, columns.gpus
        rows = [
            row for row in rows
            if models[columns.model[row]]
            and (not c.gpus or gpus[kinds[columns.kind[row]][1][1]].slug in c.gpus)
        ]  # fmt: skip
        return self.in_scope(rows, c)

    def in_scope(self, rows: Sequence[int], c: Constraints) -> list[int]:
        """``rows`` that ``c`` covers as far as providers, regions, countries and mainland China
        go (a group's pricing model and GPU are the caller's to check), in order."""
        columns = self.columns
        kinds, places = columns.kinds, columns.places
        by_kind: dict[int, bool] = {}
        by_place: dict[int, bool] = {}
        kept = []
        for row in rows:
            kind, place = columns.kind[row], columns.place[row]
            ok = by_kind.get(kind)
            if ok is None:
                ok = by_kind[kind] = not c.providers or kinds[kind][0][0] in c.providers
            if not ok:
                continue
            ok = by_place.get(place)
            if ok is None:
                code, country, china = places[place]
                ok = by_place[place] = (
                    (not c.regions or code in c.regions)
                    and (not c.countries or country in c.countries)
                    and (c.mainland_china is None or china == c.mainland_china)
                )
            if ok:
                kept.append(row)
        return kept

    def leaves_out(self, row: int, c: Constraints) -> bool:
        """``c.leaves_out`` of the offer at ``row``, without building it."""
        if not self.columns.stale[row] or c.include_stale:
            return False
        return c.include_stale is False or bool(self.columns.volatile[row])


class _OffersOf(Sequence[Offer]):
    """The offers at a group's rows, built as they are read: a rejection counts them all but
    writes examples for the first few only."""

    __slots__ = ("book", "rows")

    def __init__(self, book: OfferBook, rows: Sequence[int]) -> None:
        self.book = book
        self.rows = rows

    def __len__(self) -> int:
        return len(self.rows)

    @overload
    def __getitem__(self, key: int) -> Offer: ...
    @overload
    def __getitem__(self, key: slice) -> _OffersOf: ...
    def __getitem__(self, key: int | slice) -> Offer | _OffersOf:
        if isinstance(key, slice):
            return _OffersOf(self.book, self.rows[key])
        return self.book.offer(self.rows[key])
