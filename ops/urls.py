from django.urls import path

from . import views

urlpatterns = [
    path("healthz", views.healthz, name="healthz"),
    path("metrics", views.metrics_view, name="metrics"),
    path("client/gpuatlas.py", views.client_file, name="client-file"),
]
