"""CSV / TSV with a header row, one row per trial, read and counted by DuckDB."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb

from trialscore.errors import EvaluationError
from trialscore.results.formats._text import first_line, head_text
from trialscore.results.tally import quote_literal

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


def sniff(path: Path) -> bool:
    """Text whose first non-blank line holds a separator and does not open a JSON document."""
    head = head_text(path)
    if head is None:
        return False
    line = first_line(head)
    return not line.startswith(("{", "[")) and any(separator in line for separator in _SEPARATORS)


def _csv_line_number(path: Path, index: int, rejected: set[int]) -> int:
    """Line of the ``index``-th data row, skipping the header, blank lines and rejected lines."""
    with path.open("r", encoding="utf-8", errors="replace", newline="") as handle:
        rows = csv.reader(handle)
        next(rows, None)
        seen = -1
        for row in rows:
            start = rows.line_num
            if not any(cell.strip() for cell in row) or start in rejected:
                continue
            seen += 1
            if seen == index:
                return start
    return -1


def read(path: Path, sink: TrialSink) -> None:
    """Count the rows of a CSV file; rows DuckDB rejects raise or are skipped and counted."""
    label = str(path)
    table = sink.new_name("rejects")
    relation = (
        f"read_csv({quote_literal(label)}, header=true, all_varchar=true, store_rejects=true, "
        f"rejects_table={quote_literal(table)}, rejects_scan={quote_literal(table + '_scan')})"
    )
    try:
        names = sink.describe(relation)
    except duckdb.Error as exc:
        raise EvaluationError(f"{label}: cannot read CSV: {exc}") from exc

    def locate(index: int) -> str:
        rejected = {line for (line,) in sink.con.execute(f"SELECT DISTINCT line FROM {table}").fetchall()}
        return f"line {_csv_line_number(path, index, rejected)}"

    sink.scan(label, relation, locate, names)
    rows = sink.con.execute(
        f"SELECT DISTINCT line, column_name, error_message FROM {table} ORDER BY line"
    ).fetchall()
    if not rows:
        return
    line, column, message = rows[0]
    where = f"{label} line {line}" + (f": field {column!r}" if column else "")
    if not sink.skip_invalid:
        raise EvaluationError(
            f"{where}: {message} ({len(rows)} bad line{'s' if len(rows) != 1 else ''} in all; "
            "--skip-invalid skips and counts them)"
        )
    sink.skipped(len(rows), f"{where}: {message}")
