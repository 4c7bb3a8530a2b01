"""``trialscore run``: run every case of a suite several times, grade, aggregate, write the results.

The runner's modules (Pydantic schemas, httpx, SQLite) are imported inside the command, so the
other commands never pay for them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

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

__all__ = ["run"]


def _suite_path(suite: Path | None, demo: bool) -> Path:
    if demo and suite is not None:
        raise EvaluationError("give either a suite file or --demo, not both")
    if demo:
        return demo_suite_path()
    if suite is None:
        raise EvaluationError("a suite file is required (or --demo for the bundled demo suite)")
    return suite


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
    html_report: Annotated[
        bool,
        typer.Option("--report", help="Also write report.html, the offline HTML report, beside the results."),
    ] = False,
) -> None:
    """Run every case of a suite several times, grade, aggregate, and write the results.

    Example: trialscore run suite.yaml --trials 10 --concurrency 16 --out results/

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
        if html_report:
            from trialscore.cli.report import write_run_report

            html_path = write_run_report(files.trials.parent)
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
    if html_report:
        console.print(f"report: {html_path}", markup=False, highlight=False, soft_wrap=True)
    if summary["errors"]["all_errored"]:
        errors.print(
            f"[red]error:[/red] every trial of run {report.run_id} errored: no trial could be graded "
            f"(exit status {EXIT_NOTHING_GRADED}); the errors are listed above and in summary.json",
            highlight=False,
            soft_wrap=True,
        )
        raise typer.Exit(EXIT_NOTHING_GRADED)
