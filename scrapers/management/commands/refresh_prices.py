"""Refresh prices now, in this process: every provider or one."""

from django.core.management.base import BaseCommand, CommandError

from catalog.models import Provider
from scrapers.services import RefreshInProgress, provider_refresh


class Command(BaseCommand):
    help = "Fetch, parse and ingest provider prices now (what the Celery task does)."

    def add_arguments(self, parser):
        parser.add_argument(
            "--provider", help="provider slug; all providers with a scraper when omitted"
        )

    def handle(self, *args, **options):
        slugs = (
            [options["provider"]]
            if options["provider"]
            else list(Provider.objects.with_scraper().values_list("slug", flat=True))
        )
        if options["provider"] and not Provider.objects.filter(slug=options["provider"]).exists():
            raise CommandError(f"unknown provider {options['provider']!r}")
        failed = 0
        for slug in slugs:
            try:
                run = provider_refresh(provider_slug=slug, trigger="command")
            except RefreshInProgress as exc:
                self.stderr.write(f"{slug}: skipped, {exc}")
                continue
            failed += run.status == "failed"
            self.stdout.write(
                f"{slug}: {run.status} - seen {run.records_seen}, created {run.created}, changed "
                f"{run.changed}, unchanged {run.unchanged}, quarantined {run.quarantined}, "
                f"unmatched {run.unmatched}, gone {run.gone}"
                + (f" ({run.error.splitlines()[0]})" if run.error else "")
                + (f"; held for a curator: {run.held_reason}" if run.held_reason else "")
                + (
                    f"; {len(run.warnings)} warning(s), first: {run.warnings[0]}"
                    if run.warnings
                    else ""
                )
            )
        if failed:
            raise CommandError(f"{failed} refresh(es) failed")
