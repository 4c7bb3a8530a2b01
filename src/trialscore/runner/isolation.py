"""A python target's call in a process of its own (``isolation: process``), ended when it runs too long.

A sync call in a thread cannot be stopped: a call that spins keeps its thread and holds the GIL,
which the event loop and every other trial need.  With ``isolation: process`` each call runs in a
fresh process (from a ``forkserver`` on Linux, else ``spawn``), which imports the callable itself;
past ``timeout_s`` the process is killed, so a spinning call costs neither CPU nor GIL afterwards.
The price is a process start per call (some milliseconds, plus importing the callable's module),
and the case, the seed and the reply cross a pipe (they must pickle; they are plain data).

The forkserver imports once what every call's process would otherwise import on its own
(:data:`CALL_PRELOAD`, and what :func:`process_context` adds for every use): a process forked from
it must not pay for the modules that unpickling its case loads (the suite's schema: Pydantic,
NumPy), nor for the modules of the parent's main script, which multiprocessing runs again in every
process it starts that way.  Until CPython fixed gh-126631 (in 3.14, and in 3.13 from its autumn
2025 updates), the server never preloads that script (its ``__main__`` preload was dead code), so
when the parent runs trialscore's command line, the command line's module is preloaded instead:
the script's one import then finds it loaded.  Without both, each call's process spent about 0.3 s
of CPU importing before the call began (``benchmarks/isolation.py``: about 9 ms a call now,
against 2 ms for a bare ``fork``).
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import os
import select
import signal
import sys
import threading
from collections.abc import Sequence
from multiprocessing.connection import Connection
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trialscore.runner.offloop import within

if TYPE_CHECKING:  # ForkServerContext does not exist on Windows
    from multiprocessing.context import ForkServerContext, SpawnContext

__all__ = ["CALL_PRELOAD", "call_in_process", "process_context"]

#: What the forkserver of the calls imports when it starts (see the module docstring): this module,
#: the callable's loader and the case's class.
CALL_PRELOAD = (__name__, "trialscore.runner.imports", "trialscore.runner.suite.schema")
#: The module trialscore's command-line script imports (preloaded when this process has it loaded).
_COMMAND_LINE = "trialscore.cli"

#: Seconds a killed call's process is waited for.
_JOIN_S = 5.0
#: Seconds a call's process may take to start and import the callable before the call is timed.
_START_S = 60.0
_STARTED = "started"


def process_context(preload: Sequence[str]) -> SpawnContext | ForkServerContext:
    """How the runner starts a process of its own: from a ``forkserver`` on Linux, else ``spawn``.

    The forkserver (one for this process, whoever uses it) is a fresh interpreter that imports
    ``preload`` once, when it starts, and with it this process's main script (where Python preloads
    it: see the module docstring) and trialscore's command line when this process has loaded it (the
    command's script, run again in each process, then imports nothing); a process forked from it
    has those modules already and nothing of this process (its modules, its memory, its open files).
    A use that did not start the server gets its modules imported by each of its processes instead.

    >>> context = process_context(CALL_PRELOAD)
    >>> sys.platform != "linux" or context.get_start_method() == "forkserver"
    True
    """
    if not sys.platform.startswith("linux"):
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    command_line = [_COMMAND_LINE] if _COMMAND_LINE in sys.modules else []
    context.set_forkserver_preload(["__main__", *preload, *command_line])
    return context


def _end_with(requester: int) -> None:
    """Kill this process when process ``requester`` ends (Linux: a thread waits on its pidfd).

    A call's process is not a child of the process that asked for it (the forkserver forked it), so
    the parent-death signal cannot tie them; a worker killed mid-call would leave it running.
    """
    try:
        watched = os.pidfd_open(requester)
    except ProcessLookupError:  # it ended before the call began
        os.kill(os.getpid(), signal.SIGKILL)
    except (OSError, AttributeError):  # no pidfd (an old kernel, another system): not watched
        return

    def wait() -> None:
        select.select([watched], [], [])
        os.kill(os.getpid(), signal.SIGKILL)

    threading.Thread(target=wait, name="trialscore-requester", daemon=True).start()


def _child(
    out: Connection,
    requester: int,
    reference: str,
    directory: str,
    where: str,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> None:
    """In the call's process: import the callable, call it, send ``(ok, value or message)`` back;
    killed when ``requester`` (the process that asked for the call) ends."""
    import inspect

    from trialscore.runner.imports import load_callable

    _end_with(requester)
    try:
        fn = load_callable(reference, Path(directory), where)
        out.send(_STARTED)  # the call's own clock starts now, not when the process was asked for
        value = fn(*args, **kwargs)
        if inspect.isawaitable(value):
            value = asyncio.run(_awaited(value))
        out.send((True, value))
    except BaseException as exc:  # the parent errors the trial with it
        out.send((False, f"raised {type(exc).__name__}: {exc}"))
    finally:
        out.close()


async def _awaited(value: Any) -> Any:
    return await value


async def call_in_process(
    reference: str,
    directory: Path,
    where: str,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    timeout: float | None,
) -> tuple[bool, Any]:
    """Call ``reference(*args, **kwargs)`` in a process of its own: ``(True, value)`` or ``(False,
    message)``; :class:`TimeoutError` (the process killed) when the call runs past ``timeout``
    seconds, timed from when the process starts it (its start and import are not the call's)."""
    context = process_context(CALL_PRELOAD)  # imported once, by the server
    receive, send = context.Pipe(duplex=False)
    process = context.Process(
        target=_child, args=(send, os.getpid(), reference, str(directory), where, args, kwargs), daemon=True
    )
    process.start()
    send.close()
    loop = asyncio.get_running_loop()
    ready = asyncio.Event()
    loop.add_reader(receive.fileno(), ready.set)

    async def message(seconds: float | None) -> Any:
        await (within(ready.wait(), seconds) if seconds is not None else ready.wait())
        ready.clear()
        if not receive.poll():  # woken, but the message is not whole yet
            return await message(seconds)
        return receive.recv()

    try:
        try:
            first = await message(_START_S)
            result: tuple[bool, Any] = first if first != _STARTED else await message(timeout)
        except EOFError:  # the process died without answering
            process.join(_JOIN_S)
            return False, f"its process ended without a reply (exit status {process.exitcode})"
        return result
    finally:
        loop.remove_reader(receive.fileno())
        receive.close()
        if process.is_alive():
            with contextlib.suppress(ProcessLookupError):
                process.kill()
        await asyncio.get_running_loop().run_in_executor(None, process.join, _JOIN_S)
