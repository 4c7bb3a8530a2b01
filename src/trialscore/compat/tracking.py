"""Tracking pass@k per task category over time (seed 002, "Tracking Over Time").

Seed 002 asks to track pass@k *per task category*, not globally, as records like

.. code-block:: json

    {"task_category": "bug_fix", "pass@1": 0.82, "pass@3": 0.99,
     "samples": 50, "trend": "improving", "last_updated": "2024-01-15"}

and to act on the trend: pass@1 declining means prompts degraded or tasks got
harder; improving means skills or context engineering are working.
:func:`track_category` builds that record from a category's dated runs.  The
trend is not a raw difference of two numbers.  With two runs, the latest is
compared with the one before it by :func:`trialscore.stats.compare_paired` (when
both runs name their items and share at least two, on the items they share) or
:func:`trialscore.stats.compare_unpaired` (Welch), on pass@1 per item.  With
three or more, every run counts: :func:`trialscore.stats._trend.history_trend`
tests the slope of pass@1 across all runs and the change at the latest run
against the earlier ones, each at ``alpha / 2``, so a category with no trend is
flagged with probability at most ``alpha``.  Only a significant result counts:

========================  ==================================================
trend                     rule
========================  ==================================================
``improving``             pass@1 rose, p < alpha
``declining``             pass@1 fell, p < alpha
``stable``                no significant change (or identical results)
``new``                   a single run: nothing to compare with yet
``insufficient_data``     fewer than 2 items to compare: no test possible
========================  ==================================================
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from types import MappingProxyType
from typing import Any

from trialscore._record import plain
from trialscore.compat.advice import Advice
from trialscore.core.bank import Bank, as_bank
from trialscore.core.estimators import pass_at_k
from trialscore.errors import EvaluationError
from trialscore.stats._compare import Run, compare_paired, compare_unpaired
from trialscore.stats._comparison import Comparison
from trialscore.stats._trend import HistoryTrend, history_trend

__all__ = ["CategorySnapshot", "track_category", "trend_advice"]

_TRENDS = {
    "improvement": "improving",
    "regression": "declining",
    "within_noise": "stable",
    "identical": "stable",
}


@dataclass(frozen=True)
class CategorySnapshot:
    """Seed 002's tracking record of one task category, with the numbers behind its trend.

    ``pass_at_k`` maps each ``k`` to pass@k of the latest run; ``samples`` is
    its number of items (tasks) and ``trials`` its number of graded trials;
    ``comparison`` is the test behind ``trend`` with two runs, ``history`` the trend and change
    tests behind it with three or more (None for a new category).
    """

    task_category: str
    pass_at_k: Mapping[int, float]
    samples: int
    trials: int
    trend: str
    last_updated: date
    comparison: Comparison | None = None
    rule: str = field(default="")
    history: HistoryTrend | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "pass_at_k", MappingProxyType(dict(self.pass_at_k)))

    def to_dict(self) -> dict[str, Any]:
        """Seed 002's JSON shape (``"pass@1"``, ``"pass@3"`` ... keys), plus the evidence.

        >>> runs = [("2024-01-08", [[1, 0, 1]] * 50), ("2024-01-15", [[1, 1, 1]] * 50)]
        >>> snap = track_category("bug_fix", runs)
        >>> d = snap.to_dict()
        >>> d["task_category"], d["pass@1"], d["pass@3"], d["samples"], d["trend"], d["last_updated"]
        ('bug_fix', 1.0, 1.0, 50, 'improving', '2024-01-15')
        """
        out: dict[str, Any] = {"task_category": self.task_category}
        out.update({f"pass@{k}": value for k, value in sorted(self.pass_at_k.items())})
        out.update(
            {
                "samples": self.samples,
                "trials": self.trials,
                "trend": self.trend,
                "last_updated": plain(self.last_updated),
                "trend_rule": self.rule,
                "comparison": plain(self.comparison),
                "trend_test": plain(self.history),
            }
        )
        return out


def _as_date(value: object, where: str) -> date:
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    if isinstance(value, str):
        try:
            return date.fromisoformat(value[:10])
        except ValueError:
            pass
    raise EvaluationError(f"{where} must be a date or an ISO date string (YYYY-MM-DD); got {value!r}")


def _bank(run: Run, where: str) -> Bank:
    if isinstance(run, Mapping):
        return as_bank([list(outcomes) for outcomes in run.values()], where)
    return as_bank(run, where)


def _ids(run: Run, bank: Bank) -> set[object] | None:
    """The item ids of a named run (a mapping, or a bank carrying ids); None for an unnamed one."""
    if isinstance(run, Mapping):
        return set(run.keys())
    return None if bank.ids is None else set(bank.ids.tolist())


def track_category(
    task_category: str,
    history: Sequence[tuple[date | datetime | str, Run]],
    ks: Sequence[int] = (1, 3),
    alpha: float = 0.05,
) -> CategorySnapshot:
    """The tracking record of one task category from its dated runs.

    Parameters
    ----------
    task_category : the category's name (seed 002 tracks per category, never globally)
    history : ``(date, run)`` pairs in any order; a run is an items x trials 0/1
        matrix, ragged outcome lists, a :class:`~trialscore.core.bank.Bank`, or a
        mapping of item id to outcomes (then consecutive runs are compared on
        their shared items, paired)
    ks : the pass@k values to report for the latest run (each at most the
        smallest number of trials of any item)
    alpha : significance level of the trend test

    >>> runs = [("2024-02-01", [[1, 1, 0]] * 40), ("2024-03-01", [[1, 0, 0]] * 40)]
    >>> snap = track_category("refactor", runs)
    >>> snap.trend, round(snap.pass_at_k[1], 4), snap.samples
    ('declining', 0.3333, 40)
    """
    if not isinstance(task_category, str) or not task_category:
        raise EvaluationError(f"task_category must be a non-empty string; got {task_category!r}")
    if not history:
        raise EvaluationError(
            f"history of {task_category!r} must hold at least one (date, run) pair; got none"
        )
    dated = []
    for index, entry in enumerate(history):
        if not isinstance(entry, (tuple, list)) or len(entry) != 2:
            raise EvaluationError(f"history[{index}] must be a (date, run) pair; got {entry!r}")
        dated.append((_as_date(entry[0], f"history[{index}] date"), index, entry[1]))
    dated.sort(key=lambda item: (item[0], item[1]))
    when, latest_index, latest = dated[-1]
    bank = _bank(latest, f"history[{latest_index}] run")
    values = {int(k): pass_at_k(bank, k) for k in ks}
    comparison = None
    across = None
    trend, rule = "new", "a single run: no earlier run to compare with"
    if len(dated) > 2:
        banks = [_bank(run, f"history[{index}] run") for _, index, run in dated]
        named = [_item_order(run, bank) for (_, _, run), bank in zip(dated, banks, strict=True)]
        across = history_trend(banks, None if None in named else named, alpha=alpha)
        trend, rule = across.verdict, across.rule
    elif len(dated) > 1:
        _, previous_index, previous = dated[-2]
        earlier = _bank(previous, f"history[{previous_index}] run")
        ids_before, ids_now = _ids(previous, earlier), _ids(latest, bank)
        if ids_before is not None and ids_now is not None and len(ids_before & ids_now) >= 2:
            comparison = compare_paired(previous, latest, "avg", alpha=alpha)
        elif earlier.items >= 2 and bank.items >= 2:
            comparison = compare_unpaired(earlier, bank, "avg", alpha=alpha)
        if comparison is None:
            trend = "insufficient_data"
            rule = "fewer than 2 items in a run (or shared by named runs): no test of a change is possible"
        else:
            trend = _TRENDS[comparison.verdict]
            rule = (
                f"latest run vs the one before it, pass@1 per item: improving if it rose and p < {alpha:g}, "
                f"declining if it fell and p < {alpha:g}, else stable ({comparison.rule})"
            )
    return CategorySnapshot(
        task_category=task_category,
        pass_at_k=values,
        samples=bank.items,
        trials=int(bank.n.sum()),
        trend=trend,
        last_updated=when,
        comparison=comparison,
        rule=rule,
        history=across,
    )


def _item_order(run: Run, bank: Bank) -> list[object] | None:
    """The item ids of a named run in its bank's item order; None for an unnamed run."""
    if isinstance(run, Mapping):
        return list(run.keys())
    return None if bank.ids is None else bank.ids.tolist()


def trend_advice(snapshot: CategorySnapshot) -> Advice:
    """Seed 002's actionable insight for a category's trend.

    >>> runs = [("2024-02-01", [[1, 1, 0]] * 40), ("2024-03-01", [[1, 0, 0]] * 40)]
    >>> snap = track_category("refactor", runs)
    >>> print(trend_advice(snap))  # doctest: +ELLIPSIS
    pass@1 of 'refactor' is declining (0.667 -> 0.333, p=...): check whether prompts degraded or ...
    """
    name = snapshot.task_category
    comparison = snapshot.comparison
    if snapshot.history is not None:
        return _history_advice(snapshot, snapshot.history)
    if comparison is None:
        if snapshot.trend == "new":
            message = f"{name!r} has a single run: track it over time to see a trend."
        else:
            message = f"{name!r} has too few items to test a change: add cases (seed 002: at least 10)."
        return Advice(
            f"trend_{snapshot.trend}", "info", message, {"samples": snapshot.samples}, snapshot.rule
        )
    numbers = {
        "previous": comparison.baseline,
        "latest": comparison.candidate,
        "delta": comparison.delta,
        "p_value": comparison.p_value,
    }
    change = f"({comparison.baseline:.3f} -> {comparison.candidate:.3f}, p={comparison.p_value:.2g})"
    stable = "no change beyond noise between the last two runs."
    return _trend_advice(snapshot, snapshot.trend, change, numbers, stable)


def _history_advice(snapshot: CategorySnapshot, history: HistoryTrend) -> Advice:
    """Seed 002's insight from the trend across three or more runs."""
    numbers = {
        "slope_per_run": history.slope,
        "slope_p_value": history.slope_p,
        "change_at_latest": history.change,
        "change_p_value": history.change_p,
        "runs": history.runs,
    }
    evidence = (
        f"(over {history.runs} runs: slope {history.slope:+.3f} per run, p={history.slope_p:.2g}; latest vs "
        f"earlier {history.change:+.3f}, p={history.change_p:.2g})"
    )
    return _trend_advice(snapshot, history.verdict, evidence, numbers, "no trend or change beyond noise.")


#: Seed 002's reading of a declining or improving pass@1: the advice's severity and what it suggests.
_MOVES = {
    "declining": ("warning", "check whether prompts degraded or task complexity increased."),
    "improving": ("info", "skills or context engineering are working."),
}


def _trend_advice(
    snapshot: CategorySnapshot, trend: str, evidence: str, numbers: dict[str, Any], stable: str
) -> Advice:
    """The advice on a category whose pass@1 is ``trend`` (declining, improving, else stable) on
    ``evidence``; ``stable`` says what a stable one means."""
    move = trend if trend in _MOVES else "stable"
    severity, meaning = _MOVES.get(trend, ("info", stable))
    message = f"pass@1 of {snapshot.task_category!r} is {move} {evidence}: {meaning}"
    return Advice(f"pass_at_1_{move}", severity, message, numbers, snapshot.rule)
