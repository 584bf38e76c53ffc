"""Embedded default for a laptop: DEBUG on, SQLite, eager Celery unless the environment says otherwise."""

from .base import *  # noqa: F403
from .base import SECRET_KEY, env

DEBUG = env.bool("DJANGO_DEBUG", default=True)
if not SECRET_KEY:
    if not DEBUG:
        raise RuntimeError("DJANGO_SECRET_KEY must be set when DJANGO_DEBUG is off.")
    # Only ever used with DEBUG on, on a developer's machine; production refuses to start without one.
    SECRET_KEY = "insecure-local-development-only"  # noqa: S105
