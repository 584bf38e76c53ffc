"""Celery entry points for the catalog: thin, idempotent, calling services."""

from celery import shared_task

from . import services


@shared_task(name="catalog.prices_renormalise", acks_late=True, soft_time_limit=540, time_limit=600)
def prices_renormalise_task() -> int:
    """Recompute every price's USD figures from the newest currency rates; safe to run twice."""
    return services.prices_renormalise()
