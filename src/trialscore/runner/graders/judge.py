"""The ``llm_judge`` grader: a rubric prompt sent to one of the suite's targets, whose reply is a score.

The rubric may use the placeholders ``{{input}}``, ``{{output}}`` and
``{{expected}}``; they are replaced by the case text, the trial's output and the
case's expected value (plain text substitution, so braces elsewhere are kept).
The judge's reply gives the score as a JSON object with ``score``, as ``score:
<number>`` in text, or as the first number in the reply; it is divided by
``scale`` (say 10 for a 0-10 rubric) and must then lie in [0, 1].  The grade
passes at ``pass_score``.  The judge call goes through the runner's timeout and
retries, and its cost is added to the trial's cost.  The judge target is given
the case with the filled rubric as its ``prompt`` (so ``case.text`` is the rubric).
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Iterator
from typing import Annotated, Literal

from pydantic import Field

from trialscore.results.records import GraderResult
from trialscore.runner.graders.base import Grade, GraderError
from trialscore.runner.graders.text import as_text
from trialscore.runner.registry import (
    GraderSite,
    GraderSpecBase,
    Name,
    Positive,
    Problem,
    register_grader,
)
from trialscore.runner.targets.base import TargetError, TargetReply, TrialRequest

__all__ = ["JudgeCall", "LlmJudgeGrader", "LlmJudgeGraderSpec", "fill_rubric", "judge_score"]


class LlmJudgeGraderSpec(GraderSpecBase):
    """A rubric prompt sent to the suite target ``target``; its reply carries a score."""

    type: Literal["llm_judge"]
    target: Name
    rubric: Name
    scale: Positive = 1.0
    pass_score: Annotated[float, Field(ge=0.0, le=1.0)] = 0.5

    def problems(self, site: GraderSite) -> Iterator[Problem]:
        """``target`` names one of the suite's targets."""
        if self.target not in site.target_names:
            yield Problem(
                (*site.loc, "target"),
                f"must name one of the suite's targets ({', '.join(dict.fromkeys(site.target_names))}); "
                f"got {self.target!r}",
            )


#: How the judge reaches a target: ``await call(target_name, request)``, with timeout and retries.
JudgeCall = Callable[[str, TrialRequest], Awaitable[TargetReply]]

_LABELLED = re.compile(r"score\s*[:=]\s*([-+]?\d+(?:\.\d+)?)", re.IGNORECASE)
_NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?")


def fill_rubric(rubric: str, case_text: str, output: str, expected: object) -> str:
    """The rubric with ``{{input}}``, ``{{output}}`` and ``{{expected}}`` replaced.

    >>> fill_rubric("Q: {{input}} A: {{output}} ({{expected}}) {json}", "2+2", "4", 4)
    'Q: 2+2 A: 4 (4) {json}'
    """
    expected_text = "" if expected is None else as_text(expected)
    return (
        rubric.replace("{{input}}", case_text)
        .replace("{{output}}", output)
        .replace("{{expected}}", expected_text)
    )


def judge_score(reply: str, scale: float) -> float:
    """The score in a judge's reply, divided by ``scale``; it must then lie in [0, 1].

    Raises
    ------
    GraderError
        When the reply carries no number, or the scaled score is outside [0, 1].

    >>> judge_score('{"score": 8, "why": "mostly right"}', 10), judge_score("Score: 0.25", 1)
    (0.8, 0.25)
    >>> judge_score("7 out of 10", 5)
    Traceback (most recent call last):
    ...
    trialscore.errors.GraderError: judge score 7/5 = 1.4 is outside [0, 1]; reply '7 out of 10'
    """
    value: float | None = None
    try:
        data = json.loads(reply)
    except ValueError:
        data = None
    if isinstance(data, dict) and isinstance(data.get("score"), int | float):
        value = float(data["score"])
    elif (match := _LABELLED.search(reply) or _NUMBER.search(reply)) is not None:
        value = float(match.group(1) if match.re is _LABELLED else match.group(0))
    if value is None:
        raise GraderError(f"judge reply carries no score; reply {reply[:200]!r}")
    score = float(value) / scale
    if not 0.0 <= score <= 1.0:
        raise GraderError(
            f"judge score {value:g}/{scale:g} = {score:g} is outside [0, 1]; reply {reply[:200]!r}"
        )
    return score


class LlmJudgeGrader:
    """Asks the judge target to score the output against the rubric (see the module docstring)."""

    def __init__(self, spec: LlmJudgeGraderSpec, call: JudgeCall) -> None:
        self._spec = spec
        self._call = call

    async def __call__(self, output: str, request: TrialRequest) -> Grade:
        """Grade one output."""
        spec, case = self._spec, request.case
        prompt = fill_rubric(spec.rubric, case.text, output, case.expected)
        asked = case.model_copy(update={"input": None, "prompt": prompt})  # a python judge reads case.text
        try:
            reply = await self._call(spec.target, TrialRequest(asked, request.trial, request.seed, prompt))
        except TargetError as exc:
            raise GraderError(f"llm_judge {spec.label!r}: {exc}") from exc
        score = judge_score(reply.output, spec.scale)
        result = GraderResult(
            name=spec.label, score=score, passed=score >= spec.pass_score, weight=spec.weight
        )
        return Grade(result, reply.cost_usd)


register_grader(LlmJudgeGraderSpec, lambda spec, context: LlmJudgeGrader(spec, context.judge))
