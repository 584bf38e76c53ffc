"""Fill the catalog with synthetic bench providers for benchmarks, or remove them (--clear)."""

import time

from django.core.management.base import BaseCommand, CommandError

from devtools.scale import bench_catalog_clear, bench_catalog_scale


class Command(BaseCommand):
    help = (
        "Make the catalog hold exactly N synthetic prices of bench providers (bench-<n>, "
        "'Bench cloud N (synthetic)'); idempotent. --clear removes every bench row."
    )

    def add_arguments(self, parser):
        parser.add_argument("--prices", type=int, help="bench prices wanted (0 removes them all)")
        parser.add_argument(
            "--clear", action="store_true", help="delete bench providers and everything of theirs"
        )

    def handle(self, *args, **options):
        prices, clear = options["prices"], options["clear"]
        if clear == (prices is not None):
            raise CommandError("give exactly one of --prices N or --clear")
        started = time.perf_counter()
        if clear:
            counts = bench_catalog_clear()
            summary = ", ".join(f"{key} {value}" for key, value in counts.items())
            self.stdout.write(self.style.SUCCESS(f"Bench catalog cleared: {summary}"))
            return
        if prices < 0:
            raise CommandError("--prices must be 0 or more")
        try:
            report = bench_catalog_scale(prices=prices)
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        elapsed = time.perf_counter() - started
        self.stdout.write(
            self.style.SUCCESS(f"Bench catalog: {report.as_text()} in {elapsed:.1f} s")
        )
