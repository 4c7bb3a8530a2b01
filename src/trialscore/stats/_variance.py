r"""Standard errors over items and where the uncertainty comes from (Miller 2024).

An eval score is a mean over ``M`` items of per-item scores :math:`s_i`; its
standard error is :math:`\mathrm{SE} = s/\sqrt{M}` with :math:`s` the sample
standard deviation of the :math:`s_i`.  When items share a cluster (passages,
repositories, skills) their errors are correlated and the clustered
(sandwich) standard error applies:

.. math::

    \mathrm{SE}_{\text{cluster}}^2 = \frac{G}{G-1}\,\frac{1}{M^2}
        \sum_{g=1}^{G}\Bigl(\sum_{i \in g} (s_i - \bar s)\Bigr)^2

(the :math:`G/(G-1)` small-sample factor is statsmodels' default for
``cov_type="cluster"``; with one item per cluster it gives back
:math:`s/\sqrt{M}`).

With ``K`` trials per item the variance of an item's mean score splits into
the spread of the items' true scores and the trial noise around them:

.. math::

    \mathrm{Var}(\bar s_i) = \underbrace{\omega^2}_{\text{between items}}
        + \underbrace{\overline{\sigma^2}/K}_{\text{trial noise}},

estimated by the sample variance of the item means (total), the mean of the
unbiased within-item variances :math:`\hat\sigma_i^2` (``ddof=1``; for 0/1
trials :math:`c(n-c)/(n(n-1))`) divided by each item's ``n``, and their
difference (between, floored at 0).  More trials shrink only the trial-noise
part; more items shrink both.

Reference
---------
E. Miller, "Adding Error Bars to Evals: A Statistical Approach to Language
Model Evaluations", arXiv:2411.00640 (2024).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from trialscore._record import Record
from trialscore._validate import check_values
from trialscore.core.bank import Bank, as_bank, checked_matrix, is_ragged
from trialscore.errors import EvaluationError

__all__ = [
    "ClusteredStandardError",
    "VarianceDecomposition",
    "clustered_standard_error",
    "decompose_variance",
    "item_moments",
    "standard_error",
]

FloatArray = NDArray[np.float64]

#: Advise more trials when doubling them buys at least this share of what doubling items buys.
TRIALS_ADVICE_SHARE = 0.5


def standard_error(values: ArrayLike) -> float:
    r"""Standard error of the mean of per-item scores: :math:`s / \sqrt{M}` (``ddof=1``).

    >>> round(standard_error([0.2, 0.4, 0.6, 0.8]), 6)
    0.129099
    """
    data = check_values(values, "values", 2)
    return float(data.std(ddof=1)) / math.sqrt(data.size)


@dataclass(frozen=True)
class ClusteredStandardError(Record):
    """Clustered standard error of a mean, beside the naive one that ignores clusters.

    ``design_effect`` is ``(se / naive_se) ** 2``: how many times larger the
    variance is than independent items would make it.
    """

    estimate: float
    se: float
    naive_se: float
    design_effect: float
    items: int
    clusters: int
    small_sample_correction: bool


def _cluster_index(clusters: Sequence[Hashable], items: int) -> tuple[NDArray[np.int64], int]:
    keys = list(clusters) if not isinstance(clusters, np.ndarray) else clusters.tolist()
    if len(keys) != items:
        raise EvaluationError(f"clusters must hold one key per item; got {len(keys)} keys for {items} items")
    positions: dict[Hashable, int] = {}
    try:
        index = np.fromiter((positions.setdefault(key, len(positions)) for key in keys), np.int64, items)
    except TypeError as exc:
        raise EvaluationError(f"clusters must be hashable keys (str, int...); got {exc}") from exc
    return index, len(positions)


def clustered_standard_error(
    values: ArrayLike, clusters: Sequence[Hashable], small_sample_correction: bool = True
) -> ClusteredStandardError:
    r"""Cluster-robust standard error of the mean of per-item scores (formula in the module docstring).

    ``clusters[i]`` is item ``i``'s cluster key.  Matches statsmodels'
    ``OLS(values, ones).fit(cov_type="cluster", cov_kwds={"groups": ...})``.

    >>> result = clustered_standard_error([1, 1, 0, 0, 1, 0], ["a", "a", "b", "b", "c", "c"])
    >>> round(result.se, 6), round(result.naive_se, 6), result.clusters
    (0.288675, 0.223607, 3)
    """
    data = check_values(values, "values", 2)
    index, groups = _cluster_index(clusters, data.size)
    if groups < 2:
        raise EvaluationError(f"clusters must hold at least 2 distinct keys; got {groups}")
    residual_sums = np.bincount(index, weights=data - data.mean(), minlength=groups)
    variance = float(residual_sums @ residual_sums) / data.size**2
    if small_sample_correction:
        variance *= groups / (groups - 1)
    se = math.sqrt(variance)
    naive = standard_error(data)
    effect = (se / naive) ** 2 if naive > 0 else 1.0
    return ClusteredStandardError(
        float(data.mean()), se, naive, effect, int(data.size), groups, bool(small_sample_correction)
    )


def item_moments(R: ArrayLike | Bank) -> tuple[FloatArray, FloatArray, NDArray[np.int64]]:
    r"""Per-item mean score, unbiased within-item variance of one trial, and trial count.

    ``R`` is a :class:`~trialscore.core.bank.Bank`, ragged 0/1 outcome lists, or an
    items x trials matrix of 0/1 outcomes or of graded scores.  Every item needs
    at least 2 trials.

    >>> means, within, trials = item_moments([[1, 1, 0, 1], [0, 0, 0, 1]])
    >>> means.tolist(), within.round(6).tolist(), trials.tolist()
    ([0.75, 0.25], [0.25, 0.25], [4, 4])
    """
    if isinstance(R, Bank) or is_ragged(R):
        bank = as_bank(R)
        n, c = bank.n, bank.c
        means = c / n
        with np.errstate(divide="ignore", invalid="ignore"):
            within = c * (n - c) / (n * (n - 1.0))
    else:
        matrix = checked_matrix(R, "R").astype(np.float64)
        n = np.full(matrix.shape[0], matrix.shape[1], dtype=np.int64)
        means = matrix.mean(axis=1)
        within = matrix.var(axis=1, ddof=1) if matrix.shape[1] > 1 else np.full(n.size, np.nan)
    if (n < 2).any():
        item = int(np.flatnonzero(n < 2)[0])
        raise EvaluationError(
            f"n must be >= 2 trials for every item to measure trial noise; got n={n[item]} at item {item}"
        )
    return means, within, n


@dataclass(frozen=True)
class VarianceDecomposition(Record):
    """Where the uncertainty of a mean score comes from, and what to add to shrink it.

    Variances are of one item's mean score; ``se_*`` are standard errors of
    the bank mean now, with twice the trials, with twice the items, and with
    unlimited trials (the floor that only more items can lower).
    """

    items: int
    mean_trials: float
    mean: float
    total: float
    between: float
    within: float
    trial_noise: float
    trial_noise_share: float
    se: float
    se_double_trials: float
    se_double_items: float
    se_unlimited_trials: float
    advice: str
    rule: str
    message: str

    def __str__(self) -> str:
        return self.message


def decompose_variance(R: ArrayLike | Bank) -> VarianceDecomposition:
    r"""Between-item variance, within-item (trial) variance and the advice that follows.

    ``advice`` is ``"add_trials"`` when the trial-noise share of the variance
    is at least 0.5, else ``"add_items"``.  The share is exactly the ratio of
    what doubling the trials removes from the variance to what doubling the
    items removes, at the same number of new trial runs: from 0.5 on, more
    trials buy at least half of what new items would, without writing new
    items.

    ``trial_noise`` is capped at ``total`` (and ``between`` floored at 0), so
    that ``total = between + trial_noise``.

    >>> flaky = decompose_variance([[1, 0, 1, 0], [1, 1, 1, 0], [0, 1, 0, 0], [1, 0, 0, 1]])
    >>> flaky.advice, flaky.trial_noise_share, flaky.between
    ('add_trials', 1.0, 0.0)
    >>> steady = decompose_variance([[1, 1, 1, 0], [1, 1, 1, 1], [0, 0, 0, 0], [0, 0, 1, 0]])
    >>> steady.advice, round(steady.trial_noise_share, 3)
    ('add_items', 0.15)
    """
    means, within, trials = item_moments(R)
    items = means.size
    if items < 2:
        raise EvaluationError(f"R must hold at least 2 items to measure between-item variance; got {items}")
    total = float(means.var(ddof=1))
    noise = float(np.mean(within / trials))
    between = max(total - noise, 0.0)
    share = min(noise / total, 1.0) if total > 0 else 0.0
    noise = min(noise, total)
    se = math.sqrt(total / items)
    double_trials = math.sqrt((between + noise / 2) / items)
    double_items = math.sqrt(total / (2 * items))
    floor = math.sqrt(between / items)
    advice = "add_trials" if share >= TRIALS_ADVICE_SHARE else "add_items"
    rule = (
        f"add_trials if the trial-noise share of the variance is >= {TRIALS_ADVICE_SHARE}, else add_items; "
        "the share is what doubling trials removes from the variance relative to doubling items"
    )
    if advice == "add_trials":
        message = (
            f"Trial noise is {share:.0%} of the variance: doubling the trials cuts the SE from {se:.4g} "
            f"to {double_trials:.4g} (doubling the items: {double_items:.4g}); "
            f"no number of trials gets it below {floor:.4g}."
        )
    else:
        message = (
            f"Trial noise is only {share:.0%} of the variance: items differ more than trials do. "
            f"Doubling the items cuts the SE from {se:.4g} to {double_items:.4g}; doubling the trials "
            f"only to {double_trials:.4g}, and no number of trials gets it below {floor:.4g}."
        )
    return VarianceDecomposition(
        items=int(items),
        mean_trials=float(trials.mean()),
        mean=float(means.mean()),
        total=total,
        between=between,
        within=float(within.mean()),
        trial_noise=noise,
        trial_noise_share=share,
        se=se,
        se_double_trials=double_trials,
        se_double_items=double_items,
        se_unlimited_trials=floor,
        advice=advice,
        rule=rule,
        message=message,
    )
