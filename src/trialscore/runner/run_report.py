"""What a run did: :class:`RunReport`, with its trials read from the store on demand."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trialscore.results.counts import ItemCounts
from trialscore.results.records import TrialRecord
from trialscore.runner.aggregator import RunAggregator, RunReader
from trialscore.runner.store import DEFAULT_STORE
from trialscore.runner.strategies import CaseResult
from trialscore.runner.suite import Suite

__all__ = ["RunReport", "resume_command"]


@dataclass(frozen=True)
class RunReport:
    """What a run did.

    ``completed`` is False when it was interrupted; then ``cases`` is empty and the
    run can be finished with ``resume_command``.  ``warnings`` lists what the user
    must know (an unenforceable cost limit, cost-limited cases).
    """

    run_id: str
    suite: Suite
    store: Path
    out_dir: Path
    completed: bool
    planned: int
    committed: int
    ran_now: int
    skipped: int
    cases: tuple[CaseResult, ...] = ()
    warnings: tuple[str, ...] = ()
    cost: dict[str, Any] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)
    elapsed_s: float = 0.0
    adaptive: dict[str, Any] | None = None
    tallies: RunAggregator | None = field(default=None, repr=False, compare=False)

    @property
    def resume_command(self) -> str:
        """The command that finishes this run (the store keeps its suite)."""
        return resume_command(self.run_id, self.store)

    @functools.cached_property
    def reader(self) -> RunReader:
        """The run in its store, read on demand (the records are not kept in memory)."""
        return RunReader(self.store, self.run_id)

    @property
    def records(self) -> tuple[TrialRecord, ...]:
        """Every committed trial of the run (earlier sessions' included), read from the store, ordered
        by target, case and trial.  A large run is better walked with :meth:`iter_records`."""
        return tuple(self.reader.records())

    @property
    def trials(self) -> tuple[TrialRecord, ...]:
        """Every committed trial of the run, as ``records``."""
        return self.records

    def iter_records(self, target: str | None = None, case_id: str | None = None) -> Iterator[TrialRecord]:
        """The run's committed trials (of one target and case when given) one at a time, from the store."""
        return self.reader.records(target, case_id)

    def item_counts(self) -> ItemCounts:
        """Per (target, case) counts of the committed trials (``count_records(records, by=["target"])``),
        from the run's running counts."""
        from trialscore.runner.summary import tallies_of

        return tallies_of(self).item_counts()

    def suite_order_records(self) -> Iterator[TrialRecord]:
        """The run's committed trials in suite order: target, then case (as the suite lists them), then
        trial; one case at a time from the store (what ``trials.jsonl`` holds)."""
        for target in self.settings.get("targets", []):
            for case in self.suite.cases:
                yield from self.reader.records(target, case.id)

    @functools.cached_property
    def summary(self) -> dict[str, Any]:
        """``summary.json``'s content (:func:`trialscore.runner.summary.build_summary`), computed once."""
        from trialscore.runner.summary import build_summary

        return build_summary(self)

    def to_pandas(self, what: str = "trials") -> Any:
        """The run's ``"trials"`` (one row a trial) or ``"cases"`` (one row a target and case) as a
        pandas DataFrame; see :func:`trialscore.runner.frames.to_pandas`."""
        from trialscore.runner.frames import to_pandas

        return to_pandas(self, what)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dict (without the per-trial records)."""
        return {
            "run_id": self.run_id,
            "suite": self.suite.name,
            "store": str(self.store),
            "out_dir": str(self.out_dir),
            "completed": self.completed,
            "planned": self.planned,
            "committed": self.committed,
            "ran_now": self.ran_now,
            "skipped": self.skipped,
            "warnings": list(self.warnings),
            "cost": self.cost,
            "settings": self.settings,
            "elapsed_s": self.elapsed_s,
            "adaptive": self.adaptive,
        }


def resume_command(run_id: str, store: Path) -> str:
    """The command that finishes run ``run_id`` of ``store``.

    >>> resume_command("r1", Path("runs.sqlite"))
    'trialscore run --resume r1 --store runs.sqlite'
    """
    where = "" if store == DEFAULT_STORE else f" --store {store}"
    return f"trialscore run --resume {run_id}{where}"
