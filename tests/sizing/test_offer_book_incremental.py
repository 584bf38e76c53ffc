"""Bringing the held offer book up to date by the providers that changed, against reading the
whole catalog again.

After a refresh of one provider a worker reads again only that provider's instance types and
prices and keeps every other provider's offers from the book it holds (sizing.selectors._read).
Here a varied generated catalog (devtools scale generator) is read, one provider is changed the
ways a refresh changes it (a price moves, one goes, one appears, an instance type is retired),
and the book put together from the held one must hold exactly the offers a book read from
scratch holds, in the same order, and give the same answers; read weeks later, prices of the
providers that did not change must have turned stale in it as they do in a fresh read.
"""

from __future__ import annotations

import gc
import weakref
from dataclasses import replace
from datetime import timedelta
from decimal import Decimal

import pytest
from django.core.management import call_command
from django.db.models import Count
from django.utils import timezone

from catalog.models import GPU, InstanceType, Price, Provider
from catalog.pricing import PricingModel
from sizing import selectors
from sizing.planner import OfferBook, plan
from sizing.planner.offers import unpacked
from sizing.services import constraints_build, workload_build

pytestmark = pytest.mark.django_db

QUESTIONS = [
    ({"model": "llama-3-8b", "method": "lora", "tokens": 2e8}, {}),
    (
        {"model": "llama-3-70b", "method": "full", "gradient_checkpointing": "full", "tokens": 1e9},
        {"datacenter_only": True},
    ),
    ({"model": "llama-3-8b", "method": "lora", "tokens": 2e8}, {"max_usd_per_hour": 20}),
    ({"model": "llama-3-8b", "method": "lora", "tokens": 2e8}, {"include_stale": False}),
]


@pytest.fixture(scope="module", autouse=True)
def _generated(django_db_setup, django_db_blocker):
    with django_db_blocker.unblock():
        call_command("scale_catalog", prices=1500, verbosity=0)
        yield
        call_command("scale_catalog", clear=True, verbosity=0)


def _offers(reading: selectors._Reading) -> list:
    """The reading's offers (its live rows), in price-id order."""
    columns = reading.columns
    return [columns.offer(row) for row in columns.live_rows()]


def _answers(reading: selectors._Reading | OfferBook) -> list:
    book = reading if isinstance(reading, OfferBook) else OfferBook(reading.columns)
    answers = []
    for workload, constraints in QUESTIONS:
        result = plan(workload_build(workload), book, constraints_build(constraints), limit=25)
        answers.append(
            (
                [selectors.plan_dict(p) for p in result.plans],
                selectors.rejected_dict(result.rejected),
                [m.code for m in result.advice],
                result.considered,
            )
        )
    return answers


def _arrangement(book: OfferBook) -> tuple:
    """Everything a book holds beyond its columns, as plain values: rows as the price ids they
    hold (an updated book keeps its rows where they were; one arranged from scratch has them in
    price-id order)."""
    columns = book.columns
    ids = columns.price_id

    def priced(rows) -> list[int]:
        return [ids[row] for row in rows]

    groups = [
        (g.hardware, g.pricing_model, g.first, *map(priced, (g.entries, g.stale, g.stale_volatile,
         g.without_stale, g.without_stale_volatile)))
        for g in book.groups
    ]  # fmt: skip
    named = {(head[0], tail[0]) for head, tail, _ in columns.kinds}
    machines = {name: priced(book.machine_rows(*name)) for name in sorted(named)}
    index = {
        (columns.kinds[key // book._width][1][0], columns.models[key % book._width]): priced(
            unpacked(rows)
        )
        for key, rows in book._machines.items()
        if rows
    }
    by_gpu = {gpu.slug: priced(book.gpu_rows(gpu.slug)) for gpu in columns.gpus}
    return groups, index, machines, by_gpu, book.fresh_until, book.newest_observed_at, len(book)


def _refresh_one_provider(now) -> int:
    """Change one provider as a refresh does; returns its id."""
    provider_id = (
        Price.objects.current()
        .values("instance_type__provider_id")
        .annotate(n=Count("id"))
        .order_by("-n")[0]["instance_type__provider_id"]
    )
    prices = list(Price.objects.current().filter(instance_type__provider_id=provider_id)[:4])
    moved, gone, template, _ = prices
    moved.usd_per_hour = moved.usd_per_hour / 2 + Decimal("0.01")
    moved.observed_at = now
    moved.save()
    gone.gone_at = now
    gone.save()
    taken = set(
        Price.objects.filter(
            instance_type_id=template.instance_type_id, region_id=template.region_id
        ).values_list("pricing_model", flat=True)
    )
    template.pk = None
    template.pricing_model = next(m for m in PricingModel if m not in taken)
    template.observed_at = now
    template.save()
    retired = InstanceType.objects.filter(provider_id=provider_id, is_active=True).last()
    retired.is_active = False
    retired.save()
    return provider_id


def test_a_book_updated_by_one_provider_equals_one_read_from_scratch():
    now = timezone.now()
    held, reread = selectors._read(now, None)
    assert reread is None
    assert len({offer.provider for offer in _offers(held)}) > 10

    held_offers = _offers(held)
    provider_id = _refresh_one_provider(now)
    updated, reread = selectors._read(now, held)
    assert reread == 1
    assert provider_id in updated.providers
    fresh, _ = selectors._read(now, None)

    assert _offers(updated) == _offers(fresh)
    assert _offers(updated) != _offers(held)
    assert _answers(updated) == _answers(fresh)
    # The held book's own columns are untouched: it keeps answering while the new one is read.
    assert _offers(held) == held_offers


def test_a_book_arranged_from_the_held_one_equals_one_arranged_from_scratch():
    now = timezone.now()
    held, _ = selectors._read(now, None)
    held_book = OfferBook(held.columns)
    held_book.gpu_rows("h100-sxm")  # a compare built the index by GPU: the update carries it over
    _refresh_one_provider(now)
    updated, _ = selectors._read(now, held)
    assert updated.dropped and updated.added  # the changed provider's old rows die, new appended
    assert all(updated.columns.dead[row] for row in updated.dropped)
    assert not any(held.columns.dead)  # the held book's columns are untouched
    book = held_book.updated(updated.columns, updated.dropped, updated.added)
    assert book._gpu_index is not None
    scratch = OfferBook(updated.columns)
    assert scratch.columns is not updated.columns  # arranged from scratch: compacted
    assert len(book.groups) > 10
    assert _arrangement(book) == _arrangement(scratch)
    # Groups the changed provider has no offer in are carried over as they are.
    assert sum(group in held_book.groups for group in book.groups) > len(book.groups) // 2
    assert _answers(book) == _answers(selectors._read(now, None)[0])


def test_offers_kept_from_the_held_book_turn_stale_as_in_a_fresh_read():
    now = timezone.now()
    held, _ = selectors._read(now, None)
    _refresh_one_provider(now)
    later = now + timedelta(days=45)  # past every shelf life of a price observed by now
    updated, reread = selectors._read(later, held)
    fresh, _ = selectors._read(later, None)
    assert reread == 1
    was_stale = {offer.price_id: offer.stale for offer in _offers(held)}
    assert any(offer.stale and not was_stale.get(offer.price_id) for offer in _offers(updated))
    assert _offers(updated) == _offers(fresh)
    assert _answers(updated) == _answers(fresh)


def test_nothing_changed_reads_no_provider_and_keeps_every_offer():
    now = timezone.now()
    held, _ = selectors._read(now, None)
    again, reread = selectors._read(now, held)
    assert reread == 0
    assert _offers(again) == _offers(held)


def test_a_change_to_a_shared_table_reads_everything_again():
    now = timezone.now()
    held, _ = selectors._read(now, None)
    gpu = GPU.objects.get(slug="h100-sxm")
    gpu.memory_bandwidth_gb_s = gpu.memory_bandwidth_gb_s + 1
    gpu.save()
    updated, reread = selectors._read(now, held)
    assert reread is None
    assert _offers(updated) == _offers(selectors._read(now, None)[0])


def test_the_worker_swaps_in_the_book_updated_by_the_changed_provider(monkeypatch):
    version = selectors.catalog_version()
    before = selectors.offer_book(version)
    reads, arranged = [], []
    real, real_updated = selectors._read, OfferBook.updated

    def spy(now, base):
        reading, reread = real(now, base)
        reads.append(reread)
        return reading, reread

    def updated(self, *args, **kwargs):
        arranged.append(self)
        return real_updated(self, *args, **kwargs)

    monkeypatch.setattr(selectors, "_read", spy)
    monkeypatch.setattr(OfferBook, "updated", updated)
    _refresh_one_provider(timezone.now())
    version = selectors.catalog_version()
    book = selectors.offer_book(version)
    assert book is not before and book.version == version
    assert reads == [1]
    assert arranged == [before]  # the held book's arrangement was carried over
    assert book.offers == selectors.offer_list()
    assert _arrangement(book) == _arrangement(OfferBook(book.columns))


def _provider_by_rank(rank: int) -> int:
    """The id of the provider with the ``rank``-th most current prices (0: the most)."""
    return (
        Price.objects.current()
        .values("instance_type__provider_id")
        .annotate(n=Count("id"))
        .order_by("-n", "instance_type__provider_id")[rank]["instance_type__provider_id"]
    )


def _new_instance_type(provider_id: int, now) -> int:
    """Give the provider a new instance type (a copy of one of its priced ones under a new name)
    with a price; returns the new instance type's id."""
    price = Price.objects.current().filter(instance_type__provider_id=provider_id).first()
    instance = InstanceType.objects.get(pk=price.instance_type_id)
    instance.pk = None
    instance.name = f"{instance.name}-new-{now.timestamp():.0f}"
    instance.save()
    price.pk = None
    price.instance_type = instance
    price.observed_at = now
    price.save()
    return instance.pk


def _step(held: selectors._Reading, held_book: OfferBook, now):
    """What a worker's swap does after a change: read the changed providers onto the held
    reading, arrange the book from the held one (or from scratch once dead rows outnumber live
    ones), and check it against a book read from scratch."""
    reading, reread = selectors._read(now, held)
    assert reread is not None  # only providers were read again
    if reading.columns.dead_count <= reading.columns.live:
        book = held_book.updated(reading.columns, reading.dropped, reading.added)
    else:
        book = OfferBook(reading.columns)
        reading = replace(reading, columns=book.columns)
    fresh, _ = selectors._read(now, None)
    scratch = OfferBook(fresh.columns)
    assert book.offers == scratch.offers
    assert _arrangement(book) == _arrangement(OfferBook(book.columns))
    assert _answers(book) == _answers(scratch)
    return reading, book


def test_successive_updates_with_compaction_between_equal_books_read_from_scratch():
    now = timezone.now()
    held, _ = selectors._read(now, None)
    book = OfferBook(held.columns)
    book.gpu_rows("h100-sxm")  # the index by GPU is carried over through every update
    first_offers = book.offers
    ids_before = dict(held.columns.kind_ids)

    # 1. One provider changes as a refresh does (a price moves, one goes, one appears, an
    # instance type is retired): no new instance type, so the id map is shared, not copied.
    _refresh_one_provider(now)
    reading, book = _step(held, book, now)
    assert reading.columns.kind_ids is held.columns.kind_ids
    assert book.offers != first_offers

    # 2. Another provider loses every current price: all its rows die, none is appended (a
    # bulk write sets updated_at, as every write path of the catalog does).
    gone = _provider_by_rank(1)
    Price.objects.current().filter(instance_type__provider_id=gone).update(
        gone_at=now, updated_at=now
    )
    before = len(book)
    reading, book = _step(reading, book, now)
    assert not reading.added and len(book) < before
    slug = Provider.objects.get(pk=gone).slug
    assert not any(offer.provider == slug for offer in book.offers)

    # Compaction between updates: the held book arranged again from its live rows, as a swap
    # does once dead rows outnumber live ones; the next update starts from the compacted one.
    book = OfferBook(reading.columns)
    assert book.columns is not reading.columns and not book.columns.dead_count
    reading = replace(reading, columns=book.columns)
    book.gpu_rows("h100-sxm")

    # 3. A third provider gets a new instance type: the id map is copied before it is changed,
    # the held one is left as it was.
    held_ids = reading.columns.kind_ids
    held_count = len(held_ids)
    added_id = _new_instance_type(_provider_by_rank(2), now)
    later, book = _step(reading, book, now)
    assert added_id in later.columns.kind_ids and added_id not in held_ids
    assert len(held_ids) == held_count and later.columns.kind_ids is not held_ids

    # 4. The provider that lost its prices has them back.
    Price.objects.filter(instance_type__provider_id=gone, gone_at=now).update(
        gone_at=None, updated_at=timezone.now()
    )
    _, book = _step(later, book, now)
    assert ids_before.items() <= dict(later.columns.kind_ids).items()


def test_the_book_indexes_stay_out_of_the_collectors_sight():
    """A worker's full collections walk every tracked container: the indexes of a quarter of a
    million offers held as tracked arrays cost tens of milliseconds per collection, several times
    per update (bench/RESULTS.md). Packed rows (bytes) and tuples of plain values are untracked."""
    now = timezone.now()
    held, _ = selectors._read(now, None)
    book = OfferBook(held.columns)
    book.gpu_rows("h100-sxm")
    _refresh_one_provider(now)
    reading, _ = selectors._read(now, held)
    updated = book.updated(reading.columns, reading.dropped, reading.added)
    gc.collect()
    gc.collect()
    for each in (book, updated):
        columns = each.columns
        assert len(each._machines) > 100 and len(columns.kind_rows) > 100
        assert not gc.is_tracked(each._machines)
        assert not gc.is_tracked(columns.kind_rows)
        assert not gc.is_tracked(columns.kind_ids)
        assert not gc.is_tracked(columns.kinds)
        assert not gc.is_tracked(each._gpu_index)
    # What the packed rows hold: each instance type's live rows, in order.
    for kind, rows in updated.columns.kind_rows.items():
        rows = list(unpacked(rows))
        assert rows == sorted(rows)
        assert all(
            updated.columns.kind[row] == kind and not updated.columns.dead[row] for row in rows
        )


def test_a_swap_lets_the_held_book_go_before_the_heap_is_trimmed(monkeypatch):
    """The book a swap replaces is freed at once (by reference count, no collection needed), so
    the trim that follows gives its pages back (bench/RESULTS.md: worker RSS after refreshes)."""
    selectors.offer_book(selectors.catalog_version())
    held = weakref.ref(selectors._book.book)
    seen = []
    monkeypatch.setattr(selectors, "_heap_trim", lambda: seen.append(held()))
    _refresh_one_provider(timezone.now())
    book = selectors.offer_book(selectors.catalog_version())
    assert seen == [None]
    assert book.offers == selectors.offer_list()


def test_the_heap_trim_runs_where_there_is_a_c_library():
    selectors._heap_trim()
    selectors._heap_trim()  # looked up once, then called
    assert selectors._malloc_trim is not None
