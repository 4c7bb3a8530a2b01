"""Per-state kernels of the pass family: each metric's value at item states ``(n, c)``.

With ``X ~ Hypergeometric(n, c, k)`` (successes among ``k`` of an item's
``n`` trials drawn without replacement) every pass-family metric is
``E[credit[X]] / scale`` for an integer credit table (:func:`credit`).  Small
banks are computed in exact integers and rounded once; larger ones through
the accurate floating-point kernels of :mod:`trialscore.core.hypergeometric`.
The metric registry (:mod:`trialscore.core.metrics`) names these kernels.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from decimal import Decimal
from fractions import Fraction
from numbers import Real
from typing import TypeAlias, cast

import numpy as np
from numpy.typing import NDArray

from trialscore._validate import is_flag
from trialscore.core.hypergeometric import exact_expectation, hypergeom_expectation, log_choose_ratio_table
from trialscore.errors import EvaluationError

__all__ = [
    "Kernel",
    "Tau",
    "credit",
    "kernel_avg",
    "kernel_g_pass",
    "kernel_maj",
    "kernel_mg_pass",
    "kernel_pass_at",
    "kernel_pass_hat",
    "tau_threshold",
]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
#: A threshold share tau of G-Pass@k_tau: a real number in [0, 1] (fractions and decimals are exact).
Tau: TypeAlias = float | Fraction | Decimal
#: ``kernel(n, c, k, tau)``: a metric's value at each state.
Kernel = Callable[[IntArray, IntArray, int, "Tau | None"], FloatArray]


def tau_threshold(tau: Tau | None, k: int) -> int:
    r"""Successes needed among ``k`` for G-Pass@k_tau: ``max(1, ceil(tau * k))``.

    The ceiling is taken exactly.  A float ``tau`` that is the double nearest
    to ``j / k`` counts as ``j / k`` (``0.28`` is stored as
    ``0.28000000000000002665``, yet ``tau=0.28, k=25`` needs 7 successes, not
    8); :class:`~fractions.Fraction` and :class:`~decimal.Decimal` values are
    used as given.  The floor of 1 makes ``tau = 0`` equal pass@k rather than a
    vacuous certainty.

    >>> tau_threshold(0.28, 25), tau_threshold(0.5, 3), tau_threshold(0, 4), tau_threshold(1, 4)
    (7, 2, 1, 4)
    """
    if is_flag(tau) or not isinstance(tau, (Real, Decimal)):
        raise EvaluationError(f"tau must be a real number in [0, 1]; got {tau!r} ({type(tau).__name__})")
    if isinstance(tau, (float, np.floating)) and not math.isfinite(tau):
        raise EvaluationError(f"tau must be a real number in [0, 1]; got {tau!r}")
    if isinstance(tau, Decimal) and not tau.is_finite():
        raise EvaluationError(f"tau must be a real number in [0, 1]; got {tau!r}")
    exact = (
        Fraction(cast("float | Decimal", tau))
        if not isinstance(tau, (np.floating, np.integer))
        else Fraction(float(tau))
    )
    if not 0 <= exact <= 1:
        raise EvaluationError(f"tau must satisfy 0 <= tau <= 1; got tau={tau!r}")
    needed = math.ceil(exact * k)
    if isinstance(tau, (float, np.floating)) and needed >= 1 and (needed - 1) / k == float(tau):
        needed -= 1
    return max(1, needed)


def credit(name: str, k: int, tau: Tau | None) -> tuple[list[int], int]:
    """The credit of ``j`` successes among ``k`` draws, as integers over a common scale."""
    if name == "avg":
        return [0, 1], 1
    if name == "pass@k":
        return [0] + [1] * k, 1
    if name == "pass^k":
        return [0] * k + [1], 1
    if name == "mg-pass@k":
        majority = (k + 1) // 2
        return [2 * max(j - majority, 0) for j in range(k + 1)], k
    needed = tau_threshold(tau, k) if name == "g-pass@k_tau" else k // 2 + 1
    return [int(j >= needed) for j in range(k + 1)], 1


def _by_trials(
    n: NDArray[np.int64], c: NDArray[np.int64], table: Callable[[int, NDArray[np.int64]], FloatArray]
) -> FloatArray:
    """Apply ``table(n_value, c_subset)`` to each group of states sharing ``n``."""
    out = np.empty(len(n))
    for value in np.unique(n):
        rows = n == value
        out[rows] = table(int(value), c[rows])
    return out


def _pass_at(n: NDArray[np.int64], c: NDArray[np.int64], k: int) -> FloatArray:
    if k == 1:  # one draw: c / n, correctly rounded (equal to pass^1 and avg to the last bit)
        return c / n
    exact = exact_expectation(n, c, k, *credit("pass@k", k, None))
    if exact is not None:
        return exact
    return _by_trials(n, c, lambda trials, cs: -np.expm1(log_choose_ratio_table(trials, k)[trials - cs]))


def _pass_hat(n: NDArray[np.int64], c: NDArray[np.int64], k: int) -> FloatArray:
    if k == 1:
        return c / n
    exact = exact_expectation(n, c, k, *credit("pass^k", k, None))
    if exact is not None:
        return exact
    return _by_trials(n, c, lambda trials, cs: np.exp(log_choose_ratio_table(trials, k)[cs]))


def _expectation(
    n: NDArray[np.int64], c: NDArray[np.int64], k: int, table: list[int], scale: int
) -> FloatArray:
    """``E[table[X]] / scale``: exact integers for small banks, else the float kernel."""
    exact = exact_expectation(n, c, k, table, scale)
    if exact is not None:
        return exact
    weights = np.asarray(table, dtype=np.float64) / scale
    return np.minimum(hypergeom_expectation(n, c, k, weights), 1.0)


def _at_least(n: IntArray, c: IntArray, k: int, name: str, tau: Tau | None) -> FloatArray:
    table, scale = credit(name, k, tau)
    needed = table.index(1)
    if needed <= 1:
        return _pass_at(n, c, k)
    if needed >= k:
        return _pass_hat(n, c, k)
    return _expectation(n, c, k, table, scale)


def kernel_avg(n: IntArray, c: IntArray, k: int, tau: Tau | None) -> FloatArray:
    """``c / n``: the item's pass rate (pass@1)."""
    rate: FloatArray = c / n
    return rate


def kernel_pass_at(n: IntArray, c: IntArray, k: int, tau: Tau | None) -> FloatArray:
    """``P(X >= 1) = 1 - C(n-c, k) / C(n, k)``."""
    return _pass_at(n, c, k)


def kernel_pass_hat(n: IntArray, c: IntArray, k: int, tau: Tau | None) -> FloatArray:
    """``P(X = k) = C(c, k) / C(n, k)``."""
    return _pass_hat(n, c, k)


def kernel_g_pass(n: IntArray, c: IntArray, k: int, tau: Tau | None) -> FloatArray:
    """``P(X >= max(1, ceil(tau k)))``."""
    return _at_least(n, c, k, "g-pass@k_tau", tau)


def kernel_mg_pass(n: IntArray, c: IntArray, k: int, tau: Tau | None) -> FloatArray:
    """``(2/k) sum_{j > m} (j - m) P(X = j)``, ``m = ceil(k/2)``."""
    table, scale = credit("mg-pass@k", k, tau)
    return _expectation(n, c, k, table, scale)


def kernel_maj(n: IntArray, c: IntArray, k: int, tau: Tau | None) -> FloatArray:
    """``P(X > k/2)``."""
    return _at_least(n, c, k, "maj@k", tau)
