"""Running one unit: the target called with timeout and retries, the graders, the verdict, secrets redacted.

A unit is trial ``t`` of case ``c`` on target ``m`` (:class:`~trialscore.runner.adaptive.Unit`).
:meth:`Execution.run` turns it into a :class:`~trialscore.results.records.TrialRecord`, the same
wherever it runs (in the run's own process, a worker process, a Ray actor):

* **Seed.** The target gets :func:`~trialscore.runner.seeds.trial_seed` ``(execution.seed, c, t)``.
* **Failures.** Each target call has the case's ``timeout_s``; transient errors are retried with
  backoff (:mod:`trialscore.runner.retry`).  A trial whose call or grader still fails is stored
  with verdict ``error`` and its message (an errored trial is never a failed one).
* **Verdict.** The graders' results make the trial's score and verdict
  (:func:`~trialscore.runner.grading.trial_outcome`); the cost is the target's and the judges'.
  A grader that reads the reply whole (``grade_reply``: the ``tool_calls`` grader) is given it,
  and the record keeps the reply's trajectory (``tool_calls``, ``steps``, ``tokens``).
* **Secrets.** Every API key the targets know is redacted from the error and output text.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from typing import Any

from trialscore.results.records import ToolCall, TrialRecord
from trialscore.runner.adaptive import Unit
from trialscore.runner.graders import Grade, Grader, GraderError, build_grader
from trialscore.runner.grading import trial_outcome
from trialscore.runner.redact import redact
from trialscore.runner.retry import RetryPolicy, call_with_retries
from trialscore.runner.seeds import trial_seed
from trialscore.runner.suite import CaseSettings, CaseSpec, Suite
from trialscore.runner.targets import Target, TargetError, TargetReply, TrialRequest, build_target

__all__ = ["Execution", "PreparedCase", "build_targets"]


@dataclass(frozen=True)
class PreparedCase:
    """A case ready to run: its settings, retry policy and built graders."""

    spec: CaseSpec
    settings: CaseSettings
    policy: RetryPolicy
    graders: tuple[Grader, ...]


def build_targets(suite: Suite, evaluated: Sequence[str], concurrency: int, into: dict[str, Target]) -> None:
    """Build the ``evaluated`` targets and the judges their graders call into ``into`` (the caller
    closes what was built, also when a later one fails)."""
    for name in dict.fromkeys([*evaluated, *suite.judge_targets()]):
        into[name] = build_target(suite.target(name), suite.directory, concurrency)


class Execution:
    """The units of run ``run_id`` of ``suite``, run on ``targets`` (built by :func:`build_targets`).

    ``trials`` overrides every case's trial count (None keeps the suite's).  The cases are
    prepared once (settings, retry policy, graders): :attr:`cases`, by case id.
    """

    def __init__(self, suite: Suite, run_id: str, targets: Mapping[str, Target], trials: int | None) -> None:
        self.suite, self.run_id, self.targets = suite, run_id, targets
        self.cases: dict[str, PreparedCase] = {}
        for spec in suite.cases:
            settings = suite.settings_for(spec)
            if trials is not None:
                settings = replace(settings, trials=trials)
            graders = tuple(
                build_grader(g, spec, suite.directory, self.judge) for g in suite.graders_for(spec)
            )
            policy = RetryPolicy(settings.timeout_s, settings.retries, settings.backoff_s)
            self.cases[spec.id] = PreparedCase(spec, settings, policy, graders)
        self.secrets = tuple(key for target in targets.values() for key in getattr(target, "secrets", ()))

    async def judge(self, name: str, request: TrialRequest) -> TargetReply:
        """An ``llm_judge`` call: the judge target with the case's timeout and retries."""
        return await call_with_retries(self.targets[name], request, self.cases[request.case.id].policy)

    def redacted(self, record: TrialRecord) -> TrialRecord:
        """The record without any secret the run knows, in its error or output text or its tool calls."""
        update: dict[str, Any] = {}
        if record.error is not None:
            update["error"] = redact(record.error, self.secrets)
        if record.output is not None and self.secrets:
            output = redact(record.output, self.secrets, headers=False)
            if output != record.output:
                update["output"] = output
        if record.tool_calls and self.secrets:
            calls = json.dumps([call.to_dict() for call in record.tool_calls])
            hidden = redact(calls, self.secrets, headers=False)
            if hidden != calls:
                update["tool_calls"] = tuple(ToolCall(**call) for call in json.loads(hidden))
        return record.model_copy(update=update) if update else record

    def _fields(self, unit: Unit, started: datetime) -> dict[str, Any]:
        """The fields every record of ``unit`` carries, whatever became of it."""
        spec = self.cases[unit.case_id].spec
        return {
            "run_id": self.run_id,
            "suite": self.suite.name,
            "case_id": spec.id,
            "trial": unit.trial,
            "target": unit.target,
            "category": spec.category,
            "started_at": started,
            "seed": trial_seed(self.suite.execution.seed, spec.id, unit.trial),
        }

    def unrun(self, unit: Unit, why: str) -> TrialRecord:
        """The errored record of a unit that could not be run (``trial not run: why``)."""
        fields = self._fields(unit, datetime.now(timezone.utc))
        return TrialRecord(**fields, passed=None, verdict="error", error=f"trial not run: {why}")

    async def run(self, unit: Unit) -> TrialRecord:
        """Run ``unit``: call its target, grade the output, and return its record, secrets redacted."""
        return self.redacted(await self._trial(unit))

    async def _trial(self, unit: Unit) -> TrialRecord:
        case = self.cases[unit.case_id]
        common = self._fields(unit, datetime.now(timezone.utc))
        request = TrialRequest(case.spec, unit.trial, common["seed"], case.spec.text)
        clock = time.perf_counter()
        costs: list[float | None] = []
        said: dict[str, Any] = {}  # what the target replied, kept whatever the graders make of it
        try:
            reply = await call_with_retries(self.targets[unit.target], request, case.policy)
            latency = time.perf_counter() - clock
            said = {"output": reply.output, "tokens": reply.tokens, "tool_calls": reply.tool_calls}
            said["steps"] = reply.steps
            costs.append(reply.cost_usd)
            grades = [await _grade(grader, reply, request) for grader in case.graders]
        except (TargetError, GraderError) as exc:
            cost = None if not costs or None in costs else math.fsum(costs)  # type: ignore[arg-type]
            latency = time.perf_counter() - clock
            return TrialRecord(
                **common,
                **said,
                passed=None,
                verdict="error",
                error=str(exc),
                cost_usd=cost,
                latency_s=latency,
            )
        costs.extend(grade.cost_usd for grade in grades)
        results = tuple(grade.result for grade in grades)
        outcome = trial_outcome(results, case.settings.threshold, case.settings.borderline)
        return TrialRecord(
            **common,
            passed=outcome.passed,
            score=outcome.score,
            verdict=outcome.verdict,
            grader_results=results,
            cost_usd=None if None in costs else math.fsum(costs),  # type: ignore[arg-type]
            latency_s=latency,
            **said,
        )


async def _grade(grader: Grader, reply: TargetReply, request: TrialRequest) -> Grade:
    """One grader's grade of the reply: the whole reply to a grader that reads it, else its output text."""
    whole = getattr(grader, "grade_reply", None)
    return await (whole(reply, request) if whole is not None else grader(reply.output, request))
