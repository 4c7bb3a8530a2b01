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
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trialscore.errors import EvaluationError
from trialscore.results.columns import ColumnMap

__all__ = ["OUTPUT_CHARS", "CaseTrials", "RunData", "TrialDetail", "read_run", "read_runs"]

#: Outputs, error texts and grader reasons longer than this are cut in the page (the full length is shown).
OUTPUT_CHARS = 300

_LETTER = {"pass": "p", "fail": "f", "borderline": "b", "error": "e"}
_RECORD_KEYS = frozenset({"case_id", "trial", "passed", "verdict"})


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
    graders: tuple[tuple[str, float | None, bool | None, str | None], ...]
    started_at: str | None = None


@dataclass
class CaseTrials:
    """The trials of one case of one target: verdict letters in trial order, and their detail."""

    target: str | None
    category: str | None
    case_id: str
    verdicts: str = ""
    details: list[TrialDetail] = field(default_factory=list)
    cost: float | None = None
    detailed: bool = True

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

    @property
    def detailed(self) -> bool:
        """Whether trial detail (outputs, graders, errors) was read."""
        return any(case.detailed for case in self.cases)


def _cut(text: object) -> tuple[str | None, int]:
    if text is None:
        return None, 0
    value = str(text)
    return value[:OUTPUT_CHARS], len(value)


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _parse_all(lines: list[str]) -> list[Any] | None:
    """Every line's JSON object in one parse (fast), or None: then each line is parsed alone.

    Only when every line is one ``{...}`` text and the parse gives one value per line, so no
    value can straddle two lines.
    """
    if not all(line.lstrip().startswith("{") and line.rstrip().endswith("}") for line in lines):
        return None
    try:
        parsed = json.loads("[" + ",".join(lines) + "]")
    except ValueError:
        return None
    return parsed if isinstance(parsed, list) and len(parsed) == len(lines) else None


def _loads(line: str) -> object:
    try:
        return json.loads(line)
    except ValueError:
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


def _graders(data: dict[str, Any]) -> tuple[tuple[str, float | None, bool | None, str | None], ...]:
    out = []
    for grader in data.get("grader_results") or ():
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


def _read_records(path: Path, label: str, skip_invalid: bool) -> RunData:
    """Trial records, one JSON object a line; a bad line names the file, line, field and rule."""
    from trialscore.results.records import TrialRecord

    cases: dict[tuple[str | None, str], CaseTrials] = {}
    trials: dict[tuple[str | None, str], dict[int, tuple[str, TrialDetail]]] = {}
    run_ids: dict[str, None] = {}
    suites: dict[str, None] = {}
    started: str | None = None
    rows = skipped = 0
    first_skipped = None
    with path.open("r", encoding="utf-8-sig") as handle:
        lines = handle.read().splitlines()
    numbered = [(number, line) for number, line in enumerate(lines, 1) if line.strip()]
    parsed = _parse_all([line for _, line in numbered])
    for index, (number, line) in enumerate(numbered):
        if True:
            rows += 1
            where = f"{path} line {number}"
            data = parsed[index] if parsed is not None else _loads(line)
            if not _fast_record(data):
                try:
                    record = TrialRecord.from_json_line(line, where)
                    data = json.loads(record.to_json_line())
                except EvaluationError as exc:
                    if not skip_invalid:
                        raise
                    skipped += 1
                    first_skipped = first_skipped or str(exc)
                    continue
            assert isinstance(data, dict)
            target, case_id = data.get("target"), data["case_id"]
            key = (target, case_id)
            case = cases.get(key)
            if case is None:
                case = cases[key] = CaseTrials(target, data.get("category"), case_id)
            if data.get("run_id"):
                run_ids[str(data["run_id"])] = None
            if data.get("suite"):
                suites[str(data["suite"])] = None
            when = data.get("started_at")
            if isinstance(when, str) and (started is None or when < started):
                started = when
            output, output_chars = _cut(data.get("output"))
            error, _ = _cut(data.get("error"))
            detail = TrialDetail(
                data["trial"],
                data["verdict"],
                _number(data.get("score")),
                _number(data.get("cost_usd")),
                _number(data.get("latency_s")),
                output,
                output_chars,
                error,
                _graders(data),
                when if isinstance(when, str) else None,
            )
            seen = trials.setdefault(key, {})
            if detail.trial in seen:
                raise EvaluationError(
                    f"{where}: case {case_id!r} (target {target!r}) has trial {detail.trial} twice; "
                    "each (target, case, trial) must appear once"
                )
            seen[detail.trial] = (_LETTER[detail.verdict], detail)
    if rows - skipped == 0:
        raise EvaluationError(f"no trials in {path}: it holds no valid trial record")
    for key, case in cases.items():
        ordered = [trials[key][index] for index in sorted(trials[key])]
        case.verdicts = "".join(letter for letter, _ in ordered)
        case.details = [detail for _, detail in ordered]
        costs = [detail.cost for detail in case.details if detail.cost is not None]
        case.cost = float(sum(costs)) if costs else None
    return RunData(
        label,
        ", ".join(run_ids) or None,
        ", ".join(suites) or None,
        started,
        tuple(sorted(cases.values(), key=_case_order)),
        rows,
        skipped,
        first_skipped,
    )


def _case_order(case: CaseTrials) -> tuple[str, str, str]:
    return (case.target or "", case.category or "", case.case_id)


def _is_record_file(path: Path) -> bool:
    with path.open("r", encoding="utf-8-sig") as handle:
        for line in handle:
            if line.strip():
                try:
                    first = json.loads(line)
                except ValueError:
                    return False
                return isinstance(first, dict) and _RECORD_KEYS <= first.keys()
    return False


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


def _read_counts(path: Path, columns: ColumnMap, skip_invalid: bool, input_format: str | None) -> RunData:
    """Per-case counts of any other format: read as ``score`` reads it, grouped by target and category."""
    from trialscore.results.readers import read_counts

    counts = None
    for by in (("target", "category"), ("target",), ("category",), ()):
        try:
            counts = read_counts(
                [path], by=by, columns=columns, skip_invalid=skip_invalid, input_format=input_format
            )
            break
        except EvaluationError as exc:
            if not str(exc).startswith("--by column") or not by:
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
    )


def read_run(
    path: str | Path,
    columns: ColumnMap | None = None,
    skip_invalid: bool = False,
    input_format: str | None = None,
    label: str | None = None,
) -> RunData:
    """Read one run (a file or folder ``score`` reads) into its cases.

    Parameters
    ----------
    path : a run folder, a trial-record file, or any input of :mod:`trialscore.results.formats`
    columns : which column holds what (other formats only; trial records have fixed fields)
    skip_invalid : skip and count invalid rows instead of raising
    input_format : read as this format instead of detecting it
    label : the run's name in the report (default: ``path``)
    """
    path = Path(path)
    columns = columns or ColumnMap()
    records = _records_path(path, input_format, columns)
    if records is not None:
        return _read_records(records, label or str(path), skip_invalid)
    return _read_counts(path, columns, skip_invalid, input_format)


def read_runs(paths: Sequence[str | Path], **options: Any) -> list[RunData]:
    """:func:`read_run` of each path, in order."""
    return [read_run(path, **options) for path in paths]
