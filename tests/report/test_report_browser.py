"""The report in a real browser (headless Chromium): rendered DOM, sorting, filtering, the drawer,
no injected element or script, no script error and no network request."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.report.conftest import needs_browser, write_trials
from tests.report.test_report_report import PAYLOADS, payload_run
from trialscore.report import write_report

pytestmark = needs_browser

RATES = (
    "Array.from(document.querySelectorAll('#case-table tbody tr')).map(r => parseFloat(r.cells[4].dataset.v))"
)
VISIBLE = "Array.from(document.querySelectorAll('#case-table tbody tr')).filter(r => !r.hidden).length"
FIRST_CASE = "document.querySelector('#case-table tbody tr:not([hidden]) button.case').textContent"


@pytest.mark.slow
def test_the_dom_shows_the_rendered_page(tmp_path: Path, open_page) -> None:
    page = write_report(tmp_path / "r.html", [write_trials(tmp_path / "t.jsonl", 12, 4, seed=3)])
    dom = open_page(page).eval("document.documentElement.outerHTML")  # the DOM after the page's scripts
    assert dom.count('<tr data-s="') == 12
    # the script turned each strip of letters into one mark per trial, with an accessible name
    assert dom.count('<b class="') >= 12 * 4
    assert re.search(r'<td class="st" aria-label="\d+ (pass|fail|error)[^"]*" role="img">', dom)
    assert "12 of 12 cases" in dom


@pytest.mark.slow
def test_sorting_filtering_search_and_drawer(tmp_path: Path, open_page) -> None:
    base = write_trials(tmp_path / "base.jsonl", 30, 6, seed=1)
    now = write_trials(tmp_path / "now.jsonl", 30, 6, seed=2, shift=-0.2)
    page = open_page(write_report(tmp_path / "r.html", [now], baseline=base))
    assert page.eval(VISIBLE) == 30
    flaky = page.eval("document.querySelectorAll('#case-table tbody tr[data-s=flaky]').length")
    assert 0 < flaky < 30
    page.eval("document.getElementById('f-flaky').click()")
    assert page.eval(VISIBLE) == flaky
    assert page.eval("document.getElementById('shown').textContent") == f"{flaky} of 30 cases"
    page.eval("document.getElementById('f-flaky').click()")
    # sorting by pass rate puts the lowest first, then the highest
    page.eval("document.querySelector('th button[data-k=\"4\"]').click()")
    rates = page.eval(RATES)
    assert rates == sorted(rates) and rates[0] < rates[-1]
    assert page.eval(
        "document.querySelector('th button[data-k=\"4\"]').parentNode.getAttribute('aria-sort')"
    ) == ("ascending")
    page.eval("document.querySelector('th button[data-k=\"4\"]').click()")
    rates = page.eval(RATES)
    assert rates == sorted(rates, reverse=True)
    # search
    page.eval(
        "const q = document.getElementById('q'); q.value = 'case-0007'; q.dispatchEvent(new Event('input'))"
    )
    assert page.eval(VISIBLE) == 1 and page.eval(FIRST_CASE) == "case-0007"
    # the drawer: one box per trial with its output; Escape closes it and gives focus back
    page.eval("document.querySelector('#case-table tbody tr:not([hidden]) button.case').click()")
    page.until("!document.getElementById('drawer').hidden")
    assert page.eval("document.activeElement.id") == "drawer-close"
    assert page.eval("document.querySelectorAll('#drawer .trial').length") == 6
    assert "answer 7" in page.eval("document.getElementById('drawer-body').textContent")
    page.eval("document.dispatchEvent(new KeyboardEvent('keydown', {key: 'Escape'}))")
    assert page.eval("document.getElementById('drawer').hidden") is True
    assert page.eval("document.activeElement.textContent") == "case-0007"
    assert page.problems() == []
    assert [url for url in page.requests() if not url.startswith("file://")] == []


@pytest.mark.slow
def test_payloads_stay_text_in_the_browser(tmp_path: Path, open_page) -> None:
    report = write_report(
        tmp_path / "r.html",
        [payload_run(tmp_path / "bad.jsonl")],
        baseline=payload_run(tmp_path / "base.jsonl"),
    )
    page = open_page(report)
    assert page.eval("window.__pwned === undefined")
    assert page.eval("document.scripts.length") == 2
    assert page.eval("document.querySelectorAll('img, [onerror]').length") == 0
    cases = page.eval("Array.from(document.querySelectorAll('button.case')).map(b => b.textContent)")
    assert set(PAYLOADS) <= set(cases)
    # open every payload case's drawer: its output and error come back as the same text
    for index, payload in enumerate(cases):
        page.eval("document.getElementById('drawer-title').textContent = ''")
        page.eval(f"document.querySelectorAll('button.case')[{index}].click()")
        page.until("document.getElementById('drawer-title').textContent")
        body = page.eval("document.getElementById('drawer-body').textContent")
        if payload in PAYLOADS:
            assert body.count(payload) >= 2  # the output (twice: pass and fail trial), the error
        assert page.eval("document.querySelectorAll('img, [onerror], #drawer script').length") == 0
    assert page.eval("window.__pwned === undefined")
    assert page.problems() == [], json.dumps(page.problems())


@pytest.mark.slow
def test_the_checks_catch_a_request_and_a_script_error(tmp_path: Path, open_page) -> None:
    """Negative control: a page that loads an image from the network and throws is caught."""
    bad = tmp_path / "bad.html"
    bad.write_text(
        '<!DOCTYPE html><img src="http://example.invalid/x.png"><script>undefinedFunction()</script>',
        encoding="utf-8",
    )
    problems = open_page(bad).problems()
    assert any(p.startswith("request: http://example.invalid/") for p in problems)
    assert any(p.startswith("exception:") for p in problems)


CHART_TEXT = """Array.from(document.querySelectorAll('svg.chart text')).map(t => [
    parseFloat(getComputedStyle(t).fontSize) * t.ownerSVGElement.getScreenCTM().a,
    t.getBBox().x, t.getBBox().x + t.getBBox().width, t.ownerSVGElement.viewBox.baseVal.width,
    t.textContent])"""


@pytest.mark.slow
@pytest.mark.parametrize("days", [(6, 13, 20), tuple(range(1, 13))], ids=["3 runs", "12 runs"])
def test_chart_text_is_readable_and_no_label_is_clipped(
    tmp_path: Path, open_page, days: tuple[int, ...]
) -> None:
    """At 100% zoom every chart text is at least 11 px (at a desktop width, a narrow one, a phone's, and
    printed at A4's width: a chart too wide for its box scrolls rather than shrink its text), and every
    label lies inside its chart: the trends chart's last date included."""
    runs = [
        write_trials(
            tmp_path / f"r{i}.jsonl",
            30,
            6,
            seed=i,
            targets=("model-a", "model-b"),
            started=f"2025-01-{day:02d}",
        )
        for i, day in enumerate(days)
    ]
    page = open_page(write_report(tmp_path / "r.html", runs))
    for media, width in (("screen", 1280), ("screen", 800), ("screen", 400), ("print", 718)):
        page.send(
            "Emulation.setDeviceMetricsOverride", width=width, height=900, deviceScaleFactor=1, mobile=False
        )
        page.send("Emulation.setEmulatedMedia", media=media)
        texts = page.eval(CHART_TEXT)
        assert {text for *_, text in texts} >= {f"2025-01-{days[-1]:02d}", "k", "run date"}
        for size, left, right, chart_width, text in texts:
            assert size >= 11, (media, width, text, size)
            assert 0 <= left and right <= chart_width, (width, text, left, right, chart_width)
    assert page.problems() == []


@pytest.mark.slow
def test_the_drawer_shows_what_the_case_asked_and_expected(tmp_path: Path, open_page) -> None:
    from tests.cli_runner import CliRunner
    from trialscore.cli import app

    out = tmp_path / "out"
    args = ["run", "--demo", "--store", str(tmp_path / "s.sqlite"), "--out", str(out), "--no-progress"]
    assert CliRunner().invoke(app, args).exit_code == 0
    page = open_page(write_report(tmp_path / "r.html", [out]))
    page.eval(
        "Array.from(document.querySelectorAll('#case-table button.case'))"
        ".find(b => b.textContent === 'multiply').click()"
    )
    page.until("!document.getElementById('drawer').hidden")
    shown = page.eval("Array.from(document.querySelectorAll('#drawer-body .asked')).map(e => e.textContent)")
    assert shown == ["input", "What is 17 * 23? Answer with the number.", "expected", "391"]
    assert page.problems() == []
