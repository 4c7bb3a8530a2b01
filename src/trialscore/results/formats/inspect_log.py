"""inspect_ai eval logs (``.eval`` and ``.json``, or a folder of them) as trial rows, read by inspect_ai.

Needs the optional extra: ``pip install 'trialscore[inspect]'``.  The log is
read with inspect_ai's documented readers (``read_eval_log(header_only=True)``
for the task and model, ``read_eval_log_sample_summaries`` for the samples), so
message transcripts are never loaded.

Each (sample, epoch, scorer) becomes one trial row:

* ``case_id`` is the sample id, ``trial`` is ``epoch - 1`` (inspect counts epochs from 1);
* ``target`` is the model, ``suite`` the task, ``run_id`` the run, ``scorer`` the scorer name
  (so ``--by scorer`` separates several scorers);
* the score's value goes through inspect_ai's ``value_to_float()`` (``C`` -> 1,
  ``I`` -> 0, ``P`` -> 0.5, booleans, numbers, ``yes``/``no``): ``score`` is that
  number and ``passed`` is true exactly when it is 1 (full credit);
* a sample that errored, or lacks a scorer's score, is an errored trial.

A list or dict score value has no pass/fail reading and is reported as invalid.

A folder (an inspect_ai ``log_dir``) is read log by log: every ``.eval`` file and
every ``.json`` file that is an eval log, in name order, each labelled by its own
path (so ``--by file`` tells them apart).  Other files in the folder are not trials
and are not read.
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trialscore.errors import EvaluationError
from trialscore.results.formats._text import file_keys, head_bytes
from trialscore.results.tally import LongTable, text_value

if TYPE_CHECKING:
    from trialscore.results.sink import TrialSink

__all__ = ["MAPS", "NAME", "SUFFIXES", "SUMMARY", "inspect_log_table", "log_files", "read", "sniff"]

NAME = "inspect"
SUMMARY = "inspect_ai eval log (.eval or .json), or a folder of them (needs the inspect extra)"
MAPS = (
    "item = sample id, trial = epoch - 1, outcome = score value == 1 (value_to_float); group keys "
    "target (model), suite (task), run_id, scorer"
)
SUFFIXES = (".eval", ".json")

_ZIP = b"PK\x03\x04"
#: Keys of an inspect_ai JSON log (``EvalLog``), whatever their order.
_JSON_LOG = frozenset({"version", "status", "eval"})


def _is_log_file(path: Path) -> bool:
    if head_bytes(path, len(_ZIP)) == _ZIP:
        try:
            with zipfile.ZipFile(path) as archive:
                names = archive.namelist()
        except (OSError, zipfile.BadZipFile):
            return False
        return any(name == "header.json" or name.startswith("_journal/") for name in names)
    return _JSON_LOG <= file_keys(path)


def log_files(folder: Path) -> list[Path]:
    """The inspect_ai logs directly in ``folder``, in name order."""
    return sorted(path for path in folder.iterdir() if path.suffix.lower() in SUFFIXES and _is_log_file(path))


def sniff(path: Path) -> bool:
    """A zip with inspect_ai's ``header.json`` / ``_journal``, a JSON log (``{"version": N, "status": ...``),
    or a folder holding at least one of them."""
    if path.is_dir():
        return bool(log_files(path))
    return _is_log_file(path)


def read(path: Path, sink: TrialSink) -> None:
    """Add every (sample, epoch, scorer) of the log, or of every log in the folder, to ``sink``."""
    logs = log_files(path) if path.is_dir() else [path]
    if not logs:
        raise EvaluationError(f"{path}: the folder holds no inspect_ai log (.eval, or .json eval log)")
    for log in logs:
        sink.scan_table(str(log), inspect_log_table(log))


def _load(path: Path) -> tuple[Any, list[Any], Callable[[Any], float]]:
    try:
        from inspect_ai.log import read_eval_log, read_eval_log_sample_summaries
        from inspect_ai.scorer import value_to_float
    except ImportError as exc:
        raise EvaluationError(
            f"{path}: reading inspect_ai logs needs the inspect extra: pip install 'trialscore[inspect]'"
        ) from exc
    try:
        header = read_eval_log(str(path), header_only=True)
        samples = read_eval_log_sample_summaries(str(path))
    except Exception as exc:  # inspect_ai raises its own and pydantic errors for bad logs
        raise EvaluationError(f"{path}: cannot read an inspect_ai eval log: {exc}") from exc
    return header, samples, value_to_float()


def inspect_log_table(path: Path) -> LongTable:
    """Trial rows of one inspect_ai log file."""
    header, samples, to_float = _load(path)
    scorers = sorted({name for sample in samples for name in (sample.scores or {})})
    columns: dict[str, list[str | None]] = {
        name: [] for name in ("case_id", "trial", "target", "suite", "run_id", "scorer", "passed", "score")
    }
    where: list[str] = []
    for sample in samples:
        scores = sample.scores or {}
        for scorer in scorers or [None]:
            score = scores.get(scorer) if scorer is not None else None
            passed = value = None
            if sample.error is None and score is not None:
                if isinstance(score.value, (list, dict)):
                    passed = json.dumps(score.value)
                else:
                    value = float(to_float(score.value))
                    passed = "true" if value == 1.0 else "false"
            columns["case_id"].append(str(sample.id))
            columns["trial"].append(text_value(sample.epoch - 1))
            columns["target"].append(header.eval.model)
            columns["suite"].append(header.eval.task)
            columns["run_id"].append(header.eval.run_id)
            columns["scorer"].append(scorer)
            columns["passed"].append(passed)
            columns["score"].append(text_value(value))
            where.append(
                f"sample {sample.id!r} epoch {sample.epoch}" + (f" scorer {scorer!r}" if scorer else "")
            )
    if not where:
        raise EvaluationError(f"{path}: the inspect_ai log has no samples")
    return LongTable(columns, tuple(where))
