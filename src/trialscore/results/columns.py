"""Which column of a long-format file (one row per trial) holds what.

A long file needs an item column and an outcome; everything else is optional.
Each role is found by an explicit name (``ColumnMap(item=...)`` and friends) or, failing
that, by the first of its default names present in the file:

=========  =======================================  ==========================================
role       default names, in order                  meaning
=========  =======================================  ==========================================
item       case_id, item, eval_id, sample_id, id    the eval case a trial belongs to
trial      trial, attempt, epoch                    trial index (checked for duplicates)
passed     passed, pass, correct, success           true/false/1/0; empty = errored trial
score      score                                    0..1; turned into passed by ``threshold``
verdict    verdict                                  pass | fail | borderline | error
=========  =======================================  ==========================================

The outcome of a row comes from the first that applies: when a ``threshold`` is
given, ``score >= threshold`` (an empty score is an errored trial); else the
``passed`` column; else the ``verdict`` column (``pass`` passes, ``fail`` and
``borderline`` fail, ``error`` is an errored trial).  Columns that are not used
are neither read nor checked.

An optional ``cluster`` column (``ColumnMap(cluster=...)``, no default name) says which
cluster an item belongs to (e.g. the passage several questions share); it must
be non-empty and the same on every row of an item.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from trialscore._record import Record
from trialscore.errors import EvaluationError, MissingColumnError, parameter

__all__ = ["DEFAULT_NAMES", "ColumnMap", "ResolvedColumns"]

#: Default column names of each role, tried in order.
DEFAULT_NAMES: dict[str, tuple[str, ...]] = {
    "item": ("case_id", "item", "eval_id", "sample_id", "id"),
    "trial": ("trial", "attempt", "epoch"),
    "passed": ("passed", "pass", "correct", "success"),
    "score": ("score",),
    "verdict": ("verdict",),
}


def _option(role: str) -> str:
    """The :class:`ColumnMap` field of a role as a parameter of the readers (``columns.item``)."""
    return parameter(f"columns.{role}")


@dataclass(frozen=True)
class ResolvedColumns(Record):
    """The columns a file actually provides for each role (None = not used).

    ``outcome`` says where pass/fail comes from: ``"passed"``, ``"score"`` or ``"verdict"``.
    """

    item: str
    trial: str | None
    outcome: str
    outcome_column: str
    threshold: float | None
    groups: tuple[str, ...]
    cluster: str | None = None


@dataclass(frozen=True)
class ColumnMap:
    """Explicit column names for the roles of a long file; None means "find by default name".

    >>> ColumnMap(item="task").resolve(["task", "passed", "model"], by=["model"]).item
    'task'
    >>> ColumnMap().resolve(["case_id", "ok"], by=[])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    trialscore.errors.EvaluationError: no outcome column: expected one of passed, pass, correct, success ...
    """

    item: str | None = None
    trial: str | None = None
    passed: str | None = None
    score: str | None = None
    verdict: str | None = None
    threshold: float | None = None
    cluster: str | None = None

    def __post_init__(self) -> None:
        if self.threshold is not None and not (
            isinstance(self.threshold, (int, float))
            and not isinstance(self.threshold, bool)
            and math.isfinite(self.threshold)
            and 0.0 <= self.threshold <= 1.0
        ):
            raise EvaluationError(f"threshold must be a number in [0, 1]; got {self.threshold!r}")
        if self.threshold is not None and self.passed is not None:
            raise EvaluationError(
                f"give either a pass column ({self.passed!r}) or a score threshold "
                f"({self.threshold}), not both"
            )
        if self.score is not None and self.threshold is None:
            raise EvaluationError(
                f"a score column ({self.score!r}) turns into pass/fail only with a threshold; "
                f"give {_option('threshold')} T (score >= T passes)"
            )

    def _find(self, role: str, available: Sequence[str], required: bool) -> str | None:
        explicit: str | None = getattr(self, role)
        if explicit is not None:
            if explicit not in available:
                raise MissingColumnError(
                    f"{_option(role)} {explicit!r} is not a column of the file; "
                    f"the file has columns {', '.join(available)}",
                    column=explicit,
                    role=role,
                    available=tuple(available),
                )
            return explicit
        for name in DEFAULT_NAMES[role]:
            if name in available:
                return name
        if required:
            raise MissingColumnError(
                f"no {role} column: expected one of {', '.join(DEFAULT_NAMES[role])} "
                f"(or {_option(role)} NAME); the file has columns {', '.join(available)}",
                column=None,
                role=role,
                available=tuple(available),
            )
        return None

    def resolve(self, available: Sequence[str], by: Sequence[str]) -> ResolvedColumns:
        """Pick the column of each role among ``available``; ``by`` are group columns that must exist."""
        available = list(available)
        item = self._find("item", available, required=True)
        assert item is not None
        trial = self._find("trial", available, required=False)
        missing = [name for name in by if name not in available]
        if missing:
            raise MissingColumnError(
                f"{parameter('by')} column {missing[0]!r} is not a column of the file; "
                f"the file has columns {', '.join(available)}",
                column=missing[0],
                role="group",
                available=tuple(available),
            )
        if item in by:
            raise EvaluationError(f"{parameter('by')} {item!r} is the item column; group by other columns")
        cluster = None
        if self.cluster is not None:
            cluster = self._find("cluster", available, required=True)
            if cluster == item:
                raise EvaluationError(
                    f"{_option('cluster')} {cluster!r} is the item column; name the column that groups items"
                )
        if self.threshold is not None:
            score = self._find("score", available, required=True)
            assert score is not None
            return ResolvedColumns(item, trial, "score", score, float(self.threshold), tuple(by), cluster)
        passed = self._find("passed", available, required=False)
        if passed is not None:
            return ResolvedColumns(item, trial, "passed", passed, None, tuple(by), cluster)
        verdict = self._find("verdict", available, required=False)
        if verdict is not None:
            return ResolvedColumns(item, trial, "verdict", verdict, None, tuple(by), cluster)
        raise EvaluationError(
            f"no outcome column: expected one of {', '.join(DEFAULT_NAMES['passed'])} "
            f"(or {_option('passed')} NAME), a score column with {_option('threshold')}, or a verdict "
            f"column; the file has columns {', '.join(available)}"
        )
