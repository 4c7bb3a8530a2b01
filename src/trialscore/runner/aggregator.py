"""A run's results kept up to date as its trials commit, in memory that does not grow with the trials.

The store (and then ``trials.jsonl``) holds every trial; the run keeps only what its results need:

* per (target, case), a :class:`~trialscore.runner.strategies.CaseTally` (counts, the histogram of
  distinct scores, the exact sum of known costs): the case's verdict, score, interval and seed 000
  stimulus score come from it;
* per target, the trials stored, scored, passed and errored and the exact sum of known costs;
* the errored trials grouped by message (:class:`~trialscore.runner.failures.ErrorTally`).

A case's ``trials`` list (``cases.jsonl``) and the trial records (``trials.jsonl``, JUnit, the
report) are read back from the store when they are written (:class:`RunReader`), case by case.

>>> from trialscore.results.records import TrialRecord
>>> tallies = RunAggregator()
>>> for trial, passed in enumerate((True, False, True)):
...     tallies.add(TrialRecord(case_id="c", trial=trial, target="t", passed=passed,
...                             verdict="pass" if passed else "fail", score=float(passed)))
>>> tallies.stored, tallies.targets["t"].passed, tallies.cases[("t", "c")].mean
(3, 2, 0.6666666666666666)
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, overload

import numpy as np

from trialscore.results.counts import ItemCounts, ReadStats
from trialscore.results.records import TrialRecord
from trialscore.runner.failures import ErrorTally, total_usd
from trialscore.runner.store import StoreError, TrialStore
from trialscore.runner.strategies import CaseResult, CaseTally, ExactSum, TrialSummary
from trialscore.runner.suite import CaseSettings

__all__ = ["RunAggregator", "RunReader", "StoredTrials", "TargetTotals"]


class RunReader:
    """One run of a store, read on demand.

    Each read opens the store and closes it when done (so the last one to close folds the
    ``-wal`` file into the store), unless it runs inside :meth:`session`, which shares one
    connection among the reads of its thread (writing a run's files reads every case).
    """

    def __init__(self, path: Path, run_id: str) -> None:
        self.path, self.run_id = path, run_id
        self._local = threading.local()

    def _open(self) -> TrialStore:
        try:  # an ordinary connection: the last one to close folds the -wal file into the store
            return TrialStore(self.path)
        except StoreError:  # the store has since moved to read-only media
            return TrialStore(self.path, readonly=True)

    @contextlib.contextmanager
    def session(self) -> Iterator[None]:
        """Share one connection among this thread's reads inside the block."""
        if getattr(self._local, "store", None) is not None:
            yield
            return
        self._local.store = self._open()
        try:
            yield
        finally:
            store, self._local.store = self._local.store, None
            store.close()

    @contextlib.contextmanager
    def _using(self) -> Iterator[TrialStore]:
        shared: TrialStore | None = getattr(self._local, "store", None)
        if shared is not None:
            yield shared
            return
        store = self._open()
        try:
            yield store
        finally:
            store.close()

    def records(self, target: str | None = None, case_id: str | None = None) -> Iterator[TrialRecord]:
        """The run's trial records (of one target and case when given), one at a time."""
        with self._using() as store:
            yield from store.iter_records(self.run_id, target, case_id)

    def case_trials(self, target: str, case_id: str) -> list[TrialSummary]:
        """One case's ``trials`` list, in trial order."""
        with self._using() as store:
            rows = store.case_trials(self.run_id, target, case_id)
        return [TrialSummary(trial, score, verdict, cost) for trial, score, verdict, cost in rows]


class StoredTrials(Sequence[TrialSummary]):
    """A case's ``trials`` list, read from the run store when it is walked (its length is known)."""

    def __init__(self, reader: RunReader, target: str, case_id: str, count: int) -> None:
        self._reader, self._target, self._case_id, self._count = reader, target, case_id, count

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[TrialSummary]:
        return iter(self._reader.case_trials(self._target, self._case_id))

    @overload
    def __getitem__(self, index: int) -> TrialSummary: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[TrialSummary]: ...

    def __getitem__(self, index: int | slice) -> TrialSummary | Sequence[TrialSummary]:
        return self._reader.case_trials(self._target, self._case_id)[index]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and list(self) == list(other)

    def __hash__(self) -> int:
        return hash((self._target, self._case_id, self._count))

    def __repr__(self) -> str:
        return f"StoredTrials({self._target!r}, {self._case_id!r}, {self._count} trials)"


@dataclass
class TargetTotals:
    """One target's trials as they commit: stored, scored, passed, errored, and the known spend."""

    stored: int = 0
    scored: int = 0
    passed: int = 0
    cost: ExactSum = field(default_factory=ExactSum)
    known_cost: int = 0

    @property
    def errored(self) -> int:
        """Stored trials that errored."""
        return self.stored - self.scored

    def add(self, record: TrialRecord) -> None:
        """Count one finished trial."""
        self.stored += 1
        if not record.errored:
            self.scored += 1
            self.passed += record.passed is True
        if record.cost_usd is not None:
            self.cost.add(record.cost_usd)
            self.known_cost += 1

    def cost_dict(self) -> dict[str, Any]:
        """``cost_usd`` (the known spend; null when no stored trial's cost is known) and the trials
        of unknown cost."""
        return {
            "cost_usd": total_usd(self.cost.value) if self.known_cost or not self.stored else None,
            "trials_with_unknown_cost": self.stored - self.known_cost,
        }


class RunAggregator:
    """Every committed trial of a run, counted as it commits (see the module docstring)."""

    def __init__(self) -> None:
        self.cases: dict[tuple[str, str], CaseTally] = {}
        self.targets: dict[str, TargetTotals] = {}
        self.errors = ErrorTally()

    @property
    def stored(self) -> int:
        """Trials counted."""
        return self.errors.stored

    def add(self, record: TrialRecord) -> None:
        """Count one committed trial."""
        target = record.target or ""
        tally = self.cases.get((target, record.case_id))
        if tally is None:
            tally = self.cases[(target, record.case_id)] = CaseTally()
        tally.add(record)
        self.targets.setdefault(target, TargetTotals()).add(record)
        self.errors.add(record)

    def case_result(
        self,
        target: str,
        case_id: str,
        settings: CaseSettings,
        category: str | None,
        cost_limited: bool,
        reader: RunReader,
    ) -> CaseResult:
        """The case's result, its ``trials`` list read from the store when walked."""
        tally = self.cases.get((target, case_id)) or CaseTally()
        trials = StoredTrials(reader, target, case_id, tally.stored)
        return tally.result(settings, case_id, target, category, cost_limited, trials)

    def item_counts(self) -> ItemCounts:
        """Per (target, case) counts of the stored trials, as :func:`~trialscore.results.readers.
        count_records` ``(records, by=["target"])`` gives them (errored trials left out of ``n``)."""
        keys = sorted(key for key, tally in self.cases.items() if tally.stored)
        tallies = [self.cases[key] for key in keys]
        return ItemCounts(
            by=("target",),
            group_values=(np.array([target for target, _ in keys], dtype=object),),
            item=np.array([case_id for _, case_id in keys], dtype=object),
            graded=np.array([tally.scored for tally in tallies], dtype=np.int64),
            c=np.array([tally.passed for tally in tallies], dtype=np.int64),
            errored=np.array([tally.stored - tally.scored for tally in tallies], dtype=np.int64),
            stats=ReadStats(rows_read=self.stored, rows_errored=self.errors.errored),
        )
