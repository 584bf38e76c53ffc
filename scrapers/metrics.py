"""Prometheus gauges of each scraper's health, read from the database when /metrics is read."""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from catalog import choices

from .selectors import crosscheck_last_runs, crosscheck_open_counts, scraper_health

STATES = ("ok", "warnings", "held", "failing", "never")


class ScraperHealthCollector(Collector):
    """Held runs, warnings, unmatched names and record counts per provider (docs/operations.md)."""

    def collect(self) -> Iterator[GaugeMetricFamily]:
        state = GaugeMetricFamily(
            "gpuatlas_scraper_state",
            "1 for the provider's current scraper state (ok, warnings, held, failing, never)",
            labels=["provider", "state"],
        )
        held = GaugeMetricFamily(
            "gpuatlas_scrape_held_runs", "Refreshes held for a curator", labels=["provider"]
        )
        warnings = GaugeMetricFamily(
            "gpuatlas_scrape_last_run_warnings",
            "Warnings (unmapped names) on the provider's last refresh",
            labels=["provider"],
        )
        records = GaugeMetricFamily(
            "gpuatlas_scrape_last_good_run_records",
            "Records read by the provider's last good refresh",
            labels=["provider"],
        )
        unmatched = GaugeMetricFamily(
            "gpuatlas_unmatched_names",
            "Names no mapping knows yet, by kind",
            labels=["provider", "kind"],
        )
        for item in scraper_health():
            for name in STATES:
                state.add_metric([item.provider, name], 1 if item.state == name else 0)
            held.add_metric([item.provider], item.held_runs)
            warnings.add_metric([item.provider], len(item.last_run_warnings))
            records.add_metric([item.provider], item.last_good_run_records)
            for kind in choices.UnmatchedKind.values:
                unmatched.add_metric([item.provider, kind], item.unmatched_names.get(kind, 0))
        yield from (state, held, warnings, records, unmatched)
        yield from crosscheck_metrics()


def crosscheck_metrics() -> Iterator[GaugeMetricFamily]:
    """Open price disagreements and the last cross-check per provider (two small queries)."""
    open_items = GaugeMetricFamily(
        "gpuatlas_price_disagreements_open",
        "Price disagreements with the second source waiting for a curator",
        labels=["provider"],
    )
    last_run = GaugeMetricFamily(
        "gpuatlas_crosscheck_last_run_timestamp_seconds",
        "When the provider's last cross-check started (Unix time)",
        labels=["provider", "status"],
    )
    for slug, count in crosscheck_open_counts().items():
        open_items.add_metric([slug], count)
    for slug, (started_at, status) in crosscheck_last_runs().items():
        last_run.add_metric([slug, status], started_at.timestamp())
    yield from (open_items, last_run)
