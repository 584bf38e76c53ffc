"""Celery entry points for price refreshes: thin, idempotent, retried on network errors."""

from __future__ import annotations

from typing import Any

from celery import group, shared_task
from django.conf import settings

from catalog.models import Provider

from . import services
from .base import FetchError

# One provider's refresh or cross-check: acknowledged when done (a dead worker's task is
# redelivered), time-limited, and retried up to three times after network trouble. The broker's
# visibility timeout (config/settings/base.py) must outlast time_limit plus the longest countdown,
# so the hard limit is the setting the timeout is worked out from, never a figure of its own.
PROVIDER_JOB = {
    "bind": True,
    "acks_late": True,
    "soft_time_limit": min(600, settings.CELERY_TASK_SOFT_TIME_LIMIT),
    "time_limit": settings.CELERY_TASK_TIME_LIMIT,
    "max_retries": 3,
}


def _retry_after_network_trouble(task: Any, status: str, error: str) -> None:
    """A run that failed to fetch is tried again later, backing off 5, 10, 20 minutes (at most
    settings.REFRESH_MAX_RETRY_COUNTDOWN_S); other failures are the curators' to see."""
    if status == "failed" and error.startswith(FetchError.__name__) and not task.request.is_eager:
        countdown = min(300 * 2**task.request.retries, settings.REFRESH_MAX_RETRY_COUNTDOWN_S)
        raise task.retry(countdown=countdown, exc=FetchError(error))


@shared_task(name="scrapers.refresh_provider", **PROVIDER_JOB)
def refresh_provider(self, provider_slug: str, trigger: str = "schedule") -> dict:
    """Refresh one provider; a refresh already running makes this one a no-op."""
    try:
        run = services.provider_refresh(provider_slug=provider_slug, trigger=trigger)
    except services.RefreshInProgress as exc:
        return {"provider": provider_slug, "status": "skipped", "reason": str(exc)}
    _retry_after_network_trouble(self, run.status, run.error)
    return {"provider": provider_slug, "run": run.pk, "status": run.status}


@shared_task(name="scrapers.refresh_all")
def refresh_all(trigger: str = "schedule") -> list[str]:
    """Fan out one refresh task per provider that has a scraper."""
    slugs = list(Provider.objects.with_scraper().values_list("slug", flat=True))
    group(refresh_provider.s(slug, trigger) for slug in slugs).apply_async()
    return slugs


@shared_task(
    name="scrapers.refresh_currency_rates",
    acks_late=True,
    soft_time_limit=240,
    time_limit=300,
    max_retries=3,
)
def refresh_currency_rates() -> int:
    """Fetch the ECB reference rates, store them and renormalise prices."""
    return services.currency_rates_refresh()


# After this many abandoned runs of one provider in a row, stop retrying it: a refresh that kills
# its worker every time (out of memory, say) must not loop; its failed runs show in the admin.
MAX_ABANDONED_IN_A_ROW = 3


@shared_task(name="scrapers.reap_abandoned_refreshes")
def reap_abandoned_refreshes() -> list[str]:
    """Fail refreshes whose worker died (lease lapsed) and queue each provider's refresh again."""
    retried = []
    for run in services.abandoned_runs_fail():
        recent = list(
            run.provider.scrape_runs.order_by("-started_at").values_list("error", flat=True)[
                :MAX_ABANDONED_IN_A_ROW
            ]
        )
        if len(recent) == MAX_ABANDONED_IN_A_ROW and all(
            e.startswith("abandoned:") for e in recent
        ):
            continue
        refresh_provider.delay(run.provider.slug, "recovery")
        retried.append(run.provider.slug)
    return retried


@shared_task(name="scrapers.crosscheck_provider", **PROVIDER_JOB)
def crosscheck_provider(self, provider_slug: str, trigger: str = "schedule") -> dict:
    """Compare one provider's prices with its second source; files disagreements, writes no price."""
    from .crosscheck import CrossCheckInProgress, crosscheck_run

    try:
        run = crosscheck_run(provider_slug=provider_slug, trigger=trigger)
    except CrossCheckInProgress as exc:
        return {"provider": provider_slug, "status": "skipped", "reason": str(exc)}
    _retry_after_network_trouble(self, run.status, run.error)
    return {"provider": provider_slug, "run": run.pk, "status": run.status, "filed": run.filed}
