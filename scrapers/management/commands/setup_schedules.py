"""Create the default refresh schedule per provider (editable afterwards in the admin)."""

from django.core.management.base import BaseCommand

from scrapers.schedules import schedules_ensure


class Command(BaseCommand):
    help = (
        "Create a periodic refresh task per provider, a daily currency-rate task and a weekly "
        "price cross-check per hyperscaler, if missing."
    )

    def handle(self, *args, **options):
        created = schedules_ensure()
        self.stdout.write(f"Schedules ready ({created} created).")
