"""What every grader returns, and the error a grader raises when it cannot judge at all."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from trialscore.errors import GraderError
from trialscore.results.records import GraderResult
from trialscore.runner.targets.base import TrialRequest

__all__ = ["Grade", "Grader", "GraderError", "binary"]


@dataclass(frozen=True)
class Grade:
    """One grader's result on one trial, plus what grading cost in USD.

    Only an ``llm_judge`` spends: 0 for every other grader, None when the judge's
    cost is unknown.
    """

    result: GraderResult
    cost_usd: float | None = 0.0


class Grader(Protocol):
    """``await grader(output, request)`` judges one trial's output."""

    async def __call__(self, output: str, request: TrialRequest) -> Grade: ...


def binary(name: str, weight: float, passed: bool) -> Grade:
    """A pass/fail grade: score 1.0 when it passed, 0.0 when not.

    >>> binary("exact", 2.0, True).result.score
    1.0
    """
    return Grade(GraderResult(name=name, score=1.0 if passed else 0.0, passed=passed, weight=weight))
