"""GCP scraper: recorded Billing Catalog pages and public GPU page, loopback fetches, faults."""

from __future__ import annotations

import json
import re
from decimal import Decimal
from pathlib import Path

import httpx
import pytest
import yaml

from scrapers.base import REGISTRY, FetchError, HttpClient, Page, ParseError, parse_all
from scrapers.providers.gcp import GcpScraper
from tests.scrapers.loopback import LoopbackServer, quiet_client, timing_out

PAGES = Path(__file__).resolve().parent / "pages" / "gcp"
ROOT = Path(__file__).resolve().parents[2]
SKUS = "/v1/services/6F81-5844-456A/skus"
FRAME = "gpus-pricing.frame.html"


def page(name: str) -> Page:
    return Page(url=f"file:///{name}", status=200, body=(PAGES / name).read_text())


def joined_catalog(mutate=None) -> Page:
    """Both recorded catalog pages joined, as fetch() hands them to parse()."""
    skus = []
    for name in ("catalog-1.json", "catalog-2.json"):
        skus += json.loads((PAGES / name).read_text())["skus"]
    data = {"skus": skus, "nextPageToken": ""}
    if mutate:
        mutate(data)
    return Page(url="file:///catalog", status=200, body=json.dumps(data))


def by_key(records):
    return {(r.instance_type, r.region, r.pricing_model): r for r in records}


@pytest.fixture
def catalog():
    return GcpScraper().parse(joined_catalog())


def test_registered():
    assert REGISTRY["gcp"] is GcpScraper


def test_catalog_record_counts(catalog):
    # a3-highgpu-1g/2g/4g and a3-ultragpu-8g have Spot records only (SOLD_ONLY_AS).
    assert len(catalog) == 143
    assert {r.currency for r in catalog} == {"USD"}
    assert {r.unit for r in catalog} == {"hour"}
    # us-east1 / us-west1 are served by the "Americas" SKUs but are not in the default regions.
    assert {r.region for r in catalog} == {"us-central1", "us-east4", "europe-west4", "asia-east1"}
    assert sum(r.pricing_model.startswith("reserved") for r in catalog) == 6


def test_n1_plus_gpu_is_core_ram_and_gpu(catalog):
    records = by_key(catalog)
    t4 = records[("n1-standard-8+1xT4", "us-central1", "on_demand")]
    assert t4.amount == 8 * Decimal("0.031611") + 30 * Decimal("0.004237") + Decimal("0.35")
    assert t4.amount == Decimal("0.729998")
    assert (t4.gpu_name, t4.gpu_count, t4.vcpus, t4.ram_gib) == ("nvidia-tesla-t4", 1, 8, 30.0)
    assert len(t4.extra["sku_ids"]) == 3
    assert records[("n1-standard-8+1xT4", "us-central1", "spot")].amount == Decimal("0.2363")
    assert records[("n1-standard-8+2xT4", "us-central1", "on_demand")].amount == Decimal("1.079998")
    assert records[("n1-standard-64+8xV100", "europe-west4", "spot")].amount == Decimal("6.96352")


def test_commitments_need_every_component(catalog):
    records = by_key(catalog)
    one = records[("n1-standard-8+1xT4", "us-central1", "reserved_1y")]
    assert one.amount == 8 * Decimal("0.019915") + 30 * Decimal("0.002669") + Decimal("0.22")
    assert records[("n1-standard-8+1xT4", "us-central1", "reserved_3y")].amount == Decimal(
        "0.331010"
    )
    # A2 has 1-year core/RAM commitments but no A100 commitment SKU: no A2 reserved record.
    assert not [
        r
        for r in catalog
        if r.instance_type.startswith("a2-") and r.pricing_model.startswith("reserved")
    ]


def test_accelerator_optimized_families(catalog):
    records = by_key(catalog)
    a2 = records[("a2-highgpu-1g", "us-central1", "on_demand")]
    assert a2.amount == Decimal("3.673385")
    assert (a2.gpu_name, a2.vcpus, a2.ram_gib) == ("nvidia-tesla-a100", 12, 85.0)
    g2 = records[("g2-standard-24", "europe-west4", "on_demand")]
    assert (g2.gpu_count, g2.amount) == (2, Decimal("2.1018368"))
    mega = records[("a3-megagpu-8g", "us-central1", "spot")]
    assert (mega.gpu_name, mega.amount) == ("nvidia-h100-mega-80gb", Decimal("21.2082720"))
    assert records[("a2-ultragpu-1g", "us-central1", "on_demand")].gpu_name == "nvidia-a100-80gb"
    one = records[("a2-ultragpu-1g", "us-central1", "on_demand")]
    eight = records[("a2-ultragpu-8g", "us-central1", "on_demand")]
    assert (eight.vcpus, eight.ram_gib, eight.gpu_count) == (96, 1360.0, 8)
    # The same A2 core, RAM and A100 80GB rates, times the 8-GPU shape's counts.
    core, ram, gpu = (Decimal(one.extra[k]) for k in ("vcpu_hour", "gib_hour", "gpu_hour"))
    assert eight.amount == 96 * core + 1360 * ram + 8 * gpu


def test_shapes_sold_only_as_spot_keep_spot_only(catalog):
    models = {}
    for r in catalog:
        models.setdefault(r.instance_type, set()).add(r.pricing_model)
    for name in ("a3-highgpu-1g", "a3-highgpu-2g", "a3-highgpu-4g", "a3-ultragpu-8g"):
        assert models[name] == {"spot"}, name
    assert "on_demand" in models["a3-highgpu-8g"]


def test_catalog_traps_are_ignored(catalog):
    records = by_key(catalog)
    # DWS-only H100 SKU (5.8779) must not replace the on-demand H100 price.
    h100 = records[("a3-highgpu-8g", "us-east4", "on_demand")]
    assert h100.amount == 208 * Decimal("0.022981") + 1872 * Decimal("0.0025") + 8 * Decimal(
        "9.79655"
    )
    # A3 high is only in us-east4 in the recording, so it appears nowhere else.
    assert {r.region for r in catalog if r.instance_type == "a3-highgpu-8g"} == {"us-east4"}
    # Custom/sole-tenant cores, vWS GPUs, storage, egress and licences never reach a record.
    used = {sku for r in catalog for sku in r.extra["sku_ids"]}
    skus = {s["skuId"]: s["description"] for s in json.loads(joined_catalog().body)["skus"]}
    descriptions = {skus[s] for s in used}
    for word in (
        "Custom",
        "Sole Tenancy",
        "Virtual Workstation",
        "DWS",
        "Storage",
        "Egress",
        "Licensing",
    ):
        assert not [d for d in descriptions if word in d]


def test_region_selection_applies_to_multi_region_skus():
    records = GcpScraper(regions=["us-east1"]).parse(joined_catalog())
    assert {r.region for r in records} == {"us-east1"}
    assert by_key(records)[("n1-standard-8+1xT4", "us-east1", "on_demand")].amount == Decimal(
        "0.729998"
    )


def test_a_single_page_lacks_components_so_fetch_joins_them():
    assert GcpScraper().parse(page("catalog-1.json")) == []  # cores and RAM only, no GPUs
    assert GcpScraper().parse(page("catalog-2.json")) == []  # GPUs only


def test_public_gpu_table():
    records = GcpScraper().parse(page(FRAME))
    assert len(records) == 38
    assert {r.extra["component"] for r in records} == {"gpu_only"}
    assert {r.gpu_count for r in records} == {1}
    t4 = by_key(records)
    assert t4[("nvidia-tesla-t4", "us-central1", "on_demand")].amount == Decimal("0.35")
    assert t4[("nvidia-tesla-t4", "us-central1", "reserved_3y")].amount == Decimal("0.16")
    assert t4[("nvidia-l4", "asia-northeast1", "spot")].amount == Decimal("0.2853")
    assert ("nvidia-tesla-p4", "asia-east1", "on_demand") not in t4  # no attribute: not offered
    models = {r.extra["model"] for r in records}
    assert "NVIDIA K80" not in models and not [m for m in models if "Workstation" in m]


def test_fetch_catalog_with_key_joins_pages():
    with LoopbackServer() as srv:
        scraper = GcpScraper(base_url=srv.base_url("gcp"), credentials={"gcp_api_key": "k-123"})
        with HttpClient(retries=0, timeout_s=5) as client:
            pages = list(scraper.fetch(client))
    assert len(pages) == 1
    assert pages[0].meta == {"kind": "catalog", "pages": "2"}
    assert "k-123" not in pages[0].url
    assert len(parse_all(scraper, pages)) == 143


def test_api_key_goes_in_a_header_and_pages_follow_the_token():
    seen = []
    bodies = {
        "": (PAGES / "catalog-1.json").read_text(),
        "CiQwMDZFLUEyMUMtMDQ4MxIMCgoxLTU4NDQtNDU2QRoGCJjQ7ZsG": (
            PAGES / "catalog-2.json"
        ).read_text(),
    }

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, text=bodies[request.url.params.get("pageToken", "")])

    scraper = GcpScraper(credentials={"gcp_api_key": "secret-key"})
    with HttpClient(retries=0, transport=httpx.MockTransport(handler)) as client:
        pages = list(scraper.fetch(client))
    assert len(seen) == 2
    assert all(r.headers["X-Goog-Api-Key"] == "secret-key" for r in seen)
    assert all("secret-key" not in str(r.url) for r in seen)
    assert str(seen[0].url).startswith(
        "https://cloudbilling.googleapis.com/v1/services/6F81-5844-456A/skus"
    )
    assert len(scraper.parse(pages[0])) == 143


def test_fetch_public_page_follows_the_iframe():
    with LoopbackServer() as srv:
        scraper = GcpScraper(base_url=srv.base_url("gcp"))
        with HttpClient(retries=0, timeout_s=5) as client:
            pages = list(scraper.fetch(client))
    assert [p.meta["kind"] for p in pages] == ["gpu_page_frame"]
    assert pages[0].url.endswith(".frame")
    assert len(parse_all(scraper, pages)) == 38


def test_fetch_public_page_with_inline_table():
    with LoopbackServer() as srv:
        srv.override(
            "gcp",
            "/compute/gpus-pricing",
            body=(PAGES / FRAME).read_text(),
            content_type="text/html",
        )
        scraper = GcpScraper(base_url=srv.base_url("gcp"))
        with HttpClient(retries=0, timeout_s=5) as client:
            pages = list(scraper.fetch(client))
    assert [p.meta["kind"] for p in pages] == ["gpu_page"]
    assert len(scraper.parse(pages[0])) == 38


def test_public_base_is_the_real_host_by_default():
    assert GcpScraper().public_base == "https://cloud.google.com"
    assert GcpScraper(base_url="http://127.0.0.1:1/gcp/").public_base == "http://127.0.0.1:1/gcp"


# --- faults ------------------------------------------------------------------------------
def _fetch_catalog_with_override(**override):
    with LoopbackServer() as srv:
        srv.override("gcp", SKUS, **override)
        scraper = GcpScraper(base_url=srv.base_url("gcp"), credentials={"gcp_api_key": "k"})
        with quiet_client(timeout_s=5) as client:
            return [scraper.parse(p) for p in scraper.fetch(client)]


def test_server_error_raises_fetch_error_after_retries():
    with pytest.raises(FetchError, match="HTTP 500"):
        _fetch_catalog_with_override(status=500, body='{"error": {"code": 500}}')


def test_timeout_raises_fetch_error():
    with (
        quiet_client(transport=timing_out()) as client,
        pytest.raises(FetchError, match="ReadTimeout"),
    ):
        list(GcpScraper().fetch(client))


def test_truncated_json_raises_parse_error():
    body = (PAGES / "catalog-1.json").read_text()[:4000]
    with pytest.raises(ParseError, match="invalid JSON"):
        _fetch_catalog_with_override(body=body)


def test_html_instead_of_json_raises_parse_error():
    with pytest.raises(ParseError, match="expected JSON"):
        _fetch_catalog_with_override(
            body="<html><body>Error 403 (Forbidden)</body></html>", content_type="text/html"
        )


def _rename_first_compute_sku(field, new):
    def mutate(data):
        sku = next(s for s in data["skus"] if s["category"]["resourceFamily"] == "Compute")
        sku[new] = sku.pop(field)

    return mutate


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d.update(SKUs=d.pop("skus")), "skus"),
        (_rename_first_compute_sku("pricingInfo", "pricing"), "pricingInfo"),
        (_rename_first_compute_sku("serviceRegions", "regions"), "serviceRegions"),
        (_rename_first_compute_sku("description", "name_text"), "description"),
    ],
    ids=["skus", "pricingInfo", "serviceRegions", "description"],
)
def test_renamed_catalog_fields_raise_parse_error(mutate, message):
    with pytest.raises(ParseError, match=message):
        GcpScraper().parse(joined_catalog(mutate))


def test_changed_usage_unit_raises_parse_error():
    def monthly(data):
        for sku in data["skus"]:
            if sku["description"] == "N1 Predefined Instance Ram running in Americas":
                sku["pricingInfo"][0]["pricingExpression"]["usageUnit"] = "GiBy.mo"

    with pytest.raises(ParseError, match=r"GiBy\.mo"):
        GcpScraper().parse(joined_catalog(monthly))


def test_public_page_without_table_raises_parse_error():
    # The outer page only holds the iframe; parsed on its own it has no price table.
    with pytest.raises(ParseError, match="iframe"):
        GcpScraper().parse(page("gpus-pricing.html"))


def test_public_table_with_renamed_header_raises_parse_error():
    body = (PAGES / FRAME).read_text().replace("GPU price (USD)", "Price (USD)")
    with pytest.raises(ParseError, match="GPU price"):
        GcpScraper().parse(Page(url="x", status=200, body=body))


def test_public_table_without_region_attributes_raises_parse_error():
    body = re.sub(r' [a-z]+-hourly="[^"]*"', "", (PAGES / FRAME).read_text())
    with pytest.raises(ParseError, match="per-region"):
        GcpScraper().parse(Page(url="x", status=200, body=body))


def test_spot_only_shapes_get_no_on_demand_or_commitment_price(catalog):
    """A3 High with 1, 2 or 4 GPUs is sold as Spot or Flex-start only: the per-resource rates
    would add up to an on-demand price nobody can pay, so it is skipped with a note."""
    scraper = GcpScraper()
    records = scraper.parse(joined_catalog())
    assert {r.pricing_model for r in records if r.instance_type == "a3-highgpu-1g"} == {"spot"}
    skipped = {n.name: n.reason for n in scraper.notes if n.kind == "skipped"}
    assert skipped["a3-highgpu-1g us-east4 on_demand"] == "sold only as spot (and Flex-start)"
    assert ("a3-highgpu-8g", "us-east4", "on_demand") in by_key(records)


def test_machine_types_only_where_offered_though_multi_region_skus_price_them():
    # "running in Americas" SKUs (A2 cores, RAM, A100 40GB and 80GB) also serve us-east1 and us-west1, but
    # A2 Ultra (A100 80GB) and a2-megagpu-16g are offered in neither; A2 Standard is offered in both.
    scraper = GcpScraper(regions=["us-east1", "us-west1"])
    records = scraper.parse(joined_catalog())
    a2 = {(r.instance_type, r.region) for r in records if r.instance_type.startswith("a2-")}
    assert a2 == {
        (f"a2-highgpu-{n}g", region) for n in (1, 2, 4, 8) for region in ("us-east1", "us-west1")
    }
    skipped = {n.name for n in scraper.notes if "not offered in this region" in n.reason}
    assert skipped == {
        f"{name} {region}"
        for name in (
            "a2-megagpu-16g",
            *(f"a2-ultragpu-{n}g" for n in (1, 2, 4, 8)),
            "n1-standard-8+1xP4",  # the Americas P4 SKU prices it; no zone there has a P4
        )
        for region in ("us-east1", "us-west1")
    } | {"a3-megagpu-8g us-east1", "a3-ultragpu-8g us-east1"}
    assert not {r.region for r in records if r.instance_type == "n1-standard-8+1xP4"}

    class EverywhereScraper(GcpScraper):
        offered_regions = {}  # without the listing, the SKUs alone price A2 Ultra in us-west1

    unfiltered = EverywhereScraper(regions=["us-west1"]).parse(joined_catalog())
    assert ("a2-ultragpu-8g", "us-west1", "on_demand") in by_key(unfiltered)


def test_offered_regions_cover_every_region_the_fixture_prices_a_type_in():
    # A region missing here would stop the refresh emitting those fixture prices (and mark them gone).
    from scrapers.providers.gcp import MACHINE_TYPES, OFFERED_REGIONS

    fixture = yaml.safe_load((ROOT / "fixtures" / "providers" / "gcp.yaml").read_text())
    priced = {(p["instance_type"], p["region"]) for p in fixture["prices"]}
    assert set(OFFERED_REGIONS) == set(MACHINE_TYPES)
    missing = {(name, r) for name, r in priced if name in MACHINE_TYPES} - {
        (name, r) for name, regions in OFFERED_REGIONS.items() for r in regions
    }
    assert not missing
    # and none of the fixture's A2 rows sits where the listing has no A100
    assert not {(n, r) for n, r in priced if n.startswith("a2-") and r not in OFFERED_REGIONS[n]}


@pytest.mark.django_db
def test_a_region_missing_from_the_feed_keeps_its_prices(settings):
    # The ingest marks a price missing only in regions the run covered: a region no record names
    # (here asia-northeast1, outside this run) keeps its prices, while the region filter above
    # never emits the A2 Ultra machines Google does not offer in us-west1.
    from catalog.models import Price
    from scrapers import services

    settings.SCRAPE_GONE_AFTER_RUNS = 1
    settings.SCRAPE_HOLD_BELOW_SHARE = 0

    class RecordedScraper(GcpScraper):
        def fetch(self, client):
            yield joined_catalog()

    elsewhere = Price.objects.filter(
        instance_type__provider__slug="gcp", region__code="asia-northeast1", gone_at__isnull=True
    )
    before = elsewhere.count()
    assert before
    run = services.provider_refresh(
        provider_slug="gcp",
        trigger="test",
        scraper=RecordedScraper(regions=["us-central1", "us-west1"]),
        client=HttpClient(retries=0),
    )
    assert run.status in ("success", "partial"), run.error
    assert elsewhere.count() == before
    assert not elsewhere.filter(missed_runs__gt=0).exists()
    assert not Price.objects.filter(
        instance_type__name__startswith="a2-ultragpu-", region__code="us-west1"
    ).exists()
    assert Price.objects.filter(
        instance_type__name="a2-highgpu-1g", region__code="us-west1", gone_at__isnull=True
    ).exists()
