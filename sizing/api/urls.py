from django.urls import re_path

from . import views

# With or without a trailing slash: CI scripts type both.
urlpatterns = [
    re_path(r"^estimate/?$", views.EstimateView.as_view(), name="estimate"),
    re_path(r"^recommend/?$", views.RecommendView.as_view(), name="recommend"),
    re_path(r"^compare/?$", views.CompareView.as_view(), name="compare"),
]
