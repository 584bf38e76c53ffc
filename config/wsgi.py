"""WSGI entry point (gunicorn config.wsgi).

gunicorn loads this module once in its master (``preload_app`` in gunicorn.conf.py), which then
reads the offer book before it forks the workers; the workers share that book copy-on-write.
"""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.production")
application = get_wsgi_application()
