r"""Confidence and credible intervals: proportions, means of scores, Bayes@N.

Every function returns an :class:`Interval`, a small frozen record that states
its estimate, bounds, level, method and sample size, prints as one line and
serializes with :meth:`Interval.to_dict`.

Proportion intervals for ``c`` successes in ``n`` trials, with
``z = Phi^{-1}(1 - alpha/2)`` and ``alpha = 1 - level``:

=================  ==========================================================================
method             bounds
=================  ==========================================================================
``wilson``         :math:`\frac{\hat p + z^2/2n \pm z\sqrt{\hat p(1-\hat p)/n + z^2/4n^2}}{1 + z^2/n}`
``clopper-pearson``  Beta quantiles :math:`B(\alpha/2; c, n-c+1)`, :math:`B(1-\alpha/2; c+1, n-c)`
``jeffreys``       Beta quantiles of the posterior :math:`\mathrm{Beta}(c + 1/2, n - c + 1/2)`
``agresti-coull``  :math:`\tilde p \pm z\sqrt{\tilde p(1-\tilde p)/\tilde n}`, :math:`\tilde n = n + z^2`,
                   :math:`\tilde p = (c + z^2/2)/\tilde n`, clipped to [0, 1]
=================  ==========================================================================

``0`` of ``n`` gives an interval starting at exactly 0 and ``n`` of ``n`` one
ending at exactly 1, for every method (Jeffreys uses the boundary rule of
Brown, Cai and DasGupta 2001), never NaN.

Seed 002 prints the Wilson interval as ``p ± z sqrt(p(1-p)/n + z²/4n²) / (1 + z²/n)``;
that display drops the shift of the centre to ``(p + z²/2n) / (1 + z²/n)``.
The formula above is Wilson's (1927), the one SciPy and statsmodels compute.

References
----------
E. B. Wilson (1927); C. J. Clopper and E. S. Pearson (1934); A. Agresti and
B. A. Coull (1998); L. D. Brown, T. T. Cai and A. DasGupta, "Interval
Estimation for a Binomial Proportion", Statistical Science 16 (2001).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from trialscore._record import Record
from trialscore._validate import check_choice, check_integer, check_probability, check_values
from trialscore.core._kernels import Tau
from trialscore.core.bank import Bank, as_bank
from trialscore.core.estimators import _weights, bayes, state_scores, states_mean
from trialscore.core.metrics import MetricLike, resolve_metric
from trialscore.errors import EvaluationError
from trialscore.stats import _scipy
from trialscore.stats._noise import state_noise_variances
from trialscore.stats._variance import clustered_standard_error

FloatArray = NDArray[np.float64]

__all__ = [
    "Interval",
    "bayes_interval",
    "bounded_mean_interval",
    "clustered_interval",
    "item_interval",
    "mean_interval",
    "normal_quantile",
    "proportion_interval",
]


@dataclass(frozen=True)
class Interval(Record):
    """An estimate with its interval: what it is, how it was made, on how many units.

    ``se`` is the standard error (or posterior / bootstrap standard deviation)
    when the method has one; ``clipped_to`` states the range the bounds were
    clipped to, when they were.

    >>> interval = Interval(0.7, 0.3968, 0.8922, 0.95, "wilson", 10)
    >>> print(interval)
    0.7 [0.3968, 0.8922] (95% wilson, n=10)
    >>> interval.contains(0.5), round(interval.width, 4)
    (True, 0.4954)
    """

    estimate: float
    low: float
    high: float
    level: float
    method: str
    n: int
    se: float | None = None
    clipped_to: tuple[float, float] | None = None
    n_effective: float | None = None

    @property
    def width(self) -> float:
        """``high - low``."""
        return self.high - self.low

    def contains(self, value: float) -> bool:
        """True when ``low <= value <= high``."""
        return self.low <= value <= self.high

    def __str__(self) -> str:
        clip = (
            ""
            if self.clipped_to is None
            else f", clipped to [{self.clipped_to[0]:g}, {self.clipped_to[1]:g}]"
        )
        effective = "" if self.n_effective is None else f", effective n={self.n_effective:.4g}"
        return (
            f"{self.estimate:.4g} [{self.low:.4g}, {self.high:.4g}] "
            f"({self.level * 100:g}% {self.method}, n={self.n}{effective}{clip})"
        )


def normal_quantile(level: float) -> float:
    r"""The two-sided standard normal critical value :math:`z = \Phi^{-1}((1 + \text{level}) / 2)`.

    >>> round(normal_quantile(0.95), 6)
    1.959964
    """
    return float(_scipy.ndtri(0.5 + 0.5 * check_probability(level, "level")))


_PROPORTION_METHODS = {
    "wilson": "wilson",
    "clopper-pearson": "clopper-pearson",
    "exact": "clopper-pearson",
    "beta": "clopper-pearson",
    "jeffreys": "jeffreys",
    "agresti-coull": "agresti-coull",
}


def _wilson(c: int, n: int, z: float) -> tuple[float, float]:
    p = c / n
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return centre - half, centre + half


def _clopper_pearson(c: int, n: int, alpha: float) -> tuple[float, float]:
    low = float(_scipy.betaincinv(c, n - c + 1, alpha / 2)) if c > 0 else 0.0
    high = float(_scipy.betaincinv(c + 1, n - c, 1 - alpha / 2)) if c < n else 1.0
    return low, high


def _jeffreys(c: int, n: int, alpha: float) -> tuple[float, float]:
    low = float(_scipy.betaincinv(c + 0.5, n - c + 0.5, alpha / 2)) if c > 0 else 0.0
    high = float(_scipy.betaincinv(c + 0.5, n - c + 0.5, 1 - alpha / 2)) if c < n else 1.0
    return low, high


def _agresti_coull(c: int, n: int, z: float) -> tuple[float, float]:
    n_tilde = n + z * z
    p_tilde = (c + z * z / 2) / n_tilde
    half = z * math.sqrt(p_tilde * (1 - p_tilde) / n_tilde)
    return p_tilde - half, p_tilde + half


def proportion_interval(successes: int, trials: int, level: float = 0.95, method: str = "wilson") -> Interval:
    r"""Confidence interval for a pass rate from ``successes`` of ``trials``.

    Methods: ``"wilson"`` (default), ``"clopper-pearson"`` (aliases
    ``"exact"``, ``"beta"``), ``"jeffreys"``, ``"agresti-coull"``; formulas in
    the module docstring.  Values match
    ``statsmodels.stats.proportion.proportion_confint`` and
    ``scipy.stats.binomtest(...).proportion_ci``; at ``0`` and ``n`` successes
    the outer bound is exactly 0 or 1.

    >>> print(proportion_interval(7, 10))
    0.7 [0.3968, 0.8922] (95% wilson, n=10)
    >>> print(proportion_interval(0, 10, method="clopper-pearson"))
    0 [0, 0.3085] (95% clopper-pearson, n=10)
    """
    n = check_integer(trials, "trials", 1)
    c = check_integer(successes, "successes", 0)
    if c > n:
        raise EvaluationError(f"successes must satisfy 0 <= successes <= trials; got {c} with trials={n}")
    level = check_probability(level, "level")
    name = check_choice(method, "method", _PROPORTION_METHODS)
    alpha = 1.0 - level
    if name == "wilson":
        low, high = _wilson(c, n, normal_quantile(level))
    elif name == "clopper-pearson":
        low, high = _clopper_pearson(c, n, alpha)
    elif name == "jeffreys":
        low, high = _jeffreys(c, n, alpha)
    else:
        low, high = _agresti_coull(c, n, normal_quantile(level))
    low = 0.0 if c == 0 else min(max(low, 0.0), c / n)
    high = 1.0 if c == n else max(min(high, 1.0), c / n)
    return Interval(c / n, low, high, level, name, n)


_MEAN_METHODS = {"auto": "auto", "t": "t", "normal": "normal", "z": "normal"}

#: Seed 003: a t-distribution below this many values, the normal beyond.
T_BELOW = 30


def _clip_range(clip: Sequence[float] | None) -> tuple[float, float] | None:
    if clip is None:
        return None
    try:
        lo, hi = (float(bound) for bound in clip)
    except (TypeError, ValueError) as exc:
        raise EvaluationError(f"clip must be None or a pair (low, high); got {clip!r}") from exc
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise EvaluationError(f"clip must be a pair of finite numbers with low < high; got {clip!r}")
    return lo, hi


def _clipped(
    estimate: float, low: float, high: float, clip: tuple[float, float] | None
) -> tuple[float, float]:
    if clip is None:
        return low, high
    if not clip[0] <= estimate <= clip[1]:
        raise EvaluationError(
            f"clip must contain the estimate; got clip=({clip[0]:g}, {clip[1]:g}) with estimate {estimate:g}"
        )
    return max(low, clip[0]), min(high, clip[1])


def mean_interval(
    values: ArrayLike, level: float = 0.95, method: str = "auto", clip: tuple[float, float] | None = None
) -> Interval:
    r"""Confidence interval for the mean of continuous scores (one value per unit).

    .. math::

        \bar x \pm q \, \frac{s}{\sqrt n}, \qquad
        q = t_{n-1}^{-1}\bigl(\tfrac{1 + \text{level}}{2}\bigr) \text{ (``"t"``) or }
        \Phi^{-1}\bigl(\tfrac{1 + \text{level}}{2}\bigr) \text{ (``"normal"``)}

    with ``s`` the sample standard deviation (``ddof=1``).  ``"auto"`` (the
    default, seed 003) uses ``t`` for ``n < 30`` and the normal beyond.  With
    ``clip=(0, 1)`` the bounds are clipped to the score range and the record
    says so in ``clipped_to``.

    >>> print(mean_interval([0.6, 0.9, 0.7]))
    0.7333 [0.3539, 1.113] (95% t, n=3)
    >>> print(mean_interval([0.6, 0.9, 0.7], clip=(0, 1)))
    0.7333 [0.3539, 1] (95% t, n=3, clipped to [0, 1])
    """
    data = check_values(values, "values", 2)
    level = check_probability(level, "level")
    name = check_choice(method, "method", _MEAN_METHODS)
    limits = _clip_range(clip)
    n = data.size
    if name == "auto":
        name = "t" if n < T_BELOW else "normal"
    estimate = float(data.mean())
    se = float(data.std(ddof=1)) / math.sqrt(n)
    quantile = float(_scipy.stdtrit(n - 1, 0.5 + 0.5 * level)) if name == "t" else normal_quantile(level)
    low, high = _clipped(estimate, estimate - quantile * se, estimate + quantile * se, limits)
    return Interval(estimate, low, high, level, name, n, se, limits)


def clustered_interval(
    values: ArrayLike,
    clusters: Sequence[Hashable],
    level: float = 0.95,
    clip: tuple[float, float] | None = None,
    *,
    se_floor: float = 0.0,
) -> Interval:
    r"""Confidence interval for the mean of per-item values whose items come in clusters.

    .. math::

        \bar x \pm t_{G-1}^{-1}\bigl(\tfrac{1 + \text{level}}{2}\bigr)\,\mathrm{SE}_{\text{cluster}}

    with :math:`\mathrm{SE}_{\text{cluster}}` from
    :func:`trialscore.stats.clustered_standard_error` (with its :math:`G/(G-1)`
    factor) and the t quantile at :math:`G - 1` degrees of freedom for
    :math:`G` clusters, the usual reference distribution for a cluster-robust
    mean with few clusters (Cameron and Miller 2015).  ``clusters[i]`` is item
    ``i``'s cluster key; at least 2 distinct keys are needed.  ``clip`` as in
    :func:`mean_interval`.  ``se_floor`` is a least standard error (the trials'
    own noise, which the item values cannot show when they agree within
    clusters): the SE used is :math:`\max(\mathrm{SE}_{\text{cluster}}, \text{se\_floor})`
    and the method says when the floor decided.

    >>> print(clustered_interval([1, 1, 0, 0, 1, 0], ["a", "a", "b", "b", "c", "c"]))
    0.5 [-0.7421, 1.742] (95% cluster-robust t, 3 clusters, df 2, n=6)
    """
    level = check_probability(level, "level")
    limits = _clip_range(clip)
    result = clustered_standard_error(values, clusters)
    quantile = float(_scipy.stdtrit(result.clusters - 1, 0.5 + 0.5 * level))
    estimate = result.estimate
    se = max(result.se, float(se_floor))
    low, high = _clipped(estimate, estimate - quantile * se, estimate + quantile * se, limits)
    method = f"cluster-robust t, {result.clusters} clusters, df {result.clusters - 1}"
    method += ", SE at the trial-noise floor" if se > result.se else ""
    return Interval(estimate, low, high, level, method, result.items, se, limits)


#: Method label of :func:`bayes_interval`: what the interval is about, in plain words.
BAYES_METHOD = "bayes@n credible: posterior for these items under a uniform prior, shrunk toward the middle"


def bayes_interval(
    R: ArrayLike | Bank,
    w: ArrayLike | None = None,
    R0: ArrayLike | None = None,
    level: float = 0.95,
) -> Interval:
    r"""Bayes@N posterior mean with an equal-tailed credible interval inside the weight range.

    The Bayes@N score (Hariri et al., 2025) is the weighted score of the ``M``
    items actually in ``R``, :math:`S = \frac1M\sum_\alpha\sum_j \theta_{\alpha j} w_j`,
    with each item's category probabilities :math:`\theta_\alpha` drawn from its
    Dirichlet posterior (a uniform Dirichlet(1) prior plus the observed and
    ``R0`` prior counts).  It is a statement about *these* items, shrunk toward
    the middle of the weight range by the prior, not an estimate of the pass
    rate of a population of items.  :math:`S` always lies in
    :math:`[a, b] = [\min w, \max w]`; its posterior mean :math:`\mu` and sd
    :math:`\sigma` are exact (:func:`trialscore.core.estimators.bayes`).  The
    interval is the pair of :math:`(1 \mp \text{level})/2` quantiles of the Beta
    distribution on :math:`[a, b]` with that mean and sd:

    .. math::

        m = \frac{\mu - a}{b - a}, \quad v = \frac{\sigma^2}{(b - a)^2}, \quad
        \kappa = \frac{m(1-m)}{v} - 1, \quad
        [a + (b - a)\,B^{-1}_{m\kappa,\,(1-m)\kappa}(\tfrac{1-\text{level}}2),\;
         a + (b - a)\,B^{-1}_{m\kappa,\,(1-m)\kappa}(\tfrac{1+\text{level}}2)].

    For one binary item it is the item's exact Beta posterior; for more items
    a closed-form, deterministic match of the posterior of the mean whose
    quantiles agree with a Monte Carlo of the Dirichlet posterior to about
    0.005 (tested).  Unlike :math:`\mu \pm z\sigma` it never leaves
    :math:`[a, b]`.  ``se`` holds :math:`\sigma`; ``n`` the number of items.

    >>> interval = bayes_interval([[1, 1, 1]])  # one item, 3 of 3: the Beta(4, 1) posterior
    >>> round(interval.estimate, 4), round(interval.low, 4), round(interval.high, 4)
    (0.8, 0.3976, 0.9937)
    >>> print(bayes_interval([[0, 1, 1, 0, 1], [1, 1, 0, 1, 1]], level=0.9))  # doctest: +ELLIPSIS
    0.6429 [0.4371, 0.8268] (90% bayes@n credible: posterior for these items under a uniform prior, ...)
    """
    level = check_probability(level, "level")
    mu, sigma = bayes(R, w, R0)
    weights = _weights(w)
    items = R.items if isinstance(R, Bank) else len(R)  # type: ignore[arg-type]
    lowest, span = float(weights.min()), float(weights.max() - weights.min())
    if sigma == 0.0 or span == 0.0:  # every weight equal: the score is that weight
        return Interval(mu, mu, mu, level, BAYES_METHOD, int(items), sigma)
    m = min(max((mu - lowest) / span, 0.0), 1.0)
    kappa = m * (1.0 - m) / (sigma / span) ** 2 - 1.0
    tail = 0.5 * (1.0 - level)
    a, b = m * kappa, (1.0 - m) * kappa
    low = lowest + span * float(_scipy.betaincinv(a, b, tail))
    high = lowest + span * float(_scipy.betaincinv(a, b, 1.0 - tail))
    return Interval(mu, low, high, level, BAYES_METHOD, int(items), sigma)


#: Method name of :func:`bounded_mean_interval` and :func:`item_interval`.
EFFECTIVE_WILSON = "wilson-eff"


def _effective_wilson(
    estimate: float, spread: float, units: int, max_n: float, binary: bool, level: float
) -> tuple[float, float, float, float]:
    """Low, high, effective n and critical value of the Wilson interval at an effective sample size."""
    bernoulli = estimate * (1.0 - estimate)
    # spread <= bernoulli for values in [0, 1]; equality (0/1 values) means the units are the trials.
    n_eff = units * bernoulli / spread if spread > 0.0 else max_n
    n_eff = min(max(n_eff, float(units)), max_n)
    quantile = (
        normal_quantile(level) if binary or units < 2 else float(_scipy.stdtrit(units - 1, 0.5 + 0.5 * level))
    )
    low, high = _wilson_real(estimate, n_eff, quantile)
    # Near 0 and 1 Wilson's bound on the rare side is too close (Brown, Cai and DasGupta 2001, 4.1.1):
    # with at most x*(n) rare outcomes it is replaced by the one-sided Poisson bound chi2_{2x, alpha} / 2n
    # when that is further out.
    tail = 1.0 - level
    successes, failures = estimate * n_eff, (1.0 - estimate) * n_eff
    if 0.0 < successes <= _rare_count(n_eff):
        low = min(low, _poisson_lower(successes, tail) / n_eff)
    if 0.0 < failures <= _rare_count(n_eff):
        high = max(high, 1.0 - _poisson_lower(failures, tail) / n_eff)
    low = 0.0 if estimate == 0.0 else min(max(low, 0.0), estimate)
    high = 1.0 if estimate == 1.0 else max(min(high, 1.0), estimate)
    return low, high, n_eff, quantile


def _rare_count(n: float) -> float:
    """``x*`` of Brown, Cai and DasGupta (2001): 2 up to 50 units, 3 beyond."""
    return 2.0 if n <= 50.0 else 3.0


def _poisson_lower(count: float, tail: float) -> float:
    r"""The lower ``tail`` bound of a Poisson mean from ``count`` events (real ``count > 0``).

    The :math:`\lambda` with :math:`P(\mathrm{Gamma}(\text{count}) \le \lambda) = \text{tail}`, i.e.
    :math:`P(\mathrm{Poisson}(\lambda) \ge \text{count}) = \text{tail}` for whole counts, by bisection on
    the regularized lower incomplete gamma function (its power series), without SciPy.  The series'
    terms are positive, so its sum stops once it reaches ``tail`` (the rest only adds to it); the
    bisection stops once a step leaves its bounds as they were (every later step would too).
    """
    log_factorial = math.lgamma(count + 1.0)

    def below(value: float) -> bool:
        """Whether P(Gamma(count) <= value) is below ``tail``."""
        term = math.exp(count * math.log(value) - value - log_factorial)
        total, k = term, 1
        while term > 1e-17 * total:
            if total >= tail:
                return False
            term *= value / (count + k)
            total += term
            k += 1
        return total < tail

    low, high = 0.0, count + 10.0 * math.sqrt(count) + 10.0
    for _ in range(80):
        mid = 0.5 * (low + high)
        bounds = (mid, high) if below(mid) else (low, mid)
        if bounds == (low, high):
            break
        low, high = bounds
    return 0.5 * (low + high)


def _wilson_real(p: float, n: float, z: float) -> tuple[float, float]:
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(max(p * (1 - p), 0.0) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return centre - half, centre + half


def _histogram_interval(
    values: FloatArray, counts: FloatArray, level: float, max_n: float, method: str, mean: float | None = None
) -> Interval:
    units = int(counts.sum())
    estimate = min(max(float(counts @ values) / units if mean is None else mean, 0.0), 1.0)
    binary = bool(np.all((values == 0.0) | (values == 1.0)))
    # 0/1 values: their variance is exactly theta(1 - theta); otherwise the unbiased sample variance.
    if binary:
        spread = estimate * (1.0 - estimate)
    else:
        spread = float(counts @ (values - estimate) ** 2) / max(units - 1, 1)
    low, high, n_eff, quantile = _effective_wilson(estimate, spread, units, max_n, binary, level)
    se = (high - low) / (2.0 * quantile)
    return Interval(estimate, low, high, level, method, units, se, None, n_eff)


def bounded_mean_interval(
    values: ArrayLike,
    level: float = 0.95,
    *,
    counts: ArrayLike | None = None,
    max_n: float | None = None,
) -> Interval:
    r"""Confidence interval for the mean of values in [0, 1]: Wilson's score interval on an effective n.

    Values in [0, 1] with mean :math:`\theta` have variance at most
    :math:`\theta(1-\theta)`, reached by 0/1 values.  With :math:`M` units,
    mean :math:`\hat\theta` and sample variance :math:`s^2 = \frac{1}{M-1}\sum (v_i - \hat\theta)^2`
    (:math:`s^2 = \hat\theta(1-\hat\theta)` exactly when every value is 0 or 1),
    the design effect against 0/1 units is :math:`d = s^2 / \hat\theta(1-\hat\theta)`
    and the effective sample size

    .. math::

        n_{\text{eff}} = \min\bigl(\max(M / d,\; M),\; n_{\max}\bigr)
        \qquad (n_{\text{eff}} = n_{\max} \text{ when } s = 0),

    and the interval is Wilson's at :math:`(\hat\theta, n_{\text{eff}})` with the
    critical value :math:`q`:

    .. math::

        \frac{\hat\theta + q^2/2n_{\text{eff}} \pm q\sqrt{\hat\theta(1-\hat\theta)/n_{\text{eff}}
        + q^2/4n_{\text{eff}}^2}}{1 + q^2/n_{\text{eff}}},

    :math:`q = z_{1-\alpha/2}` when every value is 0 or 1 (then :math:`n_{\text{eff}} = M`
    and this is exactly Wilson's interval of the units), else :math:`q = t_{M-1,\,1-\alpha/2}`
    because :math:`d` is estimated (the degrees-of-freedom rule of Korn and Graubard 1998).

    ``max_n`` is the information ceiling: the effective n when the spread is
    zero (every value equal), which is where a mean of per-unit values cannot
    tell its own uncertainty.  By default it is :math:`M` when every value is 0
    or 1 (each unit is one 0/1 draw: Wilson's interval of the units) and
    :math:`M^2` otherwise (a zero spread among :math:`M` continuous scores is
    read as at most one 0/1 draw's worth of spread in :math:`M`);
    :func:`item_interval` sets it from the trials behind each item.
    The interval never has zero width, stays in [0, 1], and ``n_effective``
    records :math:`n_{\text{eff}}`.  ``counts`` gives how many units carry each value
    (a histogram).

    >>> print(bounded_mean_interval([1, 1, 0, 1, 1, 1, 0, 1, 1, 1]))
    0.8 [0.4902, 0.9645] (95% wilson-eff, n=10, effective n=10)
    >>> print(bounded_mean_interval([1, 1, 1, 1, 1]))
    1 [0.5655, 1] (95% wilson-eff, n=5, effective n=5)
    >>> print(bounded_mean_interval([0.9, 0.9, 0.9, 0.9, 0.9]))
    0.9 [0.6322, 0.9792] (95% wilson-eff, n=5, effective n=25)

    References
    ----------
    E. L. Korn and B. I. Graubard, "Confidence intervals for proportions with
    small expected number of positive counts estimated from survey data",
    Survey Methodology 24 (1998); P. J. Kott and P. D. Liu, "One-sided coverage
    intervals for a proportion estimated from a stratified simple random
    sample", International Statistical Review 77 (2009).
    """
    data = check_values(values, "values", 1)
    if data.min() < 0.0 or data.max() > 1.0:
        index = int(np.flatnonzero((data < 0.0) | (data > 1.0))[0])
        raise EvaluationError(f"values must lie in [0, 1]; got {data[index]:g} at index {index}")
    level = check_probability(level, "level")
    if counts is None:
        weights = np.ones(data.size)
    else:
        weights = np.asarray(counts, dtype=np.float64)
        if weights.shape != data.shape or not np.all(weights >= 0) or weights.sum() < 1:
            raise EvaluationError(
                f"counts must be one count >= 0 per value with a positive total; got {np.asarray(counts)!r}"
            )
    units = int(weights.sum())
    if max_n is not None:
        ceiling = float(max_n)
    elif np.all((data == 0.0) | (data == 1.0)):
        ceiling = float(units)
    else:
        ceiling = float(units) ** 2
    if not ceiling >= units:
        raise EvaluationError(f"max_n must be >= the number of units ({units}); got max_n={max_n!r}")
    return _histogram_interval(data, weights, level, ceiling, EFFECTIVE_WILSON)


def item_interval(
    R: ArrayLike | Bank,
    metric: MetricLike = "avg",
    k: int | None = None,
    tau: Tau | None = None,
    level: float = 0.95,
    states: tuple[ArrayLike, ArrayLike, ArrayLike] | None = None,
) -> Interval:
    r"""The default interval of a bank estimator: :func:`bounded_mean_interval` of the per-item values.

    The estimate is the mean over the :math:`M` items of each item's value
    :math:`v_i` (pass@k, pass^k, ... of its :math:`n_i` trials), exactly the bank
    estimator.  Its uncertainty has two sources, the items and the trials within
    an item; the per-item values alone cannot show the second when they are
    all equal (every item solved every time), so the ceiling of the effective
    sample size comes from the trials:

    .. math::

        n_{\max} = \frac{M^2}{k \sum_i 1/n_i}
        \quad (= M n / k \text{ with } n \text{ trials per item}),

    the information of :math:`n/k` independent draws of :math:`k` trials per item
    (with ``k = 1`` for ``avg``).  So the interval runs from Wilson's interval of
    :math:`M` independent 0/1 items (when the items differ as much as 0/1 values
    can) to Wilson's interval of the pooled trials (when they do not differ at
    all), and 0/1 per-item values (pass@N and pass^N at :math:`k = n`, or one
    trial per item) get exactly Wilson's interval of the items.

    For a metric with a ``k`` whose values are not 0/1 the ceiling is at least the
    information the trials carry about the item values,
    :math:`M\hat\theta(1-\hat\theta)/\bar v`, with :math:`\bar v` the mean trial-noise
    variance of the item values (the variance of each item's estimate under a binomial
    at its Jeffreys plug-in rate, as in :func:`~trialscore.stats.compare_paired`; for
    ``avg`` of identical items it would be :math:`Mn`, the trials rule itself): for
    mG-Pass@N, whose values spread far less than 0/1 values, it lifts the ceiling above
    :math:`M` (which made its interval Wilson's of :math:`M` 0/1 items, 30-40% too wide).
    Coverage in the two-level model (five item populations) is in docs/stats.md.

    ``states`` may pass ``bank.states()`` when it is already computed.

    >>> R = [[1, 1, 1, 1, 1]] * 20
    >>> print(item_interval(R, "pass@k", k=5))
    1 [0.8389, 1] (95% wilson-eff, n=20, effective n=20)
    >>> print(item_interval(R))
    1 [0.9630, 1] (95% wilson-eff, n=20, effective n=100)
    """
    resolved = resolve_metric(metric, per_item=True)
    k = k if resolved.needs_k else None  # avg is one draw, whatever k is given
    bank = as_bank(R)
    level = check_probability(level, "level")
    k_used = 1 if k is None else bank.check_k(k)
    n, c, freq = bank.states() if states is None else (np.asarray(part) for part in states)
    values = state_scores(n, c, resolved, k, tau)
    ceiling = bank.items**2 / (k_used * float(freq @ (1.0 / n)))
    mean = states_mean(n, c, freq, values, resolved, k, tau)
    theta = min(max(mean, 0.0), 1.0)
    if k is not None and 0.0 < theta < 1.0 and not np.all((values == 0.0) | (values == 1.0)):
        noise = float(freq @ state_noise_variances(n, c, resolved, k, tau)) / bank.items
        if noise > 0.0:
            ceiling = max(ceiling, bank.items * theta * (1.0 - theta) / noise)
    return _histogram_interval(
        values, freq.astype(np.float64), level, max(ceiling, bank.items), EFFECTIVE_WILSON, mean
    )
