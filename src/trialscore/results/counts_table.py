r"""The counts table: per-(group, case) trial counts in one Parquet file, the unit of exchange.

Every estimator trialscore computes needs only each item's counts, so a log of any size
reduces to one small table (``trialscore reduce``, :func:`trialscore.results.reduce.reduce_trials`).
Every reading command takes that table as it takes trial files (the ``counts`` format, found by
its ``counts_version`` column), with the same numbers to the last digit; tables merge (reading
several, or reducing them again, adds their counts), so shards reduced apart give the table of the
whole.

Schema, version 1 (:data:`COUNTS_VERSION`), one row per (group, case):

================  =========  ==================================================================
column            type       meaning
================  =========  ==================================================================
counts_version    INTEGER    1: the schema's version (every row)
*group columns*   VARCHAR    ``target``, ``suite``, ``category``, ``scorer`` (those the trials
                             have), then the reduction's ``by`` columns; null = not set
case_id           VARCHAR    the case (item)
trials            BIGINT     trial rows of the case (graded and errored)
passed            BIGINT     graded trials that passed
errored           BIGINT     errored trials (no outcome; never failures)
score_sum         BIGINT     sum of the graded trials' scores, in units of 1e-9 (exact integers:
                             ``floor(score * 1e9 + 0.5)`` per trial; a 0/1 outcome is its score)
score_sumsq       BIGINT     sum of ``floor(score * score * 1e9 + 0.5)`` over the graded trials
trial_min         BIGINT     smallest trial index (null when the trials carry none)
trial_max         BIGINT     largest trial index
trial_rows        BIGINT     trials that carried an index (with the range: repeated trials show)
cluster           VARCHAR    the case's cluster (only when reduced with a cluster column)
================  =========  ==================================================================

The file's Parquet key-value metadata ``trialscore.counts`` (JSON, optional) keeps what is not a
count: rows skipped as invalid and the first of them, the readers' notes, the runs that did not
finish, the sources.  A table without it (one written by Spark, docs/scale.md) reads the same.

What a counts table serves (:func:`check_served`): every metric of :mod:`trialscore.core.metrics`
computed from counts (``needs="counts"``: avg, pass@k, pass^k, G-Pass@k_tau, mG-Pass@k, maj@k,
Bayes@N, and any registered metric of counts), their intervals and comparisons, and the means of
graded scores with their spread (:func:`graded_means`, from the sums and sums of squares).  A
metric that needs a value of every trial (``needs="trial values"``: costs, latencies) is not held
by a counts table: score the trial files for it.

>>> sorted(set(COLUMNS) - {"cluster"})[:4]
['case_id', 'counts_version', 'errored', 'passed']
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import numpy as np

from trialscore._files import write_with
from trialscore._record import Record
from trialscore.core.metrics import Metric, MetricLike, resolve_metric
from trialscore.errors import EvaluationError, OutputError, template
from trialscore.results._columns import Columns, floats, integers, nulls, register, strings
from trialscore.results.counts import ItemCounts, PartialRun, ReadStats
from trialscore.results.tally import SCORE_UNIT, quote_identifier, quote_literal

__all__ = [
    "COLUMNS",
    "COUNTS_VERSION",
    "METADATA_KEY",
    "GradedMeans",
    "check_served",
    "graded_means",
    "is_counts_table",
    "stats_of",
    "table_of",
    "write_counts",
]

#: The version of the counts schema this trialscore writes and reads.
COUNTS_VERSION = 1
#: The Parquet key-value metadata key of the table's provenance (JSON).
METADATA_KEY = "trialscore.counts"
#: Every column after the group columns, in order (``cluster`` only when clusters were read).
COLUMNS = (
    "counts_version", "case_id", "trials", "passed", "errored", "score_sum", "score_sumsq",
    "trial_min", "trial_max", "trial_rows", "cluster",
)  # fmt: skip
#: The count columns (BIGINT).
COUNT_NAMES = (
    "trials",
    "passed",
    "errored",
    "score_sum",
    "score_sumsq",
    "trial_min",
    "trial_max",
    "trial_rows",
)


def is_counts_table(columns: Sequence[str]) -> bool:
    """Whether a table with these columns is a counts table (it has ``counts_version``)."""
    return "counts_version" in columns


def check_served(metric: MetricLike) -> Metric:
    """The metric, when a counts table holds what it needs; an error saying why not otherwise.

    >>> check_served("pass^k").name
    'pass^k'
    """
    found = metric if isinstance(metric, Metric) else resolve_metric(metric)
    if found.needs != "counts":
        raise EvaluationError(
            f"metric {found.name} needs a value of every trial ({found.summary}); a counts table holds "
            "per-case counts and sums of graded scores, not each trial: score the trial files for it"
        )
    return found


def table_of(counts: ItemCounts, span: Columns | None = None, drop_empty: Sequence[str] = ()) -> Columns:
    """``counts`` as counts-table columns (group columns first; ``drop_empty`` group columns that are
    null throughout are left out); ``span`` holds each row's ``trial_lo``, ``trial_hi`` and
    ``trial_rows`` (:attr:`trialscore.results.sink.TrialSink.combined`; None: the trials carry no index)."""
    if counts.score_sum is None or counts.score_sumsq is None:
        raise EvaluationError("counts must carry the sums of graded scores to be written as a counts table")
    rows = counts.item.size
    table: Columns = {"counts_version": np.full(rows, COUNTS_VERSION, dtype=np.int32)}
    for name, values in zip(counts.by, counts.group_values, strict=True):
        if name in drop_empty and bool(nulls(values).all()):
            continue
        if name in COLUMNS:
            raise EvaluationError(
                f"group column {name!r} is a column of the counts table; rename it to group by it"
            )
        table[name] = (
            values if _texts(values) else strings([None if v is None else str(v) for v in values.tolist()])
        )
    table["case_id"] = counts.item if _texts(counts.item) else strings([str(v) for v in counts.item.tolist()])
    table["trials"] = (counts.graded + counts.errored).astype(np.int64)
    table["passed"] = counts.c.astype(np.int64)
    table["errored"] = counts.errored.astype(np.int64)
    table["score_sum"] = counts.score_sum.astype(np.int64)
    table["score_sumsq"] = counts.score_sumsq.astype(np.int64)
    if span is None:
        span = {"trial_lo": np.full(rows, np.nan), "trial_hi": np.full(rows, np.nan)}
        span["trial_rows"] = np.zeros(rows, dtype=np.int64)
    table["trial_min"], table["trial_max"] = floats(span["trial_lo"]), floats(span["trial_hi"])
    table["trial_rows"] = integers(span["trial_rows"])
    if counts.cluster is not None:
        table["cluster"] = strings(counts.cluster.tolist())
    return table


def _texts(values: np.ndarray) -> bool:
    """Whether a column holds only text and nulls (as group columns read by DuckDB do)."""
    if values.dtype != object:
        return False
    try:  # one pass in C: joining fails on anything but text
        "".join(values[~nulls(values)].tolist())
    except TypeError:
        return False
    return True


def _metadata(stats: ReadStats) -> str:
    """The provenance kept beside the counts (what is not a count), as JSON."""
    return json.dumps(
        {
            "counts_version": COUNTS_VERSION,
            "rows_skipped": stats.rows_skipped,
            "first_skipped": None if stats.first_skipped is None else template(stats.first_skipped),
            "notes": [template(note) for note in stats.notes],
            "partial": [run.to_dict() for run in stats.partial],
            "sources": list(stats.sources),
        }
    )


def stats_of(values: Sequence[bytes], label: str) -> tuple[int, str | None, list[str], list[PartialRun]]:
    """Rows skipped, the first skipped, notes and partial runs kept in counts tables' metadata."""
    skipped, first, notes, partial = 0, None, [], []
    for value in values:
        try:
            meta = json.loads(value)
            skipped += int(meta.get("rows_skipped", 0))
            first = first or meta.get("first_skipped")
            notes += [str(note) for note in meta.get("notes", [])]
            for run in meta.get("partial", []):
                partial.append(
                    PartialRun(run["source"], run["status"], int(run["planned"]), int(run["logged"]))
                )
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise EvaluationError(
                f"{label}: the {METADATA_KEY} metadata of the counts table is not what trialscore "
                f"writes: {exc}"
            ) from exc
    return skipped, first, notes, partial


def write_counts(
    counts: ItemCounts, path: Path, span: Columns | None = None, drop_empty: Sequence[str] = ()
) -> int:
    """Write ``counts`` as a counts table (Parquet, zstd) to ``path`` all or nothing; return its rows.

    Raises
    ------
    OutputError
        When the file cannot be written (the previous file, if any, is left as it was).
    """
    from trialscore.results.sink import cursor, engine_reason

    table = table_of(counts, span, drop_empty)
    casts = [
        f"CAST({quote_identifier(name)} AS {'INTEGER' if name == 'counts_version' else 'BIGINT'}) "
        f"AS {quote_identifier(name)}"
        if name in COUNT_NAMES or name == "counts_version"
        else quote_identifier(name)
        for name in table
    ]
    meta = quote_literal(_metadata(counts.stats))

    def write(temporary: str) -> None:
        # DuckDB writes from the NumPy columns: PyArrow's conversion would import pandas where it is
        # installed (0.2 s, more than the write), to test whether each column is a pandas object
        con = cursor()
        try:
            view = register(con, table, [name for name, column in table.items() if column.dtype == object])
            con.execute(
                f"COPY (SELECT {', '.join(casts)} FROM {view}) TO {quote_literal(temporary)} "
                f"(FORMAT parquet, COMPRESSION zstd, KV_METADATA {{{quote_literal(METADATA_KEY)}: {meta}}})"
            )
        except duckdb.Error as exc:
            reason = engine_reason(exc)
            raise OutputError(f"{str(path)!r}: cannot write the counts table: {reason}") from exc
        finally:
            con.close()

    write_with(path, write, "the counts table")
    return int(counts.item.size)


@dataclass(frozen=True)
class GradedMeans(Record):
    """The mean graded score of one group: over its items (each item's mean over its graded trials),
    the standard error over items, and the mean unbiased within-item variance of one trial."""

    key: tuple[tuple[str, Any], ...]
    items: int
    trials: int
    mean: float
    se: float
    within: float


def graded_means(counts: ItemCounts) -> list[GradedMeans]:
    r"""Per group, the mean graded score over items, from the counts' sums (no trial is needed).

    Item :math:`i` with :math:`n_i` graded trials, score sum :math:`S_i` and sum of squares
    :math:`Q_i` (in units of :math:`10^{-9}`) has mean :math:`\bar s_i = S_i / n_i` and within-item
    variance :math:`(Q_i - S_i^2 / n_i) / (n_i - 1)`; the group's mean is
    :math:`\frac1M \sum_i \bar s_i` with standard error :math:`\mathrm{sd}(\bar s_i)/\sqrt M`
    (NaN for one item), its ``within`` the mean of the items' within-item variances (items with at
    least 2 graded trials; NaN when none has).  Items with no graded trial are left out.

    >>> counts = ItemCounts((), (), np.array(["a", "b"], dtype=object), graded=np.array([2, 2]),
    ...                     c=np.array([1, 0]), errored=np.array([0, 1]),
    ...                     score_sum=np.array([1_500_000_000, 500_000_000]),
    ...                     score_sumsq=np.array([1_250_000_000, 250_000_000]))
    >>> [(g.mean, round(g.se, 6), g.within) for g in graded_means(counts)]
    [(0.5, 0.25, 0.125)]
    """
    if counts.score_sum is None or counts.score_sumsq is None:
        raise EvaluationError(
            "counts hold no sums of graded scores (read them with the readers of trialscore)"
        )
    out = []
    rows = np.arange(counts.item.size)
    for group, part in _group_rows(counts, rows):
        n = counts.graded[part].astype(np.float64)
        keep = n > 0
        if not keep.any():
            continue
        n = n[keep]
        total = floats(counts.score_sum[part][keep]) / SCORE_UNIT
        squares = floats(counts.score_sumsq[part][keep]) / SCORE_UNIT
        means = total / n
        many = n > 1
        within = (squares[many] - total[many] ** 2 / n[many]) / (n[many] - 1)
        items = int(means.size)
        se = float(np.std(means, ddof=1) / math.sqrt(items)) if items > 1 else math.nan
        out.append(
            GradedMeans(
                group,
                items,
                int(integers(counts.graded[part][keep]).sum()),
                float(means.mean()),
                se,
                float(within.mean()) if within.size else math.nan,
            )
        )
    return out


def _group_rows(counts: ItemCounts, rows: np.ndarray) -> list[tuple[tuple[tuple[str, Any], ...], np.ndarray]]:
    """Each group's key and its rows (the counts are sorted by group)."""
    groups = []
    start = 0
    for group in counts.groups():
        size = group.item.size
        groups.append((group.key, rows[start : start + size]))
        start += size
    return groups
