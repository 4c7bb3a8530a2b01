"""Read each RUN of a report into its cases: one row per (target, case), one verdict letter per trial.

A run is anything ``trialscore score`` reads.  Trial records (a run folder ``trialscore run
--out`` wrote, or a JSON Lines file of trial records) keep every trial's detail: output,
grader scores and reasons, error text, cost and latency.  Every other format gives per-case
counts only (read by :func:`trialscore.results.readers.read_counts`, exactly as ``score``
reads them); its trial strip then shows the passes, failures and errors in that order, since
the trial order is not known.

Verdict letters: ``p`` pass, ``f`` fail, ``b`` borderline (a failure between the thresholds),
``e`` error (no outcome; never a failure).

>>> import tempfile, pathlib
>>> path = pathlib.Path(tempfile.mkdtemp()) / "trials.jsonl"
>>> rows = [{"case_id": "a", "trial": t, "target": "m", "passed": t != 1,
...          "verdict": "pass" if t != 1 else "fail"} for t in range(3)]
>>> _ = path.write_text("\\n".join(json.dumps(row) for row in rows))
>>> run = read_run(path)
>>> [(case.case_id, case.verdicts, case.detailed) for case in run.cases]
[('a', 'pfp', True)]
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
from numpy.typing import NDArray

from trialscore.errors import EvaluationError, MissingColumnError
from trialscore.results._columns import fetch, floats, integers
from trialscore.results.columns import ColumnMap
from trialscore.results.formats._text import lines as text_lines
from trialscore.results.sink import UTF8_BOM

__all__ = [
    "OUTPUT_CHARS",
    "CaseTrials",
    "Grader",
    "RunData",
    "TrialColumns",
    "TrialDetail",
    "read_run",
    "read_runs",
]

#: Outputs, error texts and grader reasons longer than this are cut in the page (the full length is shown).
OUTPUT_CHARS = 300

_LETTER = {"pass": "p", "fail": "f", "borderline": "b", "error": "e"}
_VERDICT = {letter: verdict for verdict, letter in _LETTER.items()}
_RECORD_KEYS = frozenset({"case_id", "trial", "passed", "verdict"})


#: One grader of one trial: name, score, passed, reason (cut to :data:`OUTPUT_CHARS`).
Grader = tuple[str, float | None, bool | None, str | None]


@dataclass(frozen=True)
class TrialDetail:
    """One trial as the case drawer shows it (texts cut to :data:`OUTPUT_CHARS`, with full lengths)."""

    trial: int
    verdict: str
    score: float | None
    cost: float | None
    latency: float | None
    output: str | None
    output_chars: int
    error: str | None
    graders: tuple[Grader, ...]
    started_at: str | None = None


@dataclass(frozen=True)
class TrialColumns:
    """The trials of a run column by column: case after case (in :attr:`RunData.cases` order), each
    case's trials in trial order.

    ``score``, ``cost`` and ``latency`` are ``float64`` arrays (NaN: unknown); outputs, errors and
    grader reasons are cut to :data:`OUTPUT_CHARS` (``output_chars``: each output's full length).
    """

    trial: list[int]
    verdicts: str
    score: NDArray[np.float64]
    cost: NDArray[np.float64]
    latency: NDArray[np.float64]
    output: list[str | None]
    output_chars: list[int]
    error: list[str | None]
    graders: list[tuple[Grader, ...]]
    started_at: list[str | None]

    def detail(self, index: int) -> TrialDetail:
        """Trial ``index`` (a position in these columns) as one :class:`TrialDetail`."""
        return TrialDetail(
            self.trial[index],
            _VERDICT[self.verdicts[index]],
            _known(self.score[index]),
            _known(self.cost[index]),
            _known(self.latency[index]),
            self.output[index],
            self.output_chars[index],
            self.error[index],
            self.graders[index],
            self.started_at[index],
        )


@dataclass
class CaseTrials:
    """The trials of one case of one target: verdict letters in trial order, and their detail.

    With trial detail (``detailed``), the case's trials are ``trials`` at positions ``start`` to
    ``start + len(verdicts)``.
    """

    target: str | None
    category: str | None
    case_id: str
    verdicts: str = ""
    cost: float | None = None
    detailed: bool = True
    trials: TrialColumns | None = None
    start: int = 0

    @property
    def passed(self) -> int:
        """Trials that passed."""
        return self.verdicts.count("p")

    @property
    def graded(self) -> int:
        """Trials with an outcome (pass, fail or borderline)."""
        return len(self.verdicts) - self.errored

    @property
    def errored(self) -> int:
        """Trials that errored (no outcome)."""
        return self.verdicts.count("e")

    @property
    def stop(self) -> int:
        """The position after this case's last trial in :attr:`trials`."""
        return self.start + len(self.verdicts)

    @property
    def details(self) -> list[TrialDetail]:
        """The case's trials one by one (empty without trial detail)."""
        if self.trials is None:
            return []
        return [self.trials.detail(index) for index in range(self.start, self.stop)]


@dataclass(frozen=True)
class RunData:
    """One run of the report: where it came from, its cases, and what was read and skipped."""

    label: str
    run_id: str | None
    suite: str | None
    started: str | None
    cases: tuple[CaseTrials, ...]
    rows_read: int
    rows_skipped: int = 0
    first_skipped: str | None = None
    trials: TrialColumns | None = None
    asked: Mapping[str, tuple[object, object]] = field(default_factory=dict)
    """Case id -> (input, expected) from the run's ``cases.jsonl`` (the drawer shows them)."""
    partial: tuple[str, ...] = ()

    @property
    def detailed(self) -> bool:
        """Whether trial detail (outputs, graders, errors) was read."""
        return any(case.detailed for case in self.cases)


def _known(value: float) -> float | None:
    return None if math.isnan(value) else float(value)


def _cut(text: object) -> tuple[str | None, int]:
    if text is None:
        return None, 0
    value = str(text)
    return value[:OUTPUT_CHARS], len(value)


def _number(value: object) -> float | None:
    """A JSON number as a float; anything else, NaN and numbers beyond a float's range as None (unknown)."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def _parse_all(lines: list[str]) -> list[Any] | None:
    """Every line's JSON object in one parse (fast), or None: then each line is parsed alone.

    Only when every line is one ``{...}`` text and the parse gives one value per line, so no
    value can straddle two lines.
    """
    if not all(line.lstrip().startswith("{") and line.rstrip().endswith("}") for line in lines):
        return None
    try:
        parsed = json.loads("[" + ",".join(lines) + "]")
    except (ValueError, RecursionError):
        return None
    return parsed if isinstance(parsed, list) and len(parsed) == len(lines) else None


def _loads(line: str) -> object:
    try:
        return json.loads(line)
    except (ValueError, RecursionError):
        return None


def _fast_record(data: object) -> bool:
    """Whether a parsed line is a plainly valid trial record (anything else goes through the schema)."""
    if not isinstance(data, dict):
        return False
    verdict, passed = data.get("verdict"), data.get("passed")
    trial = data.get("trial")
    return (
        isinstance(data.get("case_id"), str)
        and bool(data["case_id"])
        and isinstance(trial, int)
        and not isinstance(trial, bool)
        and trial >= 0
        and verdict in _LETTER
        and (passed is None) == (verdict == "error")
        and (passed is True) == (verdict == "pass")
        and (data.get("error") is None or verdict == "error")
    )


def _graders(value: object) -> tuple[Grader, ...]:
    """The graders of one trial from its ``grader_results`` (entries that are not objects are left out)."""
    out = []
    for grader in value if isinstance(value, list) else ():
        if isinstance(grader, dict):
            reason, _ = _cut(grader.get("reason"))
            passed = grader.get("passed")
            out.append(
                (
                    str(grader.get("name", "")),
                    _number(grader.get("score")),
                    passed if isinstance(passed, bool) else None,
                    reason,
                )
            )
    return tuple(out)


@dataclass
class _Detail:
    """The trial detail of a file's rows (file order): what the case drawer shows."""

    score: NDArray[np.float64]
    cost: NDArray[np.float64]
    latency: NDArray[np.float64]
    output: list[str | None]
    output_chars: list[int]
    error: list[str | None]
    graders: list[tuple[Grader, ...]]


@dataclass
class _Rows:
    """A trial-record file's valid rows in file order, column by column (what both readings give).

    ``lines``: each row's line number (None from DuckDB, whose rows may come in any order);
    ``detail`` is None when trial detail was not asked for.
    """

    target: list[str | None]
    case_id: list[str]
    category: list[str | None]
    trial: NDArray[np.int64]
    letters: list[str]
    started_at: list[str | None]
    run_id: list[str | None]
    suite: list[str | None]
    lines: list[int] | None
    detail: _Detail | None = None


def _floats(values: list[float | None]) -> NDArray[np.float64]:
    return np.array([math.nan if value is None else value for value in values], dtype=np.float64)


def _text_or_none(value: object) -> str | None:
    return str(value) if value else None


def _python_rows(path: Path, skip_invalid: bool) -> tuple[_Rows, int, int, str | None]:
    """Every line parsed in Python (exact for any input): the rows, lines read, skipped, first skipped.

    A line that is not a plainly valid record goes through :class:`TrialRecord`: a bad one names
    the file, line, field and rule (or with ``skip_invalid`` is skipped and counted).
    """
    from trialscore.results.records import TrialRecord

    records: list[dict[str, Any]] = []
    lines_of: list[int] = []
    skipped = 0
    first_skipped = None
    numbered = [(number, line.decode("utf-8")) for number, line in text_lines(path) if line.strip()]
    parsed = _parse_all([line for _, line in numbered])
    for index, (number, line) in enumerate(numbered):
        data = parsed[index] if parsed is not None else _loads(line)
        if not _fast_record(data):
            try:
                record = TrialRecord.from_json_line(line, f"{path} line {number}")
                data = json.loads(record.to_json_line())
            except EvaluationError as exc:
                if not skip_invalid:
                    raise
                skipped += 1
                first_skipped = first_skipped or str(exc)
                continue
        assert isinstance(data, dict)
        records.append(data)
        lines_of.append(number)
    outputs = [_cut(data.get("output")) for data in records]
    started = [data.get("started_at") for data in records]
    rows = _Rows(
        target=[data.get("target") for data in records],
        case_id=[data["case_id"] for data in records],
        category=[data.get("category") for data in records],
        trial=np.array([data["trial"] for data in records], dtype=np.int64),
        letters=[_LETTER[data["verdict"]] for data in records],
        started_at=[when if isinstance(when, str) else None for when in started],
        run_id=[_text_or_none(data.get("run_id")) for data in records],
        suite=[_text_or_none(data.get("suite")) for data in records],
        lines=lines_of,
        detail=_Detail(
            score=_floats([_number(data.get("score")) for data in records]),
            cost=_floats([_number(data.get("cost_usd")) for data in records]),
            latency=_floats([_number(data.get("latency_s")) for data in records]),
            output=[text for text, _ in outputs],
            output_chars=[chars for _, chars in outputs],
            error=[_cut(data.get("error"))[0] for data in records],
            graders=[_graders(data.get("grader_results")) for data in records],
        ),
    )
    return rows, len(numbered), skipped, first_skipped


_FIELDS = (
    "run_id suite case_id trial target category passed score verdict grader_results "
    "cost_usd latency_s output error started_at"
).split()
_DETAIL = ("score", "cost", "latency", "output", "output_chars", "error", "graders")


def _starts(field: str, first: str) -> str:
    """SQL: the JSON value of ``field`` is missing, null, or its text starts with ``first``."""
    return f"coalesce(left({field}::VARCHAR, 1) = '{first}', true)"


def _number_sql(field: str) -> str:
    """SQL: the JSON number of ``field`` as a DOUBLE; NULL for any other value."""
    not_a_number = "('\"', '[', '{', 't', 'f')"
    return f"CASE WHEN left({field}::VARCHAR, 1) NOT IN {not_a_number} THEN TRY_CAST({field} AS DOUBLE) END"


def _fast_sql(source: str, detail: bool) -> str:
    """One query reading every line as a record (the JSON texts of its fields compared, not parsed).

    ``plain`` marks the rows :func:`_fast_record` accepts whose texts read the same as in Python
    (strings where Python keeps a string, an array of graders); with ``detail`` also the numbers,
    the cut texts and the graders' JSON text.
    """
    verdict = "verdict::VARCHAR"
    texts = ("target", "category", "run_id", "suite", *(("output", "error") if detail else ()))
    plain = " AND ".join(
        [
            "case_id::VARCHAR LIKE '\"%' AND case_id::VARCHAR != '\"\"'",
            "json_type(trial) IN ('UBIGINT', 'BIGINT') AND TRY_CAST(trial AS BIGINT) >= 0",
            f"{verdict} IN ('\"pass\"', '\"fail\"', '\"borderline\"', '\"error\"')",
            f"(passed IS NULL) = ({verdict} = '\"error\"')",
            f"(coalesce(passed::VARCHAR, '') = 'true') = ({verdict} = '\"pass\"')",
            f"(error IS NULL OR {verdict} = '\"error\"')",
            *(_starts(name, '"') for name in texts),
            *((_starts("grader_results", "["),) if detail else ()),
        ]
    )
    details = (
        f""",
            {_number_sql("score")} AS score, {_number_sql("cost_usd")} AS cost,
            {_number_sql("latency_s")} AS latency,
            substring(output->>'$', 1, {OUTPUT_CHARS}) AS output,
            coalesce(length(output->>'$'), 0) AS output_chars,
            substring(error->>'$', 1, {OUTPUT_CHARS}) AS error,
            grader_results::VARCHAR AS graders"""
        if detail
        else ""
    )
    columns = "{" + ", ".join(f"'{name}': 'JSON'" for name in _FIELDS) + "}"
    return f"""
        SELECT coalesce({plain}, false) AS plain,
            target->>'$' AS target, case_id->>'$' AS case_id, category->>'$' AS category,
            TRY_CAST(trial AS BIGINT) AS trial, left(verdict->>'$', 1) AS letter,
            CASE WHEN left(started_at::VARCHAR, 1) = '"' THEN started_at->>'$' END AS started_at,
            run_id->>'$' AS run_id, suite->>'$' AS suite{details}
        FROM read_json({source}, format='newline_delimited', records=true, columns={columns})
    """


def _finite(column: NDArray[np.generic]) -> NDArray[np.float64]:
    values = floats(column)
    values[~np.isfinite(values)] = np.nan
    return values


def _graders_of(texts: list[str | None]) -> list[tuple[Grader, ...]]:
    """The graders of each trial from the JSON text of its ``grader_results`` (each text parsed once)."""
    parsed: dict[str, tuple[Grader, ...]] = {}
    out: list[tuple[Grader, ...]] = []
    for text in texts:
        if text is None:
            out.append(())
            continue
        known = parsed.get(text)
        if known is None:
            known = parsed[text] = _graders(json.loads(text))
        out.append(known)
    return out


def _duckdb_rows(path: Path, detail: bool) -> tuple[_Rows, int] | None:
    """Every line read by DuckDB (fast), or None when some line needs Python (see :func:`_python_rows`).

    Rows come in no set order (DuckDB reads parts of the file in parallel): nothing read depends
    on it.  DuckDB reads a line as ``trialscore score`` reads it (so it also takes what its JSON reader
    allows and Python's does not: trailing commas, ``nan`` and ``inf``).  A file with a byte order
    mark, a line DuckDB cannot read, a row that is not a plainly valid record (or holds a value
    DuckDB would read differently from Python), or a row count that is not the count of non-blank
    lines is read in Python instead, which names every bad line.
    """
    from trialscore.results.sink import _cursor
    from trialscore.results.tally import quote_literal

    with path.open("rb") as handle:
        if handle.read(len(UTF8_BOM)) == UTF8_BOM:
            return None
    lines = nonblank = 0
    for _, line in text_lines(path):  # counted without holding the file (a line too long is an error)
        lines += 1
        nonblank += bool(line.strip())
    con = _cursor()
    try:
        table = fetch(con, _fast_sql(quote_literal(str(path)), detail))
    except duckdb.Error:
        return None
    finally:
        con.close()
    rows = len(table["plain"])
    if rows == 0 or not table["plain"].all():
        return None
    if rows != lines and rows != nonblank:
        return None
    trials = _Rows(
        target=table["target"].tolist(),
        case_id=table["case_id"].tolist(),
        category=table["category"].tolist(),
        trial=integers(table["trial"]),
        letters=table["letter"].tolist(),
        started_at=table["started_at"].tolist(),
        run_id=[value or None for value in table["run_id"].tolist()],
        suite=[value or None for value in table["suite"].tolist()],
        lines=None,
    )
    if detail:
        trials.detail = _Detail(
            score=_finite(table["score"]),
            cost=_finite(table["cost"]),
            latency=_finite(table["latency"]),
            output=table["output"].tolist(),
            output_chars=integers(table["output_chars"]).tolist(),
            error=table["error"].tolist(),
            graders=_graders_of(table["graders"].tolist()),
        )
    return trials, rows


def _take(values: list[Any], order: list[int]) -> list[Any]:
    return [values[index] for index in order]


def _read_records(path: Path, label: str, skip_invalid: bool, detail: bool = True) -> RunData:
    """Trial records, one JSON object a line; a bad line names the file, line, field and rule.

    DuckDB reads the file when every line is a plainly valid record (:func:`_duckdb_rows`);
    otherwise, or to name the line of a repeated trial, Python does, line by line
    (:func:`_python_rows`).
    """
    fast = _duckdb_rows(path, detail)
    if fast is not None:
        rows, read = fast
        run = _run(path, label, rows, read, 0, None, detail)
        if run is not None:
            return run
    rows, read, skipped, first_skipped = _python_rows(path, skip_invalid)
    run = _run(path, label, rows, read, skipped, first_skipped, detail)
    assert run is not None
    return run


def _run(
    path: Path, label: str, rows: _Rows, read: int, skipped: int, first_skipped: str | None, detail: bool
) -> RunData | None:
    """The run of a file's rows, whatever their order: cases ordered by target, category and case id,
    each case's trials by trial index (in NumPy).

    A case's category is that of its first trial; the run ids and suites are listed sorted.  A
    repeated (target, case, trial) raises naming its line, or gives None when the rows' lines
    are not known.
    """
    if read - skipped == 0:
        raise EvaluationError(f"no trials in {path}: it holds no valid trial record")
    trials = rows.trial.tolist()
    first: dict[tuple[str | None, str], int] = {}
    for index, key in enumerate(zip(rows.target, rows.case_id, strict=True)):
        known = first.get(key)
        if known is None or trials[index] < trials[known]:
            first[key] = index
    keys = sorted(
        first,
        key=lambda key: (key[0] or "", rows.category[first[key]] or "", key[1], key[0] is not None),
    )
    rank = {key: position for position, key in enumerate(keys)}
    case_of = np.fromiter(
        (rank[key] for key in zip(rows.target, rows.case_id, strict=True)), np.int64, len(rows.case_id)
    )
    order = np.lexsort((rows.trial, case_of))
    cases, trial = case_of[order], rows.trial[order]
    repeated = np.flatnonzero((cases[1:] == cases[:-1]) & (trial[1:] == trial[:-1]))
    if repeated.size:
        if rows.lines is None:
            return None
        later = int(max(order[repeated[0]], order[repeated[0] + 1]))
        raise EvaluationError(
            f"{path} line {rows.lines[later]}: case {rows.case_id[later]!r} (target {rows.target[later]!r}) "
            f"has trial {int(rows.trial[later])} twice; each (target, case, trial) must appear once"
        )
    positions = order.tolist()
    verdicts = "".join(_take(rows.letters, positions))
    columns = None
    if detail and rows.detail is not None:
        columns = TrialColumns(
            trial=trial.tolist(),
            verdicts=verdicts,
            score=rows.detail.score[order],
            cost=rows.detail.cost[order],
            latency=rows.detail.latency[order],
            output=_take(rows.detail.output, positions),
            output_chars=_take(rows.detail.output_chars, positions),
            error=_take(rows.detail.error, positions),
            graders=_take(rows.detail.graders, positions),
            started_at=_take(rows.started_at, positions),
        )
    ends = np.cumsum(np.bincount(cases, minlength=len(keys))).tolist()
    costs = [] if columns is None else columns.cost.tolist()
    out = []
    start = 0
    for (target, case_id), end in zip(keys, ends, strict=True):
        known_costs = [cost for cost in costs[start:end] if not math.isnan(cost)]
        out.append(
            CaseTrials(
                target,
                rows.category[first[(target, case_id)]],
                case_id,
                verdicts[start:end],
                float(sum(known_costs)) if known_costs else None,
                detailed=columns is not None,
                trials=columns,
                start=start,
            )
        )
        start = end
    return RunData(
        label,
        ", ".join(sorted({value for value in rows.run_id if value})) or None,
        ", ".join(sorted({value for value in rows.suite if value})) or None,
        min((when for when in rows.started_at if when is not None), default=None),
        tuple(out),
        read,
        skipped,
        first_skipped,
        columns,
    )


def _case_order(case: CaseTrials) -> tuple[str, str, str]:
    return (case.target or "", case.category or "", case.case_id)


def _is_record_file(path: Path) -> bool:
    first = next((line for _, line in text_lines(path) if line.strip()), b"")
    return isinstance(value := _loads(first.decode("utf-8", errors="replace")), dict) and (
        _RECORD_KEYS <= value.keys()
    )


def _records_path(path: Path, input_format: str | None, columns: ColumnMap) -> Path | None:
    """The trial-record file behind ``path``, or None when it is another format (or columns are mapped)."""
    from trialscore.results.formats import detect_format, get_format, run_folder

    if columns != ColumnMap():
        return None
    fmt = get_format(input_format) if input_format is not None else detect_format(path)
    if fmt.NAME == run_folder.NAME:
        return run_folder.trials_file(path)
    if fmt.NAME == "jsonl" and path.is_file() and _is_record_file(path):
        return path
    return None


def _read_counts(
    path: Path, columns: ColumnMap, skip_invalid: bool, input_format: str | None, scorer: str | None = None
) -> RunData:
    """Per-case counts of any other format: read as ``score`` reads it, grouped by target and category."""
    from trialscore.results.readers import read_counts

    counts = None
    for by in (("target", "category"), ("target",), ("category",), ()):
        try:
            counts = read_counts(
                [path],
                by=by,
                columns=columns,
                skip_invalid=skip_invalid,
                input_format=input_format,
                scorer=scorer,
            )
            break
        except MissingColumnError as exc:
            if exc.role != "group" or not by:
                raise
    assert counts is not None
    values = {name: counts.group_values[index].tolist() for index, name in enumerate(counts.by)}
    cases = []
    for row, item in enumerate(counts.item.tolist()):
        passed, graded, errored = int(counts.c[row]), int(counts.graded[row]), int(counts.errored[row])
        target = values["target"][row] if "target" in values else None
        category = values["category"][row] if "category" in values else None
        verdicts = "p" * passed + "f" * (graded - passed) + "e" * errored
        cases.append(
            CaseTrials(
                None if target is None else str(target),
                None if category is None else str(category),
                str(item),
                verdicts,
                detailed=False,
            )
        )
    stats = counts.stats
    return RunData(
        str(path),
        None,
        None,
        None,
        tuple(sorted(cases, key=_case_order)),
        stats.rows_read,
        stats.rows_skipped,
        stats.first_skipped,
        partial=tuple(run.message for run in stats.partial),
    )


def read_run(
    path: str | Path,
    columns: ColumnMap | None = None,
    skip_invalid: bool = False,
    input_format: str | None = None,
    label: str | None = None,
    detail: bool = True,
    scorer: str | None = None,
) -> RunData:
    """Read one run (a file or folder ``score`` reads) into its cases.

    Parameters
    ----------
    path : a run folder, a trial-record file, or any input of :mod:`trialscore.results.formats`
    columns : which column holds what (other formats only; trial records have fixed fields)
    skip_invalid : skip and count invalid rows instead of raising
    input_format : read as this format instead of detecting it
    label : the run's name in the report (default: ``path``)
    detail : read each trial's detail (output, graders, error, cost, latency); without it only the
        verdicts are read (enough for a baseline or an earlier run), and cases are not ``detailed``
    scorer : of an input with several scorers, read only this one's judgements (other formats only)
    """
    path = Path(path)
    columns = columns or ColumnMap()
    records = _records_path(path, input_format, columns)
    if records is not None:
        run = _read_records(records, label or str(path), skip_invalid, detail)
        if not detail:
            return run
        from trialscore.report.drawer import read_asked

        return replace(run, asked=read_asked(records.parent / "cases.jsonl"))
    return _read_counts(path, columns, skip_invalid, input_format, scorer)


def read_runs(paths: Sequence[str | Path], **options: Any) -> list[RunData]:
    """:func:`read_run` of each path, in order."""
    return [read_run(path, **options) for path in paths]
