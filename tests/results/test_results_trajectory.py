"""The documented trajectory: tool calls in order, steps, tokens, cost; read from a target's reply."""

from __future__ import annotations

import json

import pytest

from trialscore.errors import EvaluationError
from trialscore.results.records import TokenUsage
from trialscore.results.trajectory import ToolCall, Trajectory


def test_a_full_reply_round_trips() -> None:
    reply = {
        "output": "Booked 2 nights.",
        "tool_calls": [
            {"name": "get_weather", "arguments": {"city": "Paris"}, "result": {"sky": "clear"}},
            {"name": "book", "arguments": '{"city": "Paris", "nights": 2}'},
        ],
        "steps": 3,
        "tokens": {"input": 1200, "output": 320},
        "cost_usd": 0.0042,
    }
    trajectory = Trajectory.from_reply(json.dumps(reply))
    assert [call.name for call in trajectory.tool_calls] == ["get_weather", "book"]
    assert trajectory.tool_calls[1].arguments == {"city": "Paris", "nights": 2}
    assert trajectory.tool_calls[0].result == {"sky": "clear"}
    assert trajectory.tokens == TokenUsage(input=1200, output=320) and trajectory.total_tokens == 1520
    assert Trajectory(**trajectory.to_dict()) == trajectory


def test_optional_fields_are_unknown_not_zero() -> None:
    trajectory = Trajectory.from_reply('{"tool_calls": [{"name": "search"}], "tokens": 99}')
    assert (trajectory.steps, trajectory.cost_usd, trajectory.output) == (None, None, None)
    assert trajectory.total_tokens == 99
    assert trajectory.tool_calls == (ToolCall(name="search", arguments={}),)


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        (
            "Paris",
            "the reply is not a trajectory: not JSON (Expecting value at line 1 column 1); got 'Paris'",
        ),
        ('{"output": "x"}', "the reply is not a trajectory: a JSON object with a 'tool_calls' list"),
        (
            '{"tool_calls": [{"arguments": {}}]}',
            "Trajectory field 'tool_calls.0': ToolCall field 'name': Field required",
        ),
        (
            '{"tool_calls": [{"name": "x", "arguments": [1]}]}',
            "ToolCall field 'arguments': Input should be a valid dictionary",
        ),
        ('{"tool_calls": [{"name": "x", "arguments": "{bad"}]}', "a JSON string of arguments must parse"),
        (
            '{"tool_calls": [], "cost_usd": -1}',
            "Trajectory field 'cost_usd': Input should be greater than or equal to 0",
        ),
        ('{"tool_calls": [], "steps": 1.5}', "Trajectory field 'steps': Input should be a valid integer"),
        ('{"tool_calls": [], "tokens": -2}', "Trajectory field 'tokens': tokens must be >= 0"),
        ('{"tool_calls": [], "extra": 1}', "Trajectory field 'extra': Extra inputs are not permitted"),
    ],
)
def test_bad_replies_are_one_clear_line(reply: str, message: str) -> None:
    with pytest.raises(EvaluationError) as info:
        Trajectory.from_reply(reply)
    assert message in str(info.value)
    assert "\n" not in str(info.value)
