"""One trial of one eval case: the :class:`TrialRecord` every reader and the runner produce.

A trial record is one line of JSON on disk (JSON Lines, one record a line).  The
fields follow the project design; the consistency rules between them are checked
when a record is built, so a record that exists is a record that makes sense:

1. ``verdict == "error"`` if and only if ``passed is None``: an errored trial has
   no outcome, and a trial without an outcome is an errored trial.
2. ``verdict == "pass"`` if and only if ``passed is True``.  Both ``"fail"`` and
   ``"borderline"`` (a score between the fail and pass thresholds, seed 003) mean
   ``passed is False``.
3. An errored trial has no score: ``verdict == "error"`` requires ``score is None``.
4. An error message belongs to an errored trial: ``error is not None`` requires
   ``verdict == "error"`` (an errored trial may still lack a message).

An errored trial is not a failed trial: the grouping step counts it separately
and, by default, leaves it out of the pass-rate denominator.

A trial of an agent may carry its trajectory (:mod:`trialscore.results.trajectory`):
``tool_calls`` (the calls it made, in order), ``steps``, ``tokens`` (input and output, or a
total) and ``cost_usd``.  Each is null when unknown, so records written before these fields
existed read as they did.

>>> record = TrialRecord(case_id="add-1", trial=0, target="gpt-x", passed=True, verdict="pass", score=1.0)
>>> line = record.to_json_line()
>>> TrialRecord.from_json_line(line) == record
True
>>> TrialRecord(case_id="add-1", trial=1, passed=None, verdict="fail")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
trialscore.errors.EvaluationError: TrialRecord: passed=None (an errored trial) requires verdict 'error'; ...
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any, Literal

from pydantic import Field, StrictBool, StrictInt, field_validator, model_validator

from trialscore.compat._scoring_records import GraderResult, JudgeGrade
from trialscore.errors import EvaluationError
from trialscore.record_model import RecordModel, describe, record_config
from trialscore.results.trajectory import TokenUsage, ToolCall, token_usage

__all__ = ["GraderResult", "JudgeGrade", "TokenUsage", "ToolCall", "TrialRecord", "Verdict", "verdict_of"]

#: The four verdicts a trial can have.
Verdict = Literal["pass", "fail", "borderline", "error"]


def verdict_of(passed: bool | None) -> Verdict:
    """The verdict implied by a binary outcome: True -> pass, False -> fail, None -> error.

    >>> verdict_of(True), verdict_of(False), verdict_of(None)
    ('pass', 'fail', 'error')
    """
    if passed is None:
        return "error"
    return "pass" if passed else "fail"


class TrialRecord(RecordModel):
    """One trial of one eval case (see the module docstring for the consistency rules).

    Required: ``case_id``, ``trial``, ``passed``, ``verdict``; everything else
    defaults to None (unknown) or, for ``grader_results``, to no graders.  Each
    ``grader_results`` entry is seed 000's :class:`trialscore.compat.scoring.GraderResult`
    (re-exported here), the record :func:`trialscore.compat.scoring.compute_stimulus_score` takes;
    an ``llm_judge`` grader's entry also lists its every judge call in ``calls``
    (:class:`JudgeGrade`: judge, repeat, verdict or error), a key absent from every other entry,
    so files written before it existed read unchanged.
    """

    model_config = record_config(
        "One trial of one eval case. Rules: verdict 'error' <=> passed null; verdict 'pass' <=> passed true "
        "('fail' and 'borderline' mean passed false); an errored trial has score null; an error message "
        "requires verdict 'error'."
    )

    run_id: str | None = Field(default=None, description="Identifier of the run that produced this trial.")
    suite: str | None = Field(default=None, description="Name of the eval suite.")
    case_id: str = Field(min_length=1, description="Identifier of the eval case (the item).")
    trial: StrictInt = Field(ge=0, description="Trial index of this case, from 0.")
    target: str | None = Field(default=None, description="The model or agent under evaluation.")
    category: str | None = Field(default=None, description="Task category or skill of the case.")
    passed: StrictBool | None = Field(description="Binary outcome; null when the trial errored.")
    score: float | None = Field(default=None, ge=0.0, le=1.0, description="Score in [0, 1]; null if none.")
    verdict: Verdict = Field(description="pass | fail | borderline | error.")
    grader_results: tuple[GraderResult, ...] = Field(default=(), description="Per-grader results.")
    cost_usd: float | None = Field(default=None, ge=0.0, description="Cost in US dollars; null = unknown.")
    latency_s: float | None = Field(default=None, ge=0.0, description="Wall-clock latency in seconds.")
    tokens: TokenUsage | StrictInt | None = Field(
        default=None, description="Tokens used: input and output, or a total; null = unknown."
    )
    output: str | None = Field(
        default=None, description="What the target said (its output text); null if it gave none."
    )
    error: str | None = Field(default=None, description="Error message of an errored trial.")
    started_at: datetime | None = Field(default=None, description="When the trial started (ISO 8601).")
    seed: StrictInt | None = Field(default=None, description="Random seed of the trial, if any.")
    tool_calls: tuple[ToolCall, ...] | None = Field(
        default=None,
        description="The tool calls the target made, in order (its trajectory); null = not recorded.",
    )
    steps: StrictInt | None = Field(
        default=None, ge=0, description="Steps of the agent's loop (turns); null = unknown."
    )

    @field_validator("tokens", mode="before")
    @classmethod
    def _usage(cls, value: object) -> object:
        return token_usage(value)

    @model_validator(mode="after")
    def _consistent(self) -> TrialRecord:
        if self.passed is None and self.verdict != "error":
            raise ValueError(
                f"passed=None (an errored trial) requires verdict 'error'; got verdict={self.verdict!r}"
            )
        if self.verdict == "error" and self.passed is not None:
            raise ValueError(f"verdict 'error' requires passed=None; got passed={self.passed!r}")
        if self.passed is True and self.verdict != "pass":
            raise ValueError(f"passed=True requires verdict 'pass'; got verdict={self.verdict!r}")
        if self.passed is False and self.verdict == "pass":
            raise ValueError("passed=False requires verdict 'fail' or 'borderline'; got verdict='pass'")
        if self.verdict == "error" and self.score is not None:
            raise ValueError(f"verdict 'error' requires score=None; got score={self.score!r}")
        if self.error is not None and self.verdict != "error":
            raise ValueError(f"an error message requires verdict 'error'; got verdict={self.verdict!r}")
        if isinstance(self.tokens, int) and self.tokens < 0:
            raise ValueError(f"tokens must be >= 0; got tokens={self.tokens!r}")
        return self

    @property
    def errored(self) -> bool:
        """True when the trial errored (no outcome)."""
        return self.verdict == "error"

    def to_json_line(self) -> str:
        """The record as one line of JSON (no trailing newline), every field present.

        >>> TrialRecord(case_id="c", trial=2, passed=False, verdict="fail").to_json_line()[:40]
        '{"run_id":null,"suite":null,"case_id":"c'
        """
        return self.model_dump_json()

    @classmethod
    def from_json_line(cls, line: str | bytes, where: str = "") -> TrialRecord:
        """Parse one JSON line; bad JSON or a bad field raises :class:`EvaluationError`.

        ``where`` (e.g. ``"results.jsonl line 7"``) is prefixed to the message.

        >>> TrialRecord.from_json_line('{"case_id": "c", "trial": -1, "passed": true, "verdict": "pass"}',
        ...                            where="log.jsonl line 3")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        trialscore.errors.EvaluationError: log.jsonl line 3: TrialRecord field 'trial': ...
        """
        try:
            data = json.loads(line)
        except RecursionError:
            message = "not valid JSON: nested too deeply (arrays or objects over about 1000 levels deep)"
            raise EvaluationError(f"{where}: {message}" if where else message) from None
        except (ValueError, TypeError) as exc:
            message = f"not valid JSON: {exc}"
            raise EvaluationError(f"{where}: {message}" if where else message) from exc
        return cls.from_dict(data, where)

    @classmethod
    def from_dict(cls, data: dict[str, Any], where: str = "") -> TrialRecord:
        """Build from a plain dict (as :meth:`to_dict` gives); errors as :meth:`from_json_line`.

        >>> TrialRecord.from_dict({"case_id": "c", "trial": 0, "passed": None, "verdict": "error"}).errored
        True
        """
        if not isinstance(data, dict):
            message = f"a trial record must be a JSON object; got {describe(data)}"
            raise EvaluationError(f"{where}: {message}" if where else message)
        try:
            return cls(**data)
        except EvaluationError as exc:
            raise EvaluationError(f"{where}: {exc}" if where else str(exc)) from exc
