"""One offline HTML report of trial results: what the numbers mean, case by case.

:func:`build_report` reads runs (anything ``trialscore score`` reads), computes every figure
with the library functions the commands use, and returns one self-contained HTML page: header
and headline metrics with their intervals, the cases with their trial strips and drawer, the
flaky cases, pass@k / pass^k curves, the flips and paired verdicts against a baseline, the
errors grouped, and the trends over dated runs.  The page loads nothing (inline CSS, JS and
SVG; data as escaped JSON) and the same inputs give the same bytes.

Modules: :mod:`~trialscore.report.runs` (reading runs into cases), :mod:`~trialscore.report.context`
(what the panels share: settings, case rows, flips), :mod:`~trialscore.report.panels` (the page's
sections, one module each, registered in one place; :mod:`~trialscore.report.panel` says what a
panel is), :mod:`~trialscore.report.drawer`, :mod:`~trialscore.report.outputs`,
:mod:`~trialscore.report.calls` and :mod:`~trialscore.report.worddiff` (the trials as the page shows
them), :mod:`~trialscore.report._svg` (charts), :mod:`~trialscore.report.render` (Jinja2 with
autoescape; templates in ``report/templates``) and :mod:`~trialscore.report.live` (the report of a
run while it goes).

>>> import tempfile, pathlib, json
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> rows = [{"case_id": c, "trial": t, "target": "m", "passed": (t + i) % 3 > 0,
...          "verdict": "pass" if (t + i) % 3 > 0 else "fail"} for i, c in enumerate("abc") for t in range(3)]
>>> _ = (folder / "trials.jsonl").write_text("\\n".join(json.dumps(row) for row in rows))
>>> html = build_report([folder / "trials.jsonl"])
>>> html.startswith("<!DOCTYPE html>") and "pass@3" in html
True
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trialscore.report._collector import collector_paused
from trialscore.report.context import ReportContext, ReportSettings
from trialscore.report.render import render_page
from trialscore.report.runs import RunData, read_run

if TYPE_CHECKING:
    from trialscore.results.readers import RecordSource

__all__ = ["ReportSettings", "build_report", "write_report"]


def build_report(
    runs: Sequence[str | Path | RunData],
    baseline: str | Path | RunData | None = None,
    settings: ReportSettings | None = None,
    judged: str | Path | RecordSource | None = None,
    human: str | Path | None = None,
    **read: Any,
) -> str:
    """The HTML report of ``runs[-1]`` (earlier runs are its history), against ``baseline`` if given.

    Parameters
    ----------
    runs : files or folders (anything ``score`` reads) or :class:`~trialscore.report.runs.RunData`
    baseline : the run to compare with (per-case flips and paired verdicts)
    settings : grouping (``by``), interval level, error policy, run dates
    judged : the reported run as the runner's records (a path or stored run; default ``runs[-1]``
        when it is a path): the judges panel (:mod:`~trialscore.report.panels.judges`)
    human : human labels of the reported run: the judges panel shows the judge's bias against them
    **read : reading options of :func:`~trialscore.report.runs.read_run` (``columns``,
        ``skip_invalid``, ``input_format``)
    """
    last = len(runs) - 1  # the reported run: the only one whose trial detail the page shows
    loaded = [
        run if isinstance(run, RunData) else read_run(run, **read, detail=index == last)
        for index, run in enumerate(runs)
    ]
    base = None
    if baseline is not None:  # its outputs: the diffs of the cases whose verdict flipped
        base = baseline if isinstance(baseline, RunData) else read_run(baseline, **read, detail="outputs")
    if judged is None and not isinstance(runs[-1], RunData):
        judged = runs[-1]
    with collector_paused():  # read_run pauses it too
        return render_page(ReportContext(loaded, base, settings or ReportSettings(), judged, human))


def write_report(out: str | Path, *args: Any, **kwargs: Any) -> Path:
    """Write :func:`build_report` ``(*args, **kwargs)`` to ``out`` (UTF-8) whole or not at all; return
    the path.

    Raises
    ------
    OutputError
        When ``out`` cannot be written (a full disk, a missing folder): it holds what it held before.
    """
    from trialscore._files import write_atomic

    path = Path(out)
    write_atomic(path, [build_report(*args, **kwargs)], "the report")
    return path
