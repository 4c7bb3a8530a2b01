"""A JSON array of row objects (one object per trial), read by DuckDB.

>>> import tempfile, pathlib
>>> path = pathlib.Path(tempfile.mkdtemp()) / "rows.json"
>>> _ = path.write_text('[{"case_id": "a", "passed": true}, {"case_id": "a", "passed": false}]')
>>> sniff(path)
True
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import duckdb

from trialscore.errors import EvaluationError
from trialscore.results.formats._text import head_text
from trialscore.results.sink import engine_reason
from trialscore.results.tally import quote_literal

if TYPE_CHECKING:
    from trialscore.results.sink import TrialSink

__all__ = ["MAPS", "NAME", "SUFFIXES", "SUMMARY", "read", "sniff"]

NAME = "json-array"
SUMMARY = "a JSON array of row objects, one per trial"
MAPS = "keys by role, as JSON Lines; rows are named element 1, 2, ..."
SUFFIXES = (".json",)


def sniff(path: Path) -> bool:
    """The document starts with ``[``."""
    head = head_text(path, 4096)
    return head is not None and head.lstrip().startswith("[")


def read(path: Path, sink: TrialSink) -> None:
    """Count the row objects of the array."""
    first = (head_text(path, 4096) or "").lstrip().removeprefix("[").lstrip()[:1]
    if first == "]":
        raise EvaluationError(f"no trials in {path}: the JSON array is empty")
    if first != "{":
        raise EvaluationError(
            f"{path}: expected a JSON array of row objects, one per trial; "
            f"its first element starts with {first!r}"
        )
    source = quote_literal(str(sink.without_bom(path)))
    try:
        names = sink.describe(f"read_json({source}, format='array')")
    except duckdb.Error as exc:
        raise EvaluationError(
            f"{path}: cannot read a JSON array of trial rows: {engine_reason(exc)}"
        ) from exc
    columns = "{" + ", ".join(f"{quote_literal(name)}: 'VARCHAR'" for name in names) + "}"
    relation = f"read_json({source}, format='array', columns={columns})"
    sink.scan(str(path), relation, lambda index: f"element {index + 1}", dict.fromkeys(names, "VARCHAR"))
