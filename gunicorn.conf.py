"""gunicorn settings (gunicorn reads ./gunicorn.conf.py from its working directory by default:
the repository root, /app in the image; every command in this repository starts it from there).

The application is loaded once in the master (``preload_app``), which reads the offer book
(every current price, arranged for the planner: sizing/selectors.py) before it listens and
before it forks the workers. Each worker starts with that book already in memory, shared
copy-on-write with the master and the other workers: no worker, new or respawned, reads the
catalog before its first recommendation (at 250,000 prices that read takes 9-13 s,
bench/RESULTS.md). After a catalog change each worker reads the new book in the background while
the one it holds answers (OFFER_BOOK_BACKGROUND_REBUILD). OFFER_BOOK_READ_AT_START=false leaves
the first read to the first recommendation of each worker.
"""

from __future__ import annotations

import gc
from typing import Any

preload_app = True


def _malloc_mmap_threshold(size: int = 128 * 1024) -> None:
    """Keep glibc's mmap threshold where it starts (128 KiB): allocations above it (an offer
    book's columns and index tables, a few MiB each) get pages of their own, which go back to the
    system when freed. Left to itself glibc raises the threshold each time such a block is freed,
    after which the next ones come from the heap, where freed blocks stay resident: a worker's RSS
    then grew by each update's copies of the book (bench/RESULTS.md). Set here, before the master
    reads the book, and inherited by every worker; nothing where the C library is not glibc."""
    try:
        import ctypes
        import ctypes.util

        name = ctypes.util.find_library("c")
        mallopt = getattr(ctypes.CDLL(name), "mallopt", None) if name else None
        if mallopt is not None:
            mallopt(-3, size)  # M_MMAP_THRESHOLD (malloc.h); also stops its dynamic adjustment
    except OSError:
        pass


_malloc_mmap_threshold()


def on_starting(server: Any) -> None:
    """In the master, after the application loaded and before the listening socket opens: import
    every view and build the URL look-ups (a worker's first request paid ~1 s for them: the
    URLconf's imports, the model presets' YAML, the reverse map), read the offer book, close
    every connection the read opened (a forked worker must not share the master's database or
    Redis sockets), and freeze what the master holds (``gc.freeze``)."""
    from django.conf import settings
    from django.urls import get_resolver

    resolver = get_resolver()
    resolver.url_patterns  # noqa: B018 (imports config/urls.py and every view module)
    resolver.reverse_dict  # noqa: B018 (builds the reverse look-ups, namespaces included)
    if settings.OFFER_BOOK_READ_AT_START:
        from django.core.cache import caches
        from django.db import connections

        from sizing.selectors import offer_book_read_at_start

        server.log.info("reading the offer book before forking the workers")
        offer_book_read_at_start()
        connections.close_all()
        caches.close_all()
    # Everything the master holds now lives as long as the workers: out of the collector's
    # sight, a worker's collections never write to those objects, so their pages stay shared.
    gc.collect()
    gc.freeze()
