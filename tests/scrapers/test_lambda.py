"""Lambda scraper: the pricing page and the Cloud API, their traps, and fetch faults."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from scrapers.base import FetchError, HttpClient, Page, ParseError
from scrapers.providers.lambda_cloud import LambdaScraper
from tests.scrapers.loopback import LoopbackServer, quiet_client, timing_out

PAGES = Path(__file__).resolve().parent / "pages" / "lambda"
HTML = (PAGES / "gpu-cloud.html").read_text(encoding="utf-8")
API = (PAGES / "instance-types.json").read_text(encoding="utf-8")


def html_page(body: str = HTML) -> Page:
    return Page(
        url="https://lambda.ai/service/gpu-cloud", status=200, body=body, meta={"format": "html"}
    )


def api_page(body: str = API) -> Page:
    return Page(
        url="https://cloud.lambda.ai/api/v1/instance-types",
        status=200,
        body=body,
        meta={"format": "api"},
    )


def by_key(records):
    return {(r.instance_type, r.region): r for r in records}


# --- pricing page --------------------------------------------------------------------------


def test_html_page_gives_every_priced_shape_in_its_regions():
    records = LambdaScraper().parse(html_page())
    assert len(records) == 42
    assert {r.pricing_model for r in records} == {"on_demand"}
    assert {r.currency for r in records} == {"USD"}
    assert {r.unit for r in records} == {"hour"}
    # 8x H100 is listed in three regions, at one price.
    h100 = [r for r in records if r.instance_type == "gpu_8x_h100_sxm5"]
    assert sorted(r.region for r in h100) == ["us-east-2", "us-south-1", "us-west-3"]
    assert {r.amount for r in h100} == {Decimal("31.92")}


def test_html_price_per_gpu_is_multiplied_by_the_tab_gpu_count():
    records = by_key(LambdaScraper().parse(html_page()))
    b200 = records[("gpu_8x_b200_sxm6", "us-midwest-2")]
    assert b200.amount == Decimal("53.52")  # $6.69 per GPU-hour x 8
    assert b200.gpu_count == Decimal(8)
    assert b200.extra["usd_per_gpu_hour"] == 6.69
    assert records[("gpu_4x_b200_sxm6", "us-midwest-2")].amount == Decimal("27.16")
    assert records[("gpu_8x_v100", "us-south-1")].amount == Decimal("6.32")
    assert b200.vcpus == 208 and b200.ram_gib == 2900.0


def test_html_a100_names_depend_on_memory_and_count():
    records = by_key(LambdaScraper().parse(html_page()))
    assert records[("gpu_8x_a100_80gb_sxm4", "us-east-1")].amount == Decimal("22.32")
    assert records[("gpu_8x_a100", "us-east-1")].gpu_name == "NVIDIA A100 SXM 40GB"
    assert records[("gpu_1x_a100_sxm4", "us-west-2")].amount == Decimal("1.99")
    assert records[("gpu_4x_a100", "us-south-1")].amount == Decimal("7.96")  # PCIe


def test_html_ignores_struck_old_price_cluster_table_and_unpriced_rows():
    records = LambdaScraper().parse(html_page())
    names = {r.instance_type for r in records}
    # <s>$4.49</s> $4.29: the struck price is the old one.
    assert {r.amount for r in records if r.instance_type == "gpu_1x_h100_sxm5"} == {Decimal("4.29")}
    # The 1-Click Clusters table ($9.86/GPU, reserved) is not an on-demand price.
    assert not any(r.extra.get("usd_per_gpu_hour") == 9.86 for r in records)
    # "Contact sales" row (B300) has no price: no record, no error.
    assert not any("b300" in name for name in names)


def test_html_duplicate_row_gives_one_record():
    records = LambdaScraper().parse(html_page())
    assert [r.region for r in records if r.instance_type == "gpu_1x_a6000"] == ["us-south-1"]


def test_html_new_shape_gets_a_derived_name_and_an_assumed_region():
    records = by_key(LambdaScraper().parse(html_page()))
    rtx = records[("gpu_1x_rtx6000", "us-east-1")]
    assert rtx.amount == Decimal("0.58")
    assert rtx.gpu_name == "NVIDIA Quadro RTX 6000 24GB"
    assert rtx.extra["region_assumed"] is True
    assert (rtx.vcpus, rtx.ram_gib) == (14, 46.0)


def test_html_unknown_label_is_derived_not_dropped():
    body = HTML.replace("NVIDIA GH200", "NVIDIA GH300")
    records = [
        r for r in LambdaScraper().parse(html_page(body)) if r.instance_type == "gpu_1x_gh300"
    ]
    assert len(records) == 1
    assert records[0].extra["name_derived"] is True


def test_html_without_instances_section_is_a_parse_error():
    body = HTML.replace("Instances pricing", "Our offer")
    with pytest.raises(ParseError, match="Instances pricing"):
        LambdaScraper().parse(html_page(body))


def test_html_table_outside_tabs_is_a_parse_error():
    body = HTML.replace('role="tabpanel"', 'role="region"')
    with pytest.raises(ParseError, match="tab"):
        LambdaScraper().parse(html_page(body))


def test_html_renamed_price_column_is_a_parse_error():
    body = HTML.replace('data-label="PRICE/GPU/HR*"', 'data-label="COST"').replace(
        "PRICE/GPU/HR*", "COST"
    )
    with pytest.raises(ParseError, match="price column"):
        LambdaScraper().parse(html_page(body))


# --- Cloud API -----------------------------------------------------------------------------


def test_api_price_is_in_cents_for_the_whole_instance():
    records = by_key(LambdaScraper().parse(api_page()))
    h100 = records[("gpu_8x_h100_sxm5", "us-east-2")]
    assert h100.amount == Decimal("31.92")  # 3192 cents
    assert h100.extra["price_cents_per_hour"] == 3192
    assert h100.gpu_name == "H100 (80 GB SXM5)"
    assert h100.gpu_count == Decimal(8)
    assert (h100.vcpus, h100.ram_gib) == (208, 1800.0)
    assert records[("gpu_1x_a10", "us-west-1")].amount == Decimal("1.29")


def test_api_sold_out_type_keeps_its_usual_regions():
    records = LambdaScraper().parse(api_page())
    b200 = [r for r in records if r.instance_type == "gpu_8x_b200_sxm6"]
    assert [(r.region, r.extra["capacity_available"]) for r in b200] == [("us-midwest-2", False)]


def test_api_capacity_region_outside_the_usual_list_is_added():
    records = by_key(LambdaScraper().parse(api_page()))
    assert records[("gpu_1x_a10", "us-south-2")].extra["capacity_available"] is True
    assert records[("gpu_1x_a10", "us-east-1")].extra["capacity_available"] is False
    assert records[("gpu_1x_rtx6000", "us-south-1")].amount == Decimal("0.58")
    assert len(records) == 43


def test_api_and_html_agree_on_prices():
    html = {k: r.amount for k, r in by_key(LambdaScraper().parse(html_page())).items()}
    api = {k: r.amount for k, r in by_key(LambdaScraper().parse(api_page())).items()}
    shared = set(html) & set(api)
    assert len(shared) == 41
    assert all(html[k] == api[k] for k in shared)


def test_api_error_envelope_is_a_parse_error():
    body = (PAGES / "instance-types-error.json").read_text(encoding="utf-8")
    with pytest.raises(ParseError, match="invalid-api-key"):
        LambdaScraper().parse(api_page(body))


def test_api_renamed_field_is_a_parse_error():
    body = API.replace('"price_cents_per_hour"', '"price_usd_per_hour"')
    with pytest.raises(ParseError, match="price_cents_per_hour"):
        LambdaScraper().parse(api_page(body))


def test_api_truncated_json_is_a_parse_error():
    with pytest.raises(ParseError, match="not JSON"):
        LambdaScraper().parse(api_page(API[: len(API) // 2]))


def test_api_html_instead_of_json_is_a_parse_error():
    with pytest.raises(ParseError, match="not JSON"):
        LambdaScraper().parse(api_page("<html><body>Service unavailable</body></html>"))


def test_parse_sniffs_the_format_without_meta():
    page = Page(url="file://instance-types.json", status=200, body=API)
    assert len(LambdaScraper().parse(page)) == 43
    json.loads(API)  # the recorded page itself is valid JSON


def test_records_serialise_to_json():
    for record in LambdaScraper().parse(api_page()) + LambdaScraper().parse(html_page()):
        json.dumps(record.as_json())


# --- fetch through the loopback server -----------------------------------------------------


def test_fetch_without_key_reads_the_public_page():
    with LoopbackServer() as srv:
        scraper = LambdaScraper(base_url=srv.base_url("lambda"))
        with HttpClient(retries=0, timeout_s=5) as client:
            pages = list(scraper.fetch(client))
    assert len(pages) == 1
    assert pages[0].meta == {"format": "html"}
    assert pages[0].url.endswith("/lambda/service/gpu-cloud")
    assert len(scraper.parse(pages[0])) == 42


def test_fetch_with_key_reads_the_api_on_the_same_mount():
    with LoopbackServer() as srv:
        scraper = LambdaScraper(
            base_url=srv.base_url("lambda"), credentials={"lambda_api_key": "secret_x"}
        )
        with HttpClient(retries=0, timeout_s=5) as client:
            pages = list(scraper.fetch(client))
    assert pages[0].meta == {"format": "api"}
    records = scraper.parse(pages[0])
    assert len(records) == 43
    assert all("secret" not in json.dumps(r.as_json()) for r in records)


def test_default_urls_point_at_lambda():
    scraper = LambdaScraper()
    assert scraper.base_url == "https://lambda.ai"
    assert scraper.api_base == "https://cloud.lambda.ai"
    assert scraper.pricing_models() == frozenset({"on_demand"})


def test_blank_key_falls_back_to_the_page():
    with LoopbackServer() as srv:
        scraper = LambdaScraper(base_url=srv.base_url("lambda"), credentials={"lambda_api_key": ""})
        with HttpClient(retries=0, timeout_s=5) as client:
            assert next(scraper.fetch(client)).meta == {"format": "html"}


def test_fetch_500_is_a_fetch_error_after_retries():
    with LoopbackServer() as srv:
        srv.override(
            "lambda", "/service/gpu-cloud", status=500, body="oops", content_type="text/plain"
        )
        scraper = LambdaScraper(base_url=srv.base_url("lambda"))
        with (
            quiet_client() as client,
            pytest.raises(FetchError, match="HTTP 500"),
        ):
            list(scraper.fetch(client))


def test_fetch_401_with_bad_key_is_a_fetch_error():
    with LoopbackServer() as srv:
        error = (PAGES / "instance-types-error.json").read_text(encoding="utf-8")
        srv.override("lambda", "/api/v1/instance-types", status=401, body=error)
        scraper = LambdaScraper(
            base_url=srv.base_url("lambda"), credentials={"lambda_api_key": "bad"}
        )
        with (
            quiet_client() as client,
            pytest.raises(FetchError, match="HTTP 401"),
        ):
            list(scraper.fetch(client))


def test_fetch_timeout_is_a_fetch_error():
    sleeps: list[float] = []
    scraper = LambdaScraper()
    with (
        HttpClient(retries=2, backoff_s=0.5, sleep=sleeps.append, transport=timing_out()) as client,
        pytest.raises(FetchError, match="ReadTimeout"),
    ):
        list(scraper.fetch(client))
    assert len(sleeps) == 2  # backed off between the three attempts


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        ('{"data": {"gpu_1x_a10": {"instance_type": {"name": "gpu_1x_a1', "application/json"),
        ("<!DOCTYPE html><html><body>Just a moment...</body></html>", "text/html"),
        ('{"data": {"gpu_1x_a10": {"instance_type": {"name": "gpu_1x_a10"}}}}', "application/json"),
    ],
    ids=["truncated-json", "html-instead-of-json", "renamed-fields"],
)
def test_fetched_bad_api_body_is_a_parse_error(body, content_type):
    with LoopbackServer() as srv:
        srv.override("lambda", "/api/v1/instance-types", body=body, content_type=content_type)
        scraper = LambdaScraper(
            base_url=srv.base_url("lambda"), credentials={"lambda_api_key": "k"}
        )
        with HttpClient(retries=0, timeout_s=5) as client:
            pages = list(scraper.fetch(client))
        with pytest.raises(ParseError):
            scraper.parse(pages[0])


def test_fetched_page_without_tables_is_a_parse_error():
    with LoopbackServer() as srv:
        srv.override(
            "lambda",
            "/service/gpu-cloud",
            body="<html><h2>Instances pricing</h2></html>",
            content_type="text/html",
        )
        scraper = LambdaScraper(base_url=srv.base_url("lambda"))
        with HttpClient(retries=0, timeout_s=5) as client:
            pages = list(scraper.fetch(client))
        with pytest.raises(ParseError, match="no pricing table"):
            scraper.parse(pages[0])


def test_html_truncated_between_tabs_is_a_parse_error():
    body = HTML[: HTML.index('id="panel-1x"')]  # the 8x/4x/2x tabs arrived whole
    with pytest.raises(ParseError, match="truncated"):
        LambdaScraper().parse(html_page(body))
