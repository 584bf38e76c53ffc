"""Report what is wrong or suspicious in the catalog; exit non-zero when there are errors."""

import json
from datetime import datetime, time

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from catalog.audit import audit_counts, catalog_audit


class Command(BaseCommand):
    help = (
        "Audit the stored catalog: placeholder host specs, stale or left-over prices, unpriced "
        "instance types, mixed currencies, foreign regions. Errors exit with status 1."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--format", choices=["text", "json"], default="text")
        parser.add_argument(
            "--as-of",
            help="judge shelf lives as of this date (YYYY-MM-DD) instead of now",
        )

    def handle(self, *args, **options):
        now = None
        if options["as_of"]:
            try:
                day = datetime.strptime(options["as_of"], "%Y-%m-%d").date()
            except ValueError as exc:
                raise CommandError(
                    f"--as-of: expected YYYY-MM-DD, got {options['as_of']!r}"
                ) from exc
            now = timezone.make_aware(datetime.combine(day, time.min))
        findings = catalog_audit(now=now)
        counts = audit_counts(findings)
        if options["format"] == "json":
            payload = {**counts, "findings": [f.to_dict() for f in findings]}
            self.stdout.write(json.dumps(payload, indent=2))
        else:
            for f in findings:
                where = f"{f.provider}: " if f.provider else ""
                self.stdout.write(
                    f"{f.severity.upper():7} {f.rule:32} {where}{f.subject} - {f.message}"
                )
            self.stdout.write(f"{counts['errors']} error(s), {counts['warnings']} warning(s)")
        if counts["errors"]:
            raise CommandError(f"catalog audit found {counts['errors']} error(s)")
