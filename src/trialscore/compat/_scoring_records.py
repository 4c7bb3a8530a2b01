"""Seed 000's records: a grader's result, a trial's grades, a stimulus's and a skill's scores.

Frozen, validated on construction (bad input raises :class:`~trialscore.errors.EvaluationError`
naming the field, the rule and the value), and serialised with ``to_dict(camel=False)``;
``to_dict(camel=True)`` spells the keys as seed 000's camelCase JSON does.  The functions that
build them are :mod:`trialscore.compat.scoring`, which exports these names.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import (
    Field,
    SerializerFunctionWrapHandler,
    StrictBool,
    StrictFloat,
    StrictInt,
    model_serializer,
    model_validator,
)

from trialscore._record import Record
from trialscore._validate import check_flag, check_integer, check_name, check_real, check_unit, describe
from trialscore.errors import EvaluationError
from trialscore.record_model import RecordModel, record_config

__all__ = ["GraderResult", "JudgeGrade", "MultiTrialMetrics", "SkillScore", "StimulusScore", "TrialGrade"]


class JudgeGrade(RecordModel):
    """One call of an ``llm_judge`` grader on one trial's output: trialscore's extension of seed 000.

    ``judge`` is the judge target called, ``repeat`` the call's index among that judge's calls on
    the same frozen output (0, 1, ...).  A call that answered has its ``score`` in [0, 1] and
    ``passed``; a call that errored (the judge target failed, or its reply carried no valid
    score) has ``passed`` and ``score`` null and its ``error``: an errored call is never a fail.
    ``reason`` is what the judge replied.

    >>> JudgeGrade(judge="gpt", repeat=1, score=0.8, passed=True).errored
    False
    >>> JudgeGrade(judge="gpt", repeat=2, error="HTTP 500").to_dict()["passed"] is None
    True
    >>> JudgeGrade(judge="gpt", repeat=0, score=0.2)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    trialscore.errors.EvaluationError: JudgeGrade: a call with a score needs passed ...
    """

    model_config = record_config(
        "One call of an llm_judge grader. Rules: passed null (an errored call) <=> score null; "
        "an error message belongs to an errored call."
    )

    judge: str = Field(min_length=1, description="The judge target called.")
    repeat: StrictInt = Field(ge=0, description="Index of this call among the judge's calls on this output.")
    score: StrictFloat | None = Field(
        default=None, ge=0.0, le=1.0, description="Score in [0, 1]; null if errored."
    )
    passed: StrictBool | None = Field(default=None, description="The call's verdict; null when it errored.")
    reason: str | None = Field(default=None, description="What the judge replied; null if nothing.")
    error: str | None = Field(default=None, description="Why the call errored; null if it answered.")

    @model_validator(mode="after")
    def _consistent(self) -> JudgeGrade:
        if (self.score is None) != (self.passed is None):
            raise ValueError(
                "a call with a score needs passed and an errored call has neither; "
                f"got score={self.score!r}, passed={self.passed!r}"
            )
        if self.error is not None and self.passed is not None:
            raise ValueError(
                f"an error message belongs to an errored call (passed null); got passed={self.passed!r}"
            )
        return self

    @property
    def errored(self) -> bool:
        """True when the call gave no verdict."""
        return self.passed is None

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dict."""
        return self.model_dump(mode="json")


class GraderResult(RecordModel):
    """One grader's verdict on one trial: seed 000's ``GraderResult``, also a trial record's grader entry.

    A frozen Pydantic model, so it is part of the JSON schema of
    :class:`trialscore.results.TrialRecord` (field ``grader_results``);
    bad input raises :class:`~trialscore.errors.EvaluationError` naming the
    field, the rule and the value.

    Attributes
    ----------
    name : str
        Which grader produced it (non-empty); seed 000's camelCase key is ``graderName``.
    score : float
        Graded score in [0, 1] (an int is taken as a float; a bool or a string is refused).
    passed : bool
        The grader's pass/fail verdict.
    weight : float, default 1.0
        Weight of this grader in the trial's weighted mean, ``>= 0``.
    reason : str, optional
        Human-readable justification.
    calls : tuple of JudgeGrade, optional
        trialscore's extension: an ``llm_judge`` grader's every call (judge, repeat, its verdict
        or its error); the grader's own score and verdict combine the calls that answered.
        Absent (None) for every other grader, and then left out of the JSON, so a record without
        judge calls is written exactly as before the field existed.
    details : mapping of str to float, optional
        The grader's own figures behind its score (the ``tool_calls`` grader's ``precision``,
        ``recall`` and ``f1``); a trialscore extension, left out of the JSON when absent, so
        seed 000's records read and write as they did.

    Examples
    --------
    >>> grade = GraderResult(name="exact", score=1, passed=True)
    >>> grade.to_dict()
    {'name': 'exact', 'score': 1.0, 'passed': True, 'weight': 1.0, 'reason': None}
    >>> grade.to_dict(camel=True)
    {'graderName': 'exact', 'score': 1.0, 'passed': True, 'weight': 1.0, 'reason': None}
    >>> GraderResult(name="judge", score=1.5, passed=True)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    trialscore.errors.EvaluationError: GraderResult field 'score': Input should be less than or equal to 1...
    """

    model_config = record_config("What one grader said about one trial.")

    name: str = Field(
        min_length=1,
        serialization_alias="graderName",
        description="Grader name, e.g. 'exact' or 'llm-judge'.",
    )
    score: StrictFloat = Field(ge=0.0, le=1.0, description="Grader score in [0, 1].")
    passed: StrictBool = Field(description="Grader pass/fail verdict.")
    weight: StrictFloat = Field(
        default=1.0, ge=0.0, description="Weight of this grader in the combined score."
    )
    reason: str | None = Field(default=None, description="Human-readable justification; null if none.")
    calls: tuple[JudgeGrade, ...] | None = Field(
        default=None,
        description="An llm_judge grader's every call (judge, repeat, verdict or error); absent otherwise.",
    )
    details: dict[str, StrictFloat] | None = Field(
        default=None,
        description="The grader's own figures behind its score (e.g. precision, recall, f1); absent if none.",
    )

    @model_serializer(mode="wrap")
    def _without_absent_extensions(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        for name in ("calls", "details"):
            if getattr(self, name) is None:
                data.pop(name, None)
        return data

    def __hash__(self) -> int:
        details = tuple(sorted(self.details.items())) if self.details is not None else None
        return hash((self.name, self.score, self.passed, self.weight, self.reason, self.calls, details))

    def to_dict(self, camel: bool = False) -> dict[str, Any]:
        """Plain JSON-ready dict; ``camel=True`` uses seed 000's keys (``name`` becomes ``graderName``)."""
        return self.model_dump(mode="json", by_alias=camel)


@dataclass(frozen=True)
class TrialGrade(Record):
    """One trial as :func:`compute_stimulus_score` takes it: its grader results and verdict.

    Seed 000 passes ``{grade, passed}`` objects; a mapping with those keys is
    accepted too.  ``grades`` may be one :class:`GraderResult` or a sequence.

    >>> TrialGrade(GraderResult(name="exact", score=1.0, passed=True), True).grades[0].name
    'exact'
    """

    grades: tuple[GraderResult, ...]
    passed: bool

    def __post_init__(self) -> None:
        grades = (self.grades,) if isinstance(self.grades, GraderResult) else self.grades
        if isinstance(grades, (str, bytes, Mapping)) or not isinstance(grades, Iterable):
            raise EvaluationError(f"grades must be a list of GraderResult; got {describe(self.grades)}")
        grades = tuple(grades)
        for index, grade in enumerate(grades):
            if not isinstance(grade, GraderResult):
                raise EvaluationError(
                    f"grades[{index}] must be a GraderResult; got {describe(grade)} ({type(grade).__name__})"
                )
        object.__setattr__(self, "grades", grades)
        object.__setattr__(self, "passed", check_flag(self.passed, "passed"))


@dataclass(frozen=True)
class MultiTrialMetrics(Record):
    """Seed 000's ``MultiTrialMetrics``: how one stimulus (or the mean over a skill's) fares over k trials.

    Attributes
    ----------
    per_trial_pass_rate : float
        Fraction of trials that passed (pass@1).
    pass_at_k : float
        Unbiased P(at least one success in k trials).
    pass_to_the_k : float
        ``per_trial_pass_rate ** k`` (plug-in P(all k succeed)).
    k : int
        Number of trials run (for a skill: the common ``k``, the fewest trials of its scored stimuli).

    >>> MultiTrialMetrics(0.8, 1.0, 0.32768, 5).to_dict(camel=True)
    {'perTrialPassRate': 0.8, 'passAtK': 1.0, 'passToTheK': 0.32768, 'k': 5}
    """

    per_trial_pass_rate: float
    pass_at_k: float
    pass_to_the_k: float
    k: int

    def __post_init__(self) -> None:
        for name in ("per_trial_pass_rate", "pass_at_k", "pass_to_the_k"):
            object.__setattr__(self, name, check_unit(getattr(self, name), name))
        k = check_integer(self.k, "k")
        if k < 1:
            raise EvaluationError(f"k must be >= 1; got k={k}")
        object.__setattr__(self, "k", k)


@dataclass(frozen=True)
class StimulusScore(Record):
    """Seed 000's ``StimulusScore``: one stimulus over all its trials.

    Attributes
    ----------
    stimulus_name : str
    trial_results : tuple of tuple of GraderResult
        ``trial_results[trial][grader]``.
    aggregate_score : float or None
        Per-trial weighted grader mean, averaged across trials; ``None`` when unscored.
    multi_trial : MultiTrialMetrics or None
        From the trials' pass/fail flags; ``None`` when unscored.
    unscored : bool
        True when no graders were configured.
    flaky : bool
        True when ``0 < per_trial_pass_rate < 1`` (never for an unscored stimulus).
    flakiness_percent : float
        Minority outcome / total x 100, in [0, 50] (0 when unscored).
    """

    stimulus_name: str
    trial_results: tuple[tuple[GraderResult, ...], ...]
    aggregate_score: float | None
    multi_trial: MultiTrialMetrics | None
    unscored: bool
    flaky: bool
    flakiness_percent: float

    def __post_init__(self) -> None:
        check_name(self.stimulus_name, "stimulus_name")
        object.__setattr__(self, "trial_results", tuple(tuple(trial) for trial in self.trial_results))
        unscored = check_flag(self.unscored, "unscored")
        if unscored != (self.aggregate_score is None) or unscored != (self.multi_trial is None):
            raise EvaluationError(
                "aggregate_score and multi_trial must be None exactly when unscored is True; "
                f"got unscored={unscored}, aggregate_score={self.aggregate_score!r}, "
                f"multi_trial={self.multi_trial!r}"
            )
        if self.aggregate_score is not None:
            object.__setattr__(self, "aggregate_score", check_unit(self.aggregate_score, "aggregate_score"))
        if self.multi_trial is not None and not isinstance(self.multi_trial, MultiTrialMetrics):
            raise EvaluationError(
                f"multi_trial must be a MultiTrialMetrics; got {describe(self.multi_trial)}"
            )
        object.__setattr__(self, "flaky", check_flag(self.flaky, "flaky"))
        percent = check_real(self.flakiness_percent, "flakiness_percent")
        if not 0.0 <= percent <= 50.0:
            raise EvaluationError(
                f"flakiness_percent must satisfy 0 <= flakiness_percent <= 50 (a minority share); "
                f"got {percent!r}"
            )
        object.__setattr__(self, "flakiness_percent", percent)


@dataclass(frozen=True)
class SkillScore(Record):
    """Seed 000's ``SkillScore``: a skill over all its stimuli.

    Attributes
    ----------
    skill_name : str
    stimulus_scores : tuple of StimulusScore
    overall_score : float or None
        Mean of the scored stimuli's aggregate scores; ``None`` if none is scored.
    overall_multi_trial : MultiTrialMetrics or None
        Field-wise mean of the scored stimuli's metrics at a common ``k`` (never a pool of raw trials).
    passed : bool
        ``overall_score >= threshold`` (False when nothing was scored).
    """

    skill_name: str
    stimulus_scores: tuple[StimulusScore, ...]
    overall_score: float | None
    overall_multi_trial: MultiTrialMetrics | None
    passed: bool

    def __post_init__(self) -> None:
        check_name(self.skill_name, "skill_name")
        object.__setattr__(self, "stimulus_scores", tuple(self.stimulus_scores))
        if self.overall_score is not None:
            object.__setattr__(self, "overall_score", check_unit(self.overall_score, "overall_score"))
        object.__setattr__(self, "passed", check_flag(self.passed, "passed"))
