"""Per-case results in the seed-003 output format (the runner's ``cases.jsonl``), as trial rows.

Each case is a JSON object (one per line of a ``.jsonl`` file, or the elements
of a JSON array)::

    {"eval_id": "case-1", "score": 0.8, "verdict": "pass",
     "trials": [{"attempt": 0, "score": 0.6, "verdict": "borderline"},
                {"attempt": 1, "score": 0.9, "verdict": "pass"}],
     "aggregation": {"strategy": "pass_at_k", "passed_attempts": 1, "total_attempts": 2}}

Every entry of ``trials`` becomes one trial row: ``case_id`` from ``eval_id``,
``trial`` from ``attempt``, and its ``verdict``, ``score`` and ``cost_usd``.  A
case without ``trials`` is the single-trial shape: one trial, attempt 0, with
the case's own verdict and score.  Other top-level fields with a plain value
(``target``, ``category``, ``dataset``...) are copied to every trial of the
case, so they can be group keys.  Trials a cost limit stopped (``cost_limited``)
are simply not there: the case has fewer trials.

>>> table = case_result_table_from_cases(
...     [("line 1", {"eval_id": "c1", "verdict": "pass", "score": 1.0, "target": "m",
...                  "trials": [{"attempt": 0, "score": 1.0, "verdict": "pass"},
...                             {"attempt": 1, "score": 0.2, "verdict": "fail"}]})])
>>> list(table.columns["verdict"]), table.where
(['pass', 'fail'], ('line 1 trial 1', 'line 1 trial 2'))
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from trialscore.errors import EvaluationError
from trialscore.results.formats._text import first_json_object, head_text, lines, load_json, parse_json
from trialscore.results.tally import LongTable, Skips, text_value

if TYPE_CHECKING:
    from trialscore.results.sink import TrialSink

__all__ = [
    "MAPS",
    "NAME",
    "SUFFIXES",
    "SUMMARY",
    "case_result_table",
    "case_result_table_from_cases",
    "read",
    "sniff",
]

NAME = "cases"
SUMMARY = "seed-003 per-case results (the runner's cases.jsonl): JSON Lines or a JSON array of cases"
MAPS = (
    "item from eval_id; each entry of trials is a trial (trial from attempt, outcome from verdict, or "
    "score with a threshold); other plain top-level fields (target, category, ...) are group keys"
)
SUFFIXES = (".jsonl", ".json")

_CASE_KEYS = ("eval_id", "score", "verdict", "trials", "aggregation", "cost_limited", "cost_usd", "ci95")
_TRIAL_FIELDS = ("score", "verdict", "cost_usd")


class _NotJson:
    """A line that did not parse (reported, or skipped, by the table builder)."""

    def __init__(self, reason: str) -> None:
        self.reason = reason


def _plain(value: object) -> bool:
    return value is None or isinstance(value, (str, int, float, bool))


def _case_trials(case: dict[str, object]) -> list[dict[str, object]]:
    """The case's trial objects (the case itself for the single-trial shape)."""
    trials = case.get("trials")
    if trials is None:
        return [{"attempt": 0, **{name: case.get(name) for name in _TRIAL_FIELDS}}]
    if not isinstance(trials, list) or not trials:
        raise EvaluationError(f"field 'trials' must be a non-empty list of trial objects; got {trials!r:.60}")
    for position, trial in enumerate(trials):
        if not isinstance(trial, dict):
            raise EvaluationError(f"field 'trials[{position}]' must be a trial object; got {trial!r:.60}")
    return trials


def case_result_table_from_cases(
    cases: Iterable[tuple[str, object]], skip_invalid: bool = False
) -> LongTable:
    """Trial rows of ``(where, case)`` pairs; a case that is not an object or has bad ``trials``
    raises (or, with ``skip_invalid``, is skipped and counted as one row)."""
    columns: dict[str, list[str | None]] = {
        "case_id": [],
        "trial": [],
        "score": [],
        "verdict": [],
        "cost_usd": [],
    }
    where: list[str] = []
    skips = Skips(skip_invalid, "cases")
    for location, case in cases:
        try:
            if isinstance(case, _NotJson):
                raise EvaluationError(f"not valid JSON: {case.reason}")
            if not isinstance(case, dict):
                raise EvaluationError(f"expected a case object; got {case!r:.60}")
            trials = _case_trials(case)
        except EvaluationError as exc:
            skips.note(location, exc)
            continue
        extras = {key: value for key, value in case.items() if key not in _CASE_KEYS and _plain(value)}
        for key in extras:
            if key not in columns:
                columns[key] = [None] * len(where)
        for position, trial in enumerate(trials):
            columns["case_id"].append(text_value(case.get("eval_id")))
            columns["trial"].append(text_value(trial.get("attempt")))
            for name in _TRIAL_FIELDS:
                columns[name].append(text_value(trial.get(name)))
            for key in columns:
                if key not in ("case_id", "trial", *_TRIAL_FIELDS):
                    columns[key].append(text_value(extras.get(key)))
            where.append(f"{location} trial {position + 1}")
    return LongTable(columns, tuple(where), skips.count, skips.first)


def sniff(path: Path) -> bool:
    """JSON whose first case object (first line, or first array element) has an ``eval_id``."""
    head = head_text(path)
    if head is None:
        return False
    stripped = head.lstrip()
    if stripped.startswith("["):
        return '"eval_id"' in stripped.split("}", 1)[0]
    first = first_json_object(head)
    return first is not None and "eval_id" in first


def read(path: Path, sink: TrialSink) -> None:
    """Add the trials of every case to ``sink``; bad cases raise or are skipped and counted."""
    sink.scan_table(str(path), case_result_table(path, sink.skip_invalid))


def _json_lines(path: Path) -> Iterator[tuple[str, object]]:
    for number, line in lines(path):
        if not line.strip():
            continue
        where = f"{path} line {number}"
        try:
            yield where, parse_json(line.decode("utf-8", errors="replace"), where)
        except EvaluationError as exc:
            yield where, _NotJson(str(exc).removeprefix(f"{where}: not valid JSON: "))


def case_result_table(path: Path, skip_invalid: bool = False) -> LongTable:
    """Trial rows of a seed-003 results file (JSON Lines of cases, or a JSON array of cases)."""
    with path.open("r", encoding="utf-8-sig", errors="replace") as handle:
        head = handle.read(4096).lstrip()
    if head.startswith("["):
        cases = load_json(path)
        if not isinstance(cases, list):
            raise EvaluationError(f"{path}: expected a JSON array of cases; got {type(cases).__name__}")
        return case_result_table_from_cases(
            ((f"{path} case {index + 1}", case) for index, case in enumerate(cases)), skip_invalid
        )
    return case_result_table_from_cases(_json_lines(path), skip_invalid)
