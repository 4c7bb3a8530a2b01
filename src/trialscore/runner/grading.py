"""One trial's outcome from its graders: weighted score, pass/fail and verdict."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from trialscore._record import Record
from trialscore.errors import EvaluationError
from trialscore.results.records import GraderResult, Verdict

__all__ = ["TrialOutcome", "trial_outcome"]


@dataclass(frozen=True)
class TrialOutcome(Record):
    """A graded trial: ``score`` in [0, 1], ``passed`` and ``verdict`` (pass / fail / borderline)."""

    score: float
    passed: bool
    verdict: Verdict


def trial_outcome(
    results: Sequence[GraderResult], threshold: float | None = None, borderline: float | None = None
) -> TrialOutcome:
    r"""Combine a trial's grader results (seed 000's weighted score) into its outcome.

    .. math:: \text{score} = \frac{\sum_g w_g s_g}{\sum_g w_g}

    ``passed`` is ``score >= threshold`` when a threshold is set, otherwise every
    grader's own verdict must pass.  The verdict is ``pass`` when passed,
    ``borderline`` when not passed but ``score >= borderline`` (seed 003's
    in-between band; only with a ``borderline`` mark), else ``fail``.

    >>> r = [GraderResult(name="exact", score=1.0, passed=True, weight=3),
    ...      GraderResult(name="judge", score=0.2, passed=False, weight=1)]
    >>> trial_outcome(r)
    TrialOutcome(score=0.8, passed=False, verdict='fail')
    >>> trial_outcome(r, threshold=0.9, borderline=0.6).verdict, trial_outcome(r, threshold=0.8).verdict
    ('borderline', 'pass')
    >>> trial_outcome([])
    Traceback (most recent call last):
    ...
    trialscore.errors.EvaluationError: grader weights must have a positive sum; got weights []
    """
    total = math.fsum(result.weight for result in results)
    if total <= 0:
        weights = [result.weight for result in results]
        raise EvaluationError(f"grader weights must have a positive sum; got weights {weights}")
    score = math.fsum(result.weight * result.score for result in results) / total
    if threshold is not None:
        passed = score >= threshold
    else:
        passed = all(result.passed for result in results)
    if passed:
        return TrialOutcome(score, True, "pass")
    if borderline is not None and score >= borderline:
        return TrialOutcome(score, False, "borderline")
    return TrialOutcome(score, False, "fail")
