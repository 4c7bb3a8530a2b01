r"""Plans: the items and trials a paired comparison needs, from a pass rate or a pilot run.

Power, MDE and sample sizes of the paired t-test are in :mod:`trialscore.stats._power`; a plan
supplies its variance components, :math:`\mathrm{Var}(d_i) = \omega^2 + (\sigma_A^2 + \sigma_B^2)/K`.

**The item model.**  Items differ: a suite's pass rates spread between items that almost always
pass and items that almost never do, and only the rest is trial noise.  With mean pass rate
:math:`\bar p` and ``spread`` :math:`\rho = \mathrm{Var}(p_i)/(\bar p(1-\bar p))` (the share of the
pass-rate variance between items: the intraclass correlation of the trials), the item rates are
taken as :math:`\mathrm{Beta}(\bar p\,\kappa, (1-\bar p)\,\kappa)` with :math:`\kappa = 1/\rho - 1`.
Then :math:`\sigma_A^2 = \mathbb{E}[p(1-p)] = \bar p(1-\bar p)(1-\rho)`: treating items as identical
(:math:`\rho = 0`, the planner before) overstates the trial noise and plans up to twice the items.

**A change of delta.**  ``delta`` is the change of the mean pass rate.  Every item moves by one
shift :math:`h`, clipped to [0, 1] (an item at 1 cannot rise), with :math:`h` such that the mean of
:math:`q_i = \min(\max(p_i + h, 0), 1)` moves by exactly ``delta``; then
:math:`\sigma_B^2 = \mathbb{E}[q(1-q)]`, the candidate's between-item variance
:math:`\mathrm{Var}(q)` and :math:`\omega^2 = \mathrm{Var}(q - p)`, all by quadrature over 4,000
quantiles of the Beta.  ``direction`` plans a decrease or an increase; by default the plan takes
the one whose per-item difference varies more (trials are noisier near 1/2).

Where :math:`\bar p` and :math:`\rho` come from (each plan states them in ``source``):

* ``pass_rate=p``: :math:`\bar p = p` and ``spread`` as given, by default :data:`DEFAULT_SPREAD`
  (0.5, from intraclass correlations of 0.30-0.77 measured on GAIA and 0.50-0.71 on FRAMES,
  Mustahsan et al. 2025);
* one pilot run (0/1 outcomes, at least 2 trials per item): :math:`\bar p` its mean, and
  :math:`\rho` from the variance of its item means less their trial noise; a graded pilot (or one
  whose items all sit at 0 or 1) keeps its own within- and between-item variances for both runs;
* a paired pilot (two runs on the same items): every component estimated, as in
  :func:`trialscore.stats._variance.decompose_variance`.

``between`` adds a between-item variance of the changes beyond the clipping's (default 0).

References
----------
E. Miller, "Adding Error Bars to Evals", arXiv:2411.00640 (2024), section on power analysis;
Z. Mustahsan, A. Lim, M. Anand, S. Jain and B. McCann, "Stochasticity in Agentic Evaluations:
Quantifying Inconsistency with Intraclass Correlation", arXiv:2512.06710 (2025).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from trialscore._record import Record
from trialscore._validate import check_choice, check_integer, check_probability, check_real
from trialscore._words import plural
from trialscore.core.bank import Bank, checked_matrix, is_ragged
from trialscore.errors import EvaluationError, InsufficientDataError
from trialscore.stats import _scipy
from trialscore.stats._power import (
    PAIRED_TEST,
    _check_delta,
    _check_variance,
    _power_at,
    _se,
    detectable_effect,
    items_needed,
    trials_needed,
)
from trialscore.stats._variance import item_moments

__all__ = ["DEFAULT_SPREAD", "SampleSizePlan", "plan_sample_size"]


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
    spread: float | None = None

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
    spread: float | None = None


#: Default share of the pass-rate variance that lies between items (the intraclass correlation of
#: trials): 0.5, the low end of what is measured on agent and retrieval evals (ICC 0.30-0.77 on GAIA,
#: 0.50-0.71 on FRAMES: Mustahsan et al. 2025) and the audits' U-shaped items (Beta(0.6, 0.41)).
#: A lower spread plans more items (more of the variance is trial noise).
DEFAULT_SPREAD = 0.5

#: Quantiles of the item-rate distribution the planner integrates over.
_GRID = 4000

#: The largest spread a pilot's estimate is taken at (1 would be items that always or never pass).
MAX_SPREAD = 0.98


@dataclass(frozen=True)
class _Shifted:
    """The components of a change of the mean pass rate by ``sign * delta`` under the Beta item model."""

    within_baseline: float
    within_candidate: float
    between_baseline: float
    between_candidate: float
    between: float
    shift: float
    direction: str


@lru_cache(maxsize=64)
def _item_rates(mean: float, spread: float) -> np.ndarray:
    """Item pass rates with this mean and between-item share: Beta quantiles (a + b = 1/spread - 1).

    Remembered, read-only: plans of several designs (directions, trials) from one pass rate or
    pilot share them, and the quantiles are most of a plan's work.
    """
    if spread <= 0.0 or mean in (0.0, 1.0):
        rates = np.full(1, mean)
    else:
        size = 1.0 / spread - 1.0
        u = (np.arange(_GRID) + 0.5) / _GRID
        rates = _scipy.betaincinv(mean * size, (1.0 - mean) * size, u)
    rates.setflags(write=False)
    return rates


def _shifted(rates: np.ndarray, delta: float, sign: float) -> _Shifted | None:
    """Every item moved by one shift ``h`` (clipped to [0, 1]) whose mean change is ``sign * delta``."""
    reach = float(np.mean((1.0 if sign > 0 else 0.0) - rates))
    if abs(reach) <= delta:
        return None
    change = lambda h: float(np.mean(np.clip(rates + h, 0.0, 1.0) - rates)) - sign * delta  # noqa: E731
    shift = float(_scipy.brentq(change, 0.0, sign * 1.0, xtol=1e-12))
    moved = np.clip(rates + shift, 0.0, 1.0)
    return _Shifted(
        float(np.mean(rates * (1 - rates))),
        float(np.mean(moved * (1 - moved))),
        float(rates.var()),
        float(moved.var()),
        float((moved - rates).var()),
        shift,
        "decrease" if sign < 0 else "increase",
    )


def _check_spread(spread: object) -> float:
    value = check_real(spread, "spread")
    if not 0.0 <= value < 1.0:
        raise EvaluationError(f"spread must satisfy 0 <= spread < 1; got spread={value:g}")
    return value


_DIRECTIONS = {"decrease": -1.0, "increase": 1.0}


def _noisier(
    mean: float, spread: float, delta: float, trials: int, extra: float, direction: str | None
) -> _Shifted:
    """The given direction, else the feasible one whose per-item difference varies most at ``trials``."""
    rates = _item_rates(mean, spread)
    signs = list(_DIRECTIONS.values()) if direction is None else [_DIRECTIONS[direction]]
    options = [shifted for sign in signs if (shifted := _shifted(rates, delta, sign)) is not None]
    if not options:
        which = "in at least one direction" if direction is None else f"as a {direction}"
        raise EvaluationError(
            f"the mean pass rate must be able to move by delta inside [0, 1] {which}; "
            f"got a mean of {mean:g} and delta={delta:g}"
        )
    spreads = [(o.between + extra) * trials + o.within_baseline + o.within_candidate for o in options]
    # the increase only when strictly noisier (a tie, as at a mean of 1/2, plans the decrease)
    return options[-1] if spreads[-1] > spreads[0] * (1 + 1e-9) else options[0]


def _from_rates(
    mean: float,
    spread: float,
    delta: float,
    between: float | None,
    trials: int,
    origin: str,
    direction: str | None,
) -> _Components:
    omega = 0.0 if between is None else _check_variance(between, "between")
    parts = _noisier(mean, spread, delta, trials, omega, direction)
    q = mean + delta if parts.direction == "increase" else mean - delta
    change = (
        "the candidate's items keep the baseline's pass rates"
        if delta == 0
        else f"the mean moves {mean:.4g} -> {q:.4g} ("
        + (f"the noisier direction of a change of {delta:g}" if direction is None else "as asked")
        + f"), every item by {parts.shift:+.4g} clipped to [0, 1]"
    )
    source = (
        f"{origin}; items' pass rates Beta-distributed with mean {mean:.4g} and {spread:.3g} of their "
        f"variance between items (spread); {change}; between-item variance of "
        f"the differences {parts.between:.4g}"
        + (" from the clipping" if delta else "")
        + (f" plus {omega:g} given" if omega else "")
    )
    return _Components(
        parts.within_baseline,
        parts.within_candidate,
        parts.between_baseline,
        parts.between_candidate,
        parts.between + omega,
        trials,
        parts.direction,
        source,
        spread,
    )


def _is_binary(R: ArrayLike | Bank) -> bool:
    if isinstance(R, Bank) or is_ragged(R):
        return True
    matrix = checked_matrix(R, "pilot")
    return bool(np.isin(matrix, (0, 1)).all())


def _rate_spread(means: np.ndarray, within: np.ndarray, trials: np.ndarray) -> float:
    """Between-item variance of the true rates: item means' variance minus their trial noise, floored at 0."""
    return max(float(means.var(ddof=1)) - float(np.mean(within / trials)), 0.0)


def _from_pass_rate(
    p: float, delta: float, between: float | None, spread: float | None, trials: int, direction: str | None
) -> _Components:
    if not 0 <= p <= 1:
        raise EvaluationError(f"pass_rate must lie in [0, 1]; got pass_rate={p:g}")
    share = DEFAULT_SPREAD if spread is None else _check_spread(spread)
    origin = (
        f"pass rate {p:g} with the default spread {DEFAULT_SPREAD:g} (intraclass correlations of 0.30-0.77 "
        "measured on agent and retrieval evals; give spread, or plan from a pilot)"
        if spread is None
        else f"pass rate {p:g} with the given spread {share:g}"
    )
    return _from_rates(p, share, delta, between, trials, origin, direction)


def _pilot_trials(pilot: ArrayLike | Bank) -> int:
    """The pilot's trials per item (rounded mean), the plan's default."""
    return round(float(item_moments(pilot)[2].mean()))


def _from_pilot(
    pilot: ArrayLike | Bank,
    candidate: ArrayLike | Bank | None,
    delta: float,
    between: float | None,
    planned: int,
    direction: str | None,
) -> _Components:
    means, within, trials = item_moments(pilot)
    if means.size < 2:
        raise InsufficientDataError(
            f"pilot must hold at least 2 items to estimate the between-item variance; got {means.size}",
            unit="pilot items",
            needed=2,
            got=int(means.size),
        )
    tau = _rate_spread(means, within, trials)
    sigma = float(within.mean())
    default_trials = round(float(trials.mean()))
    if candidate is None:
        mean = float(means.mean())
        if _is_binary(pilot) and 0.0 < mean < 1.0:
            spread = min(tau / (mean * (1.0 - mean)), MAX_SPREAD)
            origin = (
                f"one pilot run of {plural(means.size, 'item')} x {plural(default_trials, 'trial')}: "
                "mean pass rate "
                f"{mean:.4g} and spread {spread:.3g} (between-item share of the variance) estimated"
            )
            return _from_rates(mean, spread, delta, between, planned, origin, direction)
        omega = 0.0 if between is None else _check_variance(between, "between")
        source = (
            f"one pilot run of {plural(means.size, 'item')} x {plural(default_trials, 'trial')}: "
            "its within-item and "
            f"between-item variances estimated; the candidate has the same (graded scores, or every item "
            f"at 0 or 1); between-item variance of the differences {'assumed ' if between is None else ''}"
            f"{omega:g}"
        )
        return _Components(sigma, sigma, tau, tau, omega, default_trials, "either (equal variances)", source)
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
    source = (
        f"paired pilot of {plural(means.size, 'item')}: every variance component estimated from the two runs"
    )
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
    spread: float | None = None,
    direction: str | None = None,
    items: int | None = None,
    trials: int | None = None,
    alpha: float = 0.05,
    power: float = 0.8,
) -> SampleSizePlan:
    """Items and trials the paired t-test needs to detect a change of ``delta`` in either direction.

    Give exactly one of ``pass_rate`` (the baseline's expected mean pass rate, with
    ``spread``, the share of the pass-rate variance between items, default
    :data:`DEFAULT_SPREAD`) or ``pilot`` (a pilot run, which estimates both; add
    ``pilot_candidate`` for a paired pilot of two runs).  ``delta`` is the change of the
    mean pass rate; its sign is ignored: ``direction`` (``"decrease"`` or
    ``"increase"``) plans for one, None (the default) for the noisier of the two (see the
    module docstring).  Then:

    * neither ``items`` nor ``trials``: the items needed with ``trials`` =
      the pilot's trials per item (1 for a pass rate);
    * ``trials`` only: the items needed;
    * ``items`` only: the trials needed (None if no number suffices);
    * both: the power and MDE of that design.

    >>> plan = plan_sample_size(0.1, pass_rate=0.7, trials=5)
    >>> plan.items, plan.trials, plan.direction, round(plan.achieved_power, 3), plan.spread
    (41, 5, 'decrease', 0.801, 0.5)
    >>> plan_sample_size(0.1, pass_rate=0.7, spread=0.0, trials=5).items  # identical items: the old plan
    73
    >>> plan_sample_size(0.1, pass_rate=0.6, items=100).trials
    3
    """
    size = _check_delta(delta)
    alpha = check_probability(alpha, "alpha")
    target = check_probability(power, "power")
    if (pass_rate is None) == (pilot is None):
        raise EvaluationError("give exactly one of pass_rate or pilot; got both or neither")
    if trials is not None:
        trials = check_integer(trials, "trials", 1)
    if direction is not None:
        direction = check_choice(direction, "direction", {name: name for name in _DIRECTIONS})
    if pass_rate is not None:
        if pilot_candidate is not None:
            raise EvaluationError("pilot_candidate needs pilot; got pilot_candidate with pass_rate")
        planned = 1 if trials is None else trials
        parts = _from_pass_rate(check_real(pass_rate, "pass_rate"), size, between, spread, planned, direction)
    else:
        if spread is not None:
            raise EvaluationError("spread goes with pass_rate; a pilot estimates it")
        planned = _pilot_trials(pilot) if trials is None else trials  # type: ignore[arg-type]
        parts = _from_pilot(pilot, pilot_candidate, size, between, planned, direction)  # type: ignore[arg-type]
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
        "spread": parts.spread,
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
        f"{plural(items, 'item')} x {plural(trials, 'trial')}: power {achieved:.1%} to detect a "
        f"{parts.direction} of "
        f"{size:g} at alpha={alpha:g} with the paired t-test (MDE {mde:.4g} at {target:.0%} power)."
    )
    return SampleSizePlan(
        **shared, trials=trials, achieved_power=achieved, mde=mde, feasible=achieved >= target, note=note
    )
