"""The files of a completed run: ``trials.jsonl``, ``cases.jsonl`` and ``summary.json``."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trialscore._files import write_atomic
from trialscore._record import Record
from trialscore.errors import EvaluationError, OutputError
from trialscore.runner.summary import build_summary

if TYPE_CHECKING:
    from trialscore.runner.run_report import RunReport

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


def write_outputs(
    report: RunReport, out_dir: Path | None = None, extra: Mapping[str, Any] | None = None
) -> RunFiles:
    """Write a completed run's files to ``out_dir`` (default: the run's own ``out_dir``).

    ``extra`` adds keys to ``summary.json`` (the gates of ``trialscore run``).

    ``trials.jsonl`` holds one :class:`~trialscore.results.records.TrialRecord` a
    line and ``cases.jsonl`` one seed-003 case record a line, with the case's ``input``
    and ``expected`` (:func:`case_fields`; the report's drawer shows them), both in suite
    order (target, then case, then trial); ``summary.json`` is :func:`build_summary`.  The
    trials are read back from the run's store case by case as they are written, so
    writing a run of a million trials holds one case's trials in memory at a time.

    Each file is written to a temporary file in ``out_dir`` and renamed over its
    name (``os.replace``): a kill or a full disk leaves the previous file or the
    complete new one, never an empty or cut file (no cut last line in ``trials.jsonl``).

    Raises
    ------
    EvaluationError
        When the run did not complete (it has no case results yet).
    OutputError
        When a file cannot be written (a full disk, a read-only folder): the files written before
        are whole, the one that failed holds what it held before.
    """
    if not report.completed:
        raise EvaluationError(
            f"run {report.run_id!r} is not complete; resume it first: {report.resume_command}"
        )
    directory = Path(out_dir) if out_dir is not None else report.out_dir
    files = RunFiles(directory / "trials.jsonl", directory / "cases.jsonl", directory / "summary.json")
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(
            f"out_dir {str(directory)!r}: cannot write the run's files: {exc.strerror or exc}"
        ) from exc
    what = "the run's files"
    with report.reader.session():
        lines = (record.to_json_line() + "\n" for record in report.suite_order_records())
        write_atomic(files.trials, lines, what)
        asked = {case.id: case_fields(case) for case in report.suite.cases}
        cases = (
            json.dumps({**case.to_dict(), **asked.get(case.eval_id, {})}, default=str) + "\n"
            for case in report.cases
        )
        write_atomic(files.cases, cases, what)
        summary = {**build_summary(report), **(extra or {})}
        write_atomic(files.summary, [json.dumps(summary, indent=2) + "\n"], what)
    return files
