"""Parse a saved provider page offline and print its records as JSON (for curators debugging).

``--explain`` prints instead which rows were read (one line per record), which were skipped on
purpose and why, and which names the parser could not map (what a refresh would file as drift).
"""

import json
import sys
from pathlib import Path

from django.core.management.base import BaseCommand

from scrapers.base import NOTE_SKIPPED, NOTE_UNMATCHED, Page, ParseError, ParseResult, parse_pages
from scrapers.registry import scraper_for, scraper_keys


class Command(BaseCommand):
    help = "Parse FILE with the named provider's parser and print the price records as JSON."

    def add_arguments(self, parser):
        parser.add_argument(
            "--provider", required=True, help=f"scraper key: {', '.join(scraper_keys())}"
        )
        parser.add_argument(
            "file", help="a saved page (JSON, HTML or XML as the provider serves it)"
        )
        parser.add_argument(
            "--url", default="", help="the URL the page came from, if the parser needs it"
        )
        parser.add_argument(
            "--explain",
            action="store_true",
            help="list the rows read, skipped (and why) and unmatched instead of the JSON",
        )
        parser.add_argument(
            "--meta",
            action="append",
            default=[],
            metavar="KEY=VALUE",
            help="page context, e.g. region=us-east-1",
        )

    def handle(self, *args, **options):
        try:
            scraper = scraper_for(options["provider"])
        except KeyError as exc:
            return self._fail(str(exc.args[0]))
        path = Path(options["file"])
        url = options["url"] or path.resolve().as_uri()
        meta = dict(item.split("=", 1) for item in options["meta"] if "=" in item)
        try:
            if scraper.reads_spooled_pages:  # read from the file as it parses (AWS offer files)
                page = Page(url=url, status=200, body="", meta=meta, spool=path.open("rb"))
            else:
                page = Page(url=url, status=200, body=path.read_text(encoding="utf-8"), meta=meta)
        except (OSError, UnicodeDecodeError) as exc:
            return self._fail(f"cannot read {path}: {exc}")
        try:
            result = parse_pages(scraper, [page])
        except ParseError as exc:
            return self._fail(f"{options['provider']}: {path.name}: {exc}")
        except Exception as exc:  # a parser bug must still end in one line, not a traceback
            return self._fail(
                f"{options['provider']}: {path.name}: unexpected {type(exc).__name__}: {exc}"
            )
        if options["explain"]:
            self._explain(result)
            return
        self.stdout.write(
            json.dumps(
                [r.as_json() for r in result.records], indent=2, ensure_ascii=False, default=str
            )
        )

    def _explain(self, result: ParseResult) -> None:
        skipped = [n for n in result.notes if n.kind == NOTE_SKIPPED]
        unmatched = [n for n in result.notes if n.kind == NOTE_UNMATCHED]
        self.stdout.write(f"read: {len(result.records)} record(s)")
        for r in result.records:
            self.stdout.write(
                f"  {r.instance_type} | {r.region} | {r.pricing_model} | "
                f"{r.amount} {r.currency}/{r.unit} | {r.gpu_count} x {r.gpu_name}"
            )
        self.stdout.write(f"skipped: {len(skipped)}")
        for note in skipped:
            self.stdout.write(f"  {note.name}: {note.reason}")
        self.stdout.write(f"unmatched: {len(unmatched)}")
        for note in unmatched:
            self.stdout.write(f"  {note.category} {note.name}: {note.reason}")

    def _fail(self, message: str) -> None:
        self.stderr.write(f"error: {message}")
        sys.exit(2)
