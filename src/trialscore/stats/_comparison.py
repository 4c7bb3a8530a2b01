"""What a comparison of two runs answers (:class:`Comparison`), and the one builder of it.

The comparisons of :mod:`trialscore.stats._compare` (paired, these items, unpaired,
clustered) each make the interval of ``delta`` their test inverts; :func:`comparison`
derives the rest alike for all of them: the p-values (the test's t, and the normal one)
from ``delta`` and its SE, the minimum detectable effect, the verdict read off the
interval with its rule, and the notes the output must print.
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from trialscore._record import Record
from trialscore.core.metrics import Metric
from trialscore.stats import _scipy
from trialscore.stats._intervals import Interval
from trialscore.stats._pairing import Items
from trialscore.stats._power import bounded_effect

__all__ = [
    "ESTIMANDS",
    "MDE_POWER",
    "SAME_ITEMS",
    "Comparison",
    "Sides",
    "bounded_interval",
    "comparison",
    "in_unit",
]

FloatArray = NDArray[np.float64]

#: Power at which the minimum detectable effect is quoted.
MDE_POWER = 0.8

#: What each paired test answers (``Comparison.estimand``), by the ``estimand`` argument.
ESTIMANDS = {
    "population": "population: the mean change over items like these (items are a sample)",
    "items": "these items: did these items' pass rates change (the items are fixed)",
}


@dataclass(frozen=True)
class Comparison(Record):
    """The answer to "did the candidate run change the score?", with the numbers behind it.

    ``delta = candidate - baseline`` on the compared items; ``interval`` is
    the confidence interval of ``delta`` at level ``1 - alpha`` from the same
    test as ``p_value`` and ``verdict`` (clipped to [-1, 1] for scores in [0, 1],
    and then ``interval.clipped_to`` says so); ``mde`` the smallest true change that
    test detects with 80% power, None when no change of a score in [0, 1] reaches
    that power (then a note says the group has too few items to test).  ``estimand``
    says what the test answers (:data:`ESTIMANDS`); ``notes`` are the caveats the
    output should print.  Paired comparisons also report ``se_floor`` (the
    trial-noise floor of the SE) and, unless ``permutations=0``, the sign-flip
    permutation p-value as an extra that the verdict does not use.
    """

    design: str
    metric: str
    k: int | None
    baseline: float
    candidate: float
    delta: float
    se: float
    interval: Interval
    p_value: float
    p_value_method: str
    p_value_normal: float
    mde: float | None
    alpha: float
    verdict: str
    rule: str
    items_baseline: int
    items_candidate: int
    paired_items: int
    only_in_baseline: tuple[Hashable, ...] = ()
    only_in_candidate: tuple[Hashable, ...] = ()
    se_floor: float | None = None
    p_value_sign_flip: float | None = None
    sign_flip_method: str | None = None
    estimand: str = ESTIMANDS["population"]
    notes: tuple[str, ...] = ()

    def __str__(self) -> str:
        unmatched = ""
        if self.only_in_baseline or self.only_in_candidate:
            unmatched = (
                f"; {len(self.only_in_baseline)} items only in baseline, "
                f"{len(self.only_in_candidate)} only in candidate"
            )
        mde = "none below 1" if self.mde is None else f"{self.mde:.3g}"
        return (
            f"{self.verdict}: {self.metric} {self.baseline:.4g} -> {self.candidate:.4g}, "
            f"delta {self.delta:+.4g} [{self.interval.low:+.4g}, {self.interval.high:+.4g}], "
            f"p={self.p_value:.3g} ({self.p_value_method}), MDE {mde}{unmatched}"
        )


#: When two paired runs are identical (the rule's words).
SAME_ITEMS = "every compared item scores the same in both runs"


def _verdict(
    interval: Interval, identical: bool, test: str, metric: Metric, same: str = SAME_ITEMS
) -> tuple[str, str]:
    """The verdict read off ``interval`` (a rise is an improvement unless lower is better), and its rule.

    ``same`` says in the rule when the runs are ``identical``.
    """
    level = f"{interval.level * 100:g}%"
    better, worse = ("above", "below") if metric.higher_is_better else ("below", "above")
    rule = (
        f"identical if {same}; otherwise improvement if the "
        f"{level} interval of delta lies {better} 0, regression if it lies {worse} 0, else within_noise "
        f"(interval and p from the {test}; p < {1 - interval.level:g} exactly when the interval excludes 0)"
    )
    rise, fall = ("improvement", "regression") if metric.higher_is_better else ("regression", "improvement")
    if identical:
        return "identical", rule
    if interval.low > 0:
        return rise, rule
    if interval.high < 0:
        return fall, rule
    return "within_noise", rule


def _two_sided_p(delta: float, se: float, df: float | None) -> float:
    """The two-sided p-value of ``delta / se``: Student's t at ``df`` degrees of freedom (None: normal)."""
    if se == 0:
        return 1.0 if delta == 0 else 0.0
    z = -abs(delta) / se
    return float(2 * (_scipy.ndtr(z) if df is None else _scipy.stdtr(df, z)))


def in_unit(*arrays: FloatArray) -> bool:
    """True when every per-item value lies in [0, 1] (then a difference lies in [-1, 1])."""
    return all(bool(np.all((values >= 0.0) & (values <= 1.0))) for values in arrays)


def bounded_interval(
    delta: float, half_low: float, half_high: float, alpha: float, method: str, n: int, se: float, unit: bool
) -> Interval:
    """The interval ``[delta - half_low, delta + half_high]``, clipped to [-1, 1] for scores in [0, 1]."""
    low, high = delta - half_low, delta + half_high
    clipped = unit and (low < -1.0 or high > 1.0)
    if clipped:
        low, high = max(low, -1.0), min(high, 1.0)
    return Interval(delta, low, high, 1 - alpha, method, n, se, (-1.0, 1.0) if clipped else None)


def _notes(interval: Interval, mde: float | None, items: int, unit: bool) -> tuple[str, ...]:
    """What the output must say beside the verdict: clipping, too few items to test."""
    notes = []
    if interval.clipped_to is not None:
        notes.append("interval clipped to [-1, 1]: a difference of scores in [0, 1] lies there")
    if unit and mde is None:
        notes.append(
            f"too few items to test: with {items} items no change of a score in [0, 1] is detected "
            f"with {MDE_POWER:.0%} power (its minimum detectable effect exceeds 1)"
        )
    return tuple(notes)


@dataclass(frozen=True)
class Sides:
    """What a comparison compares: the metric, both runs' items and the values its test reads."""

    metric: str  # as the caller named it
    resolved: Metric
    k: int | None
    alpha: float
    a: Items
    b: Items
    values_a: FloatArray  # the compared values: the paired items' (paired), every item's (unpaired)
    values_b: FloatArray
    paired_items: int
    only_a: tuple[Hashable, ...] = ()
    only_b: tuple[Hashable, ...] = ()
    estimand: str = ESTIMANDS["population"]


def comparison(
    sides: Sides,
    design: str,
    interval: Interval,
    df: float,
    test: str,
    *,
    identical: bool,
    unit: bool,
    tested: int,
    p_value: float | None = None,
    method: str | None = None,
    same: str = SAME_ITEMS,
    notes: tuple[str, ...] = (),
    se_floor: float | None = None,
    sign_flip: tuple[float, str] | tuple[None, None] = (None, None),
) -> Comparison:
    """The one builder of a :class:`Comparison`, from the interval of ``delta`` the ``test`` gives.

    ``delta`` and ``se`` are ``interval``'s; from them follow the two-sided t p-value at ``df``
    degrees of freedom (unless ``p_value`` is another test's, named ``method``), the normal
    p-value, the MDE (``tested`` units, bounded to [-1, 1] when the scores are in [0, 1], ``unit``),
    the verdict with its rule, and the notes (after which ``notes`` come).
    """
    delta, se = interval.estimate, interval.se
    assert se is not None  # every comparison's interval carries its SE
    mde = bounded_effect(se, df, sides.alpha, MDE_POWER, 1.0 if unit else math.inf) if se > 0 else 0.0
    verdict, rule = _verdict(interval, identical, test, sides.resolved, same)
    return Comparison(
        design=design,
        metric=sides.metric,
        k=sides.k,
        baseline=float(sides.values_a.mean()),
        candidate=float(sides.values_b.mean()),
        delta=delta,
        se=se,
        interval=interval,
        p_value=_two_sided_p(delta, se, df) if p_value is None else p_value,
        p_value_method=test if method is None else method,
        p_value_normal=_two_sided_p(delta, se, None),
        mde=mde,
        alpha=sides.alpha,
        verdict=verdict,
        rule=rule,
        items_baseline=int(sides.a.values.size),
        items_candidate=int(sides.b.values.size),
        paired_items=sides.paired_items,
        only_in_baseline=sides.only_a,
        only_in_candidate=sides.only_b,
        se_floor=se_floor,
        p_value_sign_flip=sign_flip[0],
        sign_flip_method=sign_flip[1],
        estimand=sides.estimand,
        notes=_notes(interval, mde, tested, unit) + notes,
    )
