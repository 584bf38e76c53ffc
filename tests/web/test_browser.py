"""The plan page in a real browser: Debian's chromium, headless, driven by Playwright for Python.

Skipped only on a machine without /usr/bin/chromium outside CI; under CI=true a missing browser
(or a missing Playwright) fails, so the check can never quietly stop running. `.ci/run` installs
chromium through apt. Screenshots go to tests/web/output/ (git-ignored); their paths are printed.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest
from django.core.management import call_command

CHROMIUM = Path(os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium"))
IN_CI = os.environ.get("CI") == "true"
OUTPUT = Path(__file__).resolve().parent / "output"
# Headless, and nothing that phones home: the page must work with no request leaving the server.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists() and not IN_CI,
    reason=f"{CHROMIUM} is not installed (apt-get install chromium); CI installs it",
)


@pytest.fixture
def catalog(transactional_db):
    """The live server sees committed rows only: load the catalog for real (flushed afterwards)."""
    call_command("load_catalog", verbosity=0)


@pytest.fixture
def browser(catalog):
    """A headless Debian chromium; a missing browser or Playwright fails under CI.

    It needs the catalog first: once Playwright's event loop runs, Django refuses ORM calls
    from this thread.
    """
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: .ci/run should have installed Debian's chromium")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:  # pragma: no cover - requirements-dev.txt pins it
        if IN_CI:
            pytest.fail("playwright is not installed (requirements-dev.txt pins it)")
        pytest.skip("playwright is not installed")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


def _watch(page, origin: str) -> dict[str, list[str]]:
    """Record requests that leave the server and console errors, to assert there are none."""
    seen: dict[str, list[str]] = {"outside": [], "errors": []}

    def on_request(request):
        if not request.url.startswith((origin, "data:", "about:")):
            seen["outside"].append(request.url)

    page.on("request", on_request)
    page.on("console", lambda msg: msg.type == "error" and seen["errors"].append(msg.text))
    page.on("pageerror", lambda exc: seen["errors"].append(str(exc)))
    return seen


# The smallest text (in CSS pixels) of any chart shown on the page.
CHART_TEXT_JS = """() => {
  let smallest = Infinity;
  for (const svg of document.querySelectorAll('svg.chart')) {
    if (!svg.getBoundingClientRect().width) continue;  // the other width's drawing, hidden
    const scale = svg.getScreenCTM().a;
    for (const t of svg.querySelectorAll('text')) {
      smallest = Math.min(smallest, parseFloat(getComputedStyle(t).fontSize) * scale);
    }
  }
  return smallest;
}"""


def test_pages_in_a_browser(browser, live_server):
    """One test, so the catalog is loaded once for every page (a load and flush cost ~15 s)."""
    _plan_form_renders_table_and_charts(browser, live_server)
    _price_browser_fits_sorts_filters_and_compares(browser, live_server)
    _price_browser_on_a_phone(browser, live_server)
    _other_pages(browser, live_server)


def _plan_form_renders_table_and_charts(browser, live_server):
    OUTPUT.mkdir(exist_ok=True)
    context = browser.new_context(locale="en-US", viewport={"width": 1366, "height": 900})
    page = context.new_page()
    page.set_default_timeout(30_000)
    seen = _watch(page, live_server.url)

    page.goto(f"{live_server.url}/plan")
    assert page.locator("html").get_attribute("lang") == "en"
    page.select_option("#id_model", "llama-3-8b")
    page.select_option("#id_task", "finetune")
    page.select_option("#id_method", "lora")
    page.select_option("#id_precision", "bf16")
    page.fill("#id_tokens", "200000000")
    page.check("input[name=pricing][value=on_demand]")
    page.check("input[name=pricing][value=spot]")
    page.fill("#id_max_usd_per_hour", "40")
    with page.expect_navigation() as navigation:
        page.click("#plan-submit")
    assert navigation.value.status == 200

    # The address carries the filled-in fields only, so the plan can be shared.
    query = parse_qs(urlparse(page.url).query, keep_blank_values=True)
    assert query["model"] == ["llama-3-8b"] and query["tokens"] == ["200000000"]
    assert sorted(query["pricing"]) == ["on_demand", "spot"]
    assert all(value for values in query.values() for value in values), query
    assert "params_b" not in query and page.url.endswith("#results")
    # The results are in view after submitting.
    heading = page.locator("#results-heading").bounding_box()
    assert 0 <= heading["y"] < 900, heading

    rows = page.locator("#plans-table tbody tr")
    assert 1 <= rows.count() <= 20
    assert "$" in rows.first.inner_text()
    assert page.locator("#plans-table tbody tr:first-child td").first.inner_text() == "1"
    # The whole table, its notes column last, inside its box at 1366 px (no hidden scroll).
    widths = page.evaluate(
        "() => { const t = document.querySelector('#plans-table');"
        " return [t.scrollWidth, t.closest('.table-wrap').clientWidth]; }"
    )
    assert widths[0] <= widths[1] + 1, widths

    scatter = page.locator("#scatter-chart .chart-wide svg.chart")
    assert scatter.is_visible()
    box = scatter.bounding_box()
    assert box and box["width"] > 300 and box["height"] > 150
    assert page.locator("#scatter-chart .chart-wide circle.point").count() >= rows.count()
    assert "Estimated total cost (USD)" in scatter.inner_html()
    assert page.locator("#memory-chart .chart-wide svg.chart rect.segment").count() >= 2
    assert page.locator("#memory-chart .chart-wide svg.chart").is_visible()
    # The memory range: a band on the bar with its label, and the span in the summary.
    band = page.locator("#memory-chart .chart-wide svg.chart rect.range-band")
    assert band.count() == 1 and band.bounding_box()["width"] > 5
    label = (
        page.locator("#memory-chart .chart-wide svg.chart text.range-label").text_content() or ""
    )
    assert re.search(r"\d+\u2013\d+ GiB", label), label
    assert "range" in page.locator("#memory-range").inner_text()
    assert page.evaluate(CHART_TEXT_JS) >= 11

    shot = OUTPUT / "plan.png"
    page.screenshot(path=str(shot), full_page=True)
    print(f"screenshot: {shot}")
    assert shot.stat().st_size > 10_000
    assert seen["outside"] == [], seen["outside"]
    assert seen["errors"] == [], seen["errors"]

    # A shared link without a task (as in docs/web.md) shows the task the plan was made with,
    # and pressing Plan again gives the same plan, not an error.
    page.goto(f"{live_server.url}/plan?model=llama-3-8b&method=lora&tokens=2e8")
    assert page.locator("#id_task").input_value() == "finetune"
    first = page.locator("#plans-table tbody tr:first-child").inner_text()
    with page.expect_navigation() as navigation:
        page.click("#plan-submit")
    assert navigation.value.status == 200
    assert "task=finetune" in page.url
    assert page.locator("#plans-table tbody tr:first-child").inner_text() == first

    # The same link on a phone, in Simplified Chinese: nothing wider than the screen, the plans
    # as cards, chart text at 11 px or more, and a tap on a point shows what it is.
    phone = browser.new_context(
        locale="zh-CN",
        viewport={"width": 390, "height": 844},
        extra_http_headers={"Accept-Language": "zh-CN,zh;q=0.9"},
        has_touch=True,
        is_mobile=True,
    )
    mobile = phone.new_page()
    mobile.set_default_timeout(30_000)
    seen = _watch(mobile, live_server.url)
    mobile.goto(page.url)
    assert mobile.locator("html").get_attribute("lang") == "zh-hans"
    assert "规划任务" in mobile.locator("header").inner_text()
    assert mobile.locator("#plans-table tbody tr").count() == rows.count()
    # The decision itself is in Chinese, not only the page around it.
    reasons = mobile.locator("#plans-table .reasons").first.inner_text()
    assert re.search(r"[\u4e00-\u9fff]", reasons), reasons
    page_width = mobile.evaluate("document.documentElement.scrollWidth")
    assert page_width <= 390 + 1, page_width
    card = mobile.locator("#plans-table tbody tr").first.bounding_box()
    assert card["x"] >= 0 and card["x"] + card["width"] <= 390 + 1, card
    narrow = mobile.locator("#scatter-chart .chart-narrow svg.chart")
    assert narrow.is_visible() and narrow.bounding_box()["width"] <= 390
    assert mobile.evaluate(CHART_TEXT_JS) >= 11
    assert "区间" in mobile.locator("#memory-range").inner_text()
    point = mobile.locator("#scatter-chart .chart-narrow circle.point.highlight").last
    point.scroll_into_view_if_needed()
    spot = point.bounding_box()
    mobile.touchscreen.tap(spot["x"] + spot["width"] / 2, spot["y"] + spot["height"] / 2)
    tip = mobile.locator(".tip-box")
    assert tip.is_visible() and "#" in tip.inner_text()
    shot = OUTPUT / "plan-phone-zh.png"
    mobile.screenshot(path=str(shot), full_page=False)
    print(f"screenshot: {shot}")
    assert seen["outside"] == [] and seen["errors"] == []
    phone.close()
    context.close()


# Columns a reader must always see in the price table: what it is, its prices and their age.
KEY_COLUMNS = ("Provider", "Instance type", "On demand", "Spot", "Observed")

LAYOUT_JS = """(names) => {
  const view = document.documentElement.clientWidth;
  const out = {pageWidth: document.documentElement.scrollWidth, outside: []};
  const heads = [...document.querySelectorAll('table.prices thead th')];
  if (heads.length && getComputedStyle(document.querySelector('table.prices thead')).display !== 'none') {
    const box = document.querySelector('table.prices').closest('.table-wrap').getBoundingClientRect();
    for (const name of names) {
      const th = heads.find(h => h.innerText.trim().startsWith(name));
      const r = th.getBoundingClientRect();
      if (r.left < box.left - 1 || r.right > Math.min(box.right, view) + 1) out.outside.push(name);
    }
  } else {
    // Cards: each card shows every key cell inside the screen.
    const card = document.querySelector('table.prices tbody tr');
    for (const cell of card.querySelectorAll('td[data-label]')) {
      const r = cell.getBoundingClientRect();
      if (r.width === 0 || r.left < 0 || r.right > view + 1) out.outside.push(cell.dataset.label);
    }
  }
  return out;
}"""


def _price_browser_fits_sorts_filters_and_compares(browser, live_server):
    OUTPUT.mkdir(exist_ok=True)
    page = browser.new_page(viewport={"width": 1366, "height": 900})
    page.set_default_timeout(30_000)
    seen = _watch(page, live_server.url)
    page.goto(f"{live_server.url}/")
    # Several GPUs in one filter, from the drop-down of checkboxes.
    page.click("#id_gpu-label + details summary")
    page.check("input[name=gpu][value=h100-sxm]")
    page.check("input[name=gpu][value=a100-sxm4-80gb]")
    with page.expect_navigation():  # closing the drop-down applies it
        page.keyboard.press("Escape")
    assert "gpu=h100-sxm" in page.url and "gpu=a100-sxm4-80gb" in page.url
    caption = page.locator("table.prices caption").inner_text()
    assert "Current prices, observed between" in caption and "sorted by On demand" in caption
    with page.expect_navigation():
        page.get_by_role("link", name="Spot", exact=True).click()
    assert "sort=spot" in page.url and "gpu=h100-sxm" in page.url
    assert page.locator("th[aria-sort]").get_attribute("aria-sort") == "ascending"
    spot = page.locator("table.prices tbody td.sorted .usd").all_inner_texts()
    values = [float(cell.replace("$", "").replace(",", "")) for cell in spot]
    assert len(values) > 1 and values == sorted(values)

    # Per month: the select applies as soon as it changes, and the caption says the unit.
    with page.expect_navigation():
        page.select_option("#id_period", "month")
    assert "period=month" in page.url and "sort=spot" in page.url
    assert "USD per GPU-month" in page.locator("table.prices caption").inner_text()
    monthly = page.locator("table.prices tbody td.sorted .usd").first.inner_text()
    assert float(monthly.replace("$", "").replace(",", "")) == pytest.approx(
        values[0] * 730, rel=0.01
    )

    # At 1366 px the key columns, the sorted one among them, sit inside the table's box; with
    # every extra column the table scrolls inside its box, whose sideways scrollbar is on screen.
    layout = page.evaluate(LAYOUT_JS, list(KEY_COLUMNS))
    assert layout["outside"] == [] and layout["pageWidth"] <= 1366, layout
    # Sorted by an added column, with every column added: the sorted one comes first after the
    # key columns and stays inside the box too.
    page.goto(
        f"{live_server.url}/?col=memory&col=vcpus&col=ram&col=network&col=interconnect"
        "&col=disk&col=listed&sort=-network"
    )
    assert page.locator("th[aria-sort]").inner_text().startswith("Network")
    layout = page.evaluate(LAYOUT_JS, [*KEY_COLUMNS, "Network"])
    assert layout["outside"] == [] and layout["pageWidth"] <= 1366, layout
    wrap = page.locator("table.prices").locator("xpath=..")
    wrap.scroll_into_view_if_needed()
    page.evaluate("document.querySelector('.table-wrap.scroll-box').scrollIntoView()")
    box = wrap.bounding_box()
    assert box["y"] + box["height"] <= 900 + 1  # the box's bottom edge (its scrollbar) in view
    # The headings stick while the rows scroll.
    page.evaluate("document.querySelector('.table-wrap.scroll-box').scrollTop = 1500")
    head = page.locator("table.prices thead th").first.bounding_box()
    assert abs(head["y"] - box["y"]) < 4, (head, box)
    shot = OUTPUT / "prices.png"
    page.screenshot(path=str(shot))
    print(f"screenshot: {shot}")

    # Compare two ticked rows: the compare page runs the planner on each.
    page.goto(f"{live_server.url}/?provider=lambda")
    assert page.locator("#compare-submit").is_disabled()
    boxes = page.locator("input[name=offer]")
    boxes.nth(0).check()
    boxes.nth(1).check()
    with page.expect_navigation():
        page.click("#compare-submit")
    assert "/compare?" in page.url and page.url.count("offer=") == 2
    assert page.locator("#compare-table thead th").count() == 3
    assert "Best plan for this workload" in page.locator("#compare-table").inner_text()
    assert seen["outside"] == [] and seen["errors"] == [], seen
    page.close()


def _price_browser_on_a_phone(browser, live_server):
    """On a phone, in Chinese, the offers are cards whose price (dollars and yuan) and age are
    inside the screen."""
    phone = browser.new_context(
        locale="zh-CN",
        viewport={"width": 390, "height": 844},
        extra_http_headers={"Accept-Language": "zh-CN,zh;q=0.9"},
    )
    page = phone.new_page()
    seen = _watch(page, live_server.url)
    page.goto(f"{live_server.url}/?provider=autodl")
    layout = page.evaluate(LAYOUT_JS, list(KEY_COLUMNS))
    assert layout["outside"] == [] and layout["pageWidth"] <= 390, layout
    card = page.locator("table.prices tbody tr").first
    text = card.inner_text()
    assert "$" in text and "¥" in text  # dollars with the listed yuan beside them
    assert "前" in text  # the price's age ("... 前", "... ago")
    page.evaluate("document.querySelector('table.prices').scrollIntoView()")
    shot = OUTPUT / "prices-phone-zh.png"
    page.screenshot(path=str(shot))
    print(f"screenshot: {shot}")
    # The instance type's page and the compare view fit the phone too, in Chinese, with yuan.
    with page.expect_navigation():
        card.locator("td.instance-cell a").click()
    assert "/instances/autodl/" in page.url
    assert page.evaluate("document.documentElement.scrollWidth") <= 390 + 1
    assert "¥" in page.inner_text("main") and "按量付费" in page.inner_text("main")
    page.goto(f"{live_server.url}/compare?offer=autodl/H800&offer=aws/p5.48xlarge")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390 + 1
    assert "¥" in page.locator("#compare-table").inner_text()
    assert seen["outside"] == [] and seen["errors"] == [], seen
    phone.close()


def _other_pages(browser, live_server):
    """/gpus sorts and fits both widths, an unknown GPU is the styled 404, the API docs load
    nothing from outside."""
    for width in (1366, 390):
        page = browser.new_page(viewport={"width": width, "height": 900})
        seen = _watch(page, live_server.url)
        page.goto(f"{live_server.url}/gpus?rented=on")
        if width == 1366:
            with page.expect_navigation():
                page.get_by_role("link", name="Memory", exact=True).click()
            assert page.locator("th[aria-sort]").get_attribute("aria-sort") == "ascending"
            # Filter by a vendor from its drop-down of checkboxes; the sort stays.
            page.click("#id_vendor-label + details summary")
            page.check("input[name=vendor][value=amd]")
            with page.expect_navigation():
                page.click("#gpu-filters button[type=submit]")
            assert "vendor=amd" in page.url and "sort=memory" in page.url
            assert page.locator("#id_vendor-label + details summary").inner_text() == "AMD"
            names = page.locator("#gpu-table tbody th").all_inner_texts()
            assert names and all(name.startswith("AMD") for name in names), names
        assert page.evaluate("document.documentElement.scrollWidth") <= width + 1
        assert seen["outside"] == [] and seen["errors"] == [], seen
        page.close()
    page = browser.new_page()
    response = page.goto(f"{live_server.url}/gpus/h100")
    assert response.status == 404 and "Page not found" in page.inner_text("main")
    assert page.locator("main a[href='/gpus/h100-sxm']").count() == 1
    page.set_extra_http_headers({"Accept-Language": "zh-CN,zh;q=0.9"})
    response = page.goto(f"{live_server.url}/providers/nope")
    assert response.status == 404 and "页面不存在" in page.inner_text("main")
    assert page.locator("html").get_attribute("lang") == "zh-hans"
    page.set_extra_http_headers({"Accept-Language": "en"})
    seen = _watch(page, live_server.url)
    blocked: list[str] = []
    page.on(
        "requestfailed",
        lambda request: "csp" in (request.failure or "").lower() and blocked.append(request.url),
    )
    page.goto(f"{live_server.url}/api/docs/")
    page.wait_for_selector("text=GPU Atlas API")
    page.wait_for_timeout(500)
    page.goto(f"{live_server.url}/api/redoc/")
    page.wait_for_selector("text=GPU Atlas API")
    page.wait_for_timeout(500)
    # Redoc's worker is a blob of this page; Redocly's logo is refused by the page's policy
    # before it leaves the browser.
    outside = [u for u in seen["outside"] if not u.startswith("blob:") and u not in blocked]
    assert outside == [], (outside, blocked)
    page.close()
