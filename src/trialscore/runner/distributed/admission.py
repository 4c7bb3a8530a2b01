r"""Admission of work units across workers: per-target concurrency caps and cost reserved at lease.

**Caps.** A target's ``max_concurrency`` (the rate limit of its API) bounds its trials running
at once over every worker: a unit of a target at its cap waits in the controller's queue.

**Budget.** With a run cost limit ``L``, a unit is taken only if the spend so far ``S``, the
cost reserved for the units taken and not finished ``R``, and the estimate ``e`` of one more
trial fit:

.. math:: S + R + e \le L

(a unit that does not fit is not taken, and once nothing is in flight the rest of the run is
counted as cost-limited, as when the spend reaches ``L``).  The
estimate of a target's trial is, in this order: the ceiling the suite sets
(``max_cost_usd``), the mean known cost of that target's finished trials, the mean of every
finished trial, 0 when trials finished with unknown costs (the limit cannot be enforced then),
or unknown before any trial finished (then one unit at a time is taken until one finishes).
A reservation is settled when its unit finishes: the actual cost is charged to the run's
budget and the reservation released.  So the spend passes ``L`` by at most the cost of the
trials in flight, whatever the number of workers, and by nothing when every trial costs at
most its ceiling.  (Before the first trial finishes, with no ceiling, one trial runs at a time.)

>>> from trialscore.runner.adaptive import Unit
>>> admission = Admission(limit=1.0, caps={"api": 1}, ceilings={}, targets=("api",))
>>> admission.may_take(), admission.reserve(Unit("api", "c", 0))
(True, None)
>>> admission.may_take()  # the first trial's cost is not known yet
False
>>> admission.may_start("api"), admission.started("api"), admission.may_start("api")
(True, None, False)
>>> admission.settle(Unit("api", "c", 0), 0.4); admission.estimate("api")
0.4
>>> admission.reserve(Unit("api", "c", 1)); admission.may_take()  # 0.4 spent + 0.4 reserved + 0.4 > 1
False
>>> admission.settle(Unit("api", "c", 1), 0.1); admission.may_take()  # 0.5 spent + 0.25 <= 1
True
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from trialscore.runner.adaptive import Unit

__all__ = ["Admission"]


class Admission:
    """Caps and cost reservations of one run (``limit`` None: no budget to keep)."""

    def __init__(
        self,
        limit: float | None,
        caps: Mapping[str, int],
        ceilings: Mapping[str, float],
        targets: Sequence[str],
    ) -> None:
        self.limit = limit
        self.caps = dict(caps)
        self.ceilings = dict(ceilings)
        self.targets = tuple(targets)
        self.running: dict[str, int] = {}
        self.reserved: dict[Unit, float] = {}
        self._known: dict[str, list[float]] = {}  # per target: [sum of known costs, count]
        self._finished = 0
        self.spent = 0.0

    def estimate(self, target: str) -> float | None:
        """The cost reserved for one trial of ``target`` (None = nothing to go on yet)."""
        if target in self.ceilings:
            return self.ceilings[target]
        total, count = self._known.get(target, (0.0, 0))
        if count:
            return total / count
        every = [value for value in self._known.values() if value[1]]
        if every:
            return math.fsum(v[0] for v in every) / sum(int(v[1]) for v in every)
        return 0.0 if self._finished else None

    def may_take(self) -> bool:
        """Whether one more unit (of any target) may be taken now."""
        if self.limit is None:
            return True
        estimates = [self.estimate(target) for target in self.targets]
        if any(value is None for value in estimates):
            return not self.reserved  # nothing to go on: one trial at a time until one finishes
        most = max(value for value in estimates if value is not None)
        return self.spent + math.fsum(self.reserved.values()) + most <= self.limit

    def reserve(self, key: Unit) -> None:
        """Reserve the estimated cost of unit ``key`` (taken now, finished later)."""
        self.reserved[key] = self.estimate(key.target) or 0.0

    def may_start(self, target: str) -> bool:
        """Whether a trial of ``target`` may start now without passing its ``max_concurrency``."""
        cap = self.caps.get(target)
        return cap is None or self.running.get(target, 0) < cap

    def started(self, target: str) -> None:
        """A trial of ``target`` is leased to a worker."""
        self.running[target] = self.running.get(target, 0) + 1

    def stopped(self, target: str) -> None:
        """A trial of ``target`` finished or its lease ended."""
        self.running[target] -= 1

    def settle(self, key: Unit, cost: float | None) -> None:
        """Unit ``key`` finished with ``cost`` (None = unknown): its reservation is released."""
        self.reserved.pop(key, None)
        self.observe(key.target, cost)

    def observe(self, target: str, cost: float | None) -> None:
        """Learn from a finished trial of ``target`` (also the stored ones of a resumed run)."""
        self._finished += 1
        if cost is not None:
            self.spent += cost
            known = self._known.setdefault(target, [0.0, 0])
            known[0] += cost
            known[1] += 1
