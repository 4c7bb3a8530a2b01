"""A run folder, as ``trialscore run --out DIR`` writes it, or its ``summary.json``: read its trials.jsonl.

The runner writes three files (:mod:`trialscore.runner.outputs`): ``trials.jsonl``
(one :class:`~trialscore.results.records.TrialRecord` a line), ``cases.jsonl``
(the same trials per case, seed-003 shape) and ``summary.json`` (aggregates, no
trials).  The folder, or its ``summary.json``, stands for the trials: they are
read from ``trials.jsonl`` alone (reading ``cases.jsonl`` too would count every
trial twice).  A summary with no ``trials.jsonl`` beside it is an error saying so.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from trialscore.errors import EvaluationError, parameter
from trialscore.results.formats import jsonl
from trialscore.results.formats._text import head_text, load_json

if TYPE_CHECKING:
    from trialscore.results.sink import TrialSink

__all__ = ["MAPS", "NAME", "SUFFIXES", "SUMMARY", "read", "sniff", "trials_file"]

NAME = "runner"
SUMMARY = "a run folder (trials.jsonl, cases.jsonl, summary.json) or its summary.json"
MAPS = "the trials.jsonl of the run, read as jsonl (TrialRecord: case_id, trial, passed, target, ...)"
SUFFIXES = ("/", ".json")

#: The runner's file names (trialscore.runner.outputs.write_outputs).
TRIALS, CASES, SUMMARY_FILE = "trials.jsonl", "cases.jsonl", "summary.json"

#: The keys every run summary has (trialscore.runner.summary.build_summary).
_SUMMARY_KEYS = frozenset({"run_id", "suite", "settings", "trials", "targets"})
#: Largest file looked at as a possible summary.
_SUMMARY_BYTES = 64 * 2**20
_SETTINGS_KEY = re.compile(r'"settings"\s*:')


def _is_summary(path: Path) -> bool:
    head = head_text(path, 4096)
    if head is None or not head.lstrip().startswith("{") or not _SETTINGS_KEY.search(head):
        return False
    try:
        if path.stat().st_size > _SUMMARY_BYTES:
            return False
        document = load_json(path)
    except (OSError, EvaluationError):
        return False
    return (
        isinstance(document, dict)
        and _SUMMARY_KEYS <= document.keys()
        and isinstance(document["trials"], dict)
    )


def sniff(path: Path) -> bool:
    """A folder holding the runner's trials.jsonl or summary.json, or a run summary file."""
    if path.is_dir():
        return (path / TRIALS).is_file() or (path / SUMMARY_FILE).is_file()
    return _is_summary(path)


def trials_file(path: Path) -> Path:
    """The trials.jsonl a run folder or run summary stands for (raises when there is none)."""
    if path.is_dir():
        trials = path / TRIALS
        if not trials.is_file():
            raise EvaluationError(
                f"{path}: no {TRIALS} in this folder; give a folder {parameter('run_suite(out=...)')} wrote "
                f"({TRIALS}, {CASES}, {SUMMARY_FILE}) or the trials file itself"
            )
        return trials
    trials = path.parent / TRIALS
    if not trials.is_file():
        raise EvaluationError(
            f"{path}: a run summary holds no trials and there is no {TRIALS} beside it; "
            f"give the run's {TRIALS} or its folder"
        )
    return trials


def read(path: Path, sink: TrialSink) -> None:
    """Read the run's trials.jsonl."""
    jsonl.read(trials_file(path), sink)
