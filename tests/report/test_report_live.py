"""The live report (report/live.py): pages written atomically while a run goes, at most every
``interval`` seconds and only with news, the last page once the run ends, and a page that cannot be
written kept as a warning while the run goes on.

The observer is driven as the runner drives it (``started``, ``committed``, ``ended``) with records
of the demo suite's cases, and through real runs of the demo suite.  Nothing here times the
machine: every wait is a condition polled until a deadline, which fails as "hung".
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.report.test_report_report import page_data
from tests.waiting import until
from trialscore import _files
from trialscore.api import run_suite
from trialscore.errors import EvaluationError, OutputError
from trialscore.examples import demo_suite_path
from trialscore.report.live import REFRESH_S, LiveReport
from trialscore.results.records import TrialRecord
from trialscore.runner.options import RunOptions
from trialscore.runner.suite import Suite, load_suite

pytestmark = pytest.mark.timeout(120)

#: A short pause between pages, so that a test sees many of them.
FAST = 0.05


@pytest.fixture(scope="module")
def suite() -> Suite:
    return load_suite(demo_suite_path())


def records(suite: Suite, trials: int, start: int = 0) -> list[TrialRecord]:
    """``trials`` trials of every case of the suite from trial ``start`` on; trial 1 of each case fails."""
    out = []
    for trial in range(start, start + trials):
        for case in suite.cases:
            passed = trial != 1
            out.append(
                TrialRecord(
                    run_id="r1",
                    suite=suite.name,
                    case_id=case.id,
                    trial=trial,
                    target="sim",
                    passed=passed,
                    verdict="pass" if passed else "fail",
                    output=f"{case.id} says {trial % 2}",
                )
            )
    return out


def live_state(path: Path) -> dict[str, Any] | None:
    """The ``live`` state of the page at ``path`` (None: the run's last page)."""
    state = page_data(path.read_text(encoding="utf-8"))["live"]
    return None if state is None else dict(state)


def rows(path: Path) -> int:
    """The cases table's rows of the page at ``path``."""
    return path.read_text(encoding="utf-8").count('<tr data-s="')


@pytest.fixture
def writes(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[float, str]]]:
    """Every page written, as (time, html), in order (write_atomic as it is, recorded)."""
    written: list[tuple[float, str]] = []
    real = _files.write_atomic

    def recorded(path: Path, parts: Any, what: str) -> None:
        parts = list(parts)
        real(path, parts, what)
        written.append((time.monotonic(), "".join(parts)))

    monkeypatch.setattr(_files, "write_atomic", recorded)
    yield written


@pytest.mark.slow
def test_pages_while_the_run_goes_then_the_last_page(tmp_path: Path, suite: Suite) -> None:
    path = tmp_path / "out" / "live.html"  # its folder is made
    live = LiveReport(path, interval=FAST)
    planned = 3 * len(suite.cases)
    first = records(suite, 1)
    live.started("r1", suite, planned, first)  # a resumed run: its earlier trials are on the first page
    state = until(lambda: path.is_file() and live_state(path), "the first live page")
    assert state["committed"] == len(first) and state["planned"] == planned
    assert state["refresh"] >= FAST and state["stale"] >= 60
    html = path.read_text(encoding="utf-8")
    assert f"Running: {len(first)} of {planned} planned trials done." in html
    assert rows(path) == len(suite.cases)
    for record in records(suite, 1, start=1):
        live.committed(record)
    state = until(
        lambda: (s := live_state(path)) and s["committed"] == 2 * len(first) and s, "a page with news"
    )
    assert state["seq"] >= 1
    for record in records(suite, 1, start=2):
        live.committed(record)
    live.ended(completed=True)
    assert live_state(path) is None and live.error is None
    html = path.read_text(encoding="utf-8")
    assert 'id="live"' not in html and "interrupted" not in html
    data = page_data(html)
    assert sum(len(trials[4]) for trials in data["cases"]["trials"]) == planned  # every trial's output
    assert live.pages >= 3
    assert [item.name for item in path.parent.iterdir()] == ["live.html"]  # no temporary file left


def test_the_last_page_of_an_interrupted_run_says_so(tmp_path: Path, suite: Suite) -> None:
    path = tmp_path / "live.html"
    live = LiveReport(path, interval=FAST)
    live.started("r1", suite, 3 * len(suite.cases), [])
    for record in records(suite, 2):
        live.committed(record)
    live.ended(completed=False)
    html = path.read_text(encoding="utf-8")
    assert live_state(path) is None
    note = (
        f"run r1: the run did not finish (status interrupted): {len(suite.cases)} of {3 * len(suite.cases)}"
    )
    assert f'<p class="warn">{note} trials missing</p>' in html


@pytest.mark.slow
def test_pages_are_whole_at_any_moment(tmp_path: Path, suite: Suite) -> None:
    """A reader polling the file while pages are written sees a whole page each time (never a cut one)."""
    path = tmp_path / "live.html"
    live = LiveReport(path, interval=FAST)
    seen: list[str] = []
    done = threading.Event()

    def read() -> None:
        while not done.is_set():
            if path.is_file():
                seen.append(path.read_text(encoding="utf-8"))
            time.sleep(0.001)  # leaves the writer most of the time (the pause between pages grows with it)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        live.started("r1", suite, 4 * len(suite.cases), [])
        for trial in range(4):
            batch = records(suite, 1, start=trial)
            for record in batch:
                live.committed(record)
            pages = live.pages
            until(lambda pages=pages: live.pages > pages, f"the page after trial {trial}")
        live.ended(completed=True)
    finally:
        done.set()
        reader.join(30)
    assert not reader.is_alive(), "hung: the reader did not stop"
    assert len({page for page in seen}) >= 3  # it saw several pages
    for page in seen:
        assert page.startswith("<!DOCTYPE html>") and page.endswith("</html>\n")
        page_data(page)  # and its data parse
    assert sorted(item.name for item in tmp_path.iterdir()) == ["live.html"]


@pytest.mark.slow
def test_at_most_one_page_per_interval_and_only_with_news(
    tmp_path: Path, suite: Suite, writes: list[tuple[float, str]]
) -> None:
    path = tmp_path / "live.html"
    interval = 0.3
    live = LiveReport(path, interval=interval)
    assert LiveReport(path).interval == REFRESH_S == 2.0
    live.started("r1", suite, 40 * len(suite.cases), [])
    for trial in range(40):  # trials come much faster than pages may
        for record in records(suite, 1, start=trial):
            live.committed(record)
        time.sleep(0.01)
    until(lambda: len(writes) >= 2, "two live pages")
    committed = 40 * len(suite.cases)
    until(lambda: f'"committed":{committed},' in writes[-1][1], "the page of every trial")
    quiet = len(writes)
    time.sleep(10 * interval)  # no trial committed: no page written
    assert len(writes) == quiet
    live.ended(completed=True)
    assert len(writes) == quiet + 1 and '"live":null' in writes[-1][1]
    times = [when for when, html in writes if '"live":null' not in html]
    gaps = [later - earlier for earlier, later in itertools.pairwise(times)]
    assert gaps and min(gaps) >= interval * 0.99, gaps  # Event.wait never returns early
    assert len(times) < 40  # far fewer pages than trials


def test_a_bad_interval_is_refused(tmp_path: Path) -> None:
    with pytest.raises(EvaluationError, match="interval must be > 0 seconds; got 0"):
        LiveReport(tmp_path / "live.html", interval=0)


def test_a_page_that_cannot_be_written_is_kept_as_an_error_and_the_run_goes_on(
    tmp_path: Path, suite: Suite
) -> None:
    folder = tmp_path / "pages"
    path = folder / "live.html"
    live = LiveReport(path, interval=FAST)
    live.started("r1", suite, 3 * len(suite.cases), [])
    for record in records(suite, 1):
        live.committed(record)
    until(lambda: path.is_file(), "the first page")
    before = path.read_text(encoding="utf-8")
    folder.rename(tmp_path / "moved")  # the folder is gone and a file holds its name: no page can be written
    folder.write_text("not a folder")
    for record in records(suite, 1, start=1):
        live.committed(record)
    error = until(lambda: live.error, "the failure")
    assert (
        isinstance(error, OutputError) and str(path) in str(error) and "cannot write the report" in str(error)
    )
    assert (tmp_path / "moved" / "live.html").read_text(encoding="utf-8") == before  # the page before, whole
    folder.unlink()  # writable again: the next turn writes the page and the error is gone
    until(lambda: path.is_file() and live.error is None, "the page once it can be written")
    live.ended(completed=True)
    assert live.error is None and live_state(path) is None


def test_a_run_whose_report_cannot_be_written_completes(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("a file, not a folder")
    live = LiveReport(tmp_path / "file" / "live.html", interval=FAST)
    options = RunOptions(trials=2, store=tmp_path / "s.sqlite", progress=False, observer=live)
    report = run_suite(options=options, demo=True, write=False)
    assert report.completed and report.committed == report.planned
    assert isinstance(live.error, OutputError) and "Not a directory" in str(live.error)
    assert live.pages == 0


@pytest.mark.slow
def test_a_real_run_writes_its_pages(tmp_path: Path, writes: list[tuple[float, str]]) -> None:
    path = tmp_path / "live.html"
    live = LiveReport(path, interval=FAST)
    options = RunOptions(trials=5, store=tmp_path / "s.sqlite", progress=False, observer=live)
    report = run_suite(options=options, demo=True, write=False)
    assert report.completed and live.error is None and live.pages == len(writes)
    assert writes[-1][1] == path.read_text(encoding="utf-8") and live_state(path) is None
    assert rows(path) == 13 and f"run {report.run_id}" in writes[-1][1]
    assert 'id="h-judges"' in writes[-1][1]  # the demo's llm_judge: the judges panel, as `report` shows it
    assert all('"live":{' in html for _, html in writes[:-1])
