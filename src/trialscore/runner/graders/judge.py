"""The ``llm_judge`` grader: a rubric prompt sent to judge targets, whose replies are scores.

The rubric may use the placeholders ``{{input}}``, ``{{output}}`` and
``{{expected}}``; they are replaced by the case text, the trial's output and the
case's expected value (plain text substitution, so braces elsewhere are kept).
A judge's reply gives the score as a JSON object with ``score``, as ``score:
<number>`` in text, or as the first number in the reply; it is divided by
``scale`` (say 10 for a 0-10 rubric) and must then lie in [0, 1].  A call passes
at ``pass_score``.  Each judge call goes through the runner's timeout and retries,
and its cost is added to the trial's cost.  The judge target is given the case with
the filled rubric as its ``prompt`` (so ``case.text`` is the rubric).

**Panels and repeats.**  ``target`` names one judge; ``judges`` a panel of them.
Each judge is called ``repeats`` times on the same frozen output (repeat 0 with the
trial's seed, repeat ``r`` with :func:`~trialscore.runner.seeds.repeat_seed`), all
calls at once.  Every call is kept in the grader result's ``calls``
(:class:`~trialscore.results.records.JudgeGrade`: judge, repeat, verdict or error).
A call that errors (the target fails after its retries) or whose reply carries no
valid score is an *errored call*: it is left out of the verdict, never counted as a
fail (a call that failed costs an unknown amount, so the trial's cost is unknown).  The calls
that answered combine in two steps, by ``combine``:

* ``mean`` (the default): a judge's score is the mean of its calls' scores; the
  grader's score is the mean over the judges that answered; it passes at ``pass_score``;
* ``majority``: a judge's score is the share of its calls that passed; the grader's
  score is the mean of those shares over the judges that answered, and it passes
  when that is above one half (a tie is no majority: it fails; use an odd number of calls).

The grader result's ``reason`` says the rule and how many calls the verdict rests on.
When no call answered, the grader cannot judge and the trial errors.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
from collections.abc import Awaitable, Callable, Iterator, Sequence
from typing import Annotated, Literal

from pydantic import Field

from trialscore._words import plural
from trialscore.results.records import GraderResult, JudgeGrade
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
from trialscore.runner.seeds import repeat_seed
from trialscore.runner.targets.base import TargetError, TargetReply, TrialRequest

__all__ = [
    "JudgeCall",
    "LlmJudgeGrader",
    "LlmJudgeGraderSpec",
    "combine_calls",
    "fill_rubric",
    "judge_score",
]

#: How the calls that answered make the grader's verdict (module docstring).
Combine = Literal["mean", "majority"]


class LlmJudgeGraderSpec(GraderSpecBase):
    """A rubric prompt sent to the suite target ``target`` (or each of ``judges``), ``repeats`` times."""

    type: Literal["llm_judge"]
    target: Name | None = None
    judges: Annotated[tuple[Name, ...], Field(min_length=1)] | None = None
    repeats: Annotated[int, Field(ge=1, le=100)] = 1
    combine: Combine = "mean"
    rubric: Name
    scale: Positive = 1.0
    pass_score: Annotated[float, Field(ge=0.0, le=1.0)] = 0.5

    @property
    def judge_names(self) -> tuple[str, ...]:
        """The judge targets called: ``(target,)`` or ``judges``."""
        if self.judges is not None:
            return self.judges
        return () if self.target is None else (self.target,)

    def problems(self, site: GraderSite) -> Iterator[Problem]:
        """Exactly one of ``target`` and ``judges``; each names one of the suite's targets, once."""
        if (self.target is None) == (self.judges is None):
            given = "both" if self.target is not None else "neither"
            yield Problem(
                site.loc,
                "an llm_judge grader needs exactly one of target (one judge) or judges (a panel); "
                f"got {given}",
            )
            return
        field = "target" if self.judges is None else "judges"
        known = ", ".join(dict.fromkeys(site.target_names))
        seen: set[str] = set()
        for index, name in enumerate(self.judge_names):
            loc = (*site.loc, field) if self.judges is None else (*site.loc, field, index)
            if name not in site.target_names:
                yield Problem(loc, f"must name one of the suite's targets ({known}); got {name!r}")
            elif name in seen:
                yield Problem(loc, f"names judge {name!r} twice (repeats calls each judge again)")
            seen.add(name)


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
    except (ValueError, RecursionError):
        data = None
    if isinstance(data, dict) and isinstance(data.get("score"), int | float):
        value = float(data["score"])
    elif (match := _LABELLED.search(reply) or _NUMBER.search(reply)) is not None:
        value = float(match.group(1) if match.re is _LABELLED else match.group(0))
    if value is None or not math.isfinite(value):
        raise GraderError(f"judge reply carries no score; reply {reply[:200]!r}")
    score = float(value) / scale
    if not 0.0 <= score <= 1.0:
        raise GraderError(
            f"judge score {value:g}/{scale:g} = {score:g} is outside [0, 1]; reply {reply[:200]!r}"
        )
    return score


def combine_calls(
    calls: Sequence[JudgeGrade], combine: Combine = "mean", pass_score: float = 0.5
) -> tuple[float, bool, str]:
    """The grader's score, verdict and reason from its calls that answered (module docstring).

    Raises :class:`GraderError` when no call answered.

    >>> scores = [0.8, 0.4, 0.9]
    >>> calls = [JudgeGrade(judge="a", repeat=r, score=s, passed=s >= 0.5) for r, s in enumerate(scores)]
    >>> calls.append(JudgeGrade(judge="b", repeat=0, error="HTTP 500"))
    >>> combine_calls(calls)
    (0.7, True, 'mean of 1 judge: 3 of 4 calls answered (1 errored)')
    >>> combine_calls(calls, "majority")[:2]
    (0.6666666666666666, True)
    """
    answered: dict[str, list[JudgeGrade]] = {}
    for call in calls:
        if not call.errored:
            answered.setdefault(call.judge, []).append(call)
    if not answered:
        reasons = "; ".join(f"{call.judge} repeat {call.repeat}: {call.error}" for call in calls)
        raise GraderError(f"no judge call answered ({plural(len(calls), 'call')}: {reasons})")
    if combine == "mean":
        values = [math.fsum(c.score or 0.0 for c in own) / len(own) for own in answered.values()]
    else:
        values = [sum(bool(c.passed) for c in own) / len(own) for own in answered.values()]
    score = math.fsum(values) / len(values)
    passed = score >= pass_score if combine == "mean" else score > 0.5
    used = sum(len(own) for own in answered.values())
    errored = len(calls) - used
    reason = (
        f"{combine} of {plural(len(answered), 'judge')}: {used} of {plural(len(calls), 'call')} answered"
        f"{f' ({errored} errored)' if errored else ''}"
    )
    return min(max(score, 0.0), 1.0), passed, reason


class LlmJudgeGrader:
    """Asks each judge, ``repeats`` times, to score the output against the rubric (module docstring)."""

    def __init__(self, spec: LlmJudgeGraderSpec, call: JudgeCall) -> None:
        self._spec = spec
        self._call = call

    async def _ask(
        self, judge: str, repeat: int, request: TrialRequest, prompt: str
    ) -> tuple[JudgeGrade, float | None]:
        """One call: its grade (or its error) and its cost (None: unknown, as for a call that failed)."""
        spec, case = self._spec, request.case
        asked = case.model_copy(update={"input": None, "prompt": prompt})  # a python judge reads case.text
        seed = repeat_seed(request.seed, repeat)
        try:
            reply = await self._call(judge, TrialRequest(asked, request.trial, seed, prompt))
        except TargetError as exc:
            return JudgeGrade(judge=judge, repeat=repeat, error=str(exc)), None
        try:
            score = judge_score(reply.output, spec.scale)
        except GraderError as exc:
            return JudgeGrade(judge=judge, repeat=repeat, reason=reply.output, error=str(exc)), reply.cost_usd
        grade = JudgeGrade(
            judge=judge, repeat=repeat, score=score, passed=score >= spec.pass_score, reason=reply.output
        )
        return grade, reply.cost_usd

    async def __call__(self, output: str, request: TrialRequest) -> Grade:
        """Grade one output: every judge, every repeat, at once."""
        spec, case = self._spec, request.case
        prompt = fill_rubric(spec.rubric, case.text, output, case.expected)
        asked = await asyncio.gather(
            *(
                self._ask(judge, repeat, request, prompt)
                for judge in spec.judge_names
                for repeat in range(spec.repeats)
            )
        )
        calls = tuple(grade for grade, _ in asked)
        costs = [cost for _, cost in asked]
        try:
            score, passed, reason = combine_calls(calls, spec.combine, spec.pass_score)
        except GraderError as exc:
            raise GraderError(f"llm_judge {spec.label!r}: {exc}") from exc
        result = GraderResult(
            name=spec.label, score=score, passed=passed, weight=spec.weight, reason=reason, calls=calls
        )
        return Grade(result, None if None in costs else math.fsum(costs))  # type: ignore[arg-type]


register_grader(LlmJudgeGraderSpec, lambda spec, context: LlmJudgeGrader(spec, context.judge))
