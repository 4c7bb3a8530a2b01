"""``trialscore plan``: how many items and trials a comparison needs to detect a change."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Annotated, Any

import typer

from trialscore.cli._app import app
from trialscore.cli._groups import judge_each
from trialscore.cli._judged import budget_report
from trialscore.cli._margin_plan import MarginPlan, margin_plan_report
from trialscore.cli._options import (
    JSON_VERSION,
    ByOpt,
    FormatOpt,
    OutputFormat,
    ReadOptions,
    bad_input,
    group_map,
    read_counts,
    reading_options,
    split,
)
from trialscore.cli._render import Report, Section, render
from trialscore.errors import EvaluationError, InsufficientDataError

__all__ = ["plan"]


@app.command()
@reading_options(clusters=False, graders=True)
def plan(
    delta: Annotated[
        float | None,
        typer.Option("--delta", help="Smallest change in pass rate to detect (either direction)."),
    ] = None,
    pass_rate: Annotated[
        float | None, typer.Option("--pass-rate", help="Expected pass rate of the baseline.")
    ] = None,
    pilot: Annotated[
        Path | None, typer.Option("--pilot", help="A pilot run's trial file (instead of --pass-rate).")
    ] = None,
    pilot_candidate: Annotated[
        Path | None,
        typer.Option(
            "--pilot-candidate", help="A pilot of the candidate too: a paired pilot (with --pilot)."
        ),
    ] = None,
    trials: Annotated[
        int | None, typer.Option("--trials", help="Trials per item (then: items needed).")
    ] = None,
    items: Annotated[int | None, typer.Option("--items", help="Items (then: trials needed).")] = None,
    between: Annotated[
        float | None, typer.Option("--between", help="Between-item variance of the differences.")
    ] = None,
    spread: Annotated[
        float | None,
        typer.Option(
            "--spread",
            help="With --pass-rate: share of the pass-rate variance between items, 0 (identical items) "
            "to below 1 (default 0.5, measured on agent evals; a pilot estimates it).",
        ),
    ] = None,
    direction: Annotated[
        str | None,
        typer.Option("--direction", help="Plan a 'decrease' or an 'increase' (default: the noisier)."),
    ] = None,
    non_inferior: Annotated[
        float | None,
        typer.Option(
            "--non-inferior",
            help="MARGIN (instead of --delta): the items and trials compare --non-inferior MARGIN needs to "
            "find the candidate no worse (a pass rate's difference; with a per-success --metric, relative: "
            "no more expensive by more than MARGIN, from a paired pilot).",
        ),
    ] = None,
    expected: Annotated[
        float | None,
        typer.Option(
            "--expected",
            help="With --non-inferior: the true candidate - baseline the power is planned at (default 0, "
            "as good); with a per-success --metric the true ratio (default 1).",
        ),
    ] = None,
    metric: Annotated[
        str | None,
        typer.Option(
            "--metric",
            help="With --non-inferior: avg (the pass rate, default) or a per-success metric "
            "(cost-per-success, latency-per-success, tokens-per-success, steps-per-success).",
        ),
    ] = None,
    alpha: Annotated[
        float, typer.Option("--alpha", help="Significance level (one-sided with --non-inferior).")
    ] = 0.05,
    power: Annotated[float, typer.Option("--power", help="Target power.")] = 0.8,
    by: ByOpt = None,
    budget: Annotated[
        float | None,
        typer.Option(
            "--budget",
            help="Model plus judge calls to spend (instead of --delta): which trials x judge calls a trial "
            "give the narrowest interval, from a --pilot run whose llm_judge has repeats.",
        ),
    ] = None,
    judge_cost: Annotated[
        float, typer.Option("--judge-cost", help="With --budget: one judge call's cost in model calls.")
    ] = 1.0,
    output: FormatOpt = OutputFormat.table,
    read: ReadOptions = ReadOptions(),
) -> None:
    """How many items and trials a comparison needs to detect a change of --delta; with --non-inferior
    MARGIN, to find the candidate no worse than the baseline by more than MARGIN; or, with --budget,
    how to split a budget of calls between trials and judge repeats.

    With --pilot (any file score reads) the variances come from the pilot, one plan per --by group.

    Example: trialscore plan --delta 0.05 --pass-rate 0.7 --trials 5
    Example: trialscore plan --non-inferior 0.05 --pilot pilot.jsonl
    """
    with bad_input():
        from trialscore.stats import plan_sample_size

        if read.per_grader and pilot is None:
            raise EvaluationError("--per-grader splits a pilot's trials per grader; give --pilot")
        if budget is not None:
            if pilot is None or delta is not None or non_inferior is not None or read.per_grader:
                raise EvaluationError(
                    "--budget plans from --pilot RUN (a run with judge repeats), without --delta, "
                    "--non-inferior or --per-grader"
                )
            render(budget_report(pilot, read, budget, judge_cost, items), output)
            return
        if non_inferior is not None:
            if delta is not None or between is not None or direction is not None:
                raise EvaluationError(
                    "--non-inferior plans a one-sided test against its margin: drop --delta, --between "
                    "and --direction (--expected sets the truth the power is planned at)"
                )
            per_success = metric is not None and metric != "avg"
            if not per_success and (pass_rate is None) == (pilot is None):
                raise EvaluationError(
                    "give exactly one of --pass-rate (the baseline's expected pass rate) or --pilot FILE "
                    f"(a pilot run); got {'both' if pilot is not None else 'neither'}"
                )
            if pilot_candidate is not None and pilot is None:
                raise EvaluationError("--pilot-candidate needs --pilot (the baseline's pilot)")
            if pilot is None and by:
                raise EvaluationError("--by reads a pilot file; give --pilot")
            ask = MarginPlan(
                non_inferior, metric, pass_rate, pilot, pilot_candidate, spread, expected, items, trials,
                alpha, power,
            )  # fmt: skip
            render(margin_plan_report(ask, split(by), read), output)
            return
        if expected is not None or metric is not None:
            raise EvaluationError("--expected and --metric go with --non-inferior MARGIN")
        if delta is None:
            raise EvaluationError(
                "give --delta (the change to detect), --non-inferior MARGIN (a margin to stay within) or "
                "--budget (calls to spend) with --pilot"
            )
        if (pass_rate is None) == (pilot is None):
            raise EvaluationError(
                "give exactly one of --pass-rate (the baseline's expected pass rate) or --pilot FILE "
                f"(a pilot run); got {'both' if pilot is not None else 'neither'}"
            )
        if pilot_candidate is not None and pilot is None:
            raise EvaluationError("--pilot-candidate needs --pilot (the baseline's pilot)")
        if pilot is None and (by or pilot_candidate):
            raise EvaluationError("--by and --pilot-candidate read a pilot file; give --pilot")
        groups_by = split(by)
        pilots: list[tuple[str, Any, Any]] = [("all", None, None)]
        if pilot is not None:
            base = group_map(read_counts([pilot], groups_by, read))
            cand = group_map(read_counts([pilot_candidate], groups_by, read)) if pilot_candidate else None
            pilots = []
            for key, group in base.items():
                if cand is not None and key not in cand:
                    raise EvaluationError(
                        f"--pilot-candidate has no group {group.label}; it has "
                        f"{sorted(g.label for g in cand.values())}"
                    )
                pilots.append((group.label, group.bank(), None if cand is None else cand[key].bank()))
        judged, untested = judge_each(
            (
                label,
                {"group": label},
                partial(
                    plan_sample_size,
                    delta,
                    pass_rate=pass_rate,
                    pilot=bank,
                    pilot_candidate=candidate_bank,
                    between=between,
                    spread=spread,
                    direction=direction,
                    items=items,
                    trials=trials,
                    alpha=alpha,
                    power=power,
                ),
            )
            for label, bank, candidate_bank in pilots
        )
        if not judged:
            raise InsufficientDataError(
                "; ".join(u.line().replace("not tested", "no plan") for u in untested)
            )
        plans = [(label, result) for label, _, result in judged]
    payload: dict[str, Any] = {"command": "plan", "version": JSON_VERSION, "plan": plans[0][1].to_dict()}
    if pilot is not None:
        payload["by"] = groups_by
        payload["plans"] = [{"label": label, **result.to_dict()} for label, result in plans]
        payload["not_planned"] = [u.to_dict() for u in untested]
    header = ["group", "items", "trials", "power", "mde", "feasible"]
    rows = [
        [label, result.items, result.trials, result.achieved_power, result.mde, result.feasible]
        for label, result in plans
    ]
    notes = []
    for label, result in plans:
        prefix = f"{label}: " if len(plans) > 1 else ""
        notes += [
            f"{prefix}{result.note}",
            f"{prefix}test: {result.test}",
            f"{prefix}assumptions: {result.source}",
            f"{prefix}variances: {result.variances()}",
        ]
    rows += [[u.label, None, None, None, None, "no plan"] for u in untested]
    notes += [u.line().replace("not tested", "no plan") for u in untested]
    first = plans[0][1]
    title = f"plan: detect delta={first.delta:g} at alpha={first.alpha:g}, power={first.target_power:g}"
    render(Report(payload, [Section(header, rows, title=title, notes=notes)]), output)
