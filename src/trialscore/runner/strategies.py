"""Aggregating a case's trials into its result, by strategy (seed 003), with seed 000's multi-trial metrics.

Only *scored* trials (verdict pass / fail / borderline) are aggregated: an errored
trial is not a failed trial, so it is listed but left out of every count and mean.

==========================  ===================================  =============================================
strategy                    case score                           case verdict
==========================  ===================================  =============================================
``pass_at_k``               best trial score                     pass if any trial passed, else fail
``pass_all``                worst trial score                    pass if every trial passed, else fail
``mean``                    mean trial score                     pass if mean >= threshold; borderline if
                                                                 mean >= borderline; else fail
``confidence_interval``     mean, with ``ci95`` (``wilson-eff``,  pass if the whole ci95 is >= threshold; fail
                            see below)                           if it is all below; else borderline
==========================  ===================================  =============================================

A case whose scored trials all failed is ``fail``, never ``borderline`` (seed
003), except under ``confidence_interval``, whose verdict is read off its
interval alone so that the two never disagree (its interval of all-failed
trials lies below any threshold above ``q**2 / (n + q**2)``).  A case with no
scored trial has no score and the verdict ``error`` (its trials all errored) or
``skipped`` (the cost limit stopped it before any trial ran).

The ``ci95`` of ``confidence_interval`` is
:func:`trialscore.stats.bounded_mean_interval` of the trial scores: for 0/1
scores it is Wilson's score interval of the trials (so 5 passes of 5 give
``[0.566, 1]``, not ``[1, 1]``, and a case at 0.7 is called ``pass`` against a
0.8 threshold with probability below 2.5%); for continuous scores it is the
t-based interval on the trials' own spread (seed 003's t for small samples),
written in Wilson's form so that it stays inside [0, 1], and a zero spread is
never taken as certainty (the effective n is at most ``n**2``).  With
``trials.count == 1`` the result is seed 003's plain single-trial record, with no
``trials`` list and no ``aggregation``.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from trialscore._record import Record
from trialscore.compat.scoring import GraderResult, StimulusScore, TrialGrade, compute_stimulus_score
from trialscore.errors import EvaluationError
from trialscore.results.records import TrialRecord
from trialscore.runner.suite import CaseSettings, Strategy
from trialscore.stats.intervals import Interval, bounded_mean_interval

__all__ = ["CaseResult", "CaseVerdict", "TrialSummary", "aggregate", "mean_verdict"]

#: A case's verdict: a trial's four, plus ``skipped`` (the cost limit stopped it before any trial ran).
CaseVerdict = Literal["pass", "fail", "borderline", "error", "skipped"]


@dataclass(frozen=True)
class TrialSummary(Record):
    """One entry of a case's ``trials`` list (seed 003): attempt, score, verdict and cost."""

    attempt: int
    score: float | None
    verdict: str
    cost_usd: float | None


@dataclass(frozen=True)
class CaseResult:
    """One case of one target after aggregation (see the module docstring for the rules).

    ``stimulus`` is seed 000's :class:`~trialscore.compat.scoring.StimulusScore` of the
    scored trials (None when none was scored): its pass@k, p^k, flakiness.
    ``cost_usd`` is the sum of the known trial costs (None when no trial's cost is
    known); ``unknown_cost_attempts`` counts the trials whose cost is unknown, so
    with some known and some unknown the sum is a lower bound.
    """

    eval_id: str
    target: str
    category: str | None
    score: float | None
    verdict: CaseVerdict
    strategy: Strategy
    trials: tuple[TrialSummary, ...]
    passed_attempts: int
    total_attempts: int
    errored_attempts: int
    planned_attempts: int
    ci95: Interval | None
    stimulus: StimulusScore | None
    cost_usd: float | None
    unknown_cost_attempts: int
    cost_limited: bool
    stop_reason: str | None = None
    sequence: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """Seed 003's per-case record (snake_case), plus target, category, cost and flakiness.

        A single-trial case gives the plain ``{eval_id, score, verdict}`` record.
        """
        record: dict[str, Any] = {
            "eval_id": self.eval_id,
            "target": self.target,
            "category": self.category,
            "score": self.score,
            "verdict": self.verdict,
        }
        if self.planned_attempts > 1:
            if self.ci95 is not None:
                record["ci95"] = [self.ci95.low, self.ci95.high]
                record["ci95_method"] = self.ci95.method
            record["trials"] = [trial.to_dict() for trial in self.trials]
            record["aggregation"] = {
                "strategy": self.strategy,
                "passed_attempts": self.passed_attempts,
                "total_attempts": self.total_attempts,
            }
            record["errored_attempts"] = self.errored_attempts
            if self.stop_reason is not None:
                record["stopped"] = self.stop_reason
                record["planned_attempts"] = self.planned_attempts
                if self.sequence is not None:
                    record["sequence"] = self.sequence
            elif self.stimulus is not None and self.stimulus.multi_trial is not None:
                metrics = self.stimulus.multi_trial
                record["metrics"] = {
                    "per_trial_pass_rate": metrics.per_trial_pass_rate,
                    "pass_at_k": metrics.pass_at_k,
                    "pass_to_the_k": metrics.pass_to_the_k,
                    "k": metrics.k,
                    "flaky": self.stimulus.flaky,
                    "flakiness_percent": self.stimulus.flakiness_percent,
                }
        elif self.trials and self.trials[0].verdict == "error":
            record["errored_attempts"] = 1
        record["cost_usd"] = self.cost_usd
        if self.unknown_cost_attempts and self.cost_usd is not None:
            record["unknown_cost_attempts"] = self.unknown_cost_attempts
        if self.cost_limited:
            record["cost_limited"] = True
        return record


#: One trial as seed 000's scoring sees it: its grader results and its pass flag.
_TrialPattern = tuple[tuple[GraderResult, ...], bool]


def _pattern(record: TrialRecord) -> _TrialPattern:
    """A trial's grader results, or (a record without any) its score as one grade named ``trial``."""
    grades = record.grader_results or (
        GraderResult(name="trial", score=float(record.score or 0.0), passed=bool(record.passed)),
    )
    return grades, bool(record.passed)


@functools.lru_cache(maxsize=4096)
def _stimulus_of(trials: tuple[_TrialPattern, ...]) -> StimulusScore:
    """Seed 000's stimulus score of a pattern of trials (named later): cases share few distinct patterns."""
    return compute_stimulus_score("-", [TrialGrade(*trial) for trial in trials], has_graders=True)


def _stimulus(eval_id: str, scored: Sequence[TrialRecord]) -> StimulusScore | None:
    if not scored:
        return None
    return dataclasses.replace(
        _stimulus_of(tuple(_pattern(record) for record in scored)), stimulus_name=eval_id
    )


def _verdict(
    strategy: Strategy, scores: list[float], passed: int, settings: CaseSettings, ci: Interval | None
) -> tuple[float, CaseVerdict]:
    n = len(scores)
    if strategy == "pass_at_k":
        return max(scores), "pass" if passed > 0 else "fail"
    if strategy == "pass_all":
        return min(scores), "pass" if passed == n else "fail"
    mean = math.fsum(scores) / n
    threshold = settings.threshold
    if ci is not None and threshold is not None:
        if ci.low >= threshold:
            return mean, "pass"
        return mean, "fail" if ci.high < threshold else "borderline"
    return mean, mean_verdict(mean, passed > 0, settings)


def mean_verdict(mean: float, any_passed: bool, settings: CaseSettings) -> CaseVerdict:
    """The ``mean`` strategy's verdict of a mean score: ``fail`` when no trial passed, else by the marks.

    >>> from trialscore.runner.suite import CaseSettings
    >>> settings = CaseSettings(10, "mean", None, 60.0, 2, 0.5, 0.8, 0.5)
    >>> [mean_verdict(mean, passed, settings) for mean, passed in ((0.8, True), (0.6, True), (0.9, False))]
    ['pass', 'borderline', 'fail']
    """
    if not any_passed:
        return "fail"
    threshold = settings.threshold
    if threshold is None:
        raise EvaluationError(
            f"strategy {settings.strategy!r} needs a threshold to compare the mean score to; got None"
        )
    if mean >= threshold:
        return "pass"
    if settings.borderline is not None and mean >= settings.borderline:
        return "borderline"
    return "fail"


def aggregate(
    records: Sequence[TrialRecord],
    settings: CaseSettings,
    eval_id: str,
    target: str,
    category: str | None = None,
    cost_limited: bool = False,
) -> CaseResult:
    """Aggregate one case's trial records (any order) with ``settings.strategy``.

    Parameters
    ----------
    records : sequence of TrialRecord
        The case's finished trials (errored ones included), at most one per trial index.
    settings : CaseSettings
        The case's strategy, planned trial count, threshold and borderline mark.
    eval_id, target : str
        The case id and the target name.
    category : str, optional
        The case's category (skill).
    cost_limited : bool
        True when the cost limit stopped trials of this case from starting.

    Examples
    --------
    >>> from trialscore.runner.suite import CaseSettings
    >>> def t(i, score, verdict):
    ...     return TrialRecord(case_id="c", trial=i, score=score, verdict=verdict, passed=verdict == "pass")
    >>> settings = CaseSettings(3, "pass_at_k", None, 60.0, 2, 0.5, 0.8, 0.6)
    >>> result = aggregate([t(0, 0.6, "borderline"), t(1, 0.9, "pass"), t(2, 0.7, "borderline")],
    ...                    settings, "case-1", "agent")
    >>> result.verdict, result.score, result.to_dict()["aggregation"]
    ('pass', 0.9, {'strategy': 'pass_at_k', 'passed_attempts': 1, 'total_attempts': 3})
    """
    ordered = sorted(records, key=lambda record: record.trial)
    scored = [record for record in ordered if not record.errored]
    scores = [float(record.score) for record in scored]  # type: ignore[arg-type]
    passed = sum(record.passed is True for record in scored)
    costs = [record.cost_usd for record in ordered]
    known = [cost for cost in costs if cost is not None]
    strategy = settings.strategy
    ci = None
    if strategy == "confidence_interval" and scores:
        ci = bounded_mean_interval(scores, level=0.95)
    score: float | None
    verdict: CaseVerdict
    if scores:
        score, verdict = _verdict(strategy, scores, passed, settings, ci)
    else:
        score, verdict = None, "error" if ordered else "skipped"
    return CaseResult(
        eval_id=eval_id,
        target=target,
        category=category,
        score=score,
        verdict=verdict,
        strategy=strategy,
        trials=tuple(TrialSummary(r.trial, r.score, r.verdict, r.cost_usd) for r in ordered),
        passed_attempts=passed,
        total_attempts=len(scored),
        errored_attempts=len(ordered) - len(scored),
        planned_attempts=settings.trials,
        ci95=ci,
        stimulus=_stimulus(eval_id, scored),
        cost_usd=math.fsum(known) if known or not costs else None,
        unknown_cost_attempts=sum(cost is None for cost in costs),
        cost_limited=cost_limited,
    )
