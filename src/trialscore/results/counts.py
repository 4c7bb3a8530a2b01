"""Per-(group, item) trial counts: what every reader produces and every estimator consumes.

Reading trials ends in one table with a row per (group, item): the item's
``graded`` trials (with a pass/fail outcome), ``c`` of them passed, and
``errored`` trials (no outcome).  An errored trial is not a failed trial: by
default (``errors="exclude"``) it is counted and reported but left out of the
item's ``n``; with ``errors="fail"`` it counts as a failed trial.

:meth:`GroupCounts.bank` hands one group's counts to
:meth:`trialscore.core.bank.Bank.from_counts`; items whose every trial errored have
no ``n`` and are left out of the bank (and counted in ``items_all_errored``).

>>> counts = ItemCounts(("target",), (np.array(["a", "a", "b"], dtype=object),),
...                     np.array(["q1", "q2", "q1"], dtype=object),
...                     graded=np.array([4, 4, 3]), c=np.array([1, 4, 3]), errored=np.array([0, 0, 1]),
...                     stats=ReadStats(rows_read=12, rows_errored=1))
>>> [(g.label, g.bank().c.tolist()) for g in counts.groups()]
[('target=a', [1, 4]), ('target=b', [3])]
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

import numpy as np
from numpy.typing import NDArray

from trialscore._words import all_of
from trialscore.core.bank import Bank
from trialscore.errors import EvaluationError, InsufficientDataError

if TYPE_CHECKING:
    from trialscore.results.trials import TrialColumns

__all__ = ["ErrorPolicy", "GroupCounts", "ItemCounts", "PartialRun", "ReadStats", "check_error_policy"]

#: How errored trials enter ``n``: left out ("exclude", the default) or counted as failures ("fail").
ErrorPolicy = Literal["exclude", "fail"]

IntArray = NDArray[np.int64]


def check_error_policy(errors: object) -> ErrorPolicy:
    """Validate an error policy name.

    >>> check_error_policy("fail")
    'fail'
    >>> check_error_policy("drop")
    Traceback (most recent call last):
    ...
    trialscore.errors.EvaluationError: errors must be 'exclude' or 'fail'; got 'drop'
    """
    if errors not in ("exclude", "fail"):
        raise EvaluationError(f"errors must be 'exclude' or 'fail'; got {errors!r}")
    return errors


@dataclass(frozen=True)
class PartialRun:
    """An input whose run did not finish: its tool's ``status`` and how many trials it planned and logged.

    >>> partial = PartialRun("logs/x.eval", "error", planned=32, logged=5)
    >>> partial.missing, partial.message
    (27, 'logs/x.eval: the run did not finish (status error): 27 of 32 samples missing')
    """

    source: str
    status: str
    planned: int
    logged: int
    unit: str = "samples"

    @property
    def missing(self) -> int:
        """Planned trials the input does not hold."""
        return max(self.planned - self.logged, 0)

    @property
    def message(self) -> str:
        """One line saying so."""
        return (
            f"{self.source}: the run did not finish (status {self.status}): "
            f"{self.missing} of {self.planned} {self.unit} missing"
        )

    def to_dict(self) -> dict[str, object]:
        """Plain dict for JSON output."""
        return {
            "source": self.source,
            "status": self.status,
            "planned": self.planned,
            "logged": self.logged,
            "missing": self.missing,
        }


@dataclass(frozen=True)
class ReadStats:
    """What happened to the input rows.

    ``rows_read`` rows (trials) were read; ``rows_skipped`` were invalid and
    skipped (only with ``skip_invalid``); ``rows_errored`` are errored trials;
    ``rows_used`` entered the pass-rate denominators.  Always
    ``rows_read == rows_used + rows_skipped + (rows_errored if errors == "exclude" else 0)``.
    ``first_skipped`` says where the first skipped row was and why (for a JSON
    Lines file with lines that do not parse, the first such line).  ``notes`` are
    lines a reader has to say about input that is, by its tool's rules, not a
    trial at all (an instance a run never submitted), with how many there were,
    or about how the trials were grouped.  ``partial`` lists the inputs that stopped short of
    their plan by accident (an interrupted or still running stored run, an inspect_ai log with
    status ``error``): their figures describe the trials they hold, and a gate refuses them unasked.

    >>> ReadStats(rows_read=10, rows_skipped=1, rows_errored=2).rows_used
    7
    >>> ReadStats(rows_read=10, rows_skipped=1, rows_errored=2, errors="fail").rows_used
    9
    """

    rows_read: int
    rows_skipped: int = 0
    rows_errored: int = 0
    errors: ErrorPolicy = "exclude"
    first_skipped: str | None = None
    sources: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    partial: tuple[PartialRun, ...] = ()

    @property
    def rows_used(self) -> int:
        """Rows that entered ``n`` (graded trials, plus errored ones under ``errors="fail"``)."""
        left_out = self.rows_errored if self.errors == "exclude" else 0
        return self.rows_read - self.rows_skipped - left_out

    def __add__(self, other: ReadStats) -> ReadStats:
        return ReadStats(
            rows_read=self.rows_read + other.rows_read,
            rows_skipped=self.rows_skipped + other.rows_skipped,
            rows_errored=self.rows_errored + other.rows_errored,
            errors=self.errors,
            first_skipped=self.first_skipped or other.first_skipped,
            sources=self.sources + other.sources,
            notes=self.notes + other.notes,
            partial=self.partial + other.partial,
        )

    def to_dict(self) -> dict[str, object]:
        """Plain dict for JSON output."""
        return {
            "rows_read": self.rows_read,
            "rows_used": self.rows_used,
            "rows_skipped": self.rows_skipped,
            "rows_errored": self.rows_errored,
            "errors": self.errors,
            "first_skipped": self.first_skipped,
            "sources": list(self.sources),
            "notes": list(self.notes),
            "partial": [run.to_dict() for run in self.partial],
        }


@dataclass(frozen=True, eq=False)
class GroupCounts:
    """Counts of the items of one group (e.g. one model, or one model and category).

    ``n`` is each item's trial count under the error policy: ``graded`` trials,
    plus ``errored`` ones when ``errors == "fail"``.

    >>> group = GroupCounts((("target", "m1"),), np.array(["a", "b", "c"], dtype=object),
    ...                     np.array([3, 3, 0]), np.array([2, 0, 0]), np.array([0, 1, 2]))
    >>> group.label, group.items, group.trials, group.errored_trials, group.items_all_errored
    ('target=m1', 2, 6, 3, 1)
    >>> group.bank().n.tolist(), group.bank().c.tolist()
    ([3, 3], [2, 0])
    >>> GroupCounts(group.key, group.item, group.graded, group.c, group.errored, "fail").bank().n.tolist()
    [3, 4, 2]
    """

    key: tuple[tuple[str, str | None], ...]
    item: NDArray[np.object_]
    graded: IntArray
    c: IntArray
    errored: IntArray
    errors: ErrorPolicy = "exclude"
    cluster: NDArray[np.object_] | None = None

    def __post_init__(self) -> None:
        check_error_policy(self.errors)

    @property
    def label(self) -> str:
        """``name=value, ...`` of the group key, or ``all`` for the single ungrouped group."""
        if not self.key:
            return "all"
        return ", ".join(f"{name}={'—' if value is None else value}" for name, value in self.key)

    @property
    def n(self) -> IntArray:
        """Per-item trial counts under the error policy."""
        return self.graded + self.errored if self.errors == "fail" else self.graded

    @property
    def items(self) -> int:
        """Items with ``n >= 1`` (the items in :meth:`bank`)."""
        return int(np.count_nonzero(self.n))

    @property
    def items_all_errored(self) -> int:
        """Items whose every trial errored."""
        return int(np.count_nonzero((self.graded == 0) & (self.errored > 0)))

    @property
    def trials(self) -> int:
        """Trials in ``n`` summed over items."""
        return int(self.n.sum())

    @property
    def errored_trials(self) -> int:
        """Errored trials (no outcome), whatever the policy."""
        return int(self.errored.sum())

    def bank(self) -> Bank:
        """The group's items with ``n >= 1`` as a :class:`~trialscore.core.bank.Bank` carrying their ids."""
        n = self.n
        keep = n > 0
        if not keep.any():
            raise InsufficientDataError(
                f"group {self.label} has no graded trial: {all_of(self.errored_trials, 'trial')} errored "
                "(count errored trials as failures with errors='fail')",
                unit="graded trials",
                needed=1,
                got=0,
            )
        return Bank.from_counts(n[keep], self.c[keep], ids=self.item[keep].tolist())

    def bank_clusters(self) -> NDArray[np.object_] | None:
        """The cluster of each item of :meth:`bank`, in its order (None when read without clusters).

        >>> group = GroupCounts((), np.array(["a", "b", "c"], dtype=object), np.array([2, 0, 2]),
        ...                     np.array([1, 0, 2]), np.array([0, 1, 0]), cluster=np.array(["p", "p", "q"]))
        >>> group.bank_clusters().tolist()
        ['p', 'q']
        """
        return None if self.cluster is None else self.cluster[self.n > 0]

    def to_dict(self) -> dict[str, object]:
        """Per-item counts as plain lists."""
        return {
            "group": dict(self.key),
            "items": self.item.tolist(),
            "n": self.n.tolist(),
            "c": self.c.tolist(),
            "errored": self.errored.tolist(),
        }


@dataclass(frozen=True, eq=False)
class ItemCounts:
    """Per-(group, item) counts for group keys ``by``; rows sorted by group key, then item.

    ``group_values[j][r]`` is the value of ``by[j]`` on row ``r`` (None = missing);
    ``cluster[r]`` the row's item cluster when read with a cluster column; ``trials`` each row's
    trials when read with trial detail (:class:`~trialscore.results.trials.TrialColumns`);
    ``score_sum`` and ``score_sumsq`` the sum and sum of squares of each row's graded scores (a
    0/1 outcome's score is the outcome) in whole units of ``1e-9``
    (:data:`~trialscore.results.tally.SCORE_UNIT`; None where the reader kept none).
    """

    by: tuple[str, ...]
    group_values: tuple[NDArray[np.object_], ...]
    item: NDArray[np.object_]
    graded: IntArray
    c: IntArray
    errored: IntArray
    stats: ReadStats = field(default_factory=lambda: ReadStats(rows_read=0))
    cluster: NDArray[np.object_] | None = None
    trials: TrialColumns | None = None
    score_sum: IntArray | None = None
    score_sumsq: IntArray | None = None

    def __post_init__(self) -> None:
        if len(self.group_values) != len(self.by):
            raise EvaluationError(
                f"group_values must have one column per group key; got {len(self.group_values)} "
                f"columns for by={list(self.by)}"
            )
        rows = self.item.size
        arrays: dict[str, IntArray | None] = {"graded": self.graded, "c": self.c, "errored": self.errored}
        arrays.update({"score_sum": self.score_sum, "score_sumsq": self.score_sumsq})
        for name, array in arrays.items():
            if array is not None and array.shape != (rows,):
                raise EvaluationError(f"{name} must have one entry per item row; got shape {array.shape}")

    @property
    def errors(self) -> ErrorPolicy:
        """The error policy the counts were read with."""
        return self.stats.errors

    def groups(self) -> Iterator[GroupCounts]:
        """One :class:`GroupCounts` per distinct group key, in sorted order."""
        rows = self.item.size
        if rows == 0:
            return
        if not self.by:
            yield GroupCounts((), self.item, self.graded, self.c, self.errored, self.errors, self.cluster)
            return
        change = np.zeros(rows, dtype=bool)
        change[0] = True
        for values in self.group_values:
            change[1:] |= values[1:] != values[:-1]
        starts = np.flatnonzero(change)
        ends = np.append(starts[1:], rows)
        for start, end in zip(starts, ends, strict=True):
            key = tuple(
                (name, values[start]) for name, values in zip(self.by, self.group_values, strict=True)
            )
            part = slice(int(start), int(end))
            cluster = None if self.cluster is None else self.cluster[part]
            yield GroupCounts(
                key,
                self.item[part],
                self.graded[part],
                self.c[part],
                self.errored[part],
                self.errors,
                cluster,
            )

    def to_dict(self) -> dict[str, object]:
        """Every group's per-item counts and the read statistics."""
        return {
            "by": list(self.by),
            "groups": [group.to_dict() for group in self.groups()],
            "stats": self.stats.to_dict(),
        }
