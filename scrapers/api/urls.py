from django.urls import re_path

from . import views

urlpatterns = [
    # Before the catalog router's scrape-runs/<pk>/ (config/urls.py includes this module first).
    re_path(r"^scrape-runs/health/?$", views.ScraperHealthView.as_view(), name="scraper-health"),
    re_path(r"^refresh/(?P<provider>[-a-z0-9]+)/?$", views.RefreshView.as_view(), name="refresh"),
]
