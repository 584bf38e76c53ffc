from django.urls import re_path

from . import views

urlpatterns = [
    re_path(r"^refresh/(?P<provider>[-a-z0-9]+)/?$", views.RefreshView.as_view(), name="refresh"),
]
