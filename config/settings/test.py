"""Settings for pytest: the embedded default (or DATABASE_URL/REDIS_URL when set), made fast."""

from .base import *  # noqa: F403

DEBUG = False
SECRET_KEY = "test-only-secret-key-not-for-deployment"  # noqa: S105
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
REST_FRAMEWORK = {
    **REST_FRAMEWORK,  # noqa: F405
    "DEFAULT_THROTTLE_RATES": {
        scope: "100000/minute"
        for scope in REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]  # noqa: F405
    },
}
# A test that writes the catalog and asks again expects the answer to follow at once; the
# background swap has its own tests (tests/sizing/test_offer_book_swap.py).
OFFER_BOOK_BACKGROUND_REBUILD = False
# ... and the fingerprint read again on every call (sizing.selectors.catalog_version_recent).
CATALOG_VERSION_MAX_AGE_S = 0.0
# No reader thread of its own (a test that sets a max age times the reads itself).
CATALOG_VERSION_BACKGROUND = False
# Tests that run gunicorn.conf.py's hooks turn it on themselves.
OFFER_BOOK_READ_AT_START = False
