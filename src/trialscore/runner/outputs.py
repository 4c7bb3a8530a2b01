"""The files of a completed run: ``trials.jsonl``, ``cases.jsonl`` and ``summary.json``."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trialscore._record import Record
from trialscore.errors import EvaluationError
from trialscore.runner.orchestrator import RunReport
from trialscore.runner.summary import build_summary

if TYPE_CHECKING:
    from trialscore.runner.suite import CaseSpec

__all__ = ["RunFiles", "case_fields", "write_outputs"]


@dataclass(frozen=True)
class RunFiles(Record):
    """Where a run's output files were written."""

    trials: Path
    cases: Path
    summary: Path


def case_fields(case: CaseSpec) -> dict[str, Any]:
    """What a case asks (its ``prompt``, else its ``input``) and ``expected``, as ``cases.jsonl`` keeps them.

    >>> from trialscore.runner.suite import CaseSpec
    >>> case_fields(CaseSpec(id="add", input={"a": 2, "b": 2}, expected=4))
    {'input': {'a': 2, 'b': 2}, 'expected': 4}
    """
    return {"input": case.prompt if case.prompt is not None else case.input, "expected": case.expected}


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _write_atomic(path: Path, parts: Iterable[str]) -> None:
    """Write ``parts`` to ``path`` all or nothing: a temporary file beside it, synced, then renamed."""
    handle = tempfile.NamedTemporaryFile(
        "w", encoding="utf-8", dir=path.parent, prefix=f".{path.name}.", suffix=".tmp", delete=False
    )
    try:
        with handle:
            handle.writelines(parts)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(handle.name, 0o666 & ~_umask())  # as open() would have made it, not the temp file's 0600
        os.replace(handle.name, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(handle.name)
        raise


def write_outputs(
    report: RunReport, out_dir: Path | None = None, extra: Mapping[str, Any] | None = None
) -> RunFiles:
    """Write a completed run's files to ``out_dir`` (default: the run's own ``out_dir``).

    ``extra`` adds keys to ``summary.json`` (the gates of ``trialscore run``).

    ``trials.jsonl`` holds one :class:`~trialscore.results.records.TrialRecord` a
    line and ``cases.jsonl`` one seed-003 case record a line, with the case's ``input``
    and ``expected`` (:func:`case_fields`; the report's drawer shows them), both in suite
    order (target, then case, then trial); ``summary.json`` is :func:`build_summary`.

    Each file is written to a temporary file in ``out_dir`` and renamed over its
    name (``os.replace``): a kill or a full disk leaves the previous file or the
    complete new one, never an empty or cut file (no cut last line in ``trials.jsonl``).

    Raises
    ------
    EvaluationError
        When the run did not complete (it has no case results yet) or the directory cannot be written.
    """
    if not report.completed:
        raise EvaluationError(
            f"run {report.run_id!r} is not complete; resume it first: {report.resume_command}"
        )
    directory = Path(out_dir) if out_dir is not None else report.out_dir
    targets = {name: index for index, name in enumerate(report.settings.get("targets", []))}
    cases = {case.id: index for index, case in enumerate(report.suite.cases)}
    records = sorted(
        report.records, key=lambda r: (targets.get(r.target or "", 0), cases.get(r.case_id, 0), r.trial)
    )
    files = RunFiles(directory / "trials.jsonl", directory / "cases.jsonl", directory / "summary.json")
    try:
        directory.mkdir(parents=True, exist_ok=True)
        _write_atomic(files.trials, (record.to_json_line() + "\n" for record in records))
        asked = {case.id: case_fields(case) for case in report.suite.cases}
        _write_atomic(
            files.cases,
            (
                json.dumps({**case.to_dict(), **asked.get(case.eval_id, {})}, default=str) + "\n"
                for case in report.cases
            ),
        )
        summary = {**build_summary(report), **(extra or {})}
        _write_atomic(files.summary, [json.dumps(summary, indent=2) + "\n"])
    except OSError as exc:
        raise EvaluationError(f"out_dir {str(directory)!r}: cannot write the run's files: {exc}") from exc
    return files
