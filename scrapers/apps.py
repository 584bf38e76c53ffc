from django.apps import AppConfig


class ScrapersConfig(AppConfig):
    name = "scrapers"
    verbose_name = "Price scrapers"
