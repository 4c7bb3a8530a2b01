"""Judge noise as a variance component: exact arithmetic, ragged data, unbiasedness, the budget choice."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from tests.stats._populations import BETAS, moments
from trialscore.errors import EvaluationError, InsufficientDataError
from trialscore.stats import JudgeVariance, judge_variance, plan_judge_budget
from trialscore.stats._intervals import normal_quantile


def _variance(values: list[Fraction]) -> Fraction:
    mean = sum(values, Fraction(0)) / len(values)
    return sum(((v - mean) ** 2 for v in values), Fraction(0)) / (len(values) - 1)


def test_balanced_grades_match_the_nested_anova_in_exact_arithmetic() -> None:
    rng = np.random.default_rng(0)
    cube = rng.integers(0, 5, (6, 4, 3))  # 6 items, 4 trials, 3 judge calls; scores 0-4
    items, trials, calls = cube.shape
    grades = [[[Fraction(int(g)) for g in trial] for trial in item] for item in cube]
    trial_means = [[sum(t, Fraction(0)) / calls for t in item] for item in grades]
    item_means = [sum(m, Fraction(0)) / trials for m in trial_means]
    grand = sum(item_means, Fraction(0)) / items
    ms_judge = sum(
        (g - trial_means[i][t]) ** 2 for i in range(items) for t in range(trials) for g in grades[i][t]
    ) / (items * trials * (calls - 1))
    ms_trial = (
        calls
        * sum((trial_means[i][t] - item_means[i]) ** 2 for i in range(items) for t in range(trials))
        / (items * (trials - 1))
    )
    ms_item = trials * calls * sum((m - grand) ** 2 for m in item_means) / (items - 1)
    result = judge_variance(cube)
    assert result.judge == pytest.approx(float(ms_judge), abs=1e-14)
    assert result.trial == pytest.approx(float((ms_trial - ms_judge) / calls), abs=1e-14)
    assert result.item == pytest.approx(float((ms_item - ms_trial) / (trials * calls)), abs=1e-14)
    assert result.mean == pytest.approx(float(grand), abs=1e-14)
    assert result.se == pytest.approx(float(_variance(item_means) / items) ** 0.5, abs=1e-14)


def test_ragged_grades_use_each_trials_own_calls() -> None:
    cube = np.array(
        [
            [[1, 1, 0], [0, 0, np.nan], [np.nan, np.nan, np.nan]],
            [[1, 1, 1], [1, 0, np.nan], [0, 1, 1]],
            [[0, 0, np.nan], [0, 1, 0], [0, 0, 0]],
        ]
    )
    within, noise, between, means = [], [], [], []
    for item in cube:
        trials = [t[~np.isnan(t)] for t in item if (~np.isnan(t)).any()]
        within += [np.var(t, ddof=1) for t in trials]
        trial_means = [t.mean() for t in trials]
        between.append(np.var(trial_means, ddof=1) - np.mean([np.var(t, ddof=1) / t.size for t in trials]))
        noise.append(np.var(trial_means, ddof=1) / len(trials))
        means.append(np.mean(trial_means))
    result = judge_variance(cube)
    assert result.judge == pytest.approx(np.mean(within), abs=1e-14)
    assert result.trial == pytest.approx(np.mean(between), abs=1e-14)
    assert result.item == pytest.approx(np.var(means, ddof=1) - np.mean(noise), abs=1e-14)
    assert result.mean_trials == pytest.approx(8 / 3) and result.to_dict()["items"] == 3


@pytest.mark.parametrize(
    ("grades", "error", "message"),
    [
        (np.ones((3, 2)), EvaluationError, "items x trials x repeats"),
        (
            np.ones((3, 2, 1)),
            InsufficientDataError,
            "at least 2 judge calls on every graded trial; item 0, trial 0",
        ),
        (np.ones((1, 2, 2)), InsufficientDataError, "at least 2 items"),
        (
            np.array([[[1, 0], [1, 1]], [[1, 0], [np.nan, np.nan]]]),
            InsufficientDataError,
            "item 1 with 1 trials",
        ),
        (np.full((2, 2, 2), np.inf), EvaluationError, "infinity"),
    ],
)
def test_bad_grades_are_refused(grades: np.ndarray, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        judge_variance(grades)


def test_the_budget_plan_takes_the_smallest_se_and_states_every_design() -> None:
    noisy = JudgeVariance(100, 3, 3, 0.5, item=0.05, trial=0.01, judge=0.2, se=0.02)
    plan = plan_judge_budget(noisy, budget=4000)
    assert all(plan.se <= design.se for design in plan.designs)
    assert {(d.trials, d.repeats) for d in plan.designs} >= {(20, 1), (13, 2), (10, 3), (1, 39)}
    assert (plan.trials, plan.repeats) == (8, 4)  # sqrt(0.2 / 0.01) = 4.5 judge calls a trial
    assert plan.width == pytest.approx(2 * normal_quantile(0.95) * plan.se)
    costly = plan_judge_budget(noisy, budget=4000, judge_cost=4.0)
    assert costly.repeats < plan.repeats and costly.calls <= 4000
    with pytest.raises(EvaluationError, match="budget must afford one trial and one judge call per item"):
        plan_judge_budget(noisy, budget=150)


# The two-level judged model: item rates from the u-shaped population, each trial correct with its
# item's rate, and the judge passing a correct output with probability HIT, a wrong one with MISS.
A, B = BETAS["u-shaped"]


def _components(hit: float, miss: float) -> tuple[float, float, float]:
    mean, variance = moments("u-shaped")
    spread = mean - (variance + mean**2)  # E[p (1 - p)]
    judge = mean * hit * (1 - hit) + (1 - mean) * miss * (1 - miss)
    return (hit - miss) ** 2 * variance, (hit - miss) ** 2 * spread, judge


def _cubes(
    rng: np.random.Generator, reps: int, items: int, trials: int, calls: int, hit: float, miss: float
) -> np.ndarray:
    rates = rng.beta(A, B, (reps, items, 1))
    correct = rng.random((reps, items, trials)) < rates
    passing = np.where(correct, hit, miss)
    return (rng.random((reps, items, trials, calls)) < passing[..., None]).astype(np.float64)


def _balanced_components(cubes: np.ndarray) -> np.ndarray:
    """judge_variance's item, trial and judge components of each complete cube (rows), vectorized."""
    trials, calls = cubes.shape[-2:]
    trial_means = cubes.mean(axis=-1)
    within = cubes.var(axis=-1, ddof=1)
    between = trial_means.var(axis=-1, ddof=1)
    trial = (between - within.mean(axis=-1) / calls).mean(axis=-1)
    item = trial_means.mean(axis=-1).var(axis=-1, ddof=1) - (between / trials).mean(axis=-1)
    return np.stack([item, trial, within.mean(axis=(-2, -1))], axis=-1)


@pytest.mark.slow
def test_components_are_unbiased_within_2_percent_in_10000_data_sets() -> None:
    rng = np.random.default_rng(27)
    truth = _components(0.85, 0.2)
    cubes = [_cubes(rng, 2500, 40, 4, 3, 0.85, 0.2) for _ in range(4)]
    estimates = np.concatenate([_balanced_components(batch) for batch in cubes])
    for cube, row in zip(cubes[0][:25], estimates, strict=False):  # the vectorized form is judge_variance's
        result = judge_variance(cube)
        assert (result.item, result.trial, result.judge) == pytest.approx(tuple(row), rel=1e-12, abs=1e-15)
    bias = estimates.mean(axis=0) / np.array(truth) - 1
    print(f"\nitem/trial/judge truth {np.round(truth, 5)}, relative bias {np.round(bias, 4)}")
    assert np.all(np.abs(bias) <= 0.02), bias


def _realised_width(rng: np.random.Generator, trials: int, calls: int, hit: float, miss: float) -> float:
    """Mean width of the normal 95% interval of the mean grade over 100 items, in 300 data sets."""
    cubes = _cubes(rng, 300, 100, trials, calls, hit, miss)
    item_means = cubes.mean(axis=(2, 3))
    return float(np.mean(2 * normal_quantile(0.95) * item_means.std(axis=1, ddof=1) / 10))


@pytest.mark.slow
@pytest.mark.parametrize(("hit", "miss"), [(0.75, 0.3), (0.97, 0.03), (0.85, 0.25)])
def test_the_budget_choice_is_within_5_percent_of_the_best_width(hit: float, miss: float) -> None:
    """24 calls an item on 100 items: every affordable (trials, repeats) simulated for its realised width."""
    rng = np.random.default_rng(int(hit * 100))
    budget = 100 * 24
    truth = JudgeVariance(100, 1, 1, 0.5, *_components(hit, miss), se=0.0)
    designs = plan_judge_budget(truth, budget).designs
    widths = {(d.trials, d.repeats): _realised_width(rng, d.trials, d.repeats, hit, miss) for d in designs}
    best = min(widths.values())
    chosen = plan_judge_budget(truth, budget)
    assert widths[(chosen.trials, chosen.repeats)] <= 1.05 * best, (chosen, widths)
    # From pilots of 5 trials x 3 judge calls on the same 100 items, the components estimated.
    ratios = [
        widths[(plan.trials, plan.repeats)] / best
        for plan in (
            plan_judge_budget(judge_variance(pilot), budget)
            for pilot in _cubes(rng, 40, 100, 5, 3, hit, miss)
        )
    ]
    print(
        f"\njudge {hit}/{miss}: best {min(widths, key=widths.__getitem__)}, chosen from the truth "
        f"{(chosen.trials, chosen.repeats)}; from 40 pilots: "
        f"{np.mean(np.array(ratios) <= 1.05):.0%} within 5%, "
        f"worst {max(ratios):.3f}, mean {np.mean(ratios):.4f} of the best width"
    )
    assert np.mean(np.array(ratios) <= 1.05) >= 0.9 and np.mean(ratios) <= 1.02
