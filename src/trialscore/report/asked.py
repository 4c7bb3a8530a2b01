"""What each case asked and expected, from the case records a run keeps beside its trials
(``cases.jsonl``, or a stored run's suite): the case drawer shows them."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from trialscore.results.formats._text import lines

__all__ = ["asked_of", "read_asked"]


def asked_of(cases: Iterable[object]) -> dict[str, tuple[object, object]]:
    """Case id -> (input, expected) of case records (``cases.jsonl``'s objects); anything that is not a
    case record with an ``eval_id`` and an ``input`` is passed over (the first of an id is kept).

    >>> asked_of([{"eval_id": "add", "input": {"a": 2}, "expected": 4}, {"eval_id": "x"}, [1]])
    {'add': ({'a': 2}, 4)}
    """
    out: dict[str, tuple[object, object]] = {}
    for data in cases:
        if isinstance(data, dict) and isinstance(data.get("eval_id"), str) and "input" in data:
            out.setdefault(data["eval_id"], (data.get("input"), data.get("expected")))
    return out


def read_asked(path: Path) -> dict[str, tuple[object, object]]:
    """Case id -> (input, expected) from a run's ``cases.jsonl`` beside its trials (``trialscore run``
    writes both); none when there is no such file.  A line that does not parse is passed over: the
    file only adds what the drawer shows (a line too long to read is an error naming it)."""
    if not path.is_file():
        return {}
    return asked_of(_line(line) for _, line in lines(path))


def _line(line: bytes) -> object:
    try:
        return json.loads(line) if line.strip() else None
    except (ValueError, RecursionError):
        return None
