r"""Bank-level estimators of seed 004: pass@k, pass^k, G-Pass@k_tau, mG-Pass@k, Bayes@N.

Each function takes ``R``, an M x N matrix of trial outcomes (rows are items,
columns trials; 0/1 for the pass family), a ragged list of per-item outcome
lists, or a :class:`~trialscore.core.bank.Bank` of per-item counts, and returns
the mean over items of a per-item estimate that depends only on the item's
``n`` trials and ``c`` successes.  With ``X ~ Hypergeometric(n, c, k)`` the
number of successes among ``k`` trials drawn without replacement:

============================  =========================================  ==============================
estimator                     per item                                   reads as
============================  =========================================  ==============================
``pass_at_k``                 ``P(X >= 1) = 1 - C(n-c,k)/C(n,k)``        can it do this at all
``pass_hat_k``                ``P(X = k) = C(c,k)/C(n,k)``               can I rely on it (all k pass)
``g_pass_at_k_tau``           ``P(X >= max(1, ceil(tau k)))``            at least a share tau passes
``mg_pass_at_k``              ``(2/k) sum_{j>m} (j-m) P(X=j)``           G-Pass averaged over tau>=1/2
``maj_at_k``                  ``P(X > k/2)``                             a strict majority passes
``avg``                       ``c / n``                                  mean pass rate (= pass@1)
============================  =========================================  ==============================

All are computed to within about ``1e-13`` relative error of exact rational
arithmetic for ``n`` up to ``10**5`` and every ``k`` (``3e-13`` for G-Pass@k_tau,
maj@k and mG-Pass@k on values below ``1e-30``; see
:mod:`trialscore.core.hypergeometric`), with no overflow and no NaN.  Small banks are
computed in exact integers and their means rounded once (:func:`states_mean`).

References
----------
Chen et al. (2021), arXiv:2107.03374 (pass@k); Yao et al. (2024),
arXiv:2406.12045 (pass^k); Liu et al. (2024), arXiv:2412.13147 (G-Pass@k_tau,
mG-Pass@k); Hariri et al. (2025), arXiv:2510.04265 (Bayes@N).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import cast

import numpy as np
from numpy.typing import ArrayLike, NDArray

from trialscore._record import Record
from trialscore.core import TOP_LEVEL_ESTIMATORS
from trialscore.core._arrays import distinct
from trialscore.core._kernels import Tau
from trialscore.core._kernels import tau_threshold as tau_threshold  # exported (see __all__)
from trialscore.core.bank import Bank, CategoryBank, as_bank, checked_matrix, is_ragged
from trialscore.core.hypergeometric import CHUNK_CELLS, exact_bank_mean, log_choose_ratio_curve
from trialscore.core.metrics import METRICS, Metric, MetricLike, resolve_metric
from trialscore.errors import EvaluationError

__all__ = [*TOP_LEVEL_ESTIMATORS, "states_mean"]

FloatArray = NDArray[np.float64]


def _values(
    bank: Bank, metric: Metric, k: int | None, tau: Tau | None, n: NDArray[np.int64], c: NDArray[np.int64]
) -> FloatArray:
    """Values of ``metric`` at states ``(n, c)``, ``k`` checked against every item of ``bank``."""
    return metric.values(n, c, bank.check_k(k) if metric.needs_k else None, tau)


def state_scores(
    n: ArrayLike, c: ArrayLike, metric: MetricLike, k: int | None = None, tau: Tau | None = None
) -> FloatArray:
    """Per-item value of ``metric`` (a name or :class:`~trialscore.core.metrics.Metric`) at ``(n, c)``.

    The building block of resampling: a bootstrap over items only needs these
    values for the distinct states and a histogram of how often each occurs.

    >>> state_scores([5, 5], [3, 4], "pass^k", k=2).round(12).tolist()
    [0.3, 0.6]
    """
    resolved = resolve_metric(metric, per_item=True)
    bank = Bank.from_counts(n, c)
    return _values(bank, resolved, k, tau, bank.n, bank.c)


def item_scores(
    R: ArrayLike | Bank, metric: MetricLike, k: int | None = None, tau: Tau | None = None
) -> FloatArray:
    """Per-item values of ``metric`` (the numbers the bank-level mean averages).

    >>> item_scores([[0, 1, 1, 0, 1], [1, 1, 0, 1, 1]], "pass@k", k=2).round(12).tolist()
    [0.9, 1.0]
    """
    resolved = resolve_metric(metric, per_item=True)
    bank = as_bank(R)
    n, c, index = bank.state_index()
    return _values(bank, resolved, k, tau, n, c)[index]


def states_mean(
    n: ArrayLike,
    c: ArrayLike,
    freq: ArrayLike,
    values: ArrayLike,
    metric: MetricLike,
    k: int | None,
    tau: Tau | None = None,
) -> float:
    """The bank mean from its distinct states: ``freq @ values / M``, exactly rounded for small banks.

    ``values`` are the states' values of ``metric`` (:func:`state_scores`).  Where
    the exact integer path applies (see :func:`trialscore.core.hypergeometric.exact_bank_mean`)
    the mean is the double nearest the exact rational, so every point estimate,
    interval and comparison built on these states reports the same number.

    >>> states_mean([5, 5], [3, 4], [1, 1], state_scores([5, 5], [3, 4], "pass^k", 2), "pass^k", 2)
    0.45
    """
    resolved = resolve_metric(metric, per_item=True)
    exact = exact_bank_mean(n, c, freq, resolved.k_used(k), *resolved.credit_table(k, tau))
    if exact is not None:
        return exact
    counts = np.asarray(freq, dtype=np.float64)
    return float(counts @ np.asarray(values, dtype=np.float64) / counts.sum())


def _bank_mean(R: ArrayLike | Bank, metric: Metric, k: int | None, tau: Tau | None = None) -> float:
    """Mean over items of ``metric``: exactly rounded for small banks, else ``freq @ values / M``."""
    bank = as_bank(R)
    n, c, freq = bank.states()
    return states_mean(n, c, freq, _values(bank, metric, k, tau, n, c), metric, k, tau)


def avg(R: ArrayLike | Bank) -> float:
    r"""Mean of all entries of ``R``: :math:`\frac{1}{MN}\sum_{\alpha,i} R_{\alpha i}`.

    Any finite real matrix is accepted (so mean scores work too).  For ragged
    input each item weighs the same: the mean over items of ``c / n``, which
    equals pass@1 and, when every item has N trials, the seed's formula.

    >>> avg([[0, 1, 1, 0, 1], [1, 1, 0, 1, 1]])
    0.7
    """
    if isinstance(R, Bank) or is_ragged(R):
        return _bank_mean(R, METRICS["avg"], None)
    array = checked_matrix(R, "R")
    kind, size = array.dtype.kind, array.size
    if kind == "b":
        return int(np.count_nonzero(array)) / size
    if kind in "iu" and array.itemsize <= 4:
        return int(array.sum(dtype=np.int64)) / size
    if kind in "iu" and array.view(np.dtype(f"u{array.itemsize}")).max() <= 1:
        return int(np.einsum("ij->", array)) / size
    return float(np.mean(array, dtype=np.float64))


def pass_at_k(R: ArrayLike | Bank, k: int) -> float:
    r"""Unbiased pass@k (Chen et al., 2021), averaged over items.

    .. math::

        \text{pass@k} = \frac{1}{M}\sum_{\alpha}
            \Bigl(1 - \frac{\binom{n_\alpha - c_\alpha}{k}}{\binom{n_\alpha}{k}}\Bigr)

    Parameters
    ----------
    R : (M, N) array of 0/1, ragged list of outcome lists, or Bank
    k : int, ``1 <= k <= n`` for every item

    >>> R = [[0, 1, 1, 0, 1], [1, 1, 0, 1, 1]]
    >>> pass_at_k(R, 1), pass_at_k(R, 2)
    (0.7, 0.95)
    """
    return _bank_mean(R, METRICS["pass@k"], k)


def pass_hat_k(R: ArrayLike | Bank, k: int) -> float:
    r"""pass^k (Yao et al., 2024): probability that all ``k`` drawn trials pass.

    .. math::

        \text{pass}^k = \frac{1}{M}\sum_{\alpha}\frac{\binom{c_\alpha}{k}}{\binom{n_\alpha}{k}}

    Also called G-Pass@k; :func:`g_pass_at_k` is an alias.  (Seed 000's
    ``passToTheK`` is the plug-in power ``p**k``, available as
    :func:`trialscore.compat.scoring.pass_to_the_k`.)

    >>> R = [[0, 1, 1, 0, 1], [1, 1, 0, 1, 1]]
    >>> pass_hat_k(R, 1), round(pass_hat_k(R, 2), 12)
    (0.7, 0.45)
    """
    return _bank_mean(R, METRICS["pass^k"], k)


g_pass_at_k = pass_hat_k


def g_pass_at_k_tau(R: ArrayLike | Bank, k: int, tau: Tau) -> float:
    r"""G-Pass@k_tau (Liu et al., 2024): at least ``ceil(tau k)`` of ``k`` drawn trials pass.

    .. math::

        \text{G-Pass@k}_\tau = \frac{1}{M}\sum_\alpha \sum_{j=j_0}^{k}
            \frac{\binom{c_\alpha}{j}\binom{n_\alpha-c_\alpha}{k-j}}{\binom{n_\alpha}{k}},
        \qquad j_0 = \max(1, \lceil \tau k \rceil)

    ``tau = 0`` gives pass@k and ``tau = 1`` gives pass^k (the threshold is
    exact; see :func:`tau_threshold`).  ``g_pass_at_k_tao`` is the seed's
    spelling of the same function.

    >>> R = [[0, 1, 1, 0, 1], [1, 1, 0, 1, 1]]
    >>> round(g_pass_at_k_tau(R, 2, 0.5), 12), round(g_pass_at_k_tau(R, 2, 1.0), 12)
    (0.95, 0.45)
    """
    return _bank_mean(R, METRICS["g-pass@k_tau"], k, tau)


def g_pass_at_k_tao(R: ArrayLike | Bank, k: int, tao: Tau) -> float:
    """Seed 004's spelling of :func:`g_pass_at_k_tau`, keyword ``tao`` included.

    >>> g_pass_at_k_tao([[0, 1, 1, 0, 1], [1, 1, 0, 1, 1]], 2, tao=1.0)
    0.45
    """
    return g_pass_at_k_tau(R, k, tao)


def mg_pass_at_k(R: ArrayLike | Bank, k: int) -> float:
    r"""mG-Pass@k (Liu et al., 2024): G-Pass@k_tau averaged over ``tau`` in [0.5, 1].

    The discrete form of seed 004, with ``m = ceil(k / 2)``:

    .. math::

        \text{mG-Pass@k}_\alpha = \frac{2}{k}\sum_{j=m+1}^{k} (j - m)\, P(X = j),
        \qquad X \sim \text{Hypergeometric}(n_\alpha, c_\alpha, k)

    >>> R = [[0, 1, 1, 0, 1], [1, 1, 0, 1, 1]]
    >>> round(mg_pass_at_k(R, 2), 6), round(mg_pass_at_k(R, 3), 6)
    (0.45, 0.166667)
    """
    return _bank_mean(R, METRICS["mg-pass@k"], k)


def maj_at_k(R: ArrayLike | Bank, k: int) -> float:
    r"""maj@k: probability that a strict majority of ``k`` drawn trials pass.

    ``P(X >= floor(k/2) + 1)``; a tie (``k`` even, ``X = k/2``) does not count.

    >>> R = [[0, 1, 1, 0, 1], [1, 1, 0, 1, 1]]
    >>> round(maj_at_k(R, 3), 12)
    0.85
    """
    return _bank_mean(R, METRICS["maj@k"], k)


@dataclass(frozen=True)
class PassCurve(Record):
    """pass@k and pass^k for every ``k = 1..k_max`` (``k_max`` = smallest n)."""

    k: NDArray[np.int64]
    pass_at_k: FloatArray
    pass_hat_k: FloatArray


def pass_curve(R: ArrayLike | Bank, k_max: int | None = None) -> PassCurve:
    r"""pass@k and pass^k for every ``k`` from 1 to ``k_max`` in one pass.

    Each item state needs ``O(k_max)`` work for the whole curve (the log of
    ``C(a, k) / C(n, k)`` is a running sum over ``k``), so the curve costs about
    as much as a single :func:`pass_at_k` call on large banks.

    >>> curve = pass_curve([[0, 1, 1, 0, 1], [1, 1, 0, 1, 1]])
    >>> curve.pass_at_k.round(12).tolist()
    [0.7, 0.95, 1.0, 1.0, 1.0]
    >>> curve.pass_hat_k.round(12).tolist()
    [0.7, 0.45, 0.25, 0.1, 0.0]
    """
    bank = as_bank(R)
    k_max = bank.min_trials if k_max is None else bank.check_k(k_max, "k_max")
    n, c, freq = bank.states()
    at = np.zeros(k_max)
    hat = np.zeros(k_max)
    step = max(1, CHUNK_CELLS // (k_max + 1))
    for value in distinct(n):
        rows = np.flatnonzero(n == value)
        for start in range(0, rows.size, step):
            chunk = rows[start : start + step]
            weight = freq[chunk].astype(np.float64)
            miss = log_choose_ratio_curve(int(value), value - c[chunk], k_max)[:, 1:]
            hit = log_choose_ratio_curve(int(value), c[chunk], k_max)[:, 1:]
            at += weight @ -np.expm1(miss)
            hat += weight @ np.exp(hit)
    return PassCurve(np.arange(1, k_max + 1), at / bank.items, hat / bank.items)


def _weights(w: ArrayLike | None) -> FloatArray:
    if w is None:
        return np.array([0.0, 1.0])
    weights = np.asarray(w, dtype=np.float64) if not isinstance(w, str) else None
    if weights is None or weights.ndim != 1 or weights.size < 2:
        raise EvaluationError(f"w must be a 1-D vector of C + 1 >= 2 category weights; got {w!r}")
    if not np.isfinite(weights).all():
        raise EvaluationError(f"w must hold finite weights; got {weights.tolist()}")
    return weights


def bayes(
    R: ArrayLike | Bank, w: ArrayLike | None = None, R0: ArrayLike | None = None
) -> tuple[float, float]:
    r"""Bayes@N (Hariri et al., 2025): posterior mean and sd of the weighted score.

    Entries of ``R`` are categories ``0..C`` with weights ``w = (w_0..w_C)``
    (default: binary, ``w = (0, 1)``).  Each item's category probabilities get a
    Dirichlet(1 + prior counts) prior, where the optional ``R0`` adds ``D``
    prior outcomes per item.  With :math:`\nu_{\alpha j}` the posterior counts
    and :math:`T = 1 + C + D + N`:

    .. math::

        \mu = w_0 + \frac{1}{MT}\sum_\alpha\sum_j \nu_{\alpha j}(w_j - w_0), \qquad
        \sigma = \sqrt{\frac{1}{M^2(T+1)}\sum_\alpha\Bigl[\sum_j \tfrac{\nu_{\alpha j}}{T}(w_j-w_0)^2
            - \bigl(\sum_j \tfrac{\nu_{\alpha j}}{T}(w_j-w_0)\bigr)^2\Bigr]}

    Ragged banks use each item's own ``T``; for rectangular input this is the
    formula above exactly.

    >>> R = [[0, 1, 2, 2, 1], [1, 1, 0, 2, 2]]
    >>> mu, sigma = bayes(R, [0.0, 0.5, 1.0], [[0, 2], [1, 2]])
    >>> round(mu, 6), round(sigma, 6)
    (0.575, 0.084275)
    >>> mu, sigma = bayes(R, [0.0, 0.5, 1.0])
    >>> round(mu, 6), round(sigma, 6)
    (0.5625, 0.091998)
    """
    weights = _weights(w)
    categories = weights.size
    binary = isinstance(R, Bank) or is_ragged(R)
    if binary and categories != 2:
        raise EvaluationError(f"w must have 2 weights for binary per-item counts; got {categories} weights")
    if binary or (categories == 2 and checked_matrix(cast("ArrayLike", R)).dtype.kind != "f"):
        bank = as_bank(R)
        items = bank.items
        if R0 is None:
            # items in the same (n, c) state share their posterior: work on the states
            n, c, freq = bank.states()
            counts, weight = np.stack([n - c, c], axis=1), freq.astype(np.float64)
        else:
            counts, weight = CategoryBank.from_bank(bank).counts, np.ones(items)
    else:
        counts = CategoryBank.from_matrix(cast("ArrayLike", R), categories, "R").counts
        items, weight = counts.shape[0], np.ones(counts.shape[0])
    nu = counts + 1.0
    if R0 is not None:
        prior = CategoryBank.from_matrix(R0, categories, "R0").counts
        if prior.shape[0] != items:
            raise EvaluationError(
                f"R0 must have one row per item of R; got {prior.shape[0]} rows for {items} items"
            )
        nu = nu + prior
    total = nu.sum(axis=1)
    # Weights shifted to start at 0 and scaled to [0, 1]: no square overflows, whatever their size.
    shifted = weights - weights[0]
    scale = float(np.abs(shifted).max()) or 1.0
    unit = shifted / scale
    first = nu @ unit / total
    second = nu @ (unit * unit) / total
    mu = float(weights[0] + scale * (weight @ first / items))
    variance = float(weight @ (np.maximum(second - first * first, 0.0) / (total + 1.0))) / items**2
    return mu, scale * math.sqrt(variance)


def _mean_of(metric: Metric) -> Callable[..., float]:
    """The bank estimator of a registered item-mean metric with no function of its own."""

    def with_tau(R: ArrayLike | Bank, k: int, tau: Tau) -> float:
        return _bank_mean(R, metric, k, tau)

    def with_k(R: ArrayLike | Bank, k: int) -> float:
        return _bank_mean(R, metric, k)

    def plain(R: ArrayLike | Bank) -> float:
        return _bank_mean(R, metric, None)

    estimator = with_tau if metric.needs_tau else with_k if metric.needs_k else plain
    estimator.__name__ = estimator.__qualname__ = metric.name
    estimator.__doc__ = f"{metric.name}: {metric.summary}, averaged over items."
    return estimator


def estimator_by_name(metric: MetricLike) -> Callable[..., object]:
    """The estimator function of a metric, by name, alias or object (``"pass@k"``, ``"pass_hat_k"``, ...).

    A registered metric without a function of its own gets the mean over items of its credit.

    >>> estimator_by_name("g_pass_at_k") is pass_hat_k
    True
    """
    resolved = resolve_metric(metric)
    if resolved.function is None:
        return _mean_of(resolved)
    function: Callable[..., object] = globals()[resolved.function]
    return function
