"""The re-split permutation test of these items: its p-value against exact enumeration, its interval."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.stats

from trialscore.core.estimators import state_scores
from trialscore.stats import compare_paired, resplit_test


def exact_resplit_p(n_a, c_a, n_b, c_b, metric="avg", k=None) -> float:
    """Equal-tailed p-value by enumerating every re-split of every item (products of hypergeometrics)."""
    supports = []
    for na, ca, nb, cb in zip(n_a, c_a, n_b, c_b, strict=True):
        total = ca + cb
        xs = np.arange(max(0, total - na), min(nb, total) + 1)
        pmf = scipy.stats.hypergeom.pmf(xs, na + nb, total, nb)
        value_b = state_scores(np.full(xs.size, nb), xs, metric, k)
        value_a = state_scores(np.full(xs.size, na), total - xs, metric, k)
        supports.append(list(zip(value_b - value_a, pmf, strict=True)))
    observed = np.mean(
        [
            state_scores([nb], [cb], metric, k)[0] - state_scores([na], [ca], metric, k)[0]
            for na, ca, nb, cb in zip(n_a, c_a, n_b, c_b, strict=True)
        ]
    )
    low = high = 0.0
    for combo in itertools.product(*supports):
        value = np.mean([v for v, _ in combo])
        weight = float(np.prod([w for _, w in combo]))
        low += weight * (value <= observed + 1e-12)
        high += weight * (value >= observed - 1e-12)
    return min(1.0, 2 * min(low, high))


CASES = [
    ([10, 10, 10, 10], [9, 8, 10, 7], [3, 3, 3, 3], [1, 2, 1, 1], "avg", None),
    ([5, 5, 5], [2, 4, 5], [5, 5, 5], [3, 5, 5], "avg", None),
    ([6, 4, 8], [3, 1, 6], [6, 7, 2], [5, 2, 0], "avg", None),
    ([5, 5, 5, 5], [2, 4, 1, 5], [5, 5, 5, 5], [0, 1, 1, 3], "pass@k", 2),
]


@pytest.mark.parametrize(("n_a", "c_a", "n_b", "c_b", "metric", "k"), CASES)
def test_monte_carlo_p_value_matches_exact_enumeration(n_a, c_a, n_b, c_b, metric, k) -> None:
    exact = exact_resplit_p(n_a, c_a, n_b, c_b, metric, k)
    result = resplit_test(n_a, c_a, n_b, c_b, metric, k, permutations=40_000, seed=5)
    # Monte Carlo standard error of a p-value from 40,000 re-splits is at most 0.0025 (x2 for two tails)
    assert result.p_value == pytest.approx(exact, abs=0.012)
    assert (result.p_value < 0.05) == (not result.low <= 0.0 <= result.high)
    assert -1.0 <= result.low <= result.delta <= result.high <= 1.0


def test_verdict_p_value_and_interval_agree_for_every_outcome_of_small_runs() -> None:
    rng = np.random.default_rng(4)
    for _ in range(200):
        items = int(rng.integers(2, 6))
        n_a, n_b = rng.integers(1, 8, items), rng.integers(1, 8, items)
        rates = rng.random(items)
        c_a, c_b = rng.binomial(n_a, rates), rng.binomial(n_b, np.clip(rates - 0.3, 0, 1))
        result = resplit_test(n_a, c_a, n_b, c_b, permutations=999, seed=1)
        assert (result.p_value < 0.05) == (not result.low <= 0.0 <= result.high)


def test_same_seed_same_answer_and_identical_runs_are_identical() -> None:
    args = ([10] * 3, [9, 1, 5], [3] * 3, [1, 1, 2])
    assert resplit_test(*args, seed=3) == resplit_test(*args, seed=3)
    run = {"a": [1, 0, 1], "b": [0, 0, 1]}
    same = compare_paired(run, run, estimand="items")
    assert same.verdict == "identical" and same.p_value == 1.0


def test_resplits_tied_with_the_observed_split_count_on_both_sides() -> None:
    """With the same trials per item, the pass-rate delta is a whole number of passes over a common
    denominator, so many re-splits tie the observed one; summed in another order their floats may
    differ in the last digit, and a tie must still count as a tie (counted here in whole passes,
    from the same seeded re-splits)."""
    n_a, c_a = np.full(9, 3), np.array([1, 3, 2, 0, 3, 2, 3, 0, 0])
    n_b, c_b = np.full(9, 3), np.array([3, 0, 2, 0, 1, 1, 1, 1, 0])
    result = resplit_test(n_a, c_a, n_b, c_b, permutations=999, seed=7)
    total = c_a + c_b
    rng = np.random.default_rng(7)
    resplit = rng.hypergeometric(total, n_a + n_b - total, n_b, size=(1000, 9))
    passes = resplit[1:].sum(axis=1)
    observed = int(c_b.sum())
    below, above = int((passes <= observed).sum()), int((passes >= observed).sum())
    assert result.p_value == min(1.0, 2.0 * (1 + min(below, above)) / 1000)  # 0.228; ties to one side: 0.176


def test_an_interval_end_at_a_tied_resplit_is_zero_so_the_verdict_agrees_with_p() -> None:
    """20 items of 5 trials: the re-split at the interval's upper end ties the observed delta, and
    summed in another order it put the end at -2.8e-17: the verdict said regression at p = 0.088."""
    c_a = np.array([5, 4, 0, 3, 5, 0, 5, 2, 0, 5, 4, 5, 4, 5, 5, 0, 5, 0, 5, 5])
    c_b = np.array([5, 3, 0, 1, 5, 0, 5, 2, 0, 5, 1, 5, 3, 5, 5, 0, 5, 0, 5, 5])
    n = np.full(20, 5)
    result = resplit_test(n, c_a, n, c_b, permutations=4000, seed=1)
    assert result.p_value > 0.05 and result.high == 0.0 and result.low < 0
    runs = [
        {f"c{i}": [1] * int(c) + [0] * (5 - int(c)) for i, c in enumerate(counts)} for counts in (c_a, c_b)
    ]
    assert compare_paired(*runs, estimand="items", permutations=4000, seed=1).verdict == "within_noise"


def test_with_equal_trials_everywhere_the_interval_excludes_0_exactly_when_p_is_below_alpha() -> None:
    """Equal trials per item make ties with the observed delta common (the case rounding upsets)."""
    rng = np.random.default_rng(11)
    for _ in range(150):
        items, trials = int(rng.integers(5, 25)), int(rng.integers(2, 6))
        n = np.full(items, trials)
        rates = rng.random(items)
        c_a, c_b = rng.binomial(n, rates), rng.binomial(n, np.clip(rates - rng.uniform(0, 0.3), 0, 1))
        result = resplit_test(n, c_a, n, c_b, permutations=999, seed=int(rng.integers(100)))
        assert (result.p_value < 0.05) == (not result.low <= 0.0 <= result.high), (c_a, c_b, result)
