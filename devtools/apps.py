from django.apps import AppConfig


class DevtoolsConfig(AppConfig):
    """Developer and benchmark tools; no models."""

    name = "devtools"
    verbose_name = "Developer tools"
