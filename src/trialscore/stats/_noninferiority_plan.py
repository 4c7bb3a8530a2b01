r"""How many items and trials does "is the candidate no worse?" need?  Plans of the non-inferiority tests.

Both tests of :mod:`trialscore.stats._noninferiority` read a one-sided bound of a t interval
(df = items - 1) against the margin line, so a design's power is that of the one-sided t-test
with noncentrality :math:`\lambda = D / \mathrm{SE}`, :math:`D` the distance of the truth from the
line:

.. math::

    1 - \beta = 1 - F_{t'}\bigl(t_{M-1}^{-1}(1 - \alpha);\, M - 1,\, D/\mathrm{SE}\bigr),

the smallest ``M`` (or ``K``) reaching the power asked is the plan.

**Scores** (:func:`plan_non_inferiority`): :math:`D = \delta + \Delta` with :math:`\delta` the
true candidate - baseline (``expected``, 0 by default: the candidate truly as good) and
:math:`\mathrm{SE}^2 = (\omega^2 + (\sigma_A^2 + \sigma_B^2)/K)/M`, the variance components of
:mod:`trialscore.stats._plan`: from an assumed ``pass_rate`` (item pass rates Beta-distributed with
a between-item ``spread``, default 0.5), or estimated from a ``pilot`` run (its mean pass rate and
spread; a graded pilot its own variances) or a paired pilot of both runs (every component).

**Cost per success** (:func:`plan_cost_non_inferiority`), "no more expensive than":
:math:`D = \log(1 + \Delta) - \log\rho` with :math:`\rho` the true candidate / baseline ratio
(``expected``, 1 by default) and :math:`\mathrm{SE}^2 = s^2/M`, :math:`s^2` the per-item variance
of the paired log ratio of the two runs' cost per success.  How the two runs' costs move together
item by item is what sets :math:`s^2`, so it comes from a paired pilot of both runs: the
variance :func:`~trialscore.stats._ratio_compare.paired_ratio` gives on the pilot's ``m`` shared
items (the jackknife over items, floored by trial noise) times ``m``.  The power is averaged over
the pilot's uncertainty about :math:`s^2` (heavy-tailed costs make a small pilot's variance skewed
low).  The plan keeps the pilot's trials per item (the variance is measured at that many).

Measured (docs/agents.md, ``tests/stats/test_noninferiority_simulation.py``): planned designs reach
76-86% power at a planned 80%, and the false pass at the margin stays within the one-sided level.

Reference
---------
S. Wellek, *Testing Statistical Hypotheses of Equivalence and Noninferiority*, 2nd ed. (2010),
ch. 2; J. Cohen, *Statistical Power Analysis for the Behavioral Sciences*, 2nd ed. (1988), ch. 2.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from trialscore._record import Record
from trialscore._validate import check_integer, check_probability, check_real
from trialscore._words import plural
from trialscore.core.bank import Bank
from trialscore.errors import EvaluationError, parameter
from trialscore.stats import _scipy
from trialscore.stats._effort import ItemTotals
from trialscore.stats._noninferiority import check_alpha, check_margin
from trialscore.stats._plan import _from_pass_rate, _from_pilot, _pilot_trials
from trialscore.stats._ratio_compare import paired_ratio, shared_rows

__all__ = ["NonInferiorityPlan", "plan_cost_non_inferiority", "plan_non_inferiority"]

FloatArray = NDArray[np.float64]


@dataclass(frozen=True)
class NonInferiorityPlan(Record):
    """The design a non-inferiority test needs: items, trials, the power reached, and what was assumed.

    ``metric`` is ``"pass rate"`` (a score's difference) or ``"cost per success"`` (and the other
    quantities: a ratio); ``expected`` the truth the power is planned at (a difference, or a ratio);
    ``between`` and ``within`` the components of the per-item variance, ``between + within / trials``
    (for a ratio, ``between`` is the per-item variance of the paired log ratio at the pilot's trials
    and ``within`` 0).  ``trials`` is None (``feasible`` False) when no number of trials reaches the
    power with the given items; ``achieved_power`` is then that of unlimited trials.
    """

    margin: float
    expected: float
    alpha: float
    target_power: float
    items: int
    trials: int | None
    achieved_power: float
    feasible: bool
    between: float
    within: float
    test: str
    source: str
    note: str
    metric: str = "pass rate"

    def __str__(self) -> str:
        return self.note


def _power(distance: float, se: float, items: int, alpha: float) -> float:
    """Power of the one-sided level-``alpha`` t-test (df = items - 1) when the truth is ``distance`` past
    the margin line and the estimate's standard error is ``se``."""
    if se == 0:
        return 1.0
    df = items - 1
    critical = float(_scipy.stdtrit(df, 1 - alpha))
    upper = 1.0 - float(_scipy.nctdtr(df, distance / se, critical))
    return float(_scipy.nct.sf(critical, df, distance / se)) if math.isnan(upper) else upper


def _bisect(enough: Callable[[int], bool], low: int, high: int) -> int:
    """The least whole number in ``low..high`` for which ``enough`` holds (it holds at ``high``, and above
    any number it holds at)."""
    while low < high:
        middle = (low + high) // 2
        low, high = (low, middle) if enough(middle) else (middle + 1, high)
    return low


def _fewest(enough: Callable[[int], bool], start: int) -> int:
    """The least whole number from ``start`` up for which ``enough`` holds (it holds for all above it)."""
    high = start
    while not enough(high):
        high *= 2
    return _bisect(enough, max(start, high // 2), high)


def _fewest_near(enough: Callable[[int], bool], guess: int, start: int) -> int:
    """As :func:`_fewest`, searched outward from ``guess`` (near the answer: a few calls of ``enough``)."""
    step, at = 1, max(guess, start)
    if enough(at):  # the answer is at or below: step down until it fails
        high = at
        while high - step >= start and enough(high - step):
            high -= step
            step *= 2
        return _bisect(enough, max(start, high - step + 1), high)
    low, high = at + 1, at + step  # above: step up until it holds
    while not enough(high):
        low, step = high + 1, step * 2
        high += step
    return _bisect(enough, low, high)


def plan_non_inferiority(
    margin: float,
    *,
    pass_rate: float | None = None,
    pilot: ArrayLike | Bank | None = None,
    pilot_candidate: ArrayLike | Bank | None = None,
    spread: float | None = None,
    expected: float = 0.0,
    items: int | None = None,
    trials: int | None = None,
    alpha: float = 0.05,
    power: float = 0.8,
) -> NonInferiorityPlan:
    """Items (or trials) a non-inferiority test of pass rates needs to pass when the truth is ``expected``.

    Give exactly one of ``pass_rate`` (the baseline's mean pass rate, with ``spread``, the
    between-item share of its variance, default 0.5: :data:`trialscore.stats._plan.DEFAULT_SPREAD`)
    or ``pilot`` (a pilot run, which estimates both; add ``pilot_candidate`` for a paired pilot of
    both runs, which estimates every variance component), the item model of
    :mod:`trialscore.stats._plan`.  ``expected`` is the true candidate - baseline (0: as good; it
    must be above ``-margin``); ``alpha`` the one-sided level.  Give ``trials`` (default: 1 for a
    pass rate, the pilot's trials per item for a pilot) for the items needed, ``items`` for the
    trials needed, or both for the power of that design.

    >>> plan = plan_non_inferiority(0.1, pass_rate=0.7, trials=3)
    >>> plan.items, plan.trials, round(plan.achieved_power, 3)
    (45, 3, 0.803)
    >>> plan_non_inferiority(0.1, pass_rate=0.7, items=30).trials
    5
    >>> pilot = [[1, 1, 1], [1, 0, 1], [0, 0, 1], [1, 1, 1], [0, 0, 0], [1, 1, 0]] * 5
    >>> plan = plan_non_inferiority(0.1, pilot=pilot)  # at the pilot's 3 trials an item
    >>> plan.items, plan.trials
    (69, 3)
    """
    margin = check_margin(margin)
    alpha = check_alpha(alpha)
    target = check_probability(power, "power")
    expected = check_real(expected, "expected")
    if expected <= -margin:
        raise EvaluationError(
            f"{parameter('expected')} + {parameter('margin')} must be > 0 (a candidate truly worse by the "
            f"margin fails); got {expected:g} + {margin:g}"
        )
    if (pass_rate is None) == (pilot is None):
        raise EvaluationError("give exactly one of pass_rate or pilot; got both or neither")
    if trials is not None:
        trials = check_integer(trials, "trials", 1)
    if items is not None:
        items = check_integer(items, "items", 2)
    direction = "decrease" if expected < 0 else "increase"
    if pass_rate is not None:
        if pilot_candidate is not None:
            raise EvaluationError("pilot_candidate needs pilot; got pilot_candidate with pass_rate")
        per_item = 1 if trials is None else trials
        parts = _from_pass_rate(check_real(pass_rate, "pass_rate"), abs(expected), None, spread, 1, direction)
    else:
        if spread is not None:
            raise EvaluationError("spread goes with pass_rate; a pilot estimates it")
        assert pilot is not None
        per_item = _pilot_trials(pilot) if trials is None else trials
        parts = _from_pilot(pilot, pilot_candidate, abs(expected), None, per_item, direction)
    between, within = parts.between, parts.within_baseline + parts.within_candidate
    distance = expected + margin

    def power_at(m: int, k: float) -> float:
        return _power(distance, math.sqrt((between + within / k) / m), m, alpha)

    shared: dict[str, Any] = {"margin": margin, "expected": expected, "alpha": alpha, "target_power": target}
    test = f"one-sided paired t-test of H0: delta <= -{margin:g} at level {alpha:g} (df = items - 1)"
    if items is None:
        # searched from the normal approximation's items (a few power evaluations, not a doubling from 2)
        z = float(_scipy.ndtri(1 - alpha)) + float(_scipy.ndtri(target))
        guess = z * z * (between + within / per_item) / distance**2
        start = 2 if math.isnan(guess) else math.ceil(min(guess, 2.0**40))
        items = _fewest_near(lambda m: power_at(m, per_item) >= target, start, 2)
        trials = per_item
    elif trials is None:
        fixed = items
        if power_at(items, math.inf) < target:
            achieved = power_at(items, math.inf)
            note = (
                f"No number of trials reaches {target:.0%} power with {plural(items, 'item')}: "
                f"between-item variance alone caps it at {achieved:.1%}. Add items."
            )
            return NonInferiorityPlan(
                **shared, items=items, trials=None, achieved_power=achieved, feasible=False, between=between,
                within=within, test=test, source=parts.source, note=note,
            )  # fmt: skip
        trials = _fewest(lambda k: power_at(fixed, k) >= target, 1)
    achieved = power_at(items, trials)
    note = (
        f"{plural(items, 'item')} x {plural(trials, 'trial')}: power {achieved:.1%} to find the candidate "
        f"non-inferior (margin {margin:g}, one-sided alpha {alpha:g}) when it is truly "
        + ("as good." if expected == 0 else f"{expected:+g} (candidate - baseline).")
    )
    return NonInferiorityPlan(
        **shared, items=items, trials=trials, achieved_power=achieved, feasible=achieved >= target,
        between=between, within=within, test=test, source=parts.source, note=note,
    )  # fmt: skip


#: Quantiles of the variance's uncertainty a cost plan averages its power over.
_VARIANCE_GRID = 200


def _influence(baseline: ItemTotals, candidate: ItemTotals) -> FloatArray:
    """Each shared item's influence on the paired log ratio, times the items (mean 0, variance ~ s^2)."""
    rows_a, rows_b, _ = shared_rows(baseline, candidate)
    parts = []
    for totals, rows in ((baseline, rows_a), (candidate, rows_b)):
        total, solved = totals.total[rows], totals.successes[rows].astype(np.float64)
        parts.append(total / total.sum() - solved / solved.sum())
    influence: FloatArray = (parts[1] - parts[0]) * rows_a.size
    return influence


def _variance_draws(variance: float, influence: FloatArray) -> tuple[FloatArray, float]:
    """What the per-item variance may truly be, given its pilot estimate: ``variance * df / chi2_df`` at
    :data:`_VARIANCE_GRID` quantiles, ``df`` the pilot's effective degrees of freedom (below)."""
    items = influence.size
    squares = float(np.mean(influence**2))
    kurtosis = float(np.mean(influence**4)) / squares**2 if squares > 0 else 3.0
    df = max(2.0 * (items - 1) / (max(kurtosis, 3.0) - 1.0), 1.0)
    grid = (np.arange(_VARIANCE_GRID) + 0.5) / _VARIANCE_GRID
    draws: FloatArray = variance * df / _scipy.chdtri(df, grid)
    return draws, df


def plan_cost_non_inferiority(
    margin: float,
    *,
    pilot: ItemTotals,
    pilot_candidate: ItemTotals,
    expected: float = 1.0,
    items: int | None = None,
    alpha: float = 0.05,
    power: float = 0.8,
    quantity: str = "cost",
) -> NonInferiorityPlan:
    r"""Items "no more expensive than" needs to pass when the true ratio candidate / baseline is ``expected``.

        ``pilot`` and ``pilot_candidate`` are :func:`~trialscore.stats._effort.item_totals` of a pilot of
        each run on the same items, where the per-item variance :math:`s^2` of the paired log ratio is
        measured (module docstring); ``margin`` is relative (0.1: 10% dearer still passes), ``expected``
        must be below ``1 + margin``; ``alpha`` the one-sided level.  Without ``items`` the items needed
        at the pilot's trials per item; with ``items`` the power of that design.  ``quantity`` names what
        the totals add up (``"latency"``, ``"tokens"``, ``"steps"``).

        A pilot's variance is itself uncertain, and with heavy-tailed costs skewed low (a pilot that
        missed the rare dear items), so the power is averaged over what the variance may be (Julious and
        Owen 2006): :math:`\sigma^2 = s^2
    u/\chi^2_
    u` with :math:`
    u = 2(m-1)/(\hat\kappa - 1)` the
        pilot's effective degrees of freedom, :math:`\hat\kappa` the kurtosis of the items' influences
        (at least 3, a normal sample's: :math:`
    u \le m - 1`).

        >>> from trialscore.stats._effort import item_totals
        >>> items = [i // 2 for i in range(60)]
        >>> costs = [1.0, 2.0, 0.5, 1.5, 3.0, 1.0] * 10
        >>> old = item_totals(items, [1, 0, 1, 1, 0, 1] * 10, costs)
        >>> new = item_totals(items, [1, 1, 0, 1, 0, 1] * 10, costs[::-1])
        >>> plan = plan_cost_non_inferiority(0.2, pilot=old, pilot_candidate=new)
        >>> plan.items, plan.trials, round(plan.achieved_power, 3)
        (60, 2, 0.804)

        Reference: S. A. Julious and R. J. Owen, "Sample size calculations for clinical studies allowing for
        uncertainty about the variance", Pharmaceutical Statistics 5 (2006).
    """
    margin = check_margin(margin)
    alpha = check_alpha(alpha)
    target = check_probability(power, "power")
    ratio = check_real(expected, "expected")
    if not 0 < ratio < 1 + margin:
        raise EvaluationError(
            f"{parameter('expected')} must be a ratio above 0 and below 1 + {parameter('margin')} "
            f"(a candidate truly dearer by the margin fails); got {ratio:g} with a margin of {margin:g}"
        )
    if items is not None:
        items = check_integer(items, "items", 2)
    measured = paired_ratio(pilot, pilot_candidate, 1 - 2 * alpha, quantity)
    m = measured.paired_items
    se = measured.interval.se
    assert se is not None  # paired_ratio always gives one
    variance = m * (se / measured.ratio) ** 2  # per item: Var(log ratio) x items
    draws, df = _variance_draws(variance, _influence(pilot, pilot_candidate))
    per_item = max(round(float(pilot.trials[pilot.trials > 0].mean())), 1)
    distance = math.log1p(margin) - math.log(ratio)

    def power_at(count: int, at: FloatArray) -> float:
        critical = float(_scipy.stdtrit(count - 1, 1 - alpha))
        reached = 1.0 - _scipy.nctdtr(count - 1, distance / np.sqrt(at / count), critical)
        return float(np.mean(np.where(np.isnan(reached), 1.0, reached)))  # NaN: a far tail, reached

    averaged: dict[int, float] = {}  # the power over the whole grid, per count of items

    def power_over_grid(count: int) -> float:
        if count not in averaged:
            averaged[count] = power_at(count, draws)
        return averaged[count]

    def enough(count: int) -> bool:
        # the power falls as the variance grows: below the target at the least variance drawn, the
        # average over all of them is too (one quantile instead of the grid, far from the answer)
        return power_at(count, draws[:1]) >= target - 1e-9 and power_over_grid(count) >= target

    if items is None:
        # the normal approximation at the mean variance, then every tenth quantile of the grid (a
        # tenth of the work), then the whole grid: each search starts near the next one's answer
        z_alpha = float(_scipy.ndtri(1 - alpha))
        z = z_alpha + float(_scipy.ndtri(target))
        guess = max(math.ceil(min(float(draws.mean()) * z * z / distance**2, 2.0**40)), 2)
        coarse = draws[5::10]
        # one secant step on the normal scale, where the power's quantile grows as sqrt(items)
        quantile = float(_scipy.ndtri(power_at(guess, coarse))) + z_alpha
        if 0 < quantile < math.inf:
            guess = math.ceil(min(guess * (z / quantile) ** 2, 2.0**40))
        near = _fewest_near(lambda count: power_at(count, coarse) >= target, guess, 2)
        items = _fewest_near(enough, near - 1, 2)  # the coarse power runs low: often one item too many
    achieved = power_over_grid(items)
    name = measured.quantity
    source = (
        f"paired pilot of {plural(m, 'item')} ({plural(per_item, 'trial')} an item): per-item variance of "
        f"the log ratio of {name} per success {variance:.4g} ({measured.interval.method}; pilot ratio "
        f"{measured.ratio:.4g}), its uncertainty on {df:.3g} effective degrees of freedom; the plan keeps "
        "the pilot's trials per item"
    )
    truth = "as expensive" if ratio == 1 else f"{ratio:g} times as expensive"
    note = (
        f"{plural(items, 'item')} x {plural(per_item, 'trial')}: power {achieved:.1%} (averaged over the "
        f"pilot's uncertainty about the variance) to find the candidate no more expensive ({name} per "
        f"success, margin {margin:g}, one-sided alpha {alpha:g}) when it is truly {truth}."
    )
    return NonInferiorityPlan(
        margin=margin, expected=ratio, alpha=alpha, target_power=target, items=items, trials=per_item,
        achieved_power=achieved, feasible=achieved >= target, between=variance, within=0.0,
        test=f"one-sided test of H0: ratio >= {1 + margin:g} at level {alpha:g} (paired log ratio, t with "
        "df = items - 1)",
        source=source, note=note, metric=f"{name} per success",
    )  # fmt: skip
