"""What ``trialscore run`` does after the trials: its gates, and the CI outputs (JUnit, step summary,
annotations).

The gates themselves are :mod:`trialscore.runner.gates`; the files and workflow commands are
:mod:`trialscore.ci`.  Options are checked before the run starts (a bad ``--fail-under`` or an
unknown ``--baseline`` costs no trial).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from trialscore.cli._app import console, errors
from trialscore.cli._render import Report, Section, markdown, styled_rows
from trialscore.errors import EvaluationError, OutputError

if TYPE_CHECKING:
    from trialscore.results.counts import ItemCounts
    from trialscore.runner.gates import GateResult, GateRule, Threshold
    from trialscore.runner.run_report import RunReport
    from trialscore.stats._cases import CaseChange

__all__ = ["AnnotationsOption", "RunChecks", "RunVerdict", "finish_run", "judge_run", "step_summary"]


class AnnotationsOption(str, Enum):
    """Workflow commands printed for failed and regressed cases."""

    none = "none"
    github = "github"


@dataclass(frozen=True)
class RunChecks:
    """The gates and CI outputs asked of a run, checked before it starts (:meth:`prepare`)."""

    thresholds: tuple[Threshold, ...] = ()
    rule: GateRule = "point"
    max_error_rate: float | None = None
    baseline: ItemCounts | None = None
    baseline_name: str | None = None
    fail_on_regression: bool = False
    junit: Path | None = None
    annotations: bool = False

    @classmethod
    def prepare(
        cls,
        fail_under: Sequence[str],
        rule: str,
        max_error_rate: float | None,
        baseline: str | None,
        fail_on_regression: bool,
        junit: Path | None,
        annotations: AnnotationsOption,
        store: Path | None,
        suite: str | None = None,
        allow_partial: bool = False,
    ) -> RunChecks:
        """Parse the bars and read the baseline run now, so bad input stops the run before any trial.

        ``latest`` and ``latest~N`` as the baseline count the runs of ``suite`` (the suite about to
        run); a baseline that stopped short of its plan is refused unless ``allow_partial``.
        """
        from trialscore.cli._options import ReadOptions, read_counts, refuse_partial
        from trialscore.runner.gates import parse_threshold

        if rule not in ("point", "confident"):
            raise EvaluationError(f"--gate-rule must be point or confident; got {rule!r}")
        if max_error_rate is not None and not 0.0 <= max_error_rate <= 1.0:
            raise EvaluationError(f"--max-error-rate must be a number from 0 to 1; got {max_error_rate!r}")
        if fail_on_regression and baseline is None:
            raise EvaluationError(
                "--fail-on regression needs --baseline RUN (a run id, latest, or a results path)"
            )
        base = None
        if baseline is not None:
            base = read_counts([Path(baseline)], ["target"], ReadOptions(store=store, suite=suite))
            refuse_partial([base], allow_partial, "--baseline")
        return cls(
            thresholds=tuple(parse_threshold(text) for text in fail_under),
            rule=rule,  # type: ignore[arg-type]
            max_error_rate=max_error_rate,
            baseline=base,
            baseline_name=baseline,
            fail_on_regression=fail_on_regression,
            junit=junit,
            annotations=annotations is AnnotationsOption.github,
        )

    @property
    def gated(self) -> bool:
        """Whether any gate was asked for."""
        return bool(self.thresholds) or self.max_error_rate is not None or self.baseline is not None


@dataclass(frozen=True)
class RunVerdict:
    """The gates of a finished run, the baseline comparisons, and the cases that regressed."""

    judged: bool
    gates: tuple[GateResult, ...] = ()
    comparisons: tuple[dict[str, Any], ...] = ()
    regressed: dict[str, list[CaseChange]] = field(default_factory=dict)

    @property
    def failed(self) -> bool:
        """Whether any gate that could be judged failed."""
        return any(gate.judged and not gate.passed for gate in self.gates)

    @property
    def unjudged(self) -> tuple[GateResult, ...]:
        """The gates the data could not decide (the run exits 3 when nothing failed)."""
        return tuple(gate for gate in self.gates if not gate.judged)

    def to_dict(self) -> dict[str, Any]:
        """The ``gates`` entry of summary.json."""
        return {
            "judged": self.judged,
            "failed": self.failed,
            "not_judged": [f"{gate.metric} of {gate.target}" for gate in self.unjudged],
            "results": [gate.to_dict() for gate in self.gates],
            "baseline": list(self.comparisons),
        }


def judge_run(report: RunReport, checks: RunChecks) -> RunVerdict:
    """Every gate of ``checks`` on a completed run, per target (``judged`` False: no trial was scored)."""
    from trialscore.runner.baseline import case_counts
    from trialscore.runner.gates import (
        baseline_gates,
        error_rate_gates,
        sequential_baseline_gates,
        threshold_gates,
    )
    from trialscore.stats._cases import case_changes

    if not report.committed:
        return RunVerdict(judged=False)
    current = report.item_counts()
    if not any((group.n > 0).any() for group in current.groups()):
        return RunVerdict(judged=False)
    gates = list(threshold_gates(current, checks.thresholds, checks.rule))
    if checks.max_error_rate is not None:
        gates += error_rate_gates(current, checks.max_error_rate)
    comparisons: list[dict[str, Any]] = []
    regressed: dict[str, list[CaseChange]] = {}
    sequential = (report.adaptive or {}).get("comparison")
    if sequential is not None:
        found, comparisons = sequential_baseline_gates(sequential, checks.fail_on_regression)
        gates += found
    elif checks.baseline is not None:
        found, comparisons = baseline_gates(checks.baseline, current, checks.fail_on_regression)
        gates += found
        before = case_counts(checks.baseline)
        for target, cases in case_counts(current).items():  # a case regressed when its own test says so
            changes = case_changes(before.get(target, {}), cases)
            if any(change.direction == "regressed" for change in changes):
                regressed[target] = changes
    return RunVerdict(True, tuple(gates), tuple(comparisons), regressed)


def _gate_section(verdict: RunVerdict) -> Section:
    from trialscore.stats._conventions import convention_line

    rows = [[g.gate, g.target, g.metric, g.value, g.bar, g.rule, g.result, g.detail] for g in verdict.gates]
    header = ["gate", "target", "metric", "value", "bar", "rule", "result", "detail"]
    title = "gates: " + ("FAILED" if verdict.failed else "NOT JUDGED" if verdict.unjudged else "passed")
    hat = any(str(g.metric).startswith("pass^") for g in verdict.gates)
    return Section(header, rows, title=title, notes=[convention_line("unbiased", "exclude")] if hat else [])


def _summary_sections(report: RunReport, summary: dict[str, Any], verdict: RunVerdict) -> list[Section]:
    rows = []
    for name, target in summary["targets"].items():
        metrics, trials = target["metrics"], target["trials"]
        pass_at_1 = (metrics.get("pass_at_1") or {}).get("estimate")
        failing = [c.eval_id for c in report.cases if c.target == name and c.verdict == "fail"]
        rows.append(
            [
                name,
                metrics["cases_scored"],
                trials["scored"],
                trials["errored"],
                pass_at_1,
                ", ".join(failing),
            ]
        )
    header = ["target", "cases", "trials", "errored", "pass@1", "failing cases"]
    notes = [summary["calibration"]] if "calibration" in summary else []
    sections = [
        Section(
            header, rows, title=f"trialscore run {report.run_id} · suite {report.suite.name}", notes=notes
        )
    ]
    if verdict.gates:
        sections.append(_gate_section(verdict))
    return sections


def step_summary(report: Report) -> None:
    """Append ``report`` as Markdown to ``$GITHUB_STEP_SUMMARY`` when it is set (data HTML-escaped)."""
    from trialscore.ci.github import append_step_summary

    append_step_summary(markdown(report, html_safe=True))


def _annotations(report: RunReport, verdict: RunVerdict) -> list[str]:
    from trialscore.ci.github import annotation, repo_path

    suite = report.suite
    file = repo_path(suite.path)
    lines = []
    for case in report.cases:
        if case.verdict != "fail":
            continue
        failed = case.total_attempts - case.passed_attempts
        lines.append(
            annotation(
                "error",
                f"{case.eval_id} failed on {failed} of {case.total_attempts} scored trials "
                f"(target {case.target})",
                file=file,
                line=suite.case_line(case.eval_id),
                title=f"trialscore: {case.eval_id} failed",
            )
        )
    for target, changes in verdict.regressed.items():
        for change in changes:
            if change.direction != "regressed":
                continue
            case_id = str(change.case)
            (n1, c1), (n2, c2) = change.before, change.now
            lines.append(
                annotation(
                    "error",
                    f"{case_id} regressed against the baseline on target {target}: passed {c1}/{n1} -> "
                    f"{c2}/{n2} (Fisher exact p={change.p_value:.2g}, significant at 0.05 after Holm's "
                    f"correction over the {len(changes)} cases compared; noise is not annotated)",
                    file=file,
                    line=suite.case_line(case_id),
                    title=f"trialscore: {case_id} regressed",
                )
            )
    return lines


def finish_run(report: RunReport, summary: dict[str, Any], verdict: RunVerdict, checks: RunChecks) -> None:
    """Print the gates, and write the JUnit file, the step summary and the annotations asked for."""
    from rich.text import Text

    from trialscore.terminal import fitted_table

    if verdict.gates:
        section = _gate_section(verdict)
        console.print(fitted_table(section.title, section.header, styled_rows(section), console.width))
        for note in section.notes:
            console.print(Text(note), highlight=False)
        if checks.baseline_name is not None:
            console.print(Text(f"baseline: {checks.baseline_name}"), highlight=False)
    if checks.junit is not None:
        from trialscore._files import write_atomic
        from trialscore.ci.junit import run_junit

        try:
            checks.junit.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise OutputError(f"--junit {str(checks.junit)!r}: cannot write: {exc.strerror or exc}") from exc
        write_atomic(checks.junit, [run_junit(report)], "the JUnit XML (--junit)")
        errors.print(Text(f"JUnit XML: {checks.junit}"), highlight=False)
    step_summary(Report({}, _summary_sections(report, summary, verdict)))
    if checks.annotations:
        for line in _annotations(report, verdict):
            typer.echo(line)
