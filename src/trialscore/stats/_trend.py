r"""A trend across all runs of a history, and a change at the latest run, with one false-alarm rate.

A history is ``R >= 2`` runs in time order, each a bank of per-item counts.  Two tests look at it:

**Trend across runs** (the slope of pass@1 on the run index :math:`x_r = r`).

*Paired* (every run names its items, and at least 2 items are scored in at least 2 runs):
each item :math:`i` scored in the set of runs :math:`S_i` (:math:`|S_i| \ge 2`) has its own
least-squares slope of its pass rate :math:`y_{ir} = c_{ir}/n_{ir}`,

.. math::

    \beta_i = \frac{\sum_{r \in S_i} (x_r - \bar x_i)(y_{ir} - \bar y_i)}
                   {\sum_{r \in S_i} (x_r - \bar x_i)^2},
    \qquad \hat\beta = \frac{1}{M}\sum_i \beta_i,
    \qquad \mathrm{SE} = \max\!\Big(\frac{s_\beta}{\sqrt M},\
        \frac{1}{M}\sqrt{\textstyle\sum_i \sum_{r} w_{ir}^2\, \hat p_i (1-\hat p_i)/n_{ir}}\Big),

with :math:`w_{ir}` the weights of :math:`\beta_i` on :math:`y_{ir}` and :math:`\hat p_i` the
item's pooled pass rate with half a pass and half a failure added, :math:`(c_i + 1/2)/(n_i + 1)`
(so an item that passed or failed every trial still has trial noise, and a saturated history
is never a trend of zero standard error): the item-clustered standard error (items are the independent units,
so the slope uses only within-item change and item difficulty cancels), floored by the trial
noise.  :math:`t = \hat\beta/\mathrm{SE}` with :math:`M - 1` degrees of freedom.

*Unpaired* (otherwise): weighted least squares of the run means :math:`m_r` (pass@1) on
:math:`x_r`, weights :math:`1/v_r` with :math:`v_r = \max(s_r^2/M_r,\ \bar p_r(1-\bar p_r)/N_r)`
(items clustered, floored by the pooled trials :math:`N_r`):
:math:`\hat\beta = \sum w_r (x_r - \bar x_w)(m_r - \bar m_w) / S_{xx}`,
:math:`\mathrm{SE} = 1/\sqrt{S_{xx}}` with :math:`S_{xx} = \sum w_r (x_r - \bar x_w)^2`, a t test
with :math:`\min_r M_r - 1` degrees of freedom (the variances are estimated from few items).

**Change at the latest run**: the latest run against the mean of the earlier ones (per item
:math:`d_i = y_{iR} - \operatorname{mean}_{r < R} y_{ir}`, a t test over items with the same
trial-noise floor; unpaired: :math:`m_R` against the inverse-variance mean of the earlier runs,
a t test with the same degrees of freedom).

**One false-alarm rate.**  With ``R = 2`` the two tests are one (the slope over two runs is the
change) and it is judged at ``alpha``.  With ``R >= 3`` each is judged at ``alpha / 2``
(Bonferroni), so the chance that a history with no trend and no change is called improving or
declining is at most ``alpha``; tests/stats/test_stats_trend.py checks it in simulation.
The verdict is the direction of the trend when the trend test rejects, else of the change when
that rejects, else ``stable``.  Beside it, each test's minimum detectable effect at 80% power
(:func:`~trialscore.stats._power.detectable_effect` of its SE at its level and degrees of freedom):
``slope_mdd``, the smallest drift per run the trend test finds 4 times in 5, and ``change_mdd`` the
smallest one-off change at the latest run; ``stable`` next to an MDD of 0.08 per run says little
about a drift of 0.02.

>>> import numpy as np
>>> rng = np.random.default_rng(1)
>>> p = rng.beta(3, 2, size=60)
>>> runs = [(rng.random((60, 5)) < np.clip(p - 0.04 * r, 0, 1)[:, None]).astype(int) for r in range(5)]
>>> ids = [np.arange(60)] * 5
>>> result = history_trend(runs, ids)
>>> result.verdict, result.design, result.slope < 0, result.slope_p < 0.025
('declining', 'paired', True, True)
>>> round(result.slope_mdd, 4), round(result.change_mdd, 4)  # drift per run, one-off change: 80% power
(0.0264, 0.0999)
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from trialscore._record import Record
from trialscore.core.bank import Bank, as_bank
from trialscore.errors import EvaluationError
from trialscore.stats import _scipy
from trialscore.stats._power import bounded_effect

__all__ = ["HistoryTrend", "history_trend"]


@dataclass(frozen=True)
class HistoryTrend(Record):
    """The trend test across runs and the change test at the latest run, and the verdict they give.

    ``slope`` is the change of pass@1 per run; ``change`` is the latest run's pass@1 minus the
    earlier runs' mean; each has its standard error and two-sided p-value; ``alpha_each`` is the
    level each test is judged at (``alpha`` for two runs, ``alpha / 2`` otherwise).
    """

    runs: int
    design: str
    items: int
    slope: float
    slope_se: float
    slope_p: float
    change: float
    change_se: float
    change_p: float
    alpha: float
    alpha_each: float
    verdict: str
    rule: str
    slope_mdd: float | None = None
    change_mdd: float | None = None


def _p_value(estimate: float, se: float, df: int) -> float:
    if se == 0 or not math.isfinite(se):
        return 1.0 if estimate == 0 else 0.0
    return float(2 * _scipy.stdtr(df, -abs(estimate) / se))


def _mdd(se: float, df: int, alpha: float) -> float | None:
    """The test's minimum detectable effect at 80% power, None when no pass-rate change reaches it."""
    if se == 0 or not math.isfinite(se):
        return None
    return bounded_effect(se, max(df, 1), alpha, 0.8, 1.0)


def _paired(
    banks: Sequence[Bank], ids: Sequence[Sequence[Hashable]]
) -> tuple[int, tuple[float, float, float, int], tuple[float, float, float, int]] | None:
    """(items, slope test, change test) on the items' own pass rates; None when too few items pair."""
    latest = len(banks) - 1
    index: dict[Hashable, int] = {}
    for names in ids:
        for name in names:
            index.setdefault(name, len(index))
    n = np.zeros((len(index), len(banks)))
    c = np.zeros_like(n)
    for r, (bank, names) in enumerate(zip(banks, ids, strict=True)):
        rows = np.fromiter((index[name] for name in names), dtype=np.intp, count=len(names))
        n[rows, r], c[rows, r] = bank.n, bank.c
    keep = (n > 0).sum(axis=1) >= 2  # items scored in at least two runs
    n, c = n[keep], c[keep]
    present = n > 0
    runs = present.sum(axis=1)
    # per item, over the runs it was scored in: the least-squares slope of its pass rate, its trial noise
    x = np.arange(len(banks), dtype=float)
    scored_n = np.where(present, n, 1.0)
    y = np.where(present, c / scored_n, 0.0)
    pooled = (c.sum(axis=1) + 0.5) / (n.sum(axis=1) + 1.0)  # never 0 or 1: the noise floor holds
    noise = np.where(present, (pooled * (1 - pooled))[:, None] / scored_n, 0.0)
    centred = np.where(present, x - (present * x).sum(axis=1, keepdims=True) / runs[:, None], 0.0)
    weights = centred / (centred**2).sum(axis=1, keepdims=True)
    slopes = (weights * y).sum(axis=1)
    slope_noise = (weights**2 * noise).sum(axis=1)
    # the latest run against the mean of the item's earlier runs (items scored in the latest run)
    now = present[:, latest]
    earlier = present[now].copy()
    earlier[:, latest] = False
    k = earlier.sum(axis=1)
    changes = y[now, latest] - (y[now] * earlier).sum(axis=1) / k
    change_noise = noise[now, latest] + (noise[now] * earlier).sum(axis=1) / k**2
    if slopes.size < 2:
        return None
    tests = []
    for values, noise_terms in ((slopes, slope_noise), (changes, change_noise)):
        m = values.size
        if m < 2:
            tests.append((0.0, math.inf, 1.0, 1))
            continue
        estimate = math.fsum(values) / m
        se = max(float(np.std(values, ddof=1)) / math.sqrt(m), math.sqrt(math.fsum(noise_terms)) / m)
        tests.append((estimate, se, _p_value(estimate, se, m - 1), m - 1))
    return len(slopes), tests[0], tests[1]


def _unpaired(
    banks: Sequence[Bank],
) -> tuple[int, tuple[float, float, float, int], tuple[float, float, float, int]]:
    """(items of the latest run, slope test, change test) on the run means, weighted least squares."""
    means, variances, scored_items = [], [], []
    for bank in banks:
        scored = bank.n > 0
        n, c = (bank.n, bank.c) if scored.all() else (bank.n[scored], bank.c[scored])
        rates = c / n
        items = rates.size
        mean = float(rates.mean())
        spread = float(rates.var(ddof=1)) / items if items > 1 else 0.0
        trials = n.sum()
        pooled = float(c.sum() / trials)
        floor = pooled * (1 - pooled) / float(trials)
        means.append(mean)
        variances.append(max(spread, floor, 1e-12))
        scored_items.append(items)
    m, v = np.array(means), np.array(variances)
    x = np.arange(len(banks), dtype=float)
    w = 1 / v
    center = (w @ x) / w.sum()
    sxx = float(w @ (x - center) ** 2)
    slope = float(w @ ((x - center) * (m - (w @ m) / w.sum()))) / sxx
    slope_se = 1 / math.sqrt(sxx)
    earlier_w = w[:-1]
    earlier = float(earlier_w @ m[:-1]) / float(earlier_w.sum())
    change = float(m[-1] - earlier)
    change_se = math.sqrt(float(v[-1]) + 1 / float(earlier_w.sum()))
    df = max(1, min(scored_items) - 1)
    return (
        scored_items[-1],
        (slope, slope_se, _p_value(slope, slope_se, df), df),
        (change, change_se, _p_value(change, change_se, df), df),
    )


def history_trend(
    runs: Sequence[ArrayLike | Bank],
    ids: Sequence[Sequence[Hashable] | None] | None = None,
    alpha: float = 0.05,
) -> HistoryTrend:
    """Test a history of runs (oldest first) for a trend in pass@1 and for a change at the latest run.

    Parameters
    ----------
    runs : two or more runs, oldest first; each a :class:`~trialscore.core.bank.Bank`, an items x
        trials 0/1 matrix or ragged outcome lists (errored trials left out)
    ids : the item ids of each run (a bank's own ids are used when None); with ids for every run
        the tests are paired by item, otherwise they compare run means
    alpha : the false-alarm rate of the verdict (see the module docstring)

    Returns
    -------
    HistoryTrend
        Both tests, their p-values and the verdict: ``improving``, ``declining`` or ``stable``.
    """
    if not 0 < alpha < 1:
        raise EvaluationError(f"alpha must be between 0 and 1 (exclusive); got {alpha!r}")
    if len(runs) < 2:
        raise EvaluationError(f"runs must hold at least 2 runs to test a trend; got {len(runs)}")
    banks = [as_bank(run, f"runs[{index}]") for index, run in enumerate(runs)]
    for index, bank in enumerate(banks):
        if not (bank.n > 0).any():
            raise EvaluationError(f"runs[{index}] has no scored trial")
    names = (
        list(ids) if ids is not None else [None if bank.ids is None else bank.ids.tolist() for bank in banks]
    )
    if len(names) != len(banks):
        raise EvaluationError(f"ids must give one entry per run; got {len(names)} for {len(banks)} runs")
    paired = None
    if all(entry is not None for entry in names):
        for index, (bank, entry) in enumerate(zip(banks, names, strict=True)):
            if len(entry) != bank.items:  # type: ignore[arg-type]
                raise EvaluationError(
                    f"ids[{index}] must name each of the {bank.items} items of runs[{index}]"
                )
        paired = _paired(banks, names)  # type: ignore[arg-type]
    design = "paired" if paired is not None else "unpaired"
    items, (slope, slope_se, slope_p, slope_df), (change, change_se, change_p, change_df) = (
        paired or _unpaired(banks)
    )
    each = alpha if len(banks) == 2 else alpha / 2
    verdict = "stable"
    if slope_p < each and slope != 0:
        verdict = "improving" if slope > 0 else "declining"
    elif change_p < each and change != 0:
        verdict = "improving" if change > 0 else "declining"
    rule = (
        f"{design}: trend = slope of pass@1 over the {len(banks)} runs, change = latest run minus the "
        f"earlier runs' mean; improving or declining when the trend (else the change) is significant at "
        f"{each:g} each{' (alpha / 2: Bonferroni over the two tests)' if len(banks) > 2 else ''}, else stable"
    )
    return HistoryTrend(
        runs=len(banks),
        design=design,
        items=items,
        slope=slope,
        slope_se=slope_se,
        slope_p=slope_p,
        change=change,
        change_se=change_se,
        change_p=change_p,
        alpha=alpha,
        alpha_each=each,
        verdict=verdict,
        rule=rule,
        slope_mdd=_mdd(slope_se, slope_df, each),
        change_mdd=_mdd(change_se, change_df, each),
    )
