"""Celery application: settings come from Django settings with the CELERY_ prefix."""

import logging.config
import os
from typing import Any

from celery import Celery
from celery.signals import setup_logging

# Production unless told otherwise (a worker on a laptop: DJANGO_SETTINGS_MODULE=config.settings.local).
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.production")

app = Celery("gpuatlas")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@setup_logging.connect
def configure_logging(**kwargs: Any) -> None:
    """Worker and beat log through the project's LOGGING (JSON lines in production, with the
    task id and name of the running task) instead of Celery's own text format: connecting this
    signal stops Celery from configuring the root logger itself."""
    from django.conf import settings

    logging.config.dictConfig(settings.LOGGING)
