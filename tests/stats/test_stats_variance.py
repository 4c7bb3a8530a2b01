"""Standard errors (plain, clustered) against SciPy and statsmodels; the Miller decomposition."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
import scipy.stats

from trialscore import Bank, EvaluationError
from trialscore.stats import (
    clustered_standard_error,
    decompose_variance,
    item_moments,
    standard_error,
)


def test_standard_error_is_scipy_sem() -> None:
    values = np.random.default_rng(0).random(37)
    assert standard_error(values) == pytest.approx(scipy.stats.sem(values), rel=1e-13)


@pytest.mark.parametrize("correction", [True, False])
def test_clustered_se_matches_statsmodels(correction: bool) -> None:
    import statsmodels.api as sm

    rng = np.random.default_rng(1)
    clusters = rng.integers(0, 12, size=150)
    values = rng.random(150) + 0.3 * (clusters % 3)
    fit = sm.OLS(values, np.ones(150)).fit(
        cov_type="cluster", cov_kwds={"groups": clusters, "use_correction": correction}
    )
    got = clustered_standard_error(values, [f"repo-{key}" for key in clusters], correction)
    assert got.se == pytest.approx(float(fit.bse[0]), rel=1e-12)
    assert got.estimate == pytest.approx(values.mean(), rel=1e-14)
    assert got.clusters == len(set(clusters.tolist())) and got.items == 150
    assert got.design_effect == pytest.approx((got.se / standard_error(values)) ** 2, rel=1e-14)


def test_one_item_per_cluster_gives_back_the_plain_standard_error() -> None:
    values = np.random.default_rng(2).random(25)
    got = clustered_standard_error(values, list(range(25)))
    assert got.se == pytest.approx(standard_error(values), rel=1e-13)
    assert got.design_effect == pytest.approx(1.0, rel=1e-12)


def test_correlated_clusters_inflate_the_standard_error() -> None:
    rng = np.random.default_rng(3)
    clusters = np.repeat(np.arange(20), 10)
    values = np.repeat(rng.random(20), 10) + 0.05 * rng.random(200)
    got = clustered_standard_error(values, clusters)
    assert got.design_effect > 5  # ten nearly identical items per cluster are worth about one


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (([0.1, 0.2, 0.3], ["a", "b"]), r"clusters must hold one key per item; got 2 keys for 3 items"),
        (([0.1, 0.2, 0.3], ["a", "a", "a"]), r"clusters must hold at least 2 distinct keys; got 1"),
        (([0.1, 0.2], [["a"], ["b"]]), r"clusters must be hashable keys"),
        (([0.1], ["a"]), r"values must hold at least 2 numbers; got 1"),
    ],
)
def test_clustered_se_rejects_bad_input(args: tuple, message: str) -> None:
    with pytest.raises(EvaluationError, match=message):
        clustered_standard_error(*args)


def test_item_moments_of_counts_matrices_and_graded_scores() -> None:
    bank = Bank.from_counts([4, 6, 2], [1, 6, 1])
    means, within, trials = item_moments(bank)
    assert means.tolist() == [0.25, 1.0, 0.5] and trials.tolist() == [4, 6, 2]
    assert within.tolist() == pytest.approx([1 * 3 / (4 * 3), 0.0, 1 * 1 / (2 * 1)], rel=1e-15)
    matrix = np.array([[1, 0, 0, 0], [1, 1, 1, 1]])
    assert item_moments(matrix)[1].tolist() == pytest.approx([0.25, 0.0], rel=1e-15)
    graded = np.array([[0.2, 0.4, 0.9], [0.5, 0.5, 0.8]])
    means, within, _ = item_moments(graded)
    assert within == pytest.approx(graded.var(axis=1, ddof=1), rel=1e-14)
    with pytest.raises(EvaluationError, match=r"n must be >= 2 trials for every item .* got n=1 at item 1"):
        item_moments([[1, 0], [1]])


def test_decomposition_against_exact_fractions() -> None:
    outcomes = [[1, 1, 1, 0, 1], [0, 0, 1, 0, 0], [1, 1, 1, 1, 1], [0, 1, 0, 1, 1], [0, 0, 0, 0, 0]]
    means = [Fraction(sum(row), len(row)) for row in outcomes]
    grand = sum(means) / len(means)
    total = sum((m - grand) ** 2 for m in means) / (len(means) - 1)
    within = [Fraction(sum(row) * (len(row) - sum(row)), len(row) * (len(row) - 1)) for row in outcomes]
    noise = sum(w / 5 for w in within) / len(within)
    result = decompose_variance(outcomes)
    assert result.total == pytest.approx(float(total), rel=1e-14)
    assert result.trial_noise == pytest.approx(float(noise), rel=1e-14)
    assert result.between == pytest.approx(float(total - noise), rel=1e-13)
    assert result.within == pytest.approx(float(sum(within) / len(within)), rel=1e-14)
    assert result.trial_noise_share == pytest.approx(float(noise / total), rel=1e-13)
    assert result.se == pytest.approx(math.sqrt(float(total) / 5), rel=1e-14)
    assert result.se_double_items == pytest.approx(result.se / math.sqrt(2), rel=1e-14)
    assert result.se_double_trials == pytest.approx(math.sqrt(float(total - noise / 2) / 5), rel=1e-13)
    assert result.se_unlimited_trials == pytest.approx(math.sqrt(float(total - noise) / 5), rel=1e-13)
    assert result.advice == "add_items" and "0.5" in result.rule


def test_decomposition_recovers_known_components() -> None:
    a, b, trials, items = 2.0, 3.0, 10, 20_000
    rng = np.random.default_rng(4)
    c = rng.binomial(trials, rng.beta(a, b, size=items))
    result = decompose_variance(Bank.from_counts(np.full(items, trials), c))
    mean = a / (a + b)
    between = a * b / ((a + b) ** 2 * (a + b + 1))
    within = mean - (between + mean**2)  # E[p (1 - p)]
    assert result.between == pytest.approx(between, rel=0.05)
    assert result.within == pytest.approx(within, rel=0.02)
    assert result.trial_noise == pytest.approx(within / trials, rel=0.02)


def test_advice_follows_the_trial_noise_share() -> None:
    rng = np.random.default_rng(5)
    flaky = (rng.random((200, 4)) < 0.5).astype(int)  # every item the same coin: all variance is trial noise
    steady = np.repeat(rng.integers(0, 2, size=(200, 1)), 4, axis=1)  # items always pass or always fail
    assert decompose_variance(flaky).advice == "add_trials"
    steady_result = decompose_variance(steady)
    assert steady_result.advice == "add_items" and steady_result.trial_noise == 0.0
    assert steady_result.se_double_trials == steady_result.se
    assert "Doubling the items" in str(steady_result)
    assert set(steady_result.to_dict()) >= {"between", "within", "trial_noise_share", "advice", "rule"}


def test_decomposition_needs_two_items() -> None:
    with pytest.raises(EvaluationError, match=r"R must hold at least 2 items .* got 1"):
        decompose_variance([[1, 0, 1]])
