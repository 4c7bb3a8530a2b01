"""The terminal table of a completed run: one row per case, each target's suite metrics, then the errors.

Costs never round to zero and an unknown cost is never shown as one (:func:`format_usd`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.console import Console, JustifyMethod
from rich.markup import escape
from rich.text import Text

from trialscore._words import plural
from trialscore.runner.adaptive_paired import stop_note
from trialscore.runner.failures import format_usd, print_errors
from trialscore.stats._conventions import convention_line
from trialscore.terminal import fields_line, fitted_table, verdict

if TYPE_CHECKING:
    from trialscore.runner.run_report import RunReport

__all__ = ["print_run"]

_HEADER = ("case", "category", "strategy", "verdict", "score", "pass/n", "err", "pass@k", "flaky%", "cost")
_JUSTIFY: tuple[JustifyMethod, ...] = ("left", "left", "left", "left", *("right",) * 6)


def _number(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _with_interval(metric: dict[str, Any] | None) -> str:
    if not metric:
        return "-"
    text = f"{metric['estimate']:.3f}"
    interval = metric.get("interval")
    if interval:
        text += f" [{interval['low']:.3f}, {interval['high']:.3f}]"
    return text


def print_run(report: RunReport, summary: dict[str, Any], console: Console) -> None:
    """Print the per-case table and the per-target metrics of a completed run."""
    for name, target in summary["targets"].items():
        title = f"{report.suite.name} · {name} · run {report.run_id}"
        rows: list[list[str | Text]] = []
        for case in (case for case in report.cases if case.target == name):
            metrics = case.stimulus.multi_trial if case.stimulus is not None else None
            shown = (
                case.verdict + (" (cost-limited)" if case.cost_limited else "") + _stopped(case.stop_reason)
            )
            partial = case.unknown_cost_attempts and case.cost_usd is not None
            rows.append(
                [
                    case.eval_id,
                    case.category or "",
                    case.strategy.replace("confidence_interval", "ci95"),
                    verdict(shown, case.verdict),
                    _number(case.score),
                    f"{case.passed_attempts}/{case.total_attempts}",
                    str(case.errored_attempts) if case.errored_attempts else "",
                    _number(metrics.pass_at_k if metrics and case.stop_reason is None else None),
                    f"{case.stimulus.flakiness_percent:.0f}" if case.stimulus and case.stimulus.flaky else "",
                    format_usd(case.cost_usd) + ("+?" if partial else ""),
                ]
            )
        console.print(fitted_table(title, _HEADER, rows, console.width, _JUSTIFY))
        metrics = target["metrics"]
        k = metrics.get("k", "-")
        line: list[str] = []
        if metrics["cases_scored"]:
            line = [
                f"pass@1 {_with_interval(metrics.get('pass_at_1'))}",
                f"pass@{k} {_with_interval(metrics.get('pass_at_k'))}",
                f"pass^{k} {_with_interval(metrics.get('pass_hat_k'))}",
            ]
        if metrics["cases_scored"] and "basis" in metrics:
            bayes = metrics["bayes"]
            line += [
                f"(95% wilson-eff over cases, on {metrics['basis']})",
                f"Bayes@N {bayes['mean']:.3f} ± {bayes['sd']:.3f} (every trial run)",
            ]
        elif metrics["cases_scored"]:
            line += [f"mean score {_with_interval(metrics.get('mean_score'))}", "(95% wilson-eff over cases)"]
        else:
            line = ["metrics: none, no case has a graded trial (see the errors below)"]
        console.print(fields_line(line, console.width), soft_wrap=True, highlight=False)
        verdicts = target["case_verdicts"]["counts"]
        trials = target["trials"]
        flaky = sum(
            1 for case in report.cases if case.target == name and case.stimulus and case.stimulus.flaky
        )
        counts = ", ".join(f"{count} {word}" for word, count in verdicts.items() if count)
        line = [
            f"cases: {counts} ({flaky} flaky: passed some trials, failed others)",
            f"trials: {trials['stored']} run, {trials['errored']} errored",
            f"cost {_spend(target)}",
        ]
        console.print(fields_line(line, console.width), soft_wrap=True, highlight=False)
    if any(target["metrics"]["cases_scored"] for target in summary["targets"].values()):
        console.print(Text(convention_line("unbiased", "exclude")), highlight=False)
    adaptive = summary.get("adaptive")
    if adaptive:
        planned = adaptive["trials_planned"]
        share = adaptive["trials_saved"] / planned if planned else 0.0
        console.print(
            f"adaptive ({adaptive['rule']}): {adaptive['trials_run']} trials run of {planned} planned, "
            f"{adaptive['trials_saved']} saved ({share:.0%}), "
            f"{adaptive['trials_wasted_in_flight']} wasted in flight; "
            "a stopped case's pass/n is not an unbiased rate (metrics above say which stay valid)",
            soft_wrap=True,
        )
        for name, body in (adaptive.get("comparison") or {}).items():
            low, high = body["interval"]
            console.print(
                f"compared with baseline {escape(body['baseline'])} while running (target {escape(name)}): "
                f"[bold]{body['verdict']}[/bold]; {body['interval_kind']} of the mean "
                f"paired pass-rate difference [{low:.4g}, {high:.4g}] (alpha {body['alpha']:g}, margin "
                f"{body['margin']:g}); {body['trials_run']} trials run vs {body['trials_fixed_design']} in "
                f"the fixed design; stopped: {body['stopped_because']}{escape(stop_note(body))}",
                soft_wrap=True,
            )
    if "calibration" in summary:
        console.print(
            f"{summary['calibration']} (score --human LABELS corrects it)", markup=False, highlight=False
        )
    print_errors(summary["errors"], console)
    for warning in summary["warnings"]:
        console.print(f"[yellow]warning:[/yellow] {escape(warning)}", soft_wrap=True, highlight=False)


def _stopped(reason: str | None) -> str:
    """The note a stopped case's verdict gets in the table.

    >>> _stopped("settled_pass"), _stopped("sequential"), _stopped(None)
    (' (settled)', ' (sequential)', '')
    """
    if reason is None:
        return ""
    return " (sequential)" if reason == "sequential" else " (settled)"


def _spend(target: dict[str, Any]) -> str:
    """A target's spend: the known cost, and how many trials it leaves out (their cost is unknown).

    >>> _spend({"cost_usd": None, "trials_with_unknown_cost": 4})
    'unknown'
    >>> _spend({"cost_usd": 0.00042, "trials_with_unknown_cost": 1})
    '$0.00042 + 1 trial of unknown cost'
    """
    text = format_usd(target["cost_usd"])
    unknown = target["trials_with_unknown_cost"]
    if target["cost_usd"] is not None and unknown:
        text += f" + {plural(unknown, 'trial')} of unknown cost"
    return text
