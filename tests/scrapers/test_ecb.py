"""ECB reference rates: recorded daily XML, loopback fetch, faults."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from pathlib import Path

import pytest
import yaml

from scrapers.base import REGISTRY, FetchError, HttpClient, Page, ParseError
from scrapers.providers.ecb import EcbRates, RateRecord, parse_rates
from tests.scrapers.loopback import LoopbackServer, quiet_client, timing_out

PAGES = Path(__file__).resolve().parent / "pages" / "ecb"
DAILY = "/stats/eurofxref/eurofxref-daily.xml"
FIXTURE_RATES = Path(__file__).resolve().parents[2] / "fixtures" / "currency_rates.yaml"


def recorded(body: str | None = None) -> Page:
    text = (PAGES / "eurofxref-daily.xml").read_text() if body is None else body
    return Page(url="file:///eurofxref-daily.xml", status=200, body=text)


def test_not_a_price_scraper():
    assert "ecb" not in REGISTRY


def test_rates_in_usd():
    rates = {r.currency: r for r in parse_rates(recorded())}
    assert len(rates) == 10  # the nine listed (USD among them) plus EUR
    assert rates["USD"] == RateRecord("USD", Decimal(1), date(2025, 2, 28))
    assert rates["EUR"].usd_per_unit == Decimal("1.0411")  # USD per EUR
    assert rates["GBP"].usd_per_unit == Decimal("1.2602895603")  # 1.0411 / 0.82608
    assert rates["JPY"].usd_per_unit == Decimal("0.0066329001")
    assert {r.as_of for r in rates.values()} == {date(2025, 2, 28)}


def test_matches_the_curated_fixture():
    """The recording is the ECB day behind fixtures/currency_rates.yaml; figures agree exactly."""
    curated = {
        row["currency"]: Decimal(str(row["usd_per_unit"]))
        for row in yaml.safe_load(FIXTURE_RATES.read_text())
    }
    parsed = {r.currency: r.usd_per_unit for r in parse_rates(recorded())}
    assert parsed == curated


def test_fetch_through_loopback():
    with LoopbackServer() as srv:
        source = EcbRates(base_url=srv.base_url("ecb"))
        with HttpClient(retries=0, timeout_s=5) as client:
            page = source.fetch(client)
    assert page.url.endswith(DAILY) and page.status == 200
    assert len(source.parse_rates(page)) == 10


def test_server_error_raises_fetch_error_after_retries():
    with LoopbackServer() as srv:
        srv.override("ecb", DAILY, status=502, body="bad gateway", content_type="text/plain")
        client = quiet_client(timeout_s=5)
        with client, pytest.raises(FetchError, match="HTTP 502"):
            EcbRates(base_url=srv.base_url("ecb")).fetch(client)


def test_timeout_raises_fetch_error():
    with (
        quiet_client(transport=timing_out()) as client,
        pytest.raises(FetchError, match="ReadTimeout"),
    ):
        EcbRates().fetch(client)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ((PAGES / "eurofxref-daily.xml").read_text()[:400], "invalid XML"),
        ("<!DOCTYPE html><html><body>Maintenance</body></html>", "DOCTYPE"),
        ('{"rates": {"USD": 1.04}}', "expected XML"),
        (
            (PAGES / "eurofxref-daily.xml").read_text().replace("currency='USD'", "currency='XUS'"),
            "no USD",
        ),
        (
            (PAGES / "eurofxref-daily.xml").read_text().replace("rate='0.82608'", "rate='n/a'"),
            "not a number",
        ),
        (
            (PAGES / "eurofxref-daily.xml").read_text().replace("rate='156.96'", "rate='0'"),
            "not positive",
        ),
        (
            (PAGES / "eurofxref-daily.xml")
            .read_text()
            .replace("time='2025-02-28'", "date='2025-02-28'"),
            "dated Cube",
        ),
        (
            (PAGES / "eurofxref-daily.xml")
            .read_text()
            .replace(" rate='1.4037'", " value='1.4037'"),
            "lacks",
        ),
    ],
    ids=[
        "truncated",
        "html",
        "json",
        "no-usd",
        "rate-text",
        "rate-zero",
        "renamed-time",
        "renamed-rate",
    ],
)
def test_faulty_files_raise_parse_error(body, message):
    with pytest.raises(ParseError, match=message):
        parse_rates(recorded(body))
