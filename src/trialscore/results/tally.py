"""Trial rows to per-(group, item) counts inside DuckDB, with row-level validation.

One SQL ``GROUP BY`` turns a table of trials (a Parquet, CSV or JSON Lines file,
or columns built in Python from records) into one row per (group, item): the
item's rows, graded trials, passes, errored trials and the range of its trial
indices.  No Python object is made per trial, so tens of millions of rows cost
about one DuckDB scan.

Every row is checked in the same scan (item present, trial a whole number
``>= 0``, outcome one of the accepted spellings).  Only when a row fails does a
second, streaming pass find the first bad row to name its line, field and
value; with ``skip_invalid`` the counts are redone without the bad rows and
the number skipped is reported.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import duckdb
import numpy as np

from trialscore.errors import EvaluationError, parameter, template, worded
from trialscore.results._columns import Columns, fetch, floats, integers, nulls, register, row, strings
from trialscore.results.columns import ResolvedColumns

__all__ = [
    "COUNT_COLUMNS",
    "RECORD_FIELDS",
    "SCORE_UNIT",
    "LongTable",
    "Role",
    "Scan",
    "Skips",
    "TallyResult",
    "any_bad",
    "check_one_cluster",
    "group_value",
    "quote_identifier",
    "quote_literal",
    "scan_roles",
    "tally",
    "text_value",
]

#: Columns of a tally table after the group columns ``g0, g1, ...``.
COUNT_COLUMNS = (
    "item", "rows", "graded", "c", "errored", "trial_lo", "trial_hi", "trial_rows", "score_sum", "score_sumsq"
)  # fmt: skip

#: Graded scores are summed exactly as whole numbers of this unit (``floor(score * 1e9 + 0.5)``, and
#: ``floor(score * score * 1e9 + 0.5)`` for the sum of squares), so that every engine, every order and
#: every merge of counts gives the same sums to the last digit.  A 0/1 outcome's score is the outcome.
SCORE_UNIT = 1_000_000_000

_INTEGER = re.compile(r"^U?(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT)$")
_FLOAT = re.compile(r"^(FLOAT|DOUBLE|DECIMAL\(\d+,\s*\d+\))$")

_RULES = {
    "item": "must be a non-empty case id on one line (a line break in it is often an unbalanced quote)",
    "trial": "must be a whole number >= 0",
    "passed": "must be true/false or 1/0 (empty means an errored trial)",
    "score": "must be a number in [0, 1] (empty means an errored trial)",
    "verdict": "must be pass, fail, borderline or error",
    "cluster": f"must be a non-empty cluster id ({parameter('columns.cluster')})",
    "record case_id": "must be a non-empty case id",
    "record trial": "must be a whole number >= 0 written as an integer",
    "record passed": "must be true, false or empty (an errored trial)",
    "record verdict": (
        "must be pass, fail, borderline or error, as passed says: pass when passed is true, "
        "fail or borderline when false, error when empty"
    ),
    "record error": "must be empty unless the verdict is error (an error belongs to an errored trial)",
}

#: The fields of a trial record (the runner's trials.jsonl) checked by TrialRecord's rules, by role.
RECORD_FIELDS = {
    "record case_id": "case_id",
    "record trial": "trial",
    "record passed": "passed",
    "record verdict": "verdict",
    "record error": "error",
}


def quote_identifier(name: str) -> str:
    """A SQL identifier in double quotes.

    >>> quote_identifier('pass rate')
    '"pass rate"'
    """
    return '"' + name.replace('"', '""') + '"'


def quote_literal(text: str) -> str:
    """A SQL string literal in single quotes.

    >>> quote_literal("it's")
    "'it''s'"
    """
    return "'" + text.replace("'", "''") + "'"


@dataclass(frozen=True)
class Scan:
    """A table of trial rows to count: where it is, what its columns mean, how to name a row.

    ``relation`` is a SQL table expression (``read_parquet('x.parquet')``, a
    registered view name...); ``types`` maps each used column to its DuckDB type;
    ``locate(i)`` describes the 0-based data row ``i`` (``"line 8"``).  The rows of ``records``
    (the runner's trial records) are also held to :class:`~trialscore.results.records.TrialRecord`'s
    rules: a case id, a trial index written as an integer, ``passed`` true, false or empty, a
    ``verdict`` that agrees with it, an ``error`` only on an errored trial; a row breaking one is
    named as a TrialRecord field.  ``never_null`` names columns the source proves hold no null (a
    Parquet file's statistics), which the count then does not test.
    """

    label: str
    relation: str
    columns: ResolvedColumns
    types: Mapping[str, str]
    locate: Callable[[int], str]
    records: bool = False
    never_null: frozenset[str] = frozenset()


@dataclass(frozen=True)
class TallyResult:
    """Counts of one scan: ``table`` has columns ``g0..`` then :data:`COUNT_COLUMNS`; ``ordered``: its
    rows are sorted by the group columns, then the item (nulls last), one row per (group, item)."""

    table: Columns
    rows_read: int
    rows_skipped: int
    first_skipped: str | None
    ordered: bool = False


@dataclass(frozen=True)
class Role:
    """SQL for one role: its value, when a row is bad, and whether that shows after grouping.

    ``grouped`` checks (a missing item, a negative or missing integer trial) are
    seen in the grouped counts for free, so the fast scan does not test rows for them.
    """

    value: str
    bad: str | None
    grouped: bool = False
    number: str | None = None
    """The graded score as DOUBLE (a score outcome only: its sums are kept, see :data:`SCORE_UNIT`)."""


def _kind(column: str, type_name: str) -> str:
    upper = type_name.upper()
    if upper == "BOOLEAN":
        return "bool"
    if _INTEGER.match(upper):
        return "int"
    if _FLOAT.match(upper):
        return "float"
    if upper in ("VARCHAR", "JSON") or upper.startswith("ENUM"):
        return "text"
    raise EvaluationError(
        f"column {column!r} has type {type_name}; expected numbers, booleans or text for a trial field"
    )


def _number(column: str, kind: str) -> str:
    """The column as DOUBLE (NULL when text does not parse)."""
    name = quote_identifier(column)
    return f"TRY_CAST(trim({name}) AS DOUBLE)" if kind == "text" else f"CAST({name} AS DOUBLE)"


def _item_role(column: str, kind: str) -> Role:
    name = quote_identifier(column)
    value = name if kind == "text" else f"CAST({name} AS VARCHAR)"
    if kind == "bool":
        raise EvaluationError(f"item column {column!r} is boolean; expected case ids")
    bad = f"({value} IS NULL OR {value} = '' OR regexp_matches({value}, '[\\r\\n]'))"
    return Role(value, bad, grouped=True)


def _trial_role(column: str, kind: str) -> Role:
    name = quote_identifier(column)
    if kind == "int":
        return Role(f"CAST({name} AS BIGINT)", f"({name} IS NULL OR {name} < 0)", grouped=True)
    if kind == "bool":
        raise EvaluationError(f"trial column {column!r} is boolean; expected whole numbers >= 0")
    x = _number(column, kind)
    value = f"TRY_CAST({x} AS BIGINT)"
    bad = f"({x} IS NULL OR NOT isfinite({x}) OR {x} < 0 OR {x} <> floor({x}) OR {value} IS NULL)"
    if kind == "text":
        # fast path: text that is exactly a whole number ("7") needs no float parse
        whole = f"TRY_CAST({name} AS BIGINT)"
        plain = f"CAST({whole} AS VARCHAR) = {name}"
        value = f"CASE WHEN {plain} THEN {whole} ELSE {value} END"
        bad = f"CASE WHEN {plain} THEN {whole} < 0 ELSE {bad} END"
    return Role(value, bad)


def _passed_role(column: str, kind: str) -> Role:
    name = quote_identifier(column)
    if kind == "bool":
        return Role(name, None)
    if kind == "int":
        return Role(f"({name} = 1)", f"({name} IS NOT NULL AND {name} NOT IN (0, 1))")
    if kind == "float":
        x = f"CAST({name} AS DOUBLE)"
        return Role(
            f"CASE WHEN isnan({x}) THEN NULL ELSE {x} = 1 END",
            f"({x} IS NOT NULL AND NOT isnan({x}) AND {x} NOT IN (0, 1))",
        )
    text = f"lower(trim({name}))"
    spelled = (
        f"CASE WHEN {text} IN ('true', '1', '1.0', 't') THEN true "
        f"WHEN {text} IN ('false', '0', '0.0', 'f') THEN false END"
    )
    # fast path for the common exact spellings; the general parse only for the rest
    value = f"CASE {name} WHEN 'true' THEN true WHEN 'false' THEN false ELSE ({spelled}) END"
    bad = (
        f"CASE WHEN {name} IS NULL OR {name} IN ('true', 'false') THEN false "
        f"ELSE (trim({name}) <> '' AND ({spelled}) IS NULL) END"
    )
    return Role(value, bad)


def _score_role(column: str, kind: str, threshold: float) -> Role:
    if kind == "bool":
        raise EvaluationError(f"score column {column!r} is boolean; expected numbers in [0, 1]")
    x = _number(column, kind)
    value = f"CASE WHEN isnan({x}) THEN NULL ELSE {x} >= {threshold!r} END"
    bad = f"({x} IS NOT NULL AND NOT isnan({x}) AND ({x} < 0 OR {x} > 1))"
    if kind == "text":
        name = quote_identifier(column)
        bad = f"({bad} OR ({name} IS NOT NULL AND trim({name}) <> '' AND {x} IS NULL))"
    return Role(value, bad, number=x)


def _verdict_role(column: str, kind: str) -> Role:
    name = quote_identifier(column)
    text = f"lower(trim(CAST({name} AS VARCHAR)))"
    value = f"CASE {text} WHEN 'pass' THEN true WHEN 'fail' THEN false WHEN 'borderline' THEN false END"
    return Role(value, f"({name} IS NULL OR {text} NOT IN ('pass', 'fail', 'borderline', 'error'))")


def _cluster_role(column: str, type_name: str) -> Role:
    value = f"trim({group_value(column, type_name)})"
    return Role(value, f"({value} IS NULL OR {value} = '')")


def _record_roles(types: Mapping[str, str]) -> dict[str, tuple[str, Role]]:
    """TrialRecord's rules on the text of a trial record's fields (the JSON Lines reader's ``VARCHAR``)."""
    text = {name: f"CAST({quote_identifier(name)} AS VARCHAR)" for name in RECORD_FIELDS.values()}
    case, trial, passed, verdict, error = (text[name] for name in RECORD_FIELDS.values())
    whole = f"TRY_CAST({trial} AS BIGINT)"
    checks = {
        "record case_id": f"({case} IS NULL OR {case} = '')",
        "record trial": f"({whole} IS NULL OR {whole} < 0 OR CAST({whole} AS VARCHAR) <> {trial})",
        "record passed": f"({passed} IS NOT NULL AND {passed} NOT IN ('true', 'false'))",
        "record verdict": (
            f"({verdict} IS NULL OR {verdict} NOT IN ('pass', 'fail', 'borderline', 'error') "
            f"OR ({passed} IS NULL) <> ({verdict} = 'error') "
            f"OR coalesce({passed} = 'true', false) <> ({verdict} = 'pass'))"
        ),
        "record error": f"({error} IS NOT NULL AND {verdict} IS DISTINCT FROM 'error')",
    }
    return {
        name: (RECORD_FIELDS[name], Role("NULL", f"coalesce({bad}, true)"))
        for name, bad in checks.items()
        if RECORD_FIELDS[name] in types and (name != "record error" or "verdict" in types)
    }


def scan_roles(scan: Scan) -> dict[str, tuple[str, Role]]:
    """Role name -> (column, SQL value and badness) for every used role (and the record rules)."""
    columns = scan.columns
    kinds = {name: _kind(name, type_name) for name, type_name in scan.types.items()}
    roles = {"item": (columns.item, _item_role(columns.item, kinds[columns.item]))}
    if columns.trial is not None:
        roles["trial"] = (columns.trial, _trial_role(columns.trial, kinds[columns.trial]))
    outcome, column = columns.outcome, columns.outcome_column
    if outcome == "passed":
        roles[outcome] = (column, _passed_role(column, kinds[column]))
    elif outcome == "score":
        assert columns.threshold is not None
        roles[outcome] = (column, _score_role(column, kinds[column], columns.threshold))
    else:
        roles[outcome] = (column, _verdict_role(column, kinds[column]))
    if columns.cluster is not None:
        roles["cluster"] = (columns.cluster, _cluster_role(columns.cluster, scan.types[columns.cluster]))
    if scan.records:  # a record's case id is checked first, as a TrialRecord field; its other rules last
        record = _record_roles(scan.types)
        roles = {name: record.pop(name) for name in list(record)[:1] if name == "record case_id"} | roles
        roles.update(record)
    return roles


def any_bad(roles: Mapping[str, tuple[str, Role]], grouped: bool) -> str:
    """OR of the roles' bad-row tests (with ``grouped=False``, only those not visible after grouping)."""
    parts = [role.bad for _, role in roles.values() if role.bad is not None and (grouped or not role.grouped)]
    return " OR ".join(parts) if parts else "false"


def group_value(column: str, type_name: str) -> str:
    name = quote_identifier(column)
    return name if type_name.upper() == "VARCHAR" else f"CAST({name} AS VARCHAR)"


def _count_sql(scan: Scan, roles: Mapping[str, tuple[str, Role]], drop_bad: bool) -> str:
    """Per-(group, item) counts; ``drop_bad`` leaves every invalid row out, else ``invalid`` counts
    the invalid rows that only a row test finds (the grouped checks look at the result)."""
    groups = [
        f"{group_value(name, scan.types[name])} AS g{index}" for index, name in enumerate(scan.columns.groups)
    ]
    outcome = roles[scan.columns.outcome][1].value
    trial = roles["trial"][1].value if "trial" in roles else "CAST(NULL AS BIGINT)"
    inner = [*groups, f"{roles['item'][1].value} AS item", f"{outcome} AS passed", f"{trial} AS trial"]
    number = roles[scan.columns.outcome][1].number
    sums = ""
    if number is not None:  # graded scores: their exact sums (a 0/1 outcome's follow from c)
        graded = f"CASE WHEN isnan({number}) OR NOT ({number} BETWEEN 0 AND 1) THEN NULL ELSE {number} END"
        inner.append(f"{graded} AS score")
        sums = (
            f"coalesce(sum(CAST(floor(score * {SCORE_UNIT}.0 + 0.5) AS BIGINT)), 0)::BIGINT AS score_sum, "
            f"coalesce(sum(CAST(floor(score * score * {SCORE_UNIT}.0 + 0.5) AS BIGINT)), 0)::BIGINT "
            "AS score_sumsq, "
        )
    clusters = ""
    if "cluster" in roles:
        inner.append(f"{roles['cluster'][1].value} AS cluster")
        clusters = "min(cluster) AS cluster_lo, max(cluster) AS cluster_hi, "
    row_bad = any_bad(roles, grouped=False)
    if drop_bad:
        where, invalid = f" WHERE NOT ({any_bad(roles, grouped=True)})", "0"
    else:
        where, invalid = "", "0" if row_bad == "false" else "count_if(bad)::BIGINT"
        if row_bad != "false":
            inner.append(f"({row_bad}) AS bad")
    keys = [f"g{index}" for index in range(len(groups))] + ["item"]
    # trial_rows is count(trial) spelled as rows less nulls: DuckDB 2.0 counts a BIGINT column's values
    # far slower than it tests them for null (about 1 s of CPU per 100M rows, a fifth of the scan); an
    # integer trial column the source proves null-free is not tested at all (a twentieth of the scan)
    trial_rows = "count(*) - count_if(trial IS NULL)"
    if "trial" in roles and roles["trial"][1].grouped and roles["trial"][0] in scan.never_null:
        trial_rows = "count(*)"
    return (
        f"SELECT {', '.join(keys)}, count(*) AS rows, count(passed) AS graded, "
        f"coalesce(count_if(passed), 0)::BIGINT AS c, count(*) - count(passed) AS errored, "
        f"min(trial) AS trial_lo, max(trial) AS trial_hi, "
        f"{trial_rows} AS trial_rows, {sums}{clusters}{invalid} AS invalid "
        f"FROM (SELECT {', '.join(inner)} FROM {scan.relation}{where}) GROUP BY ALL "
        f"ORDER BY {', '.join(keys)} NULLS LAST"
    )


def _grouped_invalid(table: Columns, roles: Mapping[str, tuple[str, Role]]) -> bool:
    """Whether the grouped counts show a missing item or a bad integer trial."""
    items = table["item"]
    if bool(nulls(items).any()) or bool(np.equal(items, "").any()):
        return True
    joined = "\0".join(items.tolist())  # one scan in C for a line break in any item
    if "\n" in joined or "\r" in joined:
        return True
    if "trial" in roles and roles["trial"][1].grouped:
        if bool((floats(table["trial_lo"]) < 0).any()):  # NaN (no trial index) compares False
            return True
        if bool((table["trial_rows"] != table["rows"]).any()):
            return True
    return False


def _first_bad_row(con: duckdb.DuckDBPyConnection, scan: Scan, roles: Mapping[str, tuple[str, Role]]) -> str:
    """Stream the scan in file order to the first invalid row; describe it.

    Only a file with a bad row gets here, so PyArrow (for DuckDB's streamed batches) is imported
    here rather than at start-up.
    """
    import pyarrow.compute as pc

    checked = [(name, column, role.bad) for name, (column, role) in roles.items() if role.bad is not None]
    flags = [f"coalesce({bad}, false) AS bad_{index}" for index, (_, _, bad) in enumerate(checked)]
    raws = [
        f"CAST({quote_identifier(column)} AS VARCHAR) AS raw_{index}"
        for index, (_, column, _) in enumerate(checked)
    ]
    relation = con.sql(f"SELECT {', '.join(flags + raws)} FROM {scan.relation}")
    reader = getattr(relation, "to_arrow_reader", None) or relation.fetch_arrow_reader
    batches = reader(100_000)
    offset = 0
    found = None
    for batch in batches:
        positions = [pc.index(batch.column(f"bad_{index}"), True).as_py() for index in range(len(checked))]
        hits = [(position, index) for index, position in enumerate(positions) if position >= 0]
        if hits:
            row, index = min(hits)
            found = (offset + row, index, batch.column(f"raw_{index}")[row].as_py())
            break
        offset += batch.num_rows
    batches.close()  # locate() may query the connection again
    if found is None:  # pragma: no cover - the count query saw an invalid row
        raise AssertionError("an invalid row was counted but not found again")
    row, index, value = found
    name, column, _ = checked[index]
    shown = "empty" if value is None else repr(value)
    field = "TrialRecord field" if name in RECORD_FIELDS else "field"
    return f"{scan.label} {scan.locate(row)}: {field} {column!r} {_RULES[name]}; got {shown}"


def check_one_cluster(table: Columns, where: str) -> Columns:
    """Replace ``cluster_lo`` / ``cluster_hi`` by one ``cluster`` column; an item with two values is an error.

    ``where`` names the file (or files) the counts come from.
    """
    if "cluster_lo" not in table:
        return table
    differs = np.flatnonzero(table["cluster_lo"] != table["cluster_hi"])
    if differs.size:
        first = row(table, int(differs[0]))
        raise EvaluationError(
            f"{where}: item {first['item']!r} has cluster {first['cluster_lo']!r} on some rows and "
            f"{first['cluster_hi']!r} on others; every row of an item must name the same "
            f"{parameter('columns.cluster')} value"
        )
    out = {name: column for name, column in table.items() if name not in ("cluster_lo", "cluster_hi")}
    out["cluster"] = table["cluster_lo"]
    return out


def tally(con: duckdb.DuckDBPyConnection, scan: Scan, skip_invalid: bool = False) -> TallyResult:
    """Count ``scan`` per (group, item); bad rows raise, or are skipped and counted.

    Raises
    ------
    EvaluationError
        Naming the file, the row or line, the field, the rule and the value of
        the first invalid row (unless ``skip_invalid``).
    """
    roles = scan_roles(scan)
    table = fetch(con, _count_sql(scan, roles, drop_bad=False))
    rows_read = int(table["rows"].sum())
    if not (table["invalid"].sum() or _grouped_invalid(table, roles)):
        return TallyResult(
            check_one_cluster(_without_invalid(table), scan.label), rows_read, 0, None, ordered=True
        )
    count_sql = f"SELECT count_if({any_bad(roles, grouped=True)}) FROM {scan.relation}"
    ((invalid,),) = con.sql(count_sql).fetchall()
    first_skipped = _first_bad_row(con, scan, roles)
    if not skip_invalid:
        raise EvaluationError(
            f"{first_skipped} ({invalid} invalid row{'s' if invalid != 1 else ''} in all; "
            f"{parameter('skip_invalid')} skips and counts them)"
        )
    table = fetch(con, _count_sql(scan, roles, drop_bad=True))
    return TallyResult(
        check_one_cluster(_without_invalid(table), scan.label),
        rows_read,
        int(invalid),
        first_skipped,
        ordered=True,
    )


def _without_invalid(table: Columns) -> Columns:
    """The counts without the ``invalid`` column, with the sums of graded scores (those of 0/1 outcomes
    follow from ``c``)."""
    out = {name: column for name, column in table.items() if name != "invalid"}
    if "score_sum" not in out:
        sums = integers(out["c"]) * SCORE_UNIT
        out["score_sum"], out["score_sumsq"] = sums, sums.copy()
    return out


@dataclass(frozen=True)
class LongTable:
    """Trial rows built in Python (seed-003 results, inspect logs) ready for :func:`tally`.

    ``columns`` maps each column name to its values as text (``None`` for null; numbers and
    booleans spelled as :func:`text_value` spells them), all of one length.  ``where[i]``
    describes row ``i`` (``"line 3 trial 1"``); ``rows_skipped`` counts input that could not
    even become a row (a malformed line) when skipping was asked for, and ``first_skipped``
    says where and why.
    """

    columns: Mapping[str, Sequence[str | None]]
    where: Sequence[str]
    rows_skipped: int = 0
    first_skipped: str | None = None

    def locate(self, index: int) -> str:
        """Description of row ``index``."""
        return self.where[index]

    def register(self, con: duckdb.DuckDBPyConnection) -> str:
        """Make the rows queryable on ``con`` (every column ``VARCHAR``); return the view's name."""
        return register(con, {name: strings(values) for name, values in self.columns.items()}, self.columns)


@dataclass
class Skips:
    """Bad input a reader skips and counts (``skip_invalid``), or raises on with a hint to skip it.

    ``what`` names the reader's unit in the hint (``"samples"``); ``count`` and ``first`` feed
    :attr:`LongTable.rows_skipped` and :attr:`LongTable.first_skipped`.

    >>> skips = Skips(True, "results")
    >>> skips.note("run.json result 2", EvaluationError("field 'trial' must be a whole number"))
    >>> skips.count, skips.first
    (1, "run.json result 2: field 'trial' must be a whole number")
    >>> Skips(False, "results").note("run.json result 2", EvaluationError("bad"))
    Traceback (most recent call last):
    ...
    trialscore.errors.EvaluationError: run.json result 2: bad (skip_invalid skips and counts bad results)
    """

    skip_invalid: bool
    what: str
    count: int = 0
    first: str | None = None

    def note(self, location: str | None, exc: EvaluationError) -> None:
        """Count ``exc`` (found at ``location``, or saying where itself) as skipped, or raise it."""
        message = f"{location}: {template(exc)}" if location is not None else template(exc)
        if not self.skip_invalid:
            raise EvaluationError(
                f"{message} ({parameter('skip_invalid')} skips and counts bad {self.what})"
            ) from exc
        self.count += 1
        self.first = self.first or worded(message)


def text_value(value: object) -> str | None:
    """A JSON value as the text DuckDB parses: strings as they are, others as JSON.

    >>> text_value(True), text_value(0.5), text_value("pass"), text_value(None)
    ('true', '0.5', 'pass', None)
    """
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value)
