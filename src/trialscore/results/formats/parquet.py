"""Parquet: long format, one row per trial, read and counted by DuckDB."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from trialscore.errors import EvaluationError
from trialscore.results.formats._text import head_bytes
from trialscore.results.sink import EngineError
from trialscore.results.tally import quote_literal

if TYPE_CHECKING:
    from trialscore.results.sink import TrialSink

NAME = "parquet"
SUMMARY = "Parquet table, one row per trial"
MAPS = "columns by role (item: case_id, item, eval_id, ...; trial; passed / score / verdict); rows named 1.."
SUFFIXES = (".parquet", ".pq")

_MAGIC = b"PAR1"


def sniff(path: Path) -> bool:
    """A Parquet file starts with ``PAR1``."""
    return head_bytes(path, len(_MAGIC)) == _MAGIC


def read(path: Path, sink: TrialSink) -> None:
    """Count the rows of a Parquet file; a bad row is named by its 1-based row number."""
    label = str(path)
    relation = f"read_parquet({quote_literal(label)})"
    try:
        sink.scan(label, relation, lambda index: f"row {index + 1}")
    except EngineError as exc:
        raise EvaluationError(f"{label}: cannot read Parquet: {exc.reason}") from exc
