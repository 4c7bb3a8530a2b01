"""Trial detail: the trials behind per-(group, item) counts, each with its verdict and fields.

The one reader (:func:`trialscore.results.readers.read_counts` with ``detail``) reads every
input the way it counts it: the same formats, the same column roles, the same validation, the
same rows skipped.  With ``detail`` it also keeps each counted row's trials, in trial order, as
a :class:`TrialColumns` beside the counts (``ItemCounts.trials``): the verdict letter of each
trial and the fields of :data:`TRIAL_FIELDS` asked for, wherever the input has them (the
runner's trial records have them all; another tool's log what it records).

Verdict letters: ``p`` pass, ``f`` fail, ``b`` borderline (a failure the input's ``verdict``
calls borderline), ``e`` error (no outcome; never a failure).

>>> import tempfile, pathlib, json
>>> from trialscore.results import read_counts
>>> path = pathlib.Path(tempfile.mkdtemp()) / "trials.jsonl"
>>> rows = [{"case_id": "a", "trial": t, "passed": t != 1, "verdict": "pass" if t != 1 else "fail",
...          "cost_usd": 0.5} for t in (2, 0, 1)]
>>> _ = path.write_text("\\n".join(json.dumps(row) for row in rows))
>>> trials = read_counts([path], detail=TRIAL_FIELDS).trials
>>> trials.verdicts, trials.trial, trials.cost.tolist(), trials.detailed
('pfp', [0, 1, 2], [0.5, 0.5, 0.5], True)
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import duckdb
import numpy as np
from numpy.typing import NDArray

from trialscore._validate import describe
from trialscore.errors import EvaluationError
from trialscore.results._columns import Columns, fetch, floats, integers, strings
from trialscore.results.tally import Role, Scan, any_bad, group_value, quote_identifier

if TYPE_CHECKING:  # the Pydantic records are built when a trial's calls are asked for, not at start-up
    from trialscore.results.trajectory import ToolCall

__all__ = [
    "DRAWER_FIELDS",
    "OUTPUT_CHARS",
    "OUTPUT_TEXT_CHARS",
    "TRIAL_FIELDS",
    "Grader",
    "TrialColumns",
    "TrialDetail",
    "TrialParts",
    "counted_rows",
    "field_columns",
    "read_trial_rows",
]

#: Error texts and grader reasons longer than this are cut.
OUTPUT_CHARS = 300
#: Outputs longer than this are cut (their full length is kept): the report shows each distinct
#: output whole up to this length, and diffs it.
OUTPUT_TEXT_CHARS = 4_000

#: Each trial field and the input columns it is read from, the first present (the runner's
#: :class:`~trialscore.results.records.TrialRecord` fields first).
TRIAL_FIELDS: Mapping[str, tuple[str, ...]] = {
    "target": ("target",),
    "category": ("category",),
    "score": ("score",),
    "cost": ("cost_usd", "cost"),
    "latency": ("latency_s", "latency"),
    "output": ("output",),
    "error": ("error",),
    "graders": ("grader_results",),
    "started_at": ("started_at",),
    "run_id": ("run_id",),
    "suite": ("suite",),
    "tokens": ("tokens", "total_tokens"),
    "steps": ("steps",),
    "tool_calls": ("tool_calls",),
}
#: The fields that make trial detail (what a case drawer shows): an input with one of them has detail.
DRAWER_FIELDS = frozenset({"score", "cost", "latency", "output", "error", "graders"})
_NUMBERS = ("score", "cost", "latency", "tokens", "steps")
#: The fields kept as lists of texts.
_LISTS = ("output", "error", "started_at", "target", "category", "run_id", "suite", "tool_calls")
_CUT = ("output", "error")

#: One grader of one trial: name, score, passed, reason (cut to :data:`OUTPUT_CHARS`).
Grader = tuple[str, float | None, bool | None, str | None]

_VERDICT = {"p": "pass", "f": "fail", "b": "borderline", "e": "error"}


@dataclass(frozen=True)
class TrialDetail:
    """One trial: its index, verdict and fields (its output cut to :data:`OUTPUT_TEXT_CHARS` with its full
    length, an error text to :data:`OUTPUT_CHARS`)."""

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
    """The trials of the rows of an :class:`~trialscore.results.counts.ItemCounts`, column by column.

    Row ``r``'s trials are at positions ``starts[r]`` to ``starts[r + 1]``, in trial order (input
    order where the input numbers no trial; ``trial`` is then the position among the row's trials).
    ``score``, ``cost``, ``latency``, ``tokens`` (a total: input and output) and ``steps`` are
    ``float64`` (NaN: unknown); the other fields are lists (None: unknown), ``tool_calls`` the
    JSON text of each trial's calls (:meth:`calls` reads them); ``fields`` are the fields the
    input had.  ``judge_calls`` is False when the grader results read (before any :meth:`take`) never
    name ``"calls"`` in their JSON: no ``llm_judge`` listed its calls (True: some may have).
    """

    starts: NDArray[np.int64]
    trial: list[int]
    verdicts: str
    fields: frozenset[str]
    score: NDArray[np.float64]
    cost: NDArray[np.float64]
    latency: NDArray[np.float64]
    output: list[str | None]
    output_chars: list[int]
    error: list[str | None]
    graders: list[tuple[Grader, ...]]
    started_at: list[str | None]
    target: list[str | None]
    category: list[str | None]
    run_id: list[str | None]
    suite: list[str | None]
    tokens: NDArray[np.float64]
    steps: NDArray[np.float64]
    tool_calls: list[str | None]
    judge_calls: bool

    def calls(self, index: int) -> tuple[ToolCall, ...] | None:
        """Trial ``index``'s tool calls (None: not recorded); JSON that is not a list of calls is an error."""
        text = self.tool_calls[index]
        if text is None:
            return None
        from trialscore.results.trajectory import ToolCall

        try:
            value = json.loads(text)
            if not isinstance(value, list) or not all(isinstance(call, dict) for call in value):
                raise EvaluationError(f"tool_calls must be a list of call objects; got {describe(value)}")
            return tuple(ToolCall(**call) for call in value)
        except (ValueError, RecursionError) as exc:
            raise EvaluationError(f"trial {self.trial[index]}: tool_calls: {exc}") from exc

    @property
    def detailed(self) -> bool:
        """Whether the input had trial detail (scores, costs, latencies, outputs, errors or graders)."""
        return bool(self.fields & DRAWER_FIELDS)

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

    def take(self, rows: NDArray[np.int64]) -> TrialColumns:
        """The trials of the counted rows ``rows`` (positions, in order)."""
        sizes = np.diff(self.starts)[rows]
        picked = np.concatenate(
            [
                np.zeros(0, np.int64),
                *(np.arange(self.starts[row], self.starts[row + 1]) for row in rows.tolist()),
            ]
        ).astype(np.int64)
        order = picked.tolist()
        lists = {
            name: [getattr(self, name)[index] for index in order]
            for name in (*_LISTS, "trial", "output_chars", "graders")
        }
        return TrialColumns(
            starts=np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64),
            verdicts="".join(self.verdicts[index] for index in order),
            fields=self.fields,
            score=self.score[picked],
            cost=self.cost[picked],
            latency=self.latency[picked],
            tokens=self.tokens[picked],
            steps=self.steps[picked],
            judge_calls=self.judge_calls,
            **lists,
        )


def _known(value: float) -> float | None:
    return None if math.isnan(value) else float(value)


# ------------------------------------------------------------------------------------------ reading


def field_columns(
    scan: Scan, available: Mapping[str, str], fields: Collection[str], verdict: str | None
) -> dict[str, tuple[str, str]]:
    """Field -> (column, DuckDB type) of each field asked for that the input has; ``"verdict"`` too (the
    column that tells a borderline failure), and ``"score"`` from the score an outcome is judged by."""
    found: dict[str, tuple[str, str]] = {}
    for name in fields:
        column = next((column for column in TRIAL_FIELDS[name] if column in available), None)
        if name == "score" and scan.columns.outcome == "score":
            column = scan.columns.outcome_column
        if column is not None:
            found[name] = (column, available[column])
    verdict = verdict if verdict is not None else "verdict"
    if verdict in available:
        found["verdict"] = (verdict, available[verdict])
    return found


def _text_sql(column: str, type_name: str) -> str:
    """SQL: the column as text (JSON text for nested values)."""
    name = quote_identifier(column)
    upper = type_name.upper()
    if upper == "VARCHAR":
        return name
    if upper == "JSON":
        return f"CASE WHEN json_type({name}) = 'VARCHAR' THEN {name}->>'$' ELSE {name}::VARCHAR END"
    if "[" in upper or upper.startswith(("STRUCT", "MAP", "UNION")):
        return f"to_json({name})::VARCHAR"
    return f"CAST({name} AS VARCHAR)"


def _number_sql(column: str, type_name: str) -> str:
    """SQL: the column as a DOUBLE, NULL for anything but a number (or text spelling one)."""
    name = quote_identifier(column)
    upper = type_name.upper()
    if upper in ("VARCHAR", "JSON"):
        return f"TRY_CAST(trim({_text_sql(column, type_name)}) AS DOUBLE)"
    if upper == "BOOLEAN" or "[" in upper or upper.startswith(("STRUCT", "MAP", "UNION")):
        return "CAST(NULL AS DOUBLE)"
    return f"TRY_CAST({name} AS DOUBLE)"


def _tokens_sql(column: str, type_name: str) -> str:
    """SQL: tokens used as a DOUBLE: a count, or the sum of an object's ``input`` and ``output`` (the
    trial record's :class:`~trialscore.results.trajectory.TokenUsage`), NULL for anything else."""
    upper = type_name.upper()
    if upper.startswith("STRUCT") and "INPUT" in upper and "OUTPUT" in upper:
        name = quote_identifier(column)
        return f"TRY_CAST(struct_extract({name}, 'input') + struct_extract({name}, 'output') AS DOUBLE)"
    if upper not in ("VARCHAR", "JSON"):
        return _number_sql(column, type_name)
    text = f"trim({_text_sql(column, type_name)})"
    part = "TRY_CAST(json_extract_string({0}, '$.{1}') AS DOUBLE)"
    summed = f"{part.format(text, 'input')} + {part.format(text, 'output')}"
    return (
        f"coalesce(TRY_CAST({text} AS DOUBLE), "
        f"CASE WHEN json_valid({text}) AND starts_with({text}, '{{') THEN {summed} END)"
    )


def _left_sql(text: str, chars: int) -> str:
    """SQL: the first ``chars`` characters of ``text`` (SQL of a text), as ``left`` cuts them.

    A text no longer than that (most outputs) is kept as it is, as ``length`` tells: both count code
    points, and ``left`` of every text makes the fetch of 10,000 2 KB outputs take 2.5x as long."""
    return f"CASE WHEN length({text}) <= {chars} THEN {text} ELSE left({text}, {chars}) END"


def trial_sql(
    scan: Scan, roles: Mapping[str, tuple[str, Role]], found: Mapping[str, tuple[str, str]], skip: bool
) -> str:
    """SQL: one row per trial of ``scan`` in its order: group values, item, trial, verdict letter,
    whether the row is invalid (when bad rows are skipped), and the fields ``found``."""
    groups = [
        f"{group_value(name, scan.types[name])} AS g{index}" for index, name in enumerate(scan.columns.groups)
    ]
    outcome = roles[scan.columns.outcome][1].value
    failed = "'f'"
    if "verdict" in found:
        said = f"lower(trim({_text_sql(*found['verdict'])}))"
        failed = f"CASE WHEN {said} = 'borderline' THEN 'b' ELSE 'f' END"
    selected = [
        *groups,
        f"{roles['item'][1].value} AS item",
        f"{roles['trial'][1].value if 'trial' in roles else 'CAST(NULL AS BIGINT)'} AS trial",
        f"CASE WHEN {outcome} THEN 'p' WHEN NOT {outcome} THEN {failed} ELSE 'e' END AS letter",
        f"coalesce({any_bad(roles, grouped=True) if skip else 'false'}, false) AS bad",
    ]
    for name, (column, type_name) in found.items():
        if name == "tokens":
            selected.append(f"{_tokens_sql(column, type_name)} AS {name}")
        elif name in _NUMBERS:
            selected.append(f"{_number_sql(column, type_name)} AS {name}")
        elif name in _CUT:
            text = _text_sql(column, type_name)
            chars = OUTPUT_TEXT_CHARS if name == "output" else OUTPUT_CHARS
            selected.append(f"{_left_sql(text, chars)} AS {name}")
            if name == "output":
                selected.append(f"coalesce(length({text}), 0) AS output_chars")
        elif name != "verdict":
            selected.append(f"{_text_sql(column, type_name)} AS {name}")
    return f"SELECT {', '.join(selected)} FROM {scan.relation}"


def read_trial_rows(
    con: duckdb.DuckDBPyConnection,
    scan: Scan,
    roles: Mapping[str, tuple[str, Role]],
    found: Mapping[str, tuple[str, str]],
    skip: bool,
) -> Columns:
    """The valid trial rows of ``scan`` in its order, with ``position``: each row's index in the scan."""
    table = fetch(con, trial_sql(scan, roles, found, skip), masked=True)
    table["position"] = np.arange(len(table["item"]), dtype=np.int64)
    keep = ~table.pop("bad").astype(bool)
    if not keep.all():
        table = {name: column[keep] for name, column in table.items()}
    return table


class TrialParts:
    """The trial rows of every counted input, put in the order of the counts (see :class:`TrialColumns`).

    ``add`` takes one input's rows with its group columns ``g0, g1, ...`` already full; ``locate``
    names a row of that input by its ``position`` (``"line 6"``) when it repeats a trial.
    """

    def __init__(self, fields: Collection[str]) -> None:
        self.fields = frozenset(fields)
        self._parts: list[Columns] = []
        self._where: list[tuple[str, Callable[[int], str]]] = []

    def add(self, label: str, rows: Columns, locate: Callable[[int], str]) -> None:
        """Keep one input's trial rows."""
        rows = dict(rows)
        rows["part"] = np.full(len(rows["item"]), len(self._parts), dtype=np.int64)
        self._parts.append(rows)
        self._where.append((label, locate))

    def columns(self, counted: Columns, by: Sequence[str], check: bool) -> TrialColumns:
        """Every input's trials in the order of the ``counted`` rows (the sink's sorted counts, with
        their group columns ``g0, g1, ...``, ``item``, ``graded`` and ``errored``), each row's in trial
        order.  With ``check``, a repeated trial is an error naming it."""
        groups = [f"g{index}" for index in range(len(by))]
        names = {name for part in self._parts for name in part}
        table: Columns = {}
        for name in names:
            table[name] = np.concatenate([_column(part, name) for part in self._parts])
        trial = floats(table["trial"])
        varying = [name for name in groups if len(set(counted[name].tolist())) > 1]  # one value orders none
        keys = [_ranks(table[name]) for name in reversed((*varying, "item"))]
        ranked = np.lexsort((table["position"], table["part"], trial, *keys))
        table = {name: column[ranked] for name, column in table.items()}
        sizes = integers(counted["graded"]) + integers(counted["errored"])
        starts = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        if len(ranked) != starts[-1] or (table["item"][starts[:-1]] != counted["item"]).any():
            raise AssertionError("the trials read are not those counted")  # pragma: no cover
        trial = trial[ranked]
        if check:
            self._check_repeated(table, by, trial, starts)
        return _columns(table, trial, starts, self.fields & names)

    def _check_repeated(
        self, table: Columns, by: Sequence[str], trial: NDArray[np.float64], starts: NDArray[np.int64]
    ) -> None:
        """A (group, item, trial) twice is an error naming the later row's input and place."""
        row_of = np.repeat(np.arange(len(starts) - 1), np.diff(starts))
        same = (row_of[1:] == row_of[:-1]) & (trial[1:] == trial[:-1])
        if not same.any():
            return
        later = int(np.flatnonzero(same)[0]) + 1
        label, locate = self._where[int(table["part"][later])]
        keys = [(name, table[f"g{index}"][later]) for index, name in enumerate(by)]
        shown = [f"{name} {value!r}" for name, value in keys if value is not None or name == "target"]
        named = ", ".join([name for name, value in keys if value is not None or name == "target"])
        raise EvaluationError(
            f"{label} {locate(int(table['position'][later]))}: case {table['item'][later]!r}"
            f"{f' ({chr(44).join(shown)})' if shown else ''} has trial {int(trial[later])} twice; "
            f"each ({named + ', ' if named else ''}case, trial) must appear once"
        )


def counted_rows(
    item: NDArray[np.object_], c: NDArray[np.int64], failed: NDArray[np.int64], errored: NDArray[np.int64]
) -> Columns:
    """Trial rows of per-item counts whose trial order is not known: passes, then failures, then errors."""
    sizes = c + failed + errored
    letters = "".join(
        "p" * int(a) + "f" * int(b) + "e" * int(e) for a, b, e in zip(c, failed, errored, strict=True)
    )
    return {
        "item": np.repeat(item, sizes),
        "trial": np.full(int(sizes.sum()), np.nan),
        "letter": strings(list(letters)),
        "position": np.arange(int(sizes.sum()), dtype=np.int64),
    }


def _ranks(column: NDArray[np.generic]) -> NDArray[np.int64]:
    """Each value's rank among the column's distinct values in the counts' order (text, nulls last)."""
    values = column.tolist()
    distinct = sorted(set(values), key=lambda value: (value is None, "" if value is None else value))
    rank = {value: index for index, value in enumerate(distinct)}
    return np.fromiter(map(rank.__getitem__, values), np.int64, len(values))


def _column(part: Columns, name: str) -> NDArray[np.generic]:
    """A part's column, or unknown values where the part lacks it."""
    if name in part:
        return part[name]
    size = len(part["item"])
    if name in _NUMBERS or name == "trial":
        return np.full(size, np.nan)
    if name == "output_chars":
        return np.zeros(size, dtype=np.int64)
    return strings([None] * size)


def _cut(text: object) -> str | None:
    return None if text is None else str(text)[:OUTPUT_CHARS]


def _number(value: object) -> float | None:
    """A JSON number as a float; anything else, and numbers that are not finite, as None (unknown)."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def _graders_of(value: object) -> tuple[Grader, ...]:
    """The graders of one trial from its ``grader_results`` (entries that are not objects are left out)."""
    out = []
    for grader in value if isinstance(value, list) else ():
        if isinstance(grader, dict):
            passed = grader.get("passed")
            out.append(
                (
                    str(grader.get("name", "")),
                    _number(grader.get("score")),
                    passed if isinstance(passed, bool) else None,
                    _cut(grader.get("reason")),
                )
            )
    return tuple(out)


def _graders(texts: list[str | None]) -> list[tuple[Grader, ...]]:
    """The graders of each trial from the JSON text of its ``grader_results`` (each text parsed once)."""
    parsed: dict[str, tuple[Grader, ...]] = {}
    out: list[tuple[Grader, ...]] = []
    for text in texts:
        if text is None:
            out.append(())
            continue
        known = parsed.get(text)
        if known is None:
            try:
                known = _graders_of(json.loads(text))
            except (ValueError, RecursionError):
                known = ()
            parsed[text] = known
        out.append(known)
    return out


def _finite(column: NDArray[np.generic]) -> NDArray[np.float64]:
    values = floats(column)
    values[~np.isfinite(values)] = np.nan
    return values


def _columns(
    table: Columns, trial: NDArray[np.float64], starts: NDArray[np.int64], fields: frozenset[str]
) -> TrialColumns:
    """The sorted trial rows as :class:`TrialColumns` (an unnumbered trial: its position in its row)."""
    size = len(trial)
    if np.isnan(trial).any():
        rank = np.arange(size) - np.repeat(starts[:-1], np.diff(starts))
        trial = np.where(np.isnan(trial), rank, trial)

    def texts(name: str) -> list[str | None]:
        return table[name].tolist() if name in table else [None] * size

    graders = texts("graders")
    return TrialColumns(
        starts=starts,
        trial=trial.astype(np.int64).tolist(),
        verdicts="".join(table["letter"].tolist()),
        fields=fields,
        score=_finite(table["score"]) if "score" in table else np.full(size, np.nan),
        cost=_finite(table["cost"]) if "cost" in table else np.full(size, np.nan),
        latency=_finite(table["latency"]) if "latency" in table else np.full(size, np.nan),
        output=texts("output"),
        output_chars=table["output_chars"].astype(np.int64).tolist()
        if "output_chars" in table
        else [0] * size,
        error=texts("error"),
        graders=_graders(graders),
        started_at=texts("started_at"),
        target=texts("target"),
        category=texts("category"),
        run_id=texts("run_id"),
        suite=texts("suite"),
        tokens=_finite(table["tokens"]) if "tokens" in table else np.full(size, np.nan),
        steps=_finite(table["steps"]) if "steps" in table else np.full(size, np.nan),
        tool_calls=texts("tool_calls"),
        judge_calls='"calls"' in "\n".join(filter(None, graders)),
    )
