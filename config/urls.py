from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from web.views import ApiRedocView

# Styled error pages in the page's language (JSON under /api/).
handler404 = "web.views.page_not_found"
handler500 = "web.views.server_error"

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    # The split view serves Swagger UI's start-up script as a file (CSP: script-src 'self').
    path("api/docs/", SpectacularSwaggerSplitView.as_view(url_name="schema"), name="api-docs"),
    # Redoc without the web fonts drf-spectacular's page loads from outside.
    path("api/redoc/", ApiRedocView.as_view(url_name="schema"), name="api-redoc"),
    path("api/", include("sizing.api.urls")),
    path("api/", include("scrapers.api.urls")),
    path("api/", include("catalog.api.urls")),
    path("", include("ops.urls")),
    path("", include("web.urls")),
]

# JSON errors under /api/ for what is refused outside the API views (bad Host, unknown URL).
handler400 = "ops.limits.bad_request"
handler404 = "ops.limits.page_not_found"
handler500 = "ops.limits.server_error"
