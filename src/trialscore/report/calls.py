"""Agent trials: each trial's tool calls as a strip, and the first step where a case's trials diverge.

A trial's tool calls follow the documented trajectory
(:class:`~trialscore.results.trajectory.Trajectory`): a list of calls in the order they were made,
each with a ``name``, its ``arguments`` (a JSON object, or a JSON string holding one) and
optionally a ``result``.  The reader keeps them per trial (``TrialColumns.tool_calls``); they are
read here defensively, from the JSON text of the list, a list of objects, or
:class:`~trialscore.results.trajectory.ToolCall` values, and a trial whose calls do not read as
that shape has none shown (:func:`calls_of`).

A call is its tool's name and its arguments as compact JSON with sorted keys.  Two trials of a case
**diverge** at the first step (1-based) where their calls differ, or where one has stopped calling
tools and the other has not; :func:`divergence` is that step over all the case's trials with
calls (None when they all made the same calls).

>>> calls_of('[{"name": "search", "arguments": "{\\\\"q\\\\": 1}"}, {"name": "book"}]')
[('search', '{"q":1}'), ('book', '{}')]
>>> divergence([[("a", "{}"), ("b", "{}")], [("a", "{}"), ("c", "{}")], [("a", "{}")]])
2
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from trialscore.report.outputs import TextTable

__all__ = ["Call", "CallTable", "calls_of", "divergence"]

#: One tool call: the tool's name and its arguments as compact JSON with sorted keys.
Call = tuple[str, str]


def _arguments(value: object) -> str | None:
    """A call's arguments as compact, sorted JSON; a JSON string holding an object is parsed."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return None
    if value is None:
        value = {}
    if not isinstance(value, dict):
        return None
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def _call(value: object) -> Call | None:
    """One call from a mapping or an object with ``name`` and ``arguments`` (None: not a call)."""
    if isinstance(value, dict):
        name, arguments = value.get("name"), value.get("arguments")
    else:
        name, arguments = getattr(value, "name", None), getattr(value, "arguments", None)
    shown = _arguments(arguments)
    if not isinstance(name, str) or not name or shown is None:
        return None
    return name, shown


def calls_of(value: object) -> list[Call] | None:
    """A trial's tool calls from what the reader kept (JSON text, a list of mappings or ToolCall
    values); None when it recorded none or they are not a list of calls.

    >>> calls_of(None), calls_of("not json"), calls_of([{"arguments": {}}]), calls_of([])
    (None, None, None, [])
    """
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except (ValueError, RecursionError):
            return None
    if isinstance(value, dict):  # a whole trajectory
        value = value.get("tool_calls")
    if not isinstance(value, (list, tuple)):
        return None
    calls = [_call(item) for item in value]
    if any(call is None for call in calls):
        return None
    return [call for call in calls if call is not None]


def divergence(trials: Sequence[Sequence[Call]]) -> int | None:
    """The first step (1-based) at which the trials' calls differ, None when they are all the same.

    >>> divergence([[("a", "{}")], [("a", "{}")]]), divergence([[("a", "{}")], []])
    (None, 1)
    """
    if len(trials) < 2:
        return None
    longest = max(len(calls) for calls in trials)
    for step in range(longest):
        seen = {calls[step] if step < len(calls) else None for calls in trials}
        if len(seen) > 1:
            return step + 1
    return None


class CallTable:
    """The tool calls of a run's cases for the page: tool names indexed once (:attr:`tools`), arguments
    stored once in the run's :class:`~trialscore.report.outputs.TextTable`."""

    def __init__(self, texts: TextTable) -> None:
        self.texts = texts
        self.tools: dict[str, int] = {}
        self.cases = 0

    def case(self, values: Sequence[object]) -> list[Any] | None:
        """A case's strips and divergence: ``[[calls of each trial, or None], diverging step or None]``,
        a call as ``[tool index, arguments text index]``; None when no trial recorded calls."""
        if values.count(None) == len(values):  # most runs record none: nothing to parse
            return None
        parsed = [calls_of(value) for value in values]
        known = [calls for calls in parsed if calls is not None]
        if not known:
            return None
        self.cases += 1
        strips = [
            None
            if calls is None
            else [
                [self.tools.setdefault(name, len(self.tools)), self.texts.add(arguments)]
                for name, arguments in calls
            ]
            for calls in parsed
        ]
        return [strips, divergence(known)]
