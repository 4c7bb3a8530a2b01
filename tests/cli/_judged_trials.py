"""A trial judged by ``llm_judge`` calls, as the runner writes it: shared by the judged commands' tests."""

from __future__ import annotations

from collections.abc import Sequence

from trialscore.results.records import GraderResult, JudgeGrade, TrialRecord


def judged_line(
    case_id: str,
    trial: int,
    target: str,
    calls: Sequence[JudgeGrade],
    passed: bool,
    reason: str | None = None,
    output: str | None = None,
) -> str:
    """The trial record's JSON line: its verdict ``passed``, one ``judge`` grader holding ``calls`` (and
    its ``reason``), the target's ``output``."""
    result = GraderResult(name="judge", score=float(passed), passed=passed, reason=reason, calls=tuple(calls))
    record = TrialRecord(
        case_id=case_id,
        trial=trial,
        target=target,
        passed=passed,
        verdict="pass" if passed else "fail",
        grader_results=(result,),
        output=output,
    )
    return record.to_json_line()
