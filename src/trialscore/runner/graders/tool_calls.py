r"""The ``tool_calls`` grader: did the agent do it the right way?  Precision, recall and F1 of its tool calls.

The target replies with a trajectory (:class:`~trialscore.results.trajectory.Trajectory`: a JSON
object whose ``tool_calls`` lists the calls made, in order).  The suite lists the calls expected::

    {type: tool_calls, order: any_order, min_f1: 0.9,
     expected: [{name: get_weather, arguments: {city: Paris}},
                {name: book, arguments: {city: Paris, nights: 2}, match: subset}]}

**A call matches an expected one** when the names are equal and its arguments pass every matcher
the expected call states:

* ``arguments`` with ``match: exact`` (the default): the same keys, each value equal; with
  ``match: subset``: every expected key present with an equal value, other keys allowed;
* ``tolerance`` / ``relative_tolerance``: numbers (at any depth) are equal within
  ``max(tolerance, relative_tolerance * |expected|)``;
* ``patterns``: ``{key: regex}``, the key's value a string the regex matches whole
  (``re.fullmatch`` syntax); the key counts as expected;
* ``schema``: the arguments object validates against this JSON Schema.

An expected call that states neither ``arguments`` nor ``patterns`` matches a call of that tool
whatever its arguments (a ``schema`` still applies); ``arguments: {}`` with ``match: exact``
asks for a call without arguments.

**Matching calls.**  Expected and actual calls are paired one-to-one so that as many pairs as
possible match, under ``order``:

* ``any_order``: any pairing, the most matches by ``scipy.optimize.linear_sum_assignment`` (a tool
  called twice with different arguments is paired optimally, never first come first served);
* ``in_order``: pairs keep both sequences' order (other calls may come between): the longest
  common subsequence of matching calls;
* ``strict``: the i-th call against the i-th expected call, position by position;
* ``superset`` / ``subset``: ``any_order`` pairing, and the calls made must include every expected
  call (recall 1) / hold no call outside the expected ones (precision 1), as a check.

With :math:`m` matched pairs, :math:`E` calls expected and :math:`A` made:
:math:`P = m/A`, :math:`R = m/E` (1 when there is nothing to divide), :math:`F_1 = 2PR/(P+R)`
(0 when both are 0).  An extra call lowers the precision; a missing one lowers the recall.

**Checks** (each failure is named in the reason): ``max_steps`` (the trajectory's ``steps``, or
the number of calls when it does not count them), ``forbidden`` tools (never to be called),
``max_repeats`` (no identical call, name and arguments, made more than this many times in a row:
a loop), and the ``superset`` / ``subset`` condition.  The trial **passes** when
:math:`F_1 \ge` ``min_f1`` (default 1) and every check holds; the grade's **score is the F1**,
and it carries precision, recall and F1 (:class:`ToolCallGrade`; the stored
:class:`~trialscore.results.records.GraderResult` keeps them in ``details``).  The calls graded
are those the target's reply carried, which the trial record keeps (``tool_calls``: a python or
command target that returned a trajectory, the ``openai`` target's tool calls); a reply without
them is read as a trajectory in its output text.  One that is neither cannot be graded: the
trial errors (never a failure).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray
from pydantic import Field, StrictInt, field_validator, model_validator

from trialscore._record import Record
from trialscore._words import plural
from trialscore.errors import EvaluationError
from trialscore.results.records import GraderResult
from trialscore.results.trajectory import ToolCall, Trajectory
from trialscore.runner.graders.base import Grade, GraderError
from trialscore.runner.graders.schema import checked_schema
from trialscore.runner.graders.text import checked_pattern
from trialscore.runner.offloop import in_daemon_thread
from trialscore.runner.registry import GraderSpecBase, Name, NonNegative, Positive, Spec, register_grader
from trialscore.runner.targets.base import TargetReply, TrialRequest

__all__ = [
    "ExpectedCall",
    "ToolCallGrade",
    "ToolCallScore",
    "ToolCallsGrader",
    "ToolCallsGraderSpec",
    "call_matches",
    "score_calls",
]

Order = Literal["strict", "in_order", "any_order", "subset", "superset"]


class ExpectedCall(Spec):
    """One expected call: the tool's ``name`` and the matchers its arguments must pass (module docstring)."""

    name: Name
    arguments: dict[str, Any] = Field(default_factory=dict)
    match: Literal["exact", "subset"] = "exact"
    tolerance: NonNegative = 0.0
    relative_tolerance: NonNegative = 0.0
    patterns: dict[str, str] = Field(default_factory=dict)
    schema_: dict[str, Any] | None = Field(default=None, alias="schema")

    @field_validator("patterns")
    @classmethod
    def _compiles(cls, patterns: dict[str, str]) -> dict[str, str]:
        for key, pattern in patterns.items():
            try:
                checked_pattern(pattern)
            except ValueError as exc:
                raise ValueError(f"patterns[{key!r}]: {exc}") from exc
        return patterns

    @field_validator("schema_")
    @classmethod
    def _valid_schema(cls, schema: dict[str, Any] | None) -> dict[str, Any] | None:
        return checked_schema(schema)


class ToolCallsGraderSpec(GraderSpecBase):
    """The calls the agent should make (``expected``), how to pair them (``order``) and the pass rule."""

    type: Literal["tool_calls"]
    expected: tuple[ExpectedCall, ...]
    order: Order = "any_order"
    min_f1: float = Field(default=1.0, ge=0.0, le=1.0)
    max_steps: StrictInt | None = Field(default=None, ge=1)
    forbidden: tuple[Name, ...] = ()
    max_repeats: StrictInt | None = Field(default=None, ge=1)
    timeout_s: Positive = 10.0

    @model_validator(mode="after")
    def _not_both(self) -> ToolCallsGraderSpec:
        clash = sorted({call.name for call in self.expected} & set(self.forbidden))
        if clash:
            raise ValueError(
                f"forbidden tools must not be expected; got {', '.join(map(repr, clash))} in both"
            )
        return self


def _numbers_close(expected: float, actual: float, call: ExpectedCall) -> bool:
    allowed = max(call.tolerance, call.relative_tolerance * abs(expected))
    return math.isclose(expected, actual, rel_tol=0.0, abs_tol=allowed) if allowed else expected == actual


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _equal(expected: object, actual: object, call: ExpectedCall) -> bool:
    """Equal values: numbers within the call's tolerance, containers element by element."""
    if _is_number(expected) and _is_number(actual):
        return _numbers_close(float(expected), float(actual), call)  # type: ignore[arg-type]
    if isinstance(expected, dict) and isinstance(actual, dict):
        return expected.keys() == actual.keys() and all(
            _equal(expected[k], actual[k], call) for k in expected
        )
    if isinstance(expected, list | tuple) and isinstance(actual, list | tuple):
        return len(expected) == len(actual) and all(
            _equal(e, a, call) for e, a in zip(expected, actual, strict=True)
        )
    return type(expected) is type(actual) and expected == actual


def call_matches(call: ExpectedCall, actual: ToolCall, timeout_s: float = 10.0) -> bool:
    """Whether ``actual`` matches the expected ``call`` (module docstring).

    >>> expected = ExpectedCall(name="book", arguments={"nights": 2}, match="subset",
    ...                         patterns={"city": "P.+"})
    >>> call_matches(expected, ToolCall(name="book", arguments={"city": "Paris", "nights": 2.0, "late": 1}))
    True
    >>> call_matches(expected, ToolCall(name="book", arguments={"city": "Rome", "nights": 2}))
    False
    """
    if call.name != actual.name:
        return False
    arguments = actual.arguments
    keys = set(call.arguments) | set(call.patterns)
    stated = bool({"arguments", "patterns"} & call.model_fields_set)
    if stated and call.match == "exact" and set(arguments) != keys:
        return False
    if not keys <= set(arguments):
        return False
    if not all(_equal(value, arguments[key], call) for key, value in call.arguments.items()):
        return False
    import jsonschema
    import regex  # type: ignore[import-untyped]

    for key, pattern in call.patterns.items():
        value = arguments[key]
        try:
            if not isinstance(value, str) or regex.fullmatch(pattern, value, timeout=timeout_s) is None:
                return False
        except TimeoutError as exc:
            raise GraderError(
                f"tool_calls grader: patterns[{key!r}] found no match result within timeout_s={timeout_s:g}"
            ) from exc
    if call.schema_ is not None:
        return bool(jsonschema.validators.validator_for(call.schema_)(call.schema_).is_valid(arguments))
    return True


def _in_order(matches: NDArray[np.bool_]) -> int:
    """The most matching pairs that keep both orders: the longest common subsequence of matches."""
    rows, columns = matches.shape
    table = np.zeros((rows + 1, columns + 1), dtype=np.int64)
    for i in range(1, rows + 1):
        for j in range(1, columns + 1):
            table[i, j] = max(
                table[i - 1, j], table[i, j - 1], table[i - 1, j - 1] + int(matches[i - 1, j - 1])
            )
    return int(table[rows, columns])


def matched_pairs(matches: NDArray[np.bool_], order: str) -> int:
    """How many expected (rows) and actual (columns) calls pair up with a match under ``order``.

    >>> matches = np.array([[True, True], [True, False]])  # a first-come pairing finds only 1
    >>> [matched_pairs(matches, order) for order in ("any_order", "in_order", "strict")]
    [2, 1, 1]
    """
    if matches.size == 0:
        return 0
    if order == "strict":
        size = min(matches.shape)
        return int(np.count_nonzero(np.diagonal(matches)[:size]))
    if order == "in_order":
        return _in_order(matches)
    from scipy.optimize import linear_sum_assignment  # on first use: validating a suite needs no SciPy

    rows, columns = linear_sum_assignment(matches.astype(np.int64), maximize=True)
    return int(np.count_nonzero(matches[rows, columns]))


@dataclass(frozen=True)
class ToolCallScore(Record):
    """Precision, recall and F1 of the calls made against the calls expected, and the counts behind them."""

    precision: float
    recall: float
    f1: float
    matched: int
    expected: int
    made: int


def score_calls(
    expected: Sequence[ExpectedCall],
    actual: Sequence[ToolCall],
    order: str = "any_order",
    timeout_s: float = 10.0,
) -> ToolCallScore:
    """Precision, recall and F1 of ``actual`` against ``expected`` under ``order`` (module docstring).

    >>> book = ExpectedCall(name="book", arguments={"nights": 2})
    >>> made = [ToolCall(name="search"), ToolCall(name="book", arguments={"nights": 2})]
    >>> score = score_calls([book], made)
    >>> score.precision, score.recall, round(score.f1, 4)
    (0.5, 1.0, 0.6667)
    """
    matches = np.array(
        [[call_matches(call, made, timeout_s) for made in actual] for call in expected], dtype=bool
    ).reshape(len(expected), len(actual))
    matched = matched_pairs(matches, order)
    precision = matched / len(actual) if actual else 1.0
    recall = matched / len(expected) if expected else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return ToolCallScore(precision, recall, f1, matched, len(expected), len(actual))


@dataclass(frozen=True)
class ToolCallGrade(Grade):
    """A :class:`~trialscore.runner.graders.base.Grade` (score = F1) with the precision, recall and F1."""

    precision: float = 0.0
    recall: float = 1.0
    f1: float = 0.0
    failed_checks: tuple[str, ...] = ()


def _longest_repeat(calls: Sequence[ToolCall]) -> tuple[int, str]:
    """The longest run of identical consecutive calls (name and arguments), and the tool's name."""
    best, name, run = 0, "", 0
    for index, call in enumerate(calls):
        run = run + 1 if index and calls[index - 1] == call else 1
        if run > best:
            best, name = run, call.name
    return best, name


class ToolCallsGrader:
    """Grades a trajectory's tool calls against the expected ones (module docstring)."""

    def __init__(self, spec: ToolCallsGraderSpec) -> None:
        self._spec = spec

    def grade_trajectory(self, trajectory: Trajectory) -> ToolCallGrade:
        """The grade of one trajectory."""
        spec = self._spec
        calls = trajectory.tool_calls
        score = score_calls(spec.expected, calls, spec.order, spec.timeout_s)
        failed = []
        if spec.order == "superset" and score.matched < score.expected:
            failed.append(f"superset: {score.expected - score.matched} of the expected calls not made")
        if spec.order == "subset" and score.matched < score.made:
            failed.append(f"subset: {plural(score.made - score.matched, 'call')} outside the expected ones")
        steps = trajectory.steps if trajectory.steps is not None else len(calls)
        if spec.max_steps is not None and steps > spec.max_steps:
            failed.append(f"max_steps: {plural(steps, 'step')}, over {spec.max_steps}")
        called = sorted({call.name for call in calls} & set(spec.forbidden))
        if called:
            failed.append("forbidden: " + ", ".join(repr(name) for name in called) + " called")
        if spec.max_repeats is not None:
            repeats, name = _longest_repeat(calls)
            if repeats > spec.max_repeats:
                failed.append(
                    f"loop: {name!r} called identically {repeats} times in a row, over {spec.max_repeats}"
                )
        passed = score.f1 >= spec.min_f1 and not failed
        reason = (
            f"precision {score.precision:.4g}, recall {score.recall:.4g}, f1 {score.f1:.4g} ({spec.order}: "
            f"{score.matched} of {plural(score.expected, 'expected call')} matched, "
            f"{plural(score.made, 'call')} made; min_f1 {spec.min_f1:g})"
            + ("; failed " + "; ".join(failed) if failed else "")
        )
        details = {"precision": float(score.precision), "recall": float(score.recall), "f1": float(score.f1)}
        result = GraderResult(
            name=spec.label,
            score=float(score.f1),
            passed=passed,
            weight=spec.weight,
            reason=reason,
            details=details,
        )
        return ToolCallGrade(result, 0.0, score.precision, score.recall, score.f1, tuple(failed))

    async def grade_reply(self, reply: TargetReply, request: TrialRequest) -> Grade:
        """Grade the tool calls the target's reply carried (those the trial record keeps); a reply
        without them is read as a trajectory in its output text (:meth:`__call__`)."""
        if reply.tool_calls is None:
            return await self(reply.output, request)
        trajectory = Trajectory(output=reply.output, tool_calls=reply.tool_calls, steps=reply.steps)
        return await self._graded(trajectory)

    async def __call__(self, output: str, request: TrialRequest) -> Grade:
        """Grade one output text: a trajectory as JSON; one that is not errors the trial."""
        label = self._spec.label
        try:
            trajectory = Trajectory.from_reply(output)
        except EvaluationError as exc:
            raise GraderError(f"tool_calls grader {label!r}: {exc}") from exc
        return await self._graded(trajectory)

    async def _graded(self, trajectory: Trajectory) -> Grade:
        """The grade, off the event loop within ``timeout_s`` (its regular expressions could backtrack
        for ages on a hostile argument): past it the trial errors."""
        label = self._spec.label
        try:
            return await in_daemon_thread(self.grade_trajectory, trajectory, timeout=self._spec.timeout_s)
        except TimeoutError as exc:
            raise GraderError(
                f"tool_calls grader {label!r}: no result within timeout_s={self._spec.timeout_s:g}"
            ) from exc


register_grader(ToolCallsGraderSpec, lambda spec, context: ToolCallsGrader(spec))
