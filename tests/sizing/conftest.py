"""Fixtures shared by the sizing tests."""

from __future__ import annotations

import pytest
from django.core.management import call_command

from sizing.planner import OfferBook
from sizing.selectors import offer_list


@pytest.fixture(scope="module")
def book(django_db_setup, django_db_blocker) -> OfferBook:
    """An offer book of the curated catalog plus 3,000 generated prices (scale_catalog: many
    providers, regions, pricing models and sizes), read once per test module; the generated
    rows are removed again at once (the book keeps what it read)."""
    with django_db_blocker.unblock():
        call_command("scale_catalog", prices=3000, verbosity=0)
        try:
            return OfferBook(offer_list())
        finally:
            call_command("scale_catalog", clear=True, verbosity=0)
