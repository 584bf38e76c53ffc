"""After a catalog change a worker keeps answering from the book it holds (one whole older
version) while a thread reads the new one, unless the held book has a price past its shelf life."""

from __future__ import annotations

import threading
import time
from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from catalog.models import Price
from sizing import selectors

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("catalog_reloaded_after"),
]

WORKLOAD = {"model": "llama-3-8b", "task": "finetune", "method": "lora", "tokens": 10_000_000}
ASK = {
    "workload": WORKLOAD,
    "constraints": {"pricing": ["on_demand"]},
    "objective": "cheapest_hourly",
    "limit": 3,
}


@pytest.fixture(autouse=True)
def _background(settings, catalog_loaded):
    settings.OFFER_BOOK_BACKGROUND_REBUILD = True
    settings.RECOMMEND_CACHE_SECONDS = 0  # every request plans: the book is what is tested


def _wait_for_swap(version: str, timeout_s: float = 30) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        held = selectors._book
        if held is not None and held.key[0] == version and not selectors._rebuilding:
            return
        time.sleep(0.05)
    raise AssertionError("the new offer book was never swapped in")


def _top(api_client) -> dict:
    body = api_client.post("/api/recommend", ASK, format="json").json()
    return body["recommendations"][0]


def _cheapest(api_client) -> float:
    return _top(api_client)["usd_per_hour"]


def test_a_change_is_answered_from_the_held_book_until_the_new_one_is_swapped_in(api_client):
    first = _top(api_client)
    before = first["usd_per_hour"]
    old = selectors._book
    top = Price.objects.get(
        instance_type__provider__slug=first["provider"],
        instance_type__name=first["instance_type"],
        region__code=first["region"],
        pricing_model="on_demand",
    )
    top.usd_per_hour = Decimal(str(before)) / 2
    top.observed_at = timezone.now()
    top.save()
    version = selectors.catalog_version()
    assert version != old.key[0]

    # Whichever the thread has reached, the answer is one whole version: the old or the new.
    assert _cheapest(api_client) in (pytest.approx(before), pytest.approx(before / 2))
    _wait_for_swap(version)
    assert selectors._book.book.version == version
    assert _cheapest(api_client) == pytest.approx(before / 2)


def test_a_held_book_past_its_shelf_life_is_never_served(api_client):
    now = timezone.now()
    version = selectors.catalog_version()
    book = selectors.offer_book(version, now=now)
    assert book.fresh_until is not None
    later = book.fresh_until + timedelta(minutes=5)
    fresh = selectors.offer_book(version + "-changed", now=later)
    assert fresh is not book  # read before answering, not in the background
    assert not selectors._rebuilding


def test_one_thread_reads_a_version_however_many_requests_ask(api_client, monkeypatch):
    selectors.offer_book(selectors.catalog_version())
    started = []
    gate = threading.Event()
    real = selectors._rebuild

    def slow(key):
        started.append(key)
        gate.wait(10)
        real(key)

    monkeypatch.setattr(selectors, "_rebuild", slow)
    Price.objects.filter(pk=Price.objects.order_by("pk").first().pk).update(
        updated_at=timezone.now()
    )
    version = selectors.catalog_version()
    held = selectors._book.book
    for _ in range(5):
        assert selectors.offer_book(version) is held
    gate.set()
    _wait_for_swap(version)
    assert len(started) == 1
