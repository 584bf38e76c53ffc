"""The plan page shows the estimate's ranges and decides fits as the reader asks (issue 18)."""

from __future__ import annotations

import pytest

from web.templatetags.atlas import gib_range, hours_range, usd_range

pytestmark = pytest.mark.django_db

PLAN = "/plan?model=llama-3-8b&task=finetune&method=lora&tokens=2e8&pricing=on_demand"
# ~35 GiB estimated on one 40 GB A100: fits on the estimate, not on the high end of its range.
TIGHT = (
    "/plan?model=llama-3-8b&task=finetune&method=lora&batch_size=1&tokens=1e8"
    "&gpus=a100-sxm4-40gb&max_gpus=1&pricing=on_demand"
)


def test_range_filters_read_as_spans():
    assert gib_range([38.2, 46.4]) == "38\u201346 GiB"
    assert gib_range([3.24, 4.51]) == "3.2\u20134.5 GiB"
    assert hours_range([12.2, 15.9]) == "12\u201316 h"
    assert usd_range([1200, 1530.5]) == "$1,200.00\u2013$1,530.50"
    assert gib_range(None) == "\u2014"


def test_the_plan_page_shows_the_memory_range_on_the_bar_and_per_plan(client):
    response = client.get(PLAN)
    assert response.status_code == 200
    body = response.content.decode()
    est = response.context["answer"]["estimate"]
    low, high = est["memory_per_gpu_gib_range"]
    assert low <= est["memory_per_gpu_gib"] <= high
    span = gib_range([low, high])
    assert f"range {span}" in body and "fit decided on the high end" in body
    assert body.count('class="range-band"') == 2  # the bar, drawn for a screen and a phone
    first = response.context["rows"][0]
    assert gib_range(first["memory_per_gpu_gib_range"]) in body
    assert hours_range(first["est_hours_range"]) in body


def test_fit_on_point_in_the_form_accepts_what_the_high_end_rejects(client):
    strict = client.get(TIGHT)
    assert strict.status_code == 200
    assert strict.context["rows"] == []
    codes = [entry["code"] for entry in strict.context["rejected"]]
    assert "does_not_fit_memory_high" in codes
    body = strict.content.decode()
    assert "Fits on the estimate, not on the high end of its range" in body
    # The nearest miss names the form field that lifts it.
    assert any(miss["field"] == "fit_on" for miss in strict.context["misses"])

    loose = client.get(TIGHT + "&fit_on=point")
    assert loose.context["rows"]
    assert '<option value="point" selected>' in loose.content.decode()


def test_chinese_page_says_the_range_and_the_rejection_in_chinese(client):
    response = client.get(TIGHT, HTTP_ACCEPT_LANGUAGE="zh-hans")
    body = response.content.decode()
    assert "按估算值放得下" in body
