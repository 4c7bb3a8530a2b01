"""The in-process loop: ``concurrency`` workers on the run's event loop pull units from the session.

* **Concurrency.** ``concurrency`` workers pull units; that is the global limit on trials in
  flight (judge calls run inside their trial's slot).  A target's ``max_concurrency`` caps its
  own trials in flight.
* **Durability.** A worker hands its finished trial to :meth:`Session.finish
  <trialscore.runner.session.Session.finish>` and waits for the commit before it takes another.
* **Backends.** With a :class:`~trialscore.runner.session.Backend` (worker processes, Ray actors)
  the loop runs that backend in place of its own workers.
* **Ctrl-C / SIGTERM.** No new unit starts, the trials in flight are cancelled (their programs
  killed), the committed ones stay.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Coroutine
from typing import Any

from trialscore.runner.progress import RunProgress
from trialscore.runner.session import Backend, Session

__all__ = ["serve"]


async def _worker(session: Session, caps: dict[str, asyncio.Semaphore]) -> None:
    while (unit := await session.next()) is not None:
        cap = caps.get(unit.target)
        async with cap if cap is not None else contextlib.nullcontext():
            record = await session.run(unit)
        await session.finish(record)


async def serve(
    session: Session,
    progress: RunProgress,
    *,
    concurrency: int,
    backend: Backend | None = None,
    signals: bool = True,
) -> bool:
    """Run the session's units; True when all ran, False when interrupted.

    When the awaiting task is cancelled, the trials in flight are cancelled too (the committed
    ones stay) and the cancellation goes on to the caller.  A worker that fails (the store
    cannot commit) stops the others, and its exception is raised.
    """
    loop = asyncio.get_running_loop()
    jobs: list[Coroutine[Any, Any, None]]
    if backend is not None:
        jobs = [backend.serve(session)]
    else:
        caps = {
            name: asyncio.Semaphore(cap)
            for name in session.evaluated
            if (cap := session.suite.target(name).max_concurrency) is not None
        }
        jobs = [_worker(session, caps) for _ in range(concurrency)]
    workers = [asyncio.create_task(job) for job in jobs]

    def interrupt() -> None:
        session.stop()
        for task in workers:
            task.cancel()

    handled = []
    for signum in (signal.SIGINT, signal.SIGTERM) if signals else ():
        with contextlib.suppress(ValueError, RuntimeError, NotImplementedError):
            loop.add_signal_handler(signum, interrupt)
            handled.append(signum)

    async def refresh() -> None:
        while True:
            progress.refresh()
            await asyncio.sleep(0.1)

    refresher = asyncio.create_task(refresh())
    try:
        _, pending = await asyncio.wait(workers, return_when=asyncio.FIRST_EXCEPTION)
        if pending:  # a worker failed (the store cannot commit): stop the others
            interrupt()
            await asyncio.wait(pending)
    except asyncio.CancelledError:  # the caller cancelled the run: no worker outlives it
        interrupt()
        await asyncio.wait(workers)
        raise
    finally:
        refresher.cancel()
        for signum in handled:
            loop.remove_signal_handler(signum)
    # Every failed worker's exception is retrieved (several fail alike when the store does).
    errors = [task.exception() for task in workers if not task.cancelled()]
    for error in errors:
        if error is not None:
            raise error
    return not session.stopping
