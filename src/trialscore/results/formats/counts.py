"""A counts table (``trialscore reduce``): per-(group, case) counts, read as the trials they count.

Found by its ``counts_version`` column (a Parquet file, or a folder or glob of them, local or
remote); see :mod:`trialscore.results.counts_table` for the schema.  Several tables (shards) add
up per (group, case), so their reading equals the reading of the trials they were reduced from:
the same items, counts, errored trials, rows read and skipped, notes and partial runs.  Group keys
the table holds are read as they are; a group key it lacks is an error (``target``, ``suite``,
``scorer``: missing means not set, as for trial files).  The column options (item, trial,
outcome, threshold) applied when the trials were reduced; reading a counts table refuses them.
With trial detail, each case's trials are its verdicts in no known order (passes, failures,
errors): a counts table holds no trial's output, cost or time.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import duckdb
import numpy as np

from trialscore.errors import EvaluationError, MissingColumnError, parameter, worded
from trialscore.results._columns import Columns, fetch, integers, strings, texts
from trialscore.results.counts_table import COUNTS_VERSION, METADATA_KEY, is_counts_table, stats_of
from trialscore.results.formats.parquet import parquet_files
from trialscore.results.sink import cursor
from trialscore.results.sources import ParquetFiles, local_files
from trialscore.results.tally import SCORE_UNIT, TallyResult, check_one_cluster, group_value, quote_identifier
from trialscore.results.trials import counted_rows

if TYPE_CHECKING:
    from trialscore.results.sink import TrialSink

__all__ = ["MAPS", "NAME", "SUFFIXES", "SUMMARY", "holds_counts", "read", "read_files", "sniff"]

NAME = "counts"
SUMMARY = "a counts table (trialscore reduce): one row per (group, case), Parquet"
MAPS = "item = case_id; trials, passed, errored counted; group keys are its group columns"
SUFFIXES = (".parquet",)

_REQUIRED = ("case_id", "trials", "passed", "errored", "score_sum", "score_sumsq")
_OPTIONAL = ("trial_min", "trial_max", "trial_rows")
_RULES = {
    "case_id": "must be a non-empty case id",
    "trials": "must be a whole number >= 0",
    "passed": "must be a whole number from 0 to trials - errored",
    "errored": "must be a whole number from 0 to trials",
    "score_sum": f"must be a whole number from 0 to (trials - errored) * {SCORE_UNIT}",
    "score_sumsq": "must be a whole number from 0 to score_sum",
    "trial_rows": "must be a whole number from 0 to trials",
    "trial_max": "must be at least trial_min",
}


def holds_counts(files: ParquetFiles, con: duckdb.DuckDBPyConnection) -> bool:
    """Whether the Parquet files are counts tables (the first file's columns say)."""
    first = files if files.remote else ParquetFiles(files.label, files.paths[:1])
    try:
        return is_counts_table(first.columns(con))
    except (duckdb.Error, OSError):
        return False


def sniff(path: Path) -> bool:
    """A Parquet file (or a folder of them) whose columns include ``counts_version``."""
    files = parquet_files(path)
    if not files or not files[0].is_file():
        return False
    with files[0].open("rb") as handle:
        if handle.read(4) != b"PAR1":
            return False
    con = cursor()
    try:
        return holds_counts(local_files(str(path), files[:1]), con)
    finally:
        con.close()


def read(path: Path, sink: TrialSink) -> None:
    """Add the counts of a counts table (or a folder of them) to ``sink``."""
    read_files(local_files(str(path), parquet_files(path)), sink)


def _checks(types: dict[str, str]) -> dict[str, str]:
    """Each checked column's SQL test of a bad row."""
    q = {name: quote_identifier(name) for name in types}
    whole = {name: f"({q[name]} IS NULL OR {q[name]} < 0)" for name in _RULES if name in types}
    checks = {
        "case_id": f"({q['case_id']} IS NULL OR CAST({q['case_id']} AS VARCHAR) = '')",
        "trials": whole["trials"],
        "errored": f"({whole['errored']} OR {q['errored']} > {q['trials']})",
        "passed": f"({whole['passed']} OR {q['passed']} > {q['trials']} - {q['errored']})",
        "score_sum": (
            f"({whole['score_sum']} OR {q['score_sum']} > ({q['trials']} - {q['errored']}) * {SCORE_UNIT})"
        ),
        "score_sumsq": f"({whole['score_sumsq']} OR {q['score_sumsq']} > {q['score_sum']})",
    }
    if "trial_rows" in types:
        checks["trial_rows"] = f"({whole['trial_rows']} OR {q['trial_rows']} > {q['trials']})"
    if "trial_min" in types and "trial_max" in types:
        checks["trial_max"] = f"(coalesce({q['trial_max']} < {q['trial_min']}, false))"
    return checks


def _check(sink: TrialSink, files: ParquetFiles, relation: str, types: dict[str, str]) -> None:
    """Every row holds counts that can be; the first that does not is named with its rule and value."""
    label = files.label
    missing = [name for name in ("counts_version", *_REQUIRED) if name not in types]
    if missing:
        raise EvaluationError(
            f"{label}: a counts table needs the column {missing[0]!r}; it has {', '.join(types)} "
            f"(the schema of counts_version {COUNTS_VERSION}: docs/scale.md)"
        )
    for name in (*_REQUIRED[1:], *(name for name in _OPTIONAL if name in types)):
        kind = types[name].upper()
        if not any(
            kind.startswith(prefix)
            for prefix in ("BIGINT", "INTEGER", "UBIGINT", "UINTEGER", "HUGEINT", "SMALLINT", "TINYINT")
        ):
            raise EvaluationError(
                f"{label}: counts table column {name!r} has type {types[name]}; expected whole numbers"
            )
    versions = [row[0] for row in sink.con.sql(f"SELECT DISTINCT counts_version FROM {relation}").fetchall()]
    unknown = [version for version in versions if version != COUNTS_VERSION]
    if unknown:
        raise EvaluationError(
            f"{label}: field 'counts_version' is {unknown[0]!r}; this trialscore reads counts tables of "
            f"version {COUNTS_VERSION} (reduce the trials again with this version)"
        )
    checks = _checks(types)
    flags = ", ".join(f"{test} AS {quote_identifier('bad_' + name)}" for name, test in checks.items())
    values = ", ".join(
        f"CAST({quote_identifier(name)} AS VARCHAR) AS {quote_identifier('raw_' + name)}" for name in checks
    )
    any_bad = " OR ".join(f"{quote_identifier('bad_' + name)}" for name in checks)
    found = sink.con.sql(
        f"SELECT * FROM (SELECT row_number() OVER () AS position, {flags}, {values} FROM {relation}) "
        f"WHERE {any_bad} ORDER BY position LIMIT 1"
    ).fetchall()
    if not found:
        return
    row = found[0]
    names = list(checks)
    index = next(i for i, name in enumerate(names) if row[1 + i])
    name, value = names[index], row[1 + len(names) + index]
    where = files.locate(sink.con)(int(row[0]) - 1)
    shown = "empty" if value is None else repr(value)
    raise EvaluationError(f"{label} {where}: counts table field {name!r} {_RULES[name]}; got {shown}")


def read_files(files: ParquetFiles, sink: TrialSink) -> None:
    """Add the counts of counts-table files (local or remote) to ``sink``."""
    label = files.label
    options = sink.columns
    given = [
        role
        for role in ("item", "trial", "passed", "score", "verdict", "threshold")
        if getattr(options, role) is not None
    ]
    if given:
        raise EvaluationError(
            f"{label}: is a counts table; {parameter('columns.' + given[0])} applies when reducing trials "
            "(its counts were made with the column roles of their reduction)"
        )
    try:
        relation = files.relation(sink.con, sink.new_name("counts"))
        types = sink.describe(relation)
        _check(sink, files, relation, types)
        data_groups = _groups(sink, types, label)
        table, extra = _count(sink, relation, types, data_groups, label)
        skipped, first, notes, partial = stats_of(files.metadata(sink.con, METADATA_KEY), label)
    except duckdb.Error as exc:
        from trialscore.results.sink import engine_reason

        raise EvaluationError(f"{label}: cannot read the counts table: {engine_reason(exc)}") from exc
    from trialscore.results.sink import Counted

    used = [name for name in types if name in (*_REQUIRED, *_OPTIONAL, *data_groups, "cluster", "category")]
    trials = _trials(table, extra, data_groups) if sink.detail else None
    rows_read = int(integers(table["rows"]).sum())
    sink.keep(label, Counted(TallyResult(table, rows_read, 0, None), tuple(data_groups), trials, _position))
    sink.skipped(skipped, first)
    for note in notes:
        sink.note(worded(note))
    for run in partial:
        sink.partial(run)
    sink.bytes_read += files.bytes_needed(sink.con, used)


def _position(index: int) -> str:
    return f"count {index + 1}"


def _groups(sink: TrialSink, types: dict[str, str], label: str) -> list[str]:
    """The group keys the table holds; a key it must hold and lacks is an error naming it."""
    from trialscore.results.sink import FILE_KEY

    held = []
    for name in sink.by:
        if name in types:
            held.append(name)
        elif name != FILE_KEY and name not in sink.optional_groups:
            shown = [column for column in types if column not in (*_REQUIRED, *_OPTIONAL, "counts_version")]
            raise MissingColumnError(
                f"{label}: the counts table has no group column {name!r} (its group columns: "
                f"{', '.join(shown) or 'none'}); reduce the trials again with {parameter('by')} {name}",
                column=name,
                role="group",
                available=tuple(types),
            )
    return held


def _count(
    sink: TrialSink, relation: str, types: dict[str, str], data_groups: list[str], label: str
) -> tuple[Columns, Columns]:
    """The table summed per (group, case) as the sink's counted parts, and each row's category."""
    groups = [f"{group_value(name, types[name])} AS g{index}" for index, name in enumerate(data_groups)]
    span = (
        "min(trial_min) AS trial_lo, max(trial_max) AS trial_hi, sum(trial_rows)::BIGINT AS trial_rows"
        if all(name in types for name in _OPTIONAL)
        else "CAST(NULL AS BIGINT) AS trial_lo, CAST(NULL AS BIGINT) AS trial_hi, 0::BIGINT AS trial_rows"
    )
    clusters = ""
    if sink.columns.cluster is not None:
        if "cluster" not in types:
            raise EvaluationError(
                f"{label}: {parameter('columns.cluster')} needs a counts table reduced with clusters "
                "(a cluster column); this one has none"
            )
        clusters = ", min(cluster) AS cluster_lo, max(cluster) AS cluster_hi"
    category = (
        f", min({group_value('category', types['category'])}) AS category_of"
        if sink.detail and "category" in types
        else ""
    )
    keys = ", ".join([f"g{index}" for index in range(len(groups))] + ["item"])
    table = fetch(
        sink.con,
        f"SELECT {', '.join([*groups, 'CAST(case_id AS VARCHAR) AS item'])}, sum(trials)::BIGINT AS rows, "
        "sum(trials - errored)::BIGINT AS graded, sum(passed)::BIGINT AS c, sum(errored)::BIGINT AS errored, "
        f"{span}, sum(score_sum)::BIGINT AS score_sum, sum(score_sumsq)::BIGINT AS score_sumsq"
        f"{clusters}{category} FROM {relation} GROUP BY {keys}",
    )
    extra = {"category": table.pop("category_of")} if "category_of" in table else {}
    return check_one_cluster(table, label), extra


def _trials(table: Columns, extra: Columns, data_groups: list[str]) -> Columns:
    """Each counted row's trials as verdicts in no known order (passes, failures, errors)."""
    c, errored = integers(table["c"]), integers(table["errored"])
    rows = counted_rows(texts(table["item"]), c, integers(table["graded"]) - c, errored)
    sizes = integers(table["rows"])
    for index in range(len(data_groups)):
        rows[f"g{index}"] = np.repeat(table[f"g{index}"], sizes)
    if "category" in extra:
        rows["category"] = np.repeat(extra["category"], sizes)
    elif "category" in data_groups:
        rows["category"] = np.repeat(table[f"g{data_groups.index('category')}"], sizes)
    if "target" in data_groups:
        rows["target"] = np.repeat(table[f"g{data_groups.index('target')}"], sizes)
    rows.setdefault("category", strings([None] * len(rows["item"])))
    return rows
