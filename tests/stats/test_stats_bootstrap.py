"""Bootstrap over the histogram of item states: exact resampling law, estimators, BCa, seeds, coverage."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.stats
from scipy.special import beta as beta_function
from scipy.special import ndtr, ndtri

import trialscore as ts
from tests.stats._weights import histogram_means
from trialscore import Bank, EvaluationError
from trialscore.core.estimators import state_scores, states_mean
from trialscore.stats import (
    bootstrap_distribution,
    bootstrap_interval,
    bootstrap_mean_interval,
    resample_histogram,
)
from trialscore.stats._bootstrap import _interval_from_draws


def random_matrix(items: int, trials: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    p = rng.beta(2, 3, size=items)
    return (rng.random((items, trials)) < p[:, None]).astype(np.int8)


def test_resampled_mean_has_the_exact_multinomial_law() -> None:
    # Items valued [0, 0, 1]: a resample of 3 items holds J ~ Binomial(3, 1/3) ones, so the mean is J / 3.
    draws = resample_histogram([0.0, 1.0], [2, 1], resamples=60_000, seed=5)
    observed = np.bincount(np.rint(draws * 3).astype(int), minlength=4)
    expected = 60_000 * scipy.stats.binom.pmf(np.arange(4), 3, 1 / 3)
    chi2 = float(((observed - expected) ** 2 / expected).sum())
    assert chi2 < scipy.stats.chi2.ppf(0.999, df=3)


def test_bootstrap_variance_is_population_variance_over_items() -> None:
    R = random_matrix(400, 8, seed=1)
    values = ts.item_scores(R, "pass@k", k=3)
    draws = bootstrap_distribution(R, "pass@k", k=3, resamples=100_000, seed=2)
    assert draws.mean() == pytest.approx(values.mean(), abs=4 * values.std() / math.sqrt(400 * 100_000))
    assert draws.var() == pytest.approx(values.var() / 400, rel=0.02)


@pytest.mark.parametrize(
    ("metric", "k", "tau", "point"),
    [
        ("avg", None, None, lambda R: ts.avg(R)),
        ("pass@k", 4, None, lambda R: ts.pass_at_k(R, 4)),
        ("pass^k", 4, None, lambda R: ts.pass_hat_k(R, 4)),
        ("g-pass@k_tau", 4, 0.5, lambda R: ts.g_pass_at_k_tau(R, 4, 0.5)),
        ("mg-pass@k", 4, None, lambda R: ts.mg_pass_at_k(R, 4)),
    ],
)
def test_every_bank_estimator_bootstraps_around_its_point_estimate(metric, k, tau, point) -> None:
    R = random_matrix(300, 10, seed=3)
    for method in ("percentile", "bca"):
        interval = bootstrap_interval(R, metric, k, tau, method=method, resamples=2000, seed=4)
        assert interval.estimate == pytest.approx(point(R), rel=1e-12, abs=1e-15)
        assert interval.low < interval.estimate < interval.high
        assert interval.n == 300 and interval.level == 0.95 and method in interval.method


def test_percentile_matches_scipy_bootstrap_on_item_values() -> None:
    R = random_matrix(250, 6, seed=6)
    values = ts.item_scores(R, "pass@k", k=2)
    ours = bootstrap_interval(R, "pass@k", k=2, resamples=40_000, seed=7)
    theirs = scipy.stats.bootstrap(
        (values,), np.mean, n_resamples=40_000, method="percentile", vectorized=True, batch=2000, rng=8
    )
    half_width = (ours.high - ours.low) / 2
    assert ours.low == pytest.approx(theirs.confidence_interval.low, abs=0.03 * half_width)
    assert ours.high == pytest.approx(theirs.confidence_interval.high, abs=0.03 * half_width)
    assert ours.se == pytest.approx(theirs.standard_error, rel=0.02)


@pytest.mark.slow
def test_bca_matches_scipy_bootstrap_on_skewed_values() -> None:
    values = np.random.default_rng(9).exponential(size=60) ** 2
    ours = bootstrap_mean_interval(values, method="bca", resamples=40_000, seed=10)
    theirs = scipy.stats.bootstrap((values,), np.mean, n_resamples=40_000, method="BCa", rng=11)
    half_width = (ours.high - ours.low) / 2
    assert ours.low == pytest.approx(theirs.confidence_interval.low, abs=0.04 * half_width)
    assert ours.high == pytest.approx(theirs.confidence_interval.high, abs=0.04 * half_width)
    percentile = bootstrap_mean_interval(values, resamples=40_000, seed=10)
    assert ours.high > percentile.high  # right skew moves BCa up


def test_bca_equals_the_textbook_recipe_with_a_leave_one_out_jackknife() -> None:
    R = random_matrix(40, 6, seed=12)
    estimate = ts.mg_pass_at_k(R, 4)
    draws = bootstrap_distribution(R, "mg-pass@k", k=4, resamples=3000, seed=13)
    jackknife = np.array([ts.mg_pass_at_k(np.delete(R, i, axis=0), 4) for i in range(len(R))])
    u = jackknife.mean() - jackknife
    acceleration = (u**3).sum() / (6 * (u**2).sum() ** 1.5)
    tied = np.isclose(draws, estimate, rtol=1e-12, atol=0.0)  # replicates are float sums
    z0 = ndtri((np.sum((draws < estimate) & ~tied) + 0.5 * np.sum(tied)) / draws.size)
    tails = [ndtr(z0 + (z0 + z) / (1 - acceleration * (z0 + z))) for z in ndtri([0.05, 0.95])]
    want = np.quantile(draws, tails)
    got = bootstrap_interval(R, "mg-pass@k", k=4, level=0.9, method="bca", resamples=3000, seed=13)
    assert got.low == pytest.approx(want[0], rel=1e-9) and got.high == pytest.approx(want[1], rel=1e-9)


def test_same_seed_same_bytes_other_seed_other_draws() -> None:
    R = random_matrix(500, 16, seed=14)
    first = bootstrap_distribution(R, "pass^k", k=2, resamples=500, seed=15)
    again = bootstrap_distribution(R, "pass^k", k=2, resamples=500, seed=15)
    other = bootstrap_distribution(R, "pass^k", k=2, resamples=500, seed=16)
    assert first.tobytes() == again.tobytes() and first.tobytes() != other.tobytes()
    assert bootstrap_interval(R, seed=15).to_dict() == bootstrap_interval(R, seed=15).to_dict()


def test_items_in_one_state_fall_back_to_the_default_interval_instead_of_a_point() -> None:
    R = np.ones((20, 5), dtype=int)
    expected = ts.stats.item_interval(R, "pass^k", 3)
    for method in ("percentile", "bca"):
        interval = bootstrap_interval(R, "pass^k", k=3, method=method, resamples=100)
        assert interval.low == expected.low < 1.0 == interval.high == interval.estimate
        assert interval.method == "wilson-eff (the bootstrap had no spread)"
    scores = bootstrap_mean_interval([0.5, 0.5, 0.5])
    assert scores.low < 0.5 < scores.high and "no spread" in scores.method
    with pytest.raises(EvaluationError, match="every one of the 3 values is 2"):
        bootstrap_mean_interval([2.0, 2.0, 2.0])


def test_ragged_banks_and_counts_resample_by_item() -> None:
    bank = Bank.from_counts([3, 3, 5, 5, 5], [0, 3, 2, 5, 1])
    interval = bootstrap_interval(bank, "pass@k", k=2, resamples=1000, seed=1)
    assert interval.estimate == pytest.approx(ts.pass_at_k(bank, 2), rel=1e-12) and interval.n == 5


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: bootstrap_interval([[1, 0]], resamples=5),
            r"resamples must be an integer >= 10; got resamples=5",
        ),
        (lambda: bootstrap_interval([[1, 0]], seed=-1), r"seed must be an integer >= 0; got seed=-1"),
        (
            lambda: bootstrap_interval([[1, 0]], method="bc"),
            r"method must be one of bca, percentile; got 'bc'",
        ),
        (lambda: bootstrap_interval([[1, 0]], level=95), r"level must satisfy 0 < level < 1; got level=95"),
        (
            lambda: bootstrap_interval([[1, 0]], "pass@k", k=3),
            r"k must satisfy 1 <= k <= n; got k=3 with n=2",
        ),
        (lambda: bootstrap_mean_interval([1.0]), r"values must hold at least 2 numbers; got 1"),
        (lambda: resample_histogram([0.0, 1.0], [1], 10, 0), r"counts must be integers, one per value"),
        (lambda: resample_histogram([0.0, 1.0], [0, 0], 10, 0), r"counts must be >= 0 with a positive total"),
    ],
)
def test_bad_input_is_named(call, message: str) -> None:
    with pytest.raises(EvaluationError, match=message):
        call()


# --- coverage by simulation: 2,000 data sets each -----------------------------------------------------


#: Data sets per cell, resamples of each, and the first data sets also run through bootstrap_interval.
DATA_SETS, RESAMPLES, CHECKED = 2000, 500, 3


def simulated_coverage(
    metric: str, k: int, items: int, trials: int, a: float, b: float, method: str
) -> float:
    """Coverage of the truth by the bootstrap interval in DATA_SETS data sets of ``items`` items.

    Each data set's replicates are drawn for all data sets at once (tests/stats/_weights.py) and its
    interval is bootstrap_interval's core on them; on its own resamples the core is bootstrap_interval.
    """
    truth = {
        "avg": a / (a + b),
        "pass@k": 1 - beta_function(a, b + k) / beta_function(a, b),
        "pass^k": beta_function(a + k, b) / beta_function(a, b),
    }[metric]
    rng = np.random.default_rng(items * trials + k)
    counts = [rng.binomial(trials, rng.beta(a, b, size=items)) for _ in range(DATA_SETS)]
    freq = np.array([np.bincount(c, minlength=trials + 1) for c in counts])
    n, c = np.full(trials + 1, trials), np.arange(trials + 1)  # every state a data set may hold
    values = state_scores(n, c, metric, k)
    draws = histogram_means(np.random.default_rng(items * trials + k + 1), freq, values, RESAMPLES)
    hits = 0
    for data_set in range(DATA_SETS):
        held = freq[data_set] > 0
        state = (values[held], freq[data_set][held])
        mean = states_mean(n[held], c[held], state[1], state[0], metric, k)
        interval = _interval_from_draws(*state, draws[data_set], 0.95, method, "", mean)
        assert interval.width > 0.0  # bootstrap_interval's own path (no fallback for a degenerate one)
        if data_set < CHECKED:
            public = bootstrap_interval(
                Bank.from_counts(np.full(items, trials), counts[data_set]),
                metric, k, method=method, resamples=RESAMPLES, seed=data_set,
            )  # fmt: skip
            own = resample_histogram(*state, RESAMPLES, data_set)
            assert _interval_from_draws(*state, own, 0.95, method, public.method, mean) == public
        hits += interval.contains(truth)
    return hits / DATA_SETS


@pytest.mark.slow
@pytest.mark.parametrize(
    ("metric", "k", "items", "trials", "a", "b", "method"),
    [
        ("pass@k", 2, 200, 8, 2.0, 2.0, "percentile"),
        ("pass^k", 3, 300, 10, 3.0, 2.0, "percentile"),
        ("avg", 1, 100, 5, 2.0, 3.0, "bca"),
    ],
)
def test_bootstrap_covers_95_percent(metric, k, items, trials, a, b, method) -> None:
    coverage = simulated_coverage(metric, k, items, trials, a, b, method)
    assert 0.93 <= coverage <= 0.97, coverage
