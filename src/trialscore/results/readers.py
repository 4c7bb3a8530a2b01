"""Read trial results from files (or records) into per-(group, item) counts.

:func:`read_counts` takes any mix of files and returns one
:class:`~trialscore.results.counts.ItemCounts`; the same item in two files is
one item with the trials of both.  The format comes from the file:

====================================  =====================================================================
file                                  read as
====================================  =====================================================================
``.parquet``                          long format, one row per trial (DuckDB)
``.csv`` / ``.tsv`` with a header     long format (DuckDB); a headerless numeric CSV is a wide 0/1 matrix
``.jsonl`` / ``.ndjson`` / ``.json``  trial records (the runner's output) or any long JSON rows (DuckDB);
                                      per-case results with ``trials`` arrays (seed 003) when the first
                                      object has ``eval_id``; an inspect_ai log when it has ``eval``
``.npy`` / ``.npz``                   wide matrices, items x trials, 0/1 (NaN = errored trial)
``.eval``                             inspect_ai eval log (needs the ``inspect`` extra)
====================================  =====================================================================

Every file says how many rows it had; invalid rows raise an error naming the
file, line or row, field and value, or with ``skip_invalid`` are skipped and
counted.  The group key ``file`` (unless the data has such a column) is the
file name, so ``by=("file",)`` compares files.

>>> import tempfile, pathlib
>>> path = pathlib.Path(tempfile.mkdtemp()) / "trials.csv"
>>> _ = path.write_text("case_id,trial,model,passed\\nq1,0,a,1\\nq1,1,a,0\\nq2,0,a,1\\nq2,1,a,\\n")
>>> counts = read_counts([path], by=["model"])
>>> [(g.label, g.n.tolist(), g.c.tolist(), g.errored.tolist()) for g in counts.groups()]
[('model=a', [2, 1], [1, 1], [0, 1])]
>>> counts.stats.rows_read, counts.stats.rows_used, counts.stats.rows_errored
(4, 3, 1)
"""

from __future__ import annotations

import csv
import dataclasses
import itertools
import json
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from trialscore.errors import EvaluationError
from trialscore.results.columns import ColumnMap
from trialscore.results.counts import ErrorPolicy, ItemCounts, ReadStats, check_error_policy
from trialscore.results.records import TrialRecord
from trialscore.results.tally import (
    COUNT_COLUMNS,
    LongTable,
    Scan,
    TallyResult,
    arrow_table,
    check_one_cluster,
    quote_literal,
    tally,
)

__all__ = ["FILE_KEY", "count_records", "read_counts"]

#: The pseudo group column holding the file name.
FILE_KEY = "file"

_RECORD_GROUPS = ("run_id", "suite", "target", "category")

_DATABASE: list[duckdb.DuckDBPyConnection] = []


def _cursor() -> duckdb.DuckDBPyConnection:
    """A fresh connection (own views and temp tables) to one in-memory database per process."""
    if not _DATABASE:
        _DATABASE.append(duckdb.connect())
    cursor = _DATABASE[0].cursor()
    cursor.execute("SET enable_progress_bar = false")
    return cursor


class _Reader:
    """Turns sources into tally tables on one DuckDB connection."""

    def __init__(self, by: Sequence[str], columns: ColumnMap, skip_invalid: bool) -> None:
        self.by = tuple(by)
        self.columns = columns
        self.skip_invalid = skip_invalid
        self.con = _cursor()
        self.views = itertools.count()
        self.parts: list[pa.Table] = []
        self.stats = ReadStats(rows_read=0)

    def _name(self, prefix: str) -> str:
        return f"{prefix}_{next(self.views)}"

    def _describe(self, relation: str) -> dict[str, str]:
        rows = self.con.execute(f"DESCRIBE SELECT * FROM {relation}").fetchall()
        return {row[0]: row[1] for row in rows}

    def add_tally(self, label: str, result: TallyResult, data_groups: Sequence[str]) -> None:
        """Bring a scan's table to the full group key (filling ``file``) and keep it."""
        table = result.table
        arrays = []
        for name in self.by:
            if name in data_groups:
                arrays.append(table.column(f"g{list(data_groups).index(name)}"))
            else:
                arrays.append(pa.array([label] * table.num_rows, pa.string()))
        counted = COUNT_COLUMNS if self.columns.cluster is None else (*COUNT_COLUMNS, "cluster")
        columns = [table.column(name) for name in counted]
        names = [f"g{index}" for index in range(len(self.by))] + list(counted)
        self.parts.append(pa.Table.from_arrays(arrays + columns, names=names))
        self.stats = self.stats + ReadStats(
            rows_read=result.rows_read,
            rows_skipped=result.rows_skipped,
            first_skipped=result.first_skipped,
            sources=(label,),
        )

    def scan(
        self, label: str, relation: str, locate: Callable[[int], str], types: dict[str, str] | None = None
    ) -> None:
        """Count a long-format relation (file scan or registered Arrow table)."""
        available = types if types is not None else self._describe(relation)
        data_by = [name for name in self.by if name != FILE_KEY or FILE_KEY in available]
        resolved = self.columns.resolve(list(available), data_by)
        used = {resolved.item, resolved.outcome_column, *resolved.groups}
        used.update(name for name in (resolved.trial, resolved.cluster) if name is not None)
        scan = Scan(label, relation, resolved, {name: available[name] for name in used}, locate)
        try:
            result = tally(self.con, scan, self.skip_invalid)
        except duckdb.Error as exc:
            raise EvaluationError(f"{label}: cannot read: {exc}") from exc
        self.add_tally(label, result, resolved.groups)

    def register(self, table: pa.Table) -> str:
        """Make an Arrow table queryable; return its view name."""
        name = self._name("arrow")
        self.con.register(name, table)
        return name

    def scan_table(self, label: str, long: LongTable) -> None:
        """Count trial rows built in Python (seed-003 results, inspect logs, records)."""
        self.scan(label, self.register(long.table), long.locate)
        if long.rows_skipped:
            self.stats = self.stats + ReadStats(
                rows_read=long.rows_skipped, rows_skipped=long.rows_skipped, first_skipped=long.first_skipped
            )

    def add_matrix(self, label: str, graded: np.ndarray, c: np.ndarray, errored: np.ndarray) -> None:
        """Add a wide matrix's per-row counts; items are the row numbers ``0..M-1``."""
        if self.columns.cluster is not None:
            raise EvaluationError(
                f"{label}: --cluster-col {self.columns.cluster!r} needs a long file with that column; "
                "a wide matrix has no cluster per item"
            )
        rows = graded + errored
        empty = pa.nulls(rows.size, pa.int64())
        table = pa.table(
            {
                "item": pa.array([str(index) for index in range(rows.size)], pa.string()),
                "rows": rows,
                "graded": graded,
                "c": c,
                "errored": errored,
                "trial_lo": empty,
                "trial_hi": empty,
                "trial_rows": pa.array(np.zeros(rows.size, dtype=np.int64)),
            }
        )
        total = int(rows.sum())
        self.add_tally(label, TallyResult(table, total, 0, None), ())

    def counts(self, errors: ErrorPolicy, allow_repeated_trials: bool) -> ItemCounts:
        """Combine every part, check trial indices, and build the :class:`ItemCounts`."""
        if not self.parts:
            raise EvaluationError("no input: give at least one file")
        table = self.parts[0] if len(self.parts) == 1 else self._combine()
        keys = [f"g{index}" for index in range(len(self.by))] + ["item"]
        table = table.sort_by([(key, "ascending") for key in keys]).combine_chunks()
        if not allow_repeated_trials:
            _check_trial_indices(table, self.by)
        errored = int(pc.sum(table["errored"]).as_py() or 0)
        stats = ReadStats(
            rows_read=self.stats.rows_read,
            rows_skipped=self.stats.rows_skipped,
            rows_errored=errored,
            errors=errors,
            first_skipped=self.stats.first_skipped,
            sources=self.stats.sources,
        )
        return ItemCounts(
            by=self.by,
            group_values=tuple(_repeated_objects(table[f"g{index}"]) for index in range(len(self.by))),
            item=_objects(table["item"]),
            graded=table["graded"].to_numpy().astype(np.int64),
            c=table["c"].to_numpy().astype(np.int64),
            errored=table["errored"].to_numpy().astype(np.int64),
            stats=stats,
            cluster=_objects(table["cluster"]) if "cluster" in table.column_names else None,
        )

    def _combine(self) -> pa.Table:
        parts = pa.concat_tables(self.parts, promote_options="permissive")
        name = self.register(parts)
        keys = ", ".join([f"g{index}" for index in range(len(self.by))] + ["item"])
        clusters = (
            "" if self.columns.cluster is None else ", min(cluster) AS cluster_lo, max(cluster) AS cluster_hi"
        )
        table = arrow_table(
            self.con,
            (
                f"SELECT {keys}, sum(rows)::BIGINT AS rows, sum(graded)::BIGINT AS graded, "
                f"coalesce(sum(c), 0)::BIGINT AS c, sum(errored)::BIGINT AS errored, "
                f"min(trial_lo) AS trial_lo, max(trial_hi) AS trial_hi, "
                f"sum(trial_rows)::BIGINT AS trial_rows{clusters} FROM {name} GROUP BY {keys}"
            ),
        )
        return check_one_cluster(table, " and ".join(self.stats.sources))


def _objects(column: pa.ChunkedArray) -> np.ndarray:
    """Strings (or None) as a NumPy object array."""
    return np.asarray(column.to_numpy(zero_copy_only=False), dtype=object)


def _repeated_objects(column: pa.ChunkedArray) -> np.ndarray:
    """Like :func:`_objects` for a column of few distinct values (a group key): one object per value."""
    encoded = column.dictionary_encode().combine_chunks()
    values = np.array([*encoded.dictionary.to_pylist(), None], dtype=object)
    return values[encoded.indices.fill_null(len(encoded.dictionary)).to_numpy()]


def _check_trial_indices(table: pa.Table, by: Sequence[str]) -> None:
    """An item with more trials than distinct possible indices has repeated (item, trial) rows."""
    trials = pc.add(table["graded"], table["errored"])
    span = pc.add(pc.subtract(table["trial_hi"], table["trial_lo"]), 1)
    indexed = pc.equal(table["trial_rows"], trials)
    repeated = pc.and_(indexed, pc.greater(trials, span))
    position = pc.index(repeated, True).as_py()
    if position < 0:
        return
    row = table.slice(position, 1).to_pylist()[0]
    group = ", ".join(f"{name}={row[f'g{index}']!r}" for index, name in enumerate(by))
    raise EvaluationError(
        f"item {row['item']!r}{f' ({group})' if group else ''} has {row['graded'] + row['errored']} trials "
        f"but its trial indices span only {row['trial_lo']}..{row['trial_hi']}, so some (item, trial) "
        "pairs repeat: group by the column that tells them apart (e.g. --by target), or pass "
        "--allow-repeated-trials to pool them"
    )


def _first_text_line(path: Path) -> str:
    with path.open("r", encoding="utf-8", errors="replace") as handle:
        for line in handle:
            if line.strip():
                return line.strip()
    raise EvaluationError(f"{path}: the file is empty")


def _nonblank_line_number(path: Path, index: int) -> int:
    """1-based line number of the ``index``-th (0-based) non-blank line."""
    with path.open("rb") as handle:
        seen = -1
        for number, line in enumerate(handle, start=1):
            if line.strip():
                seen += 1
                if seen == index:
                    return number
    return -1


#: DuckDB's default ``maximum_object_size`` for ``read_json`` (bytes): longer lines need a bigger one.
_DUCKDB_JSON_OBJECT_BYTES = 16 * 2**20
#: The longest JSON Lines line read (bytes); a longer one is named as too long.
MAX_JSON_LINE_BYTES = 2**30


def _first_bad_json_line(path: Path) -> tuple[str | None, int, int]:
    """Where and why the first line that is not a JSON object is bad (None: every line is one),
    with the length in bytes and the number of the longest line."""
    longest, longest_line = 0, 0
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if len(raw) > longest:
                longest, longest_line = len(raw), number
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
    with path.open("r", encoding="utf-8", errors="replace") as handle:
        for line in itertools.islice((line for line in handle if line.strip()), lines):
            try:
                value = json.loads(line)
            except ValueError:
                continue
            if isinstance(value, dict):
                keys.update(dict.fromkeys(value))
    return list(keys)


def _read_jsonl(reader: _Reader, path: Path) -> None:
    label = str(path)
    source = quote_literal(label)
    names = _json_keys(path)
    if not names:
        raise EvaluationError(f"{label}: no JSON object among the first 1000 non-blank lines")
    columns = "{" + ", ".join(f"{quote_literal(name)}: 'VARCHAR'" for name in names) + "}"
    types = dict.fromkeys(names, "VARCHAR")

    def locate(index: int) -> str:
        return f"line {_nonblank_line_number(path, index)}"

    try:
        reader.scan(
            label, f"read_json({source}, format='newline_delimited', columns={columns})", locate, types
        )
    except EvaluationError as exc:
        if not isinstance(exc.__cause__, duckdb.Error):
            raise
        malformed, longest, longest_line = _first_bad_json_line(path)
        if malformed is None and longest > _DUCKDB_JSON_OBJECT_BYTES:
            # Every line is a JSON object, one is longer than DuckDB reads by default: read with room for it.
            sized = f"columns={columns}, maximum_object_size={longest + 1024}"
            reader.scan(label, f"read_json({source}, format='newline_delimited', {sized})", locate, types)
            return
        if malformed is None:
            cause = str(exc.__cause__).strip().splitlines()[0]
            malformed = f"{label} (longest line {longest_line}): cannot read as JSON Lines: {cause}"
        if not reader.skip_invalid:
            raise EvaluationError(f"{malformed} (--skip-invalid skips and counts bad lines)") from exc
        relation = f"read_json({source}, format='newline_delimited', columns={columns}, ignore_errors=true)"
        earlier = reader.stats.first_skipped
        reader.scan(label, relation, locate, types)
        reader.stats = dataclasses.replace(reader.stats, first_skipped=earlier or malformed)


def _json_kind(path: Path) -> str:
    """``inspect`` (an inspect_ai log), ``cases`` (seed-003 results), ``array`` or ``lines`` of trial rows."""
    first = _first_text_line(path)
    if first.startswith("["):
        with path.open("r", encoding="utf-8", errors="replace") as handle:
            head = handle.read(65536)
        return "cases" if '"eval_id"' in head.split("}", 1)[0] else "array"
    try:
        head = json.loads(first)
    except ValueError:
        head = None
    if path.suffix.lower() == ".json" and (head is None or (isinstance(head, dict) and "eval" in head)):
        return "inspect"
    if isinstance(head, dict) and "eval_id" in head:
        return "cases"
    return "lines"


def _read_json_array(reader: _Reader, path: Path) -> None:
    relation = f"read_json({quote_literal(str(path))}, format='array')"
    try:
        names = reader._describe(relation)
    except duckdb.Error as exc:
        raise EvaluationError(f"{path}: cannot read a JSON array of trial rows: {exc}") from exc
    columns = "{" + ", ".join(f"{quote_literal(name)}: 'VARCHAR'" for name in names) + "}"
    relation = f"read_json({quote_literal(str(path))}, format='array', columns={columns})"
    reader.scan(str(path), relation, lambda index: f"element {index + 1}", dict.fromkeys(names, "VARCHAR"))


def _read_parquet(reader: _Reader, path: Path) -> None:
    relation = f"read_parquet({quote_literal(str(path))})"
    try:
        reader._describe(relation)
    except duckdb.Error as exc:
        raise EvaluationError(f"{path}: cannot read Parquet: {exc}") from exc
    reader.scan(str(path), relation, lambda index: f"row {index + 1}")


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


def _read_csv(reader: _Reader, path: Path) -> None:
    label = str(path)
    table = reader._name("rejects")
    relation = (
        f"read_csv({quote_literal(label)}, header=true, all_varchar=true, store_rejects=true, "
        f"rejects_table={quote_literal(table)}, rejects_scan={quote_literal(table + '_scan')})"
    )
    try:
        names = reader._describe(relation)
    except duckdb.Error as exc:
        raise EvaluationError(f"{label}: cannot read CSV: {exc}") from exc

    def locate(index: int) -> str:
        rejected = {line for (line,) in reader.con.execute(f"SELECT DISTINCT line FROM {table}").fetchall()}
        return f"line {_csv_line_number(path, index, rejected)}"

    reader.scan(label, relation, locate, names)
    rows = reader.con.execute(
        f"SELECT DISTINCT line, column_name, error_message FROM {table} ORDER BY line"
    ).fetchall()
    if not rows:
        return
    line, column, message = rows[0]
    where = f"{label} line {line}" + (f": field {column!r}" if column else "")
    if not reader.skip_invalid:
        raise EvaluationError(
            f"{where}: {message} ({len(rows)} bad line{'s' if len(rows) != 1 else ''} in all; "
            "--skip-invalid skips and counts them)"
        )
    stats = reader.stats
    reader.stats = dataclasses.replace(
        stats,
        rows_read=stats.rows_read + len(rows),
        rows_skipped=stats.rows_skipped + len(rows),
        first_skipped=stats.first_skipped or f"{where}: {message}",
    )


def _is_wide_csv(path: Path) -> bool:
    """A headerless table of numbers (a 0/1 matrix) rather than a long file with a header."""
    delimiter = "\t" if path.suffix.lower() == ".tsv" else ","
    with path.open("r", encoding="utf-8", errors="replace") as handle:
        for line in handle:
            text = line.strip()
            if not text or text.startswith("#"):
                continue
            try:
                [float(cell) for cell in text.split(delimiter)]
            except ValueError:
                return False
            return True
    raise EvaluationError(f"{path}: the file is empty")


def _read_file(reader: _Reader, path: Path) -> None:
    from trialscore.results import inspect_logs, seed003, wide

    if not path.is_file():
        raise EvaluationError(f"{path}: no such file")
    suffix = path.suffix.lower()
    if suffix in (".parquet", ".pq"):
        _read_parquet(reader, path)
    elif suffix in (".csv", ".tsv", ".txt") and not _is_wide_csv(path):
        _read_csv(reader, path)
    elif suffix in (".csv", ".tsv", ".txt", ".npy", ".npz"):
        for label, graded, c, errored in wide.matrix_counts(path):
            reader.add_matrix(label, graded, c, errored)
    elif suffix == ".eval":
        reader.scan_table(str(path), inspect_logs.inspect_log_table(path))
    elif suffix in (".jsonl", ".ndjson", ".json"):
        kind = _json_kind(path)
        if kind == "inspect":
            reader.scan_table(str(path), inspect_logs.inspect_log_table(path))
        elif kind == "cases":
            reader.scan_table(str(path), seed003.case_result_table(path, reader.skip_invalid))
        elif kind == "array":
            _read_json_array(reader, path)
        else:
            _read_jsonl(reader, path)
    else:
        raise EvaluationError(
            f"{path}: unknown file type {suffix!r}; expected .parquet, .csv, .tsv, .jsonl, .ndjson, .json, "
            ".npy, .npz or .eval"
        )


def read_counts(
    paths: Iterable[str | Path],
    by: Sequence[str] = (),
    columns: ColumnMap | None = None,
    skip_invalid: bool = False,
    errors: ErrorPolicy = "exclude",
    allow_repeated_trials: bool = False,
) -> ItemCounts:
    """Read trial files into per-(group, item) counts.

    Parameters
    ----------
    paths : files to read (their trials are pooled per (group, item))
    by : group columns, e.g. ``("target", "category")``; ``"file"`` groups by file
    columns : which column holds the item, trial, outcome (see :mod:`trialscore.results.columns`)
    skip_invalid : skip and count invalid rows instead of raising
    errors : ``"exclude"`` errored trials from ``n`` (default) or count them as ``"fail"``
    allow_repeated_trials : pool rows whose (item, trial) repeat instead of raising

    Returns
    -------
    ItemCounts
        Per-(group, item) counts and the :class:`~trialscore.results.counts.ReadStats`.
    """
    policy = check_error_policy(errors)
    reader = _Reader(by, columns or ColumnMap(), skip_invalid)
    try:
        for path in paths:
            _read_file(reader, Path(path))
        return reader.counts(policy, allow_repeated_trials)
    finally:
        reader.con.close()


def count_records(
    records: Iterable[TrialRecord],
    by: Sequence[str] = (),
    errors: ErrorPolicy = "exclude",
    allow_repeated_trials: bool = False,
) -> ItemCounts:
    """Per-(group, item) counts of :class:`TrialRecord` objects (group keys: record fields).

    >>> records = [TrialRecord(case_id=c, trial=t, target="m", passed=p, verdict="pass" if p else "fail")
    ...            for c, t, p in [("a", 0, True), ("a", 1, False), ("b", 0, True)]]
    >>> [(g.label, g.n.tolist(), g.c.tolist()) for g in count_records(records, by=["target"]).groups()]
    [('target=m', [2, 1], [1, 1])]
    """
    policy = check_error_policy(errors)
    unknown = [name for name in by if name not in _RECORD_GROUPS]
    if unknown:
        raise EvaluationError(
            f"by must name TrialRecord fields among {', '.join(_RECORD_GROUPS)}; got {unknown[0]!r}"
        )
    records = list(records)
    if not records:
        raise EvaluationError("records must hold at least one TrialRecord; got none")
    table = pa.table(
        {
            "case_id": pa.array([record.case_id for record in records], pa.string()),
            "trial": pa.array([record.trial for record in records], pa.int64()),
            "passed": pa.array([record.passed for record in records], pa.bool_()),
            **{name: pa.array([getattr(r, name) for r in records], pa.string()) for name in by},
        }
    )
    reader = _Reader(by, ColumnMap(), skip_invalid=False)
    try:
        reader.scan_table(
            "records", LongTable(table, tuple(f"record {index}" for index in range(len(records))))
        )
        return reader.counts(policy, allow_repeated_trials)
    finally:
        reader.con.close()
