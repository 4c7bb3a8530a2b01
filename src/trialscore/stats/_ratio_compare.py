r"""Did the candidate change what a solved task costs?  The paired ratio of two runs' cost per success.

Two runs of the same items, each with per-item totals (:func:`~trialscore.stats._effort.item_totals`:
:math:`Y_i` the quantity summed over item ``i``'s trials whose quantity is known, :math:`X_i` their
successes), give each its ratio :math:`R = \sum_i Y_i / \sum_i X_i` over the items both hold (with
a known quantity).  The change is the ratio of ratios :math:`\rho = R_B / R_A` (candidate over
baseline), with its interval on the log scale:

.. math::

    \log\hat\rho = \log\hat R_B - \log\hat R_A, \qquad
    \hat\rho\,\exp\bigl(\pm\, t_{m-1}^{-1}(1 - \alpha/2)\,\widehat{\mathrm{SE}}\bigr),

the variance by the jackknife over the ``m`` shared items, leaving an item out of both runs (the
runs stay paired on their hard items; :func:`~trialscore.stats._effort.log_ratio_variance`),
floored by both runs' trial noise (:func:`~trialscore.stats._effort.success_floor`).

:func:`paired_ratio` gives the ratio and its interval at a level; :func:`compare_per_success` reads
a two-sided verdict off it for a quantity where lower is better: ``improvement`` when the interval
lies below 1 (the candidate is cheaper), ``regression`` when it lies above 1, else ``no significant
change``.  :func:`~trialscore.stats._noninferiority.cost_non_inferiority` reads the same interval
against a margin.
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from dataclasses import dataclass

import numpy as np

from trialscore._record import Record
from trialscore._validate import check_choice, check_probability
from trialscore._words import plural
from trialscore.errors import InsufficientDataError
from trialscore.stats import _scipy
from trialscore.stats._effort import QUANTITIES, ItemTotals, log_ratio_variance, ratio_method, success_floor
from trialscore.stats._intervals import Interval

__all__ = ["PairedRatio", "compare_per_success", "paired_ratio", "shared_rows"]


@dataclass(frozen=True)
class PairedRatio(Record):
    """Candidate / baseline of a quantity per success on the shared items, with its interval.

    ``baseline`` and ``candidate`` are each run's figure on those items; ``alone`` the items held
    (with a known quantity) by one run only, left out; ``unknown_trials`` the trials of both runs
    whose quantity is unknown, left out (never taken as free).  ``verdict`` and ``rule`` are set by
    :func:`compare_per_success`.
    """

    quantity: str
    ratio: float
    interval: Interval
    baseline: float
    candidate: float
    paired_items: int
    alone: tuple[Hashable, ...]
    unknown_trials: int
    verdict: str = ""
    rule: str = ""

    @property
    def notes(self) -> tuple[str, ...]:
        """What an output prints beside the figure: the items and trials left out."""
        notes, what = [], self.quantity
        if self.alone:
            notes.append(
                f"{plural(len(self.alone), 'item')} held (with a known {what}) by only one run: left out"
            )
        if self.unknown_trials:
            notes.append(
                f"{plural(self.unknown_trials, 'trial')} of unknown {what} left out (never taken as free)"
            )
        return tuple(notes)


def shared_rows(
    baseline: ItemTotals, candidate: ItemTotals
) -> tuple[np.ndarray, np.ndarray, tuple[Hashable, ...]]:
    """Rows of the items both runs hold with a known quantity, and the ids only one of them holds.

    Runs of the same unique ids in the same order (one suite run twice) pair row by row without a
    lookup: the same rows and ids as :func:`_matched_rows`, several times faster.
    """
    ids = baseline.ids
    if ids == candidate.ids and len(set(ids)) == len(ids):
        both = (baseline.trials > 0) & (candidate.trials > 0)
        rows = np.flatnonzero(both).astype(np.int64)
        if rows.size == len(ids):  # every item paired: none alone, without reading the ids
            return rows, rows.copy(), ()
        alone = tuple(key for key, paired in zip(ids, both.tolist(), strict=True) if not paired)
        return rows, rows.copy(), alone
    return _matched_rows(baseline, candidate)


def _matched_rows(
    baseline: ItemTotals, candidate: ItemTotals
) -> tuple[np.ndarray, np.ndarray, tuple[Hashable, ...]]:
    """:func:`shared_rows` of any two runs: each baseline id looked up among the candidate's."""
    held = (candidate.trials > 0).tolist()  # Python bools: cheaper to read one by one than NumPy's
    where = {key: row for row, key in enumerate(candidate.ids) if held[row]}
    held = (baseline.trials > 0).tolist()
    pairs = [(row, where[key]) for row, key in enumerate(baseline.ids) if held[row] and key in where]
    common = {baseline.ids[row] for row, _ in pairs}
    alone = tuple(key for key in dict.fromkeys((*baseline.ids, *candidate.ids)) if key not in common)
    rows = np.array(pairs, dtype=np.int64).reshape(-1, 2)
    return rows[:, 0], rows[:, 1], alone


def paired_ratio(
    baseline: ItemTotals, candidate: ItemTotals, level: float = 0.95, quantity: str = "cost"
) -> PairedRatio:
    """Candidate / baseline ``quantity`` per success on the items both hold, with its ``level`` interval.

    >>> from trialscore.stats._effort import item_totals
    >>> items = [i // 2 for i in range(40)]
    >>> old = item_totals(items, [1, 0] * 20, [1.0, 1.0] * 20)
    >>> new = item_totals(items, [1, 0] * 20, [0.5, 0.5] * 20)
    >>> result = paired_ratio(old, new)
    >>> round(result.ratio, 4), result.baseline, result.candidate, result.paired_items
    (0.5, 2.0, 1.0, 20)
    """
    level = check_probability(level, "level")
    name = check_choice(quantity, "quantity", {key: key for key in QUANTITIES})
    rows_a, rows_b, alone = shared_rows(baseline, candidate)
    items = int(rows_a.size)
    if items < 2:
        raise InsufficientDataError(
            f"baseline and candidate must share at least 2 items with a known {name}; got {items}",
            unit="items", needed=2, got=items,
        )  # fmt: skip
    runs = []
    for totals, rows, run in ((baseline, rows_a, "baseline"), (candidate, rows_b, "candidate")):
        successes = totals.successes[rows]
        if successes.sum() == 0:
            raise InsufficientDataError(
                f"{run} has no solved trial on the shared items: its {name} per success is unbounded",
                unit="successes", needed=1, got=0,
            )  # fmt: skip
        runs.append(
            (totals.total[rows], successes.astype(np.float64), success_floor(successes, totals.trials[rows]))
        )
    (cost_a, solved_a, floor_a), (cost_b, solved_b, floor_b) = runs
    figure_a, figure_b = float(cost_a.sum() / solved_a.sum()), float(cost_b.sum() / solved_b.sum())
    if figure_a == 0 or figure_b == 0:
        raise InsufficientDataError(
            f"a ratio of {name} per success needs a positive {name} in both runs; got baseline {figure_a:g} "
            f"and candidate {figure_b:g}",
            unit="values", needed=1, got=0,
        )  # fmt: skip
    spread, how = log_ratio_variance((cost_b, solved_b, 1.0), (cost_a, solved_a, -1.0))
    variance = max(spread, floor_a + floor_b)
    ratio = figure_b / figure_a
    half = float(_scipy.stdtrit(items - 1, 0.5 + level / 2)) * math.sqrt(variance)
    method = ratio_method(how, spread < variance, paired=True)
    interval = Interval(
        ratio,
        ratio * math.exp(-half),
        ratio * math.exp(half),
        level,
        method,
        items,
        ratio * math.sqrt(variance),
    )
    return PairedRatio(
        quantity=name,
        ratio=ratio,
        interval=interval,
        baseline=figure_a,
        candidate=figure_b,
        paired_items=items,
        alone=alone,
        unknown_trials=baseline.unknown_trials + candidate.unknown_trials,
    )


def compare_per_success(
    baseline: ItemTotals, candidate: ItemTotals, alpha: float = 0.05, quantity: str = "cost"
) -> PairedRatio:
    """Did the candidate change ``quantity`` per success?  The paired ratio with a two-sided verdict.

    ``improvement`` when the ``1 - alpha`` interval of candidate / baseline lies below 1 (lower is
    better), ``regression`` when it lies above 1, else ``no significant change``.

    >>> from trialscore.stats._effort import item_totals
    >>> items = [i // 2 for i in range(40)]
    >>> old = item_totals(items, [1, 0] * 20, [1.0, 1.0] * 20)
    >>> compare_per_success(old, item_totals(items, [1, 0] * 20, [0.5, 0.5] * 20)).verdict
    'improvement'
    """
    alpha = check_probability(alpha, "alpha")
    result = paired_ratio(baseline, candidate, 1 - alpha, quantity)
    low, high = result.interval.low, result.interval.high
    verdict = "improvement" if high < 1 else "regression" if low > 1 else "no significant change"
    rule = (
        f"{result.quantity} per success, lower is better: improvement if the {1 - alpha:.0%} interval of "
        "candidate / baseline is below 1, regression if above 1, else no significant change"
    )
    return PairedRatio(**{**result.__dict__, "verdict": verdict, "rule": rule})
