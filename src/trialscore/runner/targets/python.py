"""The ``python`` target: a callable given the case and the trial's seed, sync or async.

``fn(case, seed)`` returns a string, a :class:`TargetReply` or a mapping with
``output`` (and optionally ``cost_usd`` and ``tokens``).  An async callable is
awaited on the runner's event loop; a sync one runs in a daemon thread of its own.
A thread cannot be interrupted, so a timeout abandons a hung call rather than
stopping it: the hung call keeps only its own thread (later trials do not queue
behind it), and being a daemon thread it does not keep the process alive at exit.
An exception it raises errors the trial; :class:`TransientTargetError` asks for a retry.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import itertools
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from trialscore.runner.imports import load_callable
from trialscore.runner.suite import PythonTargetSpec
from trialscore.runner.targets.base import TargetReply, TrialRequest, reply_from

__all__ = ["PythonTarget", "in_daemon_thread"]

T = TypeVar("T")
_CALLS = itertools.count()


async def in_daemon_thread(fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` in a new daemon thread; the awaiting task may give up on it (a timeout).

    Unlike a thread pool, a call that never returns holds only its own thread: it
    delays no other call, and the process can exit without waiting for it.

    >>> asyncio.run(in_daemon_thread(pow, 2, 10))
    1024
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def deliver(value: Any, error: BaseException | None) -> None:
        if future.done():  # the caller gave up (timeout, cancel)
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(value)

    def work() -> None:
        value, error = None, None
        try:
            value = fn(*args)
        except BaseException as exc:  # delivered to the awaiting task
            error = exc
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits any more
            loop.call_soon_threadsafe(deliver, value, error)

    threading.Thread(target=work, name=f"trialscore-call-{next(_CALLS)}", daemon=True).start()
    return await future


class PythonTarget:
    """Calls the suite's ``callable`` once per trial."""

    def __init__(self, spec: PythonTargetSpec, directory: Path) -> None:
        self.name = spec.name
        self._where = f"target {spec.name!r}"
        self._fn = load_callable(spec.callable, directory, self._where)
        self._is_async = inspect.iscoroutinefunction(self._fn)

    async def __call__(self, request: TrialRequest) -> TargetReply:
        """Call the function for one trial."""
        if self._is_async:
            value = await self._fn(request.case, request.seed)
        else:
            value = await in_daemon_thread(self._fn, request.case, request.seed)
        return reply_from(value, self._where)

    async def aclose(self) -> None:
        """Nothing to release."""
