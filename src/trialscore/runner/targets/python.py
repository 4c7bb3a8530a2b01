"""The ``python`` target: a callable given the case and the trial's seed, sync or async.

``fn(case, seed)`` returns a string, a :class:`TargetReply`, a mapping with
``output`` (and optionally ``cost_usd`` and ``tokens``), or a trajectory: a mapping with
``tool_calls`` (and optionally ``output``, ``steps``, ``tokens``, ``cost_usd``;
:mod:`trialscore.results.trajectory`), whose calls the trial record keeps.  A callable that
takes an ``attempt`` keyword is also given the attempt (0, then 1, 2, ... on retries, each with
a seed of its own).
An async callable is awaited on the runner's event loop; a sync one runs in a daemon thread of its own.
A thread cannot be interrupted, so a timeout abandons a hung call rather than
stopping it: the hung call keeps only its own thread (later trials do not queue
behind it), and being a daemon thread it does not keep the process alive at exit.
An exception it raises errors the trial; :class:`TransientTargetError` asks for a retry.

A sync call is timed by its own clock (from when its thread started it to when it returned),
not by the event loop's: a call that spins holds the GIL and makes the loop late, and a healthy
call that returned within ``timeout_s`` is not turned into a timeout because the loop saw it late.
A callable that may spin (CPU-bound, or a loop that may never end) should run with
``isolation: process``: each call in a process of its own, killed past ``timeout_s``
(:mod:`trialscore.runner.isolation`), so a spinning call takes nothing from the other trials.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

from trialscore.errors import EvaluationError
from trialscore.runner.imports import load_callable
from trialscore.runner.isolation import call_in_process
from trialscore.runner.offloop import in_daemon_thread, within
from trialscore.runner.registry import Loc, Name, Problem, TargetSpecBase, register_target
from trialscore.runner.targets.base import (
    TargetError,
    TargetReply,
    TrialRequest,
    check_output_size,
    reply_from,
)

__all__ = ["PythonTarget", "PythonTargetSpec", "in_daemon_thread"]


class PythonTargetSpec(TargetSpecBase):
    """A callable ``module:attr`` (or ``file.py:attr``, relative to the suite) given the case and seed."""

    type: Literal["python"]
    callable: Name
    isolation: Literal["thread", "process"] = "thread"

    def environment_problems(self, loc: Loc, directory: Path) -> Iterator[Problem]:
        """The callable must import."""
        try:
            load_callable(self.callable, directory, "target")
        except EvaluationError as exc:
            yield Problem((*loc, "callable"), str(exc).removeprefix("target: "))


class PythonTarget:
    """Calls the suite's ``callable`` once per trial."""

    def __init__(self, spec: PythonTargetSpec, directory: Path) -> None:
        self.name = spec.name
        self._where = f"target {spec.name!r}"
        self._limit = spec.max_output_bytes
        self._reference, self._directory, self._isolation = spec.callable, directory, spec.isolation
        #: The call keeps its own deadline (``request.timeout_s``): see the module docstring.
        self.timed_by_call = True
        self._fn = load_callable(spec.callable, directory, self._where)
        self._is_async = inspect.iscoroutinefunction(self._fn)
        try:
            parameters = list(inspect.signature(self._fn).parameters.values())
        except (TypeError, ValueError):  # some builtins have no signature
            parameters = []
        self._takes_attempt = any(
            p.name == "attempt" or p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters
        )

    async def __call__(self, request: TrialRequest) -> TargetReply:
        """Call the function for one trial, within ``request.timeout_s`` (see the module docstring)."""
        kwargs = {"attempt": request.attempt} if self._takes_attempt else {}
        args = (request.case, request.attempt_seed)
        timeout = request.timeout_s
        if self._isolation == "process":
            ok, value = await call_in_process(
                self._reference, self._directory, self._where, args, kwargs, timeout
            )
            if not ok:
                raise TargetError(f"{self._where}: {value}")
        elif self._is_async:
            call = self._fn(*args, **kwargs)
            value = await (within(call, timeout) if timeout is not None else call)
        else:
            value = await in_daemon_thread(functools.partial(self._fn, **kwargs), *args, timeout=timeout)
        reply = reply_from(value, self._where)
        check_output_size(reply.output, self._limit, self._where)
        return reply

    async def aclose(self) -> None:
        """Nothing to release."""


register_target(PythonTargetSpec, lambda spec, directory, concurrency: PythonTarget(spec, directory))
