"""Proportion, mean and Bayes@N intervals against statsmodels, SciPy and scorio; coverage by simulation."""

from __future__ import annotations

import json
import math
from functools import cache

import numpy as np
import pytest
import scipy.stats
from scorio.eval import bayes_ci

from trialscore import EvaluationError
from trialscore.stats import bayes_interval, clustered_interval, mean_interval, proportion_interval
from trialscore.stats._intervals import _poisson_lower

LEVELS = (0.8, 0.9, 0.95, 0.99)
GRID = [
    (c, n)
    for n in (1, 2, 3, 5, 7, 10, 13, 30, 64, 250, 1000)
    for c in sorted({0, 1, n // 3, n // 2, n - 1, n})
]
STATSMODELS_NAME = {
    "wilson": "wilson",
    "clopper-pearson": "beta",
    "jeffreys": "jeffreys",
    "agresti-coull": "agresti_coull",
}


def close(got: float, want: float) -> bool:
    return math.isclose(got, want, rel_tol=1e-12, abs_tol=1e-14)


@pytest.mark.parametrize("method", sorted(STATSMODELS_NAME))
@pytest.mark.parametrize("level", LEVELS)
def test_proportion_intervals_match_statsmodels(method: str, level: float) -> None:
    from statsmodels.stats.proportion import proportion_confint

    for c, n in GRID:
        got = proportion_interval(c, n, level, method)
        low, high = proportion_confint(c, n, alpha=1 - level, method=STATSMODELS_NAME[method])
        if method == "jeffreys" and c == 0:
            low = 0.0  # Brown, Cai & DasGupta boundary rule; statsmodels keeps the equal-tailed bound
        if method == "jeffreys" and c == n:
            high = 1.0
        assert close(got.low, low), (method, level, c, n, got.low, low)
        assert close(got.high, high), (method, level, c, n, got.high, high)
        assert got.estimate == c / n
        assert (got.level, got.method, got.n) == (level, method, n)


@pytest.mark.slow
@pytest.mark.parametrize(("method", "scipy_method"), [("wilson", "wilson"), ("clopper-pearson", "exact")])
def test_proportion_intervals_match_scipy_binomtest(method: str, scipy_method: str) -> None:
    for c, n in GRID:
        for level in LEVELS:
            want = scipy.stats.binomtest(c, n).proportion_ci(confidence_level=level, method=scipy_method)
            got = proportion_interval(c, n, level, method)
            # SciPy finds the exact bounds by root finding (absolute error near 1e-12); closed forms below.
            assert math.isclose(got.low, want.low, rel_tol=1e-9, abs_tol=1e-11), (c, n, level)
            assert math.isclose(got.high, want.high, rel_tol=1e-9, abs_tol=1e-11), (c, n, level)


@pytest.mark.parametrize("n", [1, 2, 64, 1000])
def test_clopper_pearson_closed_forms_at_one_success_and_one_failure(n: int) -> None:
    # P(X >= 1 | p) = alpha/2 gives p = 1 - (1 - alpha/2)^(1/n);
    # P(X <= n-1 | p) = alpha/2 gives p = (1 - alpha/2)^(1/n).
    for level in LEVELS:
        half = (1 - level) / 2
        root = math.exp(math.log1p(-half) / n)
        assert close(proportion_interval(1, n, level, "exact").low, -math.expm1(math.log1p(-half) / n))
        assert close(proportion_interval(n - 1, n, level, "exact").high, root)


def test_jeffreys_is_the_beta_posterior_quantile_pair() -> None:
    got = proportion_interval(3, 17, 0.9, "jeffreys")
    assert close(got.low, scipy.stats.beta.ppf(0.05, 3.5, 14.5))
    assert close(got.high, scipy.stats.beta.ppf(0.95, 3.5, 14.5))
    edge = proportion_interval(0, 17, 0.9, "jeffreys")
    assert edge.low == 0.0 and close(edge.high, scipy.stats.beta.ppf(0.95, 0.5, 17.5))


@pytest.mark.parametrize("method", sorted(STATSMODELS_NAME))
@pytest.mark.parametrize("n", [1, 2, 10, 10_000])
def test_zero_and_all_successes_are_one_sided_never_nan(method: str, n: int) -> None:
    none = proportion_interval(0, n, method=method)
    every = proportion_interval(n, n, method=method)
    assert none.low == 0.0 and 0.0 < none.high < 1.0
    assert every.high == 1.0 and 0.0 < every.low < 1.0
    for interval in (none, every):
        assert not any(math.isnan(x) for x in (interval.estimate, interval.low, interval.high))
    assert math.isclose(none.high, 1 - every.low, rel_tol=1e-12)


def test_wilson_is_the_seed_002_score_interval() -> None:
    # Wilson's interval solves |p_hat - p| = z sqrt(p (1 - p) / n): both bounds are roots.
    c, n = 7, 10
    interval = proportion_interval(c, n)
    z = scipy.stats.norm.ppf(0.975)
    for p in (interval.low, interval.high):
        assert math.isclose(abs(c / n - p), z * math.sqrt(p * (1 - p) / n), rel_tol=1e-12)


def test_method_aliases() -> None:
    assert proportion_interval(3, 9, method="exact") == proportion_interval(3, 9, method="Clopper_Pearson")
    assert proportion_interval(3, 9, method="beta").method == "clopper-pearson"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"successes": 6, "trials": 5},
            r"successes must satisfy 0 <= successes <= trials; got 6 with trials=5",
        ),
        ({"successes": -1, "trials": 5}, r"successes must be an integer >= 0; got successes=-1"),
        ({"successes": 1, "trials": 0}, r"trials must be an integer >= 1; got trials=0"),
        ({"successes": 1.5, "trials": 3}, r"successes must be an integer >= 0; got 1.5"),
        ({"successes": 1, "trials": 3, "level": 1.0}, r"level must satisfy 0 < level < 1; got level=1.0"),
        ({"successes": 1, "trials": 3, "method": "wald"}, r"method must be one of .*wilson; got 'wald'"),
    ],
)
def test_proportion_interval_rejects_bad_input(kwargs: dict, message: str) -> None:
    with pytest.raises(EvaluationError, match=message):
        proportion_interval(**kwargs)


def test_interval_record_prints_and_serializes() -> None:
    interval = proportion_interval(7, 10)
    text = str(interval)
    assert text.startswith("0.7 [0.3968, 0.8922]") and "95% wilson" in text and "n=10" in text
    payload = json.loads(json.dumps(interval.to_dict()))
    assert payload["low"] == interval.low and payload["method"] == "wilson" and payload["clipped_to"] is None
    with pytest.raises(AttributeError):
        interval.low = 0.0  # type: ignore[misc]


def test_poisson_lower_bound_is_the_gamma_quantile() -> None:
    """The rare-outcome bound of the effective Wilson interval: P(Gamma(count) <= bound) = tail, to the last
    bits of the bisection (it stops its sums and its steps early only where they could change nothing)."""
    from scipy.special import gammaincinv

    counts = [*np.random.default_rng(1).uniform(0.5, 3.0, 60).tolist(), 1.0, 2.0, 3.0]
    for count in counts:
        for tail in (0.2, 0.05, 0.01, 0.001):
            assert math.isclose(_poisson_lower(count, tail), gammaincinv(count, tail), rel_tol=1e-13)


# --- means of continuous scores -------------------------------------------------------------------


def test_t_interval_matches_scipy() -> None:
    rng = np.random.default_rng(3)
    for n in (2, 3, 10, 29):
        values = rng.beta(2, 3, size=n)
        for level in LEVELS:
            got = mean_interval(values, level)
            sem = scipy.stats.sem(values)
            low, high = scipy.stats.t.interval(level, n - 1, loc=values.mean(), scale=sem)
            assert got.method == "t" and close(got.low, low) and close(got.high, high)
            assert close(got.se, sem)


def test_normal_interval_from_30_values_on() -> None:
    values = np.random.default_rng(4).beta(2, 3, size=30)
    got = mean_interval(values, 0.9)
    low, high = scipy.stats.norm.interval(0.9, loc=values.mean(), scale=scipy.stats.sem(values))
    assert got.method == "normal" and close(got.low, low) and close(got.high, high)
    forced = mean_interval(values, 0.9, method="t")
    assert forced.method == "t" and forced.high - forced.low > got.high - got.low


def test_clipping_is_stated_and_only_narrows() -> None:
    values = [1.0, 1.0, 0.9, 1.0]
    raw = mean_interval(values)
    clipped = mean_interval(values, clip=(0, 1))
    assert raw.high > 1.0 and clipped.high == 1.0 and clipped.low == raw.low
    assert clipped.clipped_to == (0.0, 1.0) and raw.clipped_to is None
    assert "clipped to [0, 1]" in str(clipped)


def test_constant_scores_give_a_point_interval() -> None:
    interval = mean_interval([0.5, 0.5, 0.5])
    assert (interval.low, interval.high, interval.se) == (0.5, 0.5, 0.0)


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        (([0.5],), {}, r"values must hold at least 2 numbers; got 1"),
        (([0.5, float("nan")],), {}, r"values entries must be finite; got nan at index 1"),
        (([[0.5, 1.0]],), {}, r"values must be a 1-D array of numbers; got shape \(1, 2\)"),
        (([0.5, 1.0],), {"clip": (1, 0)}, r"clip must be a pair of finite numbers with low < high"),
        (
            ([2.0, 3.0],),
            {"clip": (0, 1)},
            r"clip must contain the estimate; got clip=\(0, 1\) with estimate 2.5",
        ),
        (([0.5, 1.0],), {"method": "bootstrap"}, r"method must be one of auto, normal, t; got 'bootstrap'"),
    ],
)
def test_mean_interval_rejects_bad_input(args: tuple, kwargs: dict, message: str) -> None:
    with pytest.raises(EvaluationError, match=message):
        mean_interval(*args, **kwargs)


# --- Bayes@N ---------------------------------------------------------------------------------------


def test_bayes_mean_and_sd_match_scorio_and_the_interval_stays_in_the_weight_range() -> None:
    R = np.array([[0, 1, 1, 0, 1], [1, 1, 0, 1, 1]])
    mu, sigma, _, _ = bayes_ci(R, bounds=(0.0, 1.0))
    got = bayes_interval(R)
    assert close(got.estimate, mu) and close(got.se, sigma) and 0.0 <= got.low < mu < got.high <= 1.0
    graded = np.array([[0, 1, 2, 2, 1], [1, 1, 0, 2, 2]])
    mu, sigma, _, _ = bayes_ci(graded, w=np.array([0.0, 0.5, 1.0]), confidence=0.9)
    got = bayes_interval(graded, [0.0, 0.5, 1.0], level=0.9)
    assert close(got.estimate, mu) and close(got.se, sigma) and got.n == 2 and got.level == 0.9
    assert "posterior for these items under a uniform prior" in got.method


def test_bayes_interval_of_one_item_is_its_exact_beta_posterior() -> None:
    # one item 3/3 printed 0.8 [0.48, 1.12] as mu +- z sigma; its posterior is Beta(4, 1)
    got = bayes_interval([[1, 1, 1]])
    assert got.estimate == pytest.approx(0.8)
    assert (got.low, got.high) == pytest.approx(tuple(scipy.stats.beta(4, 1).ppf([0.025, 0.975])), rel=1e-9)
    weights = [-1.0, 0.5, 2.0]  # categories 0, 1, 2; posterior counts (1, 1, 4) -> Dirichlet, any weights
    got = bayes_interval([[2, 2, 2]], weights, level=0.9)
    assert -1.0 <= got.low < got.estimate < got.high <= 2.0


def test_bayes_interval_never_leaves_the_weight_range() -> None:
    rng = np.random.default_rng(41)
    for _ in range(300):
        items, trials = int(rng.integers(1, 6)), int(rng.integers(1, 5))
        level = float(rng.choice([0.5, 0.9, 0.99, 0.999999]))
        R = (rng.random((items, trials)) < rng.random()).astype(int)
        got = bayes_interval(R, level=level)
        assert 0.0 <= got.low <= got.high <= 1.0
        weights = np.sort(rng.normal(size=3))
        graded = rng.integers(0, 3, size=(items, trials))
        got = bayes_interval(graded, weights, level=level)
        assert weights[0] <= got.low <= got.high <= weights[-1]
    constant = bayes_interval([[0, 1], [1, 1]], [0.5, 0.5])
    assert constant.low == constant.high == constant.estimate == 0.5


def _posterior_draws(rng: np.random.Generator, R: np.ndarray, weights: list[float], draws: int) -> np.ndarray:
    """Monte Carlo of the Bayes@N score: each item's Dirichlet(1 + counts) draw, weighted, averaged."""
    counts = np.stack([(R == j).sum(axis=1) for j in range(len(weights))], axis=1) + 1.0
    gammas = rng.gamma(counts[None, :, :], size=(draws, *counts.shape))
    return (gammas / gammas.sum(axis=2, keepdims=True) @ np.asarray(weights)).mean(axis=1)


@cache
def _case_draws(outcomes: bytes, shape: tuple[int, ...], weights: tuple[float, ...]) -> np.ndarray:
    """The seed-7 posterior draws of one case (int64 outcomes), drawn once and read by both levels."""
    R = np.frombuffer(outcomes, dtype=np.int64).reshape(shape)
    draws = _posterior_draws(np.random.default_rng(7), R, list(weights), 100_000)
    draws.setflags(write=False)
    return draws


BAYES_CASES = [
    # (outcomes, weights, tolerance): few items at opposite extremes are the hardest for a Beta match
    (np.array([[1, 1, 1], [0, 0, 0]]), [0.0, 1.0], 0.02),
    (np.array([[1] * 5] * 3 + [[0] * 5]), [0.0, 1.0], 0.01),
    (np.array([[1, 1], [1, 1]]), [0.0, 1.0], 0.01),
    (np.array([[1]] * 19 + [[0]]), [0.0, 1.0], 0.003),
    ((np.random.default_rng(5).random((50, 10)) < 0.6).astype(int), [0.0, 1.0], 0.003),
    (np.array([[0, 1, 2, 2, 1], [1, 1, 0, 2, 2], [2, 2, 2, 2, 2]]), [-1.0, 0.5, 2.0], 0.01),
]


@pytest.mark.slow
@pytest.mark.parametrize(("R", "weights", "tolerance"), BAYES_CASES)
@pytest.mark.parametrize("level", [0.8, 0.95])
def test_bayes_interval_matches_monte_carlo_posterior_quantiles(
    R: np.ndarray, weights: list[float], tolerance: float, level: float
) -> None:
    draws = _case_draws(R.astype(np.int64).tobytes(), R.shape, tuple(weights))
    want = np.quantile(draws, [(1 - level) / 2, (1 + level) / 2])
    got = bayes_interval(R, weights, level=level)
    assert got.estimate == pytest.approx(draws.mean(), abs=0.002)
    assert got.se == pytest.approx(draws.std(), rel=0.01)
    assert abs(got.low - want[0]) <= tolerance and abs(got.high - want[1]) <= tolerance


# --- coverage by simulation ------------------------------------------------------------------------

WILSON_POINTS = [(0.5, 30), (0.2, 50), (0.15, 120), (0.1, 300)]


@pytest.mark.slow
@pytest.mark.parametrize(("p", "n"), WILSON_POINTS)
def test_wilson_covers_95_percent(p: float, n: int) -> None:
    exact = sum(scipy.stats.binom.pmf(c, n, p) for c in range(n + 1) if proportion_interval(c, n).contains(p))
    assert 0.94 <= exact <= 0.965
    draws = np.random.default_rng(int(p * 1000) + n).binomial(n, p, size=2000)
    covered = np.mean([proportion_interval(int(c), n).contains(p) for c in draws])
    assert 0.93 <= covered <= 0.97, covered


@pytest.mark.slow
@pytest.mark.parametrize("n", [8, 20, 60])
def test_t_and_normal_intervals_cover_95_percent(n: int) -> None:
    a, b = 2.0, 5.0
    truth = a / (a + b)
    samples = np.random.default_rng(n).beta(a, b, size=(2000, n))
    covered = np.mean([mean_interval(row).contains(truth) for row in samples])
    assert 0.93 <= covered <= 0.97, covered


# --- clustered ----------------------------------------------------------------------------------------


def test_clustered_interval_matches_statsmodels_cluster_ols_with_t() -> None:
    from statsmodels.regression.linear_model import OLS  # statsmodels.api's, without the rest of the API

    rng = np.random.default_rng(3)
    values = rng.random(30)
    groups = rng.integers(0, 7, 30)
    fit = OLS(values, np.ones(30)).fit(cov_type="cluster", cov_kwds={"groups": groups}, use_t=True)
    got = clustered_interval(values, groups.tolist(), 0.9)
    ((low, high),) = fit.conf_int(alpha=0.1)
    assert got.se == pytest.approx(fit.bse[0], rel=1e-10)
    assert (got.low, got.high) == pytest.approx((low, high), rel=1e-10)
    assert got.method == f"cluster-robust t, {len(set(groups))} clusters, df {len(set(groups)) - 1}"
    with pytest.raises(EvaluationError, match="at least 2 distinct keys"):
        clustered_interval([0.1, 0.2], ["a", "a"])
