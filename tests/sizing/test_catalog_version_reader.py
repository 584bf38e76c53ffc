"""The catalog fingerprint's background reader (CATALOG_VERSION_BACKGROUND): while requests ask,
a thread reads the fingerprint again before it ages out, so requests do not wait for the query."""

from __future__ import annotations

import threading
import time

from sizing import selectors


def test_requests_take_the_fingerprint_the_reader_thread_keeps_young(settings, monkeypatch):
    reads: list[str] = []

    def version() -> str:
        reads.append(threading.current_thread().name)
        return f"v{len(reads)}"

    monkeypatch.setattr(selectors, "catalog_version", version)
    monkeypatch.setattr(selectors, "_version_read", None)
    settings.CATALOG_VERSION_MAX_AGE_S = 0.2
    settings.CATALOG_VERSION_BACKGROUND = True
    try:
        selectors.catalog_version_recent()  # none held: the request reads it (and starts the reader)
        assert "MainThread" in reads
        deadline = time.monotonic() + 5
        while reads.count("catalog-version") < 3 and time.monotonic() < deadline:
            selectors.catalog_version_recent()
            time.sleep(0.02)
        assert reads.count("catalog-version") >= 3
        asked = len(reads)
        for _ in range(10):  # 0.5 s of requests: each gets a fingerprint under 0.2 s old
            answer = selectors.catalog_version_recent()
            held = selectors._version_read
            assert held is not None and answer == held[1]
            assert time.monotonic() - held[0] < 0.2
            time.sleep(0.05)
        assert "MainThread" not in reads[asked:]  # no request read it
        assert len(reads) > asked  # the thread did, more than once in 0.5 s
    finally:
        settings.CATALOG_VERSION_MAX_AGE_S = 0.0  # the reader goes quiet
        selectors._version_wanted.set()
