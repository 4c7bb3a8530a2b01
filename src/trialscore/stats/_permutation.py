r"""Permutation tests of a paired comparison: item signs flipped, or each item's trials re-split.

**Sign flip** (:func:`sign_flip_p_value`, the population of items).  Under "no difference"
each per-item difference :math:`d_i` is as likely to be :math:`-d_i`, so
:math:`p = P(|\sum_i \epsilon_i d_i| \ge |\sum_i d_i|)` over independent random signs
:math:`\epsilon_i`.  Items with equal :math:`|d_i|` are interchangeable, so the number of
positive signs in each group of equal :math:`|d_i|` is :math:`\mathrm{Binomial}(\text{size}, 1/2)`;
the p-value is exact (every combination of group counts) while there are at most ``2**20``
combinations, and otherwise a seeded Monte Carlo estimate :math:`(1 + \#\{|T^*| \ge |T|\})/(1 + B)`.

**Re-split** (:func:`resplit_test`, these items).  The question "did *these* items' pass rates
change?" has the null hypothesis that each item has one pass rate in both runs, whatever it is.
Then item ``i``'s :math:`n^A_i + n^B_i` trials are exchangeable, and given its total passes
:math:`t_i = c^A_i + c^B_i` the candidate's share is hypergeometric,

.. math::

    c^{B*}_i \sim \mathrm{Hypergeometric}(n^A_i + n^B_i,\ t_i,\ n^B_i), \qquad
    c^{A*}_i = t_i - c^{B*}_i,

independently over items (a stratified, two-level permutation test: Fisher's exact test per
item, combined through the statistic).  The statistic is the paired delta itself,
:math:`T = \frac1M \sum_i \bigl(f(n^B_i, c^B_i) - f(n^A_i, c^A_i)\bigr)` for the metric's per-item
value :math:`f`.  ``B`` seeded re-splits give the equal-tailed p-value
:math:`p = \min\bigl(1,\ 2\min(1 + \#\{T^* \le T\},\ 1 + \#\{T^* \ge T\})/(1 + B)\bigr)`, and
the interval inverts that test under a shift of the statistic: with :math:`q_{lo}, q_{hi}` the
``k``-th smallest and largest :math:`T^*`, :math:`k = \lceil (\alpha/2)(1 + B) \rceil - 1`,
it is :math:`[T - q_{hi},\ T - q_{lo}]`, so it excludes 0 exactly when :math:`p < \alpha` (a
re-split within 1e-12 of :math:`T` is a tie: the p-value counts it on both sides, and an end at it
is 0).
The test is exact (its error rate is at most ``alpha`` up to the Monte Carlo error of ``B``
re-splits) for every number of items and trials, equal or not, and needs 0/1 trials.  It says
nothing of items not in the runs; the paired t-test of
:func:`~trialscore.stats.compare_paired` answers for the population of items.

References
----------
R. A. Fisher, *The Design of Experiments* (1935), the exact test of a 2 x 2 table;
P. Good, *Permutation, Parametric and Bootstrap Tests of Hypotheses*, 3rd ed. (2005),
stratified permutation tests and confidence intervals by test inversion.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from trialscore._validate import check_integer, check_values
from trialscore.core._arrays import distinct
from trialscore.core._kernels import Tau
from trialscore.core.estimators import state_scores
from trialscore.core.metrics import Metric, MetricLike, resolve_metric
from trialscore.errors import EvaluationError
from trialscore.stats import _scipy

__all__ = ["EXACT_LIMIT", "Resplit", "resplit_test", "sign_flip_p_value"]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

#: Enumerate sign-count combinations exactly up to this many; sample beyond.
EXACT_LIMIT = 1 << 20

#: Cells of one block of re-splits (re-splits x items) held in memory at once.
_BLOCK_CELLS = 1 << 21


def _group_magnitudes(differences: FloatArray) -> tuple[FloatArray, NDArray[np.int64], NDArray[np.int64]]:
    """Distinct non-zero ``|d|``, how many items have each, and how many of those are positive."""
    nonzero = differences[differences != 0]
    magnitudes, inverse, sizes = np.unique(np.abs(nonzero), return_inverse=True, return_counts=True)
    positive = np.bincount(inverse.ravel(), weights=nonzero > 0, minlength=magnitudes.size)
    return magnitudes, sizes.astype(np.int64), positive.astype(np.int64)


def _half_binomial_pmf(size: int) -> FloatArray:
    """P(J = j) for J ~ Binomial(size, 1/2), j = 0..size, from log-gamma.

    Relative error below 1e-13 up to size 100 and about 3e-9 at size 10**6;
    no overflow, and no underflow to 0 while the probability is a normal double.
    """
    j = np.arange(size + 1)
    pmf: FloatArray = np.exp(
        _scipy.gammaln(size + 1) - _scipy.gammaln(j + 1) - _scipy.gammaln(size - j + 1) - size * math.log(2.0)
    )
    return pmf


def sign_flip_p_value(
    differences: ArrayLike, permutations: int = 10_000, seed: int = 0, exact_limit: int = EXACT_LIMIT
) -> tuple[float, str]:
    r"""Two-sided paired sign-flip permutation p-value of ``sum(differences)``, and how it was computed.

    Exact when the groups of equal ``|d|`` allow at most ``exact_limit``
    combinations of positive-sign counts, else a Monte Carlo estimate from
    ``permutations`` seeded sign patterns (see the module docstring).

    >>> sign_flip_p_value([0.5, 0.25, 0.25, 1.0])
    (0.125, 'exact sign-flip (4 non-zero differences, 12 sign-count combinations)')
    """
    d = check_values(differences, "differences", 1)
    magnitudes, sizes, positive = _group_magnitudes(d)
    if magnitudes.size == 0:
        return 1.0, "exact sign-flip (every difference is 0)"
    # the groups' sums added one by one in order (NumPy scalars: no compensated float sum of Python 3.12)
    observed = abs(float(sum(magnitudes * (2 * positive - sizes))))
    tolerance = 1e-10 * float(magnitudes @ sizes)
    combinations = math.prod(int(size) + 1 for size in sizes)
    items = int(sizes.sum())
    if combinations <= check_integer(exact_limit, "exact_limit", 1):
        totals = np.zeros(1)
        weights = np.ones(1)
        for magnitude, size in zip(magnitudes, sizes, strict=True):
            step = magnitude * (2 * np.arange(size + 1) - size)  # the group's sum at each positive count
            totals = (totals[:, None] + step[None, :]).ravel()
            weights = (weights[:, None] * _half_binomial_pmf(int(size))[None, :]).ravel()
        p = float(weights[np.abs(totals) >= observed - tolerance].sum())
        label = f"exact sign-flip ({items} non-zero differences, {combinations} sign-count combinations)"
        return min(p, 1.0), label
    permutations = check_integer(permutations, "permutations", 1)
    rng = np.random.default_rng(check_integer(seed, "seed", 0))
    flips = rng.binomial(sizes, 0.5, size=(permutations, sizes.size))
    totals = (2 * flips - sizes) @ magnitudes
    extreme = int(np.count_nonzero(np.abs(totals) >= observed - tolerance))
    p = (1 + extreme) / (1 + permutations)
    label = f"monte carlo sign-flip ({items} non-zero differences, {permutations} sign patterns, seed {seed})"
    return p, label


@dataclass(frozen=True)
class Resplit:
    """The re-split test of a paired delta: its p-value, interval, spread and how it was computed."""

    delta: float
    p_value: float
    low: float
    high: float
    sd: float
    method: str


def _value_tables(n: IntArray, metric: Metric, k: int | None, tau: Tau | None) -> dict[int, FloatArray]:
    """The metric's per-item value at every count ``0..n`` of each distinct trial count ``n``."""
    tables = {}
    for trials in distinct(n).tolist():
        successes = np.arange(trials + 1)
        tables[trials] = state_scores(np.full(trials + 1, trials), successes, metric, k, tau)
    return tables


def _values(tables: dict[int, FloatArray], n: IntArray, counts: IntArray) -> FloatArray:
    """Per-item values of ``counts`` (re-splits x items) for items with ``n`` trials."""
    out = np.empty(counts.shape)
    for trials, table in tables.items():
        columns = n == trials
        out[:, columns] = table[counts[:, columns]]
    return out


def _tie_is_zero(shift: float, tolerance: float) -> float:
    """``shift``, or 0 where it is within ``tolerance`` of 0 (a re-split tied with the observed one).

    >>> _tie_is_zero(-2.8e-17, 1e-12), _tie_is_zero(-0.05, 1e-12)
    (0.0, -0.05)
    """
    return 0.0 if abs(shift) <= tolerance else shift


def resplit_test(
    n_baseline: ArrayLike,
    c_baseline: ArrayLike,
    n_candidate: ArrayLike,
    c_candidate: ArrayLike,
    metric: MetricLike = "avg",
    k: int | None = None,
    tau: Tau | None = None,
    *,
    alpha: float = 0.05,
    permutations: int = 10_000,
    seed: int = 0,
) -> Resplit:
    """Re-split permutation test of "these items did not change", with the interval it inverts.

    Counts of the same items in the two runs (0/1 trials: ``n`` trials, ``c`` passes each);
    formulas in the module docstring.  ``permutations`` seeded re-splits; the interval is clipped
    to [-1, 1] (a difference of per-item values in [0, 1]).

    >>> result = resplit_test([10] * 5, [9, 8, 10, 7, 9], [3] * 5, [1, 2, 1, 1, 2], seed=1)
    >>> round(result.delta, 4), result.p_value < 0.05, result.high < 0
    (-0.3933, True, True)
    """
    resolved = resolve_metric(metric, per_item=True)
    n_a, c_a = (np.asarray(x, dtype=np.int64) for x in (n_baseline, c_baseline))
    n_b, c_b = (np.asarray(x, dtype=np.int64) for x in (n_candidate, c_candidate))
    permutations = check_integer(permutations, "permutations", 1)
    least = math.ceil(2.0 / alpha)
    if permutations < least:
        raise EvaluationError(
            f"permutations must be at least 2 / alpha = {least} for a re-split interval at alpha={alpha:g}; "
            f"got {permutations}"
        )
    items = n_a.size
    total = c_a + c_b
    tables_a, tables_b = _value_tables(n_a, resolved, k, tau), _value_tables(n_b, resolved, k, tau)
    rng = np.random.default_rng(check_integer(seed, "seed", 0))
    block = max(1, _BLOCK_CELLS // items)
    draws: list[FloatArray] = []
    observed = 0.0
    done = -1  # the observed split is row 0 of the first block, so ties are computed identically
    while done < permutations:
        rows = min(block, permutations - done)
        resplit = rng.hypergeometric(total, n_a + n_b - total, n_b, size=(rows, items))
        if done < 0:
            resplit[0] = c_b
        stats = (_values(tables_b, n_b, resplit) - _values(tables_a, n_a, total - resplit)).mean(axis=1)
        if done < 0:
            observed, stats = float(stats[0]), stats[1:]
        draws.append(stats)
        done += rows
    sims = np.sort(np.concatenate(draws))
    # A re-split whose statistic equals the observed one is a tie, though its item values were summed
    # in another order and may differ in the last digits: within the tolerance it counts on both sides
    # (else ties fall to one side by rounding, and the p-value comes out too small).
    tolerance = 1e-12
    below = int(np.searchsorted(sims, observed + tolerance, side="right"))  # T* <= T
    above = sims.size - int(np.searchsorted(sims, observed - tolerance, side="left"))  # T* >= T
    p_value = min(1.0, 2.0 * (1 + min(below, above)) / (1 + sims.size))
    rank = max(1, math.ceil(alpha / 2 * (1 + sims.size)) - 1)
    # An end at a tie is 0 (the p-value counts that re-split on both sides): rounding must not put
    # it a few 1e-17 past 0, where the interval would exclude 0 while p >= alpha.
    low, high = (_tie_is_zero(observed - float(sims[index]), tolerance) for index in (-rank, rank - 1))
    low, high = max(low, -1.0), min(high, 1.0)
    method = (
        f"re-split permutation test: each item's trials re-split between the runs at its total passes "
        f"({permutations} seeded re-splits, seed {seed}); these {items} items"
    )
    return Resplit(observed, p_value, low, high, float(sims.std()), method)
