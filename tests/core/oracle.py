"""Exact rational oracles for the estimator tests (integers, math.comb, fractions).

``a / b`` on Python integers is correctly rounded, so ``exact_ratio`` turns an
exact rational into the nearest double without ever forming a float binomial.
"""

from __future__ import annotations

import math
from fractions import Fraction


def exact_ratio(num: int, den: int) -> float:
    """The double nearest to ``num / den`` (0.0 below the subnormal range)."""
    return num / den


def pmf(n: int, c: int, k: int, j: int) -> Fraction:
    """P(X = j) for X ~ Hypergeometric(n trials, c successes, k draws), exactly."""
    return Fraction(math.comb(c, j) * math.comb(n - c, k - j), math.comb(n, k))


def pass_at_k(n: int, c: int, k: int) -> Fraction:
    return 1 - Fraction(math.comb(n - c, k), math.comb(n, k))


def pass_hat_k(n: int, c: int, k: int) -> Fraction:
    return Fraction(math.comb(c, k), math.comb(n, k))


def at_least(n: int, c: int, k: int, needed: int) -> Fraction:
    return sum((pmf(n, c, k, j) for j in range(needed, k + 1)), Fraction(0))


def mg_pass_at_k(n: int, c: int, k: int) -> Fraction:
    m = (k + 1) // 2
    return Fraction(2, k) * sum((Fraction(j - m) * pmf(n, c, k, j) for j in range(m + 1, k + 1)), Fraction(0))


def rel_err(got: float, want: float) -> float:
    """Relative error, with an absolute floor of 1e-300 (below, doubles are subnormal)."""
    return abs(got - want) / max(abs(want), 1e-300)
