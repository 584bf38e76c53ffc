"""Pages for people: / (prices), /plan, /gpus, /providers, /instances, /compare; /i18n/setlang/ switches language."""

from django.urls import include, path

from . import views

app_name = "web"

urlpatterns = [
    path("", views.price_list, name="prices"),
    path("prices.csv", views.price_csv, name="prices-csv"),
    path("plan", views.plan, name="plan"),
    path("compare", views.compare, name="compare"),
    path("instances/<str:provider>/<path:name>", views.instance_detail, name="instance"),
    path("gpus", views.gpu_list, name="gpus"),
    path("gpus/<str:slug>", views.gpu_detail, name="gpu"),
    path("providers", views.provider_list, name="providers"),
    path("providers/<str:slug>", views.provider_detail, name="provider"),
    path("i18n/", include("django.conf.urls.i18n")),
    # Browsers ask for it on pages that name no icon (the admin's, the API docs').
    path("favicon.ico", views.favicon, name="favicon"),
]
