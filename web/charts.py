"""Server-rendered SVG charts: a scatter, a stacked bar and step lines. Pure Python, no Django.

Every chart is an ``<svg role="img">`` sized by its viewBox (so it scales to a phone's width),
with a ``<title>`` and ``<desc>`` for screen readers and a ``<title>`` on each mark as a tooltip.
All text is escaped here; callers pass plain (already translated) strings.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from html import escape
from itertools import count

# Okabe & Ito (2008) colour-blind-safe palette, then three of Tol's muted colours for more series.
PALETTE = (
    "#0072B2",
    "#D55E00",
    "#009E73",
    "#CC79A7",
    "#E69F00",
    "#56B4E9",
    "#000000",
    "#882255",
    "#44AA99",
    "#999933",
    "#6F6F6F",
)
# A log axis is used once the data span more than this ratio (max / min).
LOG_RATIO = 30.0

WIDTH, HEIGHT = 720, 420
# The phone rendering: drawn at about a phone's width, so 12-unit text stays about 12 px there
# (a 720-unit chart shrunk to 370 px would draw it at 6 px).
NARROW_WIDTH, NARROW_HEIGHT = 360, 380
NARROW_TICKS = 5


def _size(narrow: bool) -> tuple[int, int]:
    return (NARROW_WIDTH, NARROW_HEIGHT) if narrow else (WIDTH, HEIGHT)


MARGIN_LEFT, MARGIN_RIGHT, MARGIN_TOP, MARGIN_BOTTOM = 78, 20, 16, 58

_ids = count(1)


def _uid(prefix: str) -> str:
    """A document-unique id for aria-labelledby (several charts may share a page)."""
    return f"{prefix}-{next(_ids)}"


def _fmt(value: float) -> str:
    """A short tick label: 0.5, 2, 10, 1.5k, 2M."""
    magnitude = abs(value)
    if magnitude >= 1e6:
        text = f"{value / 1e6:g}M"
    elif magnitude >= 1e4:
        text = f"{value / 1e3:g}k"
    elif magnitude >= 100 or value == int(value):
        text = f"{value:,.0f}"
    elif magnitude >= 1:
        text = f"{value:.1f}".rstrip("0").rstrip(".")
    else:
        text = f"{value:.2g}"
    return text


@dataclass(frozen=True)
class Scale:
    """Maps data values onto pixels along one axis, linear or base-10 logarithmic."""

    low: float
    high: float
    pixel_low: float
    pixel_high: float
    log: bool = False
    # Most tick labels the axis has room for (a log axis then keeps only powers of ten).
    max_ticks: int = 12

    def __call__(self, value: float) -> float:
        if self.log:
            value, low, high = math.log10(value), math.log10(self.low), math.log10(self.high)
        else:
            low, high = self.low, self.high
        fraction = 0.5 if high == low else (value - low) / (high - low)
        return self.pixel_low + fraction * (self.pixel_high - self.pixel_low)

    def ticks(self) -> list[float]:
        if not self.log:
            return linear_ticks(self.low, self.high, target=min(5, self.max_ticks))
        ticks = log_ticks(self.low, self.high)
        if len(ticks) > self.max_ticks:
            ticks = [t for t in ticks if math.isclose(math.log10(t), round(math.log10(t)))]
        return ticks


def nice_step(span: float, target: int = 5) -> float:
    """A 1, 2 or 5 x 10^n step giving about ``target`` intervals over ``span``."""
    if span <= 0:
        return 1.0
    raw = span / target
    power = 10 ** math.floor(math.log10(raw))
    for multiple in (1, 2, 5, 10):
        if raw <= multiple * power:
            return multiple * power
    return 10 * power


def linear_ticks(low: float, high: float, target: int = 5) -> list[float]:
    """Round tick values covering [low, high]."""
    step = nice_step(high - low, target)
    first = math.ceil(low / step - 1e-9) * step
    ticks = []
    value = first
    while value <= high + step * 1e-9:
        ticks.append(round(value, 10))
        value += step
    return ticks


def log_ticks(low: float, high: float) -> list[float]:
    """1, 2, 5 x 10^n ticks inside [low, high]; only powers of ten when the range is wide."""
    decades = math.log10(high) - math.log10(low)
    multiples = (1,) if decades > 4 else (1, 2, 5)
    ticks = []
    for power in range(math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1):
        for multiple in multiples:
            value = multiple * 10.0**power
            if low * (1 - 1e-9) <= value <= high * (1 + 1e-9):
                ticks.append(value)
    return ticks


def _padded_range(values: Sequence[float], log: bool) -> tuple[float, float]:
    low, high = min(values), max(values)
    if log:
        return low / 1.25, high * 1.25
    if low == high:
        return (0.0, high * 2 or 1.0) if low >= 0 else (low * 2, 0.0)
    pad = (high - low) * 0.06
    low = 0.0 if low >= 0 and low - pad < 0 else low - pad
    return low, high + pad


def wants_log(values: Sequence[float]) -> bool:
    """True when the values are all positive and span more than LOG_RATIO."""
    positive = [v for v in values if v > 0]
    return (
        len(positive) == len(values)
        and bool(positive)
        and max(positive) / min(positive) > LOG_RATIO
    )


def _svg_open(
    title: str, desc: str, *, width: int = WIDTH, height: int = HEIGHT, css_class: str = "chart"
) -> str:
    title_id, desc_id = _uid("chart-title"), _uid("chart-desc")
    return (
        f'<svg class="{css_class}" viewBox="0 0 {width} {height}" role="img" '
        f'aria-labelledby="{title_id} {desc_id}" xmlns="http://www.w3.org/2000/svg" '
        f'preserveAspectRatio="xMidYMid meet">'
        f'<title id="{title_id}">{escape(title)}</title><desc id="{desc_id}">{escape(desc)}</desc>'
    )


def _axes(
    x: Scale,
    y: Scale,
    *,
    x_label: str,
    y_label: str,
    x_ticks: list[tuple[float, str]] | None = None,
) -> list[str]:
    """Grid lines, tick labels and axis titles for a plot area."""
    parts = ['<g class="axes">']
    top, bottom = y.pixel_high, y.pixel_low
    left, right = x.pixel_low, x.pixel_high
    for value in y.ticks():
        py = y(value)
        parts.append(
            f'<line class="grid" x1="{left:.1f}" x2="{right:.1f}" y1="{py:.1f}" y2="{py:.1f}"/>'
            f'<text class="tick" x="{left - 6:.1f}" y="{py + 4:.1f}" text-anchor="end">'
            f"{escape(_fmt(value))}</text>"
        )
    for value, label in x_ticks or [(v, _fmt(v)) for v in x.ticks()]:
        px = x(value)
        parts.append(
            f'<line class="grid" x1="{px:.1f}" x2="{px:.1f}" y1="{top:.1f}" y2="{bottom:.1f}"/>'
            f'<text class="tick" x="{px:.1f}" y="{bottom + 18:.1f}" text-anchor="middle">'
            f"{escape(label)}</text>"
        )
    parts.append(
        f'<line class="axis" x1="{left:.1f}" x2="{right:.1f}" y1="{bottom:.1f}" y2="{bottom:.1f}"/>'
        f'<line class="axis" x1="{left:.1f}" x2="{left:.1f}" y1="{top:.1f}" y2="{bottom:.1f}"/>'
        f'<text class="axis-label" x="{(left + right) / 2:.1f}" y="{bottom + 42:.1f}" '
        f'text-anchor="middle">{escape(x_label)}</text>'
        f'<text class="axis-label" transform="translate(16 {(top + bottom) / 2:.1f}) rotate(-90)" '
        f'text-anchor="middle">{escape(y_label)}</text></g>'
    )
    return parts


# --- Scatter --------------------------------------------------------------------------------


@dataclass(frozen=True)
class ScatterPoint:
    """One candidate: x and y values, its group (colour) and its tooltip."""

    x: float
    y: float
    group: str
    label: str
    highlight: bool = False


def scatter_svg(
    points: Sequence[ScatterPoint],
    *,
    title: str,
    desc: str,
    x_label: str,
    y_label: str,
    log_note: str = "log scale",
    narrow: bool = False,
) -> str:
    """A scatter of ``points``, coloured by group, log axes where the range is wide.

    Points with a non-positive coordinate cannot sit on a log axis; they force a linear one.
    ``narrow`` draws it for a phone's width (same text size in pixels there).
    """
    width, height = _size(narrow)
    ticks = NARROW_TICKS if narrow else 12
    points = [p for p in points if math.isfinite(p.x) and math.isfinite(p.y)]
    if not points:
        return ""
    xs, ys = [p.x for p in points], [p.y for p in points]
    x_log, y_log = wants_log(xs), wants_log(ys)
    plot_bottom = height - MARGIN_BOTTOM
    x = Scale(
        *_padded_range(xs, x_log), MARGIN_LEFT, width - MARGIN_RIGHT, log=x_log, max_ticks=ticks
    )
    y = Scale(*_padded_range(ys, y_log), plot_bottom, MARGIN_TOP, log=y_log, max_ticks=ticks)
    x_title = f"{x_label} ({log_note})" if x_log else x_label
    y_title = f"{y_label} ({log_note})" if y_log else y_label
    groups = sorted({p.group for p in points})
    colour = {group: PALETTE[i % len(PALETTE)] for i, group in enumerate(groups)}
    parts = [
        _svg_open(title, desc, width=width, height=height),
        *_axes(x, y, x_label=x_title, y_label=y_title),
    ]
    parts.append('<g class="marks">')
    # Highlighted points last, so they are drawn on top.
    for point in sorted(points, key=lambda p: p.highlight):
        css = "point highlight" if point.highlight else "point"
        radius = 6 if point.highlight else 4
        parts.append(
            f'<circle class="{css}" cx="{x(point.x):.1f}" cy="{y(point.y):.1f}" r="{radius}" '
            f'fill="{colour[point.group]}"><title>{escape(point.label)}</title></circle>'
        )
    parts.append("</g></svg>")
    return "".join(parts) + legend_html([(g, colour[g]) for g in groups])


def legend_html(entries: Sequence[tuple[str, str]]) -> str:
    """A legend as an HTML list (wraps on narrow screens, unlike SVG text)."""
    items = "".join(
        f'<li><svg class="swatch" viewBox="0 0 10 10" aria-hidden="true"><rect width="10" '
        f'height="10" rx="2" fill="{colour}"/></svg>{escape(label)}</li>'
        for label, colour in entries
    )
    return f'<ul class="legend">{items}</ul>'


# --- Stacked bar ----------------------------------------------------------------------------


@dataclass(frozen=True)
class BarSegment:
    label: str
    value: float


def stacked_bar_svg(
    segments: Sequence[BarSegment],
    *,
    title: str,
    desc: str,
    unit: str,
    capacity: float | None = None,
    capacity_label: str = "",
    band: tuple[float, float] | None = None,
    band_label: str = "",
    narrow: bool = False,
) -> str:
    """One horizontal bar split into ``segments``, with an optional capacity marker and an
    optional range ``band`` (low, high): a bracket under the bar from low to high, labelled.

    Zero segments are left out; the scale runs to the largest of the total, the capacity and the
    band's high end.
    """
    shown = [s for s in segments if s.value > 0]
    total = sum(s.value for s in shown)
    if total <= 0:
        return ""
    height = 120 if band is None else 150
    width = _size(narrow)[0]
    left, right, top, bar_h = 20, width - 20, 30, 40
    scale_max = max(total, capacity or 0, band[1] if band else 0) * 1.04
    x = Scale(0, scale_max, left, right)
    parts = [_svg_open(title, desc, width=width, height=height, css_class="chart bar-chart")]
    position = 0.0
    entries = []
    for i, segment in enumerate(shown):
        colour = PALETTE[i % len(PALETTE)]
        x0, x1 = x(position), x(position + segment.value)
        label = f"{segment.label}: {segment.value:.2f} {unit}"
        parts.append(
            f'<rect class="segment" x="{x0:.1f}" y="{top}" width="{max(x1 - x0, 0.5):.1f}" '
            f'height="{bar_h}" fill="{colour}"><title>{escape(label)}</title></rect>'
        )
        entries.append((label, colour))
        position += segment.value
    if band is not None:
        # The range over the bar (a shaded span) and a bracket under it with its label.
        b0, b1 = x(band[0]), x(band[1])
        parts.append(
            f'<rect class="range-band" x="{b0:.1f}" y="{top - 4}" '
            f'width="{max(b1 - b0, 1):.1f}" height="{bar_h + 8}">'
            f"<title>{escape(band_label)}</title></rect>"
        )
        by = top + bar_h + 8
        parts.append(
            f'<path class="range-bracket" d="M{b0:.1f},{by - 4} V{by} H{b1:.1f} V{by - 4}"/>'
        )
        anchor = "end" if b1 > width * 0.75 else "start"
        parts.append(
            f'<text class="range-label" x="{(b1 if anchor == "end" else b0):.1f}" '
            f'y="{height - 6}" text-anchor="{anchor}">{escape(band_label)}</text>'
        )
    for value in linear_ticks(0, scale_max, target=3 if narrow else 5):
        parts.append(
            f'<text class="tick" x="{x(value):.1f}" y="{top + bar_h + 20}" '
            f'text-anchor="middle">{escape(_fmt(value))}</text>'
        )
    parts.append(
        f'<text class="tick" x="{right:.1f}" y="{top + bar_h + 38}" text-anchor="end">'
        f"{escape(unit)}</text>"
    )
    if capacity:
        cx = x(capacity)
        parts.append(
            f'<line class="capacity" x1="{cx:.1f}" x2="{cx:.1f}" y1="{top - 12}" '
            f'y2="{top + bar_h + 6}"/><text class="capacity-label" x="{cx:.1f}" y="{top - 16}" '
            f'text-anchor="{"end" if cx > width / 2 else "start"}">'
            f"{escape(capacity_label)}</text>"
        )
    parts.append("</svg>")
    return "".join(parts) + legend_html(entries)


# --- Step lines over time -------------------------------------------------------------------


@dataclass
class Series:
    """A named step line: the value holds from each point until the next; a None value ends the
    line at that moment (it starts again at the next value)."""

    name: str
    points: list[tuple[datetime, float | None]] = field(default_factory=list)


def _time_ticks(low: datetime, high: datetime) -> list[tuple[float, str]]:
    """Month or year ticks (as timestamps) with short labels, about six across."""
    months = (high.year - low.year) * 12 + high.month - low.month
    step = 1 if months <= 8 else 3 if months <= 24 else 6 if months <= 48 else 12
    index = -(-(low.year * 12 + low.month - 1) // step) * step  # first multiple of step
    ticks: list[tuple[float, str]] = []
    while True:
        year, month0 = divmod(index, 12)
        moment = datetime(year, month0 + 1, 1, tzinfo=UTC)
        if moment > high:
            return ticks
        if moment >= low:
            label = f"{year}" if step == 12 else f"{year}-{month0 + 1:02d}"
            ticks.append((moment.timestamp(), label))
        index += step


def step_lines_svg(
    series: Sequence[Series],
    *,
    title: str,
    desc: str,
    y_label: str,
    until: datetime,
    value_label: Callable[[float], str] = _fmt,
    narrow: bool = False,
) -> str:
    """Step lines, one per series, each held flat from its last point to ``until`` unless the
    series has ended (a last value of None)."""
    series = [s for s in series if any(v is not None for _, v in s.points)]
    if not series:
        return ""
    times = [t for s in series for t, _ in s.points] + [until]
    values = [v for s in series for _, v in s.points if v is not None]
    low_t, high_t = min(times), max(times)
    if low_t == high_t:
        low_t = datetime.fromtimestamp(low_t.timestamp() - 86400 * 30, tz=UTC)
    y_log = wants_log(values)
    width, height = _size(narrow)
    plot_bottom = height - MARGIN_BOTTOM
    x = Scale(low_t.timestamp(), high_t.timestamp(), MARGIN_LEFT, width - MARGIN_RIGHT - 6)
    y_low, y_high = _padded_range(values, y_log)
    y = Scale(
        y_low if y_log else min(y_low, 0.0),
        y_high,
        plot_bottom,
        MARGIN_TOP,
        log=y_log,
        max_ticks=NARROW_TICKS if narrow else 12,
    )
    time_ticks = _time_ticks(low_t, high_t)
    if narrow:
        time_ticks = time_ticks[:: max(1, math.ceil(len(time_ticks) / 3))]
    parts = [_svg_open(title, desc, width=width, height=height)]
    parts += _axes(x, y, x_label="", y_label=y_label, x_ticks=time_ticks)
    entries = []
    parts.append('<g class="marks">')
    for i, line in enumerate(series):
        colour = PALETTE[i % len(PALETTE)]
        entries.append((line.name, colour))
        points = sorted(line.points, key=lambda point: point[0])
        runs: list[list[str]] = []  # one polyline per stretch the series is listed
        previous: float | None = None
        for moment, value in points:
            px = x(moment.timestamp())
            if previous is not None:
                runs[-1].append(f"{px:.1f},{y(previous):.1f}")
            if value is not None:
                if previous is None:
                    runs.append([])
                runs[-1].append(f"{px:.1f},{y(value):.1f}")
            previous = value
        if previous is not None:
            runs[-1].append(f"{x(high_t.timestamp()):.1f},{y(previous):.1f}")
        for coords in runs:
            parts.append(
                f'<polyline class="line" fill="none" stroke="{colour}" '
                f'points="{" ".join(coords)}"><title>{escape(line.name)}</title></polyline>'
            )
        for moment, value in points:
            if value is None:
                continue
            tip = f"{line.name}: {value_label(value)} ({moment:%Y-%m-%d})"
            parts.append(
                f'<circle class="point" cx="{x(moment.timestamp()):.1f}" cy="{y(value):.1f}" '
                f'r="3.5" fill="{colour}"><title>{escape(tip)}</title></circle>'
            )
    parts.append("</g></svg>")
    return "".join(parts) + legend_html(entries)
