"""Graders written by the user: a ``command`` (exit status 0 passes) or a ``python`` callable."""

from __future__ import annotations

import inspect
import json
import math
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, StrictInt, model_validator

from trialscore.errors import EvaluationError
from trialscore.results.records import GraderResult
from trialscore.runner.graders.base import Grade, GraderError, binary
from trialscore.runner.imports import load_callable
from trialscore.runner.offloop import in_daemon_thread, within
from trialscore.runner.registry import (
    DEFAULT_MAX_OUTPUT_BYTES,
    GraderSpecBase,
    Loc,
    Name,
    Positive,
    Problem,
    register_grader,
)
from trialscore.runner.targets.base import TargetError, TrialRequest
from trialscore.runner.targets.command import run_program

__all__ = ["CommandGrader", "CommandGraderSpec", "PythonGrader", "PythonGraderSpec"]

_Argv = Annotated[tuple[Name, ...], Field(min_length=1)]


class CommandGraderSpec(GraderSpecBase):
    """A program given the output on stdin; exit status 0 passes.  What it writes is not kept; past
    ``max_output_bytes`` on stdout it is ended and the trial errors."""

    type: Literal["command"]
    argv: _Argv
    timeout_s: Positive = 30.0
    max_output_bytes: Annotated[StrictInt, Field(ge=1)] = DEFAULT_MAX_OUTPUT_BYTES


class PythonGraderSpec(GraderSpecBase):
    """``callable: module:fn`` (or ``file.py:fn``, relative to the suite), called as ``fn(output, case)``.

    It returns a bool, a score or ``{score, passed}``; a bare score passes when it is at least
    ``pass_score``.  A call that takes longer than ``timeout_s`` errors the trial.
    """

    type: Literal["python"]
    callable: Name
    pass_score: Annotated[float, Field(ge=0.0, le=1.0)] = 0.5
    timeout_s: Positive = 30.0

    @model_validator(mode="before")
    @classmethod
    def _named_by_callable(cls, data: Any) -> Any:
        if isinstance(data, Mapping) and "fn" in data:
            raise ValueError(
                "a python grader names its function with callable: 'module:fn' or 'file.py:fn' "
                f"(called as fn(output, case)), not fn; got fn: {data['fn']!r}"
            )
        return data

    def environment_problems(self, loc: Loc, directory: Path) -> Iterator[Problem]:
        """The callable must import."""
        try:
            load_callable(self.callable, directory, "python grader")
        except EvaluationError as exc:
            yield Problem((*loc, "callable"), str(exc).removeprefix("python grader: "))


class CommandGrader:
    """Runs ``argv`` with the output on stdin; exit status 0 passes (score 1), any other fails (score 0).

    The program also gets ``TRIALSCORE_CASE_ID``, ``TRIALSCORE_INPUT`` and
    ``TRIALSCORE_EXPECTED`` (the case's expected value as JSON).  A program that
    cannot start or outlives ``timeout_s`` errors the trial.
    """

    def __init__(self, spec: CommandGraderSpec, directory: Path) -> None:
        self._spec = spec
        self._directory = directory

    async def __call__(self, output: str, request: TrialRequest) -> Grade:
        """Grade one output."""
        case = request.case
        env = {
            "TRIALSCORE_CASE_ID": case.id,
            "TRIALSCORE_INPUT": case.text,
            "TRIALSCORE_EXPECTED": json.dumps(case.expected),
        }
        where = f"command grader {self._spec.label!r}"
        try:
            status, _, _ = await within(
                run_program(self._spec.argv, output, env, self._directory, self._spec.max_output_bytes),
                self._spec.timeout_s,
            )
        except TimeoutError as exc:
            raise GraderError(f"{where}: no exit within timeout_s={self._spec.timeout_s}") from exc
        except TargetError as exc:
            raise GraderError(f"{where}: {exc}") from exc
        return binary(self._spec.label, self._spec.weight, status == 0)


class PythonGrader:
    """Calls ``fn(output, case)``: a bool, a score in [0, 1] (passing at ``pass_score``) or a mapping.

    A sync function runs in a daemon thread of its own (off the event loop, so a slow grader
    delays no other trial and Ctrl-C still works), an async one is awaited; either errors the
    trial when it takes longer than ``timeout_s`` (a sync call past it is abandoned, not stopped).
    An exception it raises errors the trial.
    """

    def __init__(self, spec: PythonGraderSpec, directory: Path) -> None:
        self._spec = spec
        self._where = f"python grader {spec.label!r}"
        self._fn = load_callable(spec.callable, directory, self._where)
        self._is_async = inspect.iscoroutinefunction(self._fn)

    def _result(self, value: object) -> GraderResult:
        spec = self._spec
        if isinstance(value, Mapping):
            score, passed = value.get("score"), value.get("passed")
        else:
            score, passed = value, None
        if isinstance(score, bool):
            score, passed = float(score), score if passed is None else passed
        if not isinstance(score, int | float) or not math.isfinite(score) or not 0 <= score <= 1:
            raise GraderError(
                f"{self._where}: must return a bool, a score in [0, 1] or {{score, passed}}; got {value!r}"
            )
        if passed is None:
            passed = score >= spec.pass_score
        if not isinstance(passed, bool):
            raise GraderError(f"{self._where}: passed must be a bool; got {passed!r}")
        return GraderResult(name=spec.label, score=float(score), passed=passed, weight=spec.weight)

    async def __call__(self, output: str, request: TrialRequest) -> Grade:
        """Grade one output."""
        timeout = self._spec.timeout_s
        try:
            if self._is_async:
                value = await within(self._fn(output, request.case), timeout)
            else:
                value = await in_daemon_thread(self._fn, output, request.case, timeout=timeout)
        except TimeoutError as exc:
            raise GraderError(f"{self._where}: no result within timeout_s={timeout:g}") from exc
        except (GraderError, EvaluationError):
            raise
        except Exception as exc:
            raise GraderError(f"{self._where}: raised {type(exc).__name__}: {exc}") from exc
        return Grade(self._result(value))


register_grader(CommandGraderSpec, lambda spec, context: CommandGrader(spec, context.directory))
register_grader(PythonGraderSpec, lambda spec, context: PythonGrader(spec, context.directory))
