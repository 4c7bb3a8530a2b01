"""Ray actors as workers: ``trialscore run suite.yaml --backend ray [--workers N] [--address ADDR]``.

Each worker is an async Ray actor (:class:`RayWorker`) holding a
:class:`~.worker.WorkerRuntime`; it runs up to ``slots`` units at once on its own event loop.

* Ray's own retries are off (``max_restarts=0``, ``max_task_retries=0``): a dead actor is the
  controller's business, which re-queues its leased units and starts a new actor, so a trial is
  never run twice behind the controller's back.
* Backpressure: the controller submits a unit only to a free slot, so at most ``concurrency``
  units are submitted at once (never the whole queue); results are collected with ``ray.wait``.
* Heartbeats: every ``heartbeat_s`` each actor is pinged; an answer renews its leases, a dead
  actor (``RayActorError``) is lost at once, and an actor that stops answering (a hung node)
  is lost when its leases expire.

Ray is optional (``pip install 'trialscore[ray]'``): it is imported only here, when this backend
is chosen.  On a cluster every node needs trialscore and what the suite's targets import, and
the targets' API key variables set.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
from dataclasses import replace
from typing import Any

from trialscore.errors import EvaluationError
from trialscore.runner.distributed.controller import Event
from trialscore.runner.distributed.protocol import (
    Completion,
    Crash,
    Heartbeat,
    Ready,
    WorkerLost,
    WorkerSetup,
    WorkUnit,
)

__all__ = ["RayWorker", "RayWorkers"]


class RayWorker:
    """The body of a Ray actor: rebuild the suite on :meth:`ready`, then run units."""

    def __init__(self, worker: int, setup: WorkerSetup) -> None:
        self.worker = worker
        self.setup = setup
        self.runtime: Any = None

    async def ready(self) -> Ready | Crash:
        """Build the targets and graders: :class:`Ready`, or the :class:`Crash` that stops the run."""
        from trialscore.runner.distributed.worker import WorkerRuntime, crash

        try:
            self.runtime = WorkerRuntime(self.worker, self.setup)
        except Exception as exc:  # sent to the controller, which stops the run with it
            return crash(self.worker, None, exc)
        return Ready(self.worker)

    async def run(self, unit: WorkUnit) -> Completion | Crash:
        """Run one unit."""
        result: Completion | Crash = await self.runtime.run(unit)
        return result

    async def ping(self) -> bool:
        """A heartbeat: the actor is alive and its event loop answers."""
        return True

    async def close(self) -> None:
        """Release the targets."""
        if self.runtime is not None:
            await self.runtime.aclose()


def _ray() -> Any:
    try:
        import ray
    except ImportError as exc:
        raise EvaluationError(
            "backend 'ray' needs Ray, which is not installed: pip install 'trialscore[ray]'"
        ) from exc
    return ray


class RayWorkers:
    """``workers`` Ray actors (None: one per CPU of the cluster) sharing ``concurrency`` slots."""

    name = "ray"

    def __init__(
        self, setup: WorkerSetup, workers: int | None, address: str | None, concurrency: int
    ) -> None:
        self.setup = setup
        self.workers = workers or 0
        self.slots = setup.slots
        self._asked = workers
        self._address = address
        self._concurrency = concurrency
        self._actors: dict[int, Any] = {}
        self._refs: dict[Any, tuple[int, str]] = {}
        self._pinged: set[int] = set()
        self._next = 0
        self._owns_ray = False
        self._poller: asyncio.Task[None] | None = None
        self._events: asyncio.Queue[Event] | None = None

    async def start(self, events: asyncio.Queue[Event]) -> None:
        """Join (or start) Ray, then start the actors."""
        ray = _ray()
        self._events = events
        if not ray.is_initialized():
            try:
                await asyncio.to_thread(ray.init, address=self._address, include_dashboard=False)
            except Exception as exc:  # a bad address, an unreachable cluster
                raise EvaluationError(f"address {self._address!r}: cannot join Ray: {exc}") from exc
            self._owns_ray = True
        if not self._asked:
            self.workers = max(1, int(ray.cluster_resources().get("CPU", 1)))
        self.slots = math.ceil(self._concurrency / self.workers)
        self.setup = replace(self.setup, slots=self.slots)
        self._class = ray.remote(max_restarts=0, max_task_retries=0)(RayWorker)
        for _ in range(self.workers):
            self._spawn()
        self._poller = asyncio.create_task(self._poll())

    def _spawn(self) -> None:
        worker, self._next = self._next, self._next + 1
        actor = self._class.options(max_concurrency=self.slots + 1).remote(worker, self.setup)
        self._actors[worker] = actor
        self._refs[actor.ready.remote()] = (worker, "ready")

    def send(self, worker: int, unit: WorkUnit) -> None:
        """Submit ``unit`` to ``worker``'s actor."""
        self._refs[self._actors[worker].run.remote(unit)] = (worker, "run")

    async def _poll(self) -> None:
        """Collect finished calls with ``ray.wait``; ping the actors every ``heartbeat_s``."""
        assert self._events is not None
        ray = _ray()
        loop = asyncio.get_running_loop()
        last_ping = loop.time()
        while True:
            if loop.time() - last_ping >= self.setup.heartbeat_s:
                last_ping = loop.time()
                for worker, actor in self._actors.items():
                    if worker not in self._pinged:
                        self._pinged.add(worker)
                        self._refs[actor.ping.remote()] = (worker, "ping")
            if not self._refs:
                await asyncio.sleep(0.05)
                continue
            results = await asyncio.to_thread(_collect, ray, list(self._refs))
            for ref, value, error in results:
                worker, kind = self._refs.pop(ref)
                if worker not in self._actors:
                    continue  # an actor already replaced
                if error is not None:
                    self._events.put_nowait(WorkerLost(worker, f"its Ray actor died: {error}"))
                elif kind == "ping":
                    self._pinged.discard(worker)
                    self._events.put_nowait(Heartbeat(worker))
                else:
                    self._events.put_nowait(value)

    def replace(self, worker: int) -> None:
        """Kill ``worker``'s actor and start a new one."""
        actor = self._actors.pop(worker, None)
        self._pinged.discard(worker)
        if actor is not None:
            with contextlib.suppress(Exception):
                _ray().kill(actor, no_restart=True)
        self._spawn()

    async def stop(self, graceful: bool) -> None:
        """Stop polling, close and kill the actors, and shut down a Ray this run started."""
        ray = _ray()
        if self._poller is not None:
            self._poller.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._poller
        actors = list(self._actors.values())
        self._actors.clear()
        self._refs.clear()
        if graceful and actors:
            with contextlib.suppress(Exception):
                await asyncio.to_thread(ray.get, [actor.close.remote() for actor in actors], timeout=10)
        for actor in actors:
            with contextlib.suppress(Exception):
                ray.kill(actor, no_restart=True)
        if self._owns_ray:
            await asyncio.to_thread(ray.shutdown)


def _collect(ray: Any, refs: list[Any]) -> list[tuple[Any, Any, BaseException | None]]:
    """Wait up to 0.1 s for some of ``refs``; each ready one as (ref, value, error getting it)."""
    ready, rest = ray.wait(refs, num_returns=1, timeout=0.1)
    if ready and rest:
        more, _ = ray.wait(rest, num_returns=len(rest), timeout=0)
        ready += more
    results: list[tuple[Any, Any, BaseException | None]] = []
    for ref in ready:
        try:
            results.append((ref, ray.get(ref), None))
        except Exception as exc:  # RayActorError and its kin: the actor is gone
            results.append((ref, None, exc))
    return results
