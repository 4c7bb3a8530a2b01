"""Bank-level estimators against exact rational arithmetic, seed examples and properties."""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterator
from decimal import Decimal
from fractions import Fraction

import numpy as np
import oracle
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import trialscore as ts
from trialscore import EvaluationError

SEED_R = [[0, 1, 1, 0, 1], [1, 1, 0, 1, 1]]


# --- every example printed in seed 004 ---------------------------------------------------------


def test_seed_004_examples() -> None:
    assert ts.avg(SEED_R) == pytest.approx(0.7, abs=1e-15)
    assert ts.pass_at_k(SEED_R, 1) == pytest.approx(0.7, abs=1e-15)
    assert ts.pass_at_k(SEED_R, 2) == pytest.approx(0.95, abs=1e-15)
    assert ts.pass_hat_k(SEED_R, 1) == pytest.approx(0.7, abs=1e-15)
    assert ts.pass_hat_k(SEED_R, 2) == pytest.approx(0.45, abs=1e-15)
    assert ts.g_pass_at_k(SEED_R, 2) == ts.pass_hat_k(SEED_R, 2)
    assert ts.g_pass_at_k_tao(SEED_R, 2, 0.5) == pytest.approx(0.95, abs=1e-15)
    assert ts.g_pass_at_k_tao(SEED_R, 2, 1.0) == pytest.approx(0.45, abs=1e-15)
    assert ts.mg_pass_at_k(SEED_R, 2) == pytest.approx(0.45, abs=1e-15)
    assert ts.mg_pass_at_k(SEED_R, 3) == pytest.approx(1 / 6, abs=1e-15)


def test_seed_004_bayes_examples() -> None:
    R = [[0, 1, 2, 2, 1], [1, 1, 0, 2, 2]]
    w = [0.0, 0.5, 1.0]
    mu, sigma = ts.bayes(R, w, [[0, 2], [1, 2]])
    assert mu == pytest.approx(0.575, abs=1e-12)
    assert sigma == pytest.approx(0.084275, abs=5e-7)
    mu, sigma = ts.bayes(R, w)
    assert mu == pytest.approx(0.5625, abs=1e-12)
    assert sigma == pytest.approx(0.091998, abs=5e-7)


def test_bayes_matches_exact_formula() -> None:
    # T = 1 + C + D + N = 10 with the prior; nu counts by hand from the seed example.
    nu = [[1 + 1 + 1, 1 + 2, 1 + 2 + 1], [1 + 1, 1 + 2 + 1, 1 + 2 + 1]]
    w = [Fraction(0), Fraction(1, 2), Fraction(1)]
    T, M = 10, 2
    mu = sum(v * wj for row in nu for v, wj in zip(row, w, strict=True)) / (M * T)
    var = sum(
        sum(Fraction(v, T) * wj**2 for v, wj in zip(row, w, strict=True))
        - sum(Fraction(v, T) * wj for v, wj in zip(row, w, strict=True)) ** 2
        for row in nu
    ) / (M**2 * (T + 1))
    got_mu, got_sigma = ts.bayes([[0, 1, 2, 2, 1], [1, 1, 0, 2, 2]], [0, 0.5, 1], [[0, 2], [1, 2]])
    assert got_mu == pytest.approx(float(mu), rel=1e-15)
    assert got_sigma == pytest.approx(math.sqrt(var), rel=1e-14)


def test_bayes_states_path_equals_per_item_path() -> None:
    R = (np.random.default_rng(5).random((300, 7)) < 0.4).astype(int)
    per_item = ts.bayes(R.astype(float))  # float input takes the per-item path
    on_states = ts.bayes(R)  # integer input: items grouped by (n, c) state
    assert on_states == pytest.approx(per_item, rel=1e-14)
    prior = (np.random.default_rng(6).random((300, 2)) < 0.5).astype(int)
    assert ts.bayes(R, None, prior) == pytest.approx(ts.bayes(R.astype(float), None, prior), rel=1e-14)


def test_bayes_binary_default_and_ragged_counts() -> None:
    R = [[1, 0, 1, 1], [0, 0, 1, 0]]
    assert ts.bayes(R) == ts.bayes(R, [0, 1])
    assert ts.bayes(ts.Bank.from_matrix(R)) == pytest.approx(ts.bayes(R), rel=1e-15)
    # ragged: each item its own T = 1 + C + N_alpha; posterior mean (c + 1) / (n + 2)
    mu, _ = ts.bayes([[1, 1, 1], [0]])
    assert mu == pytest.approx(((3 + 1) / 5 + (0 + 1) / 3) / 2, rel=1e-15)


# --- exact oracles on every (n, c, k) of small banks -------------------------------------------


@pytest.mark.parametrize("n", [1, 2, 5, 13, 40])
def test_every_state_and_k_matches_fractions(n: int) -> None:
    c = np.arange(n + 1)
    for k in range(1, n + 1):
        checks = {
            "pass@k": [oracle.pass_at_k(n, ci, k) for ci in c],
            "pass^k": [oracle.pass_hat_k(n, ci, k) for ci in c],
            "mg-pass@k": [oracle.mg_pass_at_k(n, ci, k) for ci in c],
            "maj@k": [oracle.at_least(n, ci, k, k // 2 + 1) for ci in c],
        }
        for metric, want in checks.items():
            got = ts.state_scores(np.full(n + 1, n), c, metric, k=k)
            for g, w in zip(got, want, strict=True):
                assert oracle.rel_err(g, float(w)) < 1e-13, (metric, n, k)
        for tau in (0.0, 0.25, 0.5, 0.7, 1.0):
            needed = max(1, math.ceil(Fraction(str(tau)) * k))
            got = ts.state_scores(np.full(n + 1, n), c, "g-pass@k_tau", k=k, tau=tau)
            for ci, g in zip(c, got, strict=True):
                assert oracle.rel_err(g, float(oracle.at_least(n, int(ci), k, needed))) < 1e-13


def test_bank_means_match_fractions() -> None:
    rng = np.random.default_rng(7)
    R = (rng.random((30, 12)) < rng.random((30, 1))).astype(int)
    c = R.sum(axis=1)
    for k in range(1, 13):
        want = sum(oracle.pass_at_k(12, int(ci), k) for ci in c) / 30
        assert ts.pass_at_k(R, k) == pytest.approx(float(want), rel=1e-14)
        want = sum(oracle.pass_hat_k(12, int(ci), k) for ci in c) / 30
        assert ts.pass_hat_k(R, k) == pytest.approx(float(want), rel=1e-13, abs=1e-300)
        want = sum(oracle.mg_pass_at_k(12, int(ci), k) for ci in c) / 30
        assert ts.mg_pass_at_k(R, k) == pytest.approx(float(want), rel=1e-13, abs=1e-300)


def test_small_bank_means_are_the_double_nearest_the_exact_rational() -> None:
    """Every metric, every k, ragged small banks: the mean is rounded once, so 0.45 prints as 0.45."""
    R = [[0, 1, 1, 0, 1], [1, 1, 0, 1, 1]]
    assert ts.pass_hat_k(R, 2) == 0.45 and repr(ts.pass_hat_k(R, 2)) == "0.45"
    rng = np.random.default_rng(11)
    for _ in range(20):
        n = rng.integers(3, 13, size=int(rng.integers(2, 9)))
        c = rng.integers(0, n + 1)
        bank = ts.Bank.from_counts(n, c)
        for k in range(1, int(n.min()) + 1):
            checks = {
                "pass@k": (ts.pass_at_k, oracle.pass_at_k),
                "pass^k": (ts.pass_hat_k, oracle.pass_hat_k),
                "mg-pass@k": (ts.mg_pass_at_k, oracle.mg_pass_at_k),
            }
            for name, (estimator, exact) in checks.items():
                terms = (Fraction(exact(int(ni), int(ci), k)) for ni, ci in zip(n, c, strict=True))
                want = sum(terms, Fraction(0)) / len(n)
                assert estimator(bank, k) == float(want), (name, k, n.tolist(), c.tolist())
        exact_avg = sum(Fraction(int(ci), int(ni)) for ni, ci in zip(n, c, strict=True)) / len(n)
        assert ts.avg(bank) == float(exact_avg)


# --- large n: every k, tiny results, results near 1 --------------------------------------------


def _nearest_ratios(n: int, a: int) -> Iterator[tuple[float, float]]:
    """For k = 1..n, the doubles nearest to r = C(a, k) / C(n, k) and to 1 - r, from exact integers.

    r = num / den is the product of (a - i) / (n - i) over i < k, kept in lowest terms (each
    reduced factor is cancelled crosswise, as ``Fraction`` would), so it stays small when a is
    near n or k passes a.  No factor exceeds 1, so r never grows with k: once r < 2**-1076, every later r
    rounds to 0.0 and every later 1 - r to 1.0 (rounding to nearest is monotone), and the
    product stops there.
    """
    num = den = 1
    nearest = (1.0, 0.0)
    for k in range(1, n + 1):
        if num << 1076 >= den:
            common = math.gcd(a - k + 1, n - k + 1)  # the factor in lowest terms, as Fraction's
            up, down = (a - k + 1) // common, (n - k + 1) // common
            g, h = math.gcd(num, down), math.gcd(den, up)
            num, den = num // g * (up // h), den // h * (down // g)
            nearest = (oracle.exact_ratio(num, den), oracle.exact_ratio(den - num, den))
        yield nearest


def _check_every_k(n: int, cs: list[int]) -> None:
    """pass@k and pass^k for every k = 1..n against exact rationals.

    pass^k is C(c, k) / C(n, k) and pass@k is 1 - C(n - c, k) / C(n, k).
    """
    for c in cs:
        curve = ts.pass_curve(ts.Bank.from_counts([n], [c]))
        # column 0 the doubles nearest r, column 1 those nearest 1 - r, row k - 1 for each k
        nearest = {a: np.array(list(_nearest_ratios(n, a))) for a in {c, n - c}}
        _check_close(curve.pass_hat_k, nearest[c][:, 0], c)
        _check_close(curve.pass_at_k, nearest[n - c][:, 1], c)


def _check_close(got: np.ndarray, want: np.ndarray, c: int) -> None:
    """``oracle.rel_err(got[k - 1], want[k - 1]) < 1e-12`` for every k, the same arithmetic on arrays."""
    errors = np.abs(got - want) / np.maximum(np.abs(want), 1e-300)
    wrong = np.flatnonzero(~(errors < 1e-12))  # a NaN error is wrong too
    assert wrong.size == 0, (c, int(wrong[0]) + 1)


def test_every_k_at_n_10_000_against_exact_integers() -> None:
    _check_every_k(10_000, [0, 1, 7, 2_500, 5_000, 9_999, 10_000])


@pytest.mark.slow
def test_every_k_at_n_100_000_against_exact_integers() -> None:
    _check_every_k(100_000, [3, 31_337, 50_000, 99_999])


def test_tiny_and_near_one_results_at_large_n() -> None:
    n = 100_000
    # pass^k of about 1e-300: half the trials pass, k = 989
    want = oracle.exact_ratio(math.comb(50_000, 989), math.comb(n, 989))
    assert 1e-300 < want < 2e-300
    got = ts.pass_hat_k(ts.Bank.from_counts([n], [50_000]), 989)
    assert oracle.rel_err(got, want) < 1e-12
    # pass@1 with one success in 100,000: 1e-5, no cancellation in 1 - (1 - 1e-5)
    got = ts.pass_at_k(ts.Bank.from_counts([n], [1]), 1)
    assert oracle.rel_err(got, 1e-5) < 1e-15
    # pass@k just below 1: 1 - C(10, 5)/C(n, 5)
    want = oracle.exact_ratio(math.comb(n, 5) - math.comb(10, 5), math.comb(n, 5))
    got = ts.pass_at_k(ts.Bank.from_counts([n], [n - 10]), 5)
    assert oracle.rel_err(got, want) < 1e-15


@pytest.mark.parametrize(("n", "c", "k"), [(100_000, 50_000, 40), (100_000, 123, 100), (10_000, 9_000, 150)])
def test_thresholds_at_large_n_against_fractions(n: int, c: int, k: int) -> None:
    bank = ts.Bank.from_counts([n], [c])
    for needed in sorted({1, 2, k // 3, k // 2, k // 2 + 1, k - 1, k}):
        want = float(oracle.at_least(n, c, k, needed))
        got = ts.state_scores([n], [c], "g-pass@k_tau", k=k, tau=Fraction(needed, k))[0]
        if want > 1e-300:
            assert oracle.rel_err(got, want) < 1e-12, needed
    assert oracle.rel_err(ts.mg_pass_at_k(bank, k), float(oracle.mg_pass_at_k(n, c, k))) < 1e-12


def test_no_warning_overflow_or_nan_at_extremes() -> None:
    with warnings.catch_warnings(), np.errstate(over="raise", invalid="raise", divide="raise"):
        warnings.simplefilter("error")
        bank = ts.Bank.from_counts([100_000, 100_000, 100_000, 3], [0, 100_000, 50_000, 2])
        for k in (1, 2, 3):
            for f in (ts.pass_at_k, ts.pass_hat_k, ts.mg_pass_at_k, ts.maj_at_k):
                value = f(bank, k)
                assert 0.0 <= value <= 1.0
        big = ts.Bank.from_counts([100_000], [50_000])
        assert ts.pass_hat_k(big, 60_000) == 0.0
        assert ts.pass_at_k(big, 60_000) == 1.0
        assert 0 <= ts.g_pass_at_k_tau(big, 50_000, 0.5) <= 1
        curve = ts.pass_curve(big)
        assert np.isfinite(curve.pass_at_k).all() and np.isfinite(curve.pass_hat_k).all()


# --- the tau threshold -------------------------------------------------------------------------


def test_tau_threshold_is_exact() -> None:
    assert ts.tau_threshold(0.28, 25) == 7
    assert ts.tau_threshold(Fraction(7, 25), 25) == 7
    assert ts.tau_threshold(Decimal("0.28"), 25) == 7
    assert ts.tau_threshold(0.2800001, 25) == 8
    assert ts.tau_threshold(0.1, 10) == 1
    assert ts.tau_threshold(0.7, 10) == 7
    assert ts.tau_threshold(0, 10) == 1
    for k in range(1, 60):
        for j in range(0, k + 1):
            assert ts.tau_threshold(j / k, k) == max(1, j)


def test_tau_extremes_equal_pass_at_k_and_pass_hat_k() -> None:
    R = (np.random.default_rng(3).random((50, 9)) < 0.4).astype(np.int8)
    for k in range(1, 10):
        assert ts.g_pass_at_k_tau(R, k, 0) == ts.pass_at_k(R, k)
        assert ts.g_pass_at_k_tau(R, k, 1) == ts.pass_hat_k(R, k)


# --- inputs: dtypes, ragged, Bank --------------------------------------------------------------


@pytest.mark.parametrize("dtype", [bool, np.int8, np.uint8, np.int32, np.int64, np.uint64, np.float32, float])
@pytest.mark.parametrize("trials", [7, 8, 64, 2048, 2056])
def test_every_dtype_gives_the_same_counts(dtype: type, trials: int) -> None:
    base = np.random.default_rng(trials).random((20, trials)) < 0.3
    R = base.astype(dtype)
    assert ts.Bank.from_matrix(R).c.tolist() == base.sum(axis=1).tolist()
    assert ts.pass_at_k(R, 3) == ts.pass_at_k(base, 3)
    assert ts.avg(R) == int(base.sum()) / base.size


def test_non_contiguous_matrix() -> None:
    base = np.random.default_rng(1).random((40, 32)) < 0.5
    view = base[::2, ::2]
    assert ts.Bank.from_matrix(view).c.tolist() == view.sum(axis=1).tolist()
    assert ts.Bank.from_matrix(np.asfortranarray(base)).c.tolist() == base.sum(axis=1).tolist()


def test_ragged_outcomes_use_each_items_own_n() -> None:
    outcomes = [[1, 0, 1], [0, 0, 0, 1, 1, 1, 1]]
    want = (float(oracle.pass_at_k(3, 2, 2)) + float(oracle.pass_at_k(7, 4, 2))) / 2
    assert ts.pass_at_k(outcomes, 2) == pytest.approx(want, rel=1e-15)
    assert ts.pass_at_k(ts.Bank.from_counts([3, 7], [2, 4]), 2) == ts.pass_at_k(outcomes, 2)
    assert ts.avg(outcomes) == pytest.approx((2 / 3 + 4 / 7) / 2, rel=1e-15)
    with pytest.raises(EvaluationError, match=r"got k=4 but item 0 has n=3"):
        ts.pass_at_k(outcomes, 4)


def test_item_scores_map_back_to_items() -> None:
    bank = ts.Bank.from_counts([5, 3, 5, 3], [4, 1, 4, 3])
    got = ts.item_scores(bank, "pass^k", k=2)
    want = [oracle.pass_hat_k(n, c, 2) for n, c in zip([5, 3, 5, 3], [4, 1, 4, 3], strict=True)]
    assert got.tolist() == pytest.approx([float(w) for w in want], rel=1e-15)
    assert got.mean() == pytest.approx(ts.pass_hat_k(bank, 2), rel=1e-15)


def test_avg_accepts_real_scores() -> None:
    assert ts.avg([[0.5, 1.0], [0.25, 0.25]]) == pytest.approx(0.5)
    assert ts.avg(np.array([[3, -1], [2**40, 0]], dtype=np.int64)) == (2 + 2**40) / 4


def test_estimator_by_name() -> None:
    assert ts.estimator_by_name("pass@k") is ts.pass_at_k
    assert ts.estimator_by_name("g_pass_at_k") is ts.pass_hat_k  # seed 004's name of pass^k
    assert ts.estimator_by_name("g_pass_at_k_tao") is ts.g_pass_at_k_tau
    assert ts.estimator_by_name("bayes") is ts.bayes
    with pytest.raises(EvaluationError, match=r"'G-Pass@k' is ambiguous: say pass\^k .* or g-pass@k_tau"):
        ts.estimator_by_name("G-Pass@k")
    with pytest.raises(
        EvaluationError,
        match=r"metric must be one of avg, pass@k, .*bayes, cost-per-success, .*; got 'pass@K2'",
    ):
        ts.estimator_by_name("pass@K2")


# --- properties (hypothesis) -------------------------------------------------------------------

counts = st.integers(1, 400).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n)))


@settings(max_examples=150, deadline=None)
@given(counts, st.data())
def test_properties_of_one_item(state: tuple[int, int], data: st.DataObject) -> None:
    n, c = state
    k = data.draw(st.integers(1, n))
    tau = data.draw(st.floats(0, 1))
    bank = ts.Bank.from_counts([n], [c])
    at, hat = ts.pass_at_k(bank, k), ts.pass_hat_k(bank, k)
    g = ts.g_pass_at_k_tau(bank, k, tau)
    mg = ts.mg_pass_at_k(bank, k)
    for value in (at, hat, g, mg, ts.maj_at_k(bank, k)):
        assert 0.0 <= value <= 1.0
    slack = 1e-13
    assert at + slack >= g >= hat - slack
    assert mg <= at + slack
    if k < n:
        assert ts.pass_at_k(bank, k + 1) + slack >= at
        assert ts.pass_hat_k(bank, k + 1) <= hat + slack


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 30), st.integers(1, 12), st.integers(0, 2**32 - 1))
def test_ragged_counts_equal_matrix_form_when_rectangular(items: int, trials: int, seed: int) -> None:
    R = np.random.default_rng(seed).random((items, trials)) < 0.5
    bank = ts.Bank.from_counts(np.full(items, trials), R.sum(axis=1))
    as_lists = [list(row) for row in R]
    for k in range(1, trials + 1):
        for f in (ts.pass_at_k, ts.pass_hat_k, ts.mg_pass_at_k):
            assert f(bank, k) == f(R, k) == f(as_lists, k)
        assert ts.g_pass_at_k_tau(bank, k, 0.6) == ts.g_pass_at_k_tau(R, k, 0.6)
    assert ts.bayes(bank) == pytest.approx(ts.bayes(R.astype(int)), rel=1e-15)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 60), st.integers(0, 2**32 - 1))
def test_curve_equals_single_calls(trials: int, seed: int) -> None:
    R = np.random.default_rng(seed).random((25, trials)) < 0.6
    curve = ts.pass_curve(R)
    for k in range(1, trials + 1):
        assert curve.pass_at_k[k - 1] == pytest.approx(ts.pass_at_k(R, k), rel=1e-13, abs=1e-300)
        assert curve.pass_hat_k[k - 1] == pytest.approx(ts.pass_hat_k(R, k), rel=1e-13, abs=1e-300)


# --- every validation rule names the argument, the value and the rule --------------------------


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: ts.pass_at_k(SEED_R, 0), r"k must satisfy 1 <= k <= n; got k=0"),
        (lambda: ts.pass_at_k(SEED_R, 6), r"k must satisfy 1 <= k <= n; got k=6 with n=5"),
        (lambda: ts.pass_at_k(SEED_R, 2.0), r"k must be an integer; got 2.0 \(float\)"),
        (lambda: ts.pass_hat_k(SEED_R, True), r"k must be an integer; got True \(bool\)"),
        (lambda: ts.pass_at_k([[1.0, np.nan]], 1), r"R entries must be finite; got nan at item 0, trial 1"),
        (lambda: ts.pass_at_k([[1.0, np.inf]], 1), r"R entries must be finite; got inf at item 0, trial 1"),
        (
            lambda: ts.pass_at_k([[1, 2]], 1),
            r"R must be binary \(0 or 1\) for this metric; got 2 at item 0, trial 1",
        ),
        (lambda: ts.pass_at_k([[1, 0], [-1, 0]], 1), r"R must be binary .* got -1 at item 1, trial 0"),
        (lambda: ts.pass_at_k([[1, 0.5]], 1), r"R must be binary .* got 0.5 at item 0, trial 1"),
        (lambda: ts.pass_at_k([[1, 0], [1, 3]], 1), r"got 3 at item 1, trial 1"),
        (lambda: ts.pass_at_k([1, 0, 1], 1), r"R must be a 2-D matrix \(items x trials\); got 1 dimension"),
        (lambda: ts.pass_at_k(np.zeros((2, 2, 2)), 1), r"R must be a 2-D matrix .* got 3 dimension"),
        (
            lambda: ts.pass_at_k(np.zeros((0, 5)), 1),
            r"R must hold at least one item and one trial; got shape \(0, 5\)",
        ),
        (lambda: ts.pass_at_k([["a", "b"]], 1), r"R must hold numbers or booleans; got dtype <U1"),
        (lambda: ts.pass_at_k([[1, None]], 1), r"R must be a rectangular numeric array"),
        (lambda: ts.g_pass_at_k_tau(SEED_R, 2, 1.5), r"tau must satisfy 0 <= tau <= 1; got tau=1.5"),
        (lambda: ts.g_pass_at_k_tau(SEED_R, 2, -0.1), r"tau must satisfy 0 <= tau <= 1; got tau=-0.1"),
        (
            lambda: ts.g_pass_at_k_tau(SEED_R, 2, float("nan")),
            r"tau must be a real number in \[0, 1\]; got nan",
        ),
        (
            lambda: ts.g_pass_at_k_tau(SEED_R, 2, "0.5"),
            r"tau must be a real number in \[0, 1\]; got '0.5' \(str\)",
        ),
        (lambda: ts.g_pass_at_k_tau(SEED_R, 2, True), r"tau must be a real number .* got True \(bool\)"),
        (
            lambda: ts.bayes([[0, 3]], [0, 0.5, 1]),
            r"R entries must be categories in 0..2 .* got 3 at item 0, trial 1",
        ),
        (lambda: ts.bayes([[0, 1.5]], [0, 0.5, 1]), r"R entries must be whole category numbers; got 1.5"),
        (lambda: ts.bayes([[0, 1]], [0, np.nan]), r"w must hold finite weights; got \[0.0, nan\]"),
        (
            lambda: ts.bayes([[0, 1]], [1.0]),
            r"w must be a 1-D vector of C \+ 1 >= 2 category weights; got \[1.0\]",
        ),
        (lambda: ts.bayes([[0, 1]], [[0, 1]]), r"w must be a 1-D vector"),
        (
            lambda: ts.bayes([[0, 1]], None, [[0], [1]]),
            r"R0 must have one row per item of R; got 2 rows for 1 items",
        ),
        (lambda: ts.bayes([[0, 1]], None, [[0, 5]]), r"R0 entries must be categories in 0..1 .* got 5"),
        (
            lambda: ts.Bank.from_counts([5, 5], [1]),
            r"n and c must have one entry per item; got 2 trial counts and 1",
        ),
        (lambda: ts.Bank.from_counts([5, 0], [1, 0]), r"n must be >= 1 for every item; got n=0 at item 1"),
        (lambda: ts.Bank.from_counts([5], [-1]), r"c must satisfy 0 <= c <= n; got c=-1 with n=5 at item 0"),
        (lambda: ts.Bank.from_counts([5.5], [1]), r"n must hold whole numbers; got 5.5 at item 0"),
        (lambda: ts.Bank.from_counts([], []), r"n must hold at least one item; got an empty array"),
        (
            lambda: ts.Bank.from_outcomes([[1, 0], []]),
            r"R\[1\] must be a non-empty list of outcomes; got \[\]",
        ),
        (lambda: ts.Bank.from_outcomes([[1, 0], [1, 2, 0]]), r"R must be binary .* got 2 at item 1, trial 1"),
        (lambda: ts.Bank.from_outcomes([]), r"R must hold at least one item; got no items"),
        (lambda: ts.pass_curve(SEED_R, 9), r"k_max must satisfy 1 <= k_max <= n; got k_max=9 with n=5"),
        (lambda: ts.item_scores(SEED_R, "pass@k"), r"k must be an integer; got None"),
    ],
)
def test_validation_messages(call, message: str) -> None:
    with pytest.raises(EvaluationError, match=message):
        call()


def test_evaluation_error_is_a_value_error() -> None:
    with pytest.raises(ValueError):
        ts.pass_at_k(SEED_R, 0)


def test_small_banks_are_correctly_rounded() -> None:
    """Up to 1,024 trials per item the result is the double nearest the exact rational."""
    for n in (5, 17, 64):
        c = np.arange(n + 1)
        for k in (1, 2, n // 2, n):
            want_hat = [float(oracle.pass_hat_k(n, int(ci), k)) for ci in c]
            want_at = [float(oracle.pass_at_k(n, int(ci), k)) for ci in c]
            want_mg = [float(oracle.mg_pass_at_k(n, int(ci), k)) for ci in c]
            assert ts.state_scores(np.full(n + 1, n), c, "pass^k", k=k).tolist() == want_hat
            assert ts.state_scores(np.full(n + 1, n), c, "pass@k", k=k).tolist() == want_at
            assert ts.state_scores(np.full(n + 1, n), c, "mg-pass@k", k=k).tolist() == want_mg
    assert ts.pass_hat_k([[1, 1, 0, 0, 0]], 2) == 0.1


def test_seed_spelling_takes_the_tao_keyword() -> None:
    assert ts.g_pass_at_k_tao(SEED_R, 2, tao=0.5) == ts.g_pass_at_k_tau(SEED_R, 2, tau=0.5)


def test_bayes_with_huge_weights_does_not_overflow() -> None:
    R = [[0, 1, 2], [1, 2, 2]]
    mu, sigma = ts.bayes(R, w=[0, 1, 2])
    for scale in (1e155, 1e300):
        big_mu, big_sigma = ts.bayes(R, w=[0, scale, 2 * scale])
        assert big_mu == pytest.approx(mu * scale, rel=1e-14) and big_sigma == pytest.approx(
            sigma * scale, rel=1e-14
        )


def test_g_pass_at_k_tao_takes_the_seed_keyword() -> None:
    R = [[1, 0, 1, 1], [0, 0, 1, 0]]
    assert (
        ts.g_pass_at_k_tao(R, 4, tao=0.5)
        == ts.g_pass_at_k_tau(R, 4, tau=0.5)
        == ts.g_pass_at_k_tao(R, 4, 0.5)
    )
