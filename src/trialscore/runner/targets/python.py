"""The ``python`` target: a callable given the case and the trial's seed, sync or async.

``fn(case, seed)`` returns a string, a :class:`TargetReply` or a mapping with
``output`` (and optionally ``cost_usd`` and ``tokens``).  A callable that takes an ``attempt``
keyword is also given the attempt (0, then 1, 2, ... on retries, each with a seed of its own).
An async callable is awaited on the runner's event loop; a sync one runs in a daemon thread of its own.
A thread cannot be interrupted, so a timeout abandons a hung call rather than
stopping it: the hung call keeps only its own thread (later trials do not queue
behind it), and being a daemon thread it does not keep the process alive at exit.
An exception it raises errors the trial; :class:`TransientTargetError` asks for a retry.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

from trialscore.errors import EvaluationError
from trialscore.runner.imports import load_callable
from trialscore.runner.offloop import in_daemon_thread
from trialscore.runner.registry import Loc, Name, Problem, TargetSpecBase, register_target
from trialscore.runner.targets.base import TargetReply, TrialRequest, check_output_size, reply_from

__all__ = ["PythonTarget", "PythonTargetSpec", "in_daemon_thread"]


class PythonTargetSpec(TargetSpecBase):
    """A callable ``module:attr`` (or ``file.py:attr``, relative to the suite) given the case and seed."""

    type: Literal["python"]
    callable: Name

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
        """Call the function for one trial."""
        fn = functools.partial(self._fn, attempt=request.attempt) if self._takes_attempt else self._fn
        if self._is_async:
            value = await fn(request.case, request.attempt_seed)
        else:
            value = await in_daemon_thread(fn, request.case, request.attempt_seed)
        reply = reply_from(value, self._where)
        check_output_size(reply.output, self._limit, self._where)
        return reply

    async def aclose(self) -> None:
        """Nothing to release."""


register_target(PythonTargetSpec, lambda spec, directory, concurrency: PythonTarget(spec, directory))
