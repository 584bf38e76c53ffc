"""The cross-check against SkyPilot's catalog CSVs: what is filed, what is not, and that no price
is ever written by it. Real excerpts (tests/scrapers/secondary_pages/skypilot/README.md) served
from loopback; every expected figure below is worked out by hand from those lines."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse
from django.utils import timezone
from django_celery_beat.models import PeriodicTask

from catalog import choices
from catalog.gpu_names import normalise_gpu_name
from catalog.models import (
    GPU,
    CrossCheckRun,
    InstanceType,
    Price,
    PriceDisagreement,
    PriceHistory,
    Region,
    UnmatchedGPUName,
)
from catalog.services import unmatched_gpu_name_map
from scrapers import crosscheck
from scrapers.base import ParseError
from scrapers.schedules import schedules_ensure
from scrapers.secondary import skypilot
from scrapers.tasks import crosscheck_provider
from tests.scrapers.loopback import LoopbackServer

pytestmark = pytest.mark.django_db

# A second source, not a provider's price source: kept apart from pages/ (one folder per scraper).
SECONDARY = Path(__file__).resolve().parent / "secondary_pages"
PAGES = SECONDARY / "skypilot"
AWS_SHA = "00148f2af3672e2229b4f7bf8157d5a3f36e3c35"
GCP_SHA = "006059e0f18acb1341e22a27751e9f80df6ba92f"
AZURE_SHA = "098741e70562f65d7af1cceb81e33b284f742604"
READ_ON = datetime(2026, 12, 1, tzinfo=UTC)  # the recorded commits answer (README: constructed)
AWS_CSV = f"/raw/{AWS_SHA}/catalogs/v8/aws/vms.csv"


@pytest.fixture
def source(settings):
    """The loopback server standing in for raw.githubusercontent.com and the GitHub API."""
    with LoopbackServer(root=SECONDARY) as server:
        base = server.base_url("skypilot")
        settings.CROSSCHECK_SKYPILOT_RAW_BASE = f"{base}/raw"
        settings.CROSSCHECK_SKYPILOT_API_BASE = f"{base}/api"
        settings.CROSSCHECK_SKYPILOT_REF = "master"
        settings.CROSSCHECK_SKYPILOT_PATHS = {
            "aws": "catalogs/v8/aws/vms.csv",
            "gcp": "catalogs/v8/gcp/vms.csv",
            "azure": "catalogs/v6/azure/vms.csv",  # the stored copy holds Azure at v6 only
        }
        settings.CROSSCHECK_TOLERANCE = 0.10
        settings.SCRAPER_RETRIES = 0
        yield server


def only_prices(provider: str, figures: dict[tuple[str, str, str], str]) -> dict[tuple, Price]:
    """Make these the provider's only current prices (the rest marked gone), so every count below
    is exact; each quoted in USD per hour by a primary source that is not SkyPilot."""
    now = timezone.now()
    Price.objects.filter(instance_type__provider__slug=provider).update(gone_at=now)
    made = {}
    for (name, region, model), usd in figures.items():
        instance = InstanceType.objects.get(provider__slug=provider, name=name)
        amount = Decimal(usd)
        made[(name, region, model)], _ = Price.objects.update_or_create(
            instance_type=instance,
            region=Region.objects.get(provider__slug=provider, code=region),
            pricing_model=model,
            defaults={
                "amount": amount, "currency": "USD", "unit": "hour", "usd_per_hour": amount,
                "usd_per_gpu_hour": amount / instance.gpu_count, "observed_at": now,
                "source": choices.PriceSource.FIXTURE, "gone_at": None, "locked": False,
                "source_url": "https://aws.amazon.com/ec2/pricing/on-demand/",
                "source_note": "primary figure set by the test",
            },
        )  # fmt: skip
    return made


def set_usd(price: Price, usd: str) -> None:
    amount = Decimal(usd)
    Price.objects.filter(pk=price.pk).update(amount=amount, usd_per_hour=amount)


def region_absent(provider: str, code: str) -> None:
    """The excerpt's region must be one the catalog lacks (whatever the fixtures hold today)."""
    Region.objects.filter(provider__slug=provider, code=code).update(code=f"{code}-not-this")


def snapshot(provider: str) -> tuple[list[tuple], int]:
    prices = list(
        Price.objects.filter(instance_type__provider__slug=provider)
        .order_by("pk")
        .values_list("pk", "amount", "usd_per_hour", "observed_at", "source", "source_note",
                     "updated_at", "gone_at")
    )  # fmt: skip
    return prices, PriceHistory.objects.count()


def counts(run: CrossCheckRun) -> dict[str, int]:
    return {name: getattr(run, name) for name in CrossCheckRun.COUNT_FIELDS if getattr(run, name)}


# --- The reader (pure) ------------------------------------------------------------------------


def test_parser_reads_each_clouds_columns_by_name():
    aws = skypilot.parse_vms_csv((PAGES / "aws-vms.csv").read_text())
    gcp = skypilot.parse_vms_csv((PAGES / "gcp-vms.csv").read_text())
    azure = skypilot.parse_vms_csv((PAGES / "azure-vms.csv").read_text())
    assert (len(aws), len(gcp), len(azure)) == (29, 56, 23)
    g6 = [r for r in aws if r.instance_type == "g6.xlarge" and r.region == "us-east-1"]
    assert {r.zone: r.prices["spot"] for r in g6} == {
        "use1-az1": Decimal("0.401100"), "use1-az2": Decimal("0.365300"),
        "use1-az4": Decimal("0.349000"), "use1-az6": Decimal("0.398800"),
    }  # fmt: skip
    assert {r.prices["on_demand"] for r in g6} == {Decimal("0.8048")}
    assert (g6[0].accelerator_name, g6[0].accelerator_count) == ("L4", Decimal("1.0"))
    mega = next(r for r in gcp if r.accelerator_name == "H100-MEGA")
    assert (mega.instance_type, mega.accelerator_count, mega.zone) == ("", 8, "us-central1-a")
    nc6 = next(r for r in azure if r.instance_type == "Standard_NC6")
    assert (nc6.zone, nc6.region, nc6.prices) == ("", "southcentralus", {
        "on_demand": Decimal("1.08"), "spot": Decimal("0.1188")})  # fmt: skip
    a10 = next(r for r in azure if r.instance_type == "Standard_NC16ads_A10_v4")
    assert a10.prices == {}  # both prices empty in the file


def test_gcp_machine_is_host_plus_gpus_zone_by_zone():
    table = skypilot.CatalogTable.of(skypilot.parse_vms_csv((PAGES / "gcp-vms.csv").read_text()))

    def figures(region, model):
        return table.machine_figures(
            instance_type="a2-highgpu-1g", region=region, pricing_model=model,
            gpu_count=Decimal(1), accelerator_for=lambda hint: "A100",
        )  # fmt: skip

    # 0.73948 + 2.93391 on demand, 0.36975 + 1.4341 spot, in each of us-central1's four zones.
    assert figures("us-central1", "on_demand") == dict.fromkeys(
        ["us-central1-a", "us-central1-b", "us-central1-c", "us-central1-f"], Decimal("3.67339")
    )
    assert set(figures("us-central1", "spot").values()) == {Decimal("1.80385")}
    # europe-west4: host zones a/b, GPU zones a/b: 0.81406 + 1.61365.
    assert set(figures("europe-west4", "on_demand").values()) == {Decimal("2.42771")}
    assert figures("us-central2", "on_demand") == {}  # no a2 host there
    # An N1 machine with a T4 attached: the zones with both rows (asia-east1 b has no T4).
    attached = table.machine_figures(
        instance_type="n1-standard-8+1xT4", region="asia-east1", pricing_model="spot",
        gpu_count=Decimal(1), accelerator_for=lambda hint: {"T4": "T4"}.get(hint),
    )  # fmt: skip
    assert attached == {"asia-east1-a": Decimal("0.20956"), "asia-east1-c": Decimal("0.20956")}


def test_pick_accelerator_prefers_the_name_the_machine_carries():
    fold = normalise_gpu_name
    both = ["H100", "H100-MEGA"]
    assert skypilot.pick_accelerator(both, "nvidia-h100-mega-80gb", fold=fold) == "H100-MEGA"
    assert skypilot.pick_accelerator(both, "nvidia-h100-80gb", fold=fold) == "H100"
    assert skypilot.pick_accelerator(both, "a3-edgegpu-8g", fold=fold) is None
    assert skypilot.pick_accelerator(["A100"], "anything", fold=fold) == "A100"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("<html><body>rate limited</body></html>", "expected CSV"),
        ("InstanceType,vCPUs,Price\nx,1,2\n", r"no column\(s\) AcceleratorName"),
        ((PAGES / "aws-vms.csv").read_text().splitlines()[0] + "\n", "no rows"),
        ((PAGES / "aws-vms.csv").read_text().replace("0.8048,0.401100", "0.8048,N/A", 1), "N/A"),
    ],
)
def test_parser_refuses_what_is_not_a_vms_csv(body, message):
    with pytest.raises(ParseError, match=message):
        skypilot.parse_vms_csv(body)


# --- Filing -----------------------------------------------------------------------------------


def test_disagreements_over_ten_percent_are_filed_agreements_are_not(source):
    prices = only_prices("aws", {
        ("g6.xlarge", "us-east-1", "on_demand"): "1.000000",   # source 0.8048: 19.5% off
        ("g6e.12xlarge", "us-east-1", "on_demand"): "10.49264",  # the same figure
        ("g6.xlarge", "us-east-1", "spot"): "0.300000",        # zones 0.3490-0.4011: 16.3% off
        ("g6.xlarge", "eu-north-1", "spot"): "0.270000",       # zone eun1-az2 0.2584: 4.3% off
    })  # fmt: skip
    region_absent("aws", "ap-south-1")

    run = crosscheck.crosscheck_run(provider_slug="aws")

    assert run.status == "success", run.error
    assert (run.source_commit, run.source_date) == (AWS_SHA, READ_ON)
    assert run.source_url == source.base_url("skypilot") + AWS_CSV
    assert counts(run) == {
        "rows_read": 29, "compared": 4, "agreements": 2, "disagreements": 2, "filed": 2,
        "unmatched": 1,
    }  # fmt: skip
    items = {
        (i.price.instance_type.name, i.price.pricing_model): i
        for i in PriceDisagreement.objects.select_related("price__instance_type")
    }
    on_demand = items[("g6.xlarge", "on_demand")]
    assert on_demand.price == prices[("g6.xlarge", "us-east-1", "on_demand")]
    assert (on_demand.primary_usd_per_hour, on_demand.second_usd_per_hour) == (
        Decimal("1.000000"), Decimal("0.804800"))  # fmt: skip
    assert on_demand.ratio == Decimal("0.8048") and on_demand.status == "open"
    assert (on_demand.source_commit, on_demand.run) == (AWS_SHA, run)
    spot = items[("g6.xlarge", "spot")]
    # The zone figure nearest ours is the one compared; the range is kept for the curator.
    assert (spot.second_usd_per_hour, spot.second_low_usd_per_hour, spot.second_high_usd_per_hour) \
        == (Decimal("0.349000"), Decimal("0.349000"), Decimal("0.401100"))  # fmt: skip
    assert spot.ratio == Decimal("1.1633")
    assert len(items) == 2
    assert UnmatchedGPUName.objects.filter(
        provider__slug="aws", kind="region", name="ap-south-1"
    ).exists()


def test_exactly_ten_percent_is_agreement_a_hair_more_is_filed(source):
    # Azure NC4as_T4_v3 in centralus: the source says 0.594 = 1.1 x 0.54.
    price = only_prices("azure", {("Standard_NC4as_T4_v3", "centralus", "on_demand"): "0.540000"})
    first = crosscheck.crosscheck_run(provider_slug="azure")
    assert (first.compared, first.agreements, first.filed) == (1, 1, 0)

    set_usd(price[("Standard_NC4as_T4_v3", "centralus", "on_demand")], "0.539999")
    second = crosscheck.crosscheck_run(provider_slug="azure")
    assert (second.compared, second.agreements, second.filed) == (1, 0, 1)
    assert PriceDisagreement.objects.get().second_usd_per_hour == Decimal("0.594000")


def test_the_cross_check_never_writes_a_price(source):
    only_prices("aws", {("g6.xlarge", "us-east-1", "on_demand"): "1.000000"})
    before = snapshot("aws")
    run = crosscheck.crosscheck_run(provider_slug="aws")
    assert run.filed == 1
    assert snapshot("aws") == before


def test_the_same_disagreement_is_filed_once(source):
    only_prices("aws", {("g6.xlarge", "us-east-1", "on_demand"): "1.000000"})
    crosscheck.crosscheck_run(provider_slug="aws")
    again = crosscheck.crosscheck_run(provider_slug="aws")
    assert (again.disagreements, again.filed, again.refreshed) == (1, 0, 1)
    item = PriceDisagreement.objects.get()
    assert (item.times_seen, item.run, item.status) == (2, again, "open")


def test_a_dismissed_disagreement_returns_only_when_a_figure_moves(source):
    prices = only_prices("aws", {("g6.xlarge", "us-east-1", "on_demand"): "1.000000"})
    crosscheck.crosscheck_run(provider_slug="aws")
    item = PriceDisagreement.objects.get()
    crosscheck.price_disagreement_dismiss(item=item, user="curator", note="Karpenter is newer")

    quiet = crosscheck.crosscheck_run(provider_slug="aws")
    assert (quiet.disagreements, quiet.filed, quiet.already_decided) == (1, 0, 1)
    assert not PriceDisagreement.objects.filter(status="open").exists()

    set_usd(prices[("g6.xlarge", "us-east-1", "on_demand")], "1.100000")
    moved = crosscheck.crosscheck_run(provider_slug="aws")
    assert moved.filed == 1
    new = PriceDisagreement.objects.get(status="open")
    assert (new.primary_usd_per_hour, new.second_usd_per_hour) == (
        Decimal("1.100000"), Decimal("0.804800"))  # fmt: skip
    item.refresh_from_db()
    assert (item.status, item.note) == ("dismissed", "Karpenter is newer")


def test_an_open_disagreement_closes_when_the_sources_agree_again(source):
    prices = only_prices("aws", {("g6.xlarge", "us-east-1", "on_demand"): "1.000000"})
    crosscheck.crosscheck_run(provider_slug="aws")
    set_usd(prices[("g6.xlarge", "us-east-1", "on_demand")], "0.810000")  # 0.6% from 0.8048
    run = crosscheck.crosscheck_run(provider_slug="aws")
    assert (run.agreements, run.resolved) == (1, 1)
    item = PriceDisagreement.objects.get()
    assert (item.status, item.decided_by) == ("resolved", "cross-check")


def test_accepting_applies_the_second_figure_with_history(source):
    prices = only_prices("aws", {("g6.xlarge", "us-east-1", "on_demand"): "1.000000"})
    crosscheck.crosscheck_run(provider_slug="aws")
    item = PriceDisagreement.objects.get()
    history = PriceHistory.objects.count()

    crosscheck.price_disagreement_accept(item=item, user="curator")

    price = Price.objects.get(pk=prices[("g6.xlarge", "us-east-1", "on_demand")].pk)
    assert (price.amount, price.usd_per_hour, price.source) == (
        Decimal("0.804800"), Decimal("0.804800"), "curator")  # fmt: skip
    assert price.source_url == (
        f"https://github.com/skypilot-org/skypilot-catalog/blob/{AWS_SHA}/catalogs/v8/aws/vms.csv"
    )
    assert price.source_note == (
        "SkyPilot catalog @00148f2af367 (2026-12-01), accepted by curator from the cross-check "
        "(was 1.000000 USD/h)"
    )
    row = PriceHistory.objects.order_by("-pk").first()
    assert PriceHistory.objects.count() == history + 1
    assert (row.event, row.amount, row.previous_amount) == (
        "changed", Decimal("0.804800"), Decimal("1.000000"))  # fmt: skip
    item.refresh_from_db()
    assert (item.status, item.decided_by) == ("accepted", "curator")

    # The price now comes from SkyPilot itself: comparing it with SkyPilot again proves nothing.
    after = crosscheck.crosscheck_run(provider_slug="aws")
    assert (after.not_independent, after.compared, after.filed) == (1, 0, 0)


def test_accepting_is_refused_once_the_price_moved(source):
    prices = only_prices("aws", {("g6.xlarge", "us-east-1", "on_demand"): "1.000000"})
    crosscheck.crosscheck_run(provider_slug="aws")
    set_usd(prices[("g6.xlarge", "us-east-1", "on_demand")], "0.900000")
    with pytest.raises(crosscheck.DisagreementDecisionError, match="moved"):
        crosscheck.price_disagreement_accept(item=PriceDisagreement.objects.get(), user="curator")
    assert Price.objects.get(
        pk=prices[("g6.xlarge", "us-east-1", "on_demand")].pk
    ).amount == Decimal("0.900000")
    assert PriceDisagreement.objects.get().status == "open"


def test_gcp_prices_compare_with_host_plus_gpus_and_unknown_names_are_queued(source):
    only_prices("gcp", {
        ("a2-highgpu-1g", "us-central1", "on_demand"): "3.000000",  # source 3.67339
        ("a2-highgpu-1g", "us-central1", "spot"): "1.800000",       # source 1.80385
        ("a2-highgpu-1g", "us-east1", "on_demand"): "3.673385",     # source 3.67339
        ("a2-highgpu-1g", "europe-west4", "on_demand"): "2.000000", # source 2.42771
        ("n1-standard-8+1xT4", "asia-east1", "on_demand"): "0.790000",  # source 0.44 + 0.35
        ("n1-standard-8+1xT4", "asia-east1", "spot"): "0.250000",       # source 0.20956
    })  # fmt: skip
    before = UnmatchedGPUName.objects.filter(provider__slug="gcp", kind="gpu").count()

    run = crosscheck.crosscheck_run(provider_slug="gcp")

    assert run.status == "success", run.error
    assert (run.source_commit, run.rows_read, run.compared) == (GCP_SHA, 56, 6)
    assert (run.agreements, run.filed) == (3, 3)
    filed = {
        (i.price.instance_type.name, i.price.region.code): (i.second_usd_per_hour, i.ratio)
        for i in PriceDisagreement.objects.select_related("price__region", "price__instance_type")
    }
    assert filed == {
        ("a2-highgpu-1g", "us-central1"): (Decimal("3.673390"), Decimal("1.2245")),
        ("a2-highgpu-1g", "europe-west4"): (Decimal("2.427710"), Decimal("1.2139")),
        # 0.20956 / 0.25 = 0.83824: 16% under ours.
        ("n1-standard-8+1xT4", "asia-east1"): (Decimal("0.209560"), Decimal("0.8382")),
    }
    names = set(
        UnmatchedGPUName.objects.filter(provider__slug="gcp", kind="gpu").values_list(
            "name", flat=True
        )
    )
    # SkyPilot's H100-MEGA (a3-megagpu-8g) is an alias of h100-sxm in fixtures/gpus.yaml: not queued.
    assert "H100-MEGA" not in names
    assert not any(name.startswith("tpu-") for name in names)  # TPUs are not GPUs
    assert UnmatchedGPUName.objects.filter(provider__slug="gcp", kind="gpu").count() == before
    assert not any(w.startswith("unmatched gpu") for w in run.warnings)


def test_azure_unknown_gpu_is_queued_and_a_mapped_one_is_not(source):
    only_prices("azure", {("Standard_NC24ads_A100_v4", "eastus", "on_demand"): "3.673000"})
    run = crosscheck.crosscheck_run(provider_slug="azure")
    assert (run.source_commit, run.compared, run.agreements, run.filed) == (AZURE_SHA, 1, 1, 0)
    k80 = UnmatchedGPUName.objects.get(provider__slug="azure", kind="gpu", normalised="k80")
    assert k80.example == {"reason": "no alias knows it", "source": "SkyPilot catalog"}
    # Once a curator maps the name, the next run does not queue it again.
    unmatched_gpu_name_map(item=k80, gpu=GPU.objects.get(slug="t4"))
    crosscheck.crosscheck_run(provider_slug="azure")
    k80.refresh_from_db()
    assert k80.times_seen == 1


# --- Failures change nothing ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "body", "error"),
    [
        (500, "upstream broke", "FetchError"),
        (200, "<html><body>Too many requests</body></html>", "ParseError"),
        (200, "InstanceType,AcceleratorName,AcceleratorCount,Price,Region\n", "ParseError"),
    ],
)
def test_a_failing_fetch_leaves_everything_as_it_was(source, status, body, error):
    only_prices("aws", {("g6.xlarge", "us-east-1", "on_demand"): "1.000000"})
    crosscheck.crosscheck_run(provider_slug="aws")  # one open disagreement to keep as it is
    before = snapshot("aws")
    items = list(PriceDisagreement.objects.values())
    unmatched = list(UnmatchedGPUName.objects.values_list("pk", "times_seen"))
    source.override("skypilot", AWS_CSV, status=status, body=body, content_type="text/plain")

    run = crosscheck.crosscheck_run(provider_slug="aws")

    assert run.status == "failed" and run.error.startswith(error)
    assert run.finished_at is not None and run.filed == run.compared == 0
    assert snapshot("aws") == before
    assert list(PriceDisagreement.objects.values()) == items
    assert list(UnmatchedGPUName.objects.values_list("pk", "times_seen")) == unmatched


def test_a_failure_mid_comparison_rolls_back_what_it_noted(source, monkeypatch):
    # 3.0 against the source's 3.673: a disagreement to file; K80 is a name no alias knows.
    only_prices("azure", {("Standard_NC24ads_A100_v4", "eastus", "on_demand"): "3.000000"})
    unmatched = list(UnmatchedGPUName.objects.values_list("pk", "times_seen"))

    def refuse(**values):
        raise RuntimeError("database went away")

    monkeypatch.setattr(PriceDisagreement.objects, "create", refuse)
    run = crosscheck.crosscheck_run(provider_slug="azure")

    assert (run.status, run.error) == ("failed", "RuntimeError: database went away")
    assert (run.compared, run.warnings) == (0, [])  # K80 was noted, then rolled back
    assert list(UnmatchedGPUName.objects.values_list("pk", "times_seen")) == unmatched
    assert not PriceDisagreement.objects.exists()


def test_without_the_commit_the_file_is_read_at_the_branch_and_said_so(source):
    only_prices("aws", {("g6.xlarge", "us-east-1", "on_demand"): "1.000000"})
    source.override("skypilot", "/api/commits", status=403, body='{"message": "rate limit"}')
    run = crosscheck.crosscheck_run(provider_slug="aws")
    assert run.status == "success" and run.filed == 1
    assert (run.source_commit, run.source_date) == ("", None)
    assert run.source_url.endswith("/raw/master/catalogs/v8/aws/vms.csv")
    assert run.warnings[0].startswith("commit of catalogs/v8/aws/vms.csv on master not known")


def test_one_cross_check_per_provider_at_a_time(source):
    provider = InstanceType.objects.filter(provider__slug="aws").first().provider
    CrossCheckRun.objects.create(
        provider=provider, source="SkyPilot catalog", started_at=timezone.now()
    )
    with pytest.raises(crosscheck.CrossCheckInProgress):
        crosscheck.crosscheck_run(provider_slug="aws")
    assert crosscheck_provider.apply(args=("aws",)).get()["status"] == "skipped"


# --- Entry points -----------------------------------------------------------------------------


def test_command_compares_a_saved_file_offline(settings, capsys):
    settings.CROSSCHECK_SKYPILOT_API_BASE = settings.CROSSCHECK_SKYPILOT_RAW_BASE = (
        "http://127.0.0.1:9"
    )
    only_prices("aws", {("g6.xlarge", "us-east-1", "on_demand"): "1.000000"})
    call_command(
        "crosscheck_prices", "--provider", "aws", "--file", str(PAGES / "aws-vms.csv"),
        "--source-commit", AWS_SHA, "--source-date", "2026-11-30",
    )  # fmt: skip
    out = capsys.readouterr().out
    assert out.startswith("aws: success (file://") and f"@{AWS_SHA[:12]})" in out
    assert "compared 1" in out and "filed 1" in out
    run = CrossCheckRun.objects.get()
    assert (run.trigger, run.source_commit, run.source_date) == (
        "command", AWS_SHA, datetime(2026, 11, 30, tzinfo=UTC))  # fmt: skip
    with pytest.raises(CommandError, match="give --provider"):
        call_command("crosscheck_prices", "--file", str(PAGES / "aws-vms.csv"))


def test_command_fails_loudly_when_the_fetch_fails(source):
    source.override("skypilot", AWS_CSV, status=404, body="gone")
    with pytest.raises(CommandError, match="1 cross-check"):
        call_command("crosscheck_prices", "--provider", "aws")


def test_weekly_schedule_per_hyperscaler(settings):
    settings.CROSSCHECK_INTERVAL_HOURS = 168
    schedules_ensure()
    tasks = PeriodicTask.objects.filter(task="scrapers.crosscheck_provider").order_by("name")
    assert [(t.name, json.loads(t.args), t.interval.every, t.interval.period) for t in tasks] == [
        ("cross-check prices: aws", ["aws"], 168, "hours"),
        ("cross-check prices: azure", ["azure"], 168, "hours"),
        ("cross-check prices: gcp", ["gcp"], 168, "hours"),
    ]
    assert schedules_ensure() == 0  # idempotent


def test_task_runs_the_cross_check(source):
    only_prices("aws", {("g6.xlarge", "us-east-1", "on_demand"): "1.000000"})
    result = crosscheck_provider.apply(args=("aws",)).get()
    assert (result["status"], result["filed"]) == ("success", 1)
    assert CrossCheckRun.objects.get(pk=result["run"]).trigger == "schedule"


@pytest.fixture
def curator(client, django_user_model):
    user = django_user_model.objects.create_superuser("admin", "admin@example.org", "a-long-pw-123")
    client.force_login(user)
    return client


def test_admin_queue_accepts_and_dismisses(source, curator):
    prices = only_prices("aws", {
        ("g6.xlarge", "us-east-1", "on_demand"): "1.000000",
        ("g6e.12xlarge", "us-east-1", "on_demand"): "20.000000",
    })  # fmt: skip
    run = crosscheck.crosscheck_run(provider_slug="aws")
    assert run.filed == 2
    url = reverse("admin:catalog_pricedisagreement_changelist")
    page = curator.get(url + "?status__exact=open")
    assert page.status_code == 200 and "g6e.12xlarge" in page.content.decode()
    assert curator.get(reverse("admin:catalog_crosscheckrun_changelist")).status_code == 200
    g6, g6e = (
        PriceDisagreement.objects.get(price=prices[(name, "us-east-1", "on_demand")])
        for name in ("g6.xlarge", "g6e.12xlarge")
    )
    change = reverse("admin:catalog_pricedisagreement_change", args=[g6.pk])
    assert curator.get(change).status_code == 200
    run_page = reverse("admin:catalog_crosscheckrun_change", args=[run.pk])
    assert curator.get(run_page).status_code == 200
    curator.post(url, {"action": "accept", "_selected_action": [g6.pk]})
    curator.post(url, {"action": "dismiss", "_selected_action": [g6e.pk]})
    g6.refresh_from_db()
    g6e.refresh_from_db()
    assert (g6.status, g6.decided_by, g6e.status, g6e.decided_by) == (
        "accepted", "admin", "dismissed", "admin")  # fmt: skip
    assert Price.objects.get(pk=g6.price_id).amount == Decimal("0.804800")
    assert Price.objects.get(pk=g6e.price_id).amount == Decimal("20.000000")


def test_metrics_count_open_disagreements(source, client):
    only_prices("aws", {("g6.xlarge", "us-east-1", "on_demand"): "1.000000"})
    crosscheck.crosscheck_run(provider_slug="aws")
    text = client.get("/metrics").content.decode()
    assert 'gpuatlas_price_disagreements_open{provider="aws"} 1.0' in text
    assert 'gpuatlas_price_disagreements_open{provider="gcp"} 0.0' in text
    assert 'gpuatlas_crosscheck_last_run_timestamp_seconds{provider="aws",status="success"}' in text
