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

from pathlib import Path
from typing import TYPE_CHECKING

from trialscore.errors import EvaluationError, parameter, template
from trialscore.results.formats._text import (
    MAX_LINE_BYTES,
    first_line,
    head_text,
    lines,
    nonblank_line_number,
    parse_json,
)
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

#: The fields every trial record has: a file whose first object has them all is read as trial records.
_RECORD_KEYS = frozenset({"case_id", "trial", "passed", "verdict"})
#: DuckDB's default ``maximum_object_size`` for ``read_json`` (bytes): longer lines need a bigger one.
_DUCKDB_JSON_OBJECT_BYTES = 16 * 2**20
#: The longest JSON Lines line read (bytes); a longer one is named as too long, without being held.
MAX_JSON_LINE_BYTES = MAX_LINE_BYTES


def sniff(path: Path) -> bool:
    """The first non-blank line starts a JSON object on that line (not a pretty-printed document)."""
    head = head_text(path)
    if head is None:
        return False
    line = first_line(head)
    return line.startswith("{") and line != "{"


def _first_bad_json_line(path: Path) -> tuple[str | None, int, int]:
    """Where and why the first line that is not a JSON object is bad (None: every line is one),
    with the length in bytes and the number of the longest line.

    A line over :data:`MAX_JSON_LINE_BYTES` raises (see :func:`~trialscore.results.formats._text.lines`).
    """
    longest, longest_line = 0, 0
    for number, raw in lines(path, MAX_JSON_LINE_BYTES):
        if len(raw) > longest:
            longest, longest_line = len(raw), number
        if not raw.strip():
            continue
        where = f"{path} line {number}"
        try:
            value = parse_json(raw.decode("utf-8", errors="replace"), where)
        except EvaluationError as exc:
            return str(exc), longest, longest_line
        if not isinstance(value, dict):
            return f"{where}: expected a JSON object; got {type(value).__name__}", longest, longest_line
    return None, longest, longest_line


def _json_keys(path: Path, count: int = 1000) -> tuple[list[str], bool, int | None]:
    """Keys of the JSON objects among the first ``count`` non-blank lines, in order of appearance,
    whether the first of them is a trial record (it has every key of one), and the longest line's
    length in bytes when those lines are the whole file (None: more lines follow)."""
    keys: dict[str, None] = {}
    head: list[tuple[int, str]] = []
    longest = 0
    for number, line in lines(path, MAX_JSON_LINE_BYTES):
        longest = max(longest, len(line))
        if line.strip():
            head.append((number, line.decode("utf-8", errors="replace")))
            if len(head) == count:
                whole = None
                break
    else:
        whole = longest
    objects = [value for value in _objects(path, head) if isinstance(value, dict)]
    for value in objects:
        keys.update(dict.fromkeys(value))
    return list(keys), bool(objects) and _RECORD_KEYS <= objects[0].keys(), whole


def _objects(path: Path, head: list[tuple[int, str]]) -> list[object]:
    """The JSON value of each line that parses: all in one parse when each line is one ``{...}`` text
    (no value can then straddle two lines), else line by line."""
    texts = [text.strip() for _, text in head]
    if all(text.startswith("{") and text.endswith("}") for text in texts):
        try:
            values = parse_json("[" + ",".join(texts) + "]", str(path))
        except EvaluationError:
            pass
        else:
            if isinstance(values, list) and len(values) == len(texts):
                return values
    out = []
    for number, text in head:
        try:
            out.append(parse_json(text, f"{path} line {number}"))
        except EvaluationError:
            continue
    return out


def _room(longest: int) -> str:
    """DuckDB's ``read_json`` option giving a line of ``longest`` bytes room (none below its default).

    >>> _room(100), _room(20 * 2**20)
    ('', ', maximum_object_size=20972544')
    """
    return f", maximum_object_size={longest + 1024}" if longest > _DUCKDB_JSON_OBJECT_BYTES else ""


def read(path: Path, sink: TrialSink) -> None:
    """Count the trial rows of a JSON Lines file: the runner's trial records are held to their rules."""
    label = str(path)
    names, records, longest = _json_keys(path)
    if not names:
        malformed, _, _ = _first_bad_json_line(path)
        raise EvaluationError(malformed or f"{label}: no JSON object among the first 1000 non-blank lines")
    source = quote_literal(str(sink.without_bom(path)))
    columns = "{" + ", ".join(f"{quote_literal(name)}: 'VARCHAR'" for name in names) + "}"
    types = dict.fromkeys(names, "VARCHAR")

    def locate(index: int) -> str:
        return f"line {nonblank_line_number(path, index)}"

    def scan(options: str = "") -> None:
        relation = f"read_json({source}, format='newline_delimited', columns={columns}{options})"
        sink.keep(label, sink.count(label, relation, locate, types, records))

    try:
        scan(_room(longest or 0))  # a long line seen reading the keys gets room at once
    except EngineError as exc:
        malformed, longest_seen, longest_line = _first_bad_json_line(path)
        if malformed is None and longest_seen > _DUCKDB_JSON_OBJECT_BYTES:
            # Every line is a JSON object, one is longer than DuckDB reads by default: read with room for it.
            scan(_room(longest_seen))
            return
        if malformed is None:
            malformed = f"{label} (longest line {longest_line}): cannot read as JSON Lines: {exc.reason}"
        if not sink.skip_invalid:
            raise EvaluationError(
                f"{template(malformed)} ({parameter('skip_invalid')} skips and counts bad lines)"
            ) from exc
        earlier = sink.stats.first_skipped
        scan(", ignore_errors=true")
        sink.name_first_skipped(earlier, malformed)
