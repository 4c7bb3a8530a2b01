"""The reduction on Ray Data: Parquet trial rows counted per block on Ray workers, merged here.

Each block of ``ray.data.read_parquet`` (only the columns the reading needs) is counted on a
worker by the same DuckDB rules as on this machine (:class:`~trialscore.results.sink.TrialSink`:
column roles, validation, sums of graded scores); the blocks' counts are (group, case) rows that
add up, so merging them here gives the counts of the whole, to the last digit.  Ray runs locally,
or joins the cluster at ``address`` (``ray://host:10001``, or ``auto``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from trialscore.errors import EvaluationError, template
from trialscore.results._columns import Columns, strings
from trialscore.results.formats.parquet import parquet_files
from trialscore.results.sink import Counted, TrialSink
from trialscore.results.sources import glob_paths, has_glob, hive_keys, is_url, remote_files
from trialscore.results.tally import COUNT_COLUMNS, TallyResult

__all__ = ["ray_count"]


def _parquet_paths(paths: Sequence[str | Path]) -> tuple[list[str], Any]:
    """Every Parquet file the inputs name (files, folders, globs, URLs), and the PyArrow file system of
    the first (None: a local file); anything else is an error."""
    found: list[str] = []
    first_system: Any = None
    for path in paths:
        if is_url(path):
            files, filesystem, _ = remote_files(str(path))
            if files is None:
                raise EvaluationError(f"{path}: the ray engine reads Parquet trial rows; use engine duckdb")
            scheme = str(path).split("://", 1)[0]
            if not found:
                first_system = filesystem
            found += [f"{scheme}://{name}" for name in files.paths]
            continue
        local = glob_paths(str(path)) if has_glob(path) and not Path(path).exists() else [Path(path)]
        for each in local:
            if not each.exists():
                raise EvaluationError(f"{each}: no such file or folder")
            files_ = parquet_files(each)
            if not files_ or any(file.read_bytes()[:4] != b"PAR1" for file in files_[:1]):
                raise EvaluationError(f"{each}: the ray engine reads Parquet trial rows; use engine duckdb")
            found += [str(file) for file in files_]
    return found, first_system


def _columns_of(file: str, filesystem: Any) -> list[str]:
    """The columns Ray Data reads from ``file``: its Parquet schema's, then the keys of the hive
    folders in its path (``model=a/``), as Ray Data's default partitioning adds them.

    Read with PyArrow: asking Ray Data for one file's schema would start its footer-reading actors,
    a worker process each, only to read one footer.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = file.split("://", 1)[1] if filesystem is not None else file
    try:
        names = list(pq.read_schema(path, filesystem=filesystem).names)
    except (OSError, pa.ArrowException) as exc:
        raise EvaluationError(f"{file}: cannot read its Parquet schema: {exc}") from exc
    return names + [key for key in hive_keys(path) if key not in names]


class _CountBlock:
    """Counts one block of trial rows (a PyArrow table) per (data group, case) with DuckDB."""

    def __init__(self, by: tuple[str, ...], columns: Any) -> None:
        self.by = by
        self.columns = columns

    def __call__(self, block: Any) -> Any:
        import pyarrow as pa

        with TrialSink(self.by, self.columns) as sink:
            name = sink.new_name("block")
            sink.con.register(name, block)
            counted = sink.count("a Ray block", name, lambda index: f"row {index + 1} of its Ray block")
        table = counted.result.table
        return pa.table({key: pa.array(column.tolist()) for key, column in table.items()})


def ray_count(
    paths: Sequence[str | Path], sink: TrialSink, input_format: str | None, address: str | None
) -> None:
    """Count the Parquet inputs on Ray Data into ``sink`` (as one input labelled by the first path)."""
    if input_format not in (None, "parquet"):
        raise EvaluationError(f"the ray engine reads Parquet trial rows; got input_format {input_format!r}")
    if sink.skip_invalid:
        raise EvaluationError("skip_invalid is the duckdb engine's; the ray engine stops at a bad row")
    try:
        import ray
    except ImportError as exc:
        raise EvaluationError("the ray engine needs Ray: pip install 'trialscore[ray]'") from exc
    files, filesystem = _parquet_paths(paths)
    label = " and ".join(map(str, paths))
    started = not ray.is_initialized()
    if started:
        ray.init(address=address, include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        available = _columns_of(files[0], filesystem)
        data_by = tuple(sink.data_by(available))  # the group keys the data holds
        with TrialSink(data_by, sink.columns) as probe:
            needed = probe.used_columns(available)
        dataset = ray.data.read_parquet(files).select_columns(needed)  # pushed down into the read
        parts = dataset.map_batches(
            _CountBlock(data_by, sink.columns), batch_format="pyarrow", batch_size=None
        )
        tables = [table for table in parts.iter_batches(batch_format="pyarrow", batch_size=None)]
    except EvaluationError:
        raise
    except Exception as exc:  # a worker's EvaluationError arrives wrapped in Ray's task error
        cause = _cause(exc)
        if cause is not None:
            raise EvaluationError(f"{label}: {template(cause)}") from exc
        raise EvaluationError(f"{label}: the Ray reduction failed: {type(exc).__name__}: {exc}") from exc
    finally:
        if started:
            ray.shutdown()
    table = _columns(tables, len(data_by))
    rows = int(table["rows"].sum()) if table["rows"].size else 0
    sink.keep(label, Counted(TallyResult(table, rows, 0, None), data_by))
    sink.bytes_read += _bytes(files, needed)


def _cause(exc: BaseException) -> EvaluationError | None:
    """The EvaluationError a Ray task raised, if that is what failed."""
    seen: BaseException | None = exc
    while seen is not None:
        found = getattr(seen, "cause", None)  # Ray's task errors hold the worker's exception
        if isinstance(found, BaseException) and found is not seen:
            seen = found
            continue
        if isinstance(seen, EvaluationError):
            return seen
        seen = seen.__cause__
    return None


def _columns(tables: list[Any], groups: int) -> Columns:
    """The blocks' counts as one :data:`Columns` table (nulls as NaN / None)."""
    names = [f"g{index}" for index in range(groups)] + list(COUNT_COLUMNS)
    out: Columns = {}
    for name in names:
        values = [value for table in tables for value in table.column(name).to_pylist()]
        if name == "item" or (name[:1] == "g" and name[1:].isdigit()):
            out[name] = strings(values)
        elif name in ("trial_lo", "trial_hi"):
            out[name] = np.array([np.nan if value is None else value for value in values], dtype=np.float64)
        else:
            out[name] = np.array(values, dtype=np.int64)
    return out


def _bytes(files: Sequence[str], columns: Sequence[str]) -> int:
    """Bytes of the column chunks of ``columns`` in the local files (remote ones: not counted here)."""
    import pyarrow.parquet as pq

    total = 0
    for file in files:
        if is_url(file):
            continue
        meta = pq.ParquetFile(file).metadata
        for group in range(meta.num_row_groups):
            row_group = meta.row_group(group)
            for index in range(row_group.num_columns):
                chunk = row_group.column(index)
                if chunk.path_in_schema in columns:
                    total += chunk.total_compressed_size
    return total
