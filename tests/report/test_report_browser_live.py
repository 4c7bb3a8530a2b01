"""The live report in headless Chromium: the page of a run still going reloads itself and shows the
trials committed since, keeping its filters and open case, and stops reloading once the run ends; a
page whose run stopped writing stops reloading on its own.

The run is real (the runner in a thread, its target a program per trial), and each case's trials
wait until the test opens that case's gate (a file), so the test decides what the run has committed
when.  Nothing is timed: every wait is a condition polled until a deadline, which fails as "hung".
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.report.conftest import needs_browser, write_trials
from trialscore.api import run_suite
from trialscore.report import ReportSettings, write_report
from trialscore.report.live import LiveReport
from trialscore.runner.options import RunOptions
from trialscore.runner.run_report import RunReport

pytestmark = [needs_browser, pytest.mark.timeout(300)]

#: Each trial waits until the file named by its case exists in $GATES, then answers: "yes" on even
#: trials (a pass), "no" on odd ones (a failure).
GATED = (
    'while [ ! -e "$GATES/$TRIALSCORE_CASE_ID" ]; do sleep 0.02; done; '
    "if [ $((TRIALSCORE_TRIAL % 2)) -eq 0 ]; then echo yes; else echo no; fi"
)
CASES = ["a0", "b0", "a1", "b1", "a2", "b2"]
TRIALS = 3

#: What the page shows, read in one go (a reload cannot come in between); None while it loads.
SNAPSHOT = """(() => {
  const data = document.getElementById('trial-data');
  const shown = document.getElementById('shown');
  if (!data || !shown || document.readyState !== 'complete') return null;
  const notice = document.getElementById('live');
  return {
    live: JSON.parse(data.textContent).live,
    notice: notice ? notice.textContent : null,
    rows: document.querySelectorAll('#case-table tbody tr').length,
    shown: shown.textContent,
    category: document.getElementById('f-cat').value,
    drawer: document.getElementById('drawer').hidden ? null
      : document.getElementById('drawer-title').textContent,
    hash: location.hash,
    kept: sessionStorage.length,
  };
})()"""


def suite(gates: Path) -> dict[str, Any]:
    return {
        "name": "gated",
        "targets": [
            {"name": "gated", "type": "command", "argv": ["sh", "-c", GATED], "env": {"GATES": str(gates)}}
        ],
        "execution": {"trials": {"count": TRIALS}, "concurrency": len(CASES) * TRIALS, "timeout_s": 240},
        "cases": [
            {
                "id": case,
                "input": f"case {case}",
                "category": "alpha" if case.startswith("a") else "beta",
                "graders": [{"type": "contains", "value": "yes"}],
            }
            for case in CASES
        ],
    }


def poll(what: str, read: Callable[[], Any], ok: Callable[[Any], bool], timeout: float = 90) -> Any:
    """``read()`` once ``ok`` of it holds (a read that fails, a page mid-reload, counts as not yet);
    fails as hung after ``timeout`` seconds, with the last value read."""
    deadline = time.monotonic() + timeout
    value = None
    while True:
        try:
            value = read()
        except RuntimeError:  # the page was reloading: its context went away
            value = None
        if value is not None and ok(value):
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"hung: {what} did not happen within {timeout} s; last seen {value!r}")
        time.sleep(0.05)


@pytest.mark.slow
def test_a_live_page_follows_the_run_and_stops_with_it(tmp_path: Path, open_page: Any) -> None:
    gates, page_path = tmp_path / "gates", tmp_path / "live.html"
    gates.mkdir()
    live = LiveReport(page_path, interval=0.5)
    options = RunOptions(store=tmp_path / "s.sqlite", progress=False, signals=False, observer=live)
    ran: list[RunReport | BaseException] = []

    def run() -> None:
        try:
            ran.append(run_suite(suite(gates), options=options, write=False))
        except BaseException as exc:  # the test says what it was
            ran.append(exc)

    def release(*cases: str) -> None:
        for case in cases:
            (gates / case).touch()

    runner = threading.Thread(target=run, name="gated-run", daemon=True)
    runner.start()
    try:
        release("a0", "b0")
        poll("the page of the first two cases", lambda: page_path.is_file(), bool)
        page = open_page(page_path)
        first = poll("the first page", lambda: page.eval(SNAPSHOT), lambda s: s["live"]["committed"] == 6)
        assert first["notice"] == f"Running: 6 of {len(CASES) * TRIALS} planned trials done. " + (
            "This page reloads itself until the run ends."
        )
        assert first["rows"] == 2 and first["drawer"] is None
        # a filter and an open case, set in one go (a reload cannot come in between)
        page.eval(
            """(() => { const cat = document.getElementById('f-cat'); cat.value = 'alpha';
            cat.dispatchEvent(new Event('change'));
            Array.from(document.querySelectorAll('button.case')).find(b => b.textContent === 'a0').click();
            return true; })()"""
        )
        loads = page.loads()
        release("a1", "b1")
        later = poll(
            "a reloaded page with the next two cases, its filter and open case kept",
            lambda: page.eval(SNAPSHOT),
            lambda s: s["live"] is not None and s["live"]["committed"] == 12 and s["drawer"] is not None,
        )
        assert page.loads() > loads  # it reloaded itself
        assert later["rows"] == 4 and later["shown"] == "2 of 4 cases" and later["category"] == "alpha"
        assert later["drawer"] == "a0 (gated)" and later["hash"] == "#case=a0"
        assert later["notice"].startswith("Running: 12 of 18 planned trials done.")
        assert later["live"]["seq"] > first["live"]["seq"]
        release("a2", "b2")
        runner.join(240)
        assert not runner.is_alive(), "hung: the run did not end"
        (report,) = ran
        assert isinstance(report, RunReport) and report.completed and report.committed == 18, report
        assert live.error is None
        last = poll(
            "the run's last page",
            lambda: page.eval(SNAPSHOT),
            lambda s: s["live"] is None and s["drawer"] is not None,
        )
        assert last["notice"] is None and last["rows"] == 6 and last["shown"] == "3 of 6 cases"
        assert last["category"] == "alpha" and last["drawer"] == "a0 (gated)" and last["hash"] == "#case=a0"
        assert last["kept"] == 0  # the last page drops what the reloads carried over
        # it stops reloading: no load after several of the live page's reload periods
        loads = page.loads()
        page.pump(4 * later["live"]["refresh"])
        assert page.loads() == loads
        assert page.eval("document.getElementById('drawer-title').textContent") == "a0 (gated)"
        assert page.problems() == []
        assert [url for url in page.requests() if not url.startswith("file://")] == []
    finally:
        release(*CASES)  # a failed test leaves no trial waiting
        runner.join(240)


@pytest.mark.slow
def test_a_page_whose_run_stopped_writing_stops_reloading(tmp_path: Path, open_page: Any) -> None:
    """A live page that stays the same (its run was killed) reloads until ``stale`` seconds passed
    without news, then says so and stops."""
    trials = write_trials(tmp_path / "t.jsonl", 4, 3, seed=1)
    live = {"seq": 7, "committed": 12, "planned": 40, "refresh": 0.2, "stale": 0.6}
    page = open_page(write_report(tmp_path / "live.html", [trials], settings=ReportSettings(live=live)))
    notice = poll(
        "the notice that it stopped reloading",
        # read once the page has loaded: its load event is then in, counted by page.loads()
        lambda: page.eval(
            "document.readyState === 'complete' ? document.getElementById('live').textContent : null"
        ),
        lambda text: "stopped reloading" in text,
    )
    # the seconds it waited are at least the stale time (more on a loaded machine)
    assert re.fullmatch(
        r"Running, but nothing new for [1-9]\d* s: stopped reloading \(reload the page to look again\)\.",
        notice,
    ), notice
    assert page.loads() >= 2  # it reloaded while the page might still change
    loads = page.loads()
    page.pump(4 * live["refresh"])
    assert page.loads() == loads
    assert page.problems() == []
