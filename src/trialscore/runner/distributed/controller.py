"""The run's controller: the only writer of the store, leasing work units to workers.

The controller asks the session for the next unit (:meth:`Session.take
<trialscore.runner.session.Session.take>`, so whatever schedules the units, fixed or adaptive,
decides the order), admits it (per-target caps, cost reserved: :mod:`.admission`), leases it to a
worker with free slots (:mod:`.leases`) and sends it over the transport.  Each completion is
checked against the lease table (a duplicate is ignored), settled against the budget, and handed
to :meth:`Session.finish <trialscore.runner.session.Session.finish>`, which commits it.

**Exactly once.** A worker that dies (its pipe closes, its actor is gone) or stays silent past
the lease time-to-live is *lost*: it is killed and replaced, and its leased units go back to the
front of the queue.  A finished trial is in the store (never lost); a unit is committed once
(the first completion wins; the store's unique key refuses a second row).  A unit whose worker
is lost :data:`MAX_LOSSES` times (a target that kills its process) is stored as an errored trial
rather than retried forever.

At most ``concurrency`` units are taken and not finished at any time: the queue is never handed
out whole, and the transport never holds more than the workers' slots.
"""

from __future__ import annotations

import asyncio
import collections
import time
from typing import TYPE_CHECKING, Protocol

from trialscore._words import plural
from trialscore.errors import EvaluationError
from trialscore.results.records import TrialRecord
from trialscore.runner.adaptive import Unit
from trialscore.runner.distributed.admission import Admission
from trialscore.runner.distributed.leases import Lease, LeaseTable
from trialscore.runner.distributed.protocol import (
    Completion,
    Crash,
    Heartbeat,
    Ready,
    WorkerLost,
    WorkUnit,
)
from trialscore.runner.seeds import trial_seed

if TYPE_CHECKING:
    from trialscore.runner.session import Session

__all__ = ["MAX_LOSSES", "Controller", "Event", "Transport"]

#: A unit whose worker is lost this many times is stored as an errored trial.
MAX_LOSSES = 3

#: What a transport reports to the controller.
Event = Ready | Completion | Crash | Heartbeat | WorkerLost


class Transport(Protocol):
    """How the controller reaches its workers (local processes or Ray actors).

    ``start`` starts ``workers`` workers, each reporting :class:`Ready` (or a :class:`Crash`)
    on ``events``, and later its completions and heartbeats; ``replace`` kills a lost worker
    and starts another under a new id; ``stop`` ends every worker (``graceful``: let them finish
    first).
    """

    workers: int
    slots: int
    name: str

    async def start(self, events: asyncio.Queue[Event]) -> None: ...

    def send(self, worker: int, unit: WorkUnit) -> None: ...

    def replace(self, worker: int) -> None: ...

    async def stop(self, graceful: bool) -> None: ...


class Controller:
    """Serves one session's units to the workers of ``transport`` (leases live ``ttl_s`` seconds), at
    most ``concurrency`` at once."""

    def __init__(self, transport: Transport, ttl_s: float, concurrency: int) -> None:
        self.transport = transport
        self.concurrency = concurrency
        self.table = LeaseTable(ttl_s)
        self.tick_s = min(0.5, ttl_s / 4)
        self.free: dict[int, int] = {}  # ready workers -> free slots
        self.pending: collections.deque[Unit] = collections.deque()
        self.losses: dict[Unit, int] = {}
        self._finishing: list[asyncio.Task[None]] = []
        self._committed = asyncio.Event()
        self._source_done = False
        self._ready: set[int] = set()
        self._taken = 0
        self._alone: dict[int, int] = {}  # worker -> the lease of a suspect unit it runs alone
        self._draining: int | None = None  # a worker given no new unit until it is idle, for a suspect
        self._turn = 0
        self._last_used: dict[int, int] = {}

    def _admission(self, session: Session) -> Admission:
        suite = session.suite
        specs = {name: suite.target(name) for name in session.evaluated}
        admission = Admission(
            suite.execution.cost_limit_usd,
            {name: spec.max_concurrency for name, spec in specs.items() if spec.max_concurrency is not None},
            {name: spec.max_cost_usd for name, spec in specs.items() if spec.max_cost_usd is not None},
            session.evaluated,
        )
        for record in session.earlier:
            admission.observe(record.target or "", record.cost_usd)
        return admission

    async def serve(self, session: Session) -> None:
        """Run every unit the session hands out on the workers; return when all are committed."""
        self.session = session
        self.admission = self._admission(session)
        events: asyncio.Queue[Event] = asyncio.Queue()
        graceful = False
        try:
            await self.transport.start(events)
            while True:
                self._fill()
                self._show()
                if self._source_done and not self.pending and not self.table.active:
                    break
                event = await self._next_event(events)
                while event is not None:
                    self._handle(event)
                    event = events.get_nowait() if not events.empty() else None
                now = time.monotonic()
                for lease in self.table.expired(now):
                    why = f"no heartbeat for {self.table.ttl_s:g} s"
                    self._lease_ended(lease)
                    self._requeue(lease.key, why)
                    self._lose(lease.worker, why)
                self._check_finishing()
            await asyncio.gather(*self._finishing)
            if not session.stopping and len(self.table.done) != self._taken:
                raise RuntimeError(  # never a silent loss: a unit taken must be finished
                    f"{plural(self._taken - len(self.table.done), 'work unit')} taken and never finished"
                )
            graceful = True
        finally:
            for task in self._finishing:
                task.cancel()
            await self.transport.stop(graceful)
            session.counters.workers = 0
            session.counters.leases = 0

    async def _next_event(self, events: asyncio.Queue[Event]) -> Event | None:
        """The next worker event; None after a tick, or as soon as a trial is committed (in an
        adaptive run that may let another unit start)."""
        if not events.empty():
            return events.get_nowait()
        self._committed.clear()
        getter = asyncio.ensure_future(events.get())
        committed = asyncio.ensure_future(self._committed.wait())
        await asyncio.wait((getter, committed), timeout=self.tick_s, return_when=asyncio.FIRST_COMPLETED)
        committed.cancel()
        if getter.done():
            return getter.result()
        getter.cancel()  # a cancelled get leaves its item in the queue
        return None

    # -- admission and leasing ------------------------------------------------------------------

    def _fill(self) -> None:
        """Lease what may start to free slots; take new units while there is room and budget."""
        while True:
            leased = self._lease_pending()
            took = self._take_one()
            if not leased and not took:
                return

    def _take_one(self) -> bool:
        session = self.session
        in_flight = len(self.pending) + len(self.table.active)
        if self._source_done or session.stopping or in_flight >= self.concurrency:
            return False
        if not self.admission.may_take():
            if not in_flight:  # not even one more trial fits the budget: the rest is cost-limited
                session.stop(cost_limited=True)
                self._source_done = True
            return False
        key = session.take()
        if key is None:
            # An adaptive run may hold units back until a trial in flight settles its case.
            self._source_done = not session.waiting
            return False
        self.admission.reserve(key)
        self.pending.append(key)
        self._taken += 1
        return True

    def _lease_pending(self) -> bool:
        """Lease pending units to the ready workers with the most free slots (the least recently used
        first).  A *suspect* unit (its worker was lost while running it) runs alone on an idle worker,
        so that a unit that kills its worker is told apart from the units that shared the worker."""
        leased = False
        for key in list(self.pending):
            if not self.admission.may_start(key.target):
                continue
            suspect = self.losses.get(key, 0) > 0
            worker = self._worker_for(suspect)
            if worker is None:
                if suspect:
                    continue
                break
            self.pending.remove(key)
            lease = self.table.grant(key, worker, time.monotonic())
            self.free[worker] -= 1
            self._turn += 1
            self._last_used[worker] = self._turn
            if suspect:
                self._alone[worker] = lease.id
                self._draining = None
            self.admission.started(key.target)
            seed = trial_seed(self.session.suite.execution.seed, key.case_id, key.trial)
            self.transport.send(worker, WorkUnit(lease.id, key.target, key.case_id, key.trial, seed))
            leased = True
        return leased

    def _worker_for(self, suspect: bool) -> int | None:
        """A ready worker for one more unit, or None (all busy; for a suspect, none idle yet)."""
        open_ = [w for w, free in self.free.items() if free and w not in self._alone]
        if suspect:
            idle = [w for w in open_ if self.free[w] == self.transport.slots]
            if idle:
                return idle[0]
            if self._draining not in self.free and open_:
                self._draining = max(open_, key=self.free.__getitem__)
            return None
        open_ = [w for w in open_ if w != self._draining]
        if not open_:
            return None
        return max(open_, key=lambda w: (self.free[w], -self._last_used.get(w, 0)))

    # -- events ----------------------------------------------------------------------------------

    def _handle(self, event: Event) -> None:
        if isinstance(event, Ready):
            self.free[event.worker] = self.transport.slots
            self._ready.add(event.worker)
        elif isinstance(event, Heartbeat):
            self.table.renew(event.worker, time.monotonic())
        elif isinstance(event, Completion):
            self._completed(event)
        elif isinstance(event, WorkerLost):
            self._lose(event.worker, event.why)
        elif event.kind == "evaluation":
            raise EvaluationError(event.message)
        else:
            where = f" running {event.unit.key}" if event.unit is not None else " at start"
            raise RuntimeError(f"{self.transport.name} worker {event.worker} failed{where}: {event.message}")

    def _completed(self, event: Completion) -> None:
        lease = self.table.release(event.unit.lease)
        if lease is not None:
            self._lease_ended(lease)
            if lease.worker in self.free:
                self.free[lease.worker] += 1
        key = event.unit.key
        if not self.table.accept(key):
            return  # a duplicate: the unit was re-queued and finished elsewhere first
        record = TrialRecord.from_json_line(event.record_json, where=f"worker {event.worker}")
        self._settle(key, record)

    def _settle(self, key: Unit, record: TrialRecord) -> None:
        if key in self.pending:
            self.pending.remove(key)
        self.admission.settle(key, record.cost_usd)
        task = asyncio.create_task(self.session.finish(record))
        task.add_done_callback(lambda _: self._committed.set())
        self._finishing.append(task)

    def _lease_ended(self, lease: Lease) -> None:
        """A lease is over (completed or lost): its target's running count goes down."""
        self.admission.stopped(lease.key.target)
        if self._alone.get(lease.worker) == lease.id:
            del self._alone[lease.worker]

    def _lose(self, worker: int, why: str) -> None:
        """Worker ``worker`` is gone or silent: kill and replace it, re-queue its units."""
        if worker not in self.free:
            if worker not in self._ready:
                raise RuntimeError(
                    f"{self.transport.name} worker {worker} stopped before it was ready: {why}"
                )
            return  # already lost (and replaced)
        del self.free[worker]
        self._alone.pop(worker, None)
        if self._draining == worker:
            self._draining = None
        for lease in self.table.held_by(worker):
            self.table.release(lease.id)
            self._lease_ended(lease)
            self._requeue(lease.key, why)
        self.transport.replace(worker)

    def _requeue(self, key: Unit, why: str) -> None:
        """Put a unit whose worker was lost back in front of the queue (or store it as errored)."""
        if key in self.table.done or key in self.pending:
            return
        losses = self.losses[key] = self.losses.get(key, 0) + 1
        if losses < MAX_LOSSES:
            self.pending.appendleft(key)
            return
        self.table.accept(key)
        self._settle(key, self.session.unrun(key, f"its worker was lost {losses} times ({why})"))

    def _check_finishing(self) -> None:
        """Raise the first failed commit (the store cannot be written); forget committed ones."""
        running = []
        for task in self._finishing:
            if not task.done():
                running.append(task)
            elif task.exception() is not None:
                raise task.exception()  # type: ignore[misc]
        self._finishing = running

    def _show(self) -> None:
        counters = self.session.counters
        counters.workers = len(self.free)
        counters.leases = len(self.table.active)
