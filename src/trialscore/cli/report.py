"""``trialscore report``: one offline HTML file showing what the numbers mean, case by case."""

from __future__ import annotations

from datetime import date
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

import typer

from trialscore.cli._app import app, console, errors
from trialscore.cli._options import ReadOptions, bad_input, reading_options, split, stored_or_given
from trialscore.errors import EvaluationError

if TYPE_CHECKING:
    from trialscore.report.runs import RunData
    from trialscore.results.readers import RecordSource

__all__ = ["report"]


class ReportBy(str, Enum):
    """What the headline, curves and verdicts are grouped by."""

    target = "target"
    category = "category"


def _dates(text: str | None) -> tuple[date, ...] | None:
    if text is None:
        return None
    out = []
    for part in split(text):
        try:
            out.append(date.fromisoformat(part))
        except ValueError as exc:
            raise EvaluationError(f"--dates entries must be ISO dates (YYYY-MM-DD); got {part!r}") from exc
    return tuple(out)


def _read(
    source: Path | str | RecordSource, read: ReadOptions, detail: bool | Literal["outputs"] = False
) -> RunData:
    """One run, as :func:`~trialscore.cli._options.stored_or_given` resolved it; ``detail``: with each
    trial's detail (the reported run's drawer shows it), or ``"outputs"``: with its outputs (a
    baseline's, for the diffs)."""
    from trialscore.cli._options import warn_skipped_rows
    from trialscore.report.runs import read_run
    from trialscore.results.readers import RecordSource

    columns = read.columns()
    if not isinstance(source, RecordSource):  # a path, a glob or a URL
        run = read_run(
            source, columns, read.skip_invalid, read.input_format, detail=detail, scorer=read.scorer
        )
    else:  # a run of the store (a run id, latest, latest~N): its records, as its trials.jsonl holds them
        from trialscore.report.asked import asked_of

        asked = None
        if detail is True:  # what each case asked and expected, from the suite the store kept
            asked = asked_of(_stored_cases(read.store, source.label.removeprefix("run ")))
        run = read_run(source, columns, read.skip_invalid, detail=detail, asked=asked)
    warn_skipped_rows(run.rows_skipped, run.first_skipped)
    for note in run.partial:
        errors.print(f"warning: {note}", markup=False, highlight=False, soft_wrap=True)
    return run


def _stored_cases(store: Path | None, run_id: str) -> list[dict[str, object]]:
    """Each case's id, input and expected value from the suite a stored run was started with, as its
    ``cases.jsonl`` holds them; none when the store kept no suite text or it no longer reads."""
    from trialscore.runner.outputs import case_fields
    from trialscore.runner.store import DEFAULT_STORE, open_history
    from trialscore.runner.suite import suite_from_text

    with open_history(store if store is not None else DEFAULT_STORE) as opened:
        info = opened.run(run_id)
    if info.suite_text is None:
        return []
    path = Path(info.suite_path) if info.suite_path is not None else None
    try:
        suite = suite_from_text(info.suite_text, info.suite_path or run_id, path, environment=False)
    except EvaluationError:  # a dataset file moved since: the drawer shows the trials without them
        return []
    return [{"eval_id": case.id, **case_fields(case)} for case in suite.cases]


@app.command()
@reading_options(clusters=False)
def report(
    runs: Annotated[
        list[Path],
        typer.Argument(
            help="Runs (anything 'score' reads: a run folder, a trial file, another tool's log, a run id "
            "of the store, latest~N); the last is reported, earlier ones are its history for the trends.",
        ),
    ],
    out: Annotated[Path, typer.Option("--out", "-o", help="The HTML file to write.")] = Path("report.html"),
    baseline: Annotated[
        Path | None,
        typer.Option("--baseline", help="A run to compare with: per-case flips, paired verdicts."),
    ] = None,
    by: Annotated[
        ReportBy, typer.Option("--by", help="Group headline, curves and verdicts by target or category.")
    ] = ReportBy.target,
    dates: Annotated[
        str | None,
        typer.Option(
            "--dates", help="Comma-separated ISO date of each run (default: its trials' started_at)."
        ),
    ] = None,
    level: Annotated[float, typer.Option("--level", help="Confidence level of intervals.")] = 0.95,
    human: Annotated[
        Path | None,
        typer.Option(
            "--human", help="Human labels of the reported run: the judges panel shows the judge's bias."
        ),
    ] = None,
    read: ReadOptions = ReadOptions(),
) -> None:
    """Write one self-contained HTML report: cases, flaky cases, curves, flips, errors, trends.

    Example: trialscore report results/ --baseline last-week/ --out report.html
    """
    with bad_input():
        from trialscore.report import ReportSettings, write_report

        settings = ReportSettings(by=by.value, level=level, errors=read.errors.value, dates=_dates(dates))
        sources = stored_or_given([*runs, *([] if baseline is None else [baseline])], read)
        reported = sources[len(runs) - 1]  # the judges panel reads its records too
        loaded = [
            _read(source, read, detail=index == len(runs) - 1)
            for index, source in enumerate(sources[: len(runs)])
        ]
        base = None if baseline is None else _read(sources[-1], read, detail="outputs")
        path = write_report(out, loaded, base, settings, judged=reported, human=human)
    console.print(f"report: {path}", markup=False, highlight=False, soft_wrap=True)
