"""Seed 000's scoring model: exact oracles, the seed's examples, properties and every validation rule."""

from __future__ import annotations

import itertools
import json
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from trialscore import pass_hat_k
from trialscore.compat.scoring import (
    GraderResult,
    MultiTrialMetrics,
    SkillScore,
    StimulusScore,
    TrialGrade,
    compute_multi_trial_metrics,
    compute_skill_score,
    compute_stimulus_score,
    pass_at_k,
    pass_at_k_naive,
    pass_to_the_k,
)
from trialscore.errors import EvaluationError

# The seed's interface fields, copied from its TypeScript declarations.
SEED_MULTI_TRIAL_FIELDS = {"perTrialPassRate", "passAtK", "passToTheK", "k"}
SEED_STIMULUS_FIELDS = {
    "stimulusName",
    "trialResults",
    "aggregateScore",
    "multiTrial",
    "unscored",
    "flaky",
    "flakinessPercent",
}
SEED_SKILL_FIELDS = {"skillName", "stimulusScores", "overallScore", "overallMultiTrial", "passed"}


def exact_pass_at_k(n: int, c: int, k: int) -> Fraction:
    return 1 - Fraction(math.comb(n - c, k), math.comb(n, k))


def rel_err(got: float, want: Fraction) -> float:
    return float(abs(Fraction(got) - want) / max(abs(want), Fraction(1, 10**300)))


def trial(score: float, passed: bool, grader: str = "judge", weight: float = 1.0) -> TrialGrade:
    return TrialGrade([GraderResult(name=grader, score=score, passed=passed, weight=weight)], passed)


def stimulus(name: str, flags: list[bool]) -> StimulusScore:
    return compute_stimulus_score(name, [trial(float(flag), flag) for flag in flags], True)


# --- pass_at_k -------------------------------------------------------------------------------


def test_pass_at_k_seed_example_three_of_five() -> None:
    # Seed 000: "3 successes out of 5 trials -> passAtK(5, 3, 5) = 1.0".
    assert pass_at_k(5, 3, 5) == 1.0


@pytest.mark.parametrize(
    ("n", "c", "k"),
    [
        (5, 2, 2),
        (5, 4, 5),
        (5, 0, 3),
        (10, 1, 1),
        (10, 3, 4),
        (100, 1, 7),
        (1000, 999, 1),
        (20, 19, 20),
        (100_000, 3, 50_000),
        (100_000, 99_990, 5),
        (100_000, 1, 99_999),
    ],
)
@pytest.mark.slow
def test_pass_at_k_matches_exact_fraction(n: int, c: int, k: int) -> None:
    assert rel_err(pass_at_k(n, c, k), exact_pass_at_k(n, c, k)) <= 1e-13


@pytest.mark.slow
def test_pass_at_k_every_k_small_n() -> None:
    worst = 0.0
    for n in range(1, 26):
        for c in range(n + 1):
            for k in range(1, n + 1):
                worst = max(worst, rel_err(pass_at_k(n, c, k), exact_pass_at_k(n, c, k)))
    assert worst <= 1e-13


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_pass_at_k_large_n_exact(data: st.DataObject) -> None:
    n = data.draw(st.integers(1, 20_000))
    c = data.draw(st.integers(0, n))
    k = data.draw(st.integers(1, n))
    value = pass_at_k(n, c, k)
    assert 0.0 <= value <= 1.0
    assert rel_err(value, exact_pass_at_k(n, c, k)) <= 1e-12


def test_pass_at_k_tiny_value_keeps_relative_accuracy() -> None:
    # One success in 100,000 trials, one draw: exactly 1e-5; and c = 1, k = 2.
    assert rel_err(pass_at_k(100_000, 1, 1), Fraction(1, 100_000)) <= 1e-13
    assert rel_err(pass_at_k(100_000, 1, 2), exact_pass_at_k(100_000, 1, 2)) <= 1e-13


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(st.integers(2, 300), st.data())
def test_pass_at_k_non_decreasing_in_k_and_c(n: int, data: st.DataObject) -> None:
    c = data.draw(st.integers(0, n - 1))
    values = [pass_at_k(n, c, k) for k in range(1, n + 1)]
    assert all(a <= b + 1e-15 for a, b in itertools.pairwise(values))
    k = data.draw(st.integers(1, n))
    assert pass_at_k(n, c, k) <= pass_at_k(n, c + 1, k) + 1e-15


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((5, 3, 0), r"k must satisfy 1 <= k <= n; got k=0 with n=5"),
        ((5, 3, 6), r"k must satisfy 1 <= k <= n; got k=6 with n=5"),
        ((5, 6, 2), r"c must satisfy 0 <= c <= n; got c=6 with n=5"),
        ((5, -1, 2), r"c must satisfy 0 <= c <= n; got c=-1 with n=5"),
        ((0, 0, 1), r"n must be >= 1 \(trials run\); got n=0"),
        ((5, 3, 2.0), r"k must be an integer; got 2\.0 \(float\)"),
        ((5, True, 2), r"c must be an integer; got True \(bool\)"),
        (("5", 3, 2), r"n must be an integer; got '5' \(str\)"),
    ],
)
def test_pass_at_k_validation(args: tuple[object, object, object], message: str) -> None:
    with pytest.raises(EvaluationError, match=message):
        pass_at_k(*args)


def test_pass_at_k_accepts_numpy_integers() -> None:
    assert pass_at_k(np.int64(5), np.int32(3), np.int16(5)) == 1.0


# --- pass_at_k_naive and pass_to_the_k ------------------------------------------------------


def test_pass_to_the_k_seed_example() -> None:
    # Seed 000: "80% pass rate, 5 trials -> passToTheK(0.8, 5) = 0.328".
    value = pass_to_the_k(0.8, 5)
    assert rel_err(value, Fraction(0.8) ** 5) <= 1e-15
    assert round(value, 3) == 0.328


rates = st.floats(0.0, 1.0, allow_nan=False)


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(rates, st.integers(1, 400))
def test_naive_and_power_match_exact_fractions(p: float, k: int) -> None:
    exact_p = Fraction(p)
    power = exact_p**k
    naive = 1 - (1 - exact_p) ** k
    assert 0.0 <= pass_to_the_k(p, k) <= 1.0
    assert 0.0 <= pass_at_k_naive(p, k) <= 1.0
    if power > Fraction(1, 10**300):
        assert rel_err(pass_to_the_k(p, k), power) <= 1e-13
    else:
        assert pass_to_the_k(p, k) <= 1e-300
    assert rel_err(pass_at_k_naive(p, k), naive) <= 1e-13


def test_naive_keeps_tiny_rates() -> None:
    # 1 - (1 - p)**k in floating point would give 0 here.
    assert rel_err(pass_at_k_naive(1e-20, 3), 1 - (1 - Fraction(1e-20)) ** 3) <= 1e-15
    assert pass_at_k_naive(1.0, 7) == 1.0
    assert pass_at_k_naive(0.0, 7) == 0.0


def test_plain_power_differs_from_unbiased_pass_hat_k() -> None:
    # Seed 000's passToTheK is p**k; trialscore.pass_hat_k is C(c,k)/C(n,k).
    assert rel_err(pass_to_the_k(0.8, 5), Fraction(4, 5) ** 5) <= 1e-15
    assert pass_hat_k([[1, 1, 0, 1, 1]], 5) == 0.0


@pytest.mark.parametrize("function", [pass_at_k_naive, pass_to_the_k])
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            (1.5, 2),
            r"per_trial_pass_rate must satisfy 0 <= per_trial_pass_rate <= 1; got per_trial_pass_rate=1\.5",
        ),
        (
            (-0.1, 2),
            r"per_trial_pass_rate must satisfy 0 <= per_trial_pass_rate <= 1; got per_trial_pass_rate=-0\.1",
        ),
        ((float("nan"), 2), r"per_trial_pass_rate must be a finite real number; got per_trial_pass_rate=nan"),
        ((True, 2), r"per_trial_pass_rate must be a finite real number; got True \(bool\)"),
        ((0.5, 0), r"k must be >= 1; got k=0"),
        ((0.5, 2.5), r"k must be an integer; got 2\.5 \(float\)"),
    ],
)
def test_rate_functions_validation(function, args: tuple[object, object], message: str) -> None:
    with pytest.raises(EvaluationError, match=message):
        function(*args)


# --- compute_multi_trial_metrics --------------------------------------------------------------


def test_multi_trial_seed_example_follows_the_unbiased_text() -> None:
    # Seed 000 prints { perTrialPassRate: 0.8, passAtK: 0.99, passToTheK: 0.33, k: 5 }.  Its text says
    # the unbiased estimator is used: 1 - C(1,5)/C(5,5) = 1 exactly.  0.33 is 0.8**5 = 0.32768 rounded.
    metrics = compute_multi_trial_metrics([True, True, False, True, True])
    assert metrics.per_trial_pass_rate == 0.8
    assert metrics.pass_at_k == float(exact_pass_at_k(5, 4, 5)) == 1.0
    assert rel_err(metrics.pass_to_the_k, Fraction(4, 5) ** 5) <= 1e-15
    assert round(metrics.pass_to_the_k, 2) == 0.33
    assert metrics.k == 5


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(st.lists(st.booleans(), min_size=1, max_size=60))
def test_multi_trial_metrics_match_exact(flags: list[bool]) -> None:
    n, c = len(flags), sum(flags)
    metrics = compute_multi_trial_metrics(flags)
    assert metrics.k == n
    assert metrics.per_trial_pass_rate == c / n
    assert metrics.pass_at_k == (1.0 if c else 0.0)  # k = n: any pass means a draw of all holds one
    assert metrics.pass_at_k == float(exact_pass_at_k(n, c, n))
    exact_power = Fraction(c, n) ** n
    assert abs(Fraction(metrics.pass_to_the_k) - exact_power) <= max(
        exact_power * Fraction(1, 10**13), 1e-300
    )


def test_multi_trial_accepts_numpy_bools() -> None:
    assert compute_multi_trial_metrics(np.array([True, False])).per_trial_pass_rate == 0.5


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        ([], r"trial_passed must hold at least one entry; got an empty list"),
        ([True, 1, False], r"trial_passed\[1\] must be a bool; got 1 \(int\)"),
        ([True, None], r"trial_passed\[1\] must be a bool; got None \(NoneType\)"),
        ("TTF", r"trial_passed must be a list; got 'TTF' \(str\)"),
        (5, r"trial_passed must be a list; got 5 \(int\)"),
    ],
)
def test_multi_trial_validation(flags: object, message: str) -> None:
    with pytest.raises(EvaluationError, match=message):
        compute_multi_trial_metrics(flags)


# --- records ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"score": 1.5}, r"GraderResult field 'score': Input should be less than or equal to 1; got 1\.5$"),
        (
            {"score": -0.5},
            r"GraderResult field 'score': Input should be greater than or equal to 0; got -0\.5$",
        ),
        ({"score": float("nan")}, r"GraderResult field 'score': Input should be a finite number; got nan$"),
        ({"score": True}, r"GraderResult field 'score': Input should be a valid number; got True$"),
        ({"score": "0.5"}, r"GraderResult field 'score': Input should be a valid number; got '0\.5'$"),
        (
            {"weight": -1.0},
            r"GraderResult field 'weight': Input should be greater than or equal to 0; got -1\.0$",
        ),
        ({"weight": float("inf")}, r"GraderResult field 'weight': Input should be a finite number; got inf$"),
        ({"passed": 1}, r"GraderResult field 'passed': Input should be a valid boolean; got 1$"),
        ({"name": ""}, r"GraderResult field 'name': String should have at least 1 character; got ''$"),
        ({"reason": 3}, r"GraderResult field 'reason': Input should be a valid string; got 3$"),
        ({"notes": [1]}, r"GraderResult field 'notes': Extra inputs are not permitted; got \[1\]$"),
    ],
)
def test_grader_result_validation(kwargs: dict[str, object], message: str) -> None:
    fields: dict[str, object] = {"name": "judge", "score": 0.5, "passed": True, **kwargs}
    with pytest.raises(EvaluationError, match=message):
        GraderResult(**fields)


def test_grader_result_requires_name_score_and_passed() -> None:
    with pytest.raises(
        EvaluationError,
        match=r"^GraderResult field 'name': Field required; GraderResult field 'score': Field required; "
        r"GraderResult field 'passed': Field required$",
    ):
        GraderResult(weight=2.0)


def test_grader_result_is_frozen_and_hashable_by_value() -> None:
    grade = GraderResult(name="judge", score=0.5, passed=True, reason="close enough")
    with pytest.raises(ValidationError, match="Instance is frozen"):
        grade.score = 1.0  # type: ignore[misc]
    same = GraderResult(name="judge", score=0.5, passed=True, weight=1, reason="close enough")
    assert same == grade and hash(same) == hash(grade)
    assert grade != GraderResult(name="judge", score=0.5, passed=True, reason="other")
    assert isinstance(same.weight, float) and same.weight == 1.0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((1.2, 1.0, 1.0, 3), r"per_trial_pass_rate must satisfy 0 <= per_trial_pass_rate <= 1"),
        ((0.5, 1.0, 0.1, 0), r"k must be >= 1; got k=0"),
        ((0.5, 1.0, 0.1, 2.0), r"k must be an integer; got 2\.0"),
    ],
)
def test_multi_trial_metrics_record_validation(args: tuple[object, ...], message: str) -> None:
    with pytest.raises(EvaluationError, match=message):
        MultiTrialMetrics(*args)


def test_trial_grade_validation() -> None:
    with pytest.raises(EvaluationError, match=r"grades\[1\] must be a GraderResult; got 0\.5 \(float\)"):
        TrialGrade([GraderResult(name="a", score=1.0, passed=True), 0.5], True)
    with pytest.raises(EvaluationError, match=r"passed must be a bool; got 'yes' \(str\)"):
        TrialGrade([], "yes")


# --- compute_stimulus_score -------------------------------------------------------------------


def test_stimulus_weighted_mean_per_trial_then_mean_over_trials() -> None:
    trials = [
        TrialGrade(
            [
                GraderResult(name="a", score=0.9, passed=True, weight=3.0),
                GraderResult(name="b", score=0.1, passed=False, weight=1.0),
            ],
            True,
        ),
        TrialGrade(
            [
                GraderResult(name="a", score=0.3, passed=False, weight=3.0),
                GraderResult(name="b", score=0.7, passed=True, weight=1.0),
            ],
            False,
        ),
        TrialGrade(
            [
                GraderResult(name="a", score=1.0, passed=True, weight=0.0),
                GraderResult(name="b", score=0.2, passed=False, weight=2.0),
            ],
            False,
        ),
    ]
    score = compute_stimulus_score("s", trials, True)
    per_trial = [
        (3 * Fraction(0.9) + Fraction(0.1)) / 4,
        (3 * Fraction(0.3) + Fraction(0.7)) / 4,
        (0 * Fraction(1.0) + 2 * Fraction(0.2)) / 2,
    ]
    assert rel_err(score.aggregate_score, sum(per_trial) / 3) <= 1e-15
    assert score.trial_results == tuple(t.grades for t in trials)
    assert score.multi_trial == compute_multi_trial_metrics([True, False, False])
    assert score.flaky is True
    assert score.flakiness_percent == float(Fraction(100, 3))
    assert score.unscored is False


def test_stimulus_equal_weights_by_default() -> None:
    grades = [
        GraderResult(name="a", score=1.0, passed=True),
        GraderResult(name="b", score=0.0, passed=False),
        GraderResult(name="c", score=0.5, passed=True),
    ]
    score = compute_stimulus_score("s", [TrialGrade(grades, True)], True)
    assert score.aggregate_score == 0.5


@settings(max_examples=100, deadline=None)
@given(st.lists(st.booleans(), min_size=1, max_size=40))
def test_flakiness_is_minority_share(flags: list[bool]) -> None:
    score = stimulus("s", flags)
    n, c = len(flags), sum(flags)
    assert score.flaky == (0 < c < n)
    assert score.flakiness_percent == float(Fraction(100 * min(c, n - c), n))
    assert 0.0 <= score.flakiness_percent <= 50.0
    assert score.aggregate_score == c / n


def test_stimulus_accepts_the_seed_shaped_mapping() -> None:
    # Seed 000 passes Array<{ grade: GraderResult; passed: boolean }>.
    grade = GraderResult(name="exact", score=1.0, passed=True)
    from_mapping = compute_stimulus_score("s", [{"grade": grade, "passed": True}], True)
    assert from_mapping == compute_stimulus_score("s", [TrialGrade([grade], True)], True)
    assert from_mapping.trial_results == ((grade,),)


def test_unscored_stimulus() -> None:
    score = compute_stimulus_score("s", [TrialGrade([], True), TrialGrade([], False)], False)
    assert score.unscored is True
    assert score.aggregate_score is None and score.multi_trial is None
    assert score.flaky is False and score.flakiness_percent == 0.0
    assert score.trial_results == ((), ())


@pytest.mark.parametrize(
    ("name", "trials", "has_graders", "message"),
    [
        ("s", [], True, r"trial_grades must hold at least one entry; got an empty list"),
        ("", [trial(1.0, True)], True, r"stimulus_name must be a non-empty string; got ''"),
        ("s", [trial(1.0, True)], 1, r"has_graders must be a bool; got 1 \(int\)"),
        (
            "s",
            [TrialGrade([], True)],
            True,
            r"trial_grades\[0\] must have at least one grader result when has_graders is True",
        ),
        (
            "s",
            [trial(1.0, True)],
            False,
            r"trial_grades\[0\] must have no grader results when has_graders is False; got 1",
        ),
        (
            "s",
            [trial(1.0, True), trial(0.5, True, weight=0.0)],
            True,
            r"trial_grades\[1\] grader weights must not all be 0; got weights \[0\.0\]",
        ),
        (
            "s",
            [{"grade": GraderResult(name="a", score=1.0, passed=True)}],
            True,
            r"trial_grades\[0\] must have keys 'grade' and 'passed'; missing \['passed'\]",
        ),
        (
            "s",
            [(GraderResult(name="a", score=1.0, passed=True), True)],
            True,
            r"trial_grades\[0\] must be a TrialGrade or a \{'grade', 'passed'\} mapping",
        ),
        (
            "s",
            [{"grade": GraderResult(name="a", score=1.0, passed=True), "passed": "no"}],
            True,
            r"passed must be a bool; got 'no'",
        ),
    ],
)
def test_stimulus_validation(name: str, trials: list[object], has_graders: object, message: str) -> None:
    with pytest.raises(EvaluationError, match=message):
        compute_stimulus_score(name, trials, has_graders)


def test_stimulus_record_requires_consistent_unscored() -> None:
    with pytest.raises(
        EvaluationError, match=r"aggregate_score and multi_trial must be None exactly when unscored"
    ):
        StimulusScore("s", ((),), 0.5, None, unscored=True, flaky=False, flakiness_percent=0.0)
    with pytest.raises(EvaluationError, match=r"flakiness_percent must satisfy 0 <= flakiness_percent <= 50"):
        StimulusScore("s", ((),), None, None, unscored=True, flaky=False, flakiness_percent=60.0)


# --- compute_skill_score ----------------------------------------------------------------------


def test_skill_means_per_stimulus_metrics_not_pooled_trials() -> None:
    a = stimulus("a", [True] * 4)  # pass rate 1, pass@4 1, p^4 1
    b = stimulus("b", [True, False, False, False])  # 1/4, 1, 1/256
    c = stimulus("c", [False] * 4)  # 0, 0, 0
    skill = compute_skill_score("skill", [a, b, c], 0.4)
    overall = skill.overall_multi_trial
    assert rel_err(overall.per_trial_pass_rate, (1 + Fraction(1, 4) + 0) / 3) <= 1e-15
    assert rel_err(overall.pass_at_k, Fraction(2, 3)) <= 1e-15
    assert rel_err(overall.pass_to_the_k, (1 + Fraction(1, 256)) / 3) <= 1e-15
    assert overall.k == 4
    # Pooling the 12 raw trials would give p = 5/12 and p**4 = 625/20736, a different number.
    assert abs(overall.pass_to_the_k - (5 / 12) ** 4) > 0.1
    assert rel_err(skill.overall_score, Fraction(5, 12)) <= 1e-15
    assert skill.passed is True
    assert compute_skill_score("skill", [a, b, c], 0.45).passed is False


def test_skill_threshold_tie_survives_rounding_in_the_mean() -> None:
    scores = [
        compute_stimulus_score(name, [trial(s, True)], True)
        for name, s in zip("abc", [0.7, 0.8, 0.9], strict=True)
    ]
    skill = compute_skill_score("skill", scores, 0.8)
    assert skill.overall_score < 0.8  # (0.7 + 0.8 + 0.9) / 3 rounds to 0.7999999999999999
    assert skill.passed is True
    assert compute_skill_score("skill", scores, 0.8 + 1e-9).passed is False


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.booleans(), min_size=3, max_size=3), min_size=1, max_size=8), rates)
def test_skill_properties(flag_lists: list[list[bool]], threshold: float) -> None:
    scores = [stimulus(f"s{i}", flags) for i, flags in enumerate(flag_lists)]
    skill = compute_skill_score("skill", scores, threshold)
    exact = sum((Fraction(sum(flags), 3) for flags in flag_lists), Fraction(0)) / len(flag_lists)
    assert rel_err(skill.overall_score, exact) <= 1e-15
    assert skill.passed == (skill.overall_score >= threshold - 1e-12)
    assert skill.overall_multi_trial.pass_to_the_k <= skill.overall_multi_trial.per_trial_pass_rate
    assert skill.overall_multi_trial.per_trial_pass_rate <= skill.overall_multi_trial.pass_at_k


def test_skill_leaves_unscored_stimuli_out_of_the_means() -> None:
    unscored = compute_stimulus_score("u", [TrialGrade([], True)], False)
    scored = stimulus("a", [True, False])
    skill = compute_skill_score("skill", [unscored, scored], 0.5)
    assert skill.stimulus_scores == (unscored, scored)
    assert skill.overall_score == 0.5
    assert skill.overall_multi_trial == scored.multi_trial
    nothing = compute_skill_score("skill", [unscored], 0.0)
    assert nothing.overall_score is None and nothing.overall_multi_trial is None and nothing.passed is False


ONE_STIMULUS = [stimulus("a", [True])]


@pytest.mark.parametrize(
    ("stimuli", "threshold", "message"),
    [
        ([], 0.5, r"stimulus_scores must hold at least one entry; got an empty list"),
        (["a"], 0.5, r"stimulus_scores\[0\] must be a StimulusScore; got 'a' \(str\)"),
        (None, 0.5, r"stimulus_scores must be a list; got None"),
        (ONE_STIMULUS, 1.5, r"threshold must satisfy 0 <= threshold <= 1; got threshold=1\.5"),
        (ONE_STIMULUS, -0.1, r"threshold must satisfy 0 <= threshold <= 1; got threshold=-0\.1"),
        (ONE_STIMULUS, float("nan"), r"threshold must be a finite real number; got threshold=nan"),
        (ONE_STIMULUS, True, r"threshold must be a finite real number; got True \(bool\)"),
    ],
)
def test_skill_validation(stimuli: object, threshold: object, message: str) -> None:
    with pytest.raises(EvaluationError, match=message):
        compute_skill_score("skill", stimuli, threshold)  # type: ignore[arg-type]


def test_skill_with_3_and_5_trials_is_scored_at_the_common_k_3() -> None:
    a = stimulus("a", [True, False, True])  # n = 3, c = 2
    b = stimulus("b", [True, False, False, True, False])  # n = 5, c = 2
    unscored = compute_stimulus_score("u", [TrialGrade([], True)], False)  # 1 trial, but not scored
    skill = compute_skill_score("skill", [b, unscored, a], 0.5)
    overall = skill.overall_multi_trial
    assert overall.k == 3  # the fewest trials of the scored stimuli; the unscored one does not count
    # a at k = 3: pass@3 = 1 - C(1,3)/C(3,3) = 1 and (2/3)**3;
    # b at k = 3: pass@3 = 1 - C(3,3)/C(5,3) = 9/10 and (2/5)**3.
    assert exact_pass_at_k(5, 2, 3) == Fraction(9, 10)
    assert rel_err(overall.per_trial_pass_rate, (Fraction(2, 3) + Fraction(2, 5)) / 2) <= 1e-15
    assert rel_err(overall.per_trial_pass_rate, Fraction(8, 15)) <= 1e-15
    assert rel_err(overall.pass_at_k, Fraction(19, 20)) <= 1e-15
    assert rel_err(overall.pass_to_the_k, (Fraction(2, 3) ** 3 + Fraction(2, 5) ** 3) / 2) <= 1e-15
    assert rel_err(overall.pass_to_the_k, Fraction(608, 3375)) <= 1e-15
    # The stimuli keep their own k; the skill does not average b's pass@5 = 1 and (2/5)**5 = 32/3125.
    assert (a.multi_trial.k, b.multi_trial.k) == (3, 5)
    assert (
        b.multi_trial.pass_at_k == 1.0 and rel_err(b.multi_trial.pass_to_the_k, Fraction(32, 3125)) <= 1e-15
    )
    own_k_mean = (Fraction(2, 3) ** 3 + Fraction(32, 3125)) / 2
    assert abs(Fraction(overall.pass_to_the_k) - own_k_mean) > Fraction(1, 50)
    assert rel_err(skill.overall_score, Fraction(8, 15)) <= 1e-15
    assert skill.passed is True
    assert compute_skill_score("skill", [a, b], 0.5).overall_multi_trial == overall  # order and unscored
    assert skill.to_dict(camel=True)["overallMultiTrial"]["k"] == 3


@pytest.mark.slow
@settings(max_examples=80, deadline=None)
@given(st.lists(st.lists(st.booleans(), min_size=1, max_size=12), min_size=1, max_size=6))
def test_ragged_skill_metrics_equal_exact_means_at_the_smallest_n(flag_lists: list[list[bool]]) -> None:
    skill = compute_skill_score("skill", [stimulus(f"s{i}", f) for i, f in enumerate(flag_lists)], 0.5)
    k = min(len(flags) for flags in flag_lists)
    counts = [(len(flags), sum(flags)) for flags in flag_lists]
    m = len(counts)
    overall = skill.overall_multi_trial
    assert overall.k == k
    assert rel_err(overall.per_trial_pass_rate, sum(Fraction(c, n) for n, c in counts) / m) <= 1e-14
    assert rel_err(overall.pass_at_k, sum(exact_pass_at_k(n, c, k) for n, c in counts) / m) <= 1e-14
    assert rel_err(overall.pass_to_the_k, sum(Fraction(c, n) ** k for n, c in counts) / m) <= 1e-14
    assert overall.pass_to_the_k <= overall.per_trial_pass_rate <= overall.pass_at_k


def test_skill_refuses_a_hand_built_stimulus_whose_rate_is_no_count_of_passes() -> None:
    odd = StimulusScore(
        "odd",
        ((),),
        0.5,
        MultiTrialMetrics(0.3, 1.0, 0.0081, 4),
        unscored=False,
        flaky=True,
        flakiness_percent=25.0,
    )
    with pytest.raises(
        EvaluationError,
        match=r"stimulus_scores: 'odd' has per_trial_pass_rate=0\.3 with k=4, not a whole number of passed "
        r"trials out of 4; its metrics cannot be taken at k=2",
    ):
        compute_skill_score("skill", [odd, stimulus("a", [True, False])], 0.5)
    # At its own k it is averaged as given.
    assert compute_skill_score("skill", [odd], 0.5).overall_multi_trial == odd.multi_trial


def test_skill_name_validation() -> None:
    with pytest.raises(EvaluationError, match=r"skill_name must be a non-empty string; got None"):
        compute_skill_score(None, [stimulus("a", [True])], 0.5)  # type: ignore[arg-type]


# --- serialisation ----------------------------------------------------------------------------


def test_camel_case_keys_match_the_seed_interfaces_and_round_trip_json() -> None:
    unscored = compute_stimulus_score("u", [TrialGrade([], True)], False)
    skill = compute_skill_score("skill", [stimulus("a", [True, False, True]), unscored], 0.5)
    data = json.loads(json.dumps(skill.to_dict(camel=True)))
    assert data == skill.to_dict(camel=True)
    assert set(data) == SEED_SKILL_FIELDS
    assert set(data["overallMultiTrial"]) == SEED_MULTI_TRIAL_FIELDS
    for entry in data["stimulusScores"]:
        assert set(entry) == SEED_STIMULUS_FIELDS
    scored = data["stimulusScores"][0]
    assert set(scored["multiTrial"]) == SEED_MULTI_TRIAL_FIELDS
    assert scored["trialResults"][0][0]["graderName"] == "judge"
    assert set(scored["trialResults"][0][0]) == {"graderName", "score", "passed", "weight", "reason"}
    assert scored["aggregateScore"] == skill.stimulus_scores[0].aggregate_score
    assert data["stimulusScores"][1]["multiTrial"] is None


def test_snake_case_dict_uses_field_names() -> None:
    metrics = compute_multi_trial_metrics([True, False])
    assert metrics.to_dict() == {"per_trial_pass_rate": 0.5, "pass_at_k": 1.0, "pass_to_the_k": 0.25, "k": 2}
    data = stimulus("a", [True]).to_dict()
    assert set(data) == {
        "stimulus_name",
        "trial_results",
        "aggregate_score",
        "multi_trial",
        "unscored",
        "flaky",
        "flakiness_percent",
    }
    assert data["trial_results"] == [[GraderResult(name="judge", score=1.0, passed=True).to_dict()]]
    assert isinstance(compute_skill_score("s", [stimulus("a", [True])], 0.5), SkillScore)
