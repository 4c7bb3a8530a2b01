"""Judged trials: the runner's trial records with their judge calls, and grades read from any input.

A trial graded by an LLM judge is judged, not checked: its verdict is what the judge would say.
Several grades of the same trial show how far judges agree.  They come from

* **the runner's judge calls**: an ``llm_judge`` grader with ``judges`` (a panel) or ``repeats``
  stores every call in its grader result (:class:`~trialscore.results.records.JudgeGrade`); the
  judges are the coders, each call's ``repeat`` its repeat;
* **several scorers of one trial**: an inspect_ai task with two scorers, promptfoo assertions,
  deepeval metrics (the readers split these into ``scorer`` groups); each scorer is a judge;
* **a long table**, one row per grade: the item and trial columns, a judge column
  (``judge_col``, default ``judge``), an optional repeat column (``repeat_col``) and the grade in
  ``passed`` or ``score`` (in [0, 1]: divide a 1-5 scale by 5; the ordinal and interval alphas
  are unchanged by it; a table of scores alone needs no pass column or threshold when the
  scores are compared, ``grade="score"``).

:func:`read_grades` reads any of these into :class:`GradeSet` values, each holding a
:class:`~trialscore.stats._grades.GradeTable` whose item is the case (the bootstrap's unit) and
whose trial is the graded output (the target and trial index: outputs of two targets on one case
are two units of the same item).  Errored calls and errored trials are missing grades, never
failures.  :func:`trial_records` loads the runner's records themselves (run folder, summary,
trials.jsonl or a stored run).

>>> from trialscore.results.records import GraderResult, JudgeGrade, TrialRecord
>>> calls = lambda *v: tuple(JudgeGrade(judge=j, repeat=0, score=float(p), passed=p) for j, p in v)
>>> records = [TrialRecord(case_id=f"q{i}", trial=0, passed=True, verdict="pass", grader_results=(
...     GraderResult(name="llm_judge", score=1.0, passed=True, calls=calls(("a", i % 2 == 0), ("b", True))),))
...     for i in range(4)]
>>> (grades,) = record_grades(records)
>>> grades.name, grades.table.judges, grades.table.inter_judge()[0].tolist()
('llm_judge', ('a', 'b'), [[1.0, 1.0], [0.0, 1.0], [1.0, 1.0], [0.0, 1.0]])
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from trialscore._validate import check_choice
from trialscore.errors import EvaluationError, MissingColumnError, parameter
from trialscore.results.formats import jsonl, run_folder
from trialscore.results.formats._text import first_line, head_text, json_lines, lines, parse_json

if TYPE_CHECKING:
    from trialscore.results.columns import ColumnMap
    from trialscore.results.readers import RecordSource
    from trialscore.results.records import TrialRecord
    from trialscore.stats._grades import GradeTable

__all__ = [
    "JUDGE_ONLY",
    "GradeSet",
    "has_judge_calls",
    "judged_inputs",
    "read_grades",
    "record_grades",
    "trial_records",
]

#: What every judged figure says when no human label calibrates it.
JUDGE_ONLY = "judge-only: not calibrated against human labels"

#: Which value of a grade the tables hold: the verdict (1 pass, 0 fail) or the score in [0, 1].
Grade = Literal["passed", "score"]
GRADES = {"passed": "passed", "score": "score"}

_RECORD_KEYS = frozenset({"case_id", "trial", "passed", "verdict"})


@dataclass(frozen=True)
class GradeSet:
    """One set of grades of the same trials: ``table`` and where they came from.

    ``name`` is the grader (judge calls of the runner), ``scorers`` or the judge column;
    ``source`` says which of the three kinds (module docstring); ``targets`` the targets whose
    outputs were graded (pooled: each output is its own unit).
    """

    name: str
    source: str
    table: GradeTable
    targets: tuple[str | None, ...]

    def to_dict(self) -> dict[str, Any]:
        """What the set is, without its grades."""
        table = self.table
        return {
            "name": self.name,
            "source": self.source,
            "judges": [str(judge) for judge in table.judges],
            "repeats": len(table.repeats),
            "items": len(table.items),
            "grades": table.rows,
            "targets": list(self.targets),
        }


def _trials_file(path: Path) -> Path | None:
    """The runner's trials.jsonl that ``path`` is or stands for (None: another kind of input)."""
    if run_folder.sniff(path):
        return run_folder.trials_file(path)
    if path.is_file() and jsonl.sniff(path):
        head = head_text(path)
        try:
            first = parse_json(first_line(head or ""), str(path))
        except EvaluationError:
            return None
        if isinstance(first, dict) and _RECORD_KEYS <= first.keys():
            return path
    return None


def trial_records(source: str | Path | RecordSource) -> tuple[str, list[TrialRecord]] | None:
    """The runner's trial records of a run folder, its summary.json, a trials.jsonl or a stored run,
    with the input's label; None for an input of another kind.

    Every line must be a valid :class:`~trialscore.results.records.TrialRecord`: a bad one raises
    an error naming the file and line.
    """
    from trialscore.results.readers import RecordSource
    from trialscore.results.records import TrialRecord

    if isinstance(source, RecordSource):
        return source.label, list(source.records)
    path = Path(source)
    trials = _trials_file(path)
    if trials is None:
        return None
    records = []
    for number, value in json_lines(trials):
        where = f"{trials} line {number}"
        if not isinstance(value, dict):
            raise EvaluationError(
                f"{where}: a trial record must be a JSON object; got {type(value).__name__}"
            )
        records.append(TrialRecord.from_dict(value, where))
    if not records:
        raise EvaluationError(f"{trials}: holds no trials")
    return str(path), records


def has_judge_calls(records: Iterable[TrialRecord]) -> bool:
    """Whether any trial was graded by an ``llm_judge`` (its grader result lists judge calls)."""
    return any(result.calls is not None for record in records for result in record.grader_results)


def judged_inputs(sources: Sequence[str | Path | RecordSource]) -> bool:
    """Whether any input is the runner's trials with judge calls: its figures are judged.

    Reads no more than it must: a trials file line by line, each line parsed only when it holds
    a ``"calls"`` key, up to the first judged trial.
    """
    from trialscore.results.readers import RecordSource

    for source in sources:
        if isinstance(source, RecordSource):
            if has_judge_calls(source.records):
                return True
            continue
        trials = _trials_file(Path(source))
        if trials is None:
            continue
        for _, raw in lines(trials):
            if b'"calls"' not in raw:
                continue
            try:
                value = json.loads(raw)
            except (ValueError, RecursionError):
                continue
            graders = value.get("grader_results") if isinstance(value, dict) else None
            if any(isinstance(g, dict) and g.get("calls") is not None for g in graders or ()):
                return True
    return False


def _value(passed: bool | None, score: float | None, grade: str) -> float:
    if passed is None:
        return math.nan
    if grade == "passed":
        return float(passed)
    return math.nan if score is None else float(score)


def record_grades(records: Sequence[TrialRecord], grade: Grade = "passed") -> list[GradeSet]:
    """One :class:`GradeSet` per ``llm_judge`` grader (by name) of the runner's records: its calls.

    ``grade`` is ``"passed"`` (each call's verdict, 1 or 0) or ``"score"`` (each call's score).
    An errored call is a missing grade; an errored trial has none.
    """
    from trialscore.stats._grades import grade_table

    chosen = check_choice(grade, "grade", GRADES)
    rows: dict[str, list[tuple[Hashable, Hashable, Hashable, Hashable, float]]] = {}
    targets: dict[str, dict[str | None, None]] = {}
    for record in records:
        for result in record.grader_results:
            if result.calls is None:
                continue
            own = rows.setdefault(result.name, [])
            targets.setdefault(result.name, {})[record.target] = None
            for call in result.calls:
                value = _value(call.passed, call.score, chosen)
                if not math.isnan(value):
                    own.append(
                        (record.case_id, (record.target, record.trial), call.judge, call.repeat, value)
                    )
    return [
        GradeSet(name, "judge calls", grade_table(found), tuple(targets[name]))
        for name, found in rows.items()
        if found
    ]


def _count_grades(counts: Any, judge: str | None, repeat: str | None, grade: str) -> list[tuple[Any, ...]]:
    """Long rows (item, unit, judge, repeat, grade) from counts read with trial detail, one judge per
    value of the group key ``judge`` (and repeat per ``repeat``); other group keys make the unit."""
    trials = counts.trials
    others = [i for i, name in enumerate(counts.by) if name not in (judge, repeat)]
    judge_at = counts.by.index(judge) if judge is not None else None
    repeat_at = counts.by.index(repeat) if repeat is not None else None
    rows = []
    for row, item in enumerate(counts.item.tolist()):
        rest = tuple(counts.group_values[i][row] for i in others)
        coder = counts.group_values[judge_at][row] if judge_at is not None else None
        again = counts.group_values[repeat_at][row] if repeat_at is not None else 0
        for position in range(int(trials.starts[row]), int(trials.starts[row + 1])):
            letter = trials.verdicts[position]
            passed = None if letter == "e" else letter == "p"
            score = float(trials.score[position])
            value = _value(passed, None if math.isnan(score) else score, grade)
            if not math.isnan(value):
                rows.append((item, (*rest, trials.trial[position]), coder, again, value))
    return rows


def read_grades(
    inputs: Sequence[str | Path | RecordSource],
    *,
    judge_col: str = "judge",
    repeat_col: str | None = None,
    grade: Grade = "passed",
    columns: ColumnMap | None = None,
    skip_invalid: bool = False,
    input_format: str | None = None,
) -> list[GradeSet]:
    """Every set of several grades per trial the inputs hold (module docstring), for agreement.

    The runner's records give one set per ``llm_judge`` grader; other inputs one set, of their
    scorers or of the long table's ``judge_col`` (and ``repeat_col``).  ``grade`` picks each
    grade's verdict (``"passed"``) or score (``"score"``).  An input holding one grade per trial
    is an error saying what is needed.

    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "grades.csv"
    >>> _ = path.write_text("case_id,trial,judge,passed\\nq1,0,a,1\\nq1,0,b,1\\nq2,0,a,0\\nq2,0,b,1\\n")
    >>> (found,) = read_grades([path])
    >>> found.source, found.table.judges, found.table.inter_judge()[0].tolist()
    ('long table', ('a', 'b'), [[1.0, 1.0], [0.0, 1.0]])
    """
    chosen = check_choice(grade, "grade", GRADES)
    loaded = [trial_records(source) for source in inputs]
    if all(found is not None for found in loaded):
        records = [record for found in loaded if found is not None for record in found[1]]
        sets = record_grades(records, "score" if chosen == "score" else "passed")
        if not sets:
            names = ", ".join(found[0] for found in loaded if found is not None)
            raise EvaluationError(
                f"{names}: holds no judge calls; agreement needs trials graded by an llm_judge with "
                "judges (a panel) or repeats"
            )
        return sets
    if any(found is not None for found in loaded):
        raise EvaluationError(
            "inputs must be all runner trial records (judge calls) or all other tables; got a mix"
        )
    return [_table_grades(inputs, judge_col, repeat_col, chosen, columns, skip_invalid, input_format)]


def _table_grades(
    inputs: Sequence[str | Path | RecordSource],
    judge_col: str,
    repeat_col: str | None,
    grade: str,
    columns: ColumnMap | None,
    skip_invalid: bool,
    input_format: str | None,
) -> GradeSet:
    from trialscore.results.columns import ColumnMap
    from trialscore.results.readers import SCORER, read_counts
    from trialscore.stats._grades import grade_table

    columns = columns or ColumnMap()
    if grade == "score" and columns.threshold is None and columns.passed is None:
        columns = dataclasses.replace(columns, threshold=0.5)  # lets a table of scores alone be read
    options: dict[str, Any] = {
        "columns": columns,
        "skip_invalid": skip_invalid,
        "input_format": input_format,
        "detail": ("score",),
    }
    by = (judge_col,) if repeat_col is None else (judge_col, repeat_col)
    try:
        counts = read_counts(inputs, by=by, **options)
        judge, repeat, source, name = judge_col, repeat_col, "long table", f"judge column {judge_col!r}"
    except MissingColumnError as exc:
        if exc.column not in by or exc.role != "group":
            raise
        counts = read_counts(inputs, **options)
        if SCORER not in counts.by:
            raise EvaluationError(
                f"{exc.column!r} is not a column of the inputs and they hold one grade per trial; "
                "agreement needs several: judge calls of the runner (an llm_judge with judges or repeats), "
                "several scorers of one trial (inspect_ai, promptfoo, deepeval), or a long table with a "
                f"judge column ({parameter('judge_col')}; columns: {', '.join(exc.available)})"
            ) from exc
        judge, repeat, source, name = SCORER, None, "scorers", "scorers"
    rows = _count_grades(counts, judge, repeat, grade)
    if not rows:
        raise EvaluationError(
            f"the inputs hold no {grade} grade of any trial (every trial errored or lacks it)"
        )
    target_at = counts.by.index("target") if "target" in counts.by else None
    targets = (
        tuple(dict.fromkeys(counts.group_values[target_at].tolist())) if target_at is not None else (None,)
    )
    return GradeSet(name, source, grade_table(rows), targets)
