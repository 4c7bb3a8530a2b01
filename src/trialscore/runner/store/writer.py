"""The store's single writer: every finished trial of a session is committed by it, in group commits.

Whoever runs a trial (an in-process worker, the controller on behalf of a worker process or a Ray
actor) hands the row to :meth:`Writer.commit` and waits for the commit before it starts another
trial, so at most the trials in flight are lost when the process is killed
(:mod:`trialscore.runner.store`).
"""

from __future__ import annotations

import asyncio

from trialscore.errors import StoreError
from trialscore.runner.store.sqlite import TrialRow, TrialStore

__all__ = ["Writer"]


class Writer:
    """The single writer: commits every row handed to it since its last commit, in one transaction.

    The commit runs on the event loop itself.  In WAL mode with
    ``synchronous=NORMAL`` it appends to the log without an fsync (only the
    occasional checkpoint syncs), well under a millisecond for a batch; a writer
    thread would instead wait for the GIL (up to the 5 ms switch interval) while
    the loop is busy, delaying every trial's commit.  Made on a running event loop.
    """

    def __init__(self, store: TrialStore) -> None:
        self._store = store
        self._rows: list[TrialRow] = []
        self._waiters: list[asyncio.Future[None]] = []
        self._wake = asyncio.Event()
        self._closing = False
        self.failed: StoreError | None = None
        self._task = asyncio.create_task(self._run())

    async def commit(self, row: TrialRow) -> None:
        """Hand over one finished trial and wait until it is committed.

        If the waiting task is cancelled, the row is still committed.  Once a
        commit has failed (the store cannot be written) every later call raises
        that :class:`StoreError` at once: the run must stop, not wait.
        """
        if self.failed is not None:
            raise self.failed
        waiter = asyncio.get_running_loop().create_future()
        self._rows.append(row)
        self._waiters.append(waiter)
        self._wake.set()
        await waiter

    async def _run(self) -> None:
        while True:
            if not self._rows:
                if self._closing:
                    return
                await self._wake.wait()
                self._wake.clear()
                continue
            rows, waiters = self._rows, self._waiters
            self._rows, self._waiters = [], []
            try:
                self._store.insert(rows)
            except Exception as exc:  # any failure must reach the waiting workers, or they wait forever
                failed = (
                    exc
                    if isinstance(exc, StoreError)
                    else StoreError(
                        f"store {str(self._store.path)!r}: cannot commit trials: {type(exc).__name__}: {exc}"
                    )
                )
                self.failed = failed
                for waiter in [*waiters, *self._waiters]:
                    if not waiter.done():
                        waiter.set_exception(failed)
                self._rows, self._waiters = [], []
                return
            for waiter in waiters:
                if not waiter.done():
                    waiter.set_result(None)

    async def close(self) -> None:
        """Commit what is pending, then stop."""
        self._closing = True
        self._wake.set()
        await self._task
