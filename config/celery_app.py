"""Celery application: settings come from Django settings with the CELERY_ prefix."""

import os

from celery import Celery

# Production unless told otherwise (a worker on a laptop: DJANGO_SETTINGS_MODULE=config.settings.local).
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.production")

app = Celery("gpuatlas")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
