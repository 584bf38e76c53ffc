# ruff: noqa: F811 - the world fixture is imported from test_ingest and used as an argument
"""Drift is loud (issue 13): held refreshes, unmatched names in the queue and the run's warnings."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest
from django.urls import reverse

from catalog.models import Price, ScrapeRun, UnmatchedGPUName
from scrapers import services
from scrapers.base import HttpClient, Page, PriceRecord
from scrapers.providers.lambda_cloud import LambdaScraper
from tests.scrapers.test_ingest import FakeScraper, rec, world  # noqa: F401 - the fixture

pytestmark = pytest.mark.django_db

H100 = "H100 80GB HBM3"  # an alias of h100-sxm


def shapes(count: int, *, gpu_name: str = "NVIDIA A100-SXM4-80GB", start: int = 0) -> list[dict]:
    """``count`` records of distinct instance types the ingest creates (vCPUs and RAM given)."""
    return [
        rec(10 + n, instance=f"fake.i{n}", gpu_name=gpu_name, gpu_count=1, vcpus=8, ram_gib=64)
        for n in range(start, start + count)
    ]


class NotingScraper(FakeScraper):
    """A fake source whose parser also reports a name it cannot map."""

    def parse(self, page: Page) -> list[PriceRecord]:
        self.note_unmatched("sku", "Quantum GPU 9000 running in Americas", "not in the table")
        return super().parse(page)


def refresh(world, rows, scraper_cls=FakeScraper) -> ScrapeRun:
    return services.provider_refresh(
        provider_slug=world["provider"].slug,
        trigger="test",
        scraper=scraper_cls([json.dumps(rows)]),
        client=HttpClient(retries=0),
    )


def stored(world) -> dict[str, tuple[Decimal, int]]:
    return {
        p.instance_type.name: (p.amount, p.missed_runs)
        for p in Price.objects.filter(instance_type__provider=world["provider"]).select_related(
            "instance_type"
        )
    }


def test_count_collapse_is_held_and_changes_no_price(world):
    good = refresh(world, shapes(10))
    before = stored(world)
    run = refresh(world, shapes(5))  # half the rows vanished (a changed layout, say)
    assert run.status == "held" and "below 70%" in run.held_reason
    assert run.records_seen == 5 and len(run.held_records) == 5
    assert stored(world) == before  # nothing marked missing, nothing gone, nothing written
    assert services.last_good_run(world["provider"]) == good


def test_a_dropped_row_that_loses_a_gpu_model_is_held(world):
    refresh(world, [*shapes(9), *shapes(1, gpu_name=H100, start=9)])
    run = refresh(world, shapes(9))  # 90% of the records, but the H100 row is gone
    assert run.status == "held"
    assert "missing: H100 80GB HBM3" in run.held_reason


def test_a_refresh_within_the_share_is_ingested(world, settings):
    refresh(world, shapes(10))
    run = refresh(world, shapes(8))
    assert run.status == "success"
    settings.SCRAPE_HOLD_BELOW_SHARE = 0.9
    assert refresh(world, shapes(7)).status == "held"


def test_approving_a_held_run_ingests_its_records(world):
    refresh(world, shapes(10))
    held = refresh(world, shapes(5))
    run = services.held_run_approve(run=held, user="curator", scraper=FakeScraper([]))
    assert run.status == "success" and run.decided_by == "curator" and run.held_records is None
    after = stored(world)
    assert all(after[f"fake.i{n}"][1] == 0 for n in range(5))
    assert all(after[f"fake.i{n}"][1] == 1 for n in range(5, 10))  # one missed run, not gone
    assert services.last_good_run(world["provider"]) == run
    with pytest.raises(services.HeldRunDecisionError):
        services.held_run_approve(run=run, user="curator", scraper=FakeScraper([]))


def test_rejecting_a_held_run_keeps_the_prices(world):
    refresh(world, shapes(10))
    before = stored(world)
    held = refresh(world, shapes(5))
    services.held_run_reject(run=held, user="curator")
    held.refresh_from_db()
    assert held.status == "rejected" and stored(world) == before


def test_an_old_held_run_cannot_be_approved_over_a_newer_one(world):
    refresh(world, shapes(10))
    held = refresh(world, shapes(5))
    refresh(world, shapes(10))
    with pytest.raises(services.HeldRunDecisionError, match="newer"):
        services.held_run_approve(run=held, user="curator", scraper=FakeScraper([]))


def test_an_unknown_name_goes_to_the_queue_and_the_warnings(world):
    run = refresh(world, [*shapes(2), rec(5, region="mars-1")], scraper_cls=NotingScraper)
    assert any("Quantum GPU 9000" in w for w in run.warnings)
    assert any("unmatched region 'mars-1'" in w for w in run.warnings)
    kinds = dict(
        UnmatchedGPUName.objects.filter(provider=world["provider"]).values_list("name", "kind")
    )
    assert kinds == {"Quantum GPU 9000 running in Americas": "sku", "mars-1": "region"}
    again = refresh(world, [*shapes(2), rec(5, region="mars-1")], scraper_cls=NotingScraper)
    assert again.status == "partial" and len(again.warnings) == 2  # still loud on the next run
    item = UnmatchedGPUName.objects.get(kind="sku")
    assert item.times_seen == 2


def test_an_unknown_gpu_name_is_a_warning_too(world):
    run = refresh(world, [*shapes(1), *shapes(1, gpu_name="Quantum Tensor 9000", start=1)])
    assert run.unmatched == 1
    assert "unmatched gpu 'Quantum Tensor 9000': no alias knows it" in run.warnings


def test_a_renamed_optional_field_changes_no_record():
    # Lambda's specs.gpus renamed: the count comes from the type name, every record stays.
    body = (Path(__file__).parent / "pages" / "lambda" / "instance-types.json").read_text()
    renamed = body.replace('"gpus":', '"gpu_count":')
    assert renamed != body

    def records(text: str) -> set:
        page = Page(url="x", status=200, body=text, meta={"format": "api"})
        return {
            (r.instance_type, r.region, r.gpu_count, r.amount) for r in LambdaScraper().parse(page)
        }

    assert records(renamed) == records(body)


@pytest.fixture
def curator(client, django_user_model):
    user = django_user_model.objects.create_superuser("admin", "admin@example.org", "a-long-pw-123")
    client.force_login(user)
    return client


def test_admin_lists_held_runs_and_rejects_them(world, curator):
    refresh(world, shapes(10))
    held = refresh(world, shapes(5))
    page = curator.get(reverse("admin:catalog_scraperun_changelist") + "?status__exact=held")
    assert page.status_code == 200 and "below 70%" in page.content.decode()
    assert curator.get(reverse("admin:catalog_scraperun_change", args=[held.pk])).status_code == 200
    curator.post(
        reverse("admin:catalog_scraperun_changelist"),
        {"action": "reject_held", "_selected_action": [held.pk]},
    )
    held.refresh_from_db()
    assert held.status == "rejected" and held.decided_by == "admin"


def test_admin_approves_a_held_run(world, curator, monkeypatch):
    refresh(world, shapes(10))
    held = refresh(world, shapes(5))
    monkeypatch.setattr(services, "scraper_for", lambda key: FakeScraper([]))
    curator.post(
        reverse("admin:catalog_scraperun_changelist"),
        {"action": "approve_held", "_selected_action": [held.pk]},
    )
    held.refresh_from_db()
    assert held.status == "success" and held.decided_by == "admin"


def test_admin_only_maps_gpu_names(world, curator):
    run = refresh(world, [*shapes(2), rec(5, region="mars-1")])
    assert run.warnings
    item = UnmatchedGPUName.objects.get(kind="region")
    page = curator.get(reverse("admin:catalog_unmatchedgpuname_change", args=[item.pk]))
    assert page.status_code == 200 and 'name="mapped_to"' not in page.content.decode()


def test_health_api_and_metrics_show_held_runs_warnings_and_names(world, client, settings):
    world["provider"].scraper_key = "fake"
    world["provider"].save()
    good = refresh(world, shapes(10), scraper_cls=NotingScraper)
    held = refresh(world, shapes(5))
    body = client.get("/api/scrape-runs/health/?provider=fakecloud").json()
    assert len(body) == 1
    item = body[0]
    assert item["state"] == "held" and item["held_runs"] == 1
    assert "below 70%" in item["held_reason"]
    assert item["last_run_status"] == "held" and item["last_run_records"] == 5
    assert item["last_good_run_records"] == 10
    assert item["last_good_run_at"].startswith(good.started_at.strftime("%Y-%m-%dT%H:%M"))
    assert item["unmatched_names"] == {"sku": 1}
    assert held.warnings == []  # the held run read no unmapped name
    assert client.get("/api/scrape-runs/health/?provider=nosuch").status_code == 400
    everyone = client.get("/api/scrape-runs/health/").json()
    assert "fakecloud" in {row["provider"] for row in everyone}
    settings.METRICS_TOKEN = ""
    text = client.get("/metrics").content.decode()
    assert 'gpuatlas_scrape_held_runs{provider="fakecloud"} 1.0' in text
    assert 'gpuatlas_scraper_state{provider="fakecloud",state="held"} 1.0' in text
    assert 'gpuatlas_unmatched_names{kind="sku",provider="fakecloud"} 1.0' in text
