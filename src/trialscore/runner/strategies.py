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

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Literal

from trialscore._record import Record
from trialscore.compat.scoring import MultiTrialMetrics, StimulusScore, pass_at_k, pass_to_the_k
from trialscore.errors import EvaluationError
from trialscore.results.records import TrialRecord
from trialscore.runner.suite import CaseSettings, Strategy
from trialscore.stats._intervals import Interval, bounded_mean_interval

__all__ = ["CaseResult", "CaseTally", "CaseVerdict", "ExactSum", "TrialSummary", "aggregate", "mean_verdict"]

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
    trials: Sequence[TrialSummary]
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


class ExactSum:
    """A running sum of floats rounded once, at the end: ``value`` equals ``math.fsum`` of every
    number added (Shewchuk's non-overlapping partials, the algorithm ``fsum`` uses), in a few
    floats however many were added.

    >>> total = ExactSum()
    >>> for _ in range(10):
    ...     total.add(0.1)
    >>> total.value == math.fsum([0.1] * 10) == 1.0
    True
    """

    __slots__ = ("_partials",)

    def __init__(self) -> None:
        self._partials: list[float] = []

    def add(self, x: float) -> None:
        """Add ``x`` exactly."""
        kept = 0
        for y in self._partials:
            if abs(x) < abs(y):
                x, y = y, x
            high = x + y
            low = y - (high - x)
            if low:
                self._partials[kept] = low
                kept += 1
            x = high
        del self._partials[kept:]
        self._partials.append(x)

    @property
    def value(self) -> float:
        """The sum, correctly rounded."""
        return math.fsum(self._partials)


class CaseTally:
    """One case's trials of one target, counted as they come: what :class:`CaseResult` needs, in
    memory that does not grow with the number of trials (the scores are kept as a histogram of
    their distinct values; trial order does not matter).

    >>> tally = CaseTally()
    >>> for trial, score in enumerate((0.6, 0.9, 0.6)):
    ...     tally.add(TrialRecord(case_id="c", trial=trial, score=score, verdict="pass", passed=True))
    >>> tally.stored, tally.passed, tally.mean
    (3, 3, 0.7)
    """

    __slots__ = ("cost", "known", "passed", "scores", "stored")

    def __init__(self) -> None:
        self.stored = 0
        self.passed = 0
        self.scores: dict[float, int] = {}  # distinct score -> how many scored trials have it
        self.cost = ExactSum()
        self.known = 0

    def add(self, record: TrialRecord) -> None:
        """Count one finished trial (errored or scored)."""
        self.stored += 1
        if record.cost_usd is not None:
            self.cost.add(record.cost_usd)
            self.known += 1
        if record.errored:
            return
        score = float(record.score if record.score is not None else 0.0)
        self.scores[score] = self.scores.get(score, 0) + 1
        self.passed += record.passed is True

    @property
    def scored(self) -> int:
        """Trials with a score (not errored)."""
        return sum(self.scores.values())

    @property
    def mean(self) -> float:
        """The mean score, correctly rounded (what ``math.fsum(scores) / n`` gives)."""
        total = sum((Fraction(value) * count for value, count in self.scores.items()), Fraction(0))
        return float(total) / self.scored

    def result(
        self,
        settings: CaseSettings,
        eval_id: str,
        target: str,
        category: str | None = None,
        cost_limited: bool = False,
        trials: Sequence[TrialSummary] = (),
    ) -> CaseResult:
        """The case's :class:`CaseResult` by ``settings.strategy``; ``trials`` is its ``trials`` list
        (the stored trials, in trial order; any sequence, so a run can read it from its store)."""
        scored = self.scored
        strategy = settings.strategy
        ci = None
        if strategy == "confidence_interval" and scored:
            values = sorted(self.scores)
            ci = bounded_mean_interval(values, level=0.95, counts=[self.scores[v] for v in values])
        score: float | None
        verdict: CaseVerdict
        if scored:
            score, verdict = _verdict(strategy, self, settings, ci)
        else:
            score, verdict = None, "error" if self.stored else "skipped"
        return CaseResult(
            eval_id=eval_id,
            target=target,
            category=category,
            score=score,
            verdict=verdict,
            strategy=strategy,
            trials=trials,
            passed_attempts=self.passed,
            total_attempts=scored,
            errored_attempts=self.stored - scored,
            planned_attempts=settings.trials,
            ci95=ci,
            stimulus=_stimulus(eval_id, scored, self.passed, self.mean) if scored else None,
            cost_usd=self.cost.value if self.known or not self.stored else None,
            unknown_cost_attempts=self.stored - self.known,
            cost_limited=cost_limited,
        )


def _stimulus(eval_id: str, n: int, c: int, mean: float) -> StimulusScore:
    """Seed 000's stimulus score of ``n`` scored trials, ``c`` passed, mean weighted score ``mean``.

    What :func:`~trialscore.compat.scoring.compute_stimulus_score` gives for them (a trial's
    weighted grader mean is its score), without keeping every trial's grader results.
    """
    rate = c / n
    metrics = MultiTrialMetrics(rate, pass_at_k(n, c, n), pass_to_the_k(rate, n), n)
    return StimulusScore(
        stimulus_name=eval_id,
        trial_results=(),
        aggregate_score=mean,
        multi_trial=metrics,
        unscored=False,
        flaky=0 < c < n,
        flakiness_percent=100 * min(c, n - c) / n,
    )


def _verdict(
    strategy: Strategy, tally: CaseTally, settings: CaseSettings, ci: Interval | None
) -> tuple[float, CaseVerdict]:
    passed = tally.passed
    if strategy == "pass_at_k":
        return max(tally.scores), "pass" if passed > 0 else "fail"
    if strategy == "pass_all":
        return min(tally.scores), "pass" if passed == tally.scored else "fail"
    mean = tally.mean
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
    tally = CaseTally()
    for record in ordered:
        tally.add(record)
    trials = tuple(TrialSummary(r.trial, r.score, r.verdict, r.cost_usd) for r in ordered)
    return tally.result(settings, eval_id, target, category, cost_limited, trials)
