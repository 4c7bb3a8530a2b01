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

With trial detail the samples themselves are read (then, and only then): the ``tool`` events are
the trial's tool calls (``function``, ``arguments``, ``result``), in order, ``steps`` counts the
``model`` events (the model calls), ``tokens`` is input + output over the sample's
``model_usage`` and ``cost_usd`` their ``total_cost`` (when every model's is known);
``latency_s`` is the summary's ``total_time``.  The samples' members of an ``.eval``
zip are then size-checked as the others are.

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

An ``.eval`` file is a zip, read by parts: its header by inspect_ai (``header.json``), and the
sample summaries (``summaries.json``, or ``_journal/summaries/N.json`` of a log still being
written) streamed one summary at a time, keeping only each one's id, epoch, scores and error (last
entry wins for a repeated (id, epoch), as inspect_ai's readers do); the ``samples/`` transcripts
are never opened (but with trial detail).  So a log of 200,000 samples and 1 GB is read in bounded memory
(``benchmarks/scale.py`` measures it).  The header member is checked to inflate to at most
:data:`MAX_MEMBER_BYTES`, and every member read to at most
:data:`~trialscore.results.formats._text.MAX_ZIP_RATIO` times its compressed size (a zip bomb is an
error naming the member); a ``.json`` log is read whole, so one over
:data:`~trialscore.results.formats._text.MAX_DOCUMENT_BYTES` is an error (``inspect log convert --to
eval`` makes the ``.eval`` file read by parts).
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trialscore.errors import EvaluationError
from trialscore.results.counts import PartialRun
from trialscore.results.formats._text import (
    MAX_DOCUMENT_BYTES,
    array_items,
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
#: The compressions zipfile inflates without inspect_ai's import.
_NATIVE = frozenset({zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED})
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
        table, partial = _log_table(log, sink.watch.update, sink.detail)
        sink.scan_table(str(log), table)
        if partial is not None:
            sink.partial(partial)


def _check_size(
    path: Path, archive: zipfile.ZipFile | None, members: Sequence[zipfile.ZipInfo], samples: bool
) -> None:
    """Refuse a log that would take unbounded memory to read (a zip bomb, an oversized JSON log) or
    is nested deeper than inspect_ai's JSON parser takes (it would crash, not say so); ``archive``: the
    ``.eval`` log opened (None: a JSON log); ``samples``: the transcripts are read too (trial detail),
    so they are checked as the header is; ``members``: those of ``archive`` to check, in order."""
    if archive is None:
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
        for info in members:
            if info.filename.startswith("samples/") and not samples:
                continue
            if _is_summary(info.filename):  # streamed: bounded by the ratio, its depth checked as parsed
                check_zip_member(path, info, 2**62)
                continue
            check_zip_member(path, info, MAX_MEMBER_BYTES)
            check_nesting(archive.read(info), f"{path} member {info.filename!r}")
    except zipfile.BadZipFile as exc:
        raise _unreadable(path, exc) from exc


def _unreadable(path: Path, exc: Exception) -> EvaluationError:
    """The error of a log inspect_ai or zipfile cannot read (``exc``: why)."""
    return EvaluationError(f"{path}: cannot read an inspect_ai eval log: {exc}")


def _open_zip(path: Path) -> zipfile.ZipFile:
    """The ``.eval`` log ``path`` opened (its central directory read: once, for every step)."""
    try:
        return zipfile.ZipFile(path)
    except zipfile.BadZipFile as exc:
        raise _unreadable(path, exc) from exc


def _is_summary(name: str) -> bool:
    """Whether a zip member holds sample summaries (the consolidated list, or a journal part)."""
    return name == _SUMMARIES or (name.startswith(_JOURNAL) and name.endswith(".json"))


_SUMMARIES = "summaries.json"
_JOURNAL = "_journal/summaries/"


@dataclass(frozen=True)
class _Summary:
    """What scoring needs of one sample summary: its id, epoch, error and scores' values (and its
    ``total_time``, the trial's latency)."""

    id: str
    epoch: int
    error: object
    scores: dict[str, Any]
    total_time: float | None = None


def _streamed(
    path: Path, archive: zipfile.ZipFile, progress: Callable[[float], None], planned: int
) -> list[_Summary]:
    """The sample summaries of the ``.eval`` zip ``path`` (opened: ``archive``), parsed one at a time
    (last entry wins per (id, epoch))."""
    names = archive.namelist()
    members = [_SUMMARIES] if _SUMMARIES in names else sorted(
        (name for name in names if _is_summary(name)), key=lambda name: (len(name), name)
    )  # fmt: skip
    found: dict[tuple[str, int], _Summary] = {}
    for member in members:
        label = f"{path} member {member!r}"
        with archive.open(member) as raw, io.TextIOWrapper(raw, encoding="utf-8") as text:
            for index, item in enumerate(array_items(text, label)):
                if not isinstance(item, dict) or "id" not in item or not isinstance(item.get("epoch"), int):
                    raise EvaluationError(f"{label}: element {index + 1} is not a sample summary (id, epoch)")
                scores = item.get("scores") or {}
                values = {name: (score or {}).get("value") for name, score in scores.items()}
                time = item.get("total_time")
                summary = _Summary(
                    str(item["id"]),
                    item["epoch"],
                    item.get("error"),
                    values,
                    float(time) if isinstance(time, (int, float)) else None,
                )
                found[(summary.id, summary.epoch)] = summary
                if index % 4096 == 0 and planned:
                    progress(len(found) / planned)
    return list(found.values())


def _load(
    path: Path, progress: Callable[[float], None], transcripts: bool = False
) -> tuple[Any, list[Any], Callable[[Any], float]]:
    needs_extra = (
        f"{path}: reading inspect_ai logs needs the inspect extra: pip install 'trialscore[inspect]'"
    )
    if importlib.util.find_spec("inspect_ai") is None:
        raise EvaluationError(needs_extra)
    zipped = head_bytes(path, len(_ZIP)) == _ZIP
    # checked before inspect_ai's import (about a second): a JSON log, and the members up to the first
    # that zipfile inflates only once that import taught it inspect_ai's zstd (the rest after it, in
    # the same order): a log refused there, a zip bomb say, never pays the import
    with _open_zip(path) if zipped else contextlib.nullcontext() as archive:
        members = [] if archive is None else archive.infolist()
        native = next(
            (at for at, info in enumerate(members) if info.compress_type not in _NATIVE), len(members)
        )
        _check_size(path, archive, members[:native], transcripts)
        try:
            from inspect_ai.log import read_eval_log, read_eval_log_sample_summaries
            from inspect_ai.scorer import value_to_float
        except ImportError as exc:
            raise EvaluationError(needs_extra) from exc
        if archive is not None:
            _check_size(path, archive, members[native:], transcripts)
        try:
            header = read_eval_log(str(path), header_only=True)
            if archive is not None:
                samples: list[Any] = _streamed(path, archive, progress, _planned(header))
            else:
                samples = [
                    _Summary(
                        str(s.id),
                        s.epoch,
                        s.error,
                        {k: v.value for k, v in (s.scores or {}).items()},
                        s.total_time,
                    )
                    for s in read_eval_log_sample_summaries(str(path))
                ]
        except EvaluationError:
            raise
        except Exception as exc:  # inspect_ai raises its own and pydantic errors for bad logs
            raise _unreadable(path, exc) from exc
    return header, samples, value_to_float()


def inspect_log_table(path: Path) -> LongTable:
    """Trial rows of one inspect_ai log file."""
    return _log_table(path)[0]


def _planned(header: Any) -> int:
    """The samples the log planned: dataset samples x epochs."""
    dataset, epochs = header.eval.dataset, header.eval.config.epochs or 1
    samples = len(dataset.sample_ids) if dataset.sample_ids else dataset.samples or 0
    return int(samples * epochs)


def _partial(path: Path, header: Any, logged: int) -> PartialRun | None:
    """The log as a partial run when its status is not ``success`` (None when it is)."""
    if header.status == "success":
        return None
    return PartialRun(str(path), str(header.status), planned=_planned(header), logged=logged)


def _usage(sample: Any) -> tuple[str | None, str | None]:
    """(tokens, cost) of one sample's ``model_usage`` (None where unknown)."""
    usage = list((sample.model_usage or {}).values())
    if not usage:
        return None, None
    tokens = sum(use.input_tokens + use.output_tokens for use in usage)
    costs = [use.total_cost for use in usage]
    return text_value(tokens), None if None in costs else text_value(sum(costs))


def _result(value: Any) -> Any:
    """A tool event's result as JSON (text stays text)."""
    from pydantic_core import to_jsonable_python

    return value if isinstance(value, str) else to_jsonable_python(value, fallback=str)


def _trajectories(path: Path) -> dict[tuple[str, int], tuple[str | None, ...]]:
    """(sample id, epoch) -> (tool calls as JSON text, steps, tokens, cost) from the log's samples."""
    from inspect_ai.log import read_eval_log_samples

    from trialscore.results.trajectory import calls_text  # its Pydantic records: built on first use

    out: dict[tuple[str, int], tuple[str | None, ...]] = {}
    try:
        for sample in read_eval_log_samples(str(path), all_samples_required=False):
            events = sample.events or []
            calls = [
                {"name": event.function, "arguments": event.arguments, "result": _result(event.result)}
                for event in events
                if event.event == "tool"
            ]
            steps = sum(event.event == "model" for event in events)
            out[(str(sample.id), sample.epoch)] = (calls_text(calls), str(steps), *_usage(sample))
    except EvaluationError as exc:
        raise EvaluationError(f"{path}: a tool event: {exc}") from exc
    except Exception as exc:  # inspect_ai raises its own and pydantic errors for bad logs
        raise EvaluationError(f"{path}: cannot read an inspect_ai eval log's samples: {exc}") from exc
    return out


def _log_table(
    path: Path, progress: Callable[[float], None] = lambda done: None, detail: bool = False
) -> tuple[LongTable, PartialRun | None]:
    """Trial rows of one inspect_ai log file (with ``detail``, each trial's trajectory too), and the log
    as a partial run when it did not finish."""
    header, samples, to_float = _load(path, progress, detail)
    trajectories = _trajectories(path) if detail else {}
    scorers = sorted({name for sample in samples for name in sample.scores})
    names: tuple[str, ...] = ("case_id", "trial", "target", "suite", "run_id", "scorer", "passed", "score")
    names += ("tool_calls", "steps", "tokens", "cost_usd", "latency_s") if detail else ()
    columns: dict[str, list[str | None]] = {name: [] for name in names}
    where: list[str] = []
    for sample in samples:
        scores = sample.scores
        for scorer in scorers or [None]:
            raw = scores.get(scorer) if scorer is not None else None
            passed = value = None
            if sample.error is None and raw is not None:
                if isinstance(raw, (list, dict)):
                    passed = json.dumps(raw)
                else:
                    value = float(to_float(raw))
                    passed = "true" if value == 1.0 else "false"
            columns["case_id"].append(sample.id)
            columns["trial"].append(text_value(sample.epoch - 1))
            columns["target"].append(header.eval.model)
            columns["suite"].append(header.eval.task)
            columns["run_id"].append(header.eval.run_id)
            columns["scorer"].append(scorer)
            columns["passed"].append(passed)
            columns["score"].append(text_value(value))
            if detail:
                known = trajectories.get((sample.id, sample.epoch), (None,) * 4)
                effort = (*known, text_value(sample.total_time))
                for name, text in zip(names[8:], effort, strict=True):
                    columns[name].append(text)
            where.append(
                f"sample {sample.id!r} epoch {sample.epoch}" + (f" scorer {scorer!r}" if scorer else "")
            )
    if not where:
        status = "" if header.status == "success" else f" (status {header.status}: the run did not finish)"
        raise EvaluationError(f"{path}: the inspect_ai log has no samples{status}")
    return LongTable(columns, tuple(where)), _partial(path, header, len(samples))
