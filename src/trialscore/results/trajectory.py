"""The documented trajectory of one trial: the tool calls an agent made, in order, and what it spent.

A target that runs an agent may reply with a JSON object instead of plain text::

    {"output": "Booked 2 nights in Paris.",
     "tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}, "result": "sunny"},
                    {"name": "book", "arguments": {"city": "Paris", "nights": 2}}],
     "steps": 3, "tokens": 1520, "cost_usd": 0.0042}

* ``tool_calls``: the calls in the order they were made; each has a ``name``, its ``arguments``
  (a JSON object; a JSON *string* holding an object, as OpenAI's tool calls carry them, is parsed)
  and, optionally, the ``result`` the tool returned;
* ``steps``: the agent's steps (turns of its loop), when it counts them; ``tokens``: tokens used,
  a total or ``{"input": ..., "output": ...}``; ``cost_usd``: what the trial cost; each optional
  (null: unknown, never zero);
* ``output``: the final answer text, optional.

:class:`Trajectory` is that shape as a record; :meth:`Trajectory.from_reply` reads it from a
target's reply text, with one line naming the field, the rule and the value when it is not one.

>>> reply = '{"tool_calls": [{"name": "search", "arguments": "{\\\\"q\\\\": 1}"}]}'
>>> trajectory = Trajectory.from_reply(reply)
>>> trajectory.tool_calls[0].arguments, trajectory.steps
({'q': 1}, None)
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import Field, StrictFloat, StrictInt, StrictStr, field_validator

from trialscore.errors import EvaluationError
from trialscore.record_model import RecordModel, describe, record_config

__all__ = ["TokenUsage", "ToolCall", "Trajectory", "calls_text", "token_usage", "total_tokens"]


class TokenUsage(RecordModel):
    """Tokens one trial used: ``input`` (prompt) and ``output`` (completion), both >= 0.

    >>> TokenUsage(input=120, output=30).total
    150
    """

    model_config = record_config("Tokens one trial used (input = prompt, output = completion).")

    input: StrictInt = Field(ge=0, description="Prompt (input) tokens.")
    output: StrictInt = Field(ge=0, description="Completion (output) tokens.")

    @property
    def total(self) -> int:
        """``input + output``."""
        return self.input + self.output


def token_usage(value: object) -> object:
    """A ``tokens`` value as a field validator takes it: an object ``{input, output}`` is made a
    :class:`TokenUsage` (its error named whole), a count (or None) is left to the field's rule."""
    if isinstance(value, dict):
        return TokenUsage(**value)
    return value


def total_tokens(tokens: TokenUsage | int | None) -> int | None:
    """Tokens used in all: the total of a :class:`TokenUsage`, a count as it is, None (unknown) as None.

    >>> total_tokens(TokenUsage(input=3, output=1)), total_tokens(7), total_tokens(None)
    (4, 7, None)
    """
    return tokens.total if isinstance(tokens, TokenUsage) else tokens


class ToolCall(RecordModel):
    """One tool call: the tool's ``name``, its ``arguments`` (a JSON object) and, optionally, its ``result``.

    >>> ToolCall(name="book", arguments={"nights": 2}).to_dict()
    {'name': 'book', 'arguments': {'nights': 2}, 'result': None}
    """

    model_config = record_config("One tool call an agent made.")

    name: StrictStr = Field(min_length=1, description="The tool's name.")
    arguments: dict[str, Any] = Field(
        default_factory=dict, description="The call's arguments (a JSON object)."
    )
    result: Any = Field(default=None, description="What the tool returned; null if not recorded.")

    @field_validator("arguments", mode="before")
    @classmethod
    def _parsed(cls, value: object) -> object:
        """A JSON string holding an object (OpenAI's ``function.arguments``) is parsed."""
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except json.JSONDecodeError as exc:
                raise ValueError(f"a JSON string of arguments must parse ({exc.msg})") from exc
        if value is None:
            return {}
        return value


class Trajectory(RecordModel):
    """What one trial did: its tool calls in order, its steps, tokens and cost, and its final output."""

    model_config = record_config("The tool calls of one trial, in order, with its steps, tokens and cost.")

    output: StrictStr | None = Field(default=None, description="The final answer text; null if none.")
    tool_calls: tuple[ToolCall, ...] = Field(description="The tool calls in the order they were made.")
    steps: StrictInt | None = Field(
        default=None, ge=0, description="Steps of the agent's loop; null if unknown."
    )
    tokens: TokenUsage | StrictInt | None = Field(
        default=None, description="Tokens used: a total, or input and output; null if unknown."
    )
    cost_usd: StrictFloat | StrictInt | None = Field(
        default=None, ge=0, description="What the trial cost in USD; null if unknown."
    )

    @field_validator("tokens", mode="before")
    @classmethod
    def _usage(cls, value: object) -> object:
        return token_usage(value)

    @field_validator("tokens")
    @classmethod
    def _counted(cls, value: TokenUsage | int | None) -> TokenUsage | int | None:
        if isinstance(value, int) and value < 0:
            raise ValueError("tokens must be >= 0")
        return value

    @property
    def total_tokens(self) -> int | None:
        """Tokens used in all (None: unknown)."""
        return total_tokens(self.tokens)

    @classmethod
    def from_reply(cls, text: str) -> Trajectory:
        """The trajectory in a target's reply text: a JSON object with ``tool_calls``.

        >>> Trajectory.from_reply("Paris")
        Traceback (most recent call last):
        ...
        trialscore.errors.EvaluationError: the reply is not a trajectory: not JSON (Expecting value at \
line 1 column 1); got 'Paris'
        """
        try:
            document = json.loads(text)
        except ValueError as exc:
            reason = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
            where = (
                f" at line {exc.lineno} column {exc.colno}" if isinstance(exc, json.JSONDecodeError) else ""
            )
            raise EvaluationError(
                f"the reply is not a trajectory: not JSON ({reason}{where}); got {describe(text)}"
            ) from exc
        if not isinstance(document, dict) or "tool_calls" not in document:
            raise EvaluationError(
                f"the reply is not a trajectory: a JSON object with a 'tool_calls' list; got {describe(text)}"
            )
        return cls(**document)


def calls_text(calls: Iterable[Mapping[str, Any]]) -> str:
    """The JSON text of tool calls ``[{name, arguments, result}]``, each checked as a :class:`ToolCall`:
    what a reader puts in a trial row's ``tool_calls`` column.

    >>> calls_text([{"name": "search", "arguments": '{"q": "x"}'}])
    '[{"name": "search", "arguments": {"q": "x"}, "result": null}]'
    """
    return json.dumps([ToolCall(**dict(call)).to_dict() for call in calls])
