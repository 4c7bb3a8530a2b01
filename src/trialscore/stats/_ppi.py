r"""Human labels that correct the judge: prediction-powered intervals with the item as the unit.

A judged eval has a judge verdict for every trial and human labels for a random subset.  The
judge's pass rate is biased (lenient, strict, or both, and differently on different items); the
human-only rate is unbiased but rests on few labels.  Prediction-powered inference (PPI++,
Angelopoulos, Duchi and Zrnic 2023) combines them.  The unit is **the item**: ``v`` is an item's
value of the metric (its pass@1, pass@k or pass^k), :math:`y_i` from the human labels and
:math:`f_i` from the judge's verdicts on the same trials, for the :math:`n` labelled items, and
:math:`u_j` the judge's value on each of the :math:`N` unlabelled items:

.. math::

    \hat\theta_\lambda = \lambda\,\bar u + \frac1n\sum_i (y_i - \lambda f_i), \qquad
    \widehat{\mathrm{SE}}^2 = \lambda^2\,\frac{s_u^2}{N} + \frac{s^2_{y - \lambda f}}{n},
    \qquad \hat\lambda = \frac{\widehat{\mathrm{Cov}}(y, f)}{(1 + n/N)\,\widehat{\mathrm{Var}}(f)}
    \text{ clipped to } [0, 1]

(:math:`\widehat{\mathrm{Var}}(f)` over the judge values of all :math:`n + N` items).
:math:`\lambda = 0` is the human-only mean, :math:`\lambda = 1` plain PPI.  Trials of one item
share its difficulty and the judge's bias on it, so they are not independent units: fed trial
rows, PPI++ under-covers (docs/judges.md).

Two methods:

* ``"normal"``: PPI++ exactly as ``ppi_py.ppi_mean_ci`` computes it (variances with ``ddof=0``,
  :math:`\hat\lambda` from all the data, the normal quantile); tested equal to it to 1e-10.
* ``"auto"`` (the default): two small-sample corrections that the coverage simulation showed
  are needed at 30 labelled items.  :math:`\lambda` is cross-fitted, item :math:`i`'s
  :math:`\lambda_{-i}` computed without item :math:`i`, so that
  :math:`\hat\theta = \frac1n\sum_i [y_i + \lambda_{-i}(\bar u - f_i)]` is unbiased (an
  estimated :math:`\lambda` correlates with the labelled judge mean it multiplies); the standard
  error uses ``ddof=1`` with :math:`r_i = y_i - \lambda_{-i} f_i` and the mean
  :math:`\bar\lambda`.  A pass rate's interval is then Wilson's score interval at the effective
  number of labels :math:`n_{\text{eff}} = \hat\theta(1-\hat\theta)/\widehat{\mathrm{SE}}^2` with
  the :math:`t_{n-1}` quantile (the shape of the default interval, :mod:`~trialscore.stats._intervals`,
  which bends toward the middle near 0 and 1 where the item values are skewed); a paired
  difference gets :math:`\hat\theta \pm t_{n-1}\widehat{\mathrm{SE}}`.

If every value is equal (the standard error is 0), the standard error is the trial-noise floor
of the judge values (:func:`~trialscore.stats._noise.state_noise_variances`), so no interval
has zero width.  ``n_effective`` of the result is the number of human labels alone that would
give the same standard error, :math:`s_y^2/\widehat{\mathrm{SE}}^2`.

Reference
---------
A. N. Angelopoulos, J. C. Duchi and T. Zrnic, "PPI++: Efficient Prediction-Powered Inference",
arXiv:2311.01453 (2023).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from trialscore._validate import check_choice, check_integer, check_probability
from trialscore.core.estimators import state_scores
from trialscore.errors import EvaluationError, InsufficientDataError
from trialscore.stats import _scipy
from trialscore.stats._intervals import Interval, normal_quantile
from trialscore.stats._noise import state_noise_variances

__all__ = ["ItemValues", "item_values", "ppi_interval", "ppi_paired_interval"]

FloatArray = NDArray[np.float64]

METRICS = {"pass@1": "avg", "avg": "avg", "pass@k": "pass@k", "pass^k": "pass^k"}
METHODS = {"auto": "auto", "normal": "normal"}


@dataclass(frozen=True)
class _Rows:
    """Item values: human ``y`` and judge ``f`` on the labelled items, judge ``u`` on the others."""

    y: FloatArray
    f: FloatArray
    u: FloatArray
    #: Mean trial-noise variance of the judge values of all items (the zero-spread floor).
    noise: float


@dataclass(frozen=True)
class PPIResult:
    """Batch result of :func:`ppi_rows`: one entry per row of the inputs."""

    estimate: FloatArray
    low: FloatArray
    high: FloatArray
    se: FloatArray
    lam: FloatArray


def _unlabelled_moments(u: FloatArray, ddof: int) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """Per row of ``u`` (last axis): ``u.sum``, ``u.mean``, ``u.var(ddof=ddof)`` and ``(u * u).sum``.

    The same floats as those calls give (zeros without values, the variance zero with one value),
    from one sum and one scratch array: the mean is the sum over the count, the variance the squared
    deviations from it summed over the count less ``ddof``, as NumPy computes them.
    """
    big = u.shape[-1]
    if big == 0:
        zeros = np.zeros(u.shape[:-1])
        return zeros, zeros, zeros, zeros
    total = u.sum(axis=-1)
    mean = total / big
    scratch = np.subtract(u, mean[..., None])
    var = (
        np.multiply(scratch, scratch, out=scratch).sum(axis=-1) / (big - ddof)
        if big > 1
        else np.zeros_like(mean)
    )
    squares = np.multiply(u, u, out=scratch).sum(axis=-1)
    return total, mean, var, squares


def _lambda(
    cov: FloatArray,
    f_sum: FloatArray,
    f_squares: FloatArray,
    n: int,
    u_sum: FloatArray,
    u_squares: FloatArray,
    big: int,
) -> FloatArray:
    """PPI++'s lambda, clipped to [0, 1], from the labelled and ``big`` unlabelled judge values' moments."""
    if big == 0:
        return np.zeros_like(cov)
    total = f_sum + u_sum
    pooled = (f_squares + u_squares - total * total / (n + big)) / (n + big - 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        lam = np.where(pooled > 0.0, cov / ((1.0 + n / big) * pooled), 0.0)
    clipped: FloatArray = np.clip(lam, 0.0, 1.0)
    return clipped


def ppi_rows(
    y: FloatArray, f: FloatArray, u: FloatArray, level: float, method: str, bounded: bool, noise: float = 0.0
) -> PPIResult:
    """PPI++ on item values with a batch axis: ``y``, ``f`` rows x n, ``u`` rows x N (module docstring).

    The core of :func:`ppi_interval`; the simulations call it on many data sets at once.
    ``bounded`` says the target lies in [0, 1] (Wilson's shape under ``"auto"``); ``noise``
    is the trial-noise variance per item that floors a zero standard error.
    """
    n, big = y.shape[-1], u.shape[-1]
    u_sum, u_mean, u_var, u_squares = _unlabelled_moments(u, ddof=0 if method == "normal" else 1)
    if method == "normal":
        cov = ((y - y.mean(-1, keepdims=True)) * (f - f.mean(-1, keepdims=True))).mean(-1)
        lam = _lambda(cov, f.sum(-1), (f * f).sum(-1), n, u_sum, u_squares, big)
        rectifier = y - lam[..., None] * f
        estimate = lam * u_mean + rectifier.mean(-1)
        se = np.sqrt(lam**2 * u_var / max(big, 1) + rectifier.var(-1) / n)
        quantile = normal_quantile(level)
    else:
        m = n - 1  # moments without item i, for each i
        y_out = y.sum(-1, keepdims=True) - y
        f_out = f.sum(-1, keepdims=True) - f
        squares_out = (f * f).sum(-1, keepdims=True) - f * f
        cross_out = (y * f).sum(-1, keepdims=True) - y * f
        cov = cross_out / m - (y_out / m) * (f_out / m)
        lam_out = _lambda(cov, f_out, squares_out, m, u_sum[..., None], u_squares[..., None], big)
        estimate = (y + lam_out * (u_mean[..., None] - f)).mean(-1)
        lam = lam_out.mean(-1)
        se = np.sqrt(lam**2 * u_var / max(big, 1) + (y - lam_out * f).var(-1, ddof=1) / n)
        quantile = float(_scipy.stdtrit(n - 1, 0.5 + 0.5 * level))
    se = np.where(se > 0.0, se, math.sqrt(noise / (n + big)))
    low, high = estimate - quantile * se, estimate + quantile * se
    if method == "auto" and bounded:
        theta = np.clip(estimate, 0.0, 1.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            n_eff = np.where(se > 0.0, np.maximum(theta * (1.0 - theta) / se**2, 1.0), n + big)
        q2 = quantile * quantile
        centre = (theta + q2 / (2.0 * n_eff)) / (1.0 + q2 / n_eff)
        half = quantile * np.sqrt(theta * (1.0 - theta) / n_eff + q2 / (4.0 * n_eff**2)) / (1.0 + q2 / n_eff)
        low, high = np.minimum(centre - half, estimate), np.maximum(centre + half, estimate)
    return PPIResult(estimate, low, high, se, lam)


def _checked_bank(values: ArrayLike, name: str) -> FloatArray:
    array = np.asarray(values, dtype=np.float64)
    if array.ndim != 2:
        raise EvaluationError(f"{name} must be an items x trials array; got shape {array.shape}")
    bad = ~np.isnan(array) & (array != 0.0) & (array != 1.0)
    if bad.any():
        item, trial = (int(v) for v in np.argwhere(bad)[0])
        raise EvaluationError(
            f"{name} must hold 0/1 verdicts (NaN where absent); got {array[item, trial]:g} "
            f"at item {item}, trial {trial}"
        )
    return array


def _checked(judge: ArrayLike, human: ArrayLike, suffix: str) -> tuple[FloatArray, FloatArray]:
    verdicts = _checked_bank(judge, "judge" + suffix)
    labels = _checked_bank(human, "human" + suffix)
    if labels.shape != verdicts.shape:
        raise EvaluationError(
            f"human{suffix} must have the shape of judge{suffix} ({verdicts.shape}); got {labels.shape}"
        )
    trials = (~np.isnan(verdicts)).sum(axis=1)
    if (trials == 0).any():
        raise EvaluationError(
            f"judge{suffix} must have a trial on every item; item {int(np.argmin(trials))} has none"
        )
    stray = ~np.isnan(labels) & np.isnan(verdicts)
    if stray.any():
        item, trial = (int(v) for v in np.argwhere(stray)[0])
        raise EvaluationError(
            f"human{suffix} labels a trial the judge has no verdict on: item {item}, trial {trial}"
        )
    return verdicts, labels


@dataclass(frozen=True)
class ItemValues:
    """Per item: the human value ``y`` and the judge's value ``f`` on the labelled trials, whether the
    item counts as ``labelled``, and the judge's value on all its trials (``judge``)."""

    y: FloatArray
    f: FloatArray
    labelled: NDArray[np.bool_]
    judge: FloatArray
    noise: float


def _items(verdicts: FloatArray, labels: FloatArray, metric: str, k: int | None) -> ItemValues:
    trials = (~np.isnan(verdicts)).sum(axis=1)
    judged = np.nansum(verdicts, axis=1).astype(np.int64)
    labelled = ~np.isnan(labels)
    everything = state_scores(trials, judged, metric, k)
    if metric == "avg":
        chosen = labelled.any(axis=1)
        counted = np.maximum(labelled.sum(axis=1), 1)
        y = np.nansum(labels, axis=1) / counted
        f = np.where(labelled, verdicts, 0.0).sum(axis=1) / counted
    else:
        chosen = labelled.sum(axis=1) == trials
        y = state_scores(trials, np.nansum(labels, axis=1).astype(np.int64), metric, k)
        f = everything
    noise = float(state_noise_variances(trials, judged, metric, k, None).mean())
    return ItemValues(y, f, np.asarray(chosen, dtype=bool), everything, noise)


def _interval(rows: _Rows, level: float, method: str, bounded: bool, what: str) -> Interval:
    n = rows.y.size
    if n < 2:
        raise InsufficientDataError(
            f"human labels must cover at least 2 items{what}; got {n}", unit="items", needed=2, got=n
        )
    result = ppi_rows(rows.y[None], rows.f[None], rows.u[None], level, method, bounded, rows.noise)
    estimate, low, high, se = (
        float(part[0]) for part in (result.estimate, result.low, result.high, result.se)
    )
    span = (0.0, 1.0) if bounded else (-1.0, 1.0)
    clipped = low < span[0] or high > span[1]
    low, high = max(low, span[0]), min(high, span[1])
    spread = float(rows.y.var(ddof=1))
    name = "normal" if method == "normal" else "cross-fit " + ("wilson-t" if bounded else "t")
    label = f"ppi++ by item, {name}, lambda {float(result.lam[0]):.3g}, {rows.u.size} unlabelled"
    return Interval(
        estimate,
        low,
        high,
        level,
        label,
        n,
        se,
        span if clipped else None,
        spread / se**2 if spread > 0 else None,
    )


def _options(metric: str, k: int, level: float, method: str) -> tuple[str, int | None, float, str]:
    name = check_choice(metric, "metric", METRICS)
    k_used = None if name == "avg" else check_integer(k, "k", 1)
    return name, k_used, check_probability(level, "level"), check_choice(method, "method", METHODS)


def item_values(judge: ArrayLike, human: ArrayLike, metric: str = "pass@1", k: int = 1) -> ItemValues:
    """The per-item values :func:`ppi_interval` works on (arguments as there), checked alike.

    >>> values = item_values([[1, 1], [0, 1]], [[1, 0], [np.nan, np.nan]])
    >>> values.y.tolist(), values.f.tolist(), values.labelled.tolist(), values.judge.tolist()
    ([0.5, 0.0], [1.0, 0.0], [True, False], [1.0, 0.5])
    """
    name, k_used, _, _ = _options(metric, k, 0.95, "auto")
    return _items(*_checked(judge, human, ""), name, k_used)


def ppi_interval(
    judge: ArrayLike,
    human: ArrayLike,
    metric: str = "pass@1",
    k: int = 1,
    level: float = 0.95,
    method: str = "auto",
) -> Interval:
    """Prediction-powered interval of a pass rate with the item as the unit (module docstring).

    ``judge`` is an items x trials array of the judge's 0/1 verdicts (NaN where an item has
    fewer trials), ``human`` the same shape with the human labels and NaN where unlabelled.
    The labelled items must be a random subset.  ``metric`` is ``"pass@1"`` (an item is labelled
    when any of its trials is: its human and judge values are the means over those trials),
    ``"pass@k"`` or ``"pass^k"`` with ``k`` (an item is labelled when all its trials are; a
    partly labelled item counts as unlabelled).  ``method`` is ``"auto"`` or ``"normal"``.

    >>> rng = np.random.default_rng(0)
    >>> truth = rng.random((400, 1)) < rng.beta(0.6, 0.4, (400, 1))
    >>> judge = np.where(rng.random((400, 5)) < 0.9, truth, 1 - truth).astype(float)
    >>> human = np.where(np.arange(400)[:, None] < 60, truth, np.nan) * np.ones((1, 5))
    >>> print(ppi_interval(judge, human))
    0.5721 [0.5008, 0.6405] (95% ppi++ by item, cross-fit wilson-t, lambda 0.8, 340 unlabelled,
    n=60, effective n=190)
    """
    name, k_used, level, method = _options(metric, k, level, method)
    items = _items(*_checked(judge, human, ""), name, k_used)
    rows = _Rows(items.y[items.labelled], items.f[items.labelled], items.judge[~items.labelled], items.noise)
    return _interval(rows, level, method, True, "")


def ppi_paired_interval(
    judge_a: ArrayLike,
    human_a: ArrayLike,
    judge_b: ArrayLike,
    human_b: ArrayLike,
    metric: str = "pass@1",
    k: int = 1,
    level: float = 0.95,
    method: str = "auto",
) -> Interval:
    r"""Prediction-powered interval of the paired difference A - B of two targets on the same items.

    Row ``i`` of every array is the same item.  The item values are the differences
    :math:`v^A_i - v^B_i` (each as in :func:`ppi_interval`); an item counts as labelled when it
    is labelled for both targets, and PPI++ runs on the differences, so the judge's bias on an
    item, shared by both targets, cancels where it can.

    >>> rng = np.random.default_rng(1)
    >>> rate = rng.beta(0.6, 0.4, (300, 1))
    >>> a, b = (rng.random((300, 3)) < rate).astype(float), (rng.random((300, 3)) < 0.8 * rate).astype(float)
    >>> noisy = lambda x: np.where(rng.random(x.shape) < 0.9, x, 1 - x)
    >>> mask = np.where(np.arange(300)[:, None] < 50, 1.0, np.nan)
    >>> result = ppi_paired_interval(noisy(a), a * mask, noisy(b), b * mask)
    >>> result.low < 0.2 * 0.6 < result.high, result.n
    (True, 50)
    """
    name, k_used, level, method = _options(metric, k, level, method)
    if np.shape(judge_a)[0] != np.shape(judge_b)[0]:
        raise EvaluationError(
            f"judge_a and judge_b must hold the same items (rows); got {np.shape(judge_a)[0]} and "
            f"{np.shape(judge_b)[0]}"
        )
    first = _items(*_checked(judge_a, human_a, "_a"), name, k_used)
    second = _items(*_checked(judge_b, human_b, "_b"), name, k_used)
    both = first.labelled & second.labelled
    rows = _Rows(
        first.y[both] - second.y[both],
        first.f[both] - second.f[both],
        first.judge[~both] - second.judge[~both],
        first.noise + second.noise,
    )
    return _interval(rows, level, method, False, " of both targets")
