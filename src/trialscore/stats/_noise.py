"""Trial noise: the sampling variance of each item's estimate from its own trials.

Shared by the paired comparison and the clustered intervals, which floor their
standard errors by it so that finitely many trials never give a zero-width
interval (docs/stats.md, "Paired"), and by the default interval, whose ceiling of
the effective number of items it sets for values that are not 0/1.  No SciPy:
the default interval runs without it.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from trialscore.core._arrays import distinct
from trialscore.core._kernels import Tau
from trialscore.core.bank import Bank
from trialscore.core.estimators import state_scores
from trialscore.core.hypergeometric import CHUNK_CELLS
from trialscore.core.metrics import MetricLike, resolve_metric

__all__ = ["state_noise_variances", "trial_noise_variances"]

FloatArray = NDArray[np.float64]


def _binomial_pmf(trials: int, rates: FloatArray) -> FloatArray:
    """``P(X = j)``, ``X ~ Binomial(trials, rate)`` for each rate (rows) and ``j = 0..trials`` (columns)."""
    logs = np.concatenate(([0.0], np.cumsum(np.log(np.arange(1.0, trials + 1.0)))))
    j = np.arange(trials + 1)
    log_choose = logs[trials] - logs[j] - logs[trials - j]
    rate = rates[:, None]
    pmf: FloatArray = np.exp(log_choose + j * np.log(rate) + (trials - j) * np.log1p(-rate))
    return pmf


def state_noise_variances(
    n: ArrayLike, c: ArrayLike, metric: MetricLike, k: int | None, tau: Tau | None
) -> FloatArray:
    """Trial-noise variance ``v`` of a pass-family estimate for items in states ``(n, c)``.

    For 0/1 trials, the variance of the item's estimate under ``Binomial(n, p~)``
    at the Jeffreys plug-in ``p~ = (c + 1/2) / (n + 1)``, times ``(n + 1)/(n + 2)``:
    for ``avg`` exactly the Jeffreys posterior mean of ``p(1 - p)/n``, positive
    even for a saturated item.  ``avg`` (a metric whose value is the mean of the
    item's trials) in closed form; any other metric from
    its values at every state ``0..n`` under ``Binomial(n, p~)``, in chunks of at
    most ``CHUNK_CELLS`` cells.  A saturated item with 4 trials:
    ``(4.5 * 0.5) / (5 * 6 * 4)``.

    >>> state_noise_variances([4], [4], "avg", None, None).round(6).tolist()
    [0.01875]
    """
    resolved = resolve_metric(metric, per_item=True)
    n, c = np.asarray(n, dtype=np.int64), np.asarray(c, dtype=np.int64)
    if resolved.trial_mean:
        out: FloatArray = (c + 0.5) * (n - c + 0.5) / ((n + 1.0) * (n + 2.0) * n)
        return out
    out = np.empty(n.size)
    for trials in distinct(n).tolist():
        rows = np.flatnonzero(n == trials)
        values = state_scores(np.full(trials + 1, trials), np.arange(trials + 1), resolved, k, tau)
        step = max(1, CHUNK_CELLS // (trials + 1))
        for start in range(0, rows.size, step):
            chunk = rows[start : start + step]
            pmf = _binomial_pmf(trials, (c[chunk] + 0.5) / (trials + 1))
            mean = pmf @ values
            out[chunk] = np.maximum(pmf @ values**2 - mean**2, 0.0) * (trials + 1) / (trials + 2)
    return out


def trial_noise_variances(bank: Bank, metric: MetricLike, k: int | None, tau: Tau | None) -> FloatArray:
    """Per-item trial-noise variance ``v_i`` of a pass-family estimate (:func:`state_noise_variances`).

    >>> trial_noise_variances(Bank.from_counts([4, 4], [4, 0]), "avg", None, None).round(6).tolist()
    [0.01875, 0.01875]
    """
    n, c, index = bank.state_index()
    return state_noise_variances(n, c, metric, k, tau)[index]
