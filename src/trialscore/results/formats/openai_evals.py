"""OpenAI evals (``openai/evals``) recorder logs: the JSON Lines ``oaieval ... --record_path`` writes.

``evals.record.LocalRecorder`` writes one log per run: a first line with the run's
``RunSpec``, then (in flush order) the event lines and a ``final_report`` line::

    {"spec": {"completion_fns": ["gpt-4o"], "eval_name": "toy-qa.dev.v0", "base_eval": "toy-qa",
              "split": "dev", "run_config": {...}, "created_by": "", "run_id": "2611...",
              "created_at": "2026-11-22 22:35:46.275934"}}
    {"final_report": {"accuracy": 0.5}, "run_id": "2611..."}
    {"run_id": "2611...", "event_id": 0, "sample_id": "toy-qa.dev.0", "type": "match",
     "data": {"correct": true, "expected": "Paris", "picked": "Paris", ...}, ...}

Each sample of a run is one trial row:

* ``case_id`` is ``sample_id`` (``<base eval>.<split>.<index>``, the same in every run);
* ``passed`` is ``data.correct`` of the sample's ``match`` events (true only when every one
  is correct);
* a sample with an ``error`` event (``evals.record.record_error``) is an **errored** trial,
  even when a ``match`` event follows; so is a sample with events but no ``match``;
* ``target`` is the spec's ``completion_fns`` joined with ``,``, ``category`` its ``eval_name``,
  ``run_id`` its ``run_id``;
* several logs of the same (target, eval) are several runs: ``trial`` is the run's position
  among them, ordered by the spec's ``created_at``, then ``run_id``.

A log with no ``match`` event at all (a model-graded eval records ``metrics`` instead) has
no per-sample pass/fail and is an error saying so.

>>> is_log_head('{"spec": {"completion_fns": ["dummy"], "eval_name": "x.dev.v0"}}')
True
>>> is_log_head('{"spec": {"name": "x"}}')
False
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trialscore.errors import EvaluationError
from trialscore.results.formats._text import first_line, head_keys, head_text, json_lines, member_files
from trialscore.results.tally import LongTable, Skips

if TYPE_CHECKING:
    from trialscore.results.sink import TrialSink

__all__ = [
    "MAPS",
    "NAME",
    "SUFFIXES",
    "SUMMARY",
    "is_log_head",
    "log_files",
    "openai_evals_table",
    "read",
    "sniff",
]

NAME = "openai-evals"
SUMMARY = "OpenAI evals recorder logs (oaieval --record_path run.jsonl), one per run, or a folder of them"
MAPS = (
    "item = sample_id, trial = the run's order by spec created_at (then run_id) among that "
    "(completion_fns, eval)'s logs, outcome = data.correct of the match events (an error event "
    "= errored); group keys target (completion_fns), category (eval_name), run_id"
)
SUFFIXES = (".jsonl",)

#: How ``LocalRecorder`` starts a log: ``{"spec": dataclasses.asdict(run_spec)}``, completion_fns first.
_COLUMNS = ("case_id", "trial", "passed", "target", "category", "run_id")


def is_log_head(text: str) -> bool:
    """Whether ``text`` starts like an evals log: ``{"spec": {"completion_fns": ...``."""
    keys = head_keys(first_line(text))
    return keys is not None and "spec.completion_fns" in keys


def _is_log(path: Path) -> bool:
    head = head_text(path, 4096)
    return head is not None and is_log_head(head)


def log_files(path: Path) -> list[Path]:
    """The logs of ``path``: the file itself, or the ``.jsonl`` files in the folder that are logs."""
    return member_files(path, "*.jsonl", _is_log)


def sniff(path: Path) -> bool:
    """A JSON Lines file whose first line starts ``{"spec": {"completion_fns": ...``, or a folder
    holding such files."""
    if path.is_dir():
        return bool(log_files(path))
    return _is_log(path)


@dataclass
class _Sample:
    """One sample of a run: the line of its first event and what its events said."""

    line: int
    correct: bool = True
    errored: bool = False
    matched: bool = False

    @property
    def passed(self) -> str | None:
        """The ``passed`` text: None (errored) for an error event or no match event."""
        if self.errored or not self.matched:
            return None
        return "true" if self.correct else "false"


@dataclass
class _Run:
    """One log: its spec's fields and each sample's outcome."""

    path: Path
    target: str
    eval_name: str
    run_id: str
    created_at: str
    skips: Skips  # its bad event lines
    samples: dict[str, _Sample] = field(default_factory=dict)
    matches: int = 0


def _spec_text(spec: dict[str, Any], name: str, where: str) -> str:
    value = spec.get(name)
    if not isinstance(value, str) or not value:
        raise EvaluationError(f"{where}: field 'spec.{name}' must be non-empty text; got {value!r:.60}")
    return value


def _spec(path: Path, number: int, line: object) -> tuple[str, str, str, str]:
    """(target, eval_name, run_id, created_at) of a log's first line."""
    where = f"{path} line {number}"
    spec = line.get("spec") if isinstance(line, dict) else None
    if not isinstance(spec, dict):
        raise EvaluationError(f'{where}: an evals log starts with its {{"spec": {{...}}}} line')
    fns = spec.get("completion_fns")
    if not isinstance(fns, list) or not fns or not all(isinstance(fn, str) and fn for fn in fns):
        raise EvaluationError(
            f"{where}: field 'spec.completion_fns' must list the completion function names; got {fns!r:.60}"
        )
    eval_name = _spec_text(spec, "eval_name", where)
    run_id = _spec_text(spec, "run_id", where)
    created_at = spec.get("created_at")
    return ",".join(fns), eval_name, run_id, created_at if isinstance(created_at, str) else ""


def _event(run: _Run, number: int, event: object) -> None:
    """Fold one event line into the run's samples (final reports and other lines are not events)."""
    if not isinstance(event, dict):
        raise EvaluationError(f"expected an event object; got {event!r:.60}")
    if "final_report" in event or "spec" in event:
        return
    kind = event.get("type")
    if not isinstance(kind, str) or not kind:
        raise EvaluationError(
            f"field 'type' must be the event type (match, sampling, error, ...); got {kind!r:.60}"
        )
    sample_id = event.get("sample_id")
    if not isinstance(sample_id, str) or not sample_id:
        raise EvaluationError(f"field 'sample_id' must be non-empty text; got {sample_id!r:.60}")
    correct = None
    if kind == "match":
        data = event.get("data")
        correct = data.get("correct") if isinstance(data, dict) else None
        if not isinstance(correct, bool):
            raise EvaluationError(
                f"field 'data.correct' of a match event must be true or false; got {correct!r:.60}"
            )
    sample = run.samples.setdefault(sample_id, _Sample(number))
    if kind == "error":
        sample.errored = True
    elif correct is not None:
        run.matches += 1
        sample.correct = sample.correct and correct
        sample.matched = True


def _read_run(path: Path, skip_invalid: bool) -> _Run:
    lines = json_lines(path)
    first = next(lines, None)
    if first is None:
        raise EvaluationError(f"no trials in {path}: the file is empty")
    run = _Run(path, *_spec(path, *first), skips=Skips(skip_invalid, "events"))
    for number, event in lines:
        try:
            _event(run, number, event)
        except EvaluationError as exc:
            run.skips.note(f"{path} line {number}", exc)
    if run.samples and not run.matches:
        raise EvaluationError(
            f"{path}: the log has no 'match' events, so no sample has a pass/fail "
            "(trialscore reads data.correct of match events; model-graded evals record 'metrics')"
        )
    return run


def openai_evals_table(files: list[Path], skip_invalid: bool = False) -> LongTable:
    """Trial rows of evals logs (trial = the run's order by created_at within each (target, eval))."""
    runs: dict[tuple[str, str], list[_Run]] = {}
    for file in files:
        run = _read_run(file, skip_invalid)
        runs.setdefault((run.target, run.eval_name), []).append(run)
    columns: dict[str, list[str | None]] = {name: [] for name in _COLUMNS}
    where: list[str] = []
    skipped = 0
    first_skipped: str | None = None
    for same in runs.values():
        for trial, run in enumerate(sorted(same, key=lambda run: (run.created_at, run.run_id))):
            skipped += run.skips.count  # counted in the runs' trial order, as the rows are
            first_skipped = first_skipped or run.skips.first
            for sample_id, sample in run.samples.items():
                values = (sample_id, str(trial), sample.passed, run.target, run.eval_name, run.run_id)
                for name, value in zip(_COLUMNS, values, strict=True):
                    columns[name].append(value)
                where.append(f"{run.path} line {sample.line} (sample {sample_id})")
    return LongTable(columns, tuple(where), skipped, first_skipped)


def read(path: Path, sink: TrialSink) -> None:
    """Add every sample of every log (one file, or a folder of logs) to ``sink``."""
    files = log_files(path)
    if not files:
        raise EvaluationError(f"{path}: the folder holds no evals log (.jsonl starting with a spec line)")
    sink.scan_table(str(path), openai_evals_table(files, sink.skip_invalid))
