"""Paired, unpaired and Bayes@N comparisons: exact sign-flip p-values, SciPy t-tests, verdicts, errors."""

from __future__ import annotations

import functools
import itertools
import json
import math

import numpy as np
import pytest
import scipy.stats
from scorio.sinf import ranking_confidence

import trialscore as ts
from trialscore import Bank, EvaluationError
from trialscore.stats import (
    compare_bayes,
    compare_clustered,
    compare_paired,
    compare_unpaired,
    detectable_effect,
    sign_flip_p_value,
)


def brute_force_p(d: np.ndarray) -> float:
    observed = abs(d.sum())
    hits = sum(
        abs(np.dot(signs, d)) >= observed - 1e-12 for signs in itertools.product((-1.0, 1.0), repeat=d.size)
    )
    return hits / 2**d.size


@pytest.mark.parametrize("seed", range(6))
def test_exact_sign_flip_equals_enumerating_every_sign_pattern(seed: int) -> None:
    rng = np.random.default_rng(seed)
    d = rng.choice([-0.5, -0.25, 0.0, 0.25, 0.5, 0.75], size=rng.integers(3, 13))
    p, method = sign_flip_p_value(d)
    assert p == pytest.approx(brute_force_p(d), abs=1e-12)
    assert method.startswith("exact sign-flip")


def test_exact_sign_flip_equals_scipy_permutation_test_with_distinct_values() -> None:
    rng = np.random.default_rng(7)
    x, y = rng.random(11), rng.random(11) + 0.2
    result = scipy.stats.permutation_test(
        (x, y),
        lambda a, b, axis: np.mean(b - a, axis=axis),
        permutation_type="samples",
        n_resamples=np.inf,
        vectorized=True,
    )
    p, _ = sign_flip_p_value(y - x)
    assert p == pytest.approx(result.pvalue, rel=1e-10)


def test_monte_carlo_sign_flip_is_seeded_and_close_to_exact() -> None:
    d = np.random.default_rng(8).normal(0.05, 0.3, size=40)
    exact, _ = sign_flip_p_value(d[:18])
    sampled, method = sign_flip_p_value(d[:18], permutations=20_000, seed=3, exact_limit=1)
    assert method == "monte carlo sign-flip (18 non-zero differences, 20000 sign patterns, seed 3)"
    assert sampled == pytest.approx(exact, abs=4 * math.sqrt(exact * (1 - exact) / 20_000) + 1e-4)
    assert sign_flip_p_value(d, 500, seed=3) == sign_flip_p_value(d, 500, seed=3)
    assert sign_flip_p_value(d, 500, seed=3)[0] >= 1 / 501


def test_exact_sign_flip_with_large_groups_of_equal_differences() -> None:
    # 600 items gained 0.25 and 400 lost 0.25: p = P(|2J - 1000| >= 200) = 2 P(J >= 600), J ~ Bin(1000, 1/2).
    d = np.array([0.25] * 600 + [-0.25] * 400)
    p, method = sign_flip_p_value(d)
    assert p == pytest.approx(2 * scipy.stats.binom.sf(599, 1000, 0.5), rel=1e-9)
    assert method == "exact sign-flip (1000 non-zero differences, 1001 sign-count combinations)"
    assert sign_flip_p_value([0.5] * 200)[0] == pytest.approx(2.0**-199, rel=1e-9)


def test_all_zero_differences_have_p_one() -> None:
    assert sign_flip_p_value([0.0, 0.0, 0.0]) == (1.0, "exact sign-flip (every difference is 0)")


def test_paired_numbers_match_scipy_ttest_rel() -> None:
    rng = np.random.default_rng(9)
    a = (rng.random((80, 5)) < 0.6).astype(int)
    b = (rng.random((80, 5)) < 0.68).astype(int)
    result = compare_paired(a, b, alpha=0.1)
    x, y = a.mean(axis=1), b.mean(axis=1)
    ttest = scipy.stats.ttest_rel(y, x)
    ci = ttest.confidence_interval(confidence_level=0.9)
    assert result.delta == pytest.approx(y.mean() - x.mean(), rel=1e-12)
    assert result.delta / result.se == pytest.approx(ttest.statistic, rel=1e-12)
    assert result.interval.low == pytest.approx(ci.low, rel=1e-12)
    assert result.interval.high == pytest.approx(ci.high, rel=1e-12)
    assert result.p_value == pytest.approx(ttest.pvalue, rel=1e-12)
    assert result.se_floor is not None and result.se_floor < result.se  # the spread, not the floor, decides
    assert result.p_value_normal == pytest.approx(2 * scipy.stats.norm.sf(abs(ttest.statistic)), rel=1e-12)
    assert result.mde == pytest.approx(detectable_effect(result.se, 79, 0.1, 0.8), rel=1e-14)
    assert result.p_value_method == "paired t (df=79)"
    assert result.interval.level == pytest.approx(0.9) and result.interval.method == "paired t"


@pytest.mark.parametrize(
    ("metric", "k", "tau", "point"),
    [
        ("pass@k", 3, None, lambda R: ts.pass_at_k(R, 3)),
        ("pass^k", 3, None, lambda R: ts.pass_hat_k(R, 3)),
        ("g-pass@k_tau", 4, 0.5, lambda R: ts.g_pass_at_k_tau(R, 4, 0.5)),
        ("mg-pass@k", 4, None, lambda R: ts.mg_pass_at_k(R, 4)),
    ],
)
def test_paired_delta_of_any_bank_estimator(metric, k, tau, point) -> None:
    rng = np.random.default_rng(10)
    a = (rng.random((60, 8)) < 0.5).astype(int)
    b = (rng.random((60, 8)) < 0.55).astype(int)
    result = compare_paired(a, b, metric, k, tau)
    assert result.delta == pytest.approx(point(b) - point(a), abs=1e-12)
    assert result.baseline == pytest.approx(point(a), rel=1e-12) and result.k == k


def test_verdicts_follow_the_stated_rule() -> None:
    rng = np.random.default_rng(11)
    rate = rng.beta(2, 2, size=(150, 1))
    base = (rng.random((150, 6)) < rate).astype(int)
    better = (rng.random((150, 6)) < np.minimum(rate + 0.25, 1)).astype(int)
    same = compare_paired(base, base.copy())
    assert (same.verdict, same.p_value, same.delta) == ("identical", 1.0, 0.0)
    up = compare_paired(base, better)
    down = compare_paired(better, base)
    assert up.verdict == "improvement" and up.p_value < 0.05 and up.delta > 0
    assert down.verdict == "regression" and down.delta == pytest.approx(-up.delta)
    noise = compare_paired(base, (rng.random((150, 6)) < rate).astype(int))
    assert (noise.verdict == "within_noise") == (noise.p_value >= 0.05)
    for result in (up, down, noise):
        assert (result.verdict == "within_noise") == result.interval.contains(0.0)
    assert "95% interval of delta lies above 0" in up.rule and "paired t-test" in up.rule


def test_items_in_only_one_run_are_reported_and_ids_match_in_any_order() -> None:
    baseline = {"a": [1, 1, 0], "b": [0, 0, 1], "c": [1, 1, 1], "gone": [1, 1, 1]}
    candidate = {"new": [0, 0, 0], "c": [1, 0, 1], "b": [0, 1, 1], "a": [1, 1, 1]}
    result = compare_paired(baseline, candidate)
    assert result.only_in_baseline == ("gone",) and result.only_in_candidate == ("new",)
    assert (result.paired_items, result.items_baseline, result.items_candidate) == (3, 4, 4)
    assert result.delta == pytest.approx((1 / 3 + 1 / 3 - 1 / 3) / 3, rel=1e-12)
    assert "1 items only in baseline, 1 only in candidate" in str(result)
    by_ids = compare_paired(
        [[1, 1, 0], [0, 0, 1], [1, 1, 1]],
        [[1, 0, 1], [1, 1, 1]],
        ids_baseline=["a", "b", "c"],
        ids_candidate=["c", "a"],
    )
    assert by_ids.only_in_baseline == ("b",) and by_ids.paired_items == 2
    payload = json.loads(json.dumps(result.to_dict()))
    assert payload["only_in_baseline"] == ["gone"] and payload["interval"]["method"] == "paired t"


def test_graded_scores_compare_by_item_mean() -> None:
    a = [[0.2, 0.4], [0.9, 0.7], [0.5, 0.5], [0.1, 0.3]]
    b = [[0.4, 0.4], [0.9, 0.9], [0.6, 0.5], [0.3, 0.3]]
    result = compare_paired(a, b)
    assert result.delta == pytest.approx(np.mean(b) - np.mean(a), rel=1e-12)
    assert result.p_value_sign_flip == pytest.approx(1 / 8)  # all four positive: 2 of 16 sign patterns
    # graded floor: an eighth of both runs' mean unbiased trial variance over n
    floor = (np.var(a, axis=1, ddof=1).mean() + np.var(b, axis=1, ddof=1).mean()) / 2 / 8
    spread = np.var(np.mean(b, 1) - np.mean(a, 1), ddof=1)
    assert result.se_floor == pytest.approx(math.sqrt(floor / 4), rel=1e-12)
    assert result.se == pytest.approx(math.sqrt(max(spread, floor) / 4), rel=1e-12)
    assert result.p_value == pytest.approx(2 * scipy.stats.t.sf(result.delta / result.se, 3), rel=1e-12)


def test_permutations_zero_skips_the_sign_flip_extra() -> None:
    rng = np.random.default_rng(12)
    a, b = rng.random((30, 3)), rng.random((30, 3)) + 0.1
    without = compare_paired(a, b, permutations=0)
    with_it = compare_paired(a, b)
    assert without.p_value_sign_flip is None and without.sign_flip_method is None
    assert with_it.p_value_sign_flip == sign_flip_p_value(np.mean(b, 1) - np.mean(a, 1))[0]
    assert (without.p_value, without.verdict, without.interval) == (
        with_it.p_value,
        with_it.verdict,
        with_it.interval,
    )


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: compare_paired([[1, 0], [0, 1]], [[1, 0], [0, 1], [1, 1]]),
            r"same number of items to pair them by position; got 2 and 3",
        ),
        (
            lambda: compare_paired([[1, 0], [0, 1]], [[1, 0], [0, 1]], ids_baseline=["a", "b"]),
            r"item ids must be given for both runs or for neither",
        ),
        (
            lambda: compare_paired(
                [[1, 0], [0, 1]], [[1, 0], [0, 1]], ids_baseline=["a", "a"], ids_candidate="ab"
            ),
            r"item ids of baseline must be unique; got 'a' more than once",
        ),
        (
            lambda: compare_paired({"a": [1], "b": [0]}, {"a": [1], "c": [0]}),
            r"must share at least 2 items for a paired comparison; got 1",
        ),
        (
            lambda: compare_paired({"a": [1], "b": [0]}, {"a": [1], "b": [0]}, ids_baseline=["x", "y"]),
            r"ids_baseline must be None when baseline is a mapping",
        ),
        (
            lambda: compare_paired(
                [[1, 0], [0, 1]], [[1, 0], [0, 1]], ids_baseline=["a"], ids_candidate=["a"]
            ),
            r"ids_baseline must hold one id per item; got 1 ids for 2 items",
        ),
        (
            lambda: compare_paired([[1, 0], [0, 1]], [[1, 0], [0, 1]], alpha=0),
            r"alpha must satisfy 0 < alpha < 1",
        ),
        (lambda: compare_paired([[1, 0]], [[1, 0]], "pass@k", k=3), r"k must satisfy 1 <= k <= n; got k=3"),
        (lambda: compare_unpaired([[1, 0]], [[1, 0], [0, 0]]), r"baseline must hold at least 2 items"),
    ],
)
def test_bad_comparisons_are_named(call, message: str) -> None:
    with pytest.raises(EvaluationError, match=message):
        call()


def test_unpaired_matches_scipy_welch() -> None:
    rng = np.random.default_rng(13)
    a = Bank.from_counts(np.full(70, 4), rng.binomial(4, 0.5, size=70))
    b = Bank.from_counts(np.full(45, 6), rng.binomial(6, 0.62, size=45))
    result = compare_unpaired(a, b, alpha=0.05)
    x, y = a.c / a.n, b.c / b.n
    welch = scipy.stats.ttest_ind(y, x, equal_var=False)
    ci = welch.confidence_interval(0.95)
    assert result.p_value == pytest.approx(welch.pvalue, rel=1e-10)
    assert result.interval.low == pytest.approx(ci.low, rel=1e-10)
    assert result.interval.high == pytest.approx(ci.high, rel=1e-10)
    assert result.design == "unpaired" and result.paired_items == 0
    assert result.verdict == ("improvement" if welch.pvalue < 0.05 else "within_noise")
    same = compare_unpaired(a, Bank.from_counts(a.n[::-1], a.c[::-1]))
    assert same.verdict == "identical" and "same item values" in same.rule


def test_bayes_comparison_applies_the_z_rule() -> None:
    rng = np.random.default_rng(14)
    a = (rng.random((40, 10)) < 0.55).astype(int)
    b = (rng.random((40, 10)) < 0.65).astype(int)
    result = compare_bayes(a, b)
    mu_a, sigma_a = ts.bayes(a)
    mu_b, sigma_b = ts.bayes(b)
    z = (mu_b - mu_a) / math.hypot(sigma_a, sigma_b)
    rho, abs_z = ranking_confidence(mu_a, sigma_a, mu_b, sigma_b)
    assert result.z == pytest.approx(z, rel=1e-12) and abs(result.z) == pytest.approx(abs_z, rel=1e-12)
    assert max(result.probability, 1 - result.probability) == pytest.approx(rho, rel=1e-12)
    threshold = scipy.stats.norm.ppf(0.975)  # alpha = 0.05 in total, 0.025 per direction
    expected = "improvement" if z >= threshold else ("regression" if z <= -threshold else "within_noise")
    assert result.verdict == expected
    assert result.intervals_overlap == (result.baseline.high >= result.candidate.low)
    assert compare_bayes(a, a).verdict == "identical"
    graded = compare_bayes([[0, 1, 2]] * 5, [[2, 2, 1]] * 5, [0.0, 0.5, 1.0], alpha=0.1)
    assert graded.verdict == "improvement" and graded.alpha == 0.1 and graded.confidence == 0.95
    assert graded.baseline.level == 0.9 and "Phi^-1(1 - alpha/2)" in graded.rule
    assert json.loads(json.dumps(graded.to_dict()))["candidate"]["method"].startswith("bayes@n credible")


@functools.cache
def same_item_runs(a: float, b: float, trials: int, items: int) -> list[tuple[Bank, Bank]]:
    """2,000 seeded pairs of runs of the same items (rates from Beta(a, b)), drawn once for every alpha."""
    rng = np.random.default_rng(15)
    n = np.full(items, trials)
    runs = []
    for _ in range(2000):
        p = rng.beta(a, b, items)
        first = Bank.from_counts(n, rng.binomial(trials, p))
        runs.append((first, Bank.from_counts(n, rng.binomial(trials, p))))
    return runs


@pytest.mark.slow
@pytest.mark.parametrize(("a", "b", "trials", "items"), [(4, 2, 5, 100), (4, 2, 5, 20), (9, 1.1, 10, 100)])
@pytest.mark.parametrize("alpha", [0.05, 0.1])
def test_bayes_comparison_false_positive_rate_is_at_most_alpha_in_total(
    a: float, b: float, trials: int, items: int, alpha: float
) -> None:
    """Two runs of the same items (rates from Beta(a, b)): alpha counts both directions."""
    runs = same_item_runs(a, b, trials, items)
    reps = len(runs)
    flagged = sum(
        compare_bayes(first, second, alpha=alpha).verdict in ("improvement", "regression")
        for first, second in runs
    )
    rate = flagged / reps
    assert rate <= alpha + 3 * math.sqrt(alpha * (1 - alpha) / reps)


# --- false-positive rate under no difference ------------------------------------------------------------


@pytest.mark.slow
def test_paired_false_positive_rate_is_near_alpha_exact_path() -> None:
    rng = np.random.default_rng(15)
    rejections = 0
    for _ in range(2000):
        rate = rng.beta(2, 2, size=(50, 1))
        a = rng.random((50, 4)) < rate
        b = rng.random((50, 4)) < rate
        result = compare_paired(a, b)
        assert result.sign_flip_method is not None and result.sign_flip_method.startswith("exact")
        rejections += result.verdict != "within_noise"
    assert 0.03 <= rejections / 2000 <= 0.07, rejections / 2000


@pytest.mark.slow
def test_paired_false_positive_rate_is_near_alpha_monte_carlo_path() -> None:
    rng = np.random.default_rng(16)
    rejections = 0
    for data_set in range(2000):
        level = rng.random((40, 1))
        a = np.clip(level + 0.2 * rng.standard_normal((40, 3)), 0, 1)
        b = np.clip(level + 0.2 * rng.standard_normal((40, 3)), 0, 1)
        result = compare_paired(a, b, permutations=400, seed=data_set)
        assert result.sign_flip_method is not None and result.sign_flip_method.startswith("monte carlo")
        rejections += result.verdict != "within_noise"
    assert 0.03 <= rejections / 2000 <= 0.07, rejections / 2000


# --- the trial-noise floor of the paired SE -------------------------------------------------------------


def test_trial_noise_floor_by_hand() -> None:
    # four items 2/5 -> 3/5: every difference 0.2, zero spread; v = (2.5 * 3.5) / (6 * 7 * 5) for both runs
    result = compare_paired(Bank.from_counts([5] * 4, [2] * 4), Bank.from_counts([5] * 4, [3] * 4))
    v = 2.5 * 3.5 / (6 * 7 * 5)
    floor = (v + v) / 8
    assert result.se_floor == pytest.approx(math.sqrt(floor / 4), rel=1e-12) and result.se == result.se_floor
    half = scipy.stats.t.ppf(0.975, 3) * math.sqrt(floor / 4)
    assert (result.interval.low, result.interval.high) == pytest.approx((0.2 - half, 0.2 + half), rel=1e-12)
    assert result.verdict == "improvement" and "trial-noise floor" in result.p_value_method
    # a saturated item still has trial noise: (n + 1/2) (1/2) / ((n + 1)(n + 2) n)
    saturated = compare_paired(Bank.from_counts([4, 4], [4, 4]), Bank.from_counts([4, 4], [3, 3]))
    assert saturated.se_floor == pytest.approx(math.sqrt((4.5 * 0.5 + 3.5 * 1.5) / (5 * 6 * 4) / 8 / 2))


def exact_two_item_p(trials: int, first: int, second: int) -> float:
    """Exact equal-tailed re-split p-value of two items that both went from first to second of trials."""
    total = first + second
    xs = np.arange(max(0, total - trials), min(trials, total) + 1)
    pmf = scipy.stats.hypergeom.pmf(xs, 2 * trials, total, trials)
    sums = (xs[:, None] + xs[None, :]).ravel()
    weights = (pmf[:, None] * pmf[None, :]).ravel()
    observed = 2 * second
    return min(1.0, 2 * min(weights[sums <= observed].sum(), weights[sums >= observed].sum()))


@pytest.mark.slow
def test_two_items_without_spread_are_significant_only_where_the_exact_test_of_them_is() -> None:
    """Two items whose differences agree: t with 1 df on the floor, never zero width, never outside
    [-1, 1], and never significant where the exact re-split test of these two items is not."""
    significant_cases = 0
    for trials in range(1, 11):
        for first in range(trials + 1):
            for second in range(trials + 1):
                a = Bank.from_counts([trials] * 2, [first] * 2)
                b = Bank.from_counts([trials] * 2, [second] * 2)
                result = compare_paired(a, b, permutations=0)
                assert result.se > 0 and -1.0 <= result.interval.low <= result.interval.high <= 1.0
                if result.verdict in ("improvement", "regression"):
                    significant_cases += 1
                    assert exact_two_item_p(trials, first, second) < 0.05, (trials, first, second)
    assert significant_cases > 0


def test_floor_of_other_metrics_is_the_binomial_variance_of_the_estimate() -> None:
    rng = np.random.default_rng(21)
    a = (rng.random((30, 6)) < 0.6).astype(int)
    b = (rng.random((30, 6)) < 0.7).astype(int)
    assert compare_paired(a, b, "pass@k", 1).se_floor == pytest.approx(
        compare_paired(a, b).se_floor, rel=1e-12
    )
    # pass^2 of one item with c of n = 6: Var of C(c, 2)/C(6, 2) under Binomial(6, (c + 1/2)/7), times 7/8
    for c in range(7):
        rate = (c + 0.5) / 7
        pmf = scipy.stats.binom.pmf(np.arange(7), 6, rate)
        values = np.array([math.comb(j, 2) / 15 for j in range(7)])
        v = (pmf @ values**2 - (pmf @ values) ** 2) * 7 / 8
        run = Bank.from_counts([6, 6], [c, c])
        floor = (v + v) / 8  # both runs the same
        assert compare_paired(run, run, "pass^k", 2).se_floor == pytest.approx(
            math.sqrt(floor / 2), rel=1e-10
        )


def test_clustered_comparison_reads_its_verdict_off_its_own_interval() -> None:
    rng = np.random.default_rng(30)
    for _ in range(50):
        items = 24
        ids = [f"q{i}" for i in range(items)]
        clusters = {item: f"p{i // 4}" for i, item in enumerate(ids)}
        a = (rng.random((items, 3)) < 0.6).astype(int)
        b = (rng.random((items, 3)) < rng.uniform(0.5, 0.9)).astype(int)
        result = compare_clustered(a, b, clusters, ids_baseline=ids, ids_candidate=ids)
        excludes_zero = not result.interval.contains(0.0)
        assert (result.verdict in ("improvement", "regression")) == excludes_zero
    with pytest.raises(EvaluationError, match="needs item ids"):
        compare_clustered([[1, 0], [0, 1]], [[1, 1], [0, 1]], {})
    with pytest.raises(EvaluationError, match="got none for 'b'"):
        compare_clustered({"a": [1], "b": [0]}, {"a": [1], "b": [1]}, {"a": "x"})


# --- differences of scores in [0, 1] lie in [-1, 1] (issues 23.7, 29.7) ------------------------------


def test_unpaired_with_one_trial_and_no_spread_is_not_exact() -> None:
    result = compare_unpaired([[1], [1]], [[0], [0]])
    assert result.verdict == "within_noise" and result.p_value > 0.05
    assert result.interval.low == -1.0 and 0 < result.interval.high <= 1.0
    assert result.interval.clipped_to == (-1.0, 1.0) and result.mde is None
    assert any("too few items to test" in note for note in result.notes)


def test_paired_intervals_are_clipped_to_the_range_of_a_difference_and_say_so() -> None:
    # two items, one trial each, that both failed: t with 1 df gave [-4.18, 2.18]
    result = compare_paired([[1]] * 2, [[0]] * 2)
    assert (result.interval.low, result.interval.clipped_to) == (-1.0, (-1.0, 1.0))
    assert result.mde is None and "clipped to [-1, 1]" in str(result.interval)
    assert result.to_dict()["mde"] is None and "MDE none below 1" in str(result)
    many = compare_paired([[1, 0, 1]] * 40, [[0, 1, 0]] * 40)  # plenty of items: nothing to clip
    assert many.interval.clipped_to is None and many.mde is not None and many.notes == ()
    graded = compare_paired([[3.0, 5.0], [4.0, 2.0]], [[9.0, 1.0], [0.5, 6.0]])  # not in [0, 1]: no clip
    assert graded.interval.clipped_to is None and graded.interval.low < -1.0


def test_the_clustered_interval_is_clipped_too() -> None:
    old = {f"q{i}": [1, 1] for i in range(4)}
    new = {f"q{i}": [0, 0] for i in range(4)}
    result = compare_clustered(old, new, {f"q{i}": i // 2 for i in range(4)})
    assert result.interval.clipped_to == (-1.0, 1.0) and result.interval.low == -1.0


def test_estimand_items_needs_zero_one_trials_and_enough_resplits() -> None:
    with pytest.raises(EvaluationError, match=r"re-splits 0/1 trials.*baseline holds graded"):
        compare_paired([[0.5, 0.2], [0.1, 0.9]], [[1, 0], [0, 1]], estimand="items")
    with pytest.raises(EvaluationError, match=r"permutations must be at least 2 / alpha = 40"):
        compare_paired([[1, 0], [0, 1]], [[1, 0], [0, 1]], estimand="items", permutations=10)
    with pytest.raises(EvaluationError, match="estimand must be one of"):
        compare_paired([[1, 0], [0, 1]], [[1, 0], [0, 1]], estimand="fixed")
