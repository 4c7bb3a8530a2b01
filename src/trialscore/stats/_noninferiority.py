r"""Is the cheaper one no worse?  Non-inferiority verdicts with a declared margin.

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
(:mod:`trialscore.stats._effort`) over the items both runs hold, with a relative margin: the
candidate is ``non-inferior`` (no more expensive than the baseline by more than the margin) when
the upper end of :math:`\rho`'s interval is below :math:`1 + \Delta`, ``inferior`` when its lower
end is above :math:`1 + \Delta`, else ``inconclusive``.  The interval is that of
:math:`\log R_B - \log R_A` (jackknife over the shared items, leaving an item out of both runs;
t with items - 1 df; floored by both runs' trial noise), at two-sided level :math:`2\alpha`.

**Plans**: :mod:`trialscore.stats._noninferiority_plan` (the items and trials these tests need).

Reference
---------
S. Wellek, *Testing Statistical Hypotheses of Equivalence and Noninferiority*, 2nd ed. (2010),
ch. 2; E. Miller, "Adding Error Bars to Evals", arXiv:2411.00640 (2024).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

from trialscore._record import Record
from trialscore._validate import check_probability, check_real
from trialscore.core._kernels import Tau
from trialscore.errors import EvaluationError, parameter
from trialscore.stats._compare import compare_paired
from trialscore.stats._comparison import Comparison
from trialscore.stats._effort import ItemTotals
from trialscore.stats._intervals import Interval
from trialscore.stats._pairing import Run
from trialscore.stats._ratio_compare import paired_ratio

__all__ = [
    "NonInferiority",
    "check_alpha",
    "check_margin",
    "cost_non_inferiority",
    "non_inferiority",
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


def check_margin(margin: object) -> float:
    value = check_real(margin, "margin")
    if value <= 0:
        raise EvaluationError(
            f"{parameter('margin')} must be > 0 (the largest loss still called no worse); got {value:g}"
        )
    return value


def check_alpha(alpha: object) -> float:
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
    margin = check_margin(margin)
    alpha = check_alpha(alpha)
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

    ``baseline`` and ``candidate`` are :func:`~trialscore.stats._effort.item_totals` of the two
    runs (trials of unknown cost already left out and counted there); items are paired by id.
    ``margin=0.1`` allows the candidate 10% more cost per success.  Rule and interval in the
    module docstring (:func:`~trialscore.stats._ratio_compare.paired_ratio`); ``quantity`` names
    what the totals add up (``"latency"``, ``"tokens"``, ``"steps"``: no slower, no wordier).

    >>> from trialscore.stats._effort import item_totals
    >>> items = [i // 2 for i in range(40)]
    >>> old = item_totals(items, [1, 0] * 20, [1.0, 1.0] * 20)
    >>> new = item_totals(items, [1, 0] * 20, [0.5, 0.5] * 20)
    >>> result = cost_non_inferiority(old, new, margin=0.1)
    >>> result.verdict, round(result.estimate, 4), result.bound
    ('non-inferior', 0.5, 1.1)
    """
    margin = check_margin(margin)
    alpha = check_alpha(alpha)
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
