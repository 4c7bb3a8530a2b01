"""The floating-point hypergeometric kernels against exact rational arithmetic."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import oracle
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trialscore.core.hypergeometric import (
    anchored_cumsum,
    hypergeom_expectation,
    log_choose_ratio_curve,
    log_choose_ratio_table,
    log_hypergeom_pmf,
    log_ratio,
)


@pytest.mark.parametrize("n", [1, 2, 3, 10, 31])
def test_pmf_every_state_and_draw(n: int) -> None:
    for k in range(1, n + 1):
        c = np.arange(n + 1)
        pmf = np.exp(log_hypergeom_pmf(np.full(n + 1, n), c, k))
        for ci in range(n + 1):
            for j in range(k + 1):
                want = float(oracle.pmf(n, ci, k, j)) if max(0, k - (n - ci)) <= j <= min(ci, k) else 0.0
                assert oracle.rel_err(pmf[ci, j], want) < 1e-13, (n, ci, k, j)


@pytest.mark.slow
def test_pmf_large_n_sampled_against_fractions() -> None:
    rng = np.random.default_rng(11)
    checked = 0
    for _ in range(120):
        n = int(rng.choice([1_000, 10_000, 100_000]))
        c = int(rng.integers(0, n + 1))
        k = int(rng.integers(1, min(n, 2_000) + 1))
        row = np.exp(log_hypergeom_pmf([n], [c], k)[0])
        lo, hi = max(0, k - (n - c)), min(c, k)
        mode = min(max((k + 1) * (c + 1) // (n + 2), lo), hi)
        for j in {lo, hi, mode, (lo + hi) // 2}:
            want = oracle.exact_ratio(math.comb(c, j) * math.comb(n - c, k - j), math.comb(n, k))
            if want >= 1e-300:
                assert oracle.rel_err(row[j], want) < 1e-12, (n, c, k, j)
                checked += 1
    assert checked > 300


def test_pmf_sums_to_one() -> None:
    n = np.array([100_000, 5_000, 7])
    c = np.array([31_000, 2_500, 3])
    pmf = np.exp(log_hypergeom_pmf(n, c, 7))
    assert np.allclose(pmf.sum(axis=1), 1.0, rtol=1e-14, atol=0)


def test_expectation_matches_fractions() -> None:
    credit = [0, 0, 0.5, 1, 1]
    got = hypergeom_expectation([9, 9, 4], [2, 6, 4], 4, credit)
    for value, (n, c) in zip(got, [(9, 2), (9, 6), (4, 4)], strict=True):
        want = sum(
            Fraction(credit[j]) * oracle.pmf(n, c, 4, j) for j in range(5) if j <= c and 4 - j <= n - c
        )
        assert oracle.rel_err(value, float(want)) < 1e-14


def test_log_ratio_is_accurate_near_one_and_far() -> None:
    assert log_ratio(0, 5) == -np.inf
    assert log_ratio(7, 7) == 0.0
    for num, den in [(99_999, 100_000), (1, 100_000), (3, 2), (100_000, 3)]:
        want = (
            math.log(Fraction(num, den))
            if False
            else math.log1p((num - den) / den)
            if 0.5 <= num / den <= 2
            else math.log(num / den)
        )
        assert log_ratio(num, den) == pytest.approx(want, rel=2e-16)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.floats(-50, 50, allow_nan=False), min_size=1, max_size=300), st.data())
def test_anchored_cumsum_is_exact_to_one_rounding(terms: list[float], data: st.DataObject) -> None:
    anchor = data.draw(st.integers(0, len(terms)))
    got = anchored_cumsum([terms], [anchor])[0]
    exact = [Fraction(0)]
    for t in terms:
        exact.append(exact[-1] + Fraction(t))
    # one rounding of the result, plus the remainders' rounding: at most L**2 * sum|t| * 2**-104
    floor = Fraction(len(terms) ** 2) * sum(abs(Fraction(t)) for t in terms) * Fraction(2) ** -104
    for j, value in enumerate(got):
        want = exact[j] - exact[anchor]
        assert abs(Fraction(value) - want) <= abs(want) * Fraction(2**-52) + floor


def test_choose_ratio_table_and_curve_agree_with_exact() -> None:
    n = 300
    for k in (1, 2, 17, 150, 299, 300):
        table = np.exp(log_choose_ratio_table(n, k))
        for a in range(n + 1):
            want = oracle.exact_ratio(math.comb(a, k), math.comb(n, k))
            assert oracle.rel_err(table[a], want) < 1e-13, (k, a)
    curve = np.exp(log_choose_ratio_curve(n, [0, 1, 150, 300], n))
    for row, a in zip(curve, [0, 1, 150, 300], strict=True):
        for k in range(n + 1):
            assert oracle.rel_err(row[k], oracle.exact_ratio(math.comb(a, k), math.comb(n, k))) < 1e-13


@pytest.mark.slow
@pytest.mark.parametrize(("n", "k"), [(2_000, 300), (50_000, 1_000)])
def test_windowed_expectation_keeps_far_tails_accurate(n: int, k: int) -> None:
    """Thresholds far above and below the mode: the window must follow the credited tail."""
    c = np.array([1, 10, n // 10, n // 2, n - 10, n - 1])
    for needed in (2, k // 20, k // 2, k - 5):
        credit = (np.arange(k + 1) >= needed).astype(float)
        got = hypergeom_expectation(np.full(c.size, n), c, k, credit)
        for value, ci in zip(got, c.tolist(), strict=True):
            lo, hi = max(0, k - (n - ci)), min(ci, k)
            num = sum(math.comb(ci, j) * math.comb(n - ci, k - j) for j in range(max(needed, lo), hi + 1))
            want = oracle.exact_ratio(num, math.comb(n, k))
            if want > 1e-300:
                assert oracle.rel_err(value, want) < 1e-12, (ci, needed)
            else:
                assert value < 1e-290
