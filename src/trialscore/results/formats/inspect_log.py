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
Several scorers are several judgements of the same trials: the reader that counts them keeps
them apart (see :func:`trialscore.results.readers.read_counts`), and an eval set's tasks are
told apart by ``suite``.

A log whose ``status`` is not ``success`` (``error``, ``cancelled``, or ``started`` for one
still being written) is read for the samples it holds and recorded as a partial run
(:class:`~trialscore.results.counts.PartialRun`): its status, and the samples it planned
(dataset samples x epochs) against those it logged.

A folder (an inspect_ai ``log_dir``, an eval set's folder, or a folder of them) is read log by
log: every ``.eval`` file and every ``.json`` file that is an eval log, in it or in any folder
below it, in path order, each labelled by its own path (so ``--by file`` tells them apart).
Other files are not trials and are not read.

An ``.eval`` file is a zip: before inspect_ai opens it, every member it reads (all but the
``samples/`` transcripts) is checked to inflate to at most :data:`MAX_MEMBER_BYTES` (a zip
bomb is an error naming the member); a ``.json`` log is read whole, so one over
:data:`~trialscore.results.formats._text.MAX_DOCUMENT_BYTES` is an error (``inspect log
convert --to eval`` makes the ``.eval`` file inspect_ai reads by parts).
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trialscore.errors import EvaluationError
from trialscore.results.counts import PartialRun
from trialscore.results.formats._text import (
    MAX_DOCUMENT_BYTES,
    check_nesting,
    check_zip_member,
    file_keys,
    head_bytes,
    tree_files,
)
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
#: The most a member inspect_ai reads from an ``.eval`` zip may inflate to (bytes).
MAX_MEMBER_BYTES = 32 * 2**20
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
    """The inspect_ai logs in ``folder`` and the folders below it, in path order."""
    return tree_files(folder, lambda path: path.suffix.lower() in SUFFIXES and _is_log_file(path))


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
        table, partial = _log_table(log)
        sink.scan_table(str(log), table)
        if partial is not None:
            sink.partial(partial)


def _check_size(path: Path) -> None:
    """Refuse a log that would take unbounded memory to read (a zip bomb, an oversized JSON log) or
    is nested deeper than inspect_ai's JSON parser takes (it would crash, not say so)."""
    if head_bytes(path, len(_ZIP)) != _ZIP:
        size = path.stat().st_size
        if size > MAX_DOCUMENT_BYTES:
            raise EvaluationError(
                f"{path}: a JSON eval log of {size / 2**20:.0f} MiB is over the "
                f"{MAX_DOCUMENT_BYTES // 2**20} MiB read whole; convert it with "
                "`inspect log convert --to eval` and read the .eval file"
            )
        check_nesting(path.read_bytes(), str(path))
        return
    try:
        with zipfile.ZipFile(path) as archive:
            for info in archive.infolist():
                if not info.filename.startswith("samples/"):
                    check_zip_member(path, info, MAX_MEMBER_BYTES)
                    check_nesting(archive.read(info), f"{path} member {info.filename!r}")
    except zipfile.BadZipFile as exc:
        raise EvaluationError(f"{path}: cannot read an inspect_ai eval log: {exc}") from exc


def _load(path: Path) -> tuple[Any, list[Any], Callable[[Any], float]]:
    try:
        from inspect_ai.log import read_eval_log, read_eval_log_sample_summaries
        from inspect_ai.scorer import value_to_float
    except ImportError as exc:
        raise EvaluationError(
            f"{path}: reading inspect_ai logs needs the inspect extra: pip install 'trialscore[inspect]'"
        ) from exc
    _check_size(path)
    try:
        header = read_eval_log(str(path), header_only=True)
        samples = read_eval_log_sample_summaries(str(path))
    except Exception as exc:  # inspect_ai raises its own and pydantic errors for bad logs
        raise EvaluationError(f"{path}: cannot read an inspect_ai eval log: {exc}") from exc
    return header, samples, value_to_float()


def inspect_log_table(path: Path) -> LongTable:
    """Trial rows of one inspect_ai log file."""
    return _log_table(path)[0]


def _partial(path: Path, header: Any, logged: int) -> PartialRun | None:
    """The log as a partial run when its status is not ``success`` (None when it is)."""
    if header.status == "success":
        return None
    dataset, epochs = header.eval.dataset, header.eval.config.epochs or 1
    samples = len(dataset.sample_ids) if dataset.sample_ids else dataset.samples or 0
    return PartialRun(str(path), str(header.status), planned=samples * epochs, logged=logged)


def _log_table(path: Path) -> tuple[LongTable, PartialRun | None]:
    """Trial rows of one inspect_ai log file, and the log as a partial run when it did not finish."""
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
        status = "" if header.status == "success" else f" (status {header.status}: the run did not finish)"
        raise EvaluationError(f"{path}: the inspect_ai log has no samples{status}")
    return LongTable(columns, tuple(where)), _partial(path, header, len(samples))
