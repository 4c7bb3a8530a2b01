"""``trialscore run``: run every case of a suite several times, grade, aggregate, write the results.

The runner's modules (Pydantic schemas, httpx, SQLite) are imported inside the command, so the
other commands never pay for them.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from trialscore._words import plural
from trialscore.cli import _app
from trialscore.cli._app import (
    EXIT_GATE_FAILED,
    EXIT_INTERRUPTED,
    EXIT_NOT_JUDGED,
    EXIT_NOTHING_GRADED,
    app,
    console,
    errors,
)
from trialscore.cli._gates import AnnotationsOption, RunChecks, finish_run, judge_run
from trialscore.cli._options import AllowPartialOpt, bad_input
from trialscore.cli.compare import GateOption
from trialscore.errors import EvaluationError
from trialscore.examples import demo_suite_path

if TYPE_CHECKING:
    from trialscore.report.live import LiveReport

__all__ = ["run"]


def _suite_path(suite: Path | None, demo: bool) -> Path:
    if demo and suite is not None:
        raise EvaluationError("give either a suite file or --demo, not both")
    if demo:
        return demo_suite_path()
    if suite is None:
        raise EvaluationError("a suite file is required (or --demo for the bundled demo suite)")
    return suite


def _print_dry_run(suite: Any, options: Any) -> None:
    from trialscore.runner.dryrun import plan_run

    plan = plan_run(suite, options)
    shown = ", ".join(plan.case_ids[:20]) + (", ..." if len(plan.case_ids) > 20 else "")
    console.print(
        f"dry run of suite {escape(plan.suite)!r}: {plural(len(plan.case_ids), 'case')}: {escape(shown)}",
        soft_wrap=True,
    )
    for target in plan.targets:
        cost = "unknown" if target.estimated_cost_usd is None else f"${target.estimated_cost_usd:.4g}"
        history = f"{plural(target.history_trials, 'earlier trial')} in the store" + (
            f", mean ${target.mean_cost_per_trial:.4g} per trial"
            if target.mean_cost_per_trial is not None
            else ""
        )
        prices = " (price table)" if target.prices is not None else ""
        planned = f"{plural(target.trials, 'trial')}; estimated cost {cost}{prices}"
        console.print(f"  target {escape(target.target)}: {planned}; {history}", soft_wrap=True)
    total = "unknown" if plan.estimated_cost_usd is None else f"${plan.estimated_cost_usd:.4g}"
    console.print(f"estimated total {total}; nothing was run or stored", soft_wrap=True)


def _live_report(path: Path | None) -> LiveReport | None:
    """The live report ``--report FILE`` writes while the run goes (None without the flag)."""
    if path is None:
        return None
    if str(path).startswith("-"):  # `--report --junit x.xml`: the next flag was taken as the file
        raise EvaluationError(
            f"--report takes the HTML file to write (--report report.html); got {str(path)!r}"
        )
    from trialscore.report.live import LiveReport

    return LiveReport(path)


@contextmanager
def _flag_words() -> Iterator[None]:
    """Word a bad option with its flag: ``--margin must ...`` for the library's ``margin must ...``."""
    from trialscore.errors import OptionError

    try:
        yield
    except OptionError as exc:
        raise EvaluationError(exc.worded("--" + exc.option.replace("_", "-"))) from exc


@app.command()
def run(
    suite: Annotated[Path | None, typer.Argument(help="The suite YAML file.", show_default=False)] = None,
    trials: Annotated[int | None, typer.Option(help="Trials per case (overrides the suite).", min=1)] = None,
    target: Annotated[
        list[str] | None, typer.Option(help="Run only this target (repeat for several).", show_default=False)
    ] = None,
    case: Annotated[
        list[str] | None,
        typer.Option(
            metavar="PATTERN",
            help="Run only the cases whose id matches this glob pattern (repeat for several).",
            show_default=False,
        ),
    ] = None,
    category: Annotated[
        list[str] | None,
        typer.Option(
            metavar="NAME",
            help="Run only the cases of this category (repeat for several).",
            show_default=False,
        ),
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
    fail_under: Annotated[
        list[str] | None,
        typer.Option(
            "--fail-under",
            metavar="METRIC=BAR",
            help="Gate: exit 1 when a target's metric is below BAR, e.g. pass@1=0.8, pass^3=0.5, avg=0.7 "
            "(any metric at any k; repeat for several; judged by --gate-rule).",
            show_default=False,
        ),
    ] = None,
    gate_rule: Annotated[
        str,
        typer.Option(
            "--gate-rule",
            help="How --fail-under judges: 'point' (the estimate >= BAR) or 'confident' (the lower end of "
            "its 95% interval >= BAR).",
        ),
    ] = "point",
    max_error_rate: Annotated[
        float | None,
        typer.Option(
            "--max-error-rate", help="Gate: exit 1 when a target's share of errored trials is above this."
        ),
    ] = None,
    baseline: Annotated[
        str | None,
        typer.Option(
            "--baseline",
            metavar="RUN",
            help="Compare with this run at the end (a run id, latest, latest~N, or a results path): pass@1 "
            "paired per case, as 'trialscore compare'.",
        ),
    ] = None,
    fail_on: Annotated[
        GateOption,
        typer.Option("--fail-on", help="'regression': exit 1 on a significant regression vs --baseline."),
    ] = GateOption.none,
    junit: Annotated[
        Path | None,
        typer.Option("--junit", metavar="PATH", help="Write JUnit XML (a testcase per case and target)."),
    ] = None,
    annotations: Annotated[
        AnnotationsOption,
        typer.Option("--annotations", help="'github': print ::error lines for failed and regressed cases."),
    ] = AnnotationsOption.none,
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run",
            help="Show the cases, trials and estimated cost (price table and the store's history); "
            "run and store nothing.",
        ),
    ] = False,
    adaptive: Annotated[
        bool | None,
        typer.Option(
            "--adaptive/--fixed",
            help="Stop a case once no outcome of its remaining trials can change its verdict "
            "(same verdicts as the fixed run).  [default: the suite's execution.adaptive]",
            show_default=False,
        ),
    ] = None,
    sequential: Annotated[
        bool | None,
        typer.Option(
            "--sequential/--no-sequential",
            help="With --adaptive: also stop a mean/ci95 case once an anytime-valid confidence "
            "sequence clears or misses its threshold (error rate <= --alpha).",
            show_default=False,
        ),
    ] = None,
    alpha: Annotated[
        float | None,
        typer.Option(help="Error rate of --sequential.  [default: the suite's execution.alpha, 0.05]"),
    ] = None,
    margin: Annotated[
        float,
        typer.Option(
            help="With --baseline and --adaptive: differences of pass rate smaller than this count as no "
            "difference (the comparison may stop on 'no_difference'; 0 turns that verdict off).",
        ),
    ] = 0.05,
    html_report: Annotated[
        Path | None,
        typer.Option(
            "--report",
            metavar="FILE",
            help="Write the offline HTML report to FILE while the run goes (it reloads itself in a browser "
            "until the run ends) and once more at its end.",
            show_default=False,
        ),
    ] = None,
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
    seed: Annotated[
        int | None,
        typer.Option(
            help="Seed of the run (overrides the suite's execution.seed).", min=0, show_default=False
        ),
    ] = None,
    limit: Annotated[
        int | None,
        typer.Option(
            metavar="N",
            help="Run only the first N cases (after --case / --category): a smoke test.",
            min=1,
            show_default=False,
        ),
    ] = None,
    max_cost: Annotated[
        float | None,
        typer.Option(
            "--max-cost",
            metavar="USD",
            help="Budget of the whole run in USD (overrides execution.cost_limit_usd).",
            show_default=False,
        ),
    ] = None,
    timeout: Annotated[
        float | None,
        typer.Option(
            metavar="S",
            help="Seconds a trial may take (overrides every case's timeout_s).",
            show_default=False,
        ),
    ] = None,
    retries: Annotated[
        int | None,
        typer.Option(
            metavar="N",
            help="Retries of a trial that failed transiently (overrides every case's retries).",
            min=0,
            show_default=False,
        ),
    ] = None,
    allow_partial: AllowPartialOpt = False,
) -> None:
    """Run every case of a suite several times, grade, aggregate, and write the results.

    Example: trialscore run suite.yaml --trials 10 --concurrency 16 --out results/

    Gates: trialscore run suite.yaml --fail-under pass@1=0.8 --max-error-rate 0.05 --baseline latest
    --fail-on regression --junit junit.xml --annotations github

    --dry-run prints what would run and its estimated cost, and stops.

    --case and --category select cases (a case runs when it matches any --case pattern and
    is in any --category); a resumed run keeps the selection it was started with.

    With --workers N (or --backend ray) the trials run in worker processes or Ray actors; the
    command stays the store's only writer and every trial is committed exactly once.

    Exit status: 0 the run completed and every gate passed (some trials may have errored: see the
    errors it prints); 1 a gate failed; 2 bad input (the suite, an option, an unknown run id, an unset
    API key variable, a gate no run of these trials could judge: refused before any trial runs); 3 the run
    could not judge: every trial errored, the cost limit stopped it before any trial was scored, or a gate
    lacked the scored trials it needs (errored trials are never failures); 73 an output file cannot be
    written (a full disk: the previous file, or none, is left); 74 the run store cannot be written or
    read; 130 interrupted (resume it).

    --seed, --limit, --max-cost, --timeout and --retries override the suite's settings for this run
    (kept by --resume).
    When GITHUB_STEP_SUMMARY is set, a Markdown summary is appended to that file.
    """
    with bad_input():  # bad input exits 2 (a plugin that cannot load too), the store 74, an output file 73
        from trialscore.runner.baseline import compare_while_running
        from trialscore.runner.dryrun import planned_trials
        from trialscore.runner.gates import check_fits
        from trialscore.runner.options import RunOptions
        from trialscore.runner.orchestrator import execute_suite, stored_suite
        from trialscore.runner.outputs import write_outputs
        from trialscore.runner.store import DEFAULT_STORE
        from trialscore.runner.suite import load_suite
        from trialscore.runner.summary import build_summary
        from trialscore.runner.table import print_run

        selected = tuple(target) if target else None
        if resume is not None and suite is None and not demo:
            loaded = stored_suite(resume, store or DEFAULT_STORE, selected)
        else:
            loaded = load_suite(_suite_path(suite, demo), targets=selected)
        checks = RunChecks.prepare(
            fail_under or [],
            gate_rule,
            max_error_rate,
            baseline,
            fail_on is GateOption.regression,
            junit,
            annotations,
            store,
            suite=loaded.name,
            allow_partial=allow_partial,
        )
        with _flag_words():
            options = RunOptions.of(
                trials=trials,
                target=target or None,
                case=case or None,
                category=category or None,
                concurrency=concurrency,
                out=out,
                store=store,
                resume=resume,
                progress=progress,
                adaptive=adaptive,
                sequential=sequential,
                alpha=alpha,
                baseline=baseline,
                margin=margin,
                allow_partial=allow_partial,
                workers=workers,
                backend=backend,
                address=address,
                seed=seed,
                limit=limit,
                max_cost=max_cost,
                timeout=timeout,
                retries=retries,
            )
            if resume is None:
                check_fits(checks.thresholds, planned_trials(loaded, options))
            if baseline is not None and resume is None and options.rule(loaded) is not None:
                options = compare_while_running(loaded, options, checks.baseline)  # compared while running
            else:
                options = replace(options, baseline=None)  # compared at the end, by the gates
        if dry_run:
            _print_dry_run(loaded, options)
            return
        live = _live_report(html_report)
        if live is not None:
            options = replace(options, observer=live)
        if _app.owns_process:  # descendants that leave a program's tree are re-parented to this process
            from trialscore.runner.reaper import enable_subreaper

            enable_subreaper()
        report = execute_suite(loaded, options, errors)
        if live is not None and live.error is not None:  # the run stands: a warning, not an error
            errors.print(
                f"warning: {live.error}; the run is stored (`trialscore report {report.run_id} --store "
                f"{report.store} --out FILE` writes its report)",
                markup=False,
                highlight=False,
                soft_wrap=True,
            )
        if not report.completed:
            errors.print(
                f"[yellow]interrupted:[/yellow] {report.committed} of {plural(report.planned, 'trial')} "
                "committed "
                f"in {escape(str(report.store))} (run {report.run_id}).\n"
                f"Resume with: {escape(report.resume_command)}",
                soft_wrap=True,
            )
            raise typer.Exit(EXIT_INTERRUPTED)
        verdict = judge_run(report, checks)
        files = write_outputs(report, extra={"gates": verdict.to_dict()} if checks.gated else None)
        summary = build_summary(report)
        print_run(report, summary, console)
        console.print(
            f"run {report.run_id}: {plural(report.ran_now, 'trial')} run now, {report.committed} stored, "
            f"{report.elapsed_s:.1f} s; results in {files.trials.parent}",
            soft_wrap=True,
        )
        if live is not None and live.error is None:
            console.print(f"report: {live.path}", markup=False, highlight=False, soft_wrap=True)
        finish_run(report, summary, verdict, checks)
    if summary["errors"]["all_errored"]:
        errors.print(
            f"[red]error:[/red] every trial of run {report.run_id} errored: no trial could be graded "
            f"(exit status {EXIT_NOTHING_GRADED}); the errors are listed above and in summary.json",
            highlight=False,
            soft_wrap=True,
        )
        raise typer.Exit(EXIT_NOTHING_GRADED)
    if not verdict.judged:
        errors.print(
            f"[red]error:[/red] run {report.run_id} could not judge: no trial was scored (the cost limit "
            f"stopped it first; exit status {EXIT_NOTHING_GRADED})",
            highlight=False,
            soft_wrap=True,
        )
        raise typer.Exit(EXIT_NOTHING_GRADED)
    if verdict.failed:
        failed = [f"{g.metric} of {g.target}" for g in verdict.gates if g.judged and not g.passed]
        errors.print(f"gate failed: {', '.join(failed)}", markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(EXIT_GATE_FAILED)
    if verdict.unjudged:
        unjudged = ", ".join(f"{g.metric} of {g.target}" for g in verdict.unjudged)
        errors.print(
            f"gate could not judge (exit status {EXIT_NOT_JUDGED}): {unjudged} (why: the gates above)",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
        raise typer.Exit(EXIT_NOT_JUDGED)
