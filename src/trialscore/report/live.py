"""The report of a run while it goes: ``trialscore run ... --report live.html``.

:class:`LiveReport` is a run observer (:class:`~trialscore.runner.observer.RunObserver`).  It keeps
the trial records the run commits and, on a thread of its own, writes the report of those
trials to its file: atomically (a reader sees the previous page or the new one, never half of
one), at most every ``interval`` seconds (2), and only when a trial was committed since the last
page.  While the run goes the page is **live**: it says how many of the planned trials are done
and reloads itself in the browser as often as a new page may come (its place, filters, sort and
open case kept); when the run ends the last page is written without that, so the browser stops
reloading.  A page whose run stopped writing (the process was killed) stops reloading on its own
once nothing new came for a minute (or ten writing intervals).

**Failures.**  A page that cannot be written (a missing or read-only folder, a full disk) never
stops the run: the file keeps the page before (or none), the next turn tries again, and
:attr:`LiveReport.error` holds the failure until a page is written; after the run it says
whether the last page is missing (``trialscore run --report`` prints it as a warning).

**Cost.**  A page is built from the committed records (each written once to a temporary trial file
the report reads; the store is not read); the building runs off the event loop, and the time
between pages grows with the time a page takes to build (at least 19 times it), so the live pages
never take more than a twentieth of one core, however large the run; the last page is built once
the trials are done.  ``benchmarks/report.py`` measures a 2,000-trial run with and without it.

>>> import tempfile, pathlib
>>> from trialscore.api import run_suite
>>> from trialscore.runner.options import RunOptions
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> live = LiveReport(folder / "live.html")
>>> options = RunOptions(trials=2, store=folder / "s.sqlite", progress=False, observer=live)
>>> report = run_suite(options=options, demo=True)
>>> page = (folder / "live.html").read_text(encoding="utf-8")
>>> live.pages >= 1, '"live":null' in page, live.error is None
(True, True, True)
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from trialscore.errors import EvaluationError, OutputError, TrialscoreError

if TYPE_CHECKING:
    from trialscore.report.context import ReportSettings
    from trialscore.results.records import TrialRecord
    from trialscore.runner.suite import Suite

__all__ = ["LiveReport"]

#: The least time between two live pages, and how often a live page reloads itself (seconds).
REFRESH_S = 2.0
#: The least share of the time between pages that building one may take (1/20: 5% of a core).
_SHARE = 19.0


class LiveReport:
    """Write the report of a run to ``path`` while it goes, and once more when it ends (see the module
    docstring).  ``interval``: the least time between two pages (seconds; the page reloads itself as
    often); ``settings``: how the report groups (its ``live`` is set here).

    After the run, :attr:`error` holds the error of the last page if it could not be written (an
    :class:`~trialscore.errors.OutputError`: the file holds the page before, or none), :attr:`pages`
    how many pages were written.
    """

    def __init__(self, path: str | Path, interval: float = REFRESH_S, settings: ReportSettings | None = None):
        from trialscore.report.context import ReportSettings

        if not interval > 0:
            raise EvaluationError(f"interval must be > 0 seconds; got {interval!r}")
        self.path = Path(path)
        self.interval = interval
        self.settings = settings or ReportSettings()
        self.pages = 0
        self.error: TrialscoreError | None = None
        self._records: list[TrialRecord] = []
        self._label = self._run_id = "run"
        self._planned = 0
        self._trials: Path | None = None
        self._dumped = 0
        self._asked: Mapping[str, tuple[object, object]] = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._written = -1  # records in the last page written
        self._wait = interval

    # -- the observer ----------------------------------------------------------------------------

    def started(self, run_id: str, suite: Suite, planned: int, earlier: Sequence[TrialRecord]) -> None:
        """Keep the run's name, plan and earlier trials; start writing pages."""
        from trialscore.report.asked import asked_of
        from trialscore.runner.outputs import case_fields

        self._label = f"run {run_id}"
        self._run_id = run_id
        self._planned = planned
        self._trials = None
        self._dumped = 0
        self._asked = asked_of({"eval_id": case.id, **case_fields(case)} for case in suite.cases)
        self._records = list(earlier)
        self._stop.clear()
        self._thread = threading.Thread(target=self._serve, name="trialscore-live-report", daemon=True)
        self._thread.start()

    def committed(self, record: TrialRecord) -> None:
        """Keep a committed trial (the next page shows it)."""
        self._records.append(record)

    def ended(self, completed: bool) -> None:
        """Stop writing live pages and write the last one (not live: the browser stops reloading)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        try:
            if self._records:
                self._write(list(self._records), live=False, completed=completed)
                self.error = None
        except TrialscoreError as exc:  # the run's result stands; the caller says the page was not written
            self.error = exc
        finally:
            if self._trials is not None:
                with contextlib.suppress(OSError):
                    self._trials.unlink()
                self._trials = None

    # -- writing -----------------------------------------------------------------------------------

    def _serve(self) -> None:
        """Write a live page whenever a trial was committed since the last one, at most every
        ``_wait`` seconds; a page that fails is retried at the next turn (the file keeps the last one)."""
        while not self._stop.wait(self._wait):
            records = list(self._records)
            if len(records) == self._written:
                continue
            started = time.perf_counter()
            try:
                self._write(records, live=True, completed=False)
            except TrialscoreError as exc:  # kept, never raised: the run goes on
                self.error = exc
                continue
            self.error = None
            self._wait = max(self.interval, _SHARE * (time.perf_counter() - started))

    def _write(self, records: list[TrialRecord], live: bool, completed: bool) -> None:
        """Build the report of ``records`` and write it atomically."""
        from trialscore._files import write_atomic
        from trialscore.report import build_report
        from trialscore.report.runs import read_run
        from trialscore.results.counts import PartialRun
        from trialscore.results.readers import RecordSource

        trials = self._dump(records)
        run = replace(read_run(trials, label=self._label, asked=self._asked), run_id=self._run_id)
        state: dict[str, float] | None = None
        if live:
            state = {"seq": self.pages, "committed": len(records), "planned": self._planned}
            state.update(refresh=self._wait, stale=max(60.0, 10 * self._wait))
        elif not completed and len(records) < self._planned:
            partial = PartialRun(self._label, "interrupted", self._planned, len(records), "trials")
            run = replace(run, partial=(*run.partial, partial.message))
        judged = RecordSource(self._label, records)  # the judges panel reads the records as they are
        html = build_report([run], settings=replace(self.settings, live=state), judged=judged)
        with contextlib.suppress(OSError):  # a folder it cannot make: write_atomic says why
            self.path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(self.path, [html], "the report")
        self.pages += 1
        self._written = len(records)

    def _dump(self, records: list[TrialRecord]) -> Path:
        """The temporary trial file the pages are read from, with ``records`` in it (each record is
        written to it once).

        Raises
        ------
        OutputError
            When it cannot be made or written (a full temporary folder): it is dropped, and the next
            page writes a new one whole.
        """
        try:
            if self._trials is None:
                handle, name = tempfile.mkstemp(prefix="trialscore-live-", suffix=".jsonl")
                os.close(handle)
                self._trials, self._dumped = Path(name), 0
            with self._trials.open("a", encoding="utf-8") as out:
                out.writelines(record.to_json_line() + "\n" for record in records[self._dumped :])
        except OSError as exc:
            if self._trials is not None:  # perhaps a cut line at its end: never read
                with contextlib.suppress(OSError):
                    self._trials.unlink()
                self._trials = None
            reason = exc.strerror or exc
            raise OutputError(f"the live report's temporary trial file cannot be written: {reason}") from exc
        self._dumped = len(records)
        return self._trials
