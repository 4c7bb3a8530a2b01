"""CSV / TSV with a header row, one row per trial: DuckDB for clean files, Python's csv module for the rest.

The dialect is fixed, not guessed row by row: the header line picks the
separator (tab for ``.tsv``; else the most frequent of ``,`` ``\\t`` ``;`` ``|``
in it), values may be quoted with ``"`` and a quote inside a quoted value is
doubled (RFC 4180).  Line ends may be ``\\n``, ``\\r\\n`` or a mix of both (a CRLF
file from a spreadsheet with a line added in an editor); a UTF-8 byte order mark
is ignored.  Blank lines (or lines of spaces) and rows whose every cell is empty
(``,,,`` as spreadsheets write them) are not rows.

A clean file is counted by DuckDB in one scan.  When DuckDB finds a row it cannot
take, the file is read again with Python's csv module, which names the first bad
row by its line and says what is wrong with it, once per row:

* a row with fewer fields than the header names the first missing field; one
  with more names the value that has no column;
* a quote that is never closed names the line and field where it opens;
* text after a closing quote (``"1"x``) and lines that are not UTF-8 are named too.

Without ``skip_invalid`` the first bad row is an error (with the number of bad
rows in all); with it, each bad row is skipped and counted once.

>>> import tempfile, pathlib
>>> from trialscore.results.sink import TrialSink
>>> path = pathlib.Path(tempfile.mkdtemp()) / "t.csv"
>>> _ = path.write_bytes(b"case_id,trial,passed\\r\\na,0,1\\r\\na,1,0\\r\\nb,0\\r\\n")
>>> with TrialSink(skip_invalid=True) as sink:
...     read(path, sink)
>>> sink.stats.rows_read, sink.stats.rows_skipped, sink.stats.first_skipped.split(": ", 1)[1]
(3, 1, "field 'passed' is missing: the row has 2 fields, the header 3")
"""

from __future__ import annotations

import csv
import re
from array import array
from collections.abc import Generator, Sequence
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TextIO, overload

from trialscore.errors import EvaluationError, parameter
from trialscore.results.formats._text import first_line, head_text
from trialscore.results.sink import EngineError
from trialscore.results.tally import LongTable, quote_identifier, quote_literal

if TYPE_CHECKING:
    from trialscore.results.sink import TrialSink

__all__ = ["MAPS", "NAME", "SUFFIXES", "SUMMARY", "read", "sniff"]

NAME = "csv"
SUMMARY = "CSV or TSV with a header row, one row per trial (comma, tab, semicolon or pipe separated)"
MAPS = (
    "columns by role (item: case_id, item, eval_id, ...; trial; passed / score / verdict); any other "
    "column can be a group key; rows are named by their line"
)
SUFFIXES = (".csv", ".tsv", ".txt")

_SEPARATORS = (",", "\t", ";", "|")
_QUOTE = '"'
#: Undecodable bytes, as ``errors="surrogateescape"`` keeps them.
_NOT_UTF8 = re.compile("[\udc80-\udcff]")


def sniff(path: Path) -> bool:
    """Text whose first non-blank line holds a separator and does not open a JSON document."""
    head = head_text(path)
    if head is None:
        return False
    line = first_line(head)
    return not line.startswith(("{", "[")) and any(separator in line for separator in _SEPARATORS)


# ------------------------------------------------------------------------------------------ records


@dataclass(frozen=True)
class _Row:
    """One record of the file: its lines, its cells, or what is wrong with it (``field`` = 0-based)."""

    start: int
    end: int
    cells: list[str] | None
    fault: str | None = None
    field: int | None = None


class _Lines:
    """A text file's lines for :func:`csv.reader`, numbered; the current record's lines are kept so a
    record broken by an unclosed quote can be read again from its second line."""

    def __init__(self, handle: TextIO) -> None:
        self._handle = handle
        self._pending: list[str] = []
        self.number = 0
        self.taken: list[str] = []

    def __iter__(self) -> _Lines:
        return self

    def __next__(self) -> str:
        line = self._pending.pop() if self._pending else next(self._handle)
        self.number += 1
        self.taken.append(line)
        return line

    def start_record(self) -> int:
        """Forget the last record's lines; the line number the next record starts on."""
        self.taken = []
        return self.number + 1

    def reread_after_first(self) -> None:
        """Hand the current record's lines after its first one out again."""
        rest = self.taken[1:]
        self._pending.extend(reversed(rest))
        self.number -= len(rest)
        del self.taken[1:]


def _quote_fault(line: str, separator: str) -> tuple[int, str] | None:
    """The first quoting fault of one line: (0-based field, what is wrong), or None.

    >>> _quote_fault('a,"b,1', ","), _quote_fault('a,"1"x,2', ","), _quote_fault('a,"x""y",b"c', ",")
    ((1, 'opens a quote that is never closed'), (1, 'has text after its closing quote'), None)
    """
    field, position, text = 0, 0, line.rstrip("\r\n")
    while position <= len(text):
        if text.startswith(_QUOTE, position):  # a quoted value: find its closing quote
            position += 1
            while True:
                close = text.find(_QUOTE, position)
                if close < 0:
                    return field, "opens a quote that is never closed"
                if text.startswith(_QUOTE, close + 1):
                    position = close + 2
                    continue
                position = close + 1
                break
            if position < len(text) and not text.startswith(separator, position):
                return field, "has text after its closing quote"
        end = text.find(separator, position)
        if end < 0:
            return None
        field, position = field + 1, end + len(separator)
    return None


def _rows(path: Path, separator: str) -> Generator[_Row, None, None]:
    """Every record of the file that is not blank, good or broken, in file order."""
    with path.open("r", encoding="utf-8-sig", errors="surrogateescape", newline="") as handle:
        lines = _Lines(handle)
        reader = csv.reader(lines, delimiter=separator, quotechar=_QUOTE, doublequote=True, strict=True)
        while True:
            start = lines.start_record()
            try:
                cells = next(reader)
            except StopIteration:
                return
            except csv.Error as exc:
                yield _broken(lines, start, separator, exc)
                continue
            if any(_NOT_UTF8.search(line) for line in lines.taken):
                yield _Row(start, lines.number, None, "the line is not UTF-8 text (save the file as UTF-8)")
            elif any(cells) and not (len(cells) == 1 and cells[0].isspace()):
                yield _Row(start, lines.number, cells)


def _broken(lines: _Lines, start: int, separator: str, exc: csv.Error) -> _Row:
    """A record :mod:`csv` refused: an unclosed quote is one bad line (reading resumes on the next)."""
    fault = _quote_fault(lines.taken[0], separator) if lines.taken else None
    if fault is not None and fault[1].startswith("opens"):
        lines.reread_after_first()
        return _Row(
            start, start, None, f"{fault[1]} (a quote inside a value is written as two quotes)", fault[0]
        )
    if fault is not None:
        return _Row(start, lines.number, None, fault[1], fault[0])
    return _Row(start, lines.number, None, str(exc))


@dataclass(frozen=True)
class _Header:
    names: list[str]
    separator: str
    line: int


def _separator(path: Path) -> str:
    if path.suffix.lower() == ".tsv":
        return "\t"
    line = first_line(head_text(path) or "")
    counts = [line.count(separator) for separator in _SEPARATORS]
    return _SEPARATORS[counts.index(max(counts))] if max(counts) else ","


def _header(path: Path) -> tuple[_Header, Generator[_Row, None, None]]:
    """The header and the rows after it (close the iterator when not reading to the end)."""
    separator = _separator(path)
    rows = _rows(path, separator)
    first = next(rows, None)
    if first is None:
        raise EvaluationError(f"no trials in {path}: the file has no header row")
    if first.cells is None:
        where = f"column {first.field + 1} " if first.field is not None else ""
        raise EvaluationError(f"{path} line {first.start}: the header {where}{first.fault}")
    names: list[str] = []
    for index, cell in enumerate(first.cells):
        name = cell.strip() or f"column{index + 1}"
        base, copy = name, 0
        while name in names:  # a repeated name gets a suffix, as DuckDB does
            copy += 1
            name = f"{base}_{copy}"
        names.append(name)
    return _Header(names, separator, first.start), rows


def _problem(row: _Row, names: Sequence[str]) -> str | None:
    """What is wrong with a row (its fault, or a field count unlike the header's), or None."""
    if row.cells is None:
        field = f"field {names[row.field]!r} " if row.field is not None and row.field < len(names) else ""
        return f"{field}{row.fault}"
    count = len(row.cells)
    if count == len(names):
        return None
    span = (
        f" (a quoted value runs from line {row.start} to line {row.end}: is a quote unbalanced?)"
        if row.end > row.start
        else ""
    )
    fields = f"the row has {count} field{'s' if count != 1 else ''}, the header {len(names)}"
    if count < len(names):
        return f"field {names[count]!r} is missing: {fields}{span}"
    extra = row.cells[len(names)]
    shown = repr(extra) if len(extra) <= 40 else repr(extra[:37] + "...")
    return f"{fields}: {shown} has no column{span}"


# ------------------------------------------------------------------------------------------ reading


class _LineNames(Sequence[str]):
    """``"line N"`` for each kept row, from an array of line numbers."""

    def __init__(self, lines: array[int]) -> None:
        self._lines = lines

    def __len__(self) -> int:
        return len(self._lines)

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[str]: ...

    def __getitem__(self, index: int | slice) -> str | Sequence[str]:
        if isinstance(index, slice):
            return [f"line {line}" for line in self._lines[index]]
        return f"line {self._lines[index]}"


def _duckdb_relation(path: Path, header: _Header) -> str:
    columns = "{" + ", ".join(f"{quote_literal(name)}: 'VARCHAR'" for name in header.names) + "}"
    source = (
        f"read_csv({quote_literal(str(path))}, header=true, columns={columns}, "
        f"delim={quote_literal(header.separator)}, quote='\"', escape='\"', strict_mode=true, "
        "auto_detect=false)"
    )
    filled = " OR ".join(f"{quote_identifier(name)} IS NOT NULL" for name in header.names)
    return f"(SELECT * FROM {source} WHERE {filled})"


def read(path: Path, sink: TrialSink) -> None:
    """Count the rows of a CSV file: by DuckDB when it takes every row, else row by row in Python."""
    label = str(path)
    header, rows = _header(path)
    rows.close()

    def locate(index: int) -> str:
        _, rows = _header(path)
        with closing(rows):
            for seen, row in enumerate(rows):
                if seen == index:
                    return f"line {row.start}"
        return "line ?"

    if header.line != 1:  # lines before the header: DuckDB's skip= counts them its own way
        _read_rows(path, sink)
        return
    try:
        counted = sink.count(
            label, _duckdb_relation(path, header), locate, dict.fromkeys(header.names, "VARCHAR")
        )
    except EngineError:
        _read_rows(path, sink)
        return
    sink.keep(label, counted)


def _read_rows(path: Path, sink: TrialSink) -> None:
    """Read every row with Python's csv module: bad rows raise, or are skipped and counted once each."""
    label = str(path)
    header, rows = _header(path)
    with closing(rows):
        table, bad, first_bad = _table(label, header, rows, sink)
    if first_bad is not None and not sink.skip_invalid:
        count = f"{bad} bad row{'s' if bad != 1 else ''}"
        raise EvaluationError(
            f"{first_bad} ({count} in all; {parameter('skip_invalid')} skips and counts them)"
        )
    sink.scan_table(label, table)


def _table(
    label: str, header: _Header, rows: Generator[_Row, None, None], sink: TrialSink
) -> tuple[LongTable, int, str | None]:
    """The good rows' used columns as text, named by line; how many rows were bad and the first of them."""
    used = sink.used_columns(header.names)
    positions = [header.names.index(name) for name in used]
    values: list[list[str | None]] = [[] for _ in used]
    seen: dict[str, str] = {}  # one object per distinct cell text: a repeated id or outcome costs a pointer
    lines: array[int] = array("q")
    bad, first_bad = 0, None
    for row in rows:
        problem = _problem(row, header.names)
        if problem is not None:
            bad += 1
            first_bad = first_bad or f"{label} line {row.start}: {problem}"
            continue
        assert row.cells is not None
        for slot, position in zip(values, positions, strict=True):
            cell = row.cells[position]
            slot.append(seen.setdefault(cell, cell) if cell else None)
        lines.append(row.start)
    table = dict(zip(used, values, strict=True))
    return LongTable(table, _LineNames(lines), bad, first_bad), bad, first_bad
