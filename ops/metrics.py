"""Prometheus metrics (prometheus_client): HTTP requests and latency, plus catalog gauges read
from the database at scrape time (scrape runs by status, prices, stale prices, refresh age).

Under gunicorn with several workers set PROMETHEUS_MULTIPROC_DIR to an empty writable folder so
the request counters of every worker are summed (prometheus_client's multiprocess mode).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator

from django.db.models import Count
from django.utils import timezone
from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest, multiprocess
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

REQUESTS = Counter(
    "gpuatlas_http_requests_total", "HTTP requests served", ["method", "view", "status"]
)
LATENCY = Histogram(
    "gpuatlas_http_request_duration_seconds",
    "Time to answer an HTTP request",
    ["method", "view"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)


class CatalogCollector(Collector):
    """Gauges computed from the catalog tables when /metrics is read (a handful of queries)."""

    def collect(self) -> Iterator[GaugeMetricFamily]:
        from catalog.models import Price, Provider, ScrapeRun
        from catalog.querysets import stale_cutoff
        from catalog.selectors import provider_last_success_at

        runs = GaugeMetricFamily(
            "gpuatlas_scrape_runs",
            "Scrape runs by provider and status",
            labels=["provider", "status"],
        )
        for row in ScrapeRun.objects.values("provider__slug", "status").annotate(n=Count("id")):
            runs.add_metric([row["provider__slug"], row["status"]], row["n"])
        yield runs

        prices = GaugeMetricFamily(
            "gpuatlas_prices", "Current prices by provider", labels=["provider"]
        )
        stale = GaugeMetricFamily(
            "gpuatlas_prices_stale",
            "Current prices older than the staleness limit",
            labels=["provider"],
        )
        current = Price.objects.current()
        counts = dict(current.values_list("instance_type__provider__slug").annotate(n=Count("id")))
        stale_counts = dict(
            current.filter(observed_at__lt=stale_cutoff())
            .values_list("instance_type__provider__slug")
            .annotate(n=Count("id"))
        )
        age = GaugeMetricFamily(
            "gpuatlas_last_successful_refresh_age_seconds",
            "Seconds since the provider's last successful refresh (absent when never)",
            labels=["provider"],
        )
        now = timezone.now()
        last = provider_last_success_at()
        for slug in Provider.objects.values_list("slug", flat=True):
            prices.add_metric([slug], counts.get(slug, 0))
            stale.add_metric([slug], stale_counts.get(slug, 0))
            if last.get(slug):
                age.add_metric([slug], (now - last[slug]).total_seconds())
        yield prices
        yield stale
        yield age


def render_latest() -> bytes:
    """The exposition text: this process's (or every worker's) counters plus the catalog gauges."""
    from scrapers.metrics import ScraperHealthCollector

    registry = CollectorRegistry()
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        multiprocess.MultiProcessCollector(registry)
        registry.register(CatalogCollector())
        registry.register(ScraperHealthCollector())
        return generate_latest(registry)
    from prometheus_client import REGISTRY

    registry.register(CatalogCollector())
    registry.register(ScraperHealthCollector())
    return generate_latest(REGISTRY) + generate_latest(registry)


def observe(method: str, view: str, status: int, started: float) -> None:
    REQUESTS.labels(method, view, str(status)).inc()
    LATENCY.labels(method, view).observe(time.perf_counter() - started)
