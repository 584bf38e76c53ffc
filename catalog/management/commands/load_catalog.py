"""Load (upsert) the curated catalog from fixtures/: idempotent, one transaction."""

from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from catalog.services import CatalogDataError, catalog_load


class Command(BaseCommand):
    help = "Upsert GPUs, interconnects, currency rates, providers, regions, instance types and prices from fixtures/."

    def add_arguments(self, parser):
        parser.add_argument(
            "--dir", default=str(settings.CATALOG_FIXTURES_DIR), help="fixtures directory"
        )

    def handle(self, *args, **options):
        try:
            report = catalog_load(directory=Path(options["dir"]))
        except (CatalogDataError, KeyError, FileNotFoundError) as exc:
            raise CommandError(f"catalog not loaded: {exc}") from exc
        summary = ", ".join(f"{key} {value}" for key, value in sorted(report.counts.items()))
        self.stdout.write(self.style.SUCCESS(f"Catalog loaded: {summary}"))
