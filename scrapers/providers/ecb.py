"""ECB euro foreign exchange reference rates, turned into the USD value of one unit of each currency.

Source: ``https://www.ecb.europa.eu/stats/eurofxref/eurofxref-daily.xml`` (gesmes XML, no
authentication, published around 16:00 CET on TARGET working days). Rates are quoted as units of
currency per 1 EUR, so ``usd_per_unit(XXX) = (USD per EUR) / (XXX per EUR)``; EUR itself is worth
the USD rate and USD is 1. This is not a price scraper and is not registered with one.
docs/providers/ecb.md has the details.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from datetime import date
from decimal import Decimal, InvalidOperation

from scrapers.base import HttpClient, Page, ParseError

DAILY_PATH = "/stats/eurofxref/eurofxref-daily.xml"
EUROFXREF_NS = "http://www.ecb.int/vocabulary/2002-08-01/eurofxref"
# Same precision as fixtures/currency_rates.yaml.
USD_QUANTUM = Decimal("0.0000000001")
_CURRENCY = re.compile(r"^[A-Z]{3}$")


@dataclass(frozen=True)
class RateRecord:
    """The USD value of one unit of ``currency`` on the ECB reference day ``as_of``."""

    currency: str
    usd_per_unit: Decimal
    as_of: date


class EcbRates:
    """Fetches the ECB daily reference-rate file and converts it to USD per unit."""

    key = "ecb"
    base_url = "https://www.ecb.europa.eu"

    def __init__(self, *, base_url: str | None = None) -> None:
        self.base_url = (base_url or type(self).base_url).rstrip("/")

    def fetch(self, client: HttpClient) -> Page:
        """The daily XML file (one small document; the ECB publishes it once per working day)."""
        return client.get(self.base_url + DAILY_PATH, meta={"kind": "eurofxref-daily"})

    def parse_rates(self, page: Page) -> list[RateRecord]:
        """USD per unit for every listed currency plus EUR and USD; ParseError on anything odd."""
        return parse_rates(page)


def parse_rates(page: Page) -> list[RateRecord]:
    """Pure parser for the gesmes envelope: ``Cube/Cube[@time]/Cube[@currency][@rate]``."""
    body = page.body.strip()
    if not body.startswith("<"):
        raise ParseError("expected XML, got something else")
    if "<!DOCTYPE" in body[:2000].upper() or "<!ENTITY" in body.upper():
        # The real file has no DTD; refusing one keeps entity tricks out of the XML parser.
        raise ParseError("unexpected DOCTYPE/ENTITY in the ECB file (HTML page or not the ECB XML)")
    try:
        root = ET.fromstring(body)  # noqa: S314 - no DTD allowed (checked above); fixed ECB source
    except ET.ParseError as exc:
        raise ParseError(f"invalid XML: {exc}") from None
    days = root.findall(f".//{{{EUROFXREF_NS}}}Cube[@time]")
    if len(days) != 1:
        raise ParseError(f"expected one dated Cube, found {len(days)}")
    try:
        as_of = date.fromisoformat(days[0].get("time", ""))
    except ValueError:
        raise ParseError(f"Cube time is not a date: {days[0].get('time')!r}") from None

    per_eur: dict[str, Decimal] = {}
    for cube in days[0].findall(f"{{{EUROFXREF_NS}}}Cube"):
        currency, rate = cube.get("currency"), cube.get("rate")
        if currency is None or rate is None:
            raise ParseError("a rate Cube lacks 'currency' or 'rate'")
        if not _CURRENCY.match(currency):
            raise ParseError(f"not an ISO 4217 code: {currency!r}")
        try:
            value = Decimal(rate)
        except InvalidOperation:
            raise ParseError(f"rate of {currency} is not a number: {rate!r}") from None
        if not value.is_finite() or value <= 0:
            raise ParseError(f"rate of {currency} is not positive: {rate!r}")
        if currency in per_eur:
            raise ParseError(f"{currency} is listed twice")
        per_eur[currency] = value
    if "USD" not in per_eur:
        raise ParseError("the file has no USD rate, so nothing can be expressed in USD")

    usd_per_eur = per_eur["USD"]
    records = [
        RateRecord("USD", Decimal(1), as_of),
        RateRecord("EUR", usd_per_eur, as_of),
    ]
    for currency, eur_rate in per_eur.items():
        if currency in ("USD", "EUR"):
            continue
        records.append(RateRecord(currency, (usd_per_eur / eur_rate).quantize(USD_QUANTUM), as_of))
    return records
