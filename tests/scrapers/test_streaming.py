"""Large sources in bounded memory: spooled fetches, page-at-a-time parsing, the streaming AWS parse."""

from __future__ import annotations

import copy
import gzip
import json
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from catalog.models import ScrapeRun
from scrapers import base, services
from scrapers.base import FetchError, HttpClient, Page, PriceRecord, Scraper, parse_pages
from scrapers.providers import aws
from scrapers.providers.aws import AwsScraper
from tests.factories import ProviderFactory
from tests.scrapers.loopback import LoopbackServer

AWS = Path(__file__).resolve().parent / "pages" / "aws"


def _client(handler) -> HttpClient:
    return HttpClient(retries=2, sleep=lambda _: None, transport=httpx.MockTransport(handler))


# --- spooled fetches -----------------------------------------------------------------------
def test_spooled_get_keeps_the_decoded_body_in_a_temporary_file(monkeypatch):
    monkeypatch.setattr(base, "SPOOL_IN_MEMORY_BYTES", 1024)  # so this body goes to disk
    body = json.dumps({"rows": list(range(5000))}).encode()

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            200, content=gzip.compress(body), headers={"Content-Encoding": "gzip"}
        )

    with _client(handler) as client:
        page = client.get("https://example.test/big.json", spool=True, meta={"kind": "x"})
    assert page.body == "" and page.spool is not None and page.meta == {"kind": "x"}
    assert page.open().read() == body
    assert page.open().read() == body  # open() rewinds: a parser may read it several times
    page.close()
    assert page.spool.closed


def test_spooled_get_retries_server_errors_and_fails_like_a_plain_get():
    answers = iter([httpx.Response(503), httpx.Response(200, content=b'{"ok": 1}')])
    with _client(lambda request: next(answers)) as client:
        page = client.get("https://example.test/a.json", spool=True)
    assert page.open().read() == b'{"ok": 1}'

    with (
        _client(lambda request: httpx.Response(500)) as client,
        pytest.raises(FetchError, match="HTTP 500"),
    ):
        client.get("https://example.test/a.json", spool=True)


def test_a_plain_page_opens_as_its_utf8_bytes():
    page = Page(url="x", status=200, body='{"name": "上海"}')
    assert page.open().read() == '{"name": "上海"}'.encode()
    page.close()  # nothing to free


# --- one page at a time ----------------------------------------------------------------------
class _Steps(Scraper):
    """Three pages; fetch and parse write what they do into ``steps``."""

    key = "steps"
    provider_slug = "steps"
    base_url = "http://127.0.0.1:9"

    def __init__(self) -> None:
        super().__init__()
        self.steps: list[str] = []
        self.pages: list[Page] = []

    def fetch(self, client: HttpClient) -> Iterator[Page]:
        for number in (1, 2, 3):
            self.steps.append(f"fetch {number}")
            spool = base.tempfile.SpooledTemporaryFile()
            spool.write(b"[]")
            page = Page(url=f"{self.base_url}/{number}", status=200, body="", spool=spool)
            self.pages.append(page)
            yield page

    def parse(self, page: Page) -> list[PriceRecord]:
        self.steps.append(f"parse {page.url[-1]}")
        assert json.loads(page.open().read()) == []
        return []


def test_parse_pages_parses_each_page_before_the_next_is_fetched_and_closes_it():
    scraper = _Steps()
    result = parse_pages(scraper, scraper.fetch(HttpClient()))
    assert scraper.steps == ["fetch 1", "parse 1", "fetch 2", "parse 2", "fetch 3", "parse 3"]
    assert result.pages == 3
    assert all(page.spool.closed for page in scraper.pages)


@pytest.mark.django_db
def test_a_refresh_does_not_hold_the_pages_of_a_source():
    ProviderFactory(slug="steps", scraper_key="steps")
    scraper = _Steps()
    run = services.provider_refresh(
        provider_slug="steps", trigger="test", scraper=scraper, client=HttpClient(retries=0)
    )
    assert scraper.steps == ["fetch 1", "parse 1", "fetch 2", "parse 2", "fetch 3", "parse 3"]
    assert ScrapeRun.objects.get(pk=run.pk).pages == 3


# --- the AWS offer file, streaming ----------------------------------------------------------
def _offer() -> dict:
    return json.loads((AWS / "us-east-1.json").read_text())


def _records(data: dict, tmp_path: Path, name: str = "offer.json") -> list[PriceRecord]:
    """Parse ``data`` as a spooled page backed by a file on disk (as a fetch leaves it)."""
    path = tmp_path / name
    path.write_text(json.dumps(data, indent=2, separators=(",", " : ")))
    with path.open("rb") as fh:
        page = Page(url="x", status=200, body="", meta={"region": "us-east-1"}, spool=fh)
        return AwsScraper().parse(page)


def test_offer_file_is_fetched_spooled_and_parses_as_the_recorded_page():
    with LoopbackServer() as srv:
        scraper = AwsScraper(base_url=srv.base_url("aws"), regions=["us-east-1"])
        with HttpClient(retries=0, timeout_s=5) as client:
            [fetched] = list(scraper.fetch(client))
    assert fetched.spool is not None and fetched.body == ""
    recorded = Page(url="x", status=200, body=(AWS / "us-east-1.json").read_text())
    assert AwsScraper().parse(fetched) == AwsScraper().parse(recorded)
    assert len(AwsScraper().parse(fetched)) == 23


def test_offer_members_in_another_order_give_the_same_records(tmp_path):
    data = _offer()
    expected = _records(data, tmp_path, "as-aws.json")
    reordered = {
        "terms": {"Reserved": data["terms"]["Reserved"], "OnDemand": data["terms"]["OnDemand"]},
        "products": data["products"],
        "offerCode": data["offerCode"],
    }
    assert _records(reordered, tmp_path, "reordered.json") == expected
    assert len(expected) == 23


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d.update(products=[]), "products"),
        (lambda d: d.pop("terms"), "terms"),
        (lambda d: d["terms"].update(Reserved=["x"]), "Reserved"),
        (lambda d: d.clear(), "AmazonEC2"),
    ],
    ids=["products-list", "no-terms", "reserved-list", "empty"],
)
def test_offer_structure_errors_are_parse_errors(tmp_path, mutate, message):
    data = _offer()
    mutate(data)
    with pytest.raises(base.ParseError, match=message):
        _records(data, tmp_path)


def test_offer_without_reservations_is_fine(tmp_path):
    data = _offer()
    data["terms"].pop("Reserved")
    assert {r.pricing_model for r in _records(data, tmp_path)} == {"on_demand"}


def test_offer_parse_memory_does_not_grow_with_the_file(tmp_path, monkeypatch):
    """An offer file of ~3 MB (the recorded one plus 300 non-GPU products with their terms),
    read 16 KiB at a time, parses holding a small part of it: json.loads needs several times
    its size. (bench/aws_stream.py measures a 500 MB file.)"""
    monkeypatch.setattr(aws, "READ_CHUNK", 16 * 1024)
    data = _offer()
    template_sku = next(
        sku
        for sku, p in data["products"].items()
        if p["attributes"].get("instanceType") == "m5.large"
    )
    for number in range(300):
        sku = f"BENCH{number:011d}"
        product = copy.deepcopy(data["products"][template_sku])
        product["sku"] = sku
        data["products"][sku] = product
        terms = json.loads(
            json.dumps(data["terms"]["OnDemand"][template_sku]).replace(template_sku, sku)
        )
        data["terms"]["OnDemand"][sku] = terms
        reserved = json.loads(
            json.dumps(data["terms"]["Reserved"][next(iter(data["terms"]["Reserved"]))])
        )
        data["terms"]["Reserved"][sku] = reserved
    path = tmp_path / "large.json"
    path.write_text(json.dumps(data, indent=2, separators=(",", " : ")))
    del data
    size = path.stat().st_size
    assert size > 2_500_000
    with path.open("rb") as fh:
        page = Page(url="x", status=200, body="", meta={"region": "us-east-1"}, spool=fh)
        tracemalloc.start()
        try:
            records = AwsScraper().parse(page)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert len(records) == 23
    assert peak < size / 8, f"peak {peak:,} bytes for a {size:,}-byte file"
