"""A trial judged by ``llm_judge`` calls, as the runner writes it: shared by the judged commands' tests."""

from __future__ import annotations

from collections.abc import Sequence

from trialscore.results.records import GraderResult, JudgeGrade, TrialRecord


def judged_line(case_id: str, trial: int, target: str, calls: Sequence[JudgeGrade], passed: bool) -> str:
    """The trial record's JSON line: its verdict ``passed``, one ``judge`` grader holding ``calls``."""
    result = GraderResult(name="judge", score=float(passed), passed=passed, calls=tuple(calls))
    record = TrialRecord(
        case_id=case_id,
        trial=trial,
        target=target,
        passed=passed,
        verdict="pass" if passed else "fail",
        grader_results=(result,),
    )
    return record.to_json_line()
