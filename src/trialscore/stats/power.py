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

**A change of delta in either direction.**  A pass rate's trials are noisier
the nearer it is to 1/2, so the plan takes the direction in which the
candidate's within-item variance is larger; with items' rates :math:`p_i`
moved by :math:`\pm\delta` it is

.. math::

    \sigma_B^2 = \overline{p_i(1-p_i)} \pm \delta\,(1 - 2\bar p) - \delta^2 .

Where the components come from (each plan states them, and its ``test``):

* ``pass_rate=p`` alone: homogeneous items, every item at ``p``;
  :math:`\sigma_A^2 = p(1-p)`, :math:`\sigma_B^2 = q(1-q)` with
  :math:`q = p \pm \delta` the noisier of the two within [0, 1], between-item
  variance of the rates 0, and :math:`\omega^2` as given (default 0: every
  item moves by delta);
* one pilot run (0/1 outcomes, at least 2 trials per item): :math:`\sigma_A^2`
  the mean unbiased within-item variance, :math:`\tau^2` (between-item variance
  of the rates) the variance of the item means minus its trial noise,
  :math:`\sigma_B^2` from the shift formula above in the noisier direction,
  the candidate's :math:`\tau^2` equal to the pilot's, :math:`\omega^2` as given
  (default 0); a graded pilot takes :math:`\sigma_B^2 = \sigma_A^2`;
* a paired pilot (two runs on the same items): every component estimated, as
  in :func:`trialscore.stats.variance.decompose_variance`.

Reference
---------
E. Miller, "Adding Error Bars to Evals", arXiv:2411.00640 (2024), section on
power analysis; J. Cohen, *Statistical Power Analysis for the Behavioral
Sciences*, 2nd ed. (1988), ch. 2 (power of the t-test).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from trialscore._record import Record
from trialscore._validate import check_integer, check_probability, check_real
from trialscore.core.bank import Bank, checked_matrix, is_ragged
from trialscore.errors import EvaluationError
from trialscore.stats import _scipy
from trialscore.stats.variance import item_moments

__all__ = [
    "PAIRED_TEST",
    "SampleSizePlan",
    "bounded_effect",
    "design_power",
    "detectable_effect",
    "items_needed",
    "minimum_detectable_effect",
    "plan_sample_size",
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


def _check_df(df: object) -> float:
    number = check_real(df, "df")
    if number <= 0:
        raise EvaluationError(f"df must be degrees of freedom > 0; got df={number:g}")
    return number


def _t_power(noncentrality: float, df: float, alpha: float) -> float:
    """Power of the two-sided level-``alpha`` t-test at noncentrality ``|delta|/SE``."""
    if math.isinf(noncentrality):
        return 1.0
    critical = float(_scipy.stdtrit(df, 1 - alpha / 2))
    upper = 1.0 - float(_scipy.nctdtr(df, noncentrality, critical))
    lower = float(_scipy.nctdtr(df, noncentrality, -critical))
    # nctdtr returns NaN in some far tails: the upper one then comes from scipy.stats (slower, no NaN),
    # the lower one is below 1e-12 there (noncentrality above ~7) and counts as 0.
    if math.isnan(upper):
        upper = float(_scipy.nct.sf(critical, df, noncentrality))
    return min(upper + (0.0 if math.isnan(lower) else lower), 1.0)


def _noncentrality_needed(df: float, alpha: float, power: float) -> float:
    """The noncentrality at which the two-sided t-test reaches ``power`` (power rises with it)."""
    if _t_power(0.0, df, alpha) >= power:
        return 0.0
    high = float(_scipy.stdtrit(df, 1 - alpha / 2)) + float(_scipy.stdtrit(df, power)) + 1.0
    while _t_power(high, df, alpha) < power:
        high *= 2
    return float(_scipy.brentq(lambda value: _t_power(value, df, alpha) - power, 0.0, high, xtol=1e-12))


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
    between = _check_variance(between, "between")
    within = _check_variance(within, "within")
    target = check_probability(power, "power")
    alpha = check_probability(alpha, "alpha")
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
    between = _check_variance(between, "between")
    within = _check_variance(within, "within")
    target = check_probability(power, "power")
    alpha = check_probability(alpha, "alpha")
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


@dataclass(frozen=True)
class SampleSizePlan(Record):
    """A design for detecting ``delta``: items, trials, the power it reaches and its MDE.

    ``test`` names the test the power is computed for; ``within_baseline`` and
    ``within_candidate`` are the two runs' per-trial within-item variances
    (``within`` is their sum), ``between_baseline`` and ``between_candidate``
    the variances of the items' true rates in each run, ``between`` the
    variance over items of the true differences, and ``direction`` which
    change (``"decrease"``, ``"increase"`` or ``"as in the paired pilot"``)
    the plan assumed.  ``trials`` is None (and ``feasible`` False) when no
    number of trials reaches the power with the given items;
    ``achieved_power`` and ``mde`` are then those of unlimited trials, and
    ``note`` says how many items would do.
    """

    delta: float
    alpha: float
    target_power: float
    between: float
    within: float
    items: int
    trials: int | None
    achieved_power: float
    mde: float
    feasible: bool
    source: str
    note: str
    test: str
    direction: str
    within_baseline: float
    within_candidate: float
    between_baseline: float
    between_candidate: float

    def variances(self) -> str:
        """The variance components the plan assumed, as one line."""
        return (
            f"within-item per trial: baseline {self.within_baseline:.4g}, "
            f"candidate {self.within_candidate:.4g}; "
            f"between items (true rates): baseline {self.between_baseline:.4g}, "
            f"candidate {self.between_candidate:.4g}; between items (true differences) {self.between:.4g}"
        )

    def __str__(self) -> str:
        return self.note


@dataclass(frozen=True)
class _Components:
    within_baseline: float
    within_candidate: float
    between_baseline: float
    between_candidate: float
    between: float
    trials: int
    direction: str
    source: str


def _noisier_shift(mean: float, within: float, delta: float) -> tuple[float, str]:
    """Candidate's per-trial variance when every rate moves by +-delta: the noisier feasible direction."""
    options = []
    for sign, name in ((-1.0, "decrease"), (1.0, "increase")):
        if 0.0 <= mean + sign * delta <= 1.0:
            options.append((within + sign * delta * (1 - 2 * mean) - delta**2, name))
    if not options:
        raise EvaluationError(
            f"pass_rate +- delta must lie in [0, 1] for at least one sign; "
            f"got pass_rate={mean:g}, delta={delta:g}"
        )
    variance, name = max(options, key=lambda option: option[0])
    return max(variance, 0.0), name


def _is_binary(R: ArrayLike | Bank) -> bool:
    if isinstance(R, Bank) or is_ragged(R):
        return True
    matrix = checked_matrix(R, "pilot")
    return bool(np.isin(matrix, (0, 1)).all())


def _rate_spread(means: np.ndarray, within: np.ndarray, trials: np.ndarray) -> float:
    """Between-item variance of the true rates: item means' variance minus their trial noise, floored at 0."""
    return max(float(means.var(ddof=1)) - float(np.mean(within / trials)), 0.0)


def _from_pass_rate(p: float, delta: float, between: float | None) -> _Components:
    if not 0 <= p <= 1:
        raise EvaluationError(f"pass_rate must lie in [0, 1]; got pass_rate={p:g}")
    within_b, direction = _noisier_shift(p, p * (1 - p), delta)
    omega = 0.0 if between is None else _check_variance(between, "between")
    q = p - delta if direction == "decrease" else p + delta
    source = (
        f"pass rate {p:g} -> {q:g} (the noisier direction of a change of {delta:g}); homogeneous items: "
        f"every item at the pass rate, between-item variance of the rates 0; between-item variance of "
        f"the differences {'assumed ' if between is None else ''}{omega:g}"
        + (" (every item moves by delta)" if omega == 0 else "")
    )
    return _Components(p * (1 - p), within_b, 0.0, 0.0, omega, 1, direction, source)


def _from_pilot(
    pilot: ArrayLike | Bank, candidate: ArrayLike | Bank | None, delta: float, between: float | None
) -> _Components:
    means, within, trials = item_moments(pilot)
    tau = _rate_spread(means, within, trials)
    sigma = float(within.mean())
    default_trials = round(float(trials.mean()))
    if candidate is None:
        omega = 0.0 if between is None else _check_variance(between, "between")
        if _is_binary(pilot):
            sigma_b, direction = _noisier_shift(float(means.mean()), sigma, delta)
            how = f"its rates moved by {delta:g} in the noisier direction ({direction})"
        else:
            sigma_b, direction = sigma, "either (graded scores: equal trial variance assumed)"
            how = "the same trial variance as the pilot (graded scores)"
        source = (
            f"one pilot run of {means.size} items x {default_trials} trials: its within-item and "
            f"between-item variances estimated; the candidate has the same between-item variance and "
            f"{how}; between-item variance of the differences "
            f"{'assumed ' if between is None else ''}{omega:g}"
        )
        return _Components(sigma, sigma_b, tau, tau, omega, default_trials, direction, source)
    if between is not None:
        raise EvaluationError("between must be None with a paired pilot; it is estimated from the two runs")
    other_means, other_within, other_trials = item_moments(candidate)
    if other_means.size != means.size:
        raise EvaluationError(
            f"pilot_candidate must hold the same items as pilot, in the same order; "
            f"got {other_means.size} items for {means.size}"
        )
    differences = other_means - means
    noise = float(np.mean(within / trials + other_within / other_trials))
    omega = max(float(differences.var(ddof=1)) - noise, 0.0)
    source = f"paired pilot of {means.size} items: every variance component estimated from the two runs"
    return _Components(
        sigma,
        float(other_within.mean()),
        tau,
        _rate_spread(other_means, other_within, other_trials),
        omega,
        default_trials,
        "as in the paired pilot",
        source,
    )


def plan_sample_size(
    delta: float,
    *,
    pass_rate: float | None = None,
    pilot: ArrayLike | Bank | None = None,
    pilot_candidate: ArrayLike | Bank | None = None,
    between: float | None = None,
    items: int | None = None,
    trials: int | None = None,
    alpha: float = 0.05,
    power: float = 0.8,
) -> SampleSizePlan:
    """Items and trials the paired t-test needs to detect a change of ``delta`` in either direction.

    Give exactly one of ``pass_rate`` (the baseline's expected pass rate) or
    ``pilot`` (a pilot run; add ``pilot_candidate`` for a paired pilot of two
    runs); the sign of ``delta`` is ignored (the noisier direction decides,
    see the module docstring).  Then:

    * neither ``items`` nor ``trials``: the items needed with ``trials`` =
      the pilot's trials per item (1 for a pass rate);
    * ``trials`` only: the items needed;
    * ``items`` only: the trials needed (None if no number suffices);
    * both: the power and MDE of that design.

    >>> plan = plan_sample_size(0.1, pass_rate=0.7, trials=5)
    >>> plan.items, plan.trials, plan.direction, round(plan.achieved_power, 3)
    (73, 5, 'decrease', 0.802)
    >>> plan_sample_size(0.1, pass_rate=0.6, items=100).trials
    4
    """
    size = _check_delta(delta)
    alpha = check_probability(alpha, "alpha")
    target = check_probability(power, "power")
    if (pass_rate is None) == (pilot is None):
        raise EvaluationError("give exactly one of pass_rate or pilot; got both or neither")
    if pass_rate is not None:
        if pilot_candidate is not None:
            raise EvaluationError("pilot_candidate needs pilot; got pilot_candidate with pass_rate")
        parts = _from_pass_rate(check_real(pass_rate, "pass_rate"), size, between)
    else:
        parts = _from_pilot(pilot, pilot_candidate, size, between)  # type: ignore[arg-type]
    omega = parts.between
    sigma2 = parts.within_baseline + parts.within_candidate
    if items is None:
        trials = parts.trials if trials is None else check_integer(trials, "trials", 1)
        items = items_needed(size, trials=trials, between=omega, within=sigma2, alpha=alpha, power=target)
    elif trials is None:
        items = check_integer(items, "items", 2)
        trials = trials_needed(size, items=items, between=omega, within=sigma2, alpha=alpha, power=target)
    else:
        items = check_integer(items, "items", 2)
        trials = check_integer(trials, "trials", 1)
    shared: dict[str, Any] = {
        "delta": size,
        "alpha": alpha,
        "target_power": target,
        "between": omega,
        "within": sigma2,
        "items": items,
        "source": parts.source,
        "test": PAIRED_TEST,
        "direction": parts.direction,
        "within_baseline": parts.within_baseline,
        "within_candidate": parts.within_candidate,
        "between_baseline": parts.between_baseline,
        "between_candidate": parts.between_candidate,
    }
    if trials is None:
        floor = detectable_effect(math.sqrt(omega / items), items - 1, alpha, target)
        enough = items_needed(
            size, trials=parts.trials, between=omega, within=sigma2, alpha=alpha, power=target
        )
        note = (
            f"No number of trials detects delta={size:g} with {items} items: between-item variance "
            f"alone sets the MDE at {floor:.4g}. Add items: {enough} items at {parts.trials} "
            f"trials each reach the power."
        )
        achieved = _power_at(size, math.sqrt(omega / items), items, alpha)
        return SampleSizePlan(
            **shared, trials=None, achieved_power=achieved, mde=floor, feasible=False, note=note
        )
    se = _se(items, trials, omega, sigma2)
    achieved = _power_at(size, se, items, alpha)
    mde = detectable_effect(se, items - 1, alpha, target)
    note = (
        f"{items} items x {trials} trials: power {achieved:.1%} to detect a {parts.direction} of "
        f"{size:g} at alpha={alpha:g} with the paired t-test (MDE {mde:.4g} at {target:.0%} power)."
    )
    return SampleSizePlan(
        **shared, trials=trials, achieved_power=achieved, mde=mde, feasible=achieved >= target, note=note
    )
