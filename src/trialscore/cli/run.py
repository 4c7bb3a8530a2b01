"""``trialscore run``: run every case of a suite several times, grade, aggregate, write the results.

The runner's modules (Pydantic schemas, httpx, SQLite) are imported inside the command, so the
other commands never pay for them.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from trialscore.cli._app import (
    EXIT_BAD_INPUT,
    EXIT_INTERRUPTED,
    EXIT_NOTHING_GRADED,
    EXIT_STORE_FAILED,
    app,
    console,
    errors,
)
from trialscore.errors import EvaluationError, StoreError
from trialscore.examples import demo_suite_path

if TYPE_CHECKING:
    from trialscore.runner.distributed.options import Distribution

__all__ = ["run"]


def _suite_path(suite: Path | None, demo: bool) -> Path:
    if demo and suite is not None:
        raise EvaluationError("give either a suite file or --demo, not both")
    if demo:
        return demo_suite_path()
    if suite is None:
        raise EvaluationError("a suite file is required (or --demo for the bundled demo suite)")
    return suite


def _distribution(workers: int | None, backend: str | None, address: str | None) -> Distribution | None:
    """The workers asked for (None: a single-process run)."""
    from trialscore.runner.distributed.options import Distribution

    if backend is None and address is not None:
        backend = "ray"
    if backend is None and workers is None:
        return None
    return Distribution(backend or "local", workers, address)  # type: ignore[arg-type]


@app.command()
def run(
    suite: Annotated[Path | None, typer.Argument(help="The suite YAML file.", show_default=False)] = None,
    trials: Annotated[int | None, typer.Option(help="Trials per case (overrides the suite).", min=1)] = None,
    target: Annotated[
        list[str] | None, typer.Option(help="Run only this target (repeat for several).", show_default=False)
    ] = None,
    concurrency: Annotated[int | None, typer.Option(help="Trials in flight at once.", min=1)] = None,
    out: Annotated[
        Path | None, typer.Option(help="Directory for trials.jsonl, cases.jsonl, summary.json.")
    ] = None,
    resume: Annotated[
        str | None,
        typer.Option(
            metavar="RUN_ID",
            help="Finish an interrupted run without redoing its trials (the store keeps its suite: "
            "no suite file needed).",
        ),
    ] = None,
    store: Annotated[
        Path | None, typer.Option(help="SQLite run store.  [default: .trialscore/store.sqlite]")
    ] = None,
    demo: Annotated[
        bool, typer.Option("--demo", help="Run the bundled demo suite against the simulated agent.")
    ] = False,
    progress: Annotated[bool, typer.Option(help="Show the live progress bar.")] = True,
    workers: Annotated[
        int | None,
        typer.Option(
            help="Run the trials in N worker processes (or N Ray actors with --backend ray; "
            "default: one per CPU of the cluster).",
            min=1,
            show_default=False,
        ),
    ] = None,
    backend: Annotated[
        str | None,
        typer.Option(
            metavar="local|ray", help="Where workers run: local processes or Ray actors.", show_default=False
        ),
    ] = None,
    address: Annotated[
        str | None,
        typer.Option(
            help="The Ray cluster to join with --backend ray (ray://host:10001, auto).", show_default=False
        ),
    ] = None,
) -> None:
    """Run every case of a suite several times, grade, aggregate, and write the results.

    Example: trialscore run suite.yaml --trials 10 --concurrency 16 --out results/

    With --workers N (or --backend ray) the trials run in worker processes or Ray actors; the
    command stays the store's only writer and every trial is committed exactly once.

    Exit status: 0 the run completed (some trials may have errored: see the errors it prints);
    2 bad input (the suite, an option, an unknown run id, an unset API key variable);
    3 the run completed but every trial errored, so no trial could be graded;
    74 the run store cannot be written or read; 130 interrupted (resume it).
    """
    from trialscore.runner.orchestrator import DEFAULT_STORE, RunOptions, run_suite, stored_suite
    from trialscore.runner.outputs import write_outputs
    from trialscore.runner.suite import load_suite
    from trialscore.runner.summary import build_summary
    from trialscore.runner.table import print_run

    try:
        selected = tuple(target) if target else None
        if resume is not None and suite is None and not demo:
            loaded = stored_suite(resume, store or DEFAULT_STORE, selected)
        else:
            loaded = load_suite(_suite_path(suite, demo), targets=selected)
        options = RunOptions(
            trials=trials,
            targets=tuple(target) if target else None,
            concurrency=concurrency,
            out_dir=out,
            resume=resume,
            progress=progress,
            distributed=_distribution(workers, backend, address),
            **({"store": store} if store is not None else {}),
        )
        report = run_suite(loaded, options, errors)
        if not report.completed:
            errors.print(
                f"[yellow]interrupted:[/yellow] {report.committed} of {report.planned} trials are committed "
                f"in {escape(str(report.store))} (run {report.run_id}).\n"
                f"Resume with: {escape(report.resume_command)}",
                soft_wrap=True,
            )
            raise typer.Exit(EXIT_INTERRUPTED)
        files = write_outputs(report)
    except StoreError as exc:
        errors.print(f"[red]error:[/red] {escape(str(exc))}", highlight=False, soft_wrap=True)
        raise typer.Exit(EXIT_STORE_FAILED) from exc
    except EvaluationError as exc:
        errors.print(f"[red]error:[/red] {escape(str(exc))}", highlight=False, soft_wrap=True)
        raise typer.Exit(EXIT_BAD_INPUT) from exc
    summary = build_summary(report)
    print_run(report, summary, console)
    console.print(
        f"run {report.run_id}: {report.ran_now} trials run now, {report.committed} stored, "
        f"{report.elapsed_s:.1f} s; results in {files.trials.parent}",
        soft_wrap=True,
    )
    if summary["errors"]["all_errored"]:
        errors.print(
            f"[red]error:[/red] every trial of run {report.run_id} errored: no trial could be graded "
            f"(exit status {EXIT_NOTHING_GRADED}); the errors are listed above and in summary.json",
            highlight=False,
            soft_wrap=True,
        )
        raise typer.Exit(EXIT_NOTHING_GRADED)
