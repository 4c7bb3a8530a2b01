"""The second round's panels in headless Chromium: a permalink opens a case's drawer at its trial, its
distinct outputs with counts, its Markdown copy, the word diffs, the tool-call strips, the heat map, and
reading (text size, dark theme, print, keyboard); no script error, no request."""

from __future__ import annotations

import json
import re
import urllib.parse
from pathlib import Path
from typing import Any

import pytest

from tests.report.conftest import agent_runs, dated_runs, needs_browser
from tests.report.test_report_report import PAYLOADS, payload_run
from trialscore.report import write_report

pytestmark = needs_browser

DRAWER_OPEN = "!document.getElementById('drawer').hidden"
#: Replaces the clipboard with a recorder (the copied text lands in window.__copied).
RECORD_CLIPBOARD = (
    "navigator.clipboard.writeText = t => { window.__copied = t; return Promise.resolve(); }; true"
)


@pytest.fixture
def agent_page(tmp_path: Path) -> Path:
    before, now = agent_runs(tmp_path)
    return write_report(tmp_path / "r.html", [now], baseline=before)


def _clean(page: Any) -> None:
    assert page.problems() == []
    assert [url for url in page.requests() if not url.startswith("file://")] == []


@pytest.mark.slow
def test_a_permalink_opens_the_drawer_at_its_trial(agent_page: Path, open_page: Any) -> None:
    page = open_page(agent_page, "#case=capital&trial=2")
    page.until(DRAWER_OPEN)
    assert page.eval("document.getElementById('drawer-title').textContent") == "capital (m)"
    assert page.eval("document.querySelector('#drawer .trial.chosen').id") == "trial-2"
    assert page.eval("document.activeElement.id") == "drawer-close"
    assert page.eval("location.hash") == "#case=capital&trial=2"
    # each trial has its own permalink; following one opens that case and trial
    links = page.eval(
        "Array.from(document.querySelectorAll('#drawer a.permalink')).map(a => a.getAttribute('href'))"
    )
    assert links == [f"#case=capital&trial={trial}" for trial in range(4)]
    page.eval("location.hash = '#case=agent&trial=1'")
    page.until("document.getElementById('drawer-title').textContent === 'agent (m)'")
    assert page.eval("document.querySelector('#drawer .trial.chosen').id") == "trial-1"
    # closing the drawer drops the permalink from the address; opening a case gives it its own
    page.eval("document.getElementById('drawer-close').click()")
    assert page.eval("location.hash") == ""
    page.eval(
        "Array.from(document.querySelectorAll('button.case')).find(b => b.textContent === 'same').click()"
    )
    page.until("location.hash === '#case=same'")
    _clean(page)


@pytest.mark.slow
def test_distinct_outputs_with_counts_and_the_loose_grouping(agent_page: Path, open_page: Any) -> None:
    page = open_page(agent_page, "#case=capital")
    page.until(DRAWER_OPEN)
    groups = """Array.from(document.querySelectorAll('#drawer .groups')[0].querySelectorAll('.group'))
      .map(g =>
        [g.querySelector('.group-head').textContent, g.querySelector('pre').textContent])"""
    assert page.eval(groups) == [
        ["2× 2 fail; trials 0, 1", "Lyon"],
        ["1× 1 fail; trials 2", " lyon"],
        ["1× 1 fail; trials 3", "Marseille"],
    ]
    page.eval("document.querySelector('#drawer .loose input').click()")
    assert page.eval(groups) == [["3× 3 fail; trials 0, 1, 2", "Lyon"], ["1× 1 fail; trials 3", "Marseille"]]
    # errors are grouped the same way
    page.eval("location.hash = '#case=errors'")
    page.until("document.getElementById('drawer-title').textContent === 'errors (m)'")
    titles = page.eval("Array.from(document.querySelectorAll('#drawer .groups h3')).map(h => h.textContent)")
    assert titles == ["Distinct outputs", "Distinct errors"]
    errors = page.eval(
        "Array.from(document.querySelectorAll('#drawer .groups')[1].querySelectorAll('.count'))"
        ".map(c => c.textContent)"
    )
    assert errors == ["1×", "1×", "1×"]
    page.eval("document.querySelectorAll('#drawer .groups')[1].querySelector('.loose input').click()")
    errors = page.eval(
        "Array.from(document.querySelectorAll('#drawer .groups')[1].querySelectorAll('.count'))"
        ".map(c => c.textContent)"
    )
    assert errors == ["2×", "1×"]
    _clean(page)


@pytest.mark.slow
def test_copy_as_markdown(agent_page: Path, open_page: Any) -> None:
    page = open_page(agent_page, "#case=capital")
    page.until(DRAWER_OPEN)
    page.eval(RECORD_CLIPBOARD)
    page.eval("document.getElementById('drawer-md').click()")
    markdown = page.until("window.__copied")
    assert markdown.startswith("### Case capital (m)\n")
    assert "- against the baseline: regressed (-1.00)" in markdown
    assert "- permalink: r.html\\#case=capital" in markdown
    assert "**2×** (2 fail; trials 0, 1)\n\n```text\nLyon\n```" in markdown
    assert "| 3 | fail | 0 | — |" in markdown
    assert page.eval("document.getElementById('drawer-md').textContent") == "Copied as Markdown"
    _clean(page)


@pytest.mark.slow
def test_word_diff_markup(agent_page: Path, open_page: Any) -> None:
    page = open_page(agent_page)
    cells = page.eval(
        """Array.from(document.querySelectorAll('#against table.changed tr[data-i]')).map(tr =>
        [tr.cells[0].textContent, Array.from(tr.querySelectorAll('.diff del')).map(e => e.textContent),
         Array.from(tr.querySelectorAll('.diff ins')).map(e => e.textContent), tr.cells[7].textContent])"""
    )
    by_case = {case: (deleted, inserted, text) for case, deleted, inserted, text in cells}
    assert by_case["capital"][:2] == (["Paris"], ["Lyon"])
    assert "word diff (2 changes)" in by_case["capital"][2]
    assert by_case["agent"][:2] == ([], []) and "same most common output" in by_case["agent"][2]
    # the drawer shows the same diff
    page.eval("location.hash = '#case=capital'")
    page.until(DRAWER_OPEN)
    assert page.eval("document.querySelector('#drawer .diff').innerHTML") == "<del>Paris</del><ins>Lyon</ins>"
    _clean(page)


@pytest.mark.slow
def test_tool_call_strips(agent_page: Path, open_page: Any) -> None:
    page = open_page(agent_page, "#case=agent")
    page.until(DRAWER_OPEN)
    strips = page.eval(
        """Array.from(document.querySelectorAll('#drawer .call-strip')).map(line =>
        Array.from(line.children).map(e => e.textContent))"""
    )
    assert strips == [
        ["trial 0 (pass)", 'search("q":"Paris")', 'book("nights":2)'],
        ["trial 1 (fail)", 'search("q":"Paris")', 'book("nights":3)'],
        ["trial 2 (fail)", 'search("q":"Paris")'],
        ["trial 3 (error)", "no calls recorded"],
    ]
    assert (
        page.eval("document.querySelector('#drawer .diverge').textContent") == "The trials diverge at step 2."
    )
    assert page.eval("document.querySelectorAll('#drawer .call.after').length") == 2  # from step 2 on
    assert page.eval("document.querySelectorAll('#tool-calls .calls-cell .call-strip').length") == 4
    _clean(page)


@pytest.mark.slow
def test_heat_map(tmp_path: Path, open_page: Any) -> None:
    runs = dated_runs(tmp_path, 6, falling=3, steady_passes=10, month=3, late=False)
    page = open_page(write_report(tmp_path / "r.html", runs))
    assert page.eval("document.querySelectorAll('#heat tbody td').length") == 60
    assert page.eval("Array.from(document.querySelectorAll('#heat thead time')).map(t => t.dateTime)") == [
        f"2025-03-{day:02d}" for day in range(1, 11)
    ]
    first = page.eval(
        "Array.from(document.querySelectorAll('#heat tbody')[0].rows[1].cells).slice(1).map(c => c.className)"
    )
    assert first == [f"h{10 - index}" for index in range(10)]
    heads = page.eval("Array.from(document.querySelectorAll('#heat .heat-group th')).map(t => t.textContent)")
    assert heads == ["falling (3 cases) · trend: declining", "steady (3 cases) · trend: stable"]
    assert (
        page.eval("document.querySelector('#heat tbody td').title") == "10/10 passed in the run of 2025-03-01"
    )
    _clean(page)


#: The page's text elements (those with text of their own, shown).
TEXTS = """Array.from(document.querySelectorAll('body *')).filter(e => e.getClientRects().length &&
    Array.from(e.childNodes).some(n => n.nodeType === 3 && n.textContent.trim()))"""
#: Every text element with its rendered font size in CSS px (a chart's text as its chart is drawn).
TEXT_SIZES = f"""{TEXTS}.map(e => {{
    let size = parseFloat(getComputedStyle(e).fontSize);
    if (e instanceof SVGElement) {{ const m = e.getScreenCTM(); size *= Math.hypot(m.b, m.d); }}
    return [e.tagName, size, e.textContent.slice(0, 30)];
  }})"""
#: Every text element with the contrast ratio of its colour on its background (WCAG 2: relative
#: luminances L1 >= L2, (L1 + 0.05) / (L2 + 0.05)); translucent backgrounds laid over what is below.
CONTRAST = f"""(() => {{
  const parse = c => {{
    const m = c.match(/^rgba?\\(([^)]+)\\)/) || c.match(/^color\\(srgb ([^)]+)\\)/);
    const p = m[1].split(/[ ,\\/]+/).filter(Boolean).map(Number);
    const scale = c.startsWith('rgb') ? 255 : 1;
    return [p[0] / scale, p[1] / scale, p[2] / scale, p.length > 3 ? p[3] : 1];
  }};
  const over = (top, under) =>
    top.slice(0, 3).map((v, i) => v * top[3] + under[i] * (1 - top[3])).concat([1]);
  const lum = c => c.slice(0, 3).map(v => v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4))
    .reduce((sum, v, i) => sum + [0.2126, 0.7152, 0.0722][i] * v, 0);
  const background = e => {{
    const layers = [];
    for (let n = e; n; n = n.parentElement) {{
      const c = parse(getComputedStyle(n).backgroundColor);
      if (c[3] > 0) layers.push(c);
      if (c[3] >= 1) break;
    }}
    let below = [1, 1, 1, 1];  // the paper, or the canvas behind a page with no background
    while (layers.length) below = over(layers.pop(), below);
    return below;
  }};
  return {TEXTS}.map(e => {{
    const style = getComputedStyle(e), below = background(e);
    const a = lum(over(parse(e instanceof SVGElement ? style.fill : style.color), below)), b = lum(below);
    return [e.tagName, e.getAttribute('class'), (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05),
      e.textContent.slice(0, 30)];
  }});
}})()"""


@pytest.mark.slow
def test_reading_text_size_themes_print_and_keyboard(tmp_path: Path, open_page: Any) -> None:
    before, now = agent_runs(tmp_path)
    page = open_page(write_report(tmp_path / "r.html", [before, now], baseline=before), "#case=agent")
    page.until(DRAWER_OPEN)
    # no text under 11 px at 100% zoom: on a wide and a narrow screen, a phone, and printed (A4's width)
    for media, width in (("screen", 1280), ("screen", 800), ("screen", 400), ("print", 718)):
        page.send(
            "Emulation.setDeviceMetricsOverride", width=width, height=900, deviceScaleFactor=1, mobile=False
        )
        page.send("Emulation.setEmulatedMedia", media=media)
        small = [entry for entry in page.eval(TEXT_SIZES) if entry[1] < 11]
        assert small == [], (media, width, small[:5])
    page.send("Emulation.setDeviceMetricsOverride", width=1280, height=900, deviceScaleFactor=1, mobile=False)
    # light and dark: every text at least 4.5:1 against its background (WCAG AA)
    colours = {}
    for scheme in ("light", "dark"):
        page.send(
            "Emulation.setEmulatedMedia",
            media="screen",
            features=[{"name": "prefers-color-scheme", "value": scheme}],
        )
        colours[scheme] = page.eval("getComputedStyle(document.body).backgroundColor")
        faint = [entry for entry in page.eval(CONTRAST) if entry[2] < 4.5]
        assert faint == [], (scheme, faint[:5])
    assert colours == {"light": "rgb(255, 255, 255)", "dark": "rgb(13, 17, 23)"}
    # printed from a dark browser: dark text on the paper (browsers print no background)
    page.send(
        "Emulation.setEmulatedMedia",
        media="print",
        features=[{"name": "prefers-color-scheme", "value": "dark"}],
    )
    assert page.eval("getComputedStyle(document.body).color") == "rgb(29, 33, 39)"
    page.send("Emulation.setEmulatedMedia", media="screen")
    # keyboard: Escape closes the drawer (focus back on its case), Enter on a focused case opens it
    page.send("Input.dispatchKeyEvent", type="keyDown", key="Escape", code="Escape", windowsVirtualKeyCode=27)
    assert page.eval("document.getElementById('drawer').hidden") is True
    assert page.eval("document.activeElement.textContent") == "agent"
    page.eval(
        "Array.from(document.querySelectorAll('button.case')).find(b => b.textContent === 'errors').focus()"
    )
    # a key with text is what activates a focused button (a bare keyDown is only a raw key)
    enter = {"key": "Enter", "code": "Enter", "windowsVirtualKeyCode": 13}
    page.send("Input.dispatchKeyEvent", type="keyDown", text="\r", **enter)
    page.send("Input.dispatchKeyEvent", type="keyUp", **enter)
    page.until("document.getElementById('drawer-title').textContent === 'errors (m)'")
    assert page.eval("document.activeElement.id") == "drawer-close"
    # Tab goes on into the drawer's content (its links and controls)
    page.send("Input.dispatchKeyEvent", type="keyDown", key="Tab", code="Tab", windowsVirtualKeyCode=9)
    assert page.eval("document.getElementById('drawer-body').contains(document.activeElement)") is True
    # a column's header sorts from the keyboard
    page.send("Input.dispatchKeyEvent", type="keyDown", key="Escape", code="Escape", windowsVirtualKeyCode=27)
    page.eval("document.querySelector('#case-table th button[data-k=\"4\"]').focus()")
    page.send("Input.dispatchKeyEvent", type="keyDown", text="\r", **enter)
    page.send("Input.dispatchKeyEvent", type="keyUp", **enter)
    assert page.eval("document.activeElement.parentNode.getAttribute('aria-sort')") == "ascending"
    _clean(page)


@pytest.mark.slow
def test_payloads_stay_text_in_the_new_panels(tmp_path: Path, open_page: Any) -> None:
    report = write_report(
        tmp_path / "r.html",
        [payload_run(tmp_path / "bad.jsonl", now=True)],
        baseline=payload_run(tmp_path / "base.jsonl"),
    )
    page = open_page(report)
    page.eval(RECORD_CLIPBOARD)
    diffs = page.eval("Array.from(document.querySelectorAll('#against .diff')).map(d => d.textContent)")
    assert len(diffs) == len(PAYLOADS)
    calls = page.eval("Array.from(document.querySelectorAll('#tool-calls .call')).map(c => c.textContent)")
    assert {call.split("(", 1)[0] for call in calls} >= {payload.split("(", 1)[0] for payload in PAYLOADS}
    for payload in PAYLOADS:
        page.eval("window.__copied = undefined")
        fragment = "#" + urllib.parse.urlencode({"case": payload, "target": payload})
        page.eval(f"location.hash = {json.dumps(fragment)}")
        page.until(f"document.getElementById('drawer-title').textContent.startsWith({json.dumps(payload)})")
        page.eval("document.getElementById('drawer-md').click()")
        markdown = page.until("window.__copied")
        # outside its code blocks the Markdown has the payload's marks escaped: no tag, no raw brace
        prose = "".join(markdown.split("```")[0::2])
        assert not re.search(r"(?<!\\)[<>]", prose) and "{{" not in prose, prose
        assert payload.upper().strip() in markdown or payload in markdown
    assert page.eval("window.__pwned === undefined")
    assert page.eval("document.scripts.length") == 2
    assert page.eval("document.querySelectorAll('img, [onerror], #drawer script').length") == 0
    _clean(page)
