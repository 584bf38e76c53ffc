"""Read side of the refresh bookkeeping: each scraper's health, for the admin, API and metrics."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from django.db.models import Count

from catalog import choices
from catalog.models import (
    CrossCheckRun,
    PriceDisagreement,
    Provider,
    ScrapeRun,
    UnmatchedGPUName,
)


@dataclass
class ScraperHealth:
    """One provider's refresh health: what an operator checks first (docs/operations.md)."""

    provider: str
    last_run_at: datetime | None = None
    last_run_status: str = ""
    last_run_records: int = 0
    last_run_warnings: list[str] = field(default_factory=list)
    last_good_run_at: datetime | None = None
    last_good_run_records: int = 0
    held_runs: int = 0
    held_reason: str = ""
    unmatched_names: dict[str, int] = field(default_factory=dict)

    @property
    def state(self) -> str:
        """ok, held, warnings, failing or never: the headline for a dashboard."""
        if self.last_run_at is None:
            return "never"
        if self.held_runs:
            return "held"
        if self.last_run_status == choices.ScrapeStatus.FAILED:
            return "failing"
        if self.last_run_warnings or self.unmatched_names:
            return "warnings"
        return "ok"


def scraper_health(*, provider: str | None = None) -> list[ScraperHealth]:
    """Health of every provider with a scraper (or of one), newest facts first; few queries."""
    providers = Provider.objects.with_scraper().order_by("slug")
    if provider:
        providers = providers.filter(slug=provider)
    by_slug = {p.slug: ScraperHealth(provider=p.slug) for p in providers}
    if not by_slug:
        return []
    runs = ScrapeRun.objects.defer("held_records").order_by("-started_at", "-pk")
    # Two indexed queries per provider (provider, -started_at): bounded by the provider count,
    # not by the length of the run history.
    for p in providers:
        item = by_slug[p.slug]
        run = runs.filter(provider=p).first()
        if run is not None:
            item.last_run_at, item.last_run_status = run.started_at, run.status
            item.last_run_records = run.records_seen
            item.last_run_warnings = list(run.warnings or [])
        good = runs.filter(provider=p, status__in=choices.GOOD_SCRAPE_STATUSES).first()
        if good is not None:
            item.last_good_run_at, item.last_good_run_records = good.started_at, good.records_seen
    held = runs.filter(provider__slug__in=by_slug, status=choices.ScrapeStatus.HELD)
    for run in held.select_related("provider"):  # newest first: its reason is shown
        item = by_slug[run.provider.slug]
        item.held_runs += 1
        item.held_reason = item.held_reason or run.held_reason
    pending = UnmatchedGPUName.objects.filter(provider__slug__in=by_slug, mapped_to__isnull=True)
    for row in pending.values("provider__slug", "kind").annotate(n=Count("id")):
        by_slug[row["provider__slug"]].unmatched_names[row["kind"]] = row["n"]
    return list(by_slug.values())


def crosscheck_open_counts() -> dict[str, int]:
    """Open price disagreements per provider slug (every provider with a second source: 0 if none)."""
    from .crosscheck import crosscheck_providers

    counts = dict.fromkeys(crosscheck_providers(), 0)
    rows = (
        PriceDisagreement.objects.filter(status=choices.DisagreementStatus.OPEN)
        .values("provider__slug")
        .annotate(n=Count("id"))
    )
    for row in rows:
        counts[row["provider__slug"]] = row["n"]
    return counts


def crosscheck_last_runs() -> dict[str, tuple[datetime, str]]:
    """Each provider's newest cross-check: (started at, status)."""
    last: dict[str, tuple[datetime, str]] = {}
    runs = CrossCheckRun.objects.order_by("provider__slug", "-started_at").values_list(
        "provider__slug", "started_at", "status"
    )
    for slug, started_at, status in runs:
        last.setdefault(slug, (started_at, status))
    return last
