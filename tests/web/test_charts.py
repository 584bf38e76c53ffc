"""The SVG chart builders: scales, ticks, escaping, empty input. Pure Python, no database."""

from __future__ import annotations

from datetime import UTC, datetime

from web import charts


def test_linear_ticks_are_round_and_cover_the_range():
    assert charts.linear_ticks(0, 10) == [0, 2, 4, 6, 8, 10]
    assert charts.linear_ticks(0.3, 0.9) == [0.4, 0.6, 0.8]


def test_log_ticks_use_1_2_5_or_decades_when_wide():
    assert charts.log_ticks(0.8, 60) == [1, 2, 5, 10, 20, 50]
    assert charts.log_ticks(0.01, 1e6) == [0.01, 0.1, 1, 10, 100, 1000, 1e4, 1e5, 1e6]


def test_log_axis_only_for_wide_positive_ranges():
    assert charts.wants_log([1, 100])
    assert not charts.wants_log([1, 20])
    assert not charts.wants_log([0, 1000])  # zero cannot sit on a log axis


def test_scale_maps_ends_and_log_midpoint():
    linear = charts.Scale(0, 10, 100, 200)
    assert linear(0) == 100 and linear(10) == 200 and linear(5) == 150
    log = charts.Scale(1, 100, 0, 100, log=True)
    assert round(log(10), 6) == 50


def test_scatter_draws_every_point_with_a_tooltip_and_legend():
    points = [
        charts.ScatterPoint(1, 10, "spot", "a"),
        charts.ScatterPoint(100, 2000, "on_demand", "b", highlight=True),
    ]
    svg = charts.scatter_svg(points, title="T", desc="D", x_label="hours", y_label="USD")
    assert svg.count("<circle") == 2 and svg.count('class="point highlight"') == 1
    assert "hours (log scale)" in svg and "USD (log scale)" in svg
    assert 'role="img"' in svg and "<title" in svg and "<desc" in svg
    assert '<ul class="legend">' in svg and "spot" in svg


def test_chart_text_is_escaped():
    points = [charts.ScatterPoint(1, 1, "<b>", '<script>alert("x")</script>')]
    svg = charts.scatter_svg(points, title="<t>", desc="&", x_label="x", y_label="y")
    assert "<script>" not in svg and "&lt;script&gt;" in svg and "<b>" not in svg


def test_empty_input_draws_nothing():
    assert charts.scatter_svg([], title="", desc="", x_label="", y_label="") == ""
    assert charts.stacked_bar_svg([charts.BarSegment("w", 0)], title="", desc="", unit="GiB") == ""
    until = datetime(2026, 1, 1, tzinfo=UTC)
    assert (
        charts.step_lines_svg([charts.Series("a")], title="", desc="", y_label="", until=until)
        == ""
    )


def test_stacked_bar_skips_zero_segments_and_marks_capacity():
    svg = charts.stacked_bar_svg(
        [
            charts.BarSegment("weights", 15),
            charts.BarSegment("gradients", 0),
            charts.BarSegment("kv", 5),
        ],
        title="M",
        desc="d",
        unit="GiB",
        capacity=80,
        capacity_label="H100: 80 GiB",
    )
    assert svg.count('class="segment"') == 2 and "gradients" not in svg
    assert 'class="capacity"' in svg and "H100: 80 GiB" in svg


def test_step_lines_hold_each_value_until_the_next_point():
    start = datetime(2025, 1, 1, tzinfo=UTC)
    later = datetime(2025, 6, 1, tzinfo=UTC)
    until = datetime(2026, 1, 1, tzinfo=UTC)
    svg = charts.step_lines_svg(
        [charts.Series("aws", [(start, 2.0), (later, 1.0)]), charts.Series("gcp", [(later, 3.0)])],
        title="H",
        desc="d",
        y_label="USD per GPU-hour",
        until=until,
    )
    assert svg.count("<polyline") == 2
    aws = svg.split('points="')[1].split('"')[0].split()
    # start, then a horizontal step to June, the drop, and the flat run to `until`.
    assert len(aws) == 4
    assert aws[0].split(",")[1] == aws[1].split(",")[1]
    assert aws[1].split(",")[0] == aws[2].split(",")[0]
    assert "2025-07" in svg or "2025-04" in svg  # month ticks


def test_a_series_that_ended_is_not_drawn_on_to_today():
    start = datetime(2025, 1, 1, tzinfo=UTC)
    gone = datetime(2025, 6, 1, tzinfo=UTC)
    back = datetime(2025, 9, 1, tzinfo=UTC)
    until = datetime(2026, 1, 1, tzinfo=UTC)

    def drawn(points):
        svg = charts.step_lines_svg(
            [charts.Series("aws", points)], title="H", desc="d", y_label="$", until=until
        )
        runs = [part.split('"')[0].split() for part in svg.split('points="')[1:]]
        return svg, runs

    svg, runs = drawn([(start, 2.0), (gone, None)])
    assert len(runs) == 1 and len(runs[0]) == 2  # start, then flat to June: not to `until`
    assert runs[0][0].split(",")[1] == runs[0][1].split(",")[1]
    svg, runs = drawn([(start, 2.0), (gone, None), (back, 1.5)])
    assert len(runs) == 2 and len(runs[1]) == 2  # listed again from September to `until`
    assert svg.count('class="point"') == 2


def test_ids_are_unique_across_charts():
    one = charts.scatter_svg(
        [charts.ScatterPoint(1, 1, "g", "l")], title="", desc="", x_label="", y_label=""
    )
    two = charts.scatter_svg(
        [charts.ScatterPoint(1, 1, "g", "l")], title="", desc="", x_label="", y_label=""
    )
    first_id = one.split('id="')[1].split('"')[0]
    assert f'id="{first_id}"' not in two


def test_narrow_drawing_is_phone_sized_with_fewer_ticks():
    points = [
        charts.ScatterPoint(x=3**i, y=5 * 3**i, group="spot", label=f"p{i}") for i in range(6)
    ]
    wide = charts.scatter_svg(points, title="t", desc="d", x_label="h", y_label="usd")
    narrow = charts.scatter_svg(
        points, title="t", desc="d", x_label="h", y_label="usd", narrow=True
    )
    assert f'viewBox="0 0 {charts.NARROW_WIDTH} {charts.NARROW_HEIGHT}"' in narrow
    assert f'viewBox="0 0 {charts.WIDTH} {charts.HEIGHT}"' in wide
    assert narrow.count('class="tick"') < wide.count('class="tick"')
    assert narrow.count("<circle") == wide.count("<circle") == len(points)


def test_legend_swatches_carry_no_style_attribute():
    legend = charts.legend_html([("On demand", "#0072B2")])
    assert "style=" not in legend and 'fill="#0072B2"' in legend
