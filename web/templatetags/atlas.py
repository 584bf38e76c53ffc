"""Template filters for numbers with their units, and translated names of stored codes."""

from __future__ import annotations

from decimal import Decimal

from django import template
from django.utils.timesince import timesince
from django.utils.translation import gettext as _

from catalog.choices import HOURS_PER_UNIT
from sizing.numbers import large

from .. import labels

register = template.Library()

DASH = "\u2014"
EN_DASH = "\u2013"  # between the ends of a range
Number = float | int | Decimal | None


def _grouped(value: float, places: int) -> str:
    return f"{value:,.{places}f}"


@register.filter
def usd(value: Number) -> str:
    """$1,234.56; three decimals under a dollar ($0.404), where cents matter per GPU-hour."""
    if value is None or value == "":
        return DASH
    number = float(value)
    return "$" + _grouped(number, 2 if abs(number) >= 1 or number == 0 else 3)


@register.filter
def age(value) -> str:
    """How long ago, in its largest unit only ("11 months", not "11 months, 3 weeks"): the
    Observed column stays narrow enough for the sorted column beside it at 1366 px."""
    if not value:
        return ""
    return timesince(value, depth=1)


@register.filter
def num(value: Number, places: int = 0) -> str:
    """A number with thousands separators and ``places`` decimals; trailing zeros dropped."""
    if value is None or value == "":
        return DASH
    text = _grouped(float(value), int(places))
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


@register.filter
def gib(value: Number) -> str:
    """Memory in GiB: 34.8 GiB."""
    return DASH if value is None else f"{num(value, 1)} GiB"


def _span(values: list | tuple | None, fmt) -> str | None:
    if not values or len(values) != 2 or values[0] is None or values[1] is None:
        return None
    return fmt(values[0], values[1])


def _unit_range(values: list | tuple | None, unit: str) -> str:
    """low-high unit, one decimal under 10."""

    def fmt(low: float, high: float) -> str:
        places = 1 if high < 10 else 0
        return f"{num(low, places)}{EN_DASH}{num(high, places)} {unit}"

    return _span(values, fmt) or DASH


@register.filter
def gib_range(values: list | tuple | None) -> str:
    """A memory range: 38-46 GiB (one decimal under 10 GiB)."""
    return _unit_range(values, "GiB")


@register.filter
def hours_range(values: list | tuple | None) -> str:
    """A time range: 12-15 h."""
    return _unit_range(values, "h")


@register.filter
def usd_range(values: list | tuple | None) -> str:
    """A cost range: $1,200-1,500."""
    return _span(values, lambda low, high: f"{usd(low)}{EN_DASH}{usd(high)}") or DASH


@register.filter
def hours(value: Number) -> str:
    """A duration in hours, with days added past two days: 9.98 h, 120 h (5.0 d)."""
    if value is None:
        return DASH
    number = float(value)
    text = f"{num(number, 2 if number < 10 else 1)} h"
    if number >= 48:
        text += " " + _("(%(days)s d)") % {"days": num(number / 24, 1)}
    return text


@register.filter
def sci(value: Number) -> str:
    """Large counts as a reader writes them: 6.65 x 10^18 written with the multiplication sign and superscripts (not 6.65e+18); under a million, grouped."""
    if value is None or value == "":
        return DASH
    number = float(value)
    if abs(number) < 1e6:
        return num(number, 2)
    return large(number)


@register.filter
def pct(value: Number) -> str:
    return DASH if value is None else f"{num(value, 1)}%"


LABEL_SETS = {
    "pricing": labels.PRICING_MODELS,
    "objective": labels.OBJECTIVES,
    "segment": labels.SEGMENTS,
    "provider_kind": labels.PROVIDER_KINDS,
    "status": labels.SCRAPE_STATUS,
    "sharing": labels.GPU_SHARING,
    "billing": labels.BILLING,
    "unit": labels.PRICE_UNITS,
    "task": labels.TASKS,
    "method": labels.METHODS,
}


@register.filter
def label(code: str | None, kind: str) -> str:
    """The translated name of a stored code: ``{{ price.pricing_model|label:"pricing" }}``."""
    return labels.label(LABEL_SETS[kind], code)


# Symbols of the currencies providers list in; others show their ISO code.
CURRENCY_SYMBOLS = {"USD": "$", "CNY": "¥", "EUR": "€", "GBP": "£", "JPY": "JP¥", "KRW": "₩"}


def native_usd(usd: Number, native: tuple[str, float] | None) -> str:
    """A USD figure in the provider's own currency (¥12.34), for a provider from
    ``selectors.provider_native_rates``; empty for USD providers or a missing figure."""
    if usd is None or usd == "" or native is None:
        return ""
    currency, usd_per_unit = native
    return _money(float(usd) / usd_per_unit, currency)


def _money(amount: float, currency: str) -> str:
    symbol = CURRENCY_SYMBOLS.get(currency)
    places = 2 if abs(amount) >= 1 or amount == 0 else 3
    figure = _grouped(amount, places)
    return f"{symbol}{figure}" if symbol else f"{figure} {currency}"


@register.simple_tag
def price_usd(price, basis) -> str:
    """A price in USD on the page's basis: per GPU or instance, per hour or month (730 h)."""
    if price is None:
        return DASH
    value = float(price.usd_per_gpu_hour if basis.per_gpu else price.usd_per_hour)
    return usd(value * (HOURS_PER_UNIT["month"] if basis.per_month else 1))


@register.simple_tag
def price_native(price, basis) -> str:
    """The same price in the provider's own currency (empty for USD prices)."""
    if price is None or price.currency == "USD":
        return ""
    value = float(price.amount) / HOURS_PER_UNIT[price.unit]
    if basis.per_gpu:
        value /= float(price.instance_type.gpu_count)
    return _money(value * (HOURS_PER_UNIT["month"] if basis.per_month else 1), price.currency)
