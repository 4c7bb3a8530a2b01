"""Work kept off the event loop: a call in a daemon thread of its own, and a deadline on an awaitable.

The runner's event loop must stay free: it commits trials, starts new ones and handles Ctrl-C and
SIGTERM.  A sync target, a sync python grader and a regex match run in :func:`in_daemon_thread`
under :func:`within` a time limit.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

__all__ = ["in_daemon_thread", "within"]

T = TypeVar("T")
_CALLS = itertools.count()


async def in_daemon_thread(fn: Callable[..., T], *args: Any, timeout: float | None = None) -> T:
    """``fn(*args)`` in a new daemon thread; the awaiting task may give up on it (a timeout).

    Unlike a thread pool, a call that never returns holds only its own thread: it
    delays no other call, and the process can exit without waiting for it.

    ``timeout``: the call is timed by its own clock, from when its thread started it to when it
    returned, not by the event loop's: a CPU-bound call elsewhere in the process holds the GIL
    and makes the loop late, and a call that returned within ``timeout`` is not turned into a
    timeout because the loop noticed it late.  :class:`TimeoutError` once the call has run
    ``timeout`` seconds without returning.

    >>> asyncio.run(in_daemon_thread(pow, 2, 10))
    1024
    >>> import time
    >>> asyncio.run(in_daemon_thread(time.sleep, 5, timeout=0.05))
    Traceback (most recent call last):
    ...
    TimeoutError
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()
    clock: list[float] = []  # [started] then [started, returned], by the thread's own clock

    def deliver(value: Any, error: BaseException | None) -> None:
        if future.done():  # the caller gave up (timeout, cancel)
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(value)

    def work() -> None:
        value, error = None, None
        clock.append(time.monotonic())
        try:
            value = fn(*args)
        except BaseException as exc:  # delivered to the awaiting task
            error = exc
        clock.append(time.monotonic())
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits any more
            loop.call_soon_threadsafe(deliver, value, error)

    threading.Thread(target=work, name=f"trialscore-call-{next(_CALLS)}", daemon=True).start()
    if timeout is None:
        return await future
    left = timeout
    while True:
        try:
            return await within(asyncio.shield(future), left)
        except TimeoutError:
            if len(clock) == 2 and clock[1] - clock[0] <= timeout:
                return await future  # it returned in time: the loop was late to see it
            if clock and time.monotonic() - clock[0] >= timeout:
                raise
            left = timeout - (time.monotonic() - clock[0]) if clock else timeout  # its thread started late


async def within(call: Awaitable[T], seconds: float) -> T:
    """``await call`` with a deadline, in the calling task; :class:`TimeoutError` when it passes.

    ``asyncio.timeout`` (Python 3.11+) runs the call in the worker's own task;
    ``asyncio.wait_for`` (3.10) wraps it in a new task, which defers the call's
    first step to the loop's next round: with hundreds of trials in flight that
    delay adds up, so the newer one is used where it exists.

    >>> async def slow() -> int:
    ...     await asyncio.sleep(10)
    ...     return 1
    >>> asyncio.run(within(slow(), 0.01))
    Traceback (most recent call last):
    ...
    TimeoutError
    """
    try:
        if hasattr(asyncio, "timeout"):
            async with asyncio.timeout(seconds):
                return await call
        return await asyncio.wait_for(call, seconds)
    except asyncio.TimeoutError as exc:  # a subclass of TimeoutError only from Python 3.11
        raise TimeoutError() from exc
