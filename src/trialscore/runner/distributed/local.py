"""Local worker processes: ``trialscore run suite.yaml --workers N``.

Each worker is a process of its own joined to the controller by a duplex pipe.  On Linux it is
forked from a ``forkserver`` (:func:`~trialscore.runner.isolation.process_context`): a fresh
interpreter that imports the worker's modules once, so a worker (a replacement too) starts in
milliseconds instead of importing the runner again; elsewhere it is a fresh interpreter
(``spawn``).  Either way no state of the controller is copied, and the worker gets the
controller's environment as it is when the worker starts (the server's is from when it started).
The worker rebuilds the suite (:class:`~.worker.WorkerRuntime`), says :class:`~.protocol.Ready`,
runs the units it is sent on its own asyncio loop (up to ``slots`` at once), answers each with
its record, and sends a heartbeat every ``heartbeat_s`` seconds.

* The controller reads every pipe on its event loop (``add_reader``); a pipe that closes is a
  lost worker (killed, crashed), seen at once rather than when its leases expire.
* A worker whose pipe to the controller closes (the controller was killed) stops: it cancels
  its trials (their programs are killed) and exits, so no orphan keeps calling targets.
* Ctrl-C reaches only the controller's handler (workers ignore SIGINT); the controller then
  sends SIGTERM, on which a worker cancels its trials and exits.
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import os
import signal
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess

from trialscore.runner.distributed.controller import Event
from trialscore.runner.distributed.protocol import Heartbeat, Ready, WorkerLost, WorkerSetup, WorkUnit
from trialscore.runner.isolation import process_context

__all__ = ["LocalWorkers", "worker_main"]

#: What the forkserver imports once for every worker (besides the parent's main module, which
#: ``process_context`` adds): this module and the worker's runtime (the suite, targets and graders).
_PRELOAD = (__name__, "trialscore.runner.distributed.worker")


def worker_main(conn: Connection, worker: int, setup: WorkerSetup, environment: dict[str, str]) -> None:
    """The body of a worker process (the controller starts it; not for direct use).

    ``environment`` is the controller's when it started the worker (API key variables set since
    the forkserver started are in it, variables removed since are not).
    """
    from trialscore.runner.reaper import enable_subreaper

    os.environ.clear()
    os.environ.update(environment)
    # daemonic to the controller (which ends it), not to itself: a target with ``isolation: process``
    # starts a process of its own per call, which multiprocessing refuses a daemonic process
    multiprocessing.current_process().daemon = False
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    enable_subreaper()  # the process exists for the run: it adopts what its programs orphan
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve(conn, worker, setup))


async def _serve(conn: Connection, worker: int, setup: WorkerSetup) -> None:
    from trialscore.runner.distributed.worker import WorkerRuntime, crash

    loop = asyncio.get_running_loop()
    inbox: asyncio.Queue[WorkUnit | None] = asyncio.Queue()

    def send(message: object) -> None:
        try:
            conn.send(message)
        except OSError:  # the controller is gone: stop
            inbox.put_nowait(None)

    try:
        runtime = WorkerRuntime(worker, setup)
    except Exception as exc:  # reported to the controller, which stops the run with it
        send(crash(worker, None, exc))
        return

    def readable() -> None:
        try:
            while conn.poll():
                inbox.put_nowait(conn.recv())
        except (EOFError, OSError):
            loop.remove_reader(conn.fileno())
            inbox.put_nowait(None)

    loop.add_reader(conn.fileno(), readable)
    loop.add_signal_handler(signal.SIGTERM, inbox.put_nowait, None)

    async def beat() -> None:
        while True:
            await asyncio.sleep(setup.heartbeat_s)
            send(Heartbeat(worker))

    async def run(unit: WorkUnit) -> None:
        send(await runtime.run(unit))

    heart = asyncio.create_task(beat())
    tasks: set[asyncio.Task[None]] = set()
    send(Ready(worker))
    try:
        while (unit := await inbox.get()) is not None:
            task = asyncio.create_task(run(unit))
            tasks.add(task)
            task.add_done_callback(tasks.discard)
    finally:
        heart.cancel()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await runtime.aclose()


class LocalWorkers:
    """``workers`` local worker processes with ``slots`` trials each (a :class:`~.controller.Transport`)."""

    name = "local"

    def __init__(self, setup: WorkerSetup, workers: int) -> None:
        self.setup = setup
        self.workers = workers
        self.slots = setup.slots
        self._context = process_context(_PRELOAD)
        self._processes: dict[int, tuple[BaseProcess, Connection]] = {}
        self._next = 0
        self._events: asyncio.Queue[Event] | None = None

    async def start(self, events: asyncio.Queue[Event]) -> None:
        """Start the workers (they report :class:`Ready` on ``events`` once they have the suite)."""
        self._events = events
        for _ in range(self.workers):
            self._spawn()

    def _spawn(self) -> None:
        worker, self._next = self._next, self._next + 1
        parent, child = self._context.Pipe(duplex=True)
        process = self._context.Process(
            target=worker_main,
            args=(child, worker, self.setup, dict(os.environ)),
            name=f"trialscore-worker-{worker}",
            daemon=True,
        )
        process.start()
        child.close()
        self._processes[worker] = (process, parent)
        asyncio.get_running_loop().add_reader(parent.fileno(), self._readable, worker)

    def _readable(self, worker: int) -> None:
        assert self._events is not None
        process, conn = self._processes[worker]
        try:
            while conn.poll():
                self._events.put_nowait(conn.recv())
        except (EOFError, OSError):
            self._forget(worker)
            process.join(1.0)
            self._events.put_nowait(WorkerLost(worker, f"its process ended (exit code {process.exitcode})"))

    def _forget(self, worker: int) -> tuple[BaseProcess, Connection]:
        process, conn = self._processes.pop(worker)
        with contextlib.suppress(ValueError, OSError):
            asyncio.get_running_loop().remove_reader(conn.fileno())
        conn.close()
        return process, conn

    def send(self, worker: int, unit: WorkUnit) -> None:
        """Send ``unit`` to ``worker``; a broken pipe is reported as a lost worker."""
        assert self._events is not None
        try:
            self._processes[worker][1].send(unit)
        except (OSError, KeyError):
            self._events.put_nowait(WorkerLost(worker, "its pipe is closed"))

    def replace(self, worker: int) -> None:
        """Kill ``worker`` (if it still runs) and start a new one."""
        if worker in self._processes:
            process, _ = self._forget(worker)
            process.kill()
            process.join(5.0)
        self._spawn()

    async def stop(self, graceful: bool) -> None:
        """End every worker: ask it to finish (``graceful``) or SIGTERM it; SIGKILL what is left."""
        ending = []
        for worker in list(self._processes):
            process, conn = self._processes[worker]
            if graceful:
                with contextlib.suppress(OSError):
                    conn.send(None)
            else:
                process.terminate()
            self._forget(worker)
            ending.append(process)
        await asyncio.to_thread(_end, ending)


def _end(processes: list[BaseProcess], wait_s: float = 5.0) -> None:
    """Wait up to ``wait_s`` for ``processes`` to exit, then SIGKILL the rest."""
    for process in processes:
        process.join(wait_s)
        if process.is_alive():
            process.kill()
            process.join(wait_s)
