"""``trialscore track``: pass@k per task category over runs, each category's trend and advice."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from trialscore.cli._app import app
from trialscore.cli._options import (
    JSON_VERSION,
    FormatOpt,
    OutputFormat,
    ReadOptions,
    bad_input,
    parse_ks,
    read_counts,
    reading_options,
    split,
)
from trialscore.cli._render import Report, Section, render
from trialscore.errors import EvaluationError

if TYPE_CHECKING:
    from trialscore.core.bank import Bank

__all__ = ["track"]


def _run_dates(files: Sequence[Path], dates: str | None) -> list[date]:
    """One date per run file: ``--dates`` in file order, else each file's modification date."""
    if dates is None:
        return [datetime.fromtimestamp(path.stat().st_mtime).date() for path in files]
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


@app.command()
@reading_options(clusters=False)
def track(
    files: Annotated[
        list[Path],
        typer.Argument(help="One trial file (or run folder) per run, e.g. last week's and today's."),
    ],
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

    The latest run of each category is compared with the run before it on pass@1 per item (paired on
    shared case ids): improving or declining only when the change is significant at --alpha.

    Example: trialscore track week1.jsonl week2.jsonl --by category --dates 2024-01-08,2024-01-15
    """
    with bad_input():
        from trialscore.compat.tracking import track_category, trend_advice

        history: dict[str, list[tuple[date, Bank]]] = {}
        for path, when in zip(files, _run_dates(files, dates), strict=True):
            for group in read_counts([path], split(by), read).groups():
                name = ", ".join("—" if value is None else str(value) for _, value in group.key) or "all"
                history.setdefault(name, []).append((when, group.bank()))
        ks = parse_ks(k) or [1]
        snapshots = [track_category(name, runs, ks=ks, alpha=alpha) for name, runs in sorted(history.items())]
    advice = [trend_advice(snapshot) for snapshot in snapshots]
    payload = {
        "command": "track",
        "version": JSON_VERSION,
        "categories": [
            snapshot.to_dict() | {"advice": note.to_dict()}
            for snapshot, note in zip(snapshots, advice, strict=True)
        ],
    }
    header = ["task_category", *(f"pass@{value}" for value in ks), "samples", "trend", "delta", "p"]
    header.append("last_updated")
    rows = [
        [
            snapshot.task_category,
            *(snapshot.pass_at_k[value] for value in ks),
            snapshot.samples,
            snapshot.trend,
            None if snapshot.comparison is None else snapshot.comparison.delta,
            None if snapshot.comparison is None else snapshot.comparison.p_value,
            snapshot.last_updated.isoformat(),
        ]
        for snapshot in snapshots
    ]
    title = f"pass@k per {by} over {len(files)} run(s)"
    section = Section(header, rows, title=title, notes=[note.message for note in advice])
    render(Report(payload, [section]), output)
