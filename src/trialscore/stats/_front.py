r"""The cost-success front with uncertainty: which targets are worth their cost, and how sure is that?

For each target (a model, an agent, a configuration) run on the same items, two figures with
intervals:

* **pass rate**: the mean over items of each item's pass rate :math:`c_i/n_i` (every trial with
  an outcome, whether its cost is known or not), with the default interval of
  :func:`~trialscore.stats.item_interval`;
* **cost per task**: the mean cost of one trial, :math:`\sum_i Y_i / \sum_i n_i^{\$}` over the
  trials whose cost is known, with the item-clustered ratio interval of
  :mod:`trialscore.stats._effort`;
* **cost per success** beside them (not an axis of the front): :math:`\sum_i Y_i / \sum_i c_i^{\$}`
  over the same trials, :math:`c_i^{\$}` their successes, with the ratio interval floored by
  trial noise (:func:`~trialscore.stats._effort.success_floor`); None for a target with no solved
  trial of known cost.

A target is **on the front** when no other target is at least as good on both (a pass rate at
least as high and a cost at most as low) and better on one.  The probability that it is on the
front comes from a bootstrap over items: ``replicates`` resamples of the shared items (one
multinomial draw of item weights per replicate, the same items for every target, so that
targets tried on the same hard items stay paired), each giving every target's pass rate and cost
per task and so a front; the probability is the share of replicates whose front holds the
target.

Measured calibration (docs/agents.md, ``tests/stats/test_front_simulation.py``): at 200 items,
targets truly on the front get a probability of at least 0.9 in at least 90% of seeded runs.

Only items every target holds (with a known cost) enter; the others are counted
(``items_dropped``).  Trials of unknown cost count for the pass rate and are left out of the
cost, counted per target.

Reference
---------
S. Kapoor, B. Stroebl, et al., "Holistic Agent Leaderboard", arXiv:2510.11977 (2025), for
cost-accuracy fronts of agents; B. Efron and R. Tibshirani, *An Introduction to the Bootstrap*
(1993), for the bootstrap over independent units.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from trialscore._record import Record
from trialscore._validate import check_integer, check_probability
from trialscore._words import plural
from trialscore.core.bank import Bank
from trialscore.errors import EvaluationError, InsufficientDataError
from trialscore.stats._effort import ItemTotals, ratio_interval, success_floor, trial_floor
from trialscore.stats._intervals import Interval, item_interval
from trialscore.stats._resampling import item_weights

__all__ = ["Front", "FrontPoint", "cost_success_front", "dominated"]

FloatArray = NDArray[np.float64]

#: The bootstrap draws its item weights in blocks of at most this many numbers (replicates x items),
#: so that its memory stays bounded whatever the numbers of items and replicates.
_BLOCK = 1_000_000


@dataclass(frozen=True)
class FrontPoint(Record):
    """One target: its pass rate and cost per task with intervals, on the observed front or not,
    and the bootstrap probability that it is on the front."""

    target: str
    pass_rate: Interval
    cost_per_task: Interval
    on_front: bool
    front_probability: float
    unknown_cost_trials: int
    cost_per_success: Interval | None = None

    def __str__(self) -> str:
        mark = "on the front" if self.on_front else "dominated"
        return (
            f"{self.target}: pass rate {self.pass_rate}, cost per task {self.cost_per_task} USD; {mark}, "
            f"P(on front) {self.front_probability:.3f}"
        )


@dataclass(frozen=True)
class Front(Record):
    """Every target's point, in the order given, and how the probabilities were had."""

    points: tuple[FrontPoint, ...]
    items: int
    items_dropped: int
    replicates: int
    seed: int
    method: str

    def front(self) -> tuple[str, ...]:
        """The targets on the observed front."""
        return tuple(point.target for point in self.points if point.on_front)


def dominated(rates: FloatArray, costs: FloatArray) -> NDArray[np.bool_]:
    """Which columns (targets) another column dominates, row by row (rows: replicates, or one row).

    ``s`` dominates ``t`` when ``rate_s >= rate_t`` and ``cost_s <= cost_t`` with one of them strict.

    >>> dominated(np.array([[0.5, 0.7, 0.6]]), np.array([[1.0, 2.0, 3.0]])).tolist()
    [[False, False, True]]
    """
    rate_s, rate_t = rates[:, :, None], rates[:, None, :]
    cost_s, cost_t = costs[:, :, None], costs[:, None, :]
    beats = (rate_s >= rate_t) & (cost_s <= cost_t) & ((rate_s > rate_t) | (cost_s < cost_t))
    return np.asarray(beats.any(axis=1), dtype=np.bool_)


def _shared_rows(runs: Mapping[str, ItemTotals]) -> tuple[dict[str, NDArray[np.int64]], int]:
    """Each target's rows of the items every target holds with a known cost (in the first's order)."""
    usable = [
        {key: row for row, key in enumerate(totals.ids) if totals.trials[row] > 0} for totals in runs.values()
    ]
    first = next(iter(runs.values()))
    common = [key for key in first.ids if all(key in rows for rows in usable)]
    everything: set[Hashable] = set()
    for totals in runs.values():
        everything.update(totals.ids)
    rows = {
        name: np.array([where[key] for key in common], dtype=np.int64)
        for name, where in zip(runs, usable, strict=True)
    }
    return rows, len(everything) - len(common)


def _outcomes(totals: ItemTotals, picked: NDArray[np.int64]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """The ``picked`` items' trials with an outcome and their passes, known cost or not."""
    n = totals.trials[picked] + totals.unknown[picked]
    c = totals.successes[picked] + totals.unknown_successes[picked]
    return n, c


def _columns(
    runs: Mapping[str, ItemTotals], rows: Mapping[str, NDArray[np.int64]]
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Per shared item (rows) and target (columns): the pass rate over every trial with an outcome, the
    cost total and the trials of known cost."""
    parts = []
    for name, totals in runs.items():
        picked = rows[name]
        n, c = _outcomes(totals, picked)
        parts.append((c / n, totals.total[picked], totals.trials[picked].astype(np.float64)))
    rates, costs, tried = (np.column_stack(column) for column in zip(*parts, strict=True))
    return rates, costs, tried


def _front_shares(
    rates: FloatArray, costs: FloatArray, tried: FloatArray, weights: Iterable[FloatArray]
) -> FloatArray:
    """Each column's share of the bootstrap resamples of the rows (items) whose front holds it.

    Rows are per-item pass rates, cost totals and costed trials (items x targets); ``weights`` are
    blocks of resamples' item weights (:func:`~trialscore.stats._resampling.item_weights`, whose
    rows each add up to the items).
    """
    items = rates.shape[0]
    dominated_count = np.zeros(rates.shape[1])
    replicates = 0
    for block in weights:
        # einsum, not BLAS's matmul: BLAS sums in an order that depends on the block's shape, and a
        # last-digit difference can break a tie on the front; einsum sums each row the same way.
        boot_rates = np.einsum("ri,it->rt", block, rates) / items
        boot_costs = np.einsum("ri,it->rt", block, costs) / np.einsum("ri,it->rt", block, tried)
        dominated_count += dominated(boot_rates, boot_costs).sum(axis=0)
        replicates += block.shape[0]
    return np.asarray(1.0 - dominated_count / replicates, dtype=np.float64)


def cost_success_front(
    runs: Mapping[str, ItemTotals],
    *,
    level: float = 0.95,
    replicates: int = 2000,
    seed: int = 0,
) -> Front:
    """Pass rate and cost per task of each target with intervals, and its probability of being on the front.

    ``runs`` maps each target's name to its :func:`~trialscore.stats._effort.item_totals` (of the
    trials' costs).  Formulas in the module docstring.

    >>> from trialscore.stats._effort import item_totals
    >>> items = [i // 3 for i in range(120)]
    >>> rng = np.random.default_rng(0)
    >>> def run(rate, cost):
    ...     return item_totals(items, rng.random(120) < rate, cost * rng.lognormal(0, 1, 120))
    >>> front = cost_success_front({"small": run(0.5, 0.1), "large": run(0.8, 1.0), "odd": run(0.5, 2.0)})
    >>> front.front(), [round(point.front_probability, 2) for point in front.points]
    (('small', 'large'), [1.0, 1.0, 0.0])
    """
    level = check_probability(level, "level")
    replicates = check_integer(replicates, "replicates", 100)
    if len(runs) < 2:
        raise EvaluationError(f"runs must hold at least 2 targets to draw a front; got {len(runs)}")
    rows, dropped = _shared_rows(runs)
    items = int(next(iter(rows.values())).size)
    if items < 2:
        raise InsufficientDataError(
            f"the targets must share at least 2 items with a known cost; got {items}",
            unit="items", needed=2, got=items,
        )  # fmt: skip
    names = list(runs)
    rates, costs, tried = _columns(runs, rows)
    figures = []
    for column, name in enumerate(names):
        totals, picked = runs[name], rows[name]
        n, c = _outcomes(totals, picked)
        solved = totals.successes[picked]
        floor = trial_floor(int(tried[:, column].sum()))
        figures.append(
            (
                item_interval(Bank.from_counts(n, c), level=level),
                ratio_interval(costs[:, column], tried[:, column], floor, level),
                int(totals.unknown[picked].sum()),
                ratio_interval(
                    costs[:, column],
                    solved.astype(np.float64),
                    success_floor(solved, totals.trials[picked]),
                    level,
                )
                if solved.sum() > 0
                else None,
            )
        )
    probability = _front_shares(rates, costs, tried, item_weights(items, replicates, seed, _BLOCK))
    observed = ~dominated(rates.mean(axis=0)[None, :], (costs.sum(axis=0) / tried.sum(axis=0))[None, :])[0]
    points = tuple(
        FrontPoint(name, rate, cost, bool(observed[column]), float(probability[column]), unknown, per_success)
        for column, (name, (rate, cost, unknown, per_success)) in enumerate(zip(names, figures, strict=True))
    )
    method = (
        f"P(on front): share of {replicates} bootstrap resamples of the {plural(items, 'shared item')} "
        f"(seed {seed}) whose front holds the target (every target resampled on the same items)"
    )
    return Front(points, items, dropped, replicates, seed, method)
