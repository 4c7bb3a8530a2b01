"""Reduce trials of any size to a counts table (:mod:`trialscore.results.counts_table`).

:func:`reduce_trials` reads every input the way the readers do (the same formats, column roles,
validation, rows skipped and notes) and writes one row per (group, case): the group keys are
``target``, ``suite``, ``category`` and ``scorer`` where the trials have them, then ``by``.  Counts
merge: the inputs may be counts tables themselves (shards reduced apart), and their reduction
is the table of all their trials.

Two engines give the same table to the last digit:

* ``"duckdb"`` (default): one DuckDB scan per input on this machine, only the needed columns read;
* ``"ray"``: Parquet inputs read by Ray Data (a local Ray, or the cluster at ``address``), each
  block counted by the same DuckDB rules on a Ray worker, the blocks' counts merged here.  A bad
  row stops the reduction naming its field, value and rule (``skip_invalid`` is the DuckDB
  engine's).

>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> _ = (folder / "t.csv").write_text("case_id,trial,target,passed\\nq1,0,a,1\\nq1,1,a,0\\nq2,0,a,\\n")
>>> done = reduce_trials([folder / "t.csv"], folder / "counts.parquet")
>>> done.rows_read, done.rows_written, done.group_columns
(3, 2, ('target',))
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np

from trialscore._record import Record
from trialscore.errors import EvaluationError
from trialscore.results._columns import nulls
from trialscore.results.columns import ColumnMap
from trialscore.results.counts import ItemCounts
from trialscore.results.counts_table import write_counts
from trialscore.results.formats import read_input
from trialscore.results.sink import TrialSink
from trialscore.results.sources import is_url

__all__ = ["AUTO_GROUPS", "Engine", "Reduced", "reduce_trials"]

#: The group keys a reduction keeps wherever the trials have them, before ``by``.
AUTO_GROUPS = ("target", "suite", "category", "scorer")

Engine = Literal["duckdb", "ray"]


@dataclass(frozen=True)
class Reduced(Record):
    """What a reduction read and wrote: rows read (skipped, errored), bytes read, the table's rows
    (one per group and case), its groups and group columns."""

    out: str
    engine: str
    rows_read: int
    rows_skipped: int
    rows_errored: int
    bytes_read: int
    rows_written: int
    groups: int
    group_columns: tuple[str, ...]
    notes: tuple[str, ...] = ()
    partial: tuple[str, ...] = ()


def reduce_trials(
    paths: Iterable[str | Path],
    out: str | Path,
    by: Sequence[str] = (),
    columns: ColumnMap | None = None,
    skip_invalid: bool = False,
    allow_repeated_trials: bool = False,
    input_format: str | None = None,
    engine: Engine = "duckdb",
    address: str | None = None,
) -> Reduced:
    """Read trial files, folders, globs, URLs or counts tables and write their counts table to ``out``.

    Parameters
    ----------
    paths : the inputs (their trials are pooled per group and case, as the readers pool them)
    out : the counts table to write (Parquet; written all or nothing)
    by : group columns kept after the automatic ones (``target``, ``suite``, ``category``, ``scorer``)
    columns, skip_invalid, allow_repeated_trials, input_format : as for
        :func:`~trialscore.results.readers.read_counts`
    engine : ``"duckdb"`` or ``"ray"`` (Parquet inputs only)
    address : the Ray cluster to join (default: a local Ray)

    Raises
    ------
    EvaluationError
        For bad input, as the readers raise it; :class:`~trialscore.errors.OutputError` when ``out``
        cannot be written.
    """
    paths = list(paths)
    if not paths:
        raise EvaluationError("paths must name at least one input; got none")
    if engine not in ("duckdb", "ray"):
        raise EvaluationError(f"engine must be 'duckdb' or 'ray'; got {engine!r}")
    if engine != "ray" and address is not None:
        raise EvaluationError("address names a Ray cluster; it needs engine='ray'")
    lead = tuple(name for name in AUTO_GROUPS if name not in by)
    out = Path(out)
    with TrialSink((*lead, *by), columns, skip_invalid, optional_groups=lead) as sink:
        if engine == "ray":
            from trialscore.results.ray_reduce import ray_count

            ray_count(paths, sink, input_format, address)
        else:
            for path in paths:
                read_input(path if is_url(path) else Path(path), sink, input_format)
        counts = sink.counts("exclude", allow_repeated_trials)
        assert sink.combined is not None
        written = write_counts(counts, out, sink.combined, drop_empty=lead)
        bytes_read = sink.bytes_read
    kept = tuple(
        name
        for name, values in zip(counts.by, counts.group_values, strict=True)
        if name not in lead or not bool(nulls(values).all())
    )
    return Reduced(
        str(out),
        engine,
        counts.stats.rows_read,
        counts.stats.rows_skipped,
        counts.stats.rows_errored,
        bytes_read,
        written,
        _groups(counts, kept),
        kept,
        counts.stats.notes,
        tuple(run.message for run in counts.stats.partial),
    )


def _groups(counts: ItemCounts, kept: Sequence[str]) -> int:
    """Distinct group keys among the kept group columns (the counts are sorted by group)."""
    index = [counts.by.index(name) for name in kept]
    if not index:
        return int(counts.item.size > 0)
    if counts.item.size == 0:
        return 0
    changes = np.zeros(counts.item.size - 1, dtype=bool)
    for i in index:
        values = counts.group_values[i]
        changes |= np.not_equal(values[1:], values[:-1])
    return 1 + int(changes.sum())
