"""Shared test set-up: the curated catalog is loaded once into the test database."""

from __future__ import annotations

import io
import os
from collections.abc import Iterator

import pytest
from django.core.management import call_command


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, django_db_blocker):
    """Load fixtures/ once; each test runs in a transaction rolled back afterwards."""
    with django_db_blocker.unblock():
        call_command("load_catalog", verbosity=0)


@pytest.fixture(autouse=True)
def _fresh_offer_book():
    """Each test starts with a worker that has read no catalog yet (the planner's offer book is
    kept per process and per catalog version; tests that rewrite rows without touching
    ``updated_at`` would otherwise see another test's book)."""
    from sizing.selectors import offer_book_forget

    offer_book_forget()
    yield
    offer_book_forget()


@pytest.fixture
def catalog_loaded(transactional_db) -> None:
    """The curated catalog in a transactional test: an earlier one may have flushed the database
    the session loaded, so load it again when it is empty."""
    from catalog.models import Price

    if not Price.objects.exists():
        call_command("load_catalog", verbosity=0, stdout=io.StringIO())


@pytest.fixture(scope="module")
def catalog_reloaded_after(django_db_blocker) -> Iterator[None]:
    """For a module of transactional tests (``pytestmark``'s usefixtures): they flush the
    database, so load the curated catalog again for the modules that follow."""
    yield
    with django_db_blocker.unblock():
        call_command("load_catalog", verbosity=0, stdout=io.StringIO())


@pytest.fixture
def api_client():
    from rest_framework.test import APIClient

    return APIClient()


@pytest.fixture
def staff_client(django_user_model):
    from rest_framework.authtoken.models import Token
    from rest_framework.test import APIClient

    user = django_user_model.objects.create_user(
        "curator", password="x-curator-pw-9", is_staff=True
    )
    token = Token.objects.create(user=user)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    client.user = user
    return client


def services_required() -> bool:
    """Under CI's second pass the real services must be there: a missing one fails, never skips."""
    return os.environ.get("GPUATLAS_REQUIRE_SERVICES") == "1" or (
        os.environ.get("CI") == "true" and bool(os.environ.get("REDIS_URL"))
    )
