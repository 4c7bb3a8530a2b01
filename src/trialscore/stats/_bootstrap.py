r"""Bootstrap over items by resampling the histogram of item states.

A bank estimator is the mean over items of a value that depends only on the
item's state ``(n, c)``.  Resampling ``M`` items with replacement therefore
only changes how many items fall in each of the ``S`` distinct states: the
new counts are one draw from :math:`\mathrm{Multinomial}(M, f_1/M, \dots, f_S/M)`
where :math:`f_s` is the number of items in state ``s``.  The resampled
estimate is :math:`\theta^* = \frac{1}{M}\sum_s F^*_s v_s`, with ``v_s`` the
state's value computed once by :func:`trialscore.core.estimators.state_scores`.

So ``B`` resamples cost ``B x S`` binomial draws (the multinomial is drawn as
conditional binomials, largest state first), whatever the number of items:
on 100,000 items with 64 trials there are at most 65 states.  States with
equal values (pass@k saturates at 1, pass^k is 0 below ``c = k``) share one bin.

Intervals: the percentile interval (quantiles of :math:`\theta^*`, linear
interpolation, as ``numpy.quantile``) and BCa (Efron 1987) with bias
correction :math:`z_0 = \Phi^{-1}(\#\{\theta^* < \hat\theta\}/B + \tfrac12\#\{\theta^* = \hat\theta\}/B)`
(ties, within a relative ``1e-12``, count half, as in SciPy) and the jackknife
acceleration, which for a mean of item values is

.. math::

    a = \frac{\sum_i (v_i - \hat\theta)^3}{6\bigl(\sum_i (v_i - \hat\theta)^2\bigr)^{3/2}}.

A bootstrap of values that are all equal (every item solved every time) has
no spread and would give a zero-width interval, which no finite number of
trials justifies; such a bank gets :func:`trialscore.stats.item_interval`
instead, and its method says so.  Near saturation (almost every item equal)
the percentile bootstrap still under-covers, which is why it is not the
default (see docs/stats.md).

Random draws come from ``numpy.random.default_rng(seed)``: the same seed gives
the same bytes.

References
----------
B. Efron, "Better Bootstrap Confidence Intervals", JASA 82 (1987);
B. Efron and R. Tibshirani, *An Introduction to the Bootstrap* (1993), ch. 14.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
from numpy.typing import ArrayLike, NDArray

from trialscore._validate import check_choice, check_integer, check_probability, check_values
from trialscore.core._kernels import Tau
from trialscore.core.bank import Bank, as_bank
from trialscore.core.estimators import state_scores, states_mean
from trialscore.core.metrics import MetricLike, resolve_metric
from trialscore.errors import EvaluationError
from trialscore.stats import _scipy
from trialscore.stats._intervals import Interval, bounded_mean_interval, item_interval

__all__ = [
    "bootstrap_distribution",
    "bootstrap_interval",
    "bootstrap_mean_interval",
    "resample_histogram",
]

FloatArray = NDArray[np.float64]

_METHODS = {"percentile": "percentile", "bca": "bca"}

#: Fewest resamples accepted: below this the tail quantiles are meaningless.
MIN_RESAMPLES = 10


def resample_histogram(values: ArrayLike, counts: ArrayLike, resamples: int, seed: int) -> FloatArray:
    r"""Bootstrap distribution of a weighted mean: ``resamples`` draws of :math:`\frac{1}{M}\sum_s F^*_s v_s`.

    ``counts[s]`` units carry ``values[s]`` (``M = sum(counts)``); each draw
    resamples ``M`` units with replacement, i.e. draws
    :math:`F^* \sim \mathrm{Multinomial}(M, \text{counts}/M)`.

    >>> draws = resample_histogram([0.0, 1.0], [3, 1], resamples=5, seed=0)
    >>> draws.shape, bool(((draws * 4) % 1 == 0).all())
    ((5,), True)
    """
    value_array = check_values(values, "values", 1)
    count_array = np.asarray(counts)
    if count_array.shape != value_array.shape or count_array.dtype.kind not in "iu":
        raise EvaluationError(
            f"counts must be integers, one per value; got shape {count_array.shape} "
            f"(dtype {count_array.dtype}) for {value_array.size} values"
        )
    if (count_array < 0).any() or count_array.sum() < 1:
        raise EvaluationError(f"counts must be >= 0 with a positive total; got {count_array.tolist()[:10]}")
    # Units with equal values are interchangeable: one bin per distinct value.
    value_array, inverse = np.unique(value_array, return_inverse=True)
    count_array = np.bincount(inverse.ravel(), weights=count_array, minlength=value_array.size).astype(
        np.int64
    )
    resamples = check_integer(resamples, "resamples", 1)
    rng = np.random.default_rng(check_integer(seed, "seed", 0))
    total = int(count_array.sum())
    order = np.argsort(-count_array, kind="stable")
    remaining = np.full(resamples, total, dtype=np.int64)
    left = total
    weighted = np.zeros(resamples)
    for state in order[:-1]:
        share = min(1.0, count_array[state] / left)
        drawn = rng.binomial(remaining, share)
        weighted += drawn * value_array[state]
        remaining -= drawn
        left -= int(count_array[state])
    weighted += remaining * value_array[order[-1]]
    return weighted / total


def bootstrap_distribution(
    R: ArrayLike | Bank,
    metric: MetricLike = "avg",
    k: int | None = None,
    tau: Tau | None = None,
    *,
    resamples: int = 10_000,
    seed: int = 0,
) -> FloatArray:
    """The ``resamples`` bootstrap replicates of a bank estimator (items resampled with replacement).

    ``metric`` is any metric with per-item values, by name, alias or object
    (``"avg"``, ``"pass@k"``, ``"pass^k"``, ``"g-pass@k_tau"``, ``"mg-pass@k"``,
    ``"maj@k"``; :mod:`trialscore.core.metrics`).

    >>> R = [[1, 1, 0], [0, 0, 0], [1, 1, 1], [1, 0, 0]]
    >>> draws = bootstrap_distribution(R, "pass@k", k=2, resamples=1000, seed=1)
    >>> bool((draws >= 0).all() and (draws <= 1).all()), draws.size
    (True, 1000)
    """
    resolved = resolve_metric(metric, per_item=True)
    n, c, freq = as_bank(R).states()
    values = state_scores(n, c, resolved, k, tau)
    return resample_histogram(values, freq, check_integer(resamples, "resamples", MIN_RESAMPLES), seed)


def _bca_probabilities(
    values: FloatArray, freq: NDArray[np.int64], draws: FloatArray, estimate: float, alpha: float
) -> tuple[float, float] | None:
    """Adjusted tail probabilities of BCa, or None when the distribution is degenerate."""
    centred = values - estimate
    spread = float(freq @ (centred * centred))
    if spread == 0.0:
        return None
    acceleration = float(freq @ (centred**3)) / (6.0 * spread**1.5)
    resamples = draws.size
    # Ties with the estimate (common for discrete statistics) count half; "equal" is within a
    # relative 1e-12, since the estimate is rounded once and each replicate is a float sum.
    # (np.isclose(draws, estimate, rtol=1e-12, atol=0.0) for the finite estimate, without its set-up)
    tied = np.abs(draws - estimate) <= 1e-12 * abs(estimate) if math.isfinite(estimate) else draws == estimate
    below = np.count_nonzero((draws < estimate) & ~tied) + 0.5 * np.count_nonzero(tied)
    share = min(max(below / resamples, 0.5 / resamples), 1.0 - 0.5 / resamples)
    z0 = float(_scipy.ndtri(share))
    tails = []
    for tail in (alpha / 2.0, 1.0 - alpha / 2.0):
        shifted = z0 + float(_scipy.ndtri(tail))
        denominator = 1.0 - acceleration * shifted
        adjusted = z0 + shifted / denominator if denominator > 0 else math.copysign(math.inf, shifted)
        tails.append(float(_scipy.ndtr(adjusted)))
    return tails[0], tails[1]


def _interval_from_histogram(
    values: FloatArray,
    freq: NDArray[np.int64],
    level: float,
    method: str,
    resamples: int,
    seed: int,
    mean: float | None = None,
) -> Interval:
    level = check_probability(level, "level")
    name = check_choice(method, "method", _METHODS)
    resamples = check_integer(resamples, "resamples", MIN_RESAMPLES)
    seed = check_integer(seed, "seed", 0)
    draws = resample_histogram(values, freq, resamples, seed)
    return _interval_from_draws(
        values, freq, draws, level, name, f"bootstrap {name} ({resamples} resamples, seed {seed})", mean
    )


def _interval_from_draws(
    values: FloatArray,
    freq: NDArray[np.int64],
    draws: FloatArray,
    level: float,
    method: str,
    label: str,
    mean: float | None = None,
) -> Interval:
    """The percentile or BCa interval from ``draws``, bootstrap replicates of the mean of ``values``
    (``freq`` units each): the core of :func:`_interval_from_histogram`, whose coverage simulation
    draws its replicates for many data sets at once."""
    items = int(freq.sum())
    estimate = float(freq @ values) / items if mean is None else mean
    alpha = 1.0 - level
    tails: tuple[float, float] | None = (alpha / 2.0, 1.0 - alpha / 2.0)
    if method == "bca":
        tails = _bca_probabilities(values, freq, draws, estimate, alpha)
    if tails is None:
        low = high = estimate
    else:
        low, high = (float(bound) for bound in np.quantile(draws, tails))
    return Interval(estimate, low, high, level, label, items, float(draws.std(ddof=1)))


def bootstrap_interval(
    R: ArrayLike | Bank,
    metric: MetricLike = "avg",
    k: int | None = None,
    tau: Tau | None = None,
    *,
    level: float = 0.95,
    method: str = "percentile",
    resamples: int = 10_000,
    seed: int = 0,
) -> Interval:
    r"""Bootstrap confidence interval of a bank estimator, resampling items.

    Percentile (default) or ``method="bca"``; see the module docstring for the
    formulas.  The cost is ``resamples x S`` binomial draws for ``S`` distinct
    item states, independent of the number of items.  ``se`` is the standard
    deviation of the replicates.

    >>> R = [[1, 1, 0, 1], [0, 0, 0, 1], [1, 1, 1, 1], [1, 0, 0, 0], [0, 1, 1, 1]]
    >>> interval = bootstrap_interval(R, "pass@k", k=2, seed=7)
    >>> round(interval.estimate, 4), interval.low <= interval.estimate <= interval.high
    (0.8, True)
    >>> interval == bootstrap_interval(R, "pass@k", k=2, seed=7)
    True
    """
    resolved = resolve_metric(metric, per_item=True)
    n, c, freq = as_bank(R).states()
    values = state_scores(n, c, resolved, k, tau)
    mean = states_mean(n, c, freq, values, resolved, k, tau)
    interval = _interval_from_histogram(values, freq, level, method, resamples, seed, mean)
    if interval.width > 0.0:
        return interval
    fallback = item_interval(R, resolved, k, tau, level)
    return replace(fallback, method=f"{fallback.method} (the bootstrap had no spread)")


def bootstrap_mean_interval(
    values: ArrayLike,
    *,
    level: float = 0.95,
    method: str = "percentile",
    resamples: int = 10_000,
    seed: int = 0,
) -> Interval:
    """Bootstrap confidence interval of the mean of per-item values (continuous scores).

    Equal values are pooled into one histogram bin, so repeated scores (0, 0.5,
    1, ...) cost one bin each.

    >>> interval = bootstrap_mean_interval([0.2, 0.5, 0.5, 0.9, 1.0], seed=3)
    >>> round(interval.estimate, 2), interval.n
    (0.62, 5)
    """
    data = check_values(values, "values", 2)
    unique, counts = np.unique(data, return_counts=True)
    interval = _interval_from_histogram(unique, counts.astype(np.int64), level, method, resamples, seed)
    if interval.width > 0.0:
        return interval
    if unique.size == 1 and 0.0 <= unique[0] <= 1.0:
        fallback = bounded_mean_interval(data, level)
        return replace(fallback, method=f"{fallback.method} (the bootstrap had no spread)")
    raise EvaluationError(
        f"values must not all be equal for a bootstrap interval: every one of the {data.size} values is "
        f"{unique[0]:g}, so resampling shows no uncertainty (scores in [0, 1] fall back to the wilson-eff "
        "interval)"
    )
