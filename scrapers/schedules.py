"""The beat schedule lives in the database (django-celery-beat) so curators edit it in the admin."""

from __future__ import annotations

import json

from django.conf import settings
from django_celery_beat.models import IntervalSchedule, PeriodicTask

from catalog.models import Provider

from .crosscheck import crosscheck_providers


def schedules_ensure() -> int:
    """Create a periodic refresh per provider (default every 6 hours), a daily currency task and
    a cross-check per provider with a second source (default weekly).

    Idempotent and respectful: an existing task (perhaps edited by a curator) is left as it is.
    """
    every = IntervalSchedule.objects.get_or_create(
        every=settings.SCRAPE_DEFAULT_INTERVAL_HOURS, period=IntervalSchedule.HOURS
    )[0]
    daily = IntervalSchedule.objects.get_or_create(every=24, period=IntervalSchedule.HOURS)[0]
    created = 0
    for slug in Provider.objects.with_scraper().values_list("slug", flat=True):
        _, made = PeriodicTask.objects.get_or_create(
            name=f"refresh prices: {slug}",
            defaults={
                "task": "scrapers.refresh_provider",
                "interval": every,
                "args": json.dumps([slug]),
                "kwargs": json.dumps({"trigger": "schedule"}),
            },
        )
        created += made
    _, made = PeriodicTask.objects.get_or_create(
        name="refresh currency rates (ECB)",
        defaults={"task": "scrapers.refresh_currency_rates", "interval": daily},
    )
    created += made
    # The cross-check against a second source runs on its own, slower clock (weekly by default).
    weekly = IntervalSchedule.objects.get_or_create(
        every=settings.CROSSCHECK_INTERVAL_HOURS, period=IntervalSchedule.HOURS
    )[0]
    for slug in crosscheck_providers():
        _, made = PeriodicTask.objects.get_or_create(
            name=f"cross-check prices: {slug}",
            defaults={
                "task": "scrapers.crosscheck_provider",
                "interval": weekly,
                "args": json.dumps([slug]),
                "kwargs": json.dumps({"trigger": "schedule"}),
            },
        )
        created += made
    return created
