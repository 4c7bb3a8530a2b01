"""Parquet: long format, one row per trial, read and counted by DuckDB.

A file, or a folder of Parquet files (every ``.parquet`` / ``.pq`` file below it, read as one table:
a hive-partitioned layout such as ``run=1/model=a/part-0.parquet`` gives columns ``run`` and
``model``); globs and ``s3://`` URLs reach the same reading through the dispatcher
(:mod:`trialscore.results.sources`).  Only the columns the reading needs are read; a bad row is
named by its row number (and its file, in a dataset of several).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import duckdb

from trialscore.errors import EvaluationError
from trialscore.results.formats._text import head_bytes, tree_files
from trialscore.results.sink import EngineError, engine_reason
from trialscore.results.sources import PARQUET_SUFFIXES, ParquetFiles, local_files

if TYPE_CHECKING:
    from trialscore.results.sink import TrialSink

__all__ = ["MAPS", "NAME", "SUFFIXES", "SUMMARY", "parquet_files", "read", "read_files", "sniff"]

NAME = "parquet"
SUMMARY = "Parquet table, one row per trial (a file, or a folder of them: hive layouts too)"
MAPS = (
    "columns by role (item: case_id, item, eval_id, ...; trial; passed / score / verdict); hive folder "
    "keys are columns; rows named 1.."
)
SUFFIXES = (".parquet", ".pq")

_MAGIC = b"PAR1"


def _is_parquet(path: Path) -> bool:
    return path.suffix.lower() in PARQUET_SUFFIXES and head_bytes(path, len(_MAGIC)) == _MAGIC


def parquet_files(path: Path) -> list[Path]:
    """``[path]`` for a file; a folder's Parquet files (in it and below it), in path order."""
    if path.is_dir():
        return tree_files(path, _is_parquet)
    return [path]


def sniff(path: Path) -> bool:
    """A Parquet file starts with ``PAR1``; a folder holds Parquet files (and is no other tool's)."""
    if path.is_dir():
        return bool(parquet_files(path))
    return head_bytes(path, len(_MAGIC)) == _MAGIC


def read(path: Path, sink: TrialSink) -> None:
    """Count the rows of a Parquet file, or of a folder of them read as one table."""
    files = parquet_files(path)
    if not files:
        raise EvaluationError(f"{path}: the folder holds no Parquet file")
    read_files(local_files(str(path), files), sink)


def read_files(files: ParquetFiles, sink: TrialSink) -> None:
    """Count the rows of Parquet files (local or remote) read as one table."""
    label = files.label
    try:
        relation = files.relation(sink.con, sink.new_name("parquet"))
        types = sink.describe(relation)
        sink.scan(label, relation, files.locate(sink.con), types, files.never_null(sink.con))
    except EngineError as exc:
        raise EvaluationError(f"{label}: cannot read Parquet: {exc.reason}") from exc
    except (duckdb.Error, OSError) as exc:
        reason = engine_reason(exc) if isinstance(exc, duckdb.Error) else str(exc)
        raise EvaluationError(f"{label}: cannot read Parquet: {reason}") from exc
    sink.bytes_read += files.bytes_needed(sink.con, sink.used_columns(list(types)))
