"""The per-success metrics of read trials: each group's trials with their cost, latency, tokens and steps.

``score``, ``compare`` and ``rank`` serve the metrics of trial values (``cost-per-success``,
``latency-per-success``, ``tokens-per-success``, ``steps-per-success``: :mod:`trialscore.core.metrics`)
from the one reader's trial detail (:func:`~trialscore.results.readers.read_counts` with
``detail=FIELDS``).  :func:`group_trials` lays each group's trials out as one row per trial (its
case, its 0/1 outcome, its values), and the statistics are those of :mod:`trialscore.stats._effort`.

Errored trials (no outcome) follow the error policy the counts were read with: left out with
``errors="exclude"`` (the default), counted as failed trials, with whatever they cost, with
``errors="fail"``.  A trial whose value is unknown is never taken as free: it is left out, counted
and named (:meth:`GroupTrials.named`).

>>> import tempfile, pathlib, json
>>> path = pathlib.Path(tempfile.mkdtemp()) / "trials.jsonl"
>>> rows = [{"case_id": c, "trial": t, "passed": t != 1, "cost_usd": None if (c, t) == ("b", 2) else 0.5}
...         for c in "abc" for t in range(3)]
>>> _ = path.write_text("\\n".join(json.dumps(row) for row in rows))
>>> from trialscore.results.readers import read_counts
>>> (group,) = group_trials(read_counts([path], detail=FIELDS))
>>> result = per_success_of(group, "cost-per-success")
>>> round(result.estimate, 4), result.unknown_trials, group.named(result.unknown_positions)
(0.8, 1, ['b trial 2'])
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from trialscore.core.metrics import Metric, MetricLike, resolve_metric
from trialscore.errors import EvaluationError
from trialscore.results.counts import ErrorPolicy, GroupCounts, ItemCounts
from trialscore.stats._effort import ItemTotals, PerSuccess, item_totals, per_success

__all__ = [
    "FIELDS",
    "GroupTrials",
    "group_trials",
    "per_success_of",
    "quantity_of",
    "totals_of",
    "without_single_target",
]

#: The trial fields the per-success metrics read (``read_counts(detail=FIELDS)``).
FIELDS = ("cost", "latency", "tokens", "steps")


def quantity_of(metric: MetricLike) -> str:
    """The trial value a per-success metric adds up: ``cost``, ``latency``, ``tokens`` or ``steps``.

    >>> quantity_of("latency_per_success")
    'latency'
    """
    found = resolve_metric(metric, trial_values=True)
    quantity = found.name.removesuffix("-per-success")
    if found.needs != "trial values" or quantity not in FIELDS:
        raise EvaluationError(
            f"metric must be one of {', '.join(f'{name}-per-success' for name in FIELDS)}; got {found.name!r}"
        )
    return quantity


@dataclass(frozen=True)
class GroupTrials:
    """One group's trials, a row each: ``items`` its case, ``passed`` its outcome, ``values`` each field's
    value (NaN: unknown) and ``trial`` its index; ``counts`` the group's counts."""

    counts: GroupCounts
    items: list[object]
    trial: list[int]
    passed: NDArray[np.int64]
    values: dict[str, NDArray[np.float64]]

    @property
    def label(self) -> str:
        """The group's label (``target=a``, ``all``)."""
        return self.counts.label

    def named(self, positions: Sequence[int], limit: int | None = None) -> list[str]:
        """The trials at ``positions`` as ``case trial t`` (the first ``limit`` of them)."""
        shown = positions if limit is None else positions[:limit]
        return [f"{self.items[index]} trial {self.trial[index]}" for index in shown]


def group_trials(counts: ItemCounts) -> Iterator[GroupTrials]:
    """Each group's trials (counts read with trial detail), errored ones by the counts' error policy."""
    trials = counts.trials
    if trials is None:
        raise EvaluationError(
            "the per-success metrics read each trial's value: read the counts with detail=FIELDS"
        )
    policy: ErrorPolicy = counts.errors
    start = 0
    for group in counts.groups():
        rows = range(start, start + group.item.size)
        start += group.item.size
        picked: list[int] = []
        items: list[object] = []
        for row in rows:
            for index in range(int(trials.starts[row]), int(trials.starts[row + 1])):
                if trials.verdicts[index] != "e" or policy == "fail":
                    picked.append(index)
                    items.append(counts.item[row])
        where = np.array(picked, dtype=np.int64)
        yield GroupTrials(
            counts=group,
            items=items,
            trial=[trials.trial[index] for index in picked],
            passed=np.array([trials.verdicts[index] == "p" for index in picked], dtype=np.int64),
            values={name: getattr(trials, name)[where] for name in FIELDS},
        )


def per_success_of(group: GroupTrials, metric: MetricLike | Metric, level: float = 0.95) -> PerSuccess:
    """The metric's figure on the group's trials: :func:`~trialscore.stats._effort.per_success`."""
    quantity = quantity_of(metric)
    return per_success(group.items, group.passed, group.values[quantity], quantity=quantity, level=level)


def totals_of(group: GroupTrials, quantity: str = "cost") -> ItemTotals:
    """The group's per-item totals of ``quantity`` (:func:`~trialscore.stats._effort.item_totals`)."""
    return item_totals(group.items, group.passed, group.values[quantity])


def without_single_target(read: Sequence[ItemCounts], by: Sequence[str]) -> list[ItemCounts]:
    """Inputs read with trial detail, grouped as without it: the ``target`` key the detail keeps is
    dropped when ``by`` does not name it and each input holds one value of it (one model each, as
    two models compared: no group of their own)."""
    if any("target" not in counts.by for counts in read) or "target" in by:
        return list(read)
    index = read[0].by.index("target")
    if any(len(set(counts.group_values[index].tolist())) > 1 for counts in read):
        return list(read)
    keep = [j for j in range(len(read[0].by)) if j != index]
    return [
        dataclasses.replace(
            counts,
            by=tuple(counts.by[j] for j in keep),
            group_values=tuple(counts.group_values[j] for j in keep),
        )
        for counts in read
    ]
