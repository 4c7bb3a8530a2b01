"""``trialscore runs``: the run store as history (list the runs, show one).

Every command that reads results also takes a run id of this store wherever it takes a path,
and ``latest`` / ``latest~N`` (see :mod:`trialscore.runner.history`).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated, Any

import typer

from trialscore._words import plural
from trialscore.cli._app import app
from trialscore.cli._coercion import Commands
from trialscore.cli._options import JSON_VERSION, FormatOpt, OutputFormat, bad_input
from trialscore.cli._render import Report, Section, render

__all__ = ["runs_app"]

runs_app = typer.Typer(
    cls=Commands,
    name="runs",
    help="The run store as history: list the runs, or 'runs show RUN_ID' for one run.",
    no_args_is_help=False,
    rich_markup_mode=None,
)
app.add_typer(runs_app)

StoreOpt = Annotated[
    Path | None, typer.Option("--store", help="SQLite run store.  [default: .trialscore/store.sqlite]")
]


def _store(store: Path | None) -> Path:
    from trialscore.runner.store import DEFAULT_STORE

    return DEFAULT_STORE if store is None else store


def _trials(stored: int, planned: int | None) -> str:
    """``54/150`` (stored of planned), or the stored count when the plan is unknown."""
    return str(stored) if planned is None else f"{stored}/{planned}"


@runs_app.callback(invoke_without_command=True)
def runs(
    ctx: typer.Context,
    store: StoreOpt = None,
    suite: Annotated[
        str | None, typer.Option("--suite", help="List the runs of this suite only.", show_default=False)
    ] = None,
    output: FormatOpt = OutputFormat.table,
) -> None:
    """List the stored runs, oldest first: id, suite, status, started, targets, cases, trials stored of
    planned, errored, pass@1, cost.

    Status: complete, interrupted (resume it with 'trialscore run --resume RUN_ID'), cost-limited (the
    cost limit kept trials from starting), running.

    Example: trialscore runs --suite demo --format json
    """
    if ctx.invoked_subcommand is not None:
        return
    from trialscore.runner.store import open_history

    where = _store(store)
    with bad_input(), open_history(where) as opened:
        summaries = opened.summaries(suite)
        suites = opened.suites()
    payload = {
        "command": "runs",
        "version": JSON_VERSION,
        "store": str(where),
        "suite": suite,
        "runs": [summary.to_dict() | {"partial": summary.partial} for summary in summaries],
    }
    header = ["run_id", "suite", "status", "started", "targets", "cases", "trials", "errored", "pass@1"]
    header.append("cost_usd")
    rows = [
        [
            s.run_id,
            s.suite,
            s.status,
            s.created_at[:19].replace("T", " "),
            ", ".join(s.targets),
            s.cases,
            _trials(s.trials, s.planned),
            s.errored,
            s.pass_at_1,
            s.cost_usd,
        ]
        for s in summaries
    ]
    notes = ["read a run with its id, 'latest' or 'latest~N': trialscore score latest"] if rows else []
    if any(s.partial for s in summaries):
        notes.append("trials: stored/planned; finish an interrupted run with: trialscore run --resume RUN_ID")
    if suite is None and len(suites) > 1:
        notes.append(f"runs of {len(suites)} suites ({', '.join(suites)}): --suite NAME lists one")
    if suite is not None and not rows:
        notes.append(f"no run of suite {suite!r}; the store holds runs of: {', '.join(suites) or 'none'}")
    of = "" if suite is None else f" of suite {suite}"
    title = f"{plural(len(rows), 'run')}{of} in {where}"
    render(Report(payload, [Section(header, rows, title=title, notes=notes)]), output)


def _target_rows(records: list[Any]) -> list[dict[str, Any]]:
    """Per target: cases, trials, errored, flaky and failing cases, pass@1 with its interval, cost."""
    from trialscore.results.readers import count_records
    from trialscore.results.scorecard import MetricSpec, metric_interval
    from trialscore.runner.failures import total_usd

    out = []
    for group in count_records(records, by=["target"]).groups():
        target = dict(group.key)["target"]
        scored = group.n > 0
        mine = [r for r in records if r.target == target]
        known = [r.cost_usd for r in mine if r.cost_usd is not None]
        row: dict[str, Any] = {
            "target": target,
            "cases": group.items,
            "trials": len(mine),
            "errored": int(group.errored.sum()),
            "flaky_cases": int(((group.c > 0) & (group.c < group.n)).sum()),
            "failing_cases": sorted(str(item) for item in group.item[scored & (group.c == 0)]),
            "pass_at_1": None,
            "cost_usd": total_usd(math.fsum(known)) if known else None,
        }
        if scored.any():
            row["pass_at_1"] = metric_interval(group.bank(), MetricSpec("avg")).to_dict()
        out.append(row)
    return out


@runs_app.command("show")
def show(
    run_id: Annotated[str, typer.Argument(help="A run id, 'latest' or 'latest~N'.")],
    store: StoreOpt = None,
    output: FormatOpt = OutputFormat.table,
) -> None:
    """One stored run in detail: how it was started, and per target its cases, pass@1 and cost.

    Example: trialscore runs show latest
    """
    from trialscore.runner.history import read_stored_run
    from trialscore.runner.store import open_history

    where = _store(store)
    with bad_input(), open_history(where) as opened:
        source = read_stored_run(opened, run_id)
        info = opened.run(source.label.removeprefix("run "))
        targets = _target_rows(list(source.records))
    payload = {
        "command": "runs show",
        "version": JSON_VERSION,
        "store": str(where),
        "run": {key: value for key, value in info.to_dict().items() if key != "suite_text"},
        "targets": targets,
    }
    header = ["target", "cases", "trials", "errored", "flaky", "failing", "pass@1", "low", "high", "cost_usd"]
    rows = []
    for t in targets:
        interval = t["pass_at_1"] or {}
        bounds = [interval.get("estimate"), interval.get("low"), interval.get("high")]
        counts = [t["cases"], t["trials"], t["errored"], t["flaky_cases"], len(t["failing_cases"])]
        rows.append([t["target"], *counts, *bounds, t["cost_usd"]])
    lead = f"suite {info.suite} ({info.suite_path or 'no file'}), started {info.created_at}"
    notes = [
        f"{t['target']}: failing cases {', '.join(t['failing_cases'])}" for t in targets if t["failing_cases"]
    ]
    if info.out_dir:
        notes.append(f"output folder: {info.out_dir}")
    section = Section(header, rows, title=f"run {info.run_id}", lead=lead, notes=notes)
    render(Report(payload, [section]), output)
