r"""Judge noise as a variance component, and how to spend a budget of model and judge calls.

With ``R`` judge calls on each of ``K`` trials of each of ``M`` items, a grade is
:math:`g_{itr} = \mu + a_i + b_{it} + e_{itr}`: the item's own level, the trial's departure from
it, and the judge's call-to-call noise on one frozen output.  Their variances

* :math:`\sigma^2_{\text{item}} = \mathrm{Var}(E[g \mid i])`,
* :math:`\sigma^2_{\text{trial}} = E\,\mathrm{Var}(E[g \mid i, t] \mid i)`,
* :math:`\sigma^2_{\text{judge}} = E\,\mathrm{Var}(g \mid i, t)`

are estimated by the nested method of moments, unbiased also when items have different
numbers of trials and trials different numbers of calls: with :math:`s^2_{it}` the sample
variance (``ddof=1``) of trial :math:`(i, t)`'s :math:`R_{it}` grades, :math:`s^2_i` that of item
:math:`i`'s trial means and :math:`s^2` that of the item means (each the mean of its trial means),

.. math::

    \hat\sigma^2_{\text{judge}} = \overline{s^2_{it}}, \quad
    \hat\sigma^2_{\text{trial}} = \overline{s^2_i - \tfrac{1}{K_i}\textstyle\sum_t s^2_{it}/R_{it}},
    \quad
    \hat\sigma^2_{\text{item}} = s^2 - \overline{s^2_i / K_i}

(for balanced data the ANOVA estimators :math:`\mathrm{MS}_{\text{judge}}`,
:math:`(\mathrm{MS}_{\text{trial}} - \mathrm{MS}_{\text{judge}})/R`,
:math:`(\mathrm{MS}_{\text{item}} - \mathrm{MS}_{\text{trial}})/KR`).  Unbiased estimates can
fall below 0 by chance; they are reported as they are (a negative one reads as 0).

The variance of the mean score over items is then

.. math::

    \mathrm{Var}(\bar g) = \frac{1}{M}\Bigl(\sigma^2_{\text{item}} + \frac{\sigma^2_{\text{trial}}}{K}
        + \frac{\sigma^2_{\text{judge}}}{KR}\Bigr),

and a budget of :math:`C` calls, each trial costing one model call and :math:`R` judge calls
(each worth ``judge_cost`` model calls), buys the :math:`(K, R)` with
:math:`MK(1 + cR) \le C` that makes it smallest.  Without the integer constraint the best
:math:`R = \sqrt{\sigma^2_{\text{judge}} / (c\,\sigma^2_{\text{trial}})}` (the classic two-stage
allocation): judge repeats pay when the judge is noisier than the trials are.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from trialscore._record import Record
from trialscore._validate import check_integer, check_probability, check_real
from trialscore.errors import EvaluationError, InsufficientDataError
from trialscore.stats._intervals import normal_quantile

__all__ = ["JudgeBudget", "JudgeDesign", "JudgeVariance", "judge_variance", "plan_judge_budget"]

FloatArray = NDArray[np.float64]


@dataclass(frozen=True)
class JudgeVariance(Record):
    """The item / trial / judge split of the variance of one grade (module docstring).

    ``se`` is the standard error of the mean grade over items as measured (the sample standard
    deviation of the item means over :math:`\\sqrt M`).
    """

    items: int
    mean_trials: float
    mean_repeats: float
    mean: float
    item: float
    trial: float
    judge: float
    se: float

    def __str__(self) -> str:
        total = max(self.item, 0.0) + max(self.trial, 0.0) + max(self.judge, 0.0)
        shares = [
            max(part, 0.0) / total if total > 0 else 0.0 for part in (self.item, self.trial, self.judge)
        ]
        return (
            f"variance of one grade: item {self.item:.4g} ({shares[0]:.0%}), trial {self.trial:.4g} "
            f"({shares[1]:.0%}), judge {self.judge:.4g} ({shares[2]:.0%}); "
            f"mean {self.mean:.4g}, SE {self.se:.4g}"
        )


def judge_variance(grades: ArrayLike) -> JudgeVariance:
    """Split the variance of judged grades into item, trial and judge components.

    ``grades`` is items x trials x repeats (one judge's grades, NaN where absent; a
    :class:`~trialscore.stats.GradeTable`'s ``judge_cube(judge)``).  Every item needs 2 graded
    trials and every graded trial 2 grades; at least 2 items.

    >>> grades = [[[1, 1], [1, 0], [0, 0]], [[1, 1], [1, 1], [1, 0]], [[0, 0], [0, 1], [0, 0]]]
    >>> print(judge_variance(grades))
    variance of one grade: item 0.06481 (23%), trial 0.05556 (19%), judge 0.1667 (58%);
    mean 0.5, SE 0.1925
    """
    cube = np.asarray(grades, dtype=np.float64)
    if cube.ndim != 3:
        raise EvaluationError(f"grades must be an items x trials x repeats array; got shape {cube.shape}")
    if np.isinf(cube).any():
        raise EvaluationError("grades must be finite numbers or NaN (absent); got an infinity")
    calls = (~np.isnan(cube)).sum(axis=2)
    graded = calls > 0
    if (graded & (calls < 2)).any():
        item, trial = (int(v) for v in np.argwhere(graded & (calls < 2))[0])
        raise InsufficientDataError(
            "grades must hold at least 2 judge calls on every graded trial; "
            f"item {item}, trial {trial} has 1",
            unit="judge repeats",
            needed=2,
            got=1,
        )
    trials = graded.sum(axis=1)
    if cube.shape[0] < 2 or (trials < 2).any():
        short = int(np.argmin(trials)) if cube.shape[0] else 0
        raise InsufficientDataError(
            "grades must hold at least 2 items, each with at least 2 graded trials; "
            f"got {cube.shape[0]} items, item {short} with {int(trials[short]) if trials.size else 0} trials",
            unit="trials",
            needed=2,
        )
    with np.errstate(invalid="ignore", divide="ignore"):
        trial_means = np.where(graded, np.nansum(cube, axis=2) / calls, np.nan)
        within = np.nansum((cube - trial_means[..., None]) ** 2, axis=2) / (calls - 1)
    repeats = np.where(graded, calls, 1)
    judge = float(within[graded].mean())
    item_means = np.nanmean(trial_means, axis=1)
    between_trials = np.nanvar(trial_means, axis=1, ddof=1)
    noise = np.where(graded, within / repeats, 0.0).sum(axis=1) / trials
    trial_part = float(np.mean(between_trials - noise))
    item_part = float(item_means.var(ddof=1) - np.mean(between_trials / trials))
    return JudgeVariance(
        items=int(cube.shape[0]),
        mean_trials=float(trials.mean()),
        mean_repeats=float(calls[graded].mean()),
        mean=float(item_means.mean()),
        item=item_part,
        trial=trial_part,
        judge=judge,
        se=float(item_means.std(ddof=1)) / math.sqrt(cube.shape[0]),
    )


@dataclass(frozen=True)
class JudgeDesign(Record):
    """One affordable design: ``trials`` per item, ``repeats`` judge calls per trial, its calls and SE."""

    trials: int
    repeats: int
    calls: float
    se: float


@dataclass(frozen=True)
class JudgeBudget(Record):
    """The (trials, judge repeats) that give the narrowest interval for a budget of calls.

    ``width`` is the predicted width of the normal interval of the mean at ``level``;
    ``designs`` every design considered (for each number of repeats, the most trials it affords).
    """

    budget: float
    items: int
    judge_cost: float
    trials: int
    repeats: int
    calls: float
    se: float
    width: float
    level: float
    designs: tuple[JudgeDesign, ...]

    def __str__(self) -> str:
        return (
            f"{self.trials} trials an item, {self.repeats} judge calls a trial: {self.calls:g} of "
            f"{self.budget:g} calls on {self.items} items, "
            f"SE {self.se:.4g} ({self.level:.0%} width {self.width:.4g})"
        )


def plan_judge_budget(
    variance: JudgeVariance,
    budget: float,
    items: int | None = None,
    *,
    judge_cost: float = 1.0,
    level: float = 0.95,
) -> JudgeBudget:
    """For a budget of model plus judge calls, the (trials, judge repeats) with the smallest SE.

    ``variance`` gives the components (:func:`judge_variance` on a pilot with repeats; a negative
    component counts as 0); ``items`` defaults to the pilot's.  A trial costs one model call and
    ``repeats`` judge calls of ``judge_cost`` model calls each.  Ties go to fewer calls.

    >>> pilot = JudgeVariance(100, 3, 3, 0.6, item=0.15, trial=0.02, judge=0.08, se=0.04)
    >>> print(plan_judge_budget(pilot, budget=3000))
    10 trials an item, 2 judge calls a trial: 3000 of 3000 calls on 100 items,
    SE 0.0395 (95% width 0.1548)
    """
    m = check_integer(variance.items if items is None else items, "items", 1)
    cost = check_real(judge_cost, "judge_cost", 0.0)
    total = check_real(budget, "budget", 0.0)
    level = check_probability(level, "level")
    if m * (1.0 + cost) > total:
        raise EvaluationError(
            "budget must afford one trial and one judge call per item "
            f"({m * (1.0 + cost):g} calls); got {total:g}"
        )
    item, trial, judge = (max(part, 0.0) for part in (variance.item, variance.trial, variance.judge))
    designs = []
    repeats = 1
    while m * (1.0 + cost * repeats) <= total:
        trials = int(total // (m * (1.0 + cost * repeats)))
        se = math.sqrt((item + trial / trials + judge / (trials * repeats)) / m)
        designs.append(JudgeDesign(trials, repeats, m * trials * (1.0 + cost * repeats), se))
        repeats += 1
        if cost == 0.0 and repeats > 1000:
            break
    best = min(designs, key=lambda design: (design.se, design.calls))
    width = 2.0 * normal_quantile(level) * best.se
    return JudgeBudget(
        total, m, cost, best.trials, best.repeats, best.calls, best.se, width, level, tuple(designs)
    )
