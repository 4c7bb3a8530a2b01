r"""The scoring model of seed 000: trial -> stimulus -> skill.

An agent skill is evaluated on several *stimuli* (eval cases); each stimulus
is run for several *trials*; each trial is graded by zero or more *graders*.
This module turns those grades into the seed's records, in snake_case:

* :func:`compute_multi_trial_metrics` -- per-trial pass rate, pass@k and
  p**k from one stimulus's pass/fail flags (``k`` = number of trials);
* :func:`compute_stimulus_score` -- the weighted grader score averaged over
  trials, the multi-trial metrics, and flakiness;
* :func:`compute_skill_score` -- the mean over stimuli and the pass/fail
  verdict against a threshold.

The scalar functions :func:`pass_at_k`, :func:`pass_at_k_naive` and
:func:`pass_to_the_k` are the seed's ``passAtK``, ``passAtKNaive`` and
``passToTheK``.  Deliberate readings of the seed, all documented in
``docs/seed-names.md``:

* ``pass_at_k`` is the unbiased estimator ``1 - C(n-c,k)/C(n,k)`` as the
  seed's text says, so ``compute_multi_trial_metrics([T, T, F, T, T])`` gives
  ``pass_at_k = 1.0`` (the seed's example prints 0.99, perhaps the naive
  ``1 - 0.2**5 = 0.99968`` cut to two digits).
* ``pass_to_the_k`` is the plain power ``p**k`` the seed defines; the
  unbiased ``C(c,k)/C(n,k)`` is :func:`trialscore.pass_hat_k`.
* An *unscored* stimulus (no graders) has ``aggregate_score = None`` and
  ``multi_trial = None``, is never flaky, and is left out of the skill's means.
* A skill whose stimuli ran different numbers of trials is scored at a common
  ``k``, the fewest trials of its scored stimuli (see :func:`compute_skill_score`).

Every record is frozen and serialises with ``to_dict(camel=False)``;
``to_dict(camel=True)`` uses the seed's camelCase keys.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

from pydantic import Field, StrictBool, StrictFloat

from trialscore._validate import check_flag, check_integer, check_name, check_real, check_unit, describe
from trialscore.core.estimators import state_scores
from trialscore.errors import EvaluationError
from trialscore.record_model import RecordModel, record_config

__all__ = [
    "THRESHOLD_TOLERANCE",
    "GraderResult",
    "MultiTrialMetrics",
    "SkillScore",
    "StimulusScore",
    "TrialGrade",
    "compute_multi_trial_metrics",
    "compute_skill_score",
    "compute_stimulus_score",
    "pass_at_k",
    "pass_at_k_naive",
    "pass_to_the_k",
]

#: A skill passes when its overall score is within this of the threshold or above, so that
#: rounding in a mean (``(0.7 + 0.8 + 0.9) / 3 == 0.7999999999999999``) never fails an exact tie.
THRESHOLD_TOLERANCE = 1e-12


# ---------------------------------------------------------------------------------------------
# validation helpers


def _non_empty_list(values: object, name: str) -> list[Any]:
    if isinstance(values, (str, bytes, Mapping)) or not isinstance(values, Iterable):
        raise EvaluationError(f"{name} must be a list; got {describe(values)} ({type(values).__name__})")
    items = list(values)
    if not items:
        raise EvaluationError(f"{name} must hold at least one entry; got an empty list")
    return items


# ---------------------------------------------------------------------------------------------
# scalar estimators


def pass_at_k(n: int, c: int, k: int) -> float:
    r"""Unbiased pass@k of one stimulus (Chen et al., 2021): seed 000's ``passAtK``.

    .. math::

        \text{pass@k} = 1 - \frac{\binom{n-c}{k}}{\binom{n}{k}}

    the probability that at least one of ``k`` trials drawn without
    replacement from the ``n`` run (``c`` of which passed) passes.  Computed by
    :func:`trialscore.state_scores` to within about ``1e-13`` relative error
    for any ``n`` (no overflow of the binomial coefficients).

    Parameters
    ----------
    n : int
        Trials run, ``n >= 1``.
    c : int
        Trials that passed, ``0 <= c <= n``.
    k : int
        Attempts considered, ``1 <= k <= n``.

    Returns
    -------
    float
        pass@k in [0, 1].

    Examples
    --------
    >>> pass_at_k(5, 3, 5)  # seed 000: 3 of 5 passed, so 5 attempts surely hold one
    1.0
    >>> round(pass_at_k(5, 2, 2), 12)  # 1 - C(3,2)/C(5,2) = 1 - 3/10
    0.7
    """
    n = check_integer(n, "n")
    c = check_integer(c, "c")
    k = check_integer(k, "k")
    if n < 1:
        raise EvaluationError(f"n must be >= 1 (trials run); got n={n}")
    if not 0 <= c <= n:
        raise EvaluationError(f"c must satisfy 0 <= c <= n; got c={c} with n={n}")
    if not 1 <= k <= n:
        raise EvaluationError(f"k must satisfy 1 <= k <= n; got k={k} with n={n}")
    return float(state_scores([n], [c], "pass@k", k=k)[0])


def _rate_and_k(per_trial_pass_rate: object, k: object) -> tuple[float, int]:
    rate = check_unit(per_trial_pass_rate, "per_trial_pass_rate")
    k = check_integer(k, "k")
    if k < 1:
        raise EvaluationError(f"k must be >= 1; got k={k}")
    return rate, k


def pass_at_k_naive(per_trial_pass_rate: float, k: int) -> float:
    r"""Plug-in pass@k, :math:`1 - (1 - p)^k`: seed 000's ``passAtKNaive``.

    Treats the observed pass rate ``p`` as the true one, so it overstates
    pass@k when few trials were run; kept for comparison, as in the seed.
    Evaluated as ``-expm1(k * log1p(-p))``, accurate even when ``p`` is tiny.

    Parameters
    ----------
    per_trial_pass_rate : float
        ``p`` in [0, 1].
    k : int
        Attempts, ``k >= 1`` (any size: ``p`` stands for an infinite pool).

    Examples
    --------
    >>> round(pass_at_k_naive(0.8, 5), 12)  # 1 - 0.2**5
    0.99968
    >>> pass_at_k_naive(1e-20, 3)  # 3e-20, where 1 - (1 - p)**3 would give 0.0
    3e-20
    """
    rate, k = _rate_and_k(per_trial_pass_rate, k)
    if rate == 1.0:
        return 1.0
    return float(-math.expm1(k * math.log1p(-rate)))


def pass_to_the_k(per_trial_pass_rate: float, k: int) -> float:
    r"""Plug-in pass^k, :math:`p^k`: seed 000's ``passToTheK``.

    The seed defines it as the plain power of the observed pass rate.  The
    unbiased estimator of "all ``k`` of ``k`` drawn trials pass",
    :math:`\binom{c}{k} / \binom{n}{k}`, is :func:`trialscore.pass_hat_k`
    (seeds 001 and 004); the two differ for small ``n``.

    Parameters
    ----------
    per_trial_pass_rate : float
        ``p`` in [0, 1].
    k : int
        ``k >= 1``.

    Examples
    --------
    >>> round(pass_to_the_k(0.8, 5), 12)  # seed 000: 0.328, "only 33% chance all 5 succeed"
    0.32768
    """
    rate, k = _rate_and_k(per_trial_pass_rate, k)
    return float(rate**k)


# ---------------------------------------------------------------------------------------------
# records


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _plain(value: object, camel: bool) -> object:
    if isinstance(value, (_Record, GraderResult)):
        return value.to_dict(camel=camel)
    if isinstance(value, (tuple, list)):
        return [_plain(item, camel) for item in value]
    if isinstance(value, Mapping):
        return {key: _plain(item, camel) for key, item in value.items()}
    return value


class _Record:
    """Serialisation shared by the frozen records of this module."""

    def to_dict(self, camel: bool = False) -> dict[str, object]:
        """Plain dicts, lists and numbers, ready for JSON.

        ``camel=True`` renames every field to seed 000's camelCase
        (``per_trial_pass_rate`` -> ``perTrialPassRate``), nested records included.
        """
        return {
            (_camel(item.name) if camel else item.name): _plain(getattr(self, item.name), camel)
            for item in fields(self)  # type: ignore[arg-type]
        }


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

    def to_dict(self, camel: bool = False) -> dict[str, Any]:
        """Plain JSON-ready dict; ``camel=True`` uses seed 000's keys (``name`` becomes ``graderName``)."""
        return self.model_dump(mode="json", by_alias=camel)


@dataclass(frozen=True)
class TrialGrade(_Record):
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
class MultiTrialMetrics(_Record):
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
class StimulusScore(_Record):
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
class SkillScore(_Record):
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


# ---------------------------------------------------------------------------------------------
# the scoring model


def compute_multi_trial_metrics(trial_passed: Sequence[bool]) -> MultiTrialMetrics:
    r"""Multi-trial metrics of one stimulus from its trials' pass/fail flags.

    With ``n`` trials of which ``c`` passed, ``k = n`` and ``p = c / n``:
    ``per_trial_pass_rate = p``, ``pass_at_k`` is the unbiased
    :math:`1 - \binom{n-c}{k}/\binom{n}{k}` (so with ``k = n`` it is 1 when
    any trial passed and 0 otherwise), and ``pass_to_the_k = p**k``.

    Seed 000's example prints ``passAtK: 0.99`` for ``[T, T, F, T, T]``, but
    its text specifies the unbiased estimator, which gives exactly 1.0 there;
    trialscore follows the text.  Its ``passToTheK: 0.33`` is
    ``0.8**5 = 0.32768`` rounded.

    Parameters
    ----------
    trial_passed : sequence of bool
        One flag per trial, at least one; ints such as 1/0 are rejected.

    Examples
    --------
    >>> m = compute_multi_trial_metrics([True, True, False, True, True])
    >>> m.per_trial_pass_rate, m.pass_at_k, round(m.pass_to_the_k, 12), m.k
    (0.8, 1.0, 0.32768, 5)
    """
    flags = _non_empty_list(trial_passed, "trial_passed")
    passes = sum(check_flag(value, f"trial_passed[{index}]") for index, value in enumerate(flags))
    trials = len(flags)
    rate = passes / trials
    return MultiTrialMetrics(
        per_trial_pass_rate=rate,
        pass_at_k=pass_at_k(trials, passes, trials),
        pass_to_the_k=pass_to_the_k(rate, trials),
        k=trials,
    )


def _as_trial_grade(entry: object, index: int) -> TrialGrade:
    if isinstance(entry, TrialGrade):
        return entry
    if isinstance(entry, Mapping):
        missing = {"grade", "passed"} - set(entry)
        if missing:
            raise EvaluationError(
                f"trial_grades[{index}] must have keys 'grade' and 'passed'; missing {sorted(missing)}"
            )
        return TrialGrade(entry["grade"], entry["passed"])
    raise EvaluationError(
        f"trial_grades[{index}] must be a TrialGrade or a {{'grade', 'passed'}} mapping; "
        f"got {describe(entry)} ({type(entry).__name__})"
    )


def _weighted_mean(grades: tuple[GraderResult, ...], index: int) -> float:
    total_weight = math.fsum(grade.weight for grade in grades)
    if total_weight == 0:
        raise EvaluationError(
            f"trial_grades[{index}] grader weights must not all be 0; got weights "
            f"{[grade.weight for grade in grades]}"
        )
    return math.fsum(grade.weight * grade.score for grade in grades) / total_weight


def compute_stimulus_score(
    stimulus_name: str,
    trial_grades: Sequence[TrialGrade | Mapping[str, Any]],
    has_graders: bool,
) -> StimulusScore:
    r"""Score one stimulus over its trials, with flakiness: seed 000's ``computeStimulusScore``.

    Each trial's score is the weighted mean of its grader scores,
    :math:`\sum_g w_g s_g / \sum_g w_g` (equal weights by default); the
    ``aggregate_score`` is the plain mean of those over trials.  The trials'
    ``passed`` flags give the :class:`MultiTrialMetrics`; the stimulus is
    ``flaky`` when ``0 < c < n`` and ``flakiness_percent = 100 * min(c, n-c) / n``.

    With ``has_graders=False`` the stimulus is *unscored*: every trial must
    carry no grader results, ``aggregate_score`` and ``multi_trial`` are
    ``None`` (there is nothing to score), ``flaky`` is False and
    ``flakiness_percent`` 0.

    Parameters
    ----------
    stimulus_name : str
    trial_grades : sequence of TrialGrade or ``{"grade": ..., "passed": bool}`` mappings
        One entry per trial, at least one.
    has_graders : bool
        Whether graders were configured; every trial must then have at least one result.

    Examples
    --------
    >>> def trial(score, passed):
    ...     return TrialGrade([GraderResult(name="judge", score=score, passed=passed)], passed)
    >>> s = compute_stimulus_score("greet", [trial(1.0, True), trial(0.0, False), trial(0.5, True)], True)
    >>> s.aggregate_score, s.flaky, round(s.flakiness_percent, 10)
    (0.5, True, 33.3333333333)
    """
    name = check_name(stimulus_name, "stimulus_name")
    graded = check_flag(has_graders, "has_graders")
    trials = [
        _as_trial_grade(entry, index)
        for index, entry in enumerate(_non_empty_list(trial_grades, "trial_grades"))
    ]
    results = tuple(trial.grades for trial in trials)
    if not graded:
        for index, grades in enumerate(results):
            if grades:
                raise EvaluationError(
                    f"trial_grades[{index}] must have no grader results when has_graders is False; "
                    f"got {len(grades)}"
                )
        return StimulusScore(name, results, None, None, unscored=True, flaky=False, flakiness_percent=0.0)
    for index, grades in enumerate(results):
        if not grades:
            raise EvaluationError(
                f"trial_grades[{index}] must have at least one grader result when has_graders is True; "
                "got none"
            )
    per_trial = [_weighted_mean(grades, index) for index, grades in enumerate(results)]
    metrics = compute_multi_trial_metrics([trial.passed for trial in trials])
    passes = sum(trial.passed for trial in trials)
    minority = min(passes, len(trials) - passes)
    return StimulusScore(
        stimulus_name=name,
        trial_results=results,
        aggregate_score=math.fsum(per_trial) / len(per_trial),
        multi_trial=metrics,
        unscored=False,
        flaky=0 < passes < len(trials),
        flakiness_percent=100 * minority / len(trials),
    )


def _metrics_at(score: StimulusScore, k: int) -> MultiTrialMetrics:
    """A scored stimulus's metrics at ``k`` attempts out of the ``n >= k`` trials it ran."""
    metrics = score.multi_trial
    if metrics is None:
        raise EvaluationError(
            f"stimulus_scores: {score.stimulus_name!r} has no multi-trial metrics to take at k={k}"
        )
    if metrics.k == k:
        return metrics
    rate, trials = metrics.per_trial_pass_rate, metrics.k
    passes = round(rate * trials)
    if passes / trials != rate:
        raise EvaluationError(
            f"stimulus_scores: {score.stimulus_name!r} has per_trial_pass_rate={rate!r} with k={trials}, "
            f"not a whole number of passed trials out of {trials}; its metrics cannot be taken at k={k}"
        )
    return MultiTrialMetrics(rate, pass_at_k(trials, passes, k), pass_to_the_k(rate, k), k)


def _mean_metrics(scores: list[StimulusScore]) -> MultiTrialMetrics:
    k = min(score.multi_trial.k for score in scores if score.multi_trial is not None)
    metrics = [_metrics_at(score, k) for score in scores]

    def mean(name: str) -> float:
        return math.fsum(getattr(metric, name) for metric in metrics) / len(metrics)

    return MultiTrialMetrics(
        per_trial_pass_rate=mean("per_trial_pass_rate"),
        pass_at_k=mean("pass_at_k"),
        pass_to_the_k=mean("pass_to_the_k"),
        k=k,
    )


def compute_skill_score(
    skill_name: str, stimulus_scores: Sequence[StimulusScore], threshold: float
) -> SkillScore:
    r"""Score a skill from its stimuli: seed 000's ``computeSkillScore``.

    ``overall_score`` is the mean of the scored stimuli's aggregate scores;
    ``overall_multi_trial`` is the field-wise mean of their
    :class:`MultiTrialMetrics` -- a mean of per-stimulus metrics, never a pool
    of raw trials across stimuli, so every stimulus weighs the same.
    ``passed`` is ``overall_score >= threshold`` (ties within ``1e-12``
    pass).  Unscored stimuli are kept in ``stimulus_scores`` but left out of
    both means; if no stimulus is scored, ``overall_score`` and
    ``overall_multi_trial`` are ``None`` and ``passed`` is False.

    **Stimuli with different numbers of trials.**  Metrics at different ``k``
    do not average, so every scored stimulus is taken at one common ``k``, the
    fewest trials any of them ran: with ``n_i`` trials of which ``c_i``
    passed and :math:`p_i = c_i / n_i`,

    .. math::

        k = \min_i n_i, \qquad
        \text{pass@k}_i = 1 - \frac{\binom{n_i - c_i}{k}}{\binom{n_i}{k}}, \qquad
        \text{pass}^k_i = p_i^{\,k},

    the unbiased pass@k (valid for any ``k <= n_i``; it uses all ``n_i``
    trials) and seed 000's plug-in ``pass_to_the_k`` at that ``k``;
    ``per_trial_pass_rate`` does not depend on ``k``.  ``overall_multi_trial``
    is the mean of those, with ``k`` the common ``k``.  When every stimulus ran
    the same number of trials this is the plain mean of their own metrics.
    The ``stimulus_scores`` keep their own ``k``.

    Parameters
    ----------
    skill_name : str
    stimulus_scores : sequence of StimulusScore
        At least one.
    threshold : float
        Pass mark in [0, 1].

    Examples
    --------
    >>> def stimulus(name, flags):
    ...     trials = [TrialGrade([GraderResult(name="exact", score=float(f), passed=f)], f) for f in flags]
    ...     return compute_stimulus_score(name, trials, True)
    >>> skill = compute_skill_score("math", [stimulus("a", [True, True]), stimulus("b", [True, False])], 0.7)
    >>> skill.overall_score, skill.passed, skill.overall_multi_trial.per_trial_pass_rate
    (0.75, True, 0.75)
    >>> ragged = compute_skill_score("math", [stimulus("a", [True, False]), stimulus("b", [False] * 3)], 0.5)
    >>> ragged.overall_multi_trial  # k = 2: a gives pass@2 = 1, 0.5**2; b gives 0, 0
    MultiTrialMetrics(per_trial_pass_rate=0.25, pass_at_k=0.5, pass_to_the_k=0.125, k=2)
    """
    name = check_name(skill_name, "skill_name")
    scores = _non_empty_list(stimulus_scores, "stimulus_scores")
    for index, score in enumerate(scores):
        if not isinstance(score, StimulusScore):
            raise EvaluationError(
                f"stimulus_scores[{index}] must be a StimulusScore; got {describe(score)} "
                f"({type(score).__name__})"
            )
    mark = check_unit(threshold, "threshold")
    scored = [score for score in scores if not score.unscored]
    if not scored:
        return SkillScore(name, tuple(scores), None, None, passed=False)
    overall = math.fsum(score.aggregate_score for score in scored) / len(scored)
    return SkillScore(
        skill_name=name,
        stimulus_scores=tuple(scores),
        overall_score=overall,
        overall_multi_trial=_mean_metrics(scored),
        passed=overall >= mark - THRESHOLD_TOLERANCE,
    )
