r"""Power and sample size for the paired t-test that :func:`trialscore.stats.compare_paired` uses.

A comparison of two runs on the same ``M`` items estimates the mean of the
per-item differences :math:`d_i = \bar s^B_i - \bar s^A_i`, whose variance
(Miller 2024) is

.. math::

    \mathrm{Var}(d_i) = \omega^2 + (\sigma_A^2 + \sigma_B^2)/K, \qquad
    \mathrm{SE} = \sqrt{\mathrm{Var}(d_i)/M},

with :math:`\omega^2` (``between``) the variance over items of the true
per-item differences, :math:`\sigma_A^2, \sigma_B^2` the mean per-trial
within-item variances of the two runs (``within`` is their sum) and ``K``
trials per item and run.  The verdict of ``compare_paired`` is the two-sided
paired t-test with :math:`M - 1` degrees of freedom, so a design's power is
that of the noncentral t distribution with noncentrality
:math:`\lambda = |\delta|/\mathrm{SE}`:

.. math::

    1 - \beta = 1 - F_{t'}(t_c;\, M-1, \lambda) + F_{t'}(-t_c;\, M-1, \lambda),
    \qquad t_c = t_{M-1}^{-1}(1 - \alpha/2)

(statsmodels' ``TTestPower``).  The minimum detectable effect is
:math:`\lambda^\ast\,\mathrm{SE}` with :math:`\lambda^\ast` the noncentrality
reaching the power, close to :math:`(t_{1-\alpha/2} + t_{1-\beta})\,\mathrm{SE}`.
Sample sizes are the smallest ``M`` (or ``K``) whose power reaches the target.
More trials only shrink :math:`\sigma^2/K`: when :math:`\omega^2/M` alone keeps
the power below the target no number of trials is enough and only more items
help.  (The trial-noise floor of ``compare_paired``'s SE is not modelled: it
binds only when the differences spread less than trial noise alone explains.)

The plans built on these are in :mod:`trialscore.stats._plan`.

Reference
---------
E. Miller, "Adding Error Bars to Evals", arXiv:2411.00640 (2024), section on
power analysis; J. Cohen, *Statistical Power Analysis for the Behavioral
Sciences*, 2nd ed. (1988), ch. 2 (power of the t-test).
"""

from __future__ import annotations

import functools
import math

from trialscore._validate import check_integer, check_probability, check_real
from trialscore.errors import EvaluationError
from trialscore.stats import _scipy

__all__ = [
    "PAIRED_TEST",
    "bounded_effect",
    "design_power",
    "detectable_effect",
    "items_needed",
    "minimum_detectable_effect",
    "trials_needed",
]

#: The test every power figure here is computed for (the verdict of ``compare_paired``).
PAIRED_TEST = "two-sided paired t-test, df = items - 1 (the verdict of compare_paired)"


def _check_variance(value: object, name: str) -> float:
    number = check_real(value, name)
    if number < 0:
        raise EvaluationError(f"{name} must be a variance >= 0; got {name}={number}")
    return number


def _check_delta(delta: object) -> float:
    number = check_real(delta, "delta")
    if number == 0:
        raise EvaluationError("delta must be a non-zero difference to detect; got delta=0")
    return abs(number)


def _check_design(
    between: object, within: object, power: object, alpha: object
) -> tuple[float, float, float, float]:
    """The variances, the target power and alpha of a design, checked in that order."""
    return (
        _check_variance(between, "between"),
        _check_variance(within, "within"),
        check_probability(power, "power"),
        check_probability(alpha, "alpha"),
    )


def _check_df(df: object) -> float:
    number = check_real(df, "df")
    if number <= 0:
        raise EvaluationError(f"df must be degrees of freedom > 0; got df={number:g}")
    return number


def _t_power(noncentrality: float, df: float, alpha: float, critical: float | None = None) -> float:
    """Power of the two-sided level-``alpha`` t-test at noncentrality ``|delta|/SE`` (``critical``: the
    test's critical value, when the caller has it)."""
    if math.isinf(noncentrality):
        return 1.0
    if critical is None:
        critical = float(_scipy.stdtrit(df, 1 - alpha / 2))
    upper = 1.0 - float(_scipy.nctdtr(df, noncentrality, critical))
    lower = float(_scipy.nctdtr(df, noncentrality, -critical))
    # nctdtr returns NaN in some far tails: the upper one then comes from scipy.stats (slower, no NaN),
    # the lower one is below 1e-12 there (noncentrality above ~7) and counts as 0.
    if math.isnan(upper):
        upper = float(_scipy.nct.sf(critical, df, noncentrality))
    return min(upper + (0.0 if math.isnan(lower) else lower), 1.0)


@functools.lru_cache(maxsize=4096)
def _noncentrality_needed(df: float, alpha: float, power: float) -> float:
    """The noncentrality at which the two-sided t-test reaches ``power`` (power rises with it); cached,
    since a root search costs a few hundred noncentral t evaluations and callers repeat their designs."""
    critical = float(_scipy.stdtrit(df, 1 - alpha / 2))  # the same at every noncentrality tried
    if _t_power(0.0, df, alpha, critical) >= power:
        return 0.0
    high = critical + float(_scipy.stdtrit(df, power)) + 1.0
    while _t_power(high, df, alpha, critical) < power:
        high *= 2
    return float(
        _scipy.brentq(lambda value: _t_power(value, df, alpha, critical) - power, 0.0, high, xtol=1e-12)
    )


def detectable_effect(se: float, df: float, alpha: float = 0.05, power: float = 0.8) -> float:
    r"""Smallest true difference a two-sided level-``alpha`` t-test with ``df`` detects with ``power``.

    :math:`\lambda^\ast\,\mathrm{SE}` with :math:`\lambda^\ast` the noncentrality of the
    noncentral t (``df`` degrees of freedom) whose power is ``power``; about
    ``2.8 SE`` for large ``df``, more for few items.

    >>> round(detectable_effect(0.01, 1000), 4), round(detectable_effect(0.01, 9), 4)
    (0.028, 0.0315)
    """
    se = _check_variance(se, "se")
    df = _check_df(df)
    alpha = check_probability(alpha, "alpha")
    power = check_probability(power, "power")
    return _noncentrality_needed(df, alpha, power) * se


def bounded_effect(
    se: float, df: float, alpha: float = 0.05, power: float = 0.8, limit: float = 1.0
) -> float | None:
    """:func:`detectable_effect`, or None when it exceeds ``limit``: no possible change reaches the power.

    A difference of pass rates lies in [-1, 1], so an MDE above 1 means the design
    cannot detect any change (two items, t with one degree of freedom).

    >>> round(bounded_effect(0.1, 50), 3), bounded_effect(0.5, 1) is None
    (0.286, True)
    """
    effect = detectable_effect(se, df, alpha, power)
    return None if effect > limit else effect


def _se(items: int, trials: int, between: float, within: float) -> float:
    return math.sqrt((between + within / trials) / items)


def _power_at(delta: float, se: float, items: int, alpha: float) -> float:
    return 1.0 if se == 0 else _t_power(delta / se, items - 1, alpha)


def design_power(
    delta: float, *, items: int, trials: int, between: float, within: float, alpha: float = 0.05
) -> float:
    """Power of the paired t-test (df = ``items`` - 1) to detect a true difference ``delta``.

    >>> round(design_power(0.1, items=100, trials=1, between=0.0, within=0.5), 3)
    0.288
    """
    delta = _check_delta(delta)
    items = check_integer(items, "items", 2)
    trials = check_integer(trials, "trials", 1)
    se = _se(items, trials, _check_variance(between, "between"), _check_variance(within, "within"))
    return _power_at(delta, se, items, check_probability(alpha, "alpha"))


def minimum_detectable_effect(
    *, items: int, trials: int, between: float, within: float, alpha: float = 0.05, power: float = 0.8
) -> float:
    """Minimum detectable effect of a design for the paired t-test (df = ``items`` - 1).

    >>> round(minimum_detectable_effect(items=200, trials=5, between=0.02, within=0.4), 4)
    0.0629
    """
    items = check_integer(items, "items", 2)
    trials = check_integer(trials, "trials", 1)
    se = _se(items, trials, _check_variance(between, "between"), _check_variance(within, "within"))
    return detectable_effect(se, items - 1, alpha, power)


def items_needed(
    delta: float, *, trials: int, between: float, within: float, alpha: float = 0.05, power: float = 0.8
) -> int:
    r"""Fewest items (at least 2) whose paired t-test reaches ``power`` for ``delta``.

    Starts from the normal approximation
    :math:`\lceil (z_{1-\alpha/2} + z_{1-\beta})^2 (\omega^2 + \sigma^2/K) / \delta^2 \rceil`,
    then steps up until the noncentral-t power reaches the target and down
    while one item fewer still does.

    >>> items_needed(0.1, trials=1, between=0.0, within=0.21 + 0.25)
    363
    """
    delta = _check_delta(delta)
    trials = check_integer(trials, "trials", 1)
    between, within, target, alpha = _check_design(between, within, power, alpha)
    variance = between + within / trials
    z_sum = float(_scipy.ndtri(1 - alpha / 2) + _scipy.ndtri(target))
    items = max(2, math.ceil(z_sum**2 * variance / delta**2))
    while _power_at(delta, _se(items, trials, between, within), items, alpha) < target:
        items += 1
    while items > 2 and _power_at(delta, _se(items - 1, trials, between, within), items - 1, alpha) >= target:
        items -= 1
    return items


def trials_needed(
    delta: float, *, items: int, between: float, within: float, alpha: float = 0.05, power: float = 0.8
) -> int | None:
    r"""Fewest trials per item reaching ``power`` for ``delta`` with ``items`` items, or None if none can.

    With :math:`\lambda^\ast` the noncentrality the t-test with ``items - 1``
    df needs, :math:`K = \lceil \sigma^2 / (M\delta^2/\lambda^{\ast 2} - \omega^2) \rceil`;
    None when :math:`\omega^2 \ge M\delta^2/\lambda^{\ast 2}` (between-item
    variance alone keeps the power below the target).

    >>> trials_needed(0.05, items=400, between=0.01, within=0.4)
    4
    >>> trials_needed(0.05, items=100, between=0.1, within=0.4) is None
    True
    """
    delta = _check_delta(delta)
    items = check_integer(items, "items", 2)
    between, within, target, alpha = _check_design(between, within, power, alpha)
    allowed = items * delta**2 / _noncentrality_needed(items - 1, alpha, target) ** 2
    if within == 0:
        return 1 if _power_at(delta, _se(items, 1, between, within), items, alpha) >= target else None
    if allowed <= between:
        return None
    trials = max(1, math.ceil(within / (allowed - between)))
    while _power_at(delta, _se(items, trials, between, within), items, alpha) < target:
        trials += 1
    while trials > 1 and _power_at(delta, _se(items, trials - 1, between, within), items, alpha) >= target:
        trials -= 1
    return trials
