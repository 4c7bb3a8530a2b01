r"""What does a solved task cost?  Cost, latency, tokens and steps per success, with item-clustered intervals.

A run of ``m`` items, item ``i`` with trials whose quantity (dollars, seconds, tokens, steps) is
known, gives per-item totals: :math:`Y_i` the quantity summed over those trials, :math:`X_i`
their successes (or, for a figure *per task*, their number).  The figure is the **ratio
estimator**

.. math::

    \hat R = \frac{\sum_i Y_i}{\sum_i X_i}
    \qquad\text{(total cost / solved trials)},

which estimates :math:`\mathbb{E}[Y]/\mathbb{E}[X]`: the mean cost of a trial over the mean
success of a trial, for items like these (a population of items, each tried a few times).  Trials
of one item share its difficulty, so items, not trials, are the independent units: the interval is
clustered by item.  Costs are heavy-tailed (a few runs cost far more than the rest), so the
interval is built on the log scale, where the ratio's sampling distribution is far closer to
normal, with the jackknife over items:

.. math::

    \widehat{\mathrm{Var}}(\log\hat R) = \frac{m-1}{m}\sum_i
        \bigl(\log\hat R_{(i)} - \overline{\log\hat R_{(\cdot)}}\bigr)^2, \qquad
    \hat R\,\exp\bigl(\pm\, t_{m-1}^{-1}(1 - \alpha/2)\,\widehat{\mathrm{SE}}\bigr),

with :math:`\hat R_{(i)}` the ratio without item ``i``.  When leaving one item out leaves no
success (one item holds them all) the delta method stands in:
:math:`\frac{m}{m-1}\sum_i u_i^2` with :math:`u_i = Y_i/\sum_j Y_j - X_i/\sum_j X_j`, the item's
influence on :math:`\log\hat R`.  The method is named in every interval.

Measured coverage of the 95% interval (docs/agents.md, ``tests/stats/test_effort_simulation.py``):
100 items with pass rates from Beta(4, 2), each trial's cost log-normal (sigma 1) around a
log-normal item cost level: 94.4-94.5% with 3 or 1-7 trials per item, 93.4% with one trial per
item (the hardest case; 4,000 replications each).  In exploratory runs while choosing the method
(not in the test suite) the delta method alone gave 0.2-0.6 points less, the linear-scale delta
method and the percentile bootstrap over items 91-93% with one trial per item.

The variance is floored by trial noise, so finitely many trials never give a zero-width interval
(every trial solved at the same cost makes every :math:`u_i` zero): at least
:data:`FLOOR_SHARE` of the binomial variance of the success count, at the Jeffreys plug-in
:math:`\tilde p_i = (c_i + 1/2)/(n_i + 1)`, over :math:`(\sum_i X_i)^2`.  A figure per trial
(``per="trial"``: the cost of a task, solved or not) has no success count to floor by; its log
variance is at least :data:`FLOOR_SHARE` :math:`/ N^2` over its :math:`N` trials (:func:`trial_floor`),
which binds only when (nearly) every trial reports the same value.

**Unknown values.**  A trial whose quantity is unknown (NaN: a target that reports no cost) is
never taken as free.  With ``unknown="exclude"`` (the default) it is left out of both sums (its
success too), so the figure is estimated from the trials whose quantity is known, which is
unbiased when the quantity is missing independently of its size; the result counts those trials
(``unknown_trials``), gives their positions (``unknown_positions``, so the caller can name them)
and says so in a note.  ``unknown="raise"`` refuses them instead.  Errored trials (no outcome) are
not trials here: leave them out, as the readers count them.

References
----------
W. G. Cochran, *Sampling Techniques*, 3rd ed. (1977), section 6.4 (the ratio estimator and its
variance); S. Kapoor, B. Stroebl, et al., "Holistic Agent Leaderboard", arXiv:2510.11977 (2025),
for cost as an axis of agent evaluation.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from trialscore._record import Record
from trialscore._validate import check_choice, check_probability
from trialscore._words import plural
from trialscore.errors import EvaluationError, InsufficientDataError
from trialscore.stats import _scipy
from trialscore.stats._intervals import Interval

__all__ = [
    "FLOOR_SHARE",
    "QUANTITIES",
    "ItemTotals",
    "PerSuccess",
    "item_totals",
    "log_ratio_variance",
    "per_success",
    "ratio_interval",
    "ratio_method",
    "success_floor",
    "trial_floor",
]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

#: The quantities a trial may report, and their unit.
QUANTITIES = {"cost": "USD", "latency": "s", "tokens": "tokens", "steps": "steps"}

#: The variance of the log ratio is floored at this share of the trial noise of the success count.
FLOOR_SHARE = 0.125


def ratio_method(how: str, floored: bool = False, paired: bool = False) -> str:
    """What a ratio's interval is (stated in every result): ``how`` the log ratio's variance was had.

    >>> ratio_method("jackknife")
    'log ratio, jackknife over items, t (df = items - 1)'
    """
    return (
        "paired " * paired
        + f"log ratio, {how} over items, t (df = items - 1)"
        + ", at the trial-noise floor" * floored
    )


@dataclass(frozen=True)
class ItemTotals(Record):
    """One run's per-item totals over the trials whose quantity is known.

    ``ids`` in first-seen order; ``trials`` and ``successes`` count the trials with a known
    quantity, ``total`` sums it; ``unknown`` counts each item's trials whose quantity is unknown
    (``unknown_successes`` those of them that passed) and ``unknown_positions`` gives their
    positions in the input.
    """

    ids: tuple[Hashable, ...]
    trials: IntArray
    successes: IntArray
    total: FloatArray
    unknown: IntArray
    unknown_positions: tuple[int, ...]
    unknown_successes: IntArray

    @property
    def unknown_trials(self) -> int:
        """Trials whose quantity is unknown."""
        return len(self.unknown_positions)


def item_totals(
    items: Sequence[Hashable] | ArrayLike, passed: ArrayLike, values: ArrayLike, *, unknown: str = "exclude"
) -> ItemTotals:
    """Per-item totals of one run's trials: ``items[t]``, ``passed[t]`` (0/1) and ``values[t]`` (NaN unknown).

    >>> totals = item_totals(["a", "a", "b", "b"], [1, 0, 1, 1], [0.5, float("nan"), 1.0, 2.0])
    >>> totals.ids, totals.trials.tolist(), totals.successes.tolist(), totals.total.tolist()
    (('a', 'b'), [1, 2], [1, 2], [0.5, 3.0])
    >>> totals.unknown.tolist(), totals.unknown_positions
    ([1, 0], (1,))
    """
    policy = check_choice(unknown, "unknown", {"exclude": "exclude", "raise": "raise"})
    keys: list[Hashable] = list(items)  # type: ignore[arg-type]
    outcome = np.asarray(passed)
    quantity = np.asarray(values, dtype=np.float64)
    if outcome.shape != (len(keys),) or quantity.shape != (len(keys),):
        raise EvaluationError(
            f"items, passed and values must be 1-D and of one length; got {len(keys)} items, "
            f"passed of shape {outcome.shape} and values of shape {quantity.shape}"
        )
    binary = (outcome == 0) | (outcome == 1)  # np.isin's answer, without its set-up
    if not binary.all():
        index = int(np.flatnonzero(~binary)[0])
        raise EvaluationError(
            f"passed must hold 0/1 outcomes; got {outcome[index].item()!r} at trial {index}"
        )
    bad = np.isinf(quantity) | (quantity < 0)
    if bad.any():
        index = int(np.flatnonzero(bad)[0])
        raise EvaluationError(
            f"values must be finite and >= 0 (NaN for unknown); "
            f"got {quantity[index].item()!r} at trial {index}"
        )
    missing = np.isnan(quantity)
    if policy == "raise" and missing.any():
        index = int(np.flatnonzero(missing)[0])
        raise EvaluationError(
            f"values must all be known with unknown='raise'; got NaN at trial {index} "
            f"({plural(int(missing.sum()), 'trial')} unknown)"
        )
    order = dict(zip(dict.fromkeys(keys), itertools.count()))  # codes in order of first appearance
    codes = np.fromiter(map(order.__getitem__, keys), dtype=np.int64, count=len(keys))
    size = len(order)
    known = ~missing
    return ItemTotals(
        ids=tuple(order),
        trials=np.bincount(codes[known], minlength=size).astype(np.int64),
        successes=np.bincount(codes[known], weights=outcome[known].astype(np.float64), minlength=size).astype(
            np.int64
        ),
        total=np.bincount(codes[known], weights=quantity[known], minlength=size).astype(np.float64),
        unknown=np.bincount(codes[missing], minlength=size).astype(np.int64),
        unknown_positions=tuple(int(index) for index in np.flatnonzero(missing)),
        unknown_successes=np.bincount(
            codes[missing], weights=outcome[missing].astype(np.float64), minlength=size
        ).astype(np.int64),
    )


def log_ratio_variance(*terms: tuple[FloatArray, FloatArray, float]) -> tuple[float, str]:
    r"""Variance of :math:`\sum_r s_r \log(\sum_i Y_{ri} / \sum_i X_{ri})` over items, and the method used.

    Each term is ``(Y, X, s)``: per-item numerators and denominators over the same items, and a
    sign (one term: a log ratio; two terms with signs +1 and -1: a paired log ratio of ratios).
    The jackknife over items,
    :math:`\frac{m-1}{m}\sum_i (\theta_{(i)} - \bar\theta_{(\cdot)})^2` with
    :math:`\theta_{(i)}` the figure without item ``i``; when leaving an item out empties a sum
    (one item holds every success) the delta method,
    :math:`\frac{m}{m-1}\sum_i (\sum_r s_r u_{ri})^2` with
    :math:`u_{ri} = Y_{ri}/\sum_j Y_{rj} - X_{ri}/\sum_j X_{rj}`.

    >>> variance, method = log_ratio_variance((np.array([1.0, 3.0, 2.0]), np.array([1.0, 1.0, 1.0]), 1.0))
    >>> round(variance, 4), method
    (0.0874, 'jackknife')
    """
    items = int(terms[0][0].size)
    replicates = np.zeros(items)
    influence = np.zeros(items)
    whole = True
    for numerator, denominator, sign in terms:
        top, bottom = float(numerator.sum()), float(denominator.sum())
        influence += sign * (numerator / top - denominator / bottom)
        rest_top, rest_bottom = top - numerator, bottom - denominator
        if np.all(rest_top > 0) and np.all(rest_bottom > 0):
            replicates += sign * np.log(rest_top / rest_bottom)
        else:
            whole = False
    if whole:
        return (items - 1) / items * float(np.sum((replicates - replicates.mean()) ** 2)), "jackknife"
    return items / (items - 1) * float(np.sum(influence**2)), "delta method"


def trial_floor(trials: int) -> float:
    """The least log variance of a figure per trial over ``trials`` trials: ``FLOOR_SHARE / trials**2``.

    >>> trial_floor(10)
    0.00125
    """
    return FLOOR_SHARE / float(trials) ** 2


def success_floor(successes: IntArray, trials: IntArray) -> float:
    """``FLOOR_SHARE`` of the binomial variance of the success count (Jeffreys plug-in), over its square."""
    used = trials > 0
    rate = (successes[used] + 0.5) / (trials[used] + 1.0)
    noise = float(np.sum(trials[used] * rate * (1.0 - rate)))
    return FLOOR_SHARE * noise / float(successes.sum()) ** 2


def ratio_interval(
    numerator: FloatArray, denominator: FloatArray, floor: float = 0.0, level: float = 0.95
) -> Interval:
    """The interval of ``sum numerator / sum denominator`` over items (module docstring), variance floored.

    >>> print(ratio_interval(np.array([2.0, 1.0, 4.0, 3.0]), np.array([2.0, 1.0, 2.0, 1.0])))
    1.667 [0.7623, 3.644] (95% log ratio, jackknife over items, t (df = items - 1), n=4)
    """
    level = check_probability(level, "level")
    items = int(numerator.size)
    if items < 2:
        raise InsufficientDataError(
            f"a clustered interval needs at least 2 items; got {items}", unit="items", needed=2, got=items
        )
    if float(denominator.sum()) <= 0:
        raise InsufficientDataError(
            "the ratio needs a positive denominator (a success, or a trial); got 0", unit="successes",
            needed=1, got=0,
        )  # fmt: skip
    if float(numerator.sum()) == 0:
        return Interval(0.0, 0.0, 0.0, level, "every known value is 0", items, 0.0)
    spread, how = log_ratio_variance((numerator, denominator, 1.0))
    variance = max(spread, floor)
    half = float(_scipy.stdtrit(items - 1, 0.5 + level / 2)) * math.sqrt(variance)
    estimate = float(numerator.sum()) / float(denominator.sum())
    return Interval(
        estimate,
        estimate * math.exp(-half),
        estimate * math.exp(half),
        level,
        ratio_method(how, spread < floor),
        items,
        estimate * math.sqrt(variance),
    )


@dataclass(frozen=True)
class PerSuccess(Record):
    """A quantity per solved trial (or per trial, ``per="trial"``), with its interval and what was left out.

    ``interval`` holds the estimate (``total / successes``); ``unknown_trials`` trials had no known
    quantity and were left out of both sums (``unknown_positions`` says which, ``unknown_items``
    the items they belong to).  ``notes`` are what an output must print beside the figure.
    """

    quantity: str
    unit: str
    per: str
    interval: Interval
    total: float
    successes: int
    trials: int
    items: int
    unknown_trials: int
    unknown_positions: tuple[int, ...]
    unknown_items: tuple[Hashable, ...]
    unknown_policy: str
    notes: tuple[str, ...] = ()

    @property
    def estimate(self) -> float:
        """The figure itself."""
        return self.interval.estimate

    def __str__(self) -> str:
        unknown = f"; {plural(self.unknown_trials, 'trial')} of unknown {self.quantity} left out" * bool(
            self.unknown_trials
        )
        return (
            f"{self.quantity} per {self.per}: {self.interval} {self.unit}; "
            f"{self.total:.4g} over {plural(self.successes, 'success', 'successes')} "
            f"in {plural(self.trials, 'trial')}" + unknown
        )


def per_success(
    items: Sequence[Hashable] | ArrayLike,
    passed: ArrayLike,
    values: ArrayLike,
    *,
    quantity: str = "cost",
    per: str = "success",
    level: float = 0.95,
    unknown: str = "exclude",
) -> PerSuccess:
    """``quantity`` per solved trial (``per="success"``) or per trial (``per="trial"``), clustered by item.

    One row per trial: ``items`` its item id, ``passed`` its 0/1 outcome and ``values`` its
    quantity (``quantity``: ``"cost"`` in USD, ``"latency"`` in seconds, ``"tokens"`` or
    ``"steps"``), NaN where unknown.  Formula, interval and the treatment of unknown values in
    the module docstring.

    >>> result = per_success(["a", "a", "b", "b", "c", "c"], [1, 0, 1, 1, 0, 1],
    ...                      [0.25, 0.5, 0.5, float("nan"), 0.75, 0.25])
    >>> round(result.estimate, 4), result.successes, result.unknown_trials, result.unknown_items
    (0.75, 3, 1, ('b',))
    >>> print(result)  # doctest: +NORMALIZE_WHITESPACE
    cost per success: 0.75 [0.3248, 1.732] (95% log ratio, jackknife over items, t (df = items - 1),
    n=3) USD; 2.25 over 3 successes in 5 trials; 1 trial of unknown cost left out
    """
    name = check_choice(quantity, "quantity", {key: key for key in QUANTITIES})
    per = check_choice(per, "per", {"success": "success", "trial": "trial"})
    totals = item_totals(items, passed, values, unknown=unknown)
    used = totals.trials > 0
    if not used.any():
        raise InsufficientDataError(
            f"no trial has a known {name} value; {plural(totals.unknown_trials, 'trial')} unknown",
            unit="trials", needed=1, got=0,
        )  # fmt: skip
    denominator = (totals.successes if per == "success" else totals.trials)[used].astype(np.float64)
    successes = int(totals.successes.sum())
    if per == "success" and successes == 0:
        raise InsufficientDataError(
            f"{name} per success needs at least one solved trial; "
            f"got 0 of {plural(int(totals.trials.sum()), 'trial')}",
            unit="successes", needed=1, got=0,
        )  # fmt: skip
    floor = (
        success_floor(totals.successes[used], totals.trials[used])
        if per == "success"
        else trial_floor(int(totals.trials.sum()))
    )
    interval = ratio_interval(totals.total[used], denominator, floor, level)
    unknown_items = (
        tuple(key for key, count in zip(totals.ids, totals.unknown.tolist(), strict=True) if count)
        if totals.unknown_trials
        else ()
    )
    notes = []
    if totals.unknown_trials:
        notes.append(
            f"{plural(totals.unknown_trials, 'trial')} of {plural(len(unknown_items), 'item')} had no known "
            f"{name}: left out of the total and of the {'successes' if per == 'success' else 'trials'} "
            "(never taken as free)"
        )
    return PerSuccess(
        quantity=name,
        unit=QUANTITIES[name],
        per=per,
        interval=interval,
        total=float(totals.total.sum()),
        successes=successes,
        trials=int(totals.trials.sum()),
        items=int(used.sum()),
        unknown_trials=totals.unknown_trials,
        unknown_positions=totals.unknown_positions,
        unknown_items=unknown_items,
        unknown_policy=str(unknown),
        notes=tuple(notes),
    )
