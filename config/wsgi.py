"""WSGI entry point (gunicorn config.wsgi).

gunicorn (without --preload, as this project runs it) imports this module in each worker after
the fork, so the offer-book read started here runs in the worker that will use it.
"""

import os

from django.conf import settings
from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.production")
application = get_wsgi_application()

if settings.OFFER_BOOK_READ_AT_START:
    from sizing.selectors import offer_book_read_at_start

    offer_book_read_at_start()
