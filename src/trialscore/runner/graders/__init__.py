"""Graders: judge one trial's output, each giving a score in [0, 1] and a pass/fail.

Every module of this package is imported here, and each registers its grader types in
:data:`trialscore.runner.registry.GRADERS` (type name -> spec model and factory): a new grader is
one module, which the suite schema and :func:`build_grader` then know by its type name.
"""

from __future__ import annotations

from pathlib import Path

from trialscore.runner.graders.base import Grade, Grader, GraderError, binary
from trialscore.runner.graders.external import CommandGrader, PythonGrader
from trialscore.runner.graders.judge import JudgeCall, LlmJudgeGrader, fill_rubric, judge_score
from trialscore.runner.graders.schema import JsonSchemaGrader
from trialscore.runner.graders.text import ContainsGrader, ExactGrader, NumericGrader, RegexGrader
from trialscore.runner.registry import GRADERS, GraderContext, GraderSpecBase, load_kinds

__all__ = [
    "CommandGrader",
    "ContainsGrader",
    "ExactGrader",
    "Grade",
    "Grader",
    "GraderError",
    "JsonSchemaGrader",
    "JudgeCall",
    "LlmJudgeGrader",
    "NumericGrader",
    "PythonGrader",
    "RegexGrader",
    "binary",
    "build_grader",
    "fill_rubric",
    "judge_score",
]

load_kinds(__name__, __path__, "graders")


def build_grader(spec: GraderSpecBase, case: object, directory: Path, judge: JudgeCall | None) -> Grader:
    """The grader ``spec`` describes, ready for ``case`` (expected values and patterns prepared once).

    The factory is the one registered for ``spec.type``.

    >>> import asyncio
    >>> from trialscore.runner.suite import CaseSpec, NumericGraderSpec
    >>> from trialscore.runner.targets.base import TrialRequest
    >>> case = CaseSpec(id="add", input="2+2", expected=4)
    >>> grader = build_grader(NumericGraderSpec(type="numeric", tolerance=0.1), case, Path("."), None)
    >>> asyncio.run(grader("The answer is 4.05", TrialRequest(case, 0, 1, case.text))).result.passed
    True
    """
    kind = GRADERS[str(getattr(spec, "type", ""))]
    return kind.build(spec, GraderContext(case, directory, judge))
