"""An answer describes the one catalog version it was planned over: `catalog_as_of` comes from
the offer book that answered (also while a held older book answers during a rebuild), and the
catalog fingerprint is read at most once per CATALOG_VERSION_MAX_AGE_S per process."""

from __future__ import annotations

import threading
from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from catalog.models import Price
from sizing import selectors

from .test_offer_book_swap import ASK

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("catalog_reloaded_after"),
]


@pytest.fixture(autouse=True)
def _catalog(settings, catalog_loaded):
    settings.OFFER_BOOK_BACKGROUND_REBUILD = True
    settings.RECOMMEND_CACHE_SECONDS = 0  # every request plans


def _top_price(answer: dict) -> Price:
    top = answer["recommendations"][0]
    return Price.objects.current().get(
        instance_type__provider__slug=top["provider"],
        instance_type__name=top["instance_type"],
        region__code=top["region"],
        pricing_model=top["pricing_model"],
    )


def _newest_observed(answer: dict):
    return parse_datetime(answer["prices_newest_observed_at"])


def test_catalog_as_of_is_the_answering_books_while_a_held_book_answers(api_client, monkeypatch):
    first = api_client.post("/api/recommend", ASK, format="json").json()
    as_of = parse_datetime(first["catalog_as_of"])
    expected = max(
        p.observed_at for p in Price.objects.current().filter(instance_type__is_active=True)
    )
    assert as_of == expected
    assert _newest_observed(first) <= as_of

    gate = threading.Event()
    real = selectors._rebuild

    def held(key):  # the new book is read only once the test has asked during the read
        gate.wait(20)
        real(key)

    monkeypatch.setattr(selectors, "_rebuild", held)
    price = _top_price(first)
    later = timezone.now() + timedelta(seconds=5)
    Price.objects.filter(pk=price.pk).update(
        usd_per_hour=price.usd_per_hour / 2, observed_at=later, updated_at=timezone.now()
    )
    try:
        during = api_client.post("/api/recommend", ASK, format="json").json()
        # The held (older) book answered: its prices, and its catalog_as_of, not the new one's.
        assert (
            during["recommendations"][0]["usd_per_hour"]
            == first["recommendations"][0]["usd_per_hour"]
        )
        assert parse_datetime(during["catalog_as_of"]) == as_of
    finally:
        gate.set()
    deadline = timezone.now() + timedelta(seconds=30)
    while selectors._rebuilding and timezone.now() < deadline:
        threading.Event().wait(0.05)
    after = api_client.post("/api/recommend", ASK, format="json").json()
    assert after["recommendations"][0]["usd_per_hour"] == pytest.approx(
        float(price.usd_per_hour / 2), rel=1e-4
    )
    assert parse_datetime(after["catalog_as_of"]) == later
    assert _newest_observed(after) == later


def test_compare_names_the_catalog_as_of_of_its_book(api_client):
    body = {"workload": ASK["workload"], "targets": [{"gpu": "h100-sxm"}, {"gpu": "t4"}]}
    answer = api_client.post("/api/compare", body, format="json").json()
    book = selectors.offer_book(selectors.catalog_version())
    assert parse_datetime(answer["catalog_as_of"]) == max(o.observed_at for o in book.offers)
    fitted = [row for row in answer["rows"] if row["fits"]]
    assert fitted and all(
        parse_datetime(row["price_observed_at"]) <= parse_datetime(answer["catalog_as_of"])
        for row in fitted
    )


def test_the_fingerprint_is_read_again_once_its_max_age_has_passed(settings, monkeypatch):
    clock = [1000.0]
    monkeypatch.setattr(selectors.time, "monotonic", lambda: clock[0])
    monkeypatch.setattr(selectors, "_version_read", None)
    settings.CATALOG_VERSION_MAX_AGE_S = 2.0
    before = selectors.catalog_version_recent()
    Price.objects.filter(pk=Price.objects.order_by("pk").first().pk).update(
        usd_per_hour=Decimal("123.4567"), updated_at=timezone.now()
    )
    changed = selectors.catalog_version()
    assert changed != before
    clock[0] += 1.5
    assert selectors.catalog_version_recent() == before  # within its max age
    clock[0] += 1.0
    assert selectors.catalog_version_recent() == changed  # 2.5 s after the read
    settings.CATALOG_VERSION_MAX_AGE_S = 0
    Price.objects.filter(pk=Price.objects.order_by("pk").first().pk).update(
        usd_per_hour=Decimal("124.4567"), updated_at=timezone.now()
    )
    assert selectors.catalog_version_recent() == selectors.catalog_version() != changed
