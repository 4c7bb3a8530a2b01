"""Per-state values of a credit table: each count metric's value at item states ``(n, c)``.

With ``X ~ Hypergeometric(n, c, k)`` (successes among ``k`` of an item's
``n`` trials drawn without replacement) every metric of counts is
``E[credit[X]] / scale`` for an integer credit table, which the metric's entry in the
registry (:mod:`trialscore.core.metrics`) gives; :func:`credit_values` evaluates it.
Small banks are computed in exact integers and rounded once; larger ones through
the accurate floating-point kernels of :mod:`trialscore.core.hypergeometric`.
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
from trialscore.core._arrays import distinct
from trialscore.core.hypergeometric import exact_expectation, hypergeom_expectation, log_choose_ratio_table
from trialscore.errors import EvaluationError

__all__ = ["Tau", "credit_values", "tau_threshold"]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
#: A threshold share tau of G-Pass@k_tau: a real number in [0, 1] (fractions and decimals are exact).
Tau: TypeAlias = float | Fraction | Decimal
#: ``table(n, c_subset)``: values at the states of items with ``n`` trials.
StateTable = Callable[[int, IntArray], FloatArray]


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


def _by_trials(n: IntArray, c: IntArray, table: StateTable) -> FloatArray:
    """Apply ``table(n_value, c_subset)`` to each group of states sharing ``n``."""
    out = np.empty(len(n))
    for value in distinct(n):
        rows = n == value
        out[rows] = table(int(value), c[rows])
    return out


def _step(n: IntArray, c: IntArray, k: int, table: list[int], closed: StateTable) -> FloatArray:
    """A 0/1 step credit: ``c / n`` at ``k = 1`` (correctly rounded), exact integers, else ``closed``."""
    if k == 1:  # one draw: c / n (pass@1 = pass^1 = avg to the last bit)
        return c / n
    exact = exact_expectation(n, c, k, table, 1)
    if exact is not None:
        return exact
    return _by_trials(n, c, closed)


def _expectation(n: IntArray, c: IntArray, k: int, table: list[int], scale: int) -> FloatArray:
    """``E[table[X]] / scale``: exact integers for small banks, else the float kernel."""
    exact = exact_expectation(n, c, k, table, scale)
    if exact is not None:
        return exact
    weights = np.asarray(table, dtype=np.float64) / scale
    return np.minimum(hypergeom_expectation(n, c, k, weights), 1.0)


def credit_values(n: IntArray, c: IntArray, k: int, table: list[int], scale: int) -> FloatArray:
    r"""``E[table[X]] / scale`` at each state, ``X ~ Hypergeometric(n, c, k)``: a metric's per-item values.

    ``table[j]`` is the credit of ``j`` successes among ``k`` draws, an integer in
    ``[0, scale]``.  A step ``1[j >= j0]`` (scale 1) takes the fastest accurate path:
    pass@k's closed form ``1 - C(n-c, k) / C(n, k)`` for ``j0 = 1``, pass^k's
    ``C(c, k) / C(n, k)`` for ``j0 = k``; any other table the exact integer sum for small
    banks, else the floating-point kernel of :mod:`trialscore.core.hypergeometric`.

    >>> credit_values(np.array([5, 5]), np.array([3, 4]), 2, [0, 0, 1], 1).round(12).tolist()
    [0.3, 0.6]
    """
    step = scale == 1 and table[0] == 0 and set(table) == {0, 1} and table == sorted(table)
    needed = table.index(1) if step else None
    if needed == 1:  # 1 - C(n - c, k) / C(n, k)
        return _step(n, c, k, table, lambda m, cs: -np.expm1(log_choose_ratio_table(m, k)[m - cs]))
    if needed == k:  # C(c, k) / C(n, k)
        return _step(n, c, k, table, lambda m, cs: np.exp(log_choose_ratio_table(m, k)[cs]))
    return _expectation(n, c, k, table, scale)
