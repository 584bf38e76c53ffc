"""Reads for sizing: catalog rows turned into the estimator's and planner's plain values."""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import threading
import time
from array import array
from collections.abc import Iterator, Sequence, Sized
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any, TypeGuard

from django.conf import settings
from django.core.cache import cache
from django.db import connection, transaction
from django.db.models import BigIntegerField, Count, F, FloatField, Func, Max
from django.db.models.functions import Cast
from django.utils import timezone

from catalog.models import GPU, InstanceType, Interconnect, Price, Provider, Region
from catalog.pricing import PricingModel
from catalog.querysets import MARKETPLACE, price_is_volatile, shelf_life_days

from .estimator import Estimate, GPUSpec, Workload, estimate
from .messages import (
    DEFAULT_LANGUAGE,
    Message,
    MessageCode,
    RejectionCode,
    message_dict,
    message_render,
)
from .planner import Constraints, Offer, OfferBook, Plan, PlanResult, Rejections, plan
from .planner.offers import OfferColumns, instant_us, tail_hardware_key
from .planner.rules import _billed_amount
from .uncertainty import Spread, ranges, spread

logger = logging.getLogger(__name__)


def gpu_spec(gpu: GPU) -> GPUSpec:
    """The estimator's view of a catalog GPU."""
    return GPUSpec(
        slug=gpu.slug,
        memory_gib=gpu.memory_gib,
        memory_bandwidth_gb_s=gpu.memory_bandwidth_gb_s,
        fp32_tflops=gpu.fp32_tflops,
        tf32_tflops=gpu.tf32_tflops,
        bf16_tflops=gpu.bf16_tflops,
        fp16_tflops=gpu.fp16_tflops,
        fp8_tflops=gpu.fp8_tflops,
        int8_tops=gpu.int8_tops,
        architecture=gpu.architecture,
        vendor=gpu.vendor,
        nvlink_bandwidth_gb_s=gpu.nvlink_bandwidth_gb_s,
    )


_INSTANCE_COLUMNS = (
    "pk", "name", "gpu_id", "gpu_count", "gpu_sharing", "vcpus", "ram_gib", "local_disk_gb",
    "local_disk_type", "network_gbps", "provider__slug", "provider__kind", "provider__mainland_china",
    "provider__compliance_notes", "interconnect_intra__slug", "interconnect_intra__kind",
    "interconnect_intra__bandwidth_gb_s", "interconnect_inter__slug", "interconnect_inter__kind",
    "interconnect_inter__rdma", "interconnect_inter__bandwidth_gb_s",
)  # fmt: skip
# Prices are read in chunks (a server-side cursor on PostgreSQL): a quarter of a million rows
# never sit in memory as objects at once.
_PRICE_CHUNK = 20_000
# What tells a shared table changed: its row count, newest id and newest updated_at.
Fingerprint = tuple[Any, ...]
# A GPU's id -> its index in the columns' GPU list, its segment, whether datacenters may use it.
GPUValues = dict[int, tuple[int, str, bool]]


@dataclass(frozen=True)
class _Reading:
    """A book's columns and what they were read from: the GPU values their instance types share
    (one GPUSpec object per GPU: the planner keys estimates on it), the fingerprint of the tables
    every provider shares, and each provider's own (its instance types and prices), so that the
    next read can take only the providers that changed."""

    columns: OfferColumns
    gpus: GPUValues
    shared: Fingerprint
    providers: dict[int, Fingerprint]
    # Read on a base: the base's rows of the providers read again (dead here) and the rows of
    # their offers read again (appended), for OfferBook.updated.
    dropped: Sequence[int] | None = None
    added: Sequence[int] | None = None


def offer_list(*, now: datetime | None = None) -> list[Offer]:
    """Every current price of an active instance type as a planner offer, in price-id order
    (the planner applies the caller's scope: Constraints.covers). Builds every ``Offer``: for
    tests and tools; the offer book keeps the same offers as columns (``offer_columns``)."""
    columns = offer_columns(now=now)
    return [columns.offer(row) for row in range(len(columns))]


def offer_columns(*, now: datetime | None = None) -> OfferColumns:
    """Every current price of an active instance type, as the offer book's columns, read in one
    snapshot of the catalog."""
    return _read(now or timezone.now(), None)[0].columns


@contextlib.contextmanager
def _snapshot() -> Iterator[None]:
    """One view of the catalog for a whole read: a repeatable-read transaction on PostgreSQL (a
    refresh committing meanwhile is not half seen), a transaction elsewhere."""
    if connection.in_atomic_block:  # a caller's transaction (tests) already holds the view
        yield
        return
    with transaction.atomic():
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        yield


def _fingerprints() -> tuple[Fingerprint, dict[int, Fingerprint]]:
    """The shared tables' fingerprint, and each provider's: its instance types' (row count,
    newest id and updated_at: an edit moves updated_at, a row added the count) and its
    ``prices_version``, which every write of its prices moves in the writer's transaction
    (catalog.services.prices_version_move), so that no read of the prices is needed."""
    shared = tuple(
        tuple(
            model.objects.order_by()
            .aggregate(n=Count("id"), top=Max("id"), at=Max("updated_at"))
            .values()
        )
        for model in (GPU, Region, Provider, Interconnect)
    )
    providers: dict[int, Fingerprint] = {
        provider_id: ("prices_version", version)
        for provider_id, version in Provider.objects.values_list("pk", "prices_version")
    }
    rows = (
        InstanceType.objects.order_by()
        .values_list("provider_id")
        .annotate(n=Count("id"), top=Max("id"), at=Max("updated_at"))
    )
    for provider_id, *figures in rows:
        providers[provider_id] = (*providers.get(provider_id, ()), "InstanceType", *figures)
    return shared, providers


def _read(now: datetime, base: _Reading | None) -> tuple[_Reading, int | None]:
    """Read the book's columns in one snapshot. With ``base`` (the held book's reading, for the
    same shelf-life settings): only the providers whose fingerprint moved are read again, the
    others' offers are kept (their stale flags set again as of ``now``); everything is read
    when a shared table moved. Returns the reading and how many providers were read again
    (None: all)."""
    with _snapshot():
        shared, providers = _fingerprints()
        if base is None or base.shared != shared:
            specs: list[GPUSpec] = []
            gpus: GPUValues = {}
            for gpu in GPU.objects.all():
                gpus[gpu.pk] = (len(specs), gpu.segment, gpu.datacenter_use_allowed)
                specs.append(gpu_spec(gpu))
            columns = _read_columns(now, gpus, None, None, specs)
            return _Reading(columns, gpus, shared, providers), None
        changed = {
            provider_id
            for provider_id in providers.keys() | base.providers.keys()
            if providers.get(provider_id) != base.providers.get(provider_id)
        }
        moves: list[Any] = []
        columns = _read_columns(now, base.gpus, base.columns, changed, base.columns.gpus, moves)
        dropped, added = moves
        return _Reading(columns, base.gpus, shared, providers, dropped, added), len(changed)


def _read_columns(
    now: datetime,
    gpus: GPUValues,
    base: OfferColumns | None,
    changed: set[int] | None,
    specs: list[GPUSpec],
    moves: list[Any] | None = None,
) -> OfferColumns:
    """The current prices of active instance types as columns, in price-id order: all of them,
    or (``base``) ``base``'s offers of unchanged providers and the ``changed`` providers' read
    again. Instance types' and regions' planner values are built once each and shared."""
    instances = InstanceType.objects.filter(is_active=True)
    prices = Price.objects.current().filter(instance_type__is_active=True)
    if base is None:
        columns = OfferColumns(gpus=specs)
        for pk, code, country, china in Region.objects.values_list(
            "pk", "code", "country", "mainland_china"
        ):
            columns.place_ids[pk] = len(columns.places)
            columns.places.append((code, country, china))
    else:
        assert changed is not None
        slugs = set(Provider.objects.filter(pk__in=changed).values_list("slug", flat=True))
        # Columns of its own (the held book keeps answering from the base's), every row where
        # it was; the changed providers' rows die, their offers read again are appended.
        columns = base.copy()
        dropped = columns.kill_kinds(
            [kind for kind, (head, _, _) in enumerate(base.kinds) if head[0] in slugs]
        )
        kept_count = len(columns)
        instances = instances.filter(provider_id__in=changed)
        prices = prices.filter(instance_type__provider_id__in=changed)
    kinds, kind_ids = (
        list(columns.kinds),
        columns.kind_ids,
    )  # the instance types: a tuple at the end
    made: dict[int, tuple[int, bool]] = {}  # instance type id -> (kind, marketplace), this read
    # Values tens of thousands of instance types repeat (providers' heads, hardware keys, words
    # such as "dedicated" or "nvme"), one object each: a quarter of them is most of the book.
    shared: dict[Any, Any] = {}
    instance_rows = instances.values_list(*_INSTANCE_COLUMNS).iterator(chunk_size=_PRICE_CHUNK)
    for (instance_id, name, gpu_id, gpu_count, sharing, vcpus, ram, disk, disk_type, network,
         provider, provider_kind, provider_china, notes, intra_slug, intra_kind, intra_bw,
         inter_slug, inter_kind, inter_rdma, inter_bw) in instance_rows:  # fmt: skip
        spec, segment, allowed = gpus[gpu_id]  # the GPU's index in ``specs``
        words = (sharing, disk_type, intra_slug, intra_kind, inter_slug, inter_kind)
        sharing, disk_type, intra_slug, intra_kind, inter_slug, inter_kind = (
            shared.setdefault(word, word) for word in words
        )
        tail = (
            name, spec, segment, allowed, float(gpu_count), sharing, vcpus, ram, disk, disk_type,
            intra_slug, intra_kind, intra_bw, inter_slug, inter_kind,
            bool(inter_slug and inter_rdma), network,
            # The fabric's own figure in Gbit/s, for where the instance's network is not published.
            inter_bw * 8 if inter_slug and inter_bw is not None else None,
        )  # fmt: skip
        head = (provider, provider_china, notes)
        hardware = tail_hardware_key(tail, specs)
        values = (shared.setdefault(head, head), tail, shared.setdefault(hardware, hardware))
        index = kind_ids.get(instance_id)
        if index is None:
            if base is not None and kind_ids is base.kind_ids:  # the held book's: copied first
                kind_ids = columns.kind_ids = dict(kind_ids)
            index = kind_ids[instance_id] = len(kinds)
            kinds.append(values)
        else:
            kinds[index] = values  # the same instance type read again: its row is reused
        made[instance_id] = (index, provider_kind == MARKETPLACE)

    models = {name: index for index, name in enumerate(columns.models)}
    # Shelf life (microseconds) and volatility by pricing model and marketplace.
    lives: dict[tuple[int, bool], tuple[int, bool]] = {}
    cutoff = instant_us(now)
    place_ids = columns.place_ids
    # On PostgreSQL the observed-at instant comes as microseconds since the epoch (exact:
    # EXTRACT gives a numeric): parsing a quarter of a million timestamps in Python costs seconds.
    in_microseconds = connection.vendor == "postgresql"
    observed_field: Any = (
        Func(
            F("observed_at"),
            template="(EXTRACT(EPOCH FROM %(expressions)s) * 1000000)::bigint",
            output_field=BigIntegerField(),
        )
        if in_microseconds
        else F("observed_at")
    )
    rows = (
        prices.annotate(usd=Cast("usd_per_hour", FloatField()), observed_us=observed_field)
        .values_list("pk", "instance_type_id", "region_id", "pricing_model", "usd", "observed_us")
        .order_by("pk")
    )
    # The columns' appends, bound once (a quarter of a million rows).
    add_id, add_kind, add_place = columns.price_id.append, columns.kind.append, columns.place.append
    add_model, add_usd, add_observed = (
        columns.model.append,
        columns.usd.append,
        columns.observed.append,
    )
    add_stale_at, add_stale, add_volatile = (
        columns.stale_at.append, columns.stale.append, columns.volatile.append,
    )  # fmt: skip
    add_dead = columns.dead.append
    for pk, instance_id, region_id, pricing_model, usd, observed in rows.iterator(
        chunk_size=_PRICE_CHUNK
    ):
        kind, on_market = made[instance_id]
        model = models.get(pricing_model)
        if model is None:
            model = models[pricing_model] = len(columns.models)
            columns.models.append(pricing_model)
        known = lives.get((model, on_market))
        if known is None:
            days = shelf_life_days(pricing_model, marketplace=on_market)
            volatile = price_is_volatile(pricing_model, marketplace=on_market)
            known = lives[(model, on_market)] = (days * 86_400_000_000, volatile)
        life, volatile = known
        if not in_microseconds:
            observed = instant_us(observed)
        add_id(pk)
        add_kind(kind)
        add_place(place_ids[region_id])
        add_model(model)
        add_usd(usd)
        add_observed(observed)
        add_stale_at(observed + life)
        add_stale(observed + life <= cutoff)
        add_volatile(volatile)
        add_dead(0)
    columns.kinds = tuple(kinds)
    if base is None:
        _drop_unpriced_kinds(columns)
        columns.index_kinds()
    else:
        arriving: dict[int, array[int]] = {}
        for row in range(kept_count, len(columns)):  # their instance types' rows were all dropped
            kind = columns.kind[row]
            rows = arriving.get(kind)
            if rows is None:
                rows = arriving[kind] = array("i")
            rows.append(row)
        kind_rows = columns.kind_rows
        for kind, rows in arriving.items():
            kind_rows[kind] = kind_rows.get(kind, b"") + rows.tobytes()
        if len(columns) > kept_count:
            columns.ordered = False
        # The kept offers' stale flags as of ``now`` (a C-speed check; set again only when one
        # moved: the book is then arranged again, see _swap_in).
        if not columns.stale_flags_current(now):
            columns.restamp(now)
        if moves is not None:  # what changed, for OfferBook.updated
            moves[:] = [array("i", dropped), range(kept_count, len(columns))]
    return columns


def _drop_unpriced_kinds(columns: OfferColumns) -> None:
    """Leave out of the tables the instance types that have no current price (read with the
    rest, they would only take room)."""
    priced = sorted(set(columns.kind))
    if len(priced) == len(columns.kinds):
        return
    new = dict(zip(priced, range(len(priced)), strict=True))
    columns.kinds = tuple(columns.kinds[kind] for kind in priced)
    columns.kind_ids = {
        instance_id: new[kind] for instance_id, kind in columns.kind_ids.items() if kind in new
    }
    columns.kind = array("i", map(new.__getitem__, columns.kind))


# What an offer book was read for: (catalog version, the shelf-life settings).
BookKey = tuple[Any, ...]


@dataclass(frozen=True)
class _Held:
    """This process's offer book, what it was read for and what it was read from."""

    key: BookKey
    book: OfferBook
    built_at: datetime
    valid_until: datetime | None  # when its first fresh price turns stale
    reading: _Reading | None = None


# One book of every offer per process, for the catalog version it was read at. A worker brings
# it up to date after any catalog change (see catalog_version), reading again only the
# providers that changed: in the background while the book it holds is still fresh
# (OFFER_BOOK_BACKGROUND_REBUILD), else before answering.
_book: _Held | None = None
_book_lock = threading.Lock()
_rebuilding: set[BookKey] = set()
_rebuilding_lock = threading.Lock()  # not _book_lock: a rebuild holds that while it reads


def offer_book(version: str, *, now: datetime | None = None) -> OfferBook:
    """Every current offer, arranged for the planner, as of catalog ``version``
    (``catalog_version()``) or, while a newer book is being read, of the version before it.

    Reading and arranging the whole catalog takes seconds at a quarter of a million prices
    (bench/RESULTS.md); kept, a recommendation only plans. After a refresh or an edit changes
    the version, the held book keeps answering while a thread brings it up to date (only the
    providers whose rows changed are read again) and swaps the new book in (no request waits
    for the read); every answer comes from one whole version (``book.version``). Nothing stale
    is served: a book whose first fresh price has turned stale is never handed out, the new one
    is read first.
    """
    now = now or timezone.now()
    key = (version, _shelf_lives())
    kept = _book
    if _usable(kept, key, now):
        return kept.book
    if (
        kept is not None
        and settings.OFFER_BOOK_BACKGROUND_REBUILD
        and kept.key[1:] == key[1:]
        and _usable(kept, kept.key, now)
    ):
        _rebuild_in_background(key)
        return kept.book
    with _book_lock:  # one build per process, whatever the number of threads asking
        kept = _book
        if _usable(kept, key, now):
            return kept.book
        kept = None  # the held book is let go during the swap (see _swap_in)
        return _swap_in(key, now).book


def _usable(kept: _Held | None, key: BookKey, now: datetime) -> TypeGuard[_Held]:
    # A clock well behind the build (tests that move time) would see stale flags set too early;
    # requests racing the build by a moment are fine.
    if kept is None or kept.key != key or now < kept.built_at - timedelta(minutes=1):
        return False
    return kept.valid_until is None or now < kept.valid_until


def _swap_in(key: BookKey, now: datetime) -> _Held:
    """Read the book for ``key`` and make it this process's (under ``_book_lock``): from the
    held book's reading, for the same shelf-life settings, only the providers that changed."""
    global _book
    held = _book
    base = held.reading if held is not None and held.key[1:] == key[1:] else None
    started = time.perf_counter()
    # No gc.freeze() here: what the book holds is out of the collector's sight without it (its
    # tuples of plain values are untracked after one pass; its indexes hold ``bytes``, never
    # tracked: sizing.planner.offers.packed), and freezing in a worker would also freeze
    # whatever a request thread holds at that moment (its cyclic garbage never collected). A
    # worker forked from a master that froze its objects must not unfreeze and walk them either
    # (that writes to, and so copies, every page the master shares with it).
    reading, reread = _read(now, base)
    if (
        held is not None
        and base is not None
        and reading.dropped is not None
        and reading.added is not None
        and held.book.columns is base.columns
        and held.built_at <= now
        and (held.book.fresh_until is None or now < held.book.fresh_until)
        and reading.columns.dead_count <= reading.columns.live
    ):
        # No kept offer's stale flag moved: only what the changed providers touch is arranged.
        book = held.book.updated(reading.columns, reading.dropped, reading.added, version=key[0])
    else:
        # Arranged from scratch, the dead rows left out (once they outnumber the live ones, so
        # an update's columns grow to at most twice the book's).
        book = OfferBook(reading.columns, version=key[0])
        if book.columns is not reading.columns:
            reading = replace(reading, columns=book.columns)
    # What the update moved is of no use once it is arranged: not kept with the book.
    reading = replace(reading, dropped=None, added=None)
    swapped = _book = _Held(key, book, now, book.fresh_until, reading)
    # The held book goes now (a request still planning over it keeps it until it answers), and
    # the heap pages it and the update's temporary objects leave free go back to the system.
    del held, base, reading, book
    _heap_trim()
    logger.info(
        "offer book: %d offers read in %.2f s (%s)", len(swapped.book), time.perf_counter() - started,
        "every provider" if reread is None else f"{reread} provider(s) changed",
    )  # fmt: skip
    return swapped


def _heap_trim() -> None:
    """Give the C heap's free pages back to the system (glibc ``malloc_trim``; nothing
    elsewhere). A book's columns and indexes are large C allocations: freed, they stay resident
    in the heap (and in the update thread's own malloc arena) unless trimmed, so without this a
    worker's RSS grew by tens of MiB over a run of refreshes (bench/RESULTS.md)."""
    global _malloc_trim
    if _malloc_trim is None:
        _malloc_trim = False
        with contextlib.suppress(Exception):
            import ctypes
            import ctypes.util

            name = ctypes.util.find_library("c")
            trim = getattr(ctypes.CDLL(name), "malloc_trim", None) if name else None
            if trim is not None:
                trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
                _malloc_trim = trim
    if _malloc_trim:
        _malloc_trim(0)


_malloc_trim: Any = None  # libc's malloc_trim once looked up; False where there is none


def _rebuild_in_background(key: BookKey) -> None:
    """Read the book for ``key`` in a thread and swap it in; one thread per key at a time."""
    with _rebuilding_lock:
        if key in _rebuilding:
            return
        _rebuilding.add(key)
    thread = threading.Thread(target=_rebuild, args=(key,), name="offer-book", daemon=True)
    thread.start()


def _rebuild(key: BookKey) -> None:
    try:
        with _book_lock:
            # Nothing to do when a request that could not wait swapped this version in; and only
            # while the catalog is still at ``key`` (a later change starts its own thread). No
            # reference to the held book is kept here: _swap_in lets it go.
            if (_book is None or _book.key != key) and catalog_version() == key[0]:
                _swap_in(key, timezone.now())
    except Exception:  # the held book keeps answering; the next request tries again
        logger.exception("offer book rebuild failed")
    finally:
        with contextlib.suppress(Exception):
            connection.close()  # this thread's own database connection
        with _rebuilding_lock:
            _rebuilding.discard(key)


def offer_book_read_at_start() -> None:
    """Read this process's first book now, unless it holds one: the gunicorn master calls it
    before it forks the workers (gunicorn.conf.py ``on_starting``, which then closes the
    connections the read opened), so every worker starts with the book, shared copy-on-write.
    A failed read is logged, and each worker's first recommendation reads the book instead."""
    try:
        with _book_lock:
            if _book is None:
                _swap_in((catalog_version(), _shelf_lives()), timezone.now())
    except Exception:
        logger.exception("offer book read at start failed")


def _shelf_lives() -> tuple[Any, ...]:
    """The shelf-life settings an offer book's stale flags were computed with."""
    return (settings.PRICE_STALE_AFTER_DAYS, *sorted(settings.PRICE_SHELF_LIFE_DAYS.items()))


def offer_book_forget() -> None:
    """Drop this process's book (tests that rewrite the catalog under a fixed clock)."""
    global _book
    _book = None


# --- Operations: estimate, recommend, compare ----------------------------------------------


def _round(value: float | None, places: int = 3) -> float | None:
    return None if value is None else round(value, places)


def estimate_dict(
    est: Estimate,
    *,
    gpu: str | None,
    gpu_count: int,
    workload: Workload,
    fit_on: str,
    fits: bool | None = None,
    fits_point: bool | None = None,
    lang: str = DEFAULT_LANGUAGE,
    extra_notes: Sequence[Message] = (),
) -> dict[str, Any]:
    """The estimate as the API returns it (DESIGN.md key names, GiB, hours), with the ranges of
    its figures (sizing/uncertainty.py) and what ``fits`` was decided on (``fit_on``);
    ``fits``/``fits_point`` (the estimate itself fits) where the caller decided them.

    ``notes`` are the working: the estimator's own notes (and the range notes, with
    ``extra_notes``) in ``lang``, coded in ``note_messages``; the formula working of
    sizing/memory.py and sizing/compute.py in English."""
    fitted = gpu is not None
    coded = [*est.note_messages, _range_note(workload, est, gpu_count), *extra_notes]
    english = {message.text: message for message in est.note_messages}
    notes = [
        message_render(english[text].code, english[text].params, lang) if text in english else text
        for text in est.notes
    ]
    notes += [message_render(m.code, m.params, lang) for m in coded[len(est.note_messages) :]]
    return {
        "memory_per_gpu_gib": round(est.memory_per_gpu_gib, 2),
        "breakdown": {key: round(value, 3) for key, value in est.breakdown.items()},
        "total_memory_gib": round(est.total_memory_gib, 2),
        "min_gpus": est.min_gpus,
        "training_flops": est.training_flops,
        "mfu": _round(est.mfu),
        "tokens_per_second": _round(est.tokens_per_second, 1),
        "gpu_hours": _round(est.gpu_hours, 2),
        "est_hours": _round(est.est_hours, 2),
        "gpu": gpu,
        "gpu_count": gpu_count,
        "sharding": est.sharding,
        "fits": (est.fits if fits is None else fits) if fitted else None,
        "headroom_pct": _round(est.headroom_pct, 1) if fitted else None,
        "assumptions": est.assumptions,
        "notes": notes,
        "note_messages": [message_dict(m, lang) for m in coded],
        **ranges(workload, est, gpu_count),
        "fit_on": fit_on,
        "fits_point": (est.fits if fits_point is None else fits_point) if fitted else None,
    }


def _range_note(workload: Workload, est: Estimate, gpu_count: int | None = None) -> Message:
    """What the memory range on ``gpu_count`` GPUs is and what it rests on, as a note."""
    memory = spread("memory", workload, gpu_count)
    return Message(
        MessageCode.NOTE_RANGE,
        {
            "memory_low": est.memory_per_gpu_gib * memory.low,
            "memory_high": est.memory_per_gpu_gib * memory.high,
            "low": memory.low,
            "high": memory.high,
            "basis": memory.basis,
            "rows": memory.rows,
        },
    )


def plan_dict(
    p: Plan,
    lang: str = DEFAULT_LANGUAGE,
    spreads: tuple[Spread, Spread] | None = None,
) -> dict[str, Any]:
    """A plan as the API returns it; reasons and warnings in ``lang``, as sentences and as
    coded messages; with ``spreads`` (memory, time: sizing/uncertainty.py) the ranges of its
    memory, hours and total."""
    offer = p.offer
    reasons = [message_dict(m, lang) for m in p.reasons]
    warnings = [message_dict(m, lang) for m in p.warnings]
    return {
        "rank": p.rank,
        "provider": offer.provider,
        "region": offer.region,
        "other_regions": p.other_regions,
        "instance_type": offer.instance_type,
        "gpu": offer.gpu.slug,
        "gpu_count": p.gpu_count,
        "nodes": p.nodes,
        "pricing_model": offer.pricing_model,
        "usd_per_hour": round(p.usd_per_hour, 4),
        "usd_per_gpu_hour": round(p.usd_per_gpu_hour, 4),
        "est_hours": _round(p.est_hours, 2),
        "est_total_usd": _round(p.est_total_usd, 2),
        "memory_per_gpu_gib": round(p.memory_per_gpu_gib, 2),
        "headroom_pct": round(p.headroom_pct, 1),
        "sharding": p.sharding,
        "interconnect": {
            "intra_node": offer.intra_slug,
            "intra_node_bandwidth_gb_s": offer.intra_bandwidth_gb_s,
            "inter_node": offer.inter_slug,
            "inter_node_rdma": offer.inter_rdma,
            "network_gbps": offer.network_gbps,
        },
        "host_check": p.host_check,
        "price_observed_at": offer.observed_at,
        "stale": offer.stale,
        "reasons": [m["text"] for m in reasons],
        "warnings": [m["text"] for m in warnings],
        "reason_messages": reasons,
        "warning_messages": warnings,
        **(_plan_ranges(p, *spreads) if spreads else {}),
    }


def _plan_ranges(p: Plan, memory: Spread, time: Spread) -> dict[str, Any]:
    """A plan's memory per GPU, hours, GPU-hours and total USD as [low, high]: GPU-hours are
    the hours range x the plan's GPU count; the total is billed as the plan is (whole
    commitment terms), at each end of the hours range."""
    hours = time.of(p.est_hours, 6)
    total = gpu_hours = None
    if hours is not None:
        ends = [_billed_amount(p.usd_per_hour, p.offer.pricing_model, h) for h in hours]
        total = [round(end, 2) for end in ends if end is not None] or None
        gpu_hours = [round(h * p.gpu_count, 2) for h in hours]  # the plan's GPUs, all nodes
    return {
        "memory_per_gpu_gib_range": memory.of(p.memory_per_gpu_gib),
        "est_hours_range": time.of(p.est_hours),
        "gpu_hours_range": gpu_hours,
        "est_total_usd_range": total,
    }


def plan_spreads(workload: Workload, gpu_count: float | None = None) -> tuple[Spread, Spread]:
    """The memory and time multipliers of a workload's plan on ``gpu_count`` GPUs (GPUs per
    node x nodes; its layout, one GPU or several, picks the rows: sizing/uncertainty.json)."""
    count = None if gpu_count is None else max(1, int(gpu_count))
    return spread("memory", workload, count), spread("time", workload, count)


def rejected_dict(rejected: Rejections, lang: str = DEFAULT_LANGUAGE) -> dict[str, Any]:
    """Rejections by reason code: count, what the code means, and examples, in ``lang``."""
    answer = {}
    for reason, entry in rejected.by_reason.items():
        examples = [message_dict(m, lang) for m in entry["examples"]]
        answer[str(reason)] = {
            "count": entry["count"],
            "examples": [m["text"] for m in examples],
            "code": str(reason),
            "params": {},
            "text": message_render(reason, {}, lang),
            "example_messages": examples,
        }
    return answer


def prices_observed_span(offers: list[Offer]) -> dict[str, datetime | None]:
    """When the oldest and the newest price an answer used were observed (None without any)."""
    seen = [offer.observed_at for offer in offers]
    return {
        "prices_oldest_observed_at": min(seen) if seen else None,
        "prices_newest_observed_at": max(seen) if seen else None,
    }


def _headline_estimate(
    workload: Workload, plans: list[Plan], fit_on: str, lang: str = DEFAULT_LANGUAGE
) -> dict[str, Any]:
    if plans:
        top = plans[0]
        return estimate_dict(
            top.estimate,
            gpu=top.offer.gpu.slug,
            gpu_count=int(max(top.gpu_count, 1)),
            workload=workload,
            fit_on=fit_on,
            fits=True,  # the planner's verdict (on fit_on); then the estimate fits too
            fits_point=True,
            lang=lang,
        )
    return estimate_dict(
        estimate(workload), gpu=None, gpu_count=1, workload=workload, fit_on=fit_on, lang=lang
    )


# Answers are kept this long at most; a change to the catalog (see catalog_version) or a fresh
# price turning stale ends them sooner. Bounds what the fingerprint cannot see (a code deploy).
RECOMMEND_CACHE_SECONDS = 300


def catalog_version() -> str:
    """A fingerprint of everything an answer is built from, in one query: for each table the
    planner reads but prices, its row count, newest id and newest ``updated_at``; for prices,
    the sum of the providers' ``prices_version``, which every write of a price moves in the
    writer's transaction (``catalog.services.prices_version_move``: the ingest, the bulk
    writers, ``Price.save``/``delete`` and ``Price.objects``' own ``update``, ``delete`` and
    ``bulk_create``; tests/catalog/test_price_versions.py). Prices deleted with their instance
    type, region or provider move that table's count. So the price table itself is not read:
    its aggregates cost ~70 ms at 256,000 prices, every 0.7 s per worker (bench/RESULTS.md).
    """
    parts = []
    for model in (GPU, InstanceType, Region, Provider, Interconnect):
        table = model._meta.db_table
        # Table names come from the models, never from input.
        parts.append(
            f"(SELECT COUNT(*) FROM {table}), (SELECT MAX(id) FROM {table}), "  # noqa: S608
            f"(SELECT MAX(updated_at) FROM {table})"
        )
    parts.append(f"(SELECT SUM(prices_version) FROM {Provider._meta.db_table})")  # noqa: S608
    sql = "SELECT " + ", ".join(parts)
    with connection.cursor() as cursor:
        cursor.execute(sql)
        row = cursor.fetchone()
    return hashlib.sha256(repr(row).encode()).hexdigest()


# This process's last fingerprint and when (time.monotonic) the query that read it started.
_version_read: tuple[float, str] | None = None
_version_lock = threading.Lock()
# The background reader (CATALOG_VERSION_BACKGROUND): (process id, thread); when a request last
# asked (time.monotonic); set when a request asks while the reader sleeps for want of requests.
_version_reader: tuple[int, threading.Thread] | None = None
_version_asked = 0.0
_version_wanted = threading.Event()
# The reader reads again once the fingerprint it holds is this fraction of the max age old, so
# that a request finds one younger than the max age while the query (~50 ms) runs; it stops
# reading when no request asked for this many max ages.
_VERSION_READ_AT = 0.7
_VERSION_IDLE_AFTER = 10


def catalog_version_recent() -> str:
    """``catalog_version()``, read at most once per ``CATALOG_VERSION_MAX_AGE_S`` seconds per
    process (0: every call). The fingerprint query costs ~35 ms at 250,000 prices
    (bench/RESULTS.md), which every recommendation, cached or not, paid; a catalog change is
    now seen up to that many seconds later, and an answer still comes from one whole version.

    With ``CATALOG_VERSION_BACKGROUND`` a thread of the process reads it again before it ages
    out, while requests keep coming, so no request waits for the query (one in ten did, at ten
    requests a second); a request reads it itself only when the one held is too old (the first
    after a quiet spell, or a reader that fell behind).
    """
    max_age = settings.CATALOG_VERSION_MAX_AGE_S
    started = time.monotonic()
    if max_age > 0 and settings.CATALOG_VERSION_BACKGROUND:
        _version_keep_fresh(started)
    read = _version_read
    if max_age > 0 and read is not None and 0 <= started - read[0] < max_age:
        return read[1]
    version = catalog_version()
    _version_store(started, version)
    return version


def _version_store(started: float, version: str) -> None:
    """Keep ``version`` read at ``started`` unless a read that started later is already kept."""
    global _version_read
    with _version_lock:
        if _version_read is None or _version_read[0] <= started:
            _version_read = (started, version)


def _version_keep_fresh(now: float) -> None:
    """Note that a request asked, and start this process's reader if it has none (a forked
    worker does not inherit its master's threads)."""
    global _version_asked, _version_reader
    _version_asked = now
    reader = _version_reader
    if reader is not None and reader[0] == os.getpid() and reader[1].is_alive():
        if not _version_wanted.is_set():
            _version_wanted.set()
        return
    with _version_lock:
        reader = _version_reader
        if reader is None or reader[0] != os.getpid() or not reader[1].is_alive():
            thread = threading.Thread(
                target=_version_reader_loop, name="catalog-version", daemon=True
            )
            _version_reader = (os.getpid(), thread)
            thread.start()
    _version_wanted.set()


def _version_reader_loop() -> None:
    """Read the fingerprint again whenever the one held is ``_VERSION_READ_AT`` of the max age
    old, while requests ask for it; sleep until one asks after a quiet spell."""
    while True:
        max_age = settings.CATALOG_VERSION_MAX_AGE_S
        now = time.monotonic()
        if max_age <= 0 or now - _version_asked > _VERSION_IDLE_AFTER * max_age:
            with contextlib.suppress(Exception):
                connection.close()  # a quiet process holds no connection for it
            _version_wanted.clear()
            _version_wanted.wait()
            continue
        read = _version_read
        wait = 0.0 if read is None else read[0] + _VERSION_READ_AT * max_age - now
        if wait > 0:
            time.sleep(wait)
            continue
        try:
            _version_store(now, catalog_version())
        except Exception:  # requests read it themselves meanwhile
            logger.warning("catalog fingerprint read failed", exc_info=True)
            with contextlib.suppress(Exception):
                connection.close()  # this thread's own connection; a new one next time
            time.sleep(max_age)


def book_as_of(book: OfferBook) -> datetime | None:
    """How fresh the catalog an answer was planned over is: the newest ``observed_at`` among the
    book's offers (every current price of an active instance type), of the same version as the
    answer's plans. (A catalog-wide ``MAX(observed_at)`` per request was a sequential scan of
    every price, ~60 ms at 250,000, and could name a newer version than the book answering.)"""
    return book.newest_observed_at


def _answer_key(
    workload: Workload,
    constraints: Constraints,
    objective: str,
    limit: int,
    lang: str,
    all_sizes: bool = True,
) -> str:
    text = repr((workload, constraints, objective, limit, lang, all_sizes, _shelf_lives()))
    return "recommend:" + hashlib.sha256(text.encode()).hexdigest()


def recommend(
    workload: Workload,
    constraints: Constraints,
    *,
    objective: str,
    limit: int,
    lang: str = DEFAULT_LANGUAGE,
    all_sizes: bool = True,
) -> dict[str, Any]:
    """Ranked plans for a workload over the live catalog, with rejections and advice, their
    text in ``lang`` (sizing.messages.LANGUAGES); ``all_sizes=False`` lists one size of an
    offer per total (``sizing.planner.plan``).

    Answers are cached per request and catalog fingerprint, so bursts of the same question cost
    one small query each; any write to the catalog (a refresh, a curator's edit) changes the
    fingerprint, and an answer also ends when one of its fresh prices would turn stale.
    """
    now = timezone.now()
    version = catalog_version_recent()
    key = f"{_answer_key(workload, constraints, objective, limit, lang, all_sizes)}:{version}"
    cached = _cache_get(key)
    if cached is not None and now < cached["valid_until"]:
        answer: dict[str, Any] = cached["answer"]
        return answer
    book = offer_book(version, now=now)
    if book.version != version:  # the held book answers while the new one is read
        key = f"{_answer_key(workload, constraints, objective, limit, lang, all_sizes)}:{book.version}"
    result = plan(
        workload, book, constraints, objective=objective, limit=limit, all_sizes=all_sizes
    )
    answer = {
        "estimate": _headline_estimate(workload, result.plans, constraints.fit_on, lang),
        "recommendations": [
            plan_dict(p, lang, plan_spreads(workload, p.gpu_count)) for p in result.plans
        ],
        "rejected": rejected_dict(result.rejected, lang),
        "advice": [message_render(m.code, m.params, lang) for m in result.advice],
        "advice_messages": [message_dict(m, lang) for m in result.advice],
        "catalog_as_of": book_as_of(book),
        **prices_observed_span([p.offer for p in result.plans]),
        "objective": objective,
        "considered": result.considered,
    }
    timeout = getattr(settings, "RECOMMEND_CACHE_SECONDS", RECOMMEND_CACHE_SECONDS)
    valid_until = now + timedelta(seconds=timeout)
    if book.fresh_until is not None:
        valid_until = min(valid_until, book.fresh_until)
    if timeout > 0:
        _cache_set(key, {"answer": answer, "valid_until": valid_until}, timeout)
    return answer


def _cache_get(key: str) -> dict[str, Any] | None:
    """A cached answer entry ({"answer", "valid_until"}), or None."""
    try:
        entry: dict[str, Any] | None = cache.get(key)
    except Exception:  # a cache outage costs speed, never the answer
        logger.warning("recommend cache unavailable", exc_info=True)
        return None
    return entry


def _cache_set(key: str, value: Any, timeout: int) -> None:
    try:
        cache.set(key, value, timeout)
    except Exception:
        logger.warning("recommend cache unavailable", exc_info=True)


def compare(
    workload: Workload,
    targets: list[dict[str, str]],
    constraints: Constraints,
    *,
    lang: str = DEFAULT_LANGUAGE,
) -> dict[str, Any]:
    """One row per named instance type or GPU: its best plan, or why nothing fits.

    The targets take the place of the providers, GPUs and regions constraints (each target is
    weighed wherever it is sold); the other constraints apply, the stale-price rule included.
    """
    scope = replace(constraints, gpus=(), providers=(), regions=())
    book = offer_book(catalog_version_recent())
    rows = []
    fitted: list[Offer] = []
    first_fit: Plan | None = None
    for target in targets:
        subset: OfferColumns | None = None
        if target.get("gpu"):
            label = target["gpu"]
            # Planned over the whole book with the target's GPU the only one allowed: the
            # planner takes or skips whole groups by GPU, as it would the target's offers in a
            # book of their own (tests/sizing/test_compare_whole_book.py). Arranging such a
            # book cost ~60 ms for a GPU sold 30,000 times (bench/RESULTS.md).
            result = plan(workload, book, replace(scope, gpus=(label,)), limit=1)
        else:
            label = f"{target['provider']}/{target['instance_type']}"
            # The machine's offers in scope, in book order, as a book of their own (a few
            # regions and pricing models: no Offer built).
            subset = _in_scope(book, _target_rows(book, target), scope)
            result = plan(workload, OfferBook(subset), scope, limit=1)
        if result.plans:
            first_fit = first_fit or result.plans[0]
            fitted.append(result.plans[0].offer)
            row = {
                **plan_dict(
                    result.plans[0], lang, plan_spreads(workload, result.plans[0].gpu_count)
                ),
                "fits": True,
                "why_not": None,
                "why_not_message": None,
            }
        else:
            found = _target_rows(book, target)
            if subset is None:
                subset = _in_scope(book, found, scope)
            sold_as = [] if subset else _other_pricing_models(book, found, scope)
            why_not = message_dict(_why_not(result, subset, label, scope, sold_as), lang)
            row = {
                "provider": target.get("provider"),
                "instance_type": target.get("instance_type"),
                "gpu": target.get("gpu"),
                "fits": False,
                "why_not": why_not["text"],
                "why_not_message": why_not,
            }
        row["target"] = label
        rows.append(row)
    return {
        "estimate": _headline_estimate(
            workload, [first_fit] if first_fit else [], constraints.fit_on, lang
        ),
        "rows": rows,
        "catalog_as_of": book_as_of(book),
        **prices_observed_span(fitted),
    }


def _target_rows(book: OfferBook, target: dict[str, str]) -> Sequence[int]:
    """The book's rows of a compare target: every offer of its GPU, or of its machine."""
    if target.get("gpu"):
        return book.gpu_rows(target["gpu"])
    return book.machine_rows(target["provider"], target["instance_type"])


def _in_scope(book: OfferBook, rows: Sequence[int], scope: Constraints) -> OfferColumns:
    """The offers at ``rows`` within ``scope``, in book order (no Offer built)."""
    return book.columns.take(book.covered(rows, scope))


def _other_pricing_models(book: OfferBook, rows: Sequence[int], scope: Constraints) -> list[str]:
    """The pricing models outside ``scope.pricing`` that ``rows`` have a price under within the
    rest of the scope (regions, providers, staleness aside), in PricingModel order."""
    others = tuple(str(m) for m in PricingModel if str(m) not in scope.pricing)
    covered = book.covered(rows, replace(scope, pricing=others))
    models = {book.columns.models[book.columns.model[row]] for row in covered}
    return [name for name in others if name in models]


def _why_not(
    result: PlanResult,
    subset: Sized,
    label: str,
    scope: Constraints | None = None,
    sold_as: Sequence[str] = (),
) -> Message:
    """Why a compared target has no plan: its most frequent rejection, with an example; with no
    price in scope but some under pricing models not asked for (``sold_as``), which ones."""
    if not subset and sold_as and scope is not None:
        return Message(
            MessageCode.NO_PRICE_IN_PRICING,
            {"target": label, "asked": ", ".join(scope.pricing), "sold_as": ", ".join(sold_as),
             "first": sold_as[0]},
        )  # fmt: skip
    if not subset:
        return Message(MessageCode.NO_PRICE_IN_SCOPE, {"target": label})
    reasons = sorted(result.rejected.by_reason.items(), key=lambda item: -item[1]["count"])
    if not reasons:
        return Message(MessageCode.NOTHING_FITS)
    reason, entry = reasons[0]
    example = (
        entry["examples"][0]
        if entry["examples"]
        else Message(MessageCode.EXAMPLE_OFFER, {"offer": ""})
    )
    if reason == RejectionCode.STALE_PRICE and isinstance(subset, OfferColumns):
        example = _stale_example(example, subset)
    return Message(MessageCode.WHY_NOT, {"reason": str(reason), "example": example})


def _stale_example(example: Message, subset: OfferColumns) -> Message:
    """A stale_price example with the price's date, its shelf life and how to weigh it anyway
    (the offer found in ``subset`` by its label; the plain example when it is not there)."""
    label = example.params.get("offer")
    for row in range(len(subset)):
        offer = subset.offer(row)
        if offer.label != label:
            continue
        marketplace = offer.volatile and not price_is_volatile(offer.pricing_model)
        if offer.stale_at is not None:
            days = round((offer.stale_at - offer.observed_at) / timedelta(days=1))
        else:
            days = shelf_life_days(offer.pricing_model, marketplace=marketplace)
        code = MessageCode.EXAMPLE_STALE_MARKETPLACE if marketplace else MessageCode.EXAMPLE_STALE
        params = {
            **example.params,
            "observed_on": offer.observed_at.date().isoformat(),
            "shelf_life_days": days,
            "pricing_model": offer.pricing_model,
        }
        return Message(code, params)
    return example
