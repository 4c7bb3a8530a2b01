r"""Is the cheaper one no worse?  Non-inferiority verdicts with a declared margin, and their plans.

**Scores** (:func:`non_inferiority`): with :math:`\delta` = candidate - baseline on the items both
runs hold and a margin :math:`\Delta > 0` declared beforehand, the test of
:math:`H_0: \delta \le -\Delta` against :math:`H_1: \delta > -\Delta` at one-sided level
:math:`\alpha` reads the paired comparison of :func:`~trialscore.stats.compare_paired` (the
floored paired t-test, df = items - 1) at two-sided level :math:`2\alpha`: each end of that
interval is a one-sided :math:`1 - \alpha` bound.  The verdict is read off it:

* ``non-inferior`` when the lower end is above :math:`-\Delta` (reject :math:`H_0`);
* ``inferior`` when the upper end is below :math:`-\Delta` (worse by more than the margin);
* ``inconclusive`` otherwise.

Declaring non-inferiority when the truth sits exactly at the margin happens at most
:math:`\alpha` of the time (the false-pass rate, measured in docs/agents.md).

**Cost per success** (:func:`cost_non_inferiority`), "no more expensive than": the other way
round, on the ratio :math:`\rho = R_B / R_A` of the two runs' cost per success
(:mod:`trialscore.stats.effort`) over the items both runs hold, with a relative margin: the
candidate is ``non-inferior`` (no more expensive than the baseline by more than the margin) when
the upper end of :math:`\rho`'s interval is below :math:`1 + \Delta`, ``inferior`` when its lower
end is above :math:`1 + \Delta`, else ``inconclusive``.  The interval is that of
:math:`\log R_B - \log R_A` (jackknife over the shared items, leaving an item out of both runs;
t with items - 1 df; floored by both runs' trial noise), at two-sided level :math:`2\alpha`.

**Plans** (:func:`plan_non_inferiority`): the items (or trials) at which the one-sided test
reaches the power asked when the true difference is ``expected`` (0 by default): the noncentral t
with noncentrality :math:`(\delta + \Delta)/\mathrm{SE}`,

.. math::

    1 - \beta = 1 - F_{t'}\bigl(t_{M-1}^{-1}(1 - \alpha);\, M - 1,\, (\delta + \Delta)/\mathrm{SE}\bigr),
    \qquad \mathrm{SE}^2 = \bigl(\omega^2 + (\sigma_A^2 + \sigma_B^2)/K\bigr)/M,

with the variance components of :mod:`trialscore.stats.plan`'s item model (pass rates
Beta-distributed with a mean and a between-item ``spread``).

Reference
---------
S. Wellek, *Testing Statistical Hypotheses of Equivalence and Noninferiority*, 2nd ed. (2010),
ch. 2; E. Miller, "Adding Error Bars to Evals", arXiv:2411.00640 (2024).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

from trialscore._record import Record
from trialscore._validate import check_integer, check_probability, check_real
from trialscore._words import plural
from trialscore.core._kernels import Tau
from trialscore.errors import EvaluationError
from trialscore.stats import _scipy
from trialscore.stats._pairing import Run
from trialscore.stats.compare import Comparison, compare_paired
from trialscore.stats.effort import ItemTotals
from trialscore.stats.intervals import Interval
from trialscore.stats.plan import _from_pass_rate
from trialscore.stats.ratio_compare import paired_ratio

__all__ = [
    "NonInferiority",
    "NonInferiorityPlan",
    "cost_non_inferiority",
    "non_inferiority",
    "plan_non_inferiority",
]

#: The verdicts, in the order of the rule.
VERDICTS = ("non-inferior", "inferior", "inconclusive")


@dataclass(frozen=True)
class NonInferiority(Record):
    """A non-inferiority verdict with the interval it is read off, the margin, the test and its level.

    ``estimate`` is candidate - baseline (scores) or candidate / baseline (cost per success);
    ``interval`` its two-sided ``1 - 2 alpha`` interval, each end a one-sided ``1 - alpha`` bound;
    ``bound`` the value the margin puts the line at (``-margin``, or ``1 + margin``); ``alpha`` the
    one-sided level.  ``comparison`` is the paired comparison behind a score's verdict.
    """

    metric: str
    margin: float
    bound: float
    estimate: float
    interval: Interval
    alpha: float
    verdict: str
    rule: str
    test: str
    paired_items: int
    comparison: Comparison | None = None
    notes: tuple[str, ...] = ()

    @property
    def passed(self) -> bool:
        """True only for ``non-inferior`` (a gate passes on nothing else)."""
        return self.verdict == "non-inferior"

    def __str__(self) -> str:
        name = "ratio" if self.metric.endswith("per success") else "delta"
        return (
            f"{self.verdict}: {self.metric} {name} {self.estimate:.4g} "
            f"[{self.interval.low:.4g}, {self.interval.high:.4g}] vs margin line {self.bound:.4g} "
            f"(one-sided alpha {self.alpha:g}, {self.test})"
        )


def _check_margin(margin: object) -> float:
    value = check_real(margin, "margin")
    if value <= 0:
        raise EvaluationError(
            f"margin must be > 0 (the largest loss still called no worse); got margin={value:g}"
        )
    return value


def _check_alpha(alpha: object) -> float:
    value = check_probability(alpha, "alpha")
    if value >= 0.5:
        raise EvaluationError(f"alpha must be a one-sided level below 0.5; got alpha={value:g}")
    return value


def _read(interval: Interval, bound: float, higher_is_better: bool) -> str:
    """The verdict: the interval wholly on the good side of the margin line, wholly on the bad one, or not."""
    if higher_is_better:
        good, bad = interval.low > bound, interval.high < bound
    else:
        good, bad = interval.high < bound, interval.low > bound
    return "non-inferior" if good else "inferior" if bad else "inconclusive"


def non_inferiority(
    baseline: Run,
    candidate: Run,
    margin: float,
    metric: str = "avg",
    k: int | None = None,
    tau: Tau | None = None,
    *,
    ids_baseline: Sequence[Hashable] | None = None,
    ids_candidate: Sequence[Hashable] | None = None,
    alpha: float = 0.05,
) -> NonInferiority:
    """Is the candidate no worse than the baseline by more than ``margin``?  (Module docstring.)

    Runs, ids and ``metric`` as in :func:`~trialscore.stats.compare_paired`; ``alpha`` is the
    one-sided level (the interval is the two-sided ``1 - 2 alpha`` one).

    >>> base = [[1, 1, 1, 0], [1, 0, 1, 1], [0, 1, 1, 1], [1, 1, 0, 1]] * 10
    >>> result = non_inferiority(base, base, margin=0.1)
    >>> result.verdict, round(result.interval.low, 4), result.bound
    ('non-inferior', -0.0279, -0.1)
    >>> non_inferiority(base, [[0, 0, 0, 1]] * 40, margin=0.1).verdict
    'inferior'
    """
    margin = _check_margin(margin)
    alpha = _check_alpha(alpha)
    comparison = compare_paired(
        baseline,
        candidate,
        metric,
        k,
        tau,
        ids_baseline=ids_baseline,
        ids_candidate=ids_candidate,
        alpha=2 * alpha,
        permutations=0,
    )
    interval = comparison.interval
    bound = -margin
    test = (
        f"one-sided paired t-test of H0: delta <= -{margin:g} at level {alpha:g} "
        f"(the ends of the two-sided {1 - 2 * alpha:.0%} interval of {comparison.p_value_method})"
    )
    rule = (
        f"non-inferior if the lower end of delta's {1 - 2 * alpha:.0%} interval is above -{margin:g}, "
        f"inferior if its upper end is below -{margin:g}, else inconclusive"
    )
    return NonInferiority(
        metric=comparison.metric,
        margin=margin,
        bound=bound,
        estimate=comparison.delta,
        interval=interval,
        alpha=alpha,
        verdict=_read(interval, bound, higher_is_better=True),
        rule=rule,
        test=test,
        paired_items=comparison.paired_items,
        comparison=comparison,
        notes=comparison.notes,
    )


def cost_non_inferiority(
    baseline: ItemTotals, candidate: ItemTotals, margin: float, *, alpha: float = 0.05, quantity: str = "cost"
) -> NonInferiority:
    """Is the candidate no more expensive per success than the baseline, by more than ``margin`` (relative)?

    ``baseline`` and ``candidate`` are :func:`~trialscore.stats.effort.item_totals` of the two
    runs (trials of unknown cost already left out and counted there); items are paired by id.
    ``margin=0.1`` allows the candidate 10% more cost per success.  Rule and interval in the
    module docstring (:func:`~trialscore.stats.ratio_compare.paired_ratio`); ``quantity`` names
    what the totals add up (``"latency"``, ``"tokens"``, ``"steps"``: no slower, no wordier).

    >>> from trialscore.stats.effort import item_totals
    >>> items = [i // 2 for i in range(40)]
    >>> old = item_totals(items, [1, 0] * 20, [1.0, 1.0] * 20)
    >>> new = item_totals(items, [1, 0] * 20, [0.5, 0.5] * 20)
    >>> result = cost_non_inferiority(old, new, margin=0.1)
    >>> result.verdict, round(result.estimate, 4), result.bound
    ('non-inferior', 0.5, 1.1)
    """
    margin = _check_margin(margin)
    alpha = _check_alpha(alpha)
    paired = paired_ratio(baseline, candidate, 1 - 2 * alpha, quantity)
    interval, ratio, method = paired.interval, paired.ratio, paired.interval.method
    bound = 1 + margin
    return NonInferiority(
        metric=f"{paired.quantity} per success",
        margin=margin,
        bound=bound,
        estimate=float(ratio),
        interval=interval,
        alpha=alpha,
        verdict=_read(interval, bound, higher_is_better=False),
        rule=(
            f"non-inferior (no more expensive) if the upper end of the {1 - 2 * alpha:.0%} interval of "
            f"candidate / baseline {paired.quantity} per success is below {bound:g}, inferior if its lower "
            f"end is above {bound:g}, else inconclusive"
        ),
        test=f"one-sided test of H0: ratio >= {bound:g} at level {alpha:g} ({method})",
        paired_items=paired.paired_items,
        notes=paired.notes,
    )


@dataclass(frozen=True)
class NonInferiorityPlan(Record):
    """The design a non-inferiority test needs: items, trials, the power reached, and what was assumed.

    ``trials`` is None (``feasible`` False) when no number of trials reaches the power with the
    given items; ``achieved_power`` is then that of unlimited trials.
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

    def __str__(self) -> str:
        return self.note


def _power(
    margin: float, expected: float, items: int, trials: float, between: float, within: float, alpha: float
) -> float:
    """Power of the one-sided level-``alpha`` paired t-test of delta <= -margin when delta = expected."""
    se = math.sqrt((between + within / trials) / items)
    df = items - 1
    critical = float(_scipy.stdtrit(df, 1 - alpha))
    if se == 0:
        return 1.0
    return 1.0 - float(_scipy.nctdtr(df, (expected + margin) / se, critical))


def _fewest(enough: Callable[[int], bool], start: int) -> int:
    """The least whole number from ``start`` up for which ``enough`` holds (it holds for all above it)."""
    high = start
    while not enough(high):
        high *= 2
    low = max(start, high // 2)
    while low < high:
        middle = (low + high) // 2
        low, high = (low, middle) if enough(middle) else (middle + 1, high)
    return low


def plan_non_inferiority(
    margin: float,
    *,
    pass_rate: float,
    spread: float | None = None,
    expected: float = 0.0,
    items: int | None = None,
    trials: int | None = None,
    alpha: float = 0.05,
    power: float = 0.8,
) -> NonInferiorityPlan:
    """Items (or trials) a non-inferiority test of pass rates needs to pass when the truth is ``expected``.

    ``pass_rate`` is the baseline's mean pass rate and ``spread`` the between-item share of its
    variance (default 0.5, :data:`trialscore.stats.plan.DEFAULT_SPREAD`), the item model of
    :mod:`trialscore.stats.plan`; ``expected`` the true candidate - baseline (0: as good; it must be
    above ``-margin``).  Give ``trials`` (default 1) for the items needed, ``items`` for the trials
    needed, or both for the power of that design.

    >>> plan = plan_non_inferiority(0.1, pass_rate=0.7, trials=3)
    >>> plan.items, plan.trials, round(plan.achieved_power, 3)
    (45, 3, 0.803)
    >>> plan_non_inferiority(0.1, pass_rate=0.7, items=30).trials
    5
    """
    margin = _check_margin(margin)
    alpha = _check_alpha(alpha)
    target = check_probability(power, "power")
    expected = check_real(expected, "expected")
    if expected <= -margin:
        raise EvaluationError(
            f"expected must be above -margin (a candidate truly worse by the margin fails); "
            f"got expected={expected:g} with margin={margin:g}"
        )
    if trials is not None:
        trials = check_integer(trials, "trials", 1)
    if items is not None:
        items = check_integer(items, "items", 2)
    direction = "decrease" if expected < 0 else "increase"
    parts = _from_pass_rate(check_real(pass_rate, "pass_rate"), abs(expected), None, spread, 1, direction)
    between, within = parts.between, parts.within_baseline + parts.within_candidate
    shared = {"margin": margin, "expected": expected, "alpha": alpha, "target_power": target}
    test = f"one-sided paired t-test of H0: delta <= -{margin:g} at level {alpha:g} (df = items - 1)"
    source = parts.source
    if items is None:
        per_item = 1 if trials is None else trials
        items = _fewest(lambda m: _power(margin, expected, m, per_item, between, within, alpha) >= target, 2)
        trials = per_item
    elif trials is None:
        fixed = items
        if _power(margin, expected, items, math.inf, between, within, alpha) < target:
            achieved = _power(margin, expected, items, math.inf, between, within, alpha)
            note = (
                f"No number of trials reaches {target:.0%} power with {plural(items, 'item')}: "
                f"between-item variance alone caps it at {achieved:.1%}. Add items."
            )
            return NonInferiorityPlan(
                **shared, items=items, trials=None, achieved_power=achieved, feasible=False, between=between,
                within=within, test=test, source=source, note=note,
            )  # fmt: skip
        trials = _fewest(lambda k: _power(margin, expected, fixed, k, between, within, alpha) >= target, 1)
    achieved = _power(margin, expected, items, trials, between, within, alpha)
    note = (
        f"{plural(items, 'item')} x {plural(trials, 'trial')}: power {achieved:.1%} to find the candidate "
        f"non-inferior (margin {margin:g}, one-sided alpha {alpha:g}) when it is truly "
        + ("as good" if expected == 0 else f"{expected:+g}")
        + "."
    )
    return NonInferiorityPlan(
        **shared, items=items, trials=trials, achieved_power=achieved, feasible=achieved >= target,
        between=between, within=within, test=test, source=source, note=note,
    )  # fmt: skip
