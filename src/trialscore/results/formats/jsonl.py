"""JSON Lines: one JSON object a line (the runner's ``trials.jsonl``, or any long rows), read by DuckDB.

Every key seen among the first 1000 objects becomes a text column; roles are
found by name (:mod:`trialscore.results.columns`).  A line that is not a JSON
object is named (``trials.jsonl line 7: not valid JSON: ...``), or with
``skip_invalid`` skipped and counted once.  A UTF-8 byte order mark (as some
Windows tools write) is accepted.

>>> import tempfile, pathlib
>>> path = pathlib.Path(tempfile.mkdtemp()) / "t.jsonl"
>>> _ = path.write_bytes(b'\\xef\\xbb\\xbf{"case_id": "a", "passed": true}\\n')
>>> sniff(path)
True
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import TYPE_CHECKING

from trialscore.errors import EvaluationError
from trialscore.results.formats._text import first_line, head_text, nonblank_line_number
from trialscore.results.sink import EngineError
from trialscore.results.tally import quote_literal

if TYPE_CHECKING:
    from trialscore.results.sink import TrialSink

__all__ = ["MAPS", "MAX_JSON_LINE_BYTES", "NAME", "SUFFIXES", "SUMMARY", "read", "sniff"]

NAME = "jsonl"
SUMMARY = "JSON Lines, one object a line: the runner's trials.jsonl (TrialRecord) or any long rows"
MAPS = (
    "keys by role (item: case_id, item, eval_id, ...; trial: trial, attempt, epoch; passed / score / "
    "verdict); any other key can be a group key (target, category, ...)"
)
SUFFIXES = (".jsonl", ".ndjson", ".json")

#: DuckDB's default ``maximum_object_size`` for ``read_json`` (bytes): longer lines need a bigger one.
_DUCKDB_JSON_OBJECT_BYTES = 16 * 2**20
#: The longest JSON Lines line read (bytes); a longer one is named as too long.
MAX_JSON_LINE_BYTES = 2**30


def sniff(path: Path) -> bool:
    """The first non-blank line starts a JSON object on that line (not a pretty-printed document)."""
    head = head_text(path)
    if head is None:
        return False
    line = first_line(head)
    return line.startswith("{") and line != "{"


def _first_bad_json_line(path: Path) -> tuple[str | None, int, int]:
    """Where and why the first line that is not a JSON object is bad (None: every line is one),
    with the length in bytes and the number of the longest line."""
    longest, longest_line = 0, 0
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if len(raw) > longest:
                longest, longest_line = len(raw), number
            if number == 1:
                raw = raw.removeprefix(b"\xef\xbb\xbf")
            if not raw.strip():
                continue
            if len(raw) > MAX_JSON_LINE_BYTES:
                return (
                    f"{path} line {number}: a line of {len(raw) / 2**20:.0f} MiB is over the "
                    f"{MAX_JSON_LINE_BYTES // 2**20} MiB limit",
                    longest,
                    longest_line,
                )
            try:
                value = json.loads(raw.decode("utf-8", errors="replace"))
            except ValueError as exc:
                return f"{path} line {number}: not valid JSON: {exc}", longest, longest_line
            if not isinstance(value, dict):
                return (
                    f"{path} line {number}: expected a JSON object; got {type(value).__name__}",
                    longest,
                    longest_line,
                )
    return None, longest, longest_line


def _json_keys(path: Path, lines: int = 1000) -> list[str]:
    """Keys of the JSON objects among the first ``lines`` non-blank lines, in order of appearance."""
    keys: dict[str, None] = {}
    with path.open("r", encoding="utf-8-sig", errors="replace") as handle:
        for line in itertools.islice((line for line in handle if line.strip()), lines):
            try:
                value = json.loads(line)
            except ValueError:
                continue
            if isinstance(value, dict):
                keys.update(dict.fromkeys(value))
    return list(keys)


def read(path: Path, sink: TrialSink) -> None:
    """Count the trial rows of a JSON Lines file."""
    label = str(path)
    names = _json_keys(path)
    if not names:
        malformed, _, _ = _first_bad_json_line(path)
        raise EvaluationError(malformed or f"{label}: no JSON object among the first 1000 non-blank lines")
    source = quote_literal(str(sink.without_bom(path)))
    columns = "{" + ", ".join(f"{quote_literal(name)}: 'VARCHAR'" for name in names) + "}"
    types = dict.fromkeys(names, "VARCHAR")

    def locate(index: int) -> str:
        return f"line {nonblank_line_number(path, index)}"

    def relation(options: str = "") -> str:
        return f"read_json({source}, format='newline_delimited', columns={columns}{options})"

    try:
        sink.scan(label, relation(), locate, types)
    except EngineError as exc:
        malformed, longest, longest_line = _first_bad_json_line(path)
        if malformed is None and longest > _DUCKDB_JSON_OBJECT_BYTES:
            # Every line is a JSON object, one is longer than DuckDB reads by default: read with room for it.
            sink.scan(label, relation(f", maximum_object_size={longest + 1024}"), locate, types)
            return
        if malformed is None:
            malformed = f"{label} (longest line {longest_line}): cannot read as JSON Lines: {exc.reason}"
        if not sink.skip_invalid:
            raise EvaluationError(f"{malformed} (--skip-invalid skips and counts bad lines)") from exc
        earlier = sink.stats.first_skipped
        sink.scan(label, relation(", ignore_errors=true"), locate, types)
        sink.name_first_skipped(earlier, malformed)
