"""One session of a run: the interface every way of running trials uses.

A session joins the runner's rooms: the :class:`~trialscore.runner.scheduling.Schedule` (what
runs next, under the run's design and budgets), the :class:`~trialscore.runner.execution.Execution`
(running a unit: the trial call, grading, redaction) and the store's single
:class:`~trialscore.runner.store.writer.Writer` (persistence).  Whoever runs the units uses it
through four methods and nothing else:

===================================  ================================================================
:meth:`Session.take`, :meth:`next`   what to run next (``take`` now or None; ``next`` waits while a
                                     unit in flight may unlock one, see :attr:`Session.waiting`)
:meth:`Session.run`                  run a unit here: its trial record, secrets redacted
:meth:`Session.finish`               finish a unit: charge its cost, commit it, count it
:meth:`Session.stop`                 start no more units (interrupted, or no more fit the budget)
===================================  ================================================================

The users: the in-process loop (:func:`trialscore.runner.loop.serve`), the controller of worker
processes and Ray actors (:mod:`trialscore.runner.distributed.controller`: ``take``, ``finish``,
``stop``) and each worker (:mod:`trialscore.runner.distributed.worker`: ``run`` on a session of
its own, which has no schedule and no store: the controller schedules and commits).

>>> import asyncio
>>> from trialscore.examples import demo_suite_path
>>> from trialscore.runner.execution import Execution, build_targets
>>> from trialscore.runner.suite import load_suite
>>> suite = load_suite(demo_suite_path())
>>> targets = {}
>>> build_targets(suite, ["sim-agent"], 1, targets)
>>> worker = Session(Execution(suite, "r1", targets, trials=None))
>>> record = asyncio.run(worker.run(Unit("sim-agent", "multiply", 0)))
>>> record.case_id, record.verdict, worker.take()
('multiply', 'pass', None)
>>> asyncio.run(worker.finish(record))  # the controller's session commits, not a worker's
Traceback (most recent call last):
...
RuntimeError: a worker's session has no store: the controller's session commits
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Sequence
from typing import Protocol

from trialscore.results.records import TrialRecord
from trialscore.runner.adaptive import Unit
from trialscore.runner.aggregator import RunAggregator, RunReader
from trialscore.runner.execution import Execution
from trialscore.runner.observer import RunObserver
from trialscore.runner.progress import RunCounters
from trialscore.runner.scheduling import Schedule
from trialscore.runner.store import TrialStore
from trialscore.runner.store.writer import Writer
from trialscore.runner.strategies import CaseResult
from trialscore.runner.suite import Suite

__all__ = ["Backend", "Session"]


class Backend(Protocol):
    """Runs a session's units somewhere else (worker processes, Ray actors) in place of the in-process
    loop, through the session's interface (:mod:`trialscore.runner.distributed`)."""

    async def serve(self, session: Session) -> None:
        """Run every unit ``session`` hands out; return once each is finished (or the session stopped)."""
        ...


class Session:
    """One session of a run: ``execution`` runs its units, ``schedule`` hands them out, ``store``
    commits them; ``earlier`` are the trials earlier sessions committed (a resumed run).

    Without a schedule and a store it is a worker's session: it runs the units another session
    hands out and commits (:meth:`take` gives None, :meth:`finish` refuses).  ``observer`` is told of
    each committed trial (:class:`~trialscore.runner.observer.RunObserver`).
    """

    def __init__(
        self,
        execution: Execution,
        schedule: Schedule | None = None,
        store: TrialStore | None = None,
        earlier: Sequence[TrialRecord] = (),
        observer: RunObserver | None = None,
    ) -> None:
        self.execution = execution
        self.observer = observer
        self.schedule = schedule
        self.store = store
        self.earlier = earlier
        self.tallies = RunAggregator()  # every committed trial, counted (not kept)
        for record in earlier:
            self.tallies.add(record)
        self._writer: Writer | None = None
        self._changed = asyncio.Event()

    # -- what the users read ---------------------------------------------------------------------

    @property
    def suite(self) -> Suite:
        """The suite the session runs (overrides and selection applied)."""
        return self.execution.suite

    @property
    def run_id(self) -> str:
        """The run's id."""
        return self.execution.run_id

    @property
    def evaluated(self) -> list[str]:
        """The evaluated targets (a worker's session: none of its own to schedule)."""
        return self.schedule.evaluated if self.schedule is not None else []

    @property
    def counters(self) -> RunCounters:
        """The running totals the progress bar shows."""
        return self._schedule.counters

    @property
    def stopping(self) -> bool:
        """True once :meth:`stop` was called without ``cost_limited`` (the run is interrupted)."""
        return self.schedule is not None and self.schedule.stopping

    @property
    def ran_now(self) -> int:
        """Trials run and committed in this session."""
        return self.tallies.stored - len(self.earlier)

    @property
    def _schedule(self) -> Schedule:
        if self.schedule is None:
            raise RuntimeError("a worker's session has no schedule: the controller's session hands out units")
        return self.schedule

    # -- the interface -----------------------------------------------------------------------------

    def take(self) -> Unit | None:
        """The next unit to start, or None when none may start now (see :attr:`waiting`)."""
        return self.schedule.take() if self.schedule is not None else None

    @property
    def waiting(self) -> bool:
        """True when no unit may start now but one in flight may still unlock one (adaptive runs)."""
        return self.schedule is not None and self.schedule.waiting

    async def next(self) -> Unit | None:
        """The next unit to start, waiting while a unit in flight may unlock one; None: no more."""
        while True:
            unit = self.take()
            if unit is not None or not self.waiting:
                return unit
            await self._changed.wait()

    async def run(self, unit: Unit) -> TrialRecord:
        """Run ``unit`` here: call its target, grade it; its record, secrets redacted."""
        return await self.execution.run(unit)

    def unrun(self, unit: Unit, why: str) -> TrialRecord:
        """The errored record of a unit that could not be run (its worker kept dying), to finish."""
        return self.execution.unrun(unit, why)

    async def finish(self, record: TrialRecord) -> None:
        """Charge a finished unit, and wait until the store has committed it; then count it and tell
        the schedule (which may unlock further units)."""
        if self.store is None:
            raise RuntimeError("a worker's session has no store: the controller's session commits")
        if self._writer is None:
            raise RuntimeError("finish() is called inside `async with session.committing()`")
        schedule = self._schedule
        record = self.execution.redacted(record)
        schedule.charge(record)
        await self._writer.commit(TrialStore.row(self.run_id, record))
        self.tallies.add(record)
        if self.observer is not None:
            self.observer.committed(record)
        schedule.finished(record)
        self._wake()

    def stop(self, cost_limited: bool = False) -> None:
        """Start no more units: the run is interrupted (the units in flight are its users' to cancel), or,
        with ``cost_limited``, no further unit fits the budget (the rest counts as cost-limited and the run
        still completes)."""
        schedule = self._schedule
        if cost_limited:
            schedule.skip_rest()
        else:
            schedule.stopping = True
        self._wake()

    def _wake(self) -> None:
        """Wake whoever waits in :meth:`next`."""
        self._changed.set()
        self._changed = asyncio.Event()

    @contextlib.asynccontextmanager
    async def committing(self) -> AsyncIterator[Session]:
        """Open the store's single writer for :meth:`finish`; on leaving, commit what is pending."""
        if self.store is None:
            raise RuntimeError("a worker's session has no store: the controller's session commits")
        writer = self._writer = Writer(self.store)
        try:
            yield self
        finally:
            await writer.close()
            self._writer = None

    # -- what the session did ----------------------------------------------------------------------

    def case_results(self, reader: RunReader) -> list[CaseResult]:
        """Each target's and case's aggregated result (its trials read from ``reader`` when walked)."""
        schedule = self._schedule
        results = []
        for name in schedule.evaluated:
            for case in self.execution.cases.values():
                result = self.tallies.case_result(
                    name,
                    case.spec.id,
                    case.settings,
                    case.spec.category,
                    (name, case.spec.id) in schedule.cost_limited,
                    reader,
                )
                results.append(schedule.stopped(name, case.spec.id, result))
        return results
