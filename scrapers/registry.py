"""Scraper instances configured from settings (base URLs, credentials, regions)."""

from __future__ import annotations

import importlib
import pkgutil

from django.conf import settings

from . import providers
from .base import REGISTRY, HttpClient, Scraper


def _import_providers() -> None:
    """Import every module in scrapers/providers so their @register decorators run."""
    for module in pkgutil.iter_modules(providers.__path__):
        importlib.import_module(f"{providers.__name__}.{module.name}")


def scraper_keys() -> list[str]:
    _import_providers()
    return sorted(REGISTRY)


def scraper_for(key: str, *, regions: list[str] | None = None) -> Scraper:
    """The scraper registered under ``key``, pointed at its configured base URL."""
    _import_providers()
    try:
        cls = REGISTRY[key]
    except KeyError:
        raise KeyError(
            f"no scraper registered for {key!r}; known: {', '.join(sorted(REGISTRY))}"
        ) from None
    configured = settings.SCRAPER_REGIONS.get(key)
    return cls(
        base_url=settings.SCRAPER_BASE_URLS.get(key) or None,
        credentials=settings.SCRAPER_CREDENTIALS,
        regions=regions or configured or None,
    )


def http_client() -> HttpClient:
    return HttpClient(
        timeout_s=settings.SCRAPER_TIMEOUT_S,
        retries=settings.SCRAPER_RETRIES,
        backoff_s=settings.SCRAPER_BACKOFF_S,
    )
