"""gunicorn.conf.py: the application is preloaded in the master, which reads the offer book
before it forks the workers and closes what the read opened."""

from __future__ import annotations

import gc
import logging
import runpy
from pathlib import Path

import pytest
from django.core.cache import caches
from django.db import connections
from django.urls import clear_url_caches, get_resolver

from catalog.models import Price
from sizing import selectors

ROOT = Path(__file__).resolve().parent.parent
CONF = runpy.run_path(str(ROOT / "gunicorn.conf.py"))

pytestmark = [
    pytest.mark.django_db(transaction=True),  # the read runs in a thread
    pytest.mark.usefixtures("catalog_loaded", "catalog_reloaded_after"),
]


class _Server:
    log = logging.getLogger("gunicorn.test")


@pytest.fixture(autouse=True)
def _unfreeze():
    yield
    gc.unfreeze()  # on_starting froze this process's objects, as it does a gunicorn master's


def test_the_app_is_preloaded_in_the_master():
    assert CONF["preload_app"] is True


def test_the_master_reads_the_book_before_forking_and_closes_its_connections(settings, monkeypatch):
    settings.OFFER_BOOK_READ_AT_START = True
    closed = []
    for handler in (connections, caches):
        real = handler.close_all
        monkeypatch.setattr(handler, "close_all", lambda real=real: closed.append(real()))
    CONF["on_starting"](_Server())
    assert len(closed) == 2  # database connections and cache clients, once each
    held = selectors._book
    assert held is not None
    assert held.key[0] == selectors.catalog_version()
    assert len(held.book) == Price.objects.current().filter(instance_type__is_active=True).count()
    CONF["on_starting"](_Server())  # a book already held is not read again
    assert selectors._book is held


def test_nothing_is_read_when_the_setting_is_off(settings):
    settings.OFFER_BOOK_READ_AT_START = False
    CONF["on_starting"](_Server())
    assert selectors._book is None


def test_the_master_builds_the_url_lookups_before_forking(settings):
    settings.OFFER_BOOK_READ_AT_START = False
    clear_url_caches()
    assert not get_resolver()._populated
    CONF["on_starting"](_Server())
    assert get_resolver()._populated


def test_the_master_freezes_what_it_holds_before_forking(settings):
    settings.OFFER_BOOK_READ_AT_START = True
    gc.unfreeze()
    CONF["on_starting"](_Server())
    held = selectors._book
    assert held is not None and gc.get_freeze_count() > 0
    assert all(obj is not held for obj in gc.get_objects())  # in the permanent generation
