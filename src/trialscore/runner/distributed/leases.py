"""The lease table: which worker runs which unit, until when, and which units are done.

* A lease is granted to one worker for one unit with a deadline ``now + ttl``.
* A :class:`~trialscore.runner.distributed.protocol.Heartbeat` from the worker renews every
  lease it holds; a lease whose deadline passes has *expired*: the controller treats its
  worker as lost and re-queues the unit.
* The first completion of a unit (whichever lease it came under) is accepted; any later one
  (a slow worker finishing a unit that was re-queued and run again) is a duplicate and is
  ignored, so each trial is written once.  The store's unique key on (run, target, case,
  trial) would refuse a second row anyway.

>>> table = LeaseTable(ttl_s=10.0)
>>> first = table.grant(("a", "add", 0), worker=1, now=0.0)
>>> [lease.key for lease in table.expired(now=11.0)]
[('a', 'add', 0)]
>>> table.accept(("a", "add", 0)), table.accept(("a", "add", 0))
(True, False)
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from trialscore.runner.adaptive import Unit

__all__ = ["Lease", "LeaseTable"]


@dataclass
class Lease:
    """Unit ``key`` leased to ``worker`` under id ``id`` until ``deadline`` (monotonic seconds)."""

    id: int
    key: Unit
    worker: int
    deadline: float


class LeaseTable:
    """The leases in force, the units done, and the duplicate completions ignored.

    ``ttl_s`` is how long a lease lives without a heartbeat of its worker.
    """

    def __init__(self, ttl_s: float) -> None:
        if not ttl_s > 0:
            raise ValueError(f"ttl_s must be > 0; got {ttl_s!r}")
        self.ttl_s = ttl_s
        self._ids = itertools.count(1)
        self.active: dict[int, Lease] = {}
        self.done: set[Unit] = set()
        self.duplicates = 0
        self.expired_count = 0

    def __len__(self) -> int:
        return len(self.active)

    def grant(self, key: Unit, worker: int, now: float) -> Lease:
        """A new lease of ``key`` to ``worker``, alive until ``now + ttl_s``."""
        lease = Lease(next(self._ids), key, worker, now + self.ttl_s)
        self.active[lease.id] = lease
        return lease

    def held_by(self, worker: int) -> list[Lease]:
        """The leases ``worker`` holds now."""
        return [lease for lease in self.active.values() if lease.worker == worker]

    def renew(self, worker: int, now: float) -> None:
        """A heartbeat of ``worker``: each of its leases lives ``ttl_s`` from ``now``."""
        for lease in self.active.values():
            if lease.worker == worker:
                lease.deadline = now + self.ttl_s

    def release(self, lease_id: int) -> Lease | None:
        """End lease ``lease_id`` (its unit completed, or its worker is lost); None if not in force."""
        return self.active.pop(lease_id, None)

    def expired(self, now: float) -> list[Lease]:
        """Remove and return the leases whose deadline has passed."""
        gone = [lease for lease in self.active.values() if lease.deadline <= now]
        for lease in gone:
            del self.active[lease.id]
        self.expired_count += len(gone)
        return gone

    def accept(self, key: Unit) -> bool:
        """True for the first completion of ``key``; False (and counted) for every later one."""
        if key in self.done:
            self.duplicates += 1
            return False
        self.done.add(key)
        return True
