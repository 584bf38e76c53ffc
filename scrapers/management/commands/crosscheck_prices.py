"""Cross-check current prices against the second source now, in this process (or a saved file)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from catalog.models import CrossCheckRun, Provider
from scrapers.crosscheck import (
    CrossCheckInProgress,
    CrossCheckNotConfigured,
    crosscheck_providers,
    crosscheck_run,
)
from scrapers.secondary.skypilot import SourceVersion


class Command(BaseCommand):
    help = (
        "Compare current prices with SkyPilot's catalog CSV and file every disagreement over the "
        "tolerance in the curators' queue (what the weekly task does). Never writes a price."
    )

    def add_arguments(self, parser):
        parser.add_argument("--provider", help="provider slug; every configured one when omitted")
        parser.add_argument(
            "--file",
            type=Path,
            help="a saved vms.csv to compare instead of fetching (needs --provider)",
        )
        parser.add_argument("--source-url", default="", help="where --file came from")
        parser.add_argument("--source-commit", default="", help="the commit --file was read at")
        parser.add_argument(
            "--source-date", default="", help="that commit's date, ISO 8601 (e.g. 2026-11-30)"
        )

    def handle(self, *args, **options):
        slug = options["provider"]
        if slug and not Provider.objects.filter(slug=slug).exists():
            raise CommandError(f"unknown provider {slug!r}")
        text = version = None
        if options["file"]:
            if not slug:
                raise CommandError("--file compares one provider's file: give --provider too")
            try:
                text = options["file"].read_text(encoding="utf-8")
            except OSError as exc:
                raise CommandError(f"cannot read {options['file']}: {exc}") from exc
            try:
                date = (
                    datetime.fromisoformat(options["source_date"])
                    if options["source_date"]
                    else None
                )
            except ValueError as exc:
                raise CommandError(f"--source-date: {exc}") from exc
            if date is not None and date.tzinfo is None:
                date = date.replace(tzinfo=UTC)  # a bare date is a UTC day
            version = SourceVersion(
                url=options["source_url"] or options["file"].resolve().as_uri(),
                commit=options["source_commit"],
                date=date,
            )
        slugs = [slug] if slug else crosscheck_providers()
        failed = 0
        for each in slugs:
            try:
                run = crosscheck_run(
                    provider_slug=each, trigger="command", csv_text=text, version=version
                )
            except CrossCheckInProgress as exc:
                self.stderr.write(f"{each}: skipped, {exc}")
                continue
            except CrossCheckNotConfigured as exc:
                raise CommandError(str(exc)) from exc
            failed += run.status == "failed"
            self.stdout.write(self._summary(each, run))
        if failed:
            raise CommandError(f"{failed} cross-check(s) failed")

    @staticmethod
    def _summary(slug: str, run: CrossCheckRun) -> str:
        counts = ", ".join(f"{name} {getattr(run, name)}" for name in CrossCheckRun.COUNT_FIELDS)
        where = (
            f" ({run.source_url}"
            + (f" @{run.source_commit[:12]}" if run.source_commit else "")
            + ")"
        )
        text = f"{slug}: {run.status}{where} - {counts}"
        if run.error:
            text += f" ({run.error.splitlines()[0]})"
        if run.warnings:
            text += f"; {len(run.warnings)} warning(s), first: {run.warnings[0]}"
        return text
