"""The per-success metrics in the commands: each group's figure, its unknown trials named, its JSON.

``score``, ``compare`` and ``rank`` read the trials' detail when a metric of trial values is asked
(:data:`~trialscore.results.per_success.FIELDS`) and call the library here: one
:class:`~trialscore.results.scorecard.MetricScore` per group (its interval, or why it has none),
and the trials whose value is unknown counted and named (never taken as free).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from trialscore._words import plural
from trialscore.core.metrics import resolve_metric
from trialscore.errors import EvaluationError, InsufficientDataError

if TYPE_CHECKING:
    from trialscore.results.counts import ItemCounts
    from trialscore.results.per_success import GroupTrials
    from trialscore.results.scorecard import MetricScore, MetricSpec
    from trialscore.stats._effort import PerSuccess

__all__ = [
    "NAMED",
    "GroupPerSuccess",
    "PerSuccessScore",
    "carried",
    "needs_detail",
    "per_success_groups",
    "score_per_success",
    "unknown_line",
]

#: How many unknown trials an output names (the rest are counted).
NAMED = 5


def needs_detail(names: Sequence[str]) -> bool:
    """Whether any of the metric names is one of trial values (so the trials' detail must be read)."""
    return any(resolve_metric(name, trial_values=True).needs == "trial values" for name in names)


def carried(groups: Sequence[GroupTrials], quantity: str, asked: str) -> None:
    """Bad input when no trial of any group has a known ``quantity`` (``asked``: the command and option
    that need it)."""
    import numpy as np

    from trialscore.results.trials import TRIAL_FIELDS

    if any(np.isfinite(group.values[quantity]).any() for group in groups):
        return
    columns = " or ".join(TRIAL_FIELDS[quantity])
    trials = sum(len(group.items) for group in groups)
    raise EvaluationError(
        f"{asked} needs each trial's {quantity} (a {columns} column): the inputs carry none "
        f"({plural(trials, 'trial')} of {plural(len(groups), 'model')}, none with a known {quantity})"
    )


def unknown_line(label: str, quantity: str, positions: Sequence[int], group: GroupTrials) -> str:
    """``label: 2 trials of unknown cost left out (never taken as free): q1 trial 0, q3 trial 2``."""
    named = group.named(positions, NAMED)
    more = len(positions) - len(named)
    listed = ", ".join(named) + (f" and {more} more" if more > 0 else "")
    return (
        f"{label}: {plural(len(positions), 'trial')} of unknown {quantity} left out "
        f"(never taken as free): {listed}"
    )


@dataclass(frozen=True)
class PerSuccessScore:
    """One group's per-success metric: its score-table entry, its figure (None: too little data) and notes."""

    score: MetricScore
    figure: PerSuccess | None
    notes: tuple[str, ...]

    def to_dict(self, group: GroupTrials) -> dict[str, Any]:
        """The JSON entry: the figure's sums and the unknown trials, named."""
        figure = self.figure
        if figure is None:
            return {"metric": self.score.spec.metric.name, "reason": self.score.reason}
        return {
            "metric": self.score.spec.metric.name,
            "quantity": figure.quantity,
            "unit": figure.unit,
            "total": figure.total,
            "successes": figure.successes,
            "trials": figure.trials,
            "items": figure.items,
            "unknown_trials": figure.unknown_trials,
            "unknown": group.named(figure.unknown_positions),
            "unknown_policy": figure.unknown_policy,
            "notes": list(figure.notes),
        }


def score_per_success(group: GroupTrials, spec: MetricSpec, level: float) -> PerSuccessScore:
    """The group's figure of ``spec`` (a metric of trial values) as a score-table entry, with its notes."""
    from trialscore.results.per_success import per_success_of
    from trialscore.results.scorecard import MetricScore

    try:
        figure = per_success_of(group, spec.metric, level)
    except InsufficientDataError as exc:
        return PerSuccessScore(MetricScore(spec, None, str(exc)), None, ())
    notes = (
        (unknown_line(spec.label, figure.quantity, figure.unknown_positions, group),)
        if figure.unknown_trials
        else ()
    )
    return PerSuccessScore(MetricScore(spec, figure.interval), figure, notes)


@dataclass(frozen=True)
class GroupPerSuccess:
    """A group's per-success entries (one per metric of trial values asked), by group label."""

    group: GroupTrials
    entries: tuple[PerSuccessScore, ...]

    @property
    def scores(self) -> tuple[MetricScore, ...]:
        """The score-table entries."""
        return tuple(entry.score for entry in self.entries)

    @property
    def notes(self) -> list[str]:
        """The lines an output prints: unknown trials named."""
        return [note for entry in self.entries for note in entry.notes]

    def to_dict(self) -> list[dict[str, Any]]:
        """The JSON entries."""
        return [entry.to_dict(self.group) for entry in self.entries]


def per_success_groups(
    counts: ItemCounts, specs: Sequence[MetricSpec], level: float
) -> dict[str, GroupPerSuccess]:
    """Each group's entries of the metrics of trial values among ``specs`` (counts read with detail)."""
    valued = [spec for spec in specs if spec.metric.needs == "trial values"]
    if not valued:
        return {}
    from trialscore.results.per_success import group_trials

    return {
        group.label: GroupPerSuccess(group, tuple(score_per_success(group, spec, level) for spec in valued))
        for group in group_trials(counts)
    }
