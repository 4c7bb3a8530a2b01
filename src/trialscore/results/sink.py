"""Where every reader puts its trials: per-(group, item) counts collected on one DuckDB connection.

A :class:`TrialSink` is what a format's ``read(path, sink)`` writes to (see
:mod:`trialscore.results.formats`).  A format hands it trial rows in one of three
shapes and the sink counts them the same way:

* :meth:`TrialSink.scan`: a SQL relation DuckDB reads itself (``read_parquet(...)``,
  ``read_json(...)``), counted by one ``GROUP BY`` with no Python object per row;
* :meth:`TrialSink.scan_table`: trial rows built in Python as a
  :class:`~trialscore.results.tally.LongTable` (seed-003 cases, inspect_ai logs);
* :meth:`TrialSink.add_matrix`: per-item counts of a wide items x trials matrix.

Every shape ends in the same validation (:func:`trialscore.results.tally.tally`),
the same :class:`~trialscore.results.counts.ReadStats` bookkeeping (rows read,
skipped once each, errored) and, with :meth:`TrialSink.counts`, one
:class:`~trialscore.results.counts.ItemCounts`.  A sink asked for ``detail`` also keeps each
valid row as a trial, with the fields asked for (:mod:`trialscore.results.trials`): the
columns it needs are read once into a temporary table, then counted and read as trials with
the same roles.

>>> from trialscore.results.tally import LongTable
>>> table = {"case_id": ["a", "a", "b"], "passed": ["true", "false", "true"]}
>>> with TrialSink(by=()) as sink:
...     sink.scan_table("demo", LongTable(table, ("row 1", "row 2", "row 3")))
...     counts = sink.counts("exclude", allow_repeated_trials=False)
>>> counts.item.tolist(), counts.graded.tolist(), counts.c.tolist()
(['a', 'b'], [2, 1], [1, 1])
"""

from __future__ import annotations

import dataclasses
import itertools
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from types import TracebackType

import duckdb
import numpy as np

from trialscore.errors import EvaluationError, parameter, worded
from trialscore.results._columns import (
    Columns,
    fetch,
    floats,
    integers,
    register,
    repeated,
    row,
    strings,
    texts,
)
from trialscore.results.columns import ColumnMap, ResolvedColumns
from trialscore.results.counts import ErrorPolicy, ItemCounts, PartialRun, ReadStats
from trialscore.results.progress import Watch
from trialscore.results.tally import (
    RECORD_FIELDS,
    SCORE_UNIT,
    LongTable,
    Scan,
    TallyResult,
    check_one_cluster,
    quote_identifier,
    scan_roles,
    tally,
)
from trialscore.results.trials import TRIAL_FIELDS, TrialParts, counted_rows, field_columns, read_trial_rows

__all__ = ["FILE_KEY", "EngineError", "TrialSink", "cursor", "engine_reason"]

#: The pseudo group column holding the file name.
FILE_KEY = "file"

#: UTF-8 byte order mark, which DuckDB's JSON reader refuses.
UTF8_BOM = b"\xef\xbb\xbf"

_DATABASE: list[duckdb.DuckDBPyConnection] = []


def cursor() -> duckdb.DuckDBPyConnection:
    """A fresh connection (own views and temp tables) to one in-memory database per process.

    Much cheaper than :func:`duckdb.connect`, which starts a database each time.
    """
    if not _DATABASE:
        _DATABASE.append(duckdb.connect())
    cursor = _DATABASE[0].cursor()
    cursor.execute("SET enable_progress_bar = true")  # its progress is polled (results.progress), not printed
    cursor.execute("SET enable_progress_bar_print = false")
    return cursor


#: The ``errno`` of an operating-system error in DuckDB's JSON error detail.
_ERRNO = re.compile(r'"errno":\s*"?(\d+)')


def engine_reason(exc: BaseException) -> str:
    """The first line of a DuckDB error, without its class prefix: never the SQL or the sniffer dump;
    an I/O error of the operating system (DuckDB's JSON detail with an ``errno``) in the system's words.

    >>> engine_reason(duckdb.InvalidInputException("Invalid Input Error: bad byte\\n\\nLINE 1: SELECT ..."))
    'bad byte'
    >>> engine_reason(duckdb.IOException('IO Error: write failed: {"exception_type":"IO","errno":"28"}'))
    'No space left on device'
    >>> engine_reason(duckdb.InvalidInputException('Invalid Input Error: bad line {"errno":"28"}'))
    'bad line {"errno":"28"}'
    """
    system = _ERRNO.search(str(exc)) if isinstance(exc, duckdb.IOException) else None
    if system is not None and int(system[1]) > 0:  # only an I/O error: others may quote a file's text
        return os.strerror(int(system[1]))
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    first = lines[0] if lines else type(exc).__name__
    head, separator, rest = first.partition(" Error: ")
    if separator and head.replace(" ", "").isalpha():
        first = rest
    return first if len(first) <= 240 else first[:237] + "..."


class EngineError(EvaluationError):
    """DuckDB could not read ``label``; ``reason`` is one line (see :func:`engine_reason`).

    A format that has a slower, more exact reading (CSV, JSON Lines) catches it and uses that.
    """

    def __init__(self, label: str, reason: str) -> None:
        super().__init__(f"{label}: cannot read: {reason}")
        self.label = label
        self.reason = reason


@dataclasses.dataclass(frozen=True)
class Counted:
    """One counted relation, not yet kept: its tally and which of the group keys it held as data;
    with detail, its valid trial rows and how to name one (``locate``)."""

    result: TallyResult
    data_groups: tuple[str, ...]
    trials: Columns | None = None
    locate: Callable[[int], str] | None = None


class TrialSink:
    """Collects trials from any number of inputs into per-(group, item) counts.

    ``by`` are the group columns (``"file"`` is the input's label unless the data
    has such a column), ``columns`` says which column holds what, and with
    ``skip_invalid`` bad rows are skipped and counted instead of raising.  Use it
    as a context manager (or call :meth:`close`): it owns a DuckDB connection and
    any temporary copies of inputs.  With ``detail`` (fields of
    :data:`~trialscore.results.trials.TRIAL_FIELDS`, perhaps none), it keeps every trial too.
    """

    def __init__(
        self,
        by: Sequence[str] = (),
        columns: ColumnMap | None = None,
        skip_invalid: bool = False,
        optional_groups: Sequence[str] = (),
        detail: Collection[str] | None = None,
    ) -> None:
        self.by = tuple(by)
        self.optional_groups = frozenset(optional_groups)
        self.columns = columns or ColumnMap()
        self.skip_invalid = skip_invalid
        self.con = cursor()
        self.stats = ReadStats(rows_read=0)
        self._views = itertools.count()
        self._parts: list[Columns] = []
        self._ordered = True  # every part's rows are sorted and unique per (group, item)
        self._scratch: Path | None = None
        self._trials = None if detail is None else TrialParts(detail)
        #: Bytes of input read (files, or the column chunks of Parquet files a scan needed).
        self.bytes_read = 0
        #: The combined counts of the last :meth:`counts` (with each row's trial index range).
        self.combined: Columns | None = None
        #: The progress of the input being read (a reader in Python updates it).
        self.watch = Watch(None, "")

    @property
    def detail(self) -> bool:
        """Whether the sink keeps every trial (see :mod:`trialscore.results.trials`)."""
        return self._trials is not None

    def __enter__(self) -> TrialSink:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection and remove temporary copies."""
        self.con.close()
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None

    # ----------------------------------------------------------------------------------------- helpers

    def new_name(self, prefix: str) -> str:
        """A view or table name not used before on this sink."""
        return f"{prefix}_{next(self._views)}"

    def describe(self, relation: str) -> dict[str, str]:
        """Column name -> DuckDB type of a relation (DuckDB errors pass through)."""
        rows = self.con.execute(f"DESCRIBE SELECT * FROM {relation}").fetchall()
        return {row[0]: row[1] for row in rows}

    def used_columns(self, available: Sequence[str]) -> list[str]:
        """The columns among ``available`` the column map and the group keys use, in file order."""
        used = _used(self.columns.resolve(list(available), self.data_by(available)))
        if self._trials is not None:  # and the columns the trials' fields come from
            used |= {column for name in self._trials.fields for column in TRIAL_FIELDS[name]}
            used |= {self.columns.verdict or "verdict", self.columns.score or "score"}
        return [name for name in available if name in used]

    def scratch(self) -> Path:
        """A temporary folder the sink removes when it closes."""
        if self._scratch is None:
            self._scratch = Path(tempfile.mkdtemp(prefix="trialscore-"))
        return self._scratch

    def without_bom(self, path: Path) -> Path:
        """``path``, or a temporary copy without its UTF-8 byte order mark (same lines, same numbers)."""
        with path.open("rb") as handle:
            if handle.read(len(UTF8_BOM)) != UTF8_BOM:
                return path
            copy = self.scratch() / f"{self.new_name('nobom')}{path.suffix}"
            with copy.open("wb") as out:
                shutil.copyfileobj(handle, out, 2**20)
        return copy

    def skipped(self, rows: int, first: str | None) -> None:
        """Count ``rows`` input rows that never became trial rows (read and skipped, once each)."""
        if rows:
            self.stats = self.stats + ReadStats(rows_read=rows, rows_skipped=rows, first_skipped=first)

    def note(self, message: str) -> None:
        """Say something about input that is not a trial by its tool's rules (kept in ``stats.notes``)."""
        self.stats = dataclasses.replace(self.stats, notes=(*self.stats.notes, worded(message)))

    def partial(self, run: PartialRun) -> None:
        """Record an input whose run did not finish (kept in ``stats.partial``)."""
        self.stats = dataclasses.replace(self.stats, partial=(*self.stats.partial, run))

    def name_first_skipped(self, earlier: str | None, message: str) -> None:
        """Make ``message`` the first skipped row, unless ``earlier`` (one before this input) is."""
        self.stats = dataclasses.replace(self.stats, first_skipped=earlier or message)

    def data_by(self, available: Sequence[str]) -> list[str]:
        """The group keys read from the data: all but ``file`` and the optional ones it lacks."""
        return [
            name
            for name in self.by
            if name in available or (name != FILE_KEY and name not in self.optional_groups)
        ]

    # ----------------------------------------------------------------------------------------- counting

    def count(
        self,
        label: str,
        relation: str,
        locate: Callable[[int], str],
        types: dict[str, str] | None = None,
        records: bool = False,
        never_null: frozenset[str] = frozenset(),
    ) -> Counted:
        """Count a long-format relation without keeping it (see :meth:`keep`); ``records``: its rows
        are the runner's trial records, held to their rules; ``never_null``: columns the source
        proves hold no null (see :class:`~trialscore.results.tally.Scan`).

        Raises :class:`EngineError` when DuckDB cannot read the relation, and
        :class:`~trialscore.errors.EvaluationError` for a bad row (unless ``skip_invalid``).
        """
        try:
            available = types if types is not None else self.describe(relation)
        except duckdb.Error as exc:
            raise EngineError(label, engine_reason(exc)) from exc
        resolved = self.columns.resolve(list(available), self.data_by(list(available)))
        used = _used(resolved) | (set(RECORD_FIELDS.values()) & set(available) if records else set())
        types_used = {name: available[name] for name in used}
        scan = Scan(label, relation, resolved, types_used, locate, records, never_null)
        try:
            if self._trials is None:
                return Counted(tally(self.con, scan, self.skip_invalid), resolved.groups)
            found = field_columns(scan, available, self._trials.fields, self.columns.verdict)
            needed = used | {column for column, _ in found.values()}
            held = self._held(scan, [name for name in available if name in needed])
            try:
                result = tally(self.con, held, self.skip_invalid)
                rows = read_trial_rows(self.con, held, scan_roles(held), found, self.skip_invalid)
            finally:
                self.con.execute(f"DROP TABLE IF EXISTS {held.relation}")
        except duckdb.Error as exc:
            raise EngineError(label, engine_reason(exc)) from exc
        return Counted(result, resolved.groups, rows, locate)

    def _held(self, scan: Scan, columns: Sequence[str]) -> Scan:
        """``scan`` over a temporary table of the columns it needs, read from its relation once: the
        counts and the trial rows are then two queries of memory, not two reads of the input (whose
        parse, JSON above all, is the cost).  The table keeps the input's row order, so a row's
        place (``locate``) is the same."""
        table = self.new_name("held")
        selected = ", ".join(quote_identifier(name) for name in columns)
        self.con.execute(f"CREATE TEMP TABLE {table} AS SELECT {selected} FROM {scan.relation}")
        return dataclasses.replace(scan, relation=table)

    def keep(self, label: str, counted: Counted) -> None:
        """Bring a count to the full group key (filling ``file`` with ``label``) and keep it."""
        data_groups = list(counted.data_groups)
        self._parts.append(self._full_groups(label, counted.result.table, data_groups))
        self._ordered = self._ordered and counted.result.ordered
        if self._trials is not None and counted.trials is not None and counted.locate is not None:
            self._trials.add(label, self._full_groups(label, counted.trials, data_groups), counted.locate)
        result = counted.result
        self.stats = self.stats + ReadStats(
            rows_read=result.rows_read,
            rows_skipped=result.rows_skipped,
            first_skipped=result.first_skipped,
            sources=(label,),
        )

    def _full_groups(self, label: str, table: Columns, data_groups: list[str]) -> Columns:
        """``table`` with its group columns brought to the full group key: the data's groups, the
        input's label for ``file``, null for an optional key the input lacks."""
        rows = len(table["item"])
        part: Columns = {}
        for index, name in enumerate(self.by):
            if name in data_groups:
                part[f"g{index}"] = table[f"g{data_groups.index(name)}"]
            else:
                part[f"g{index}"] = np.full(rows, label if name == FILE_KEY else None, dtype=object)
        data = {f"g{index}" for index in range(len(data_groups))}
        part.update((name, column) for name, column in table.items() if name not in data)
        return part

    def scan(
        self,
        label: str,
        relation: str,
        locate: Callable[[int], str],
        types: dict[str, str] | None = None,
        never_null: frozenset[str] = frozenset(),
    ) -> None:
        """Count a long-format relation (a file DuckDB reads, or registered columns) and keep it;
        ``never_null``: columns the source proves hold no null."""
        self.keep(label, self.count(label, relation, locate, types, never_null=never_null))

    def scan_table(self, label: str, long: LongTable) -> None:
        """Count trial rows built in Python, plus the input it skipped before they became rows."""
        self.scan(label, long.register(self.con), long.locate)
        self.skipped(long.rows_skipped, long.first_skipped)

    def add_matrix(self, label: str, graded: np.ndarray, c: np.ndarray, errored: np.ndarray) -> None:
        """Add a wide matrix's per-row counts; items are the row numbers ``0..M-1``."""
        if self.columns.cluster is not None:
            raise EvaluationError(
                f"{label}: {parameter('columns.cluster')} {self.columns.cluster!r} needs a long file with "
                "that column; a wide matrix has no cluster per item"
            )
        rows = graded + errored
        empty = np.full(rows.size, np.nan)
        items = strings([str(index) for index in range(rows.size)])
        table: Columns = {
            "item": items,
            "rows": rows.astype(np.int64),
            "graded": graded.astype(np.int64),
            "c": c.astype(np.int64),
            "errored": errored.astype(np.int64),
            "trial_lo": empty,
            "trial_hi": empty,
            "trial_rows": np.zeros(rows.size, dtype=np.int64),
            "score_sum": c.astype(np.int64) * SCORE_UNIT,
            "score_sumsq": c.astype(np.int64) * SCORE_UNIT,
        }
        trials = None
        if self._trials is not None:  # a matrix's trials in the order of its columns are not kept
            passed = c.astype(np.int64)
            trials = counted_rows(items, passed, graded.astype(np.int64) - passed, errored.astype(np.int64))
        result = TallyResult(table, int(rows.sum()), 0, None)
        self.keep(label, Counted(result, (), trials, lambda index: f"row {index + 1}"))

    def counts(self, errors: ErrorPolicy, allow_repeated_trials: bool) -> ItemCounts:
        """Combine every part, check trial indices, and build the :class:`ItemCounts`."""
        if not self._parts:
            raise EvaluationError("no input: give at least one file")
        table = self.combined = self._combine()
        trials = None
        if self._trials is not None:  # before the check below: a repeated trial is named where it is
            trials = self._trials.columns(table, self.by, check=not allow_repeated_trials)
        if not allow_repeated_trials:
            _check_trial_indices(table, self.by, " and ".join(self.stats.sources), self.optional_groups)
        errored = int(integers(table["errored"]).sum())
        stats = dataclasses.replace(self.stats, rows_errored=errored, errors=errors)
        return ItemCounts(
            by=self.by,
            group_values=tuple(repeated(table[f"g{index}"]) for index in range(len(self.by))),
            item=texts(table["item"]),
            graded=integers(table["graded"]),
            c=integers(table["c"]),
            errored=integers(table["errored"]),
            stats=stats,
            cluster=texts(table["cluster"]) if "cluster" in table else None,
            trials=trials,
            score_sum=integers(table["score_sum"]),
            score_sumsq=integers(table["score_sumsq"]),
        )

    def _combine(self) -> Columns:
        """Every part summed per (group, item), sorted by group and item (nulls last): one part that
        is so already (a tally's, whose group columns keep their order) is that part."""
        if len(self._parts) == 1 and self._ordered:
            return self._parts[0]
        parts = {name: np.concatenate([part[name] for part in self._parts]) for name in self._parts[0]}
        text = [name for name, column in parts.items() if column.dtype == object]
        name = register(self.con, parts, text)
        keys = ", ".join([f"g{index}" for index in range(len(self.by))] + ["item"])
        clusters = (
            "" if self.columns.cluster is None else ", min(cluster) AS cluster_lo, max(cluster) AS cluster_hi"
        )
        table = fetch(
            self.con,
            (
                f"SELECT {keys}, sum(rows)::BIGINT AS rows, sum(graded)::BIGINT AS graded, "
                f"coalesce(sum(c), 0)::BIGINT AS c, sum(errored)::BIGINT AS errored, "
                f"min(trial_lo) AS trial_lo, max(trial_hi) AS trial_hi, "
                f"sum(trial_rows)::BIGINT AS trial_rows, sum(score_sum)::BIGINT AS score_sum, "
                f"sum(score_sumsq)::BIGINT AS score_sumsq{clusters} FROM {name} GROUP BY {keys} "
                f"ORDER BY {keys} NULLS LAST"
            ),
        )
        return check_one_cluster(table, " and ".join(self.stats.sources))


def _used(resolved: ResolvedColumns) -> set[str]:
    """Every column a resolved column map reads."""
    used = {resolved.item, resolved.outcome_column, *resolved.groups}
    used.update(name for name in (resolved.trial, resolved.cluster) if name is not None)
    return used


def _check_trial_indices(
    table: Columns, by: Sequence[str], sources: str, optional: frozenset[str] = frozenset()
) -> None:
    """An item with more trials than distinct possible indices has repeated (item, trial) rows.

    The message names the item's group, leaving out the optional keys the input does not have.
    """
    trials = floats(table["graded"]) + floats(table["errored"])
    span_lo, span_hi = floats(table["trial_lo"]), floats(table["trial_hi"])
    span = span_hi - span_lo + 1  # NaN without a trial column
    repeated_rows = np.flatnonzero((floats(table["trial_rows"]) == trials) & (trials > span))
    if not repeated_rows.size:
        return
    position = int(repeated_rows[0])
    first = row(table, position)
    group = ", ".join(
        f"{name} not set" if first[f"g{index}"] is None else f"{name}={first[f'g{index}']!r}"
        for index, name in enumerate(by)
        if not (name in optional and first[f"g{index}"] is None)
    )
    raise EvaluationError(
        f"{sources}: item {first['item']!r}{f' ({group})' if group else ''} has "
        f"{int(trials[position])} trials "
        f"but its trial indices span only {int(span_lo[position])}..{int(span_hi[position])}, "
        "so some (item, trial) pairs repeat: group by the column that tells them apart "
        f"(e.g. {parameter('by')} target), or pass {parameter('allow_repeated_trials')} to pool them"
    )
