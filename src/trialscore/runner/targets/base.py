"""What every target is given, what it returns, and how it says an error is worth retrying."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from trialscore._record import Record
from trialscore.errors import EvaluationError, TargetError, TransientTargetError
from trialscore.results.trajectory import TokenUsage, ToolCall, Trajectory
from trialscore.runner.seeds import attempt_seed

if TYPE_CHECKING:  # the suite schema imports the targets (their specs): no import at run time
    from trialscore.runner.suite import CaseSpec

__all__ = [
    "Target",
    "TargetError",
    "TargetReply",
    "TransientTargetError",
    "TrialRequest",
    "check_output_size",
    "describe_bytes",
    "reply_from",
]


@dataclass(frozen=True)
class TrialRequest:
    """One call of a target: the case, the trial index, the seed and the prompt text.

    ``prompt`` is the case's text for an ordinary trial, or the filled rubric
    when an ``llm_judge`` grader calls a target.  ``seed`` is the trial's (as recorded);
    ``attempt`` counts the retries of this call (0 for the first), and a target passes on
    :attr:`attempt_seed`, so that each retry gets a seed of its own.  ``timeout_s`` is the call's
    deadline, for a target that keeps it itself (``timed_by_call``).
    """

    case: CaseSpec
    trial: int
    seed: int
    prompt: str
    attempt: int = 0
    timeout_s: float | None = None

    @property
    def attempt_seed(self) -> int:
        """The seed of this attempt: :func:`~trialscore.runner.seeds.attempt_seed` ``(seed, attempt)``."""
        return attempt_seed(self.seed, self.attempt)


@dataclass(frozen=True)
class TargetReply(Record):
    """A target's answer: the ``output`` text, its cost in USD (None = unknown), token usage and, for an
    agent, its trajectory: the ``tool_calls`` it made in order and its ``steps`` (None: not recorded).

    >>> TargetReply("4", cost_usd=0.001).to_dict()
    {'output': '4', 'cost_usd': 0.001, 'tokens': None, 'tool_calls': None, 'steps': None}
    """

    output: str
    cost_usd: float | None = None
    tokens: TokenUsage | int | None = None
    tool_calls: tuple[ToolCall, ...] | None = None
    steps: int | None = None


class Target(Protocol):
    """Anything the runner can call: ``await target(request)`` gives a :class:`TargetReply`."""

    name: str

    async def __call__(self, request: TrialRequest) -> TargetReply: ...

    async def aclose(self) -> None: ...


def _cost(value: object, where: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        raise EvaluationError(f"{where}: cost_usd must be a finite number >= 0 or null; got {value!r}")
    return float(value)


def _tokens(value: object, where: str) -> TokenUsage | None:
    if value is None or isinstance(value, TokenUsage):
        return value
    if isinstance(value, Mapping):
        try:
            return TokenUsage(input=value.get("input", 0), output=value.get("output", 0))
        except EvaluationError as exc:
            raise EvaluationError(f"{where}: tokens: {exc}") from exc
    raise EvaluationError(f"{where}: tokens must be an object {{input, output}} or null; got {value!r}")


def describe_bytes(size: int) -> str:
    """A byte count as people say it: ``8 MiB``, ``64 KiB``, ``100 bytes``.

    >>> describe_bytes(8 * 2**20), describe_bytes(65536), describe_bytes(1500)
    ('8 MiB', '64 KiB', '1500 bytes')
    """
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if size >= scale and size % scale == 0:
            return f"{size // scale} {unit}"
    return f"{size} bytes"


def check_output_size(output: str, limit: int, where: str) -> None:
    """Refuse an output of more than ``limit`` bytes (UTF-8): :class:`TargetError` (the trial errors).

    >>> check_output_size("x" * 10, 8, "target 't'")
    Traceback (most recent call last):
    ...
    trialscore.errors.TargetError: target 't': output over 8 bytes (max_output_bytes=8); not kept
    """
    if len(output) * 4 <= limit:  # a character is at most 4 bytes: no need to count
        return
    if len(output.encode("utf-8", "surrogatepass")) > limit:
        raise TargetError(
            f"{where}: output over {describe_bytes(limit)} (max_output_bytes={limit}); not kept"
        )


def _trajectory_reply(value: Mapping[str, object], where: str) -> TargetReply:
    """The reply of a trajectory (``{"output", "tool_calls", "steps", "tokens", "cost_usd"}``)."""
    try:
        fields: dict[str, Any] = {str(key): item for key, item in value.items()}
        trajectory = Trajectory(**fields)
    except EvaluationError as exc:
        raise EvaluationError(f"{where}: {exc}") from exc
    cost = None if trajectory.cost_usd is None else float(trajectory.cost_usd)
    return TargetReply(
        trajectory.output or "", cost, trajectory.tokens, trajectory.tool_calls, trajectory.steps
    )


def reply_from(value: object, where: str) -> TargetReply:
    """A :class:`TargetReply` from what a target gave: a reply, a string, ``{output, cost_usd, tokens}``, or
    a trajectory (:class:`~trialscore.results.trajectory.Trajectory`: a mapping with ``tool_calls``).

    Raises
    ------
    EvaluationError
        When ``value`` is none of those; the message starts with ``where``.

    >>> reply_from({"output": "ok", "cost_usd": 0.5, "tokens": {"input": 3, "output": 1}}, "t").tokens.total
    4
    >>> reply = reply_from({"output": "done", "tool_calls": [{"name": "search", "arguments": {"q": "x"}}],
    ...                     "steps": 2}, "t")
    >>> reply.output, reply.tool_calls[0].name, reply.steps
    ('done', 'search', 2)
    >>> reply_from(42, "target 'x'")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    trialscore.errors.EvaluationError: target 'x': a reply must be a string, a TargetReply or ...; got 42
    """
    if isinstance(value, TargetReply):
        return value
    if isinstance(value, str):
        return TargetReply(value)
    if isinstance(value, Mapping) and "tool_calls" in value:
        return _trajectory_reply(value, where)
    if isinstance(value, Mapping) and "output" in value:
        output = value["output"]
        text = output if isinstance(output, str) else json.dumps(output)
        return TargetReply(text, _cost(value.get("cost_usd"), where), _tokens(value.get("tokens"), where))
    raise EvaluationError(
        f"{where}: a reply must be a string, a TargetReply or a mapping with 'output' or 'tool_calls'; "
        f"got {value!r}"
    )
