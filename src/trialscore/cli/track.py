"""``trialscore track``: pass@k per task category over runs, each category's trend and advice."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import date, datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from trialscore._words import plural
from trialscore.cli._app import app
from trialscore.cli._groups import judge_each
from trialscore.cli._options import (
    JSON_VERSION,
    FormatOpt,
    OutputFormat,
    ReadOptions,
    bad_input,
    parse_ks,
    read_together,
    reading_options,
    split,
)
from trialscore.cli._render import Change, Report, Section, render
from trialscore.errors import EvaluationError

if TYPE_CHECKING:
    from trialscore.compat.tracking import CategorySnapshot
    from trialscore.core.bank import Bank
    from trialscore.results.counts import GroupCounts
    from trialscore.results.readers import RecordSource

__all__ = ["track"]


def _inputs(
    files: Sequence[Path], store: Path | None, suite: str | None
) -> list[tuple[date | None, Path | RecordSource]]:
    """Each run to track with its date: a file (dated later), or a stored run (dated by its creation).

    No files: every run of the store (of ``suite`` only, when given), oldest first.
    """
    from trialscore.runner.history import dated_runs

    if not files:
        return [(date.fromisoformat(when[:10]), source) for when, source in dated_runs(store, suite=suite)]
    stored = {str(path) for path in files if not path.exists()}
    found = dict(zip(sorted(stored), dated_runs(store, sorted(stored), suite), strict=True)) if stored else {}
    out: list[tuple[date | None, Path | RecordSource]] = []
    for path in files:
        if str(path) in found:
            when, source = found[str(path)]
            out.append((date.fromisoformat(when[:10]), source))
        else:
            out.append((None, path))
    return out


def _run_dates(inputs: Sequence[tuple[date | None, Path | RecordSource]], dates: str | None) -> list[date]:
    """One date per run: ``--dates`` in order, else a stored run's creation date or a file's mtime."""
    if dates is None:
        return [
            when if when is not None else datetime.fromtimestamp(source.stat().st_mtime).date()  # type: ignore[union-attr]
            for when, source in inputs
        ]
    files = inputs
    given = split(dates)
    if len(given) != len(files):
        raise EvaluationError(
            f"--dates must give one date per run file; got {len(given)} dates for {len(files)} files"
        )
    out = []
    for text in given:
        try:
            out.append(date.fromisoformat(text))
        except ValueError as exc:
            raise EvaluationError(f"--dates entries must be ISO dates (YYYY-MM-DD); got {text!r}") from exc
    return out


def _evidence(snapshot: CategorySnapshot) -> list[Change | float | None]:
    """Slope per run and its p (three or more runs), the change at the latest run, its p and its MDE."""
    if snapshot.history is not None:
        h = snapshot.history
        return [Change(h.slope), h.slope_p, h.slope_mdd, Change(h.change), h.change_p, h.change_mdd]
    if snapshot.comparison is not None:
        c = snapshot.comparison
        return [None, None, None, Change(c.delta), c.p_value, c.mde]
    return [None] * 6


@app.command()
@reading_options(clusters=False, graders=True)
def track(
    files: Annotated[
        list[Path] | None,
        typer.Argument(
            help="One trial file, run folder or stored run id per run, oldest first; none: every run of "
            "the store (--store), dated by when each run started.",
            show_default=False,
        ),
    ] = None,
    by: Annotated[str, typer.Option("--by", help="Group column of the task category.")] = "category",
    dates: Annotated[
        str | None,
        typer.Option("--dates", help="Comma-separated ISO date of each run file (default: file dates)."),
    ] = None,
    k: Annotated[str, typer.Option("--k", help="Comma-separated k values to report.")] = "1,3",
    alpha: Annotated[float, typer.Option("--alpha", help="Significance level of the trend test.")] = 0.05,
    output: FormatOpt = OutputFormat.table,
    read: ReadOptions = ReadOptions(),
) -> None:
    """Track pass@k per task category over runs: each category's trend and what to do about it.

    With two runs, the latest is compared with the one before it on pass@1 per item (paired on shared
    case ids).  With three or more, every run counts: a test of the trend of pass@1 across the runs and
    a test of a change at the latest run, each at --alpha/2, so a category with no trend is flagged with
    probability at most --alpha.

    Example: trialscore track --store .trialscore/store.sqlite  (every stored run)

    Example: trialscore track week1.jsonl week2.jsonl --by category --dates 2024-01-08,2024-01-15
    """
    with bad_input():
        from trialscore.compat.tracking import track_category, trend_advice

        inputs = _inputs(files or [], read.store, read.suite)
        when = _run_dates(inputs, dates)
        groups_by = split(by)
        per_run = read_together([[source] for _, source in inputs], groups_by, read, split=_SPLIT)
        history: dict[str, list[tuple[date, Bank]]] = {}
        for counts, day in zip(per_run, when, strict=True):
            for group in counts.groups():
                if group.items:  # a run whose every trial of the group errored adds no point to its history
                    history.setdefault(_name(group, groups_by), []).append((day, group.bank()))
        ks = parse_ks(k) or [1]
        judged, untested = judge_each(
            (name, {"group": name}, partial(_snapshot, track_category, name, runs, ks, alpha))
            for name, runs in sorted(history.items())
        )
        snapshots = [snapshot for _, _, snapshot in judged]
        split_by = [key for key in per_run[0].by if key not in groups_by] if per_run else []
    advice = [trend_advice(snapshot) for snapshot in snapshots]
    payload = {
        "command": "track",
        "version": JSON_VERSION,
        "by": [*split_by, *groups_by],
        "categories": [
            snapshot.to_dict() | {"advice": note.to_dict()}
            for snapshot, note in zip(snapshots, advice, strict=True)
        ],
        "not_tracked": [u.to_dict() for u in untested],
    }
    header = ["task_category", *(f"pass@{value}" for value in ks), "samples", "trend"]
    header += ["slope/run", "p_slope", "mdd/run", "change", "p_change", "mde_change", "last_updated"]
    rows = [
        [
            snapshot.task_category,
            *(snapshot.pass_at_k.get(value) for value in ks),
            snapshot.samples,
            snapshot.trend,
            *_evidence(snapshot),
            snapshot.last_updated.isoformat(),
        ]
        for snapshot in snapshots
    ]
    notes = [note.message for note in advice]
    notes += [u.line().replace("not tested", "not tracked") for u in untested]
    short = [s.task_category for s in snapshots if len(s.pass_at_k) < len(ks)]
    if short:
        notes.append(
            "pass@k left blank where a case of the latest run has fewer than k scored trials: "
            + ", ".join(short)
        )
    if split_by:
        notes.append(
            f"tracked per {', '.join(split_by)}: the runs hold more than one (--suite NAME picks a suite)"
        )
    title = f"pass@k per {by} over {plural(len(inputs), 'run')}"
    section = Section(header, rows, title=title, notes=notes)
    render(Report(payload, [section]), output)


#: Columns a history is split by wherever its runs differ in them: runs of two suites or two targets are
#: never pooled into one trend.
_SPLIT = ("suite", "target")


def _name(group: GroupCounts, by: Sequence[str]) -> str:
    """A group's name in the history: its ``--by`` values, after the suite and target that split it."""
    values = dict(group.key)
    own = ", ".join("—" if values[key] is None else str(values[key]) for key in by) or "all"
    split_by = [(key, value) for key, value in group.key if key not in by]
    if not split_by:
        return own
    return ", ".join(f"{key}={'—' if value is None else value}" for key, value in split_by) + f": {own}"


def _snapshot(
    track: Callable[..., CategorySnapshot],
    name: str,
    runs: list[tuple[date, Bank]],
    ks: list[int],
    alpha: float,
) -> CategorySnapshot:
    """A category's record at the ks its latest run has the trials for (other pass@k left blank)."""
    latest = sorted(runs, key=lambda run: run[0])[-1][1]  # the last of the latest date, as track_category
    fits = [value for value in ks if value <= latest.min_trials] or [1]
    return track(name, runs, ks=fits, alpha=alpha)
