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
from typing import Any

from trialscore._validate import check_flag, check_integer, check_name, check_unit, describe
from trialscore.compat._scoring_records import (
    GraderResult,
    MultiTrialMetrics,
    SkillScore,
    StimulusScore,
    TrialGrade,
)
from trialscore.core.estimators import state_scores
from trialscore.errors import EvaluationError

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
