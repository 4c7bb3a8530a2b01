"""The cost panel in headless Chromium: the chart drawn with a mark per target and the front ringed, its
text readable and inside the chart, hostile target names shown as text; no script error, no request."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.report.conftest import needs_browser, write_records
from tests.report.test_report_browser import CHART_TEXT
from tests.report.test_report_effort import agent_rows
from trialscore.report import write_report

pytestmark = needs_browser

HOSTILE = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>'


@pytest.mark.slow
def test_the_cost_panel_draws_its_chart_and_tables(tmp_path: Path, open_page: Any) -> None:
    targets = {HOSTILE: (0.5, 0.01), "middle": (0.7, 0.05), "strong": (0.85, 0.2), "dear": (0.6, 0.3)}
    rows = agent_rows(21, cases=25, targets=targets)
    for row in rows:
        if row["target"] == "middle" and row["case_id"] == "case-03":
            row["cost_usd"] = None
    page = open_page(write_report(tmp_path / "r.html", [write_records(tmp_path / "t.jsonl", rows)]))
    assert page.eval("document.querySelector('nav a[href=\"#cost\"]').textContent") == "Cost"
    chart = "document.querySelector('#cost svg.chart.front')"
    assert page.eval(f"{chart}.getBoundingClientRect().width") > 200
    assert page.eval(f"{chart}.querySelectorAll('g.target').length") == 4
    on_front = page.eval(
        "Array.from(document.querySelectorAll('#cost table.front-table tbody tr'))"
        ".filter(tr => tr.cells[3].textContent === 'yes').length"
    )
    assert on_front >= 1 and page.eval(f"{chart}.querySelectorAll('circle.ring').length") == on_front
    marks = page.eval(f"Array.from({chart}.querySelectorAll('g.target > title')).map(t => t.textContent)")
    assert sorted(marks) == sorted(targets)
    assert page.eval("document.querySelectorAll('#cost img, #cost script').length") == 0
    assert page.eval("window.__pwned === undefined")
    header = page.eval(
        "Array.from(document.querySelectorAll('#cost table.per-success th[scope=col]'))"
        ".map(th => th.textContent)"
    )
    assert header == ["target", "cost per success (USD)", "latency per success (s)"]
    assert "middle: 3 trials of unknown cost left out" in page.eval(
        "document.querySelector('#cost').textContent"
    )
    for width in (1280, 800):
        page.send(
            "Emulation.setDeviceMetricsOverride", width=width, height=900, deviceScaleFactor=1, mobile=False
        )
        texts = page.eval(CHART_TEXT.replace("svg.chart text", "#cost svg.chart text"))
        assert any(text == "cost per task (USD, log scale)" for *_, text in texts)
        for size, left, right, chart_width, text in texts:
            assert size >= 11, (width, text, size)
            assert 0 <= left and right <= chart_width, (width, text, left, right, chart_width)
    assert page.problems() == []
    assert [url for url in page.requests() if not url.startswith("file://")] == []
