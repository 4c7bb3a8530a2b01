"""The suite schema: Pydantic models of a suite's targets, graders, cases and execution settings.

The target and grader models live with their implementations (each module of
:mod:`trialscore.runner.targets` and :mod:`trialscore.runner.graders` registers its type in
:mod:`trialscore.runner.registry`); the discriminated unions :data:`TargetSpec` and
:data:`GraderSpec` are built here from those registries.  Rules that span fields are in
:mod:`trialscore.runner.suite.rules`; the validated suite they make in
:mod:`trialscore.runner.suite.model`; reading files and their line numbers in
:mod:`trialscore.runner.suite.locations`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Literal, Union

from pydantic import Field, StrictBool, StrictInt, model_validator

import trialscore.runner.graders
import trialscore.runner.targets  # noqa: F401  (registers the target types)
from trialscore.runner.graders.external import CommandGraderSpec, PythonGraderSpec
from trialscore.runner.graders.judge import LlmJudgeGraderSpec
from trialscore.runner.graders.schema import JsonSchemaGraderSpec
from trialscore.runner.graders.text import (
    ContainsGraderSpec,
    ExactGraderSpec,
    NumericGraderSpec,
    RegexGraderSpec,
)
from trialscore.runner.registry import (
    GRADERS,
    TARGETS,
    GraderSpecBase,
    Label,
    NonNegative,
    OneLine,
    Positive,
    Spec,
    TargetSpecBase,
)
from trialscore.runner.targets.command import CommandTargetSpec
from trialscore.runner.targets.openai import OpenAITargetSpec, PriceTable
from trialscore.runner.targets.python import PythonTargetSpec

__all__ = [
    "MAX_CONCURRENCY",
    "MAX_TRIALS",
    "MEAN_STRATEGIES",
    "CaseExecution",
    "CaseSettings",
    "CaseSpec",
    "CommandGraderSpec",
    "CommandTargetSpec",
    "ContainsGraderSpec",
    "ExactGraderSpec",
    "ExecutionSpec",
    "GraderSpec",
    "JsonSchemaGraderSpec",
    "LlmJudgeGraderSpec",
    "NumericGraderSpec",
    "OpenAITargetSpec",
    "PriceTable",
    "PythonGraderSpec",
    "PythonTargetSpec",
    "RegexGraderSpec",
    "Strategy",
    "TargetSpec",
    "TrialsOverride",
    "TrialsSpec",
    "case_settings",
]

#: How a case's trials are aggregated into the case result (seed 003, plus pass_all).
Strategy = Literal["pass_at_k", "pass_all", "mean", "confidence_interval"]

#: Strategies whose case verdict compares a mean score to ``threshold``.
MEAN_STRATEGIES = ("mean", "confidence_interval")

_Probability = Annotated[float, Field(ge=0.0, le=1.0)]

if TYPE_CHECKING:
    TargetSpec = TargetSpecBase
    GraderSpec = GraderSpecBase
else:
    #: Any registered target spec, chosen by its ``type``.
    TargetSpec = Annotated[Union[tuple(kind.spec for kind in TARGETS.values())], Field(discriminator="type")]  # noqa: UP007
    #: Any registered grader spec, chosen by its ``type``.
    GraderSpec = Annotated[Union[tuple(kind.spec for kind in GRADERS.values())], Field(discriminator="type")]  # noqa: UP007


#: The most trials of one case: a hostile or mistyped count (1e9) is refused, not run for days.
MAX_TRIALS = 100_000
#: The most trials in flight at once (each holds a task, and maybe a program or a connection).
MAX_CONCURRENCY = 10_000


class TrialsSpec(Spec):
    """``count`` trials per case, aggregated by ``strategy``; ``cost_limit_usd`` is a per-case budget."""

    count: Annotated[StrictInt, Field(ge=1, le=MAX_TRIALS)] = 1
    strategy: Strategy = "pass_at_k"
    cost_limit_usd: Positive | None = None


class ExecutionSpec(Spec):
    """Suite-wide execution settings (see docs/runner.md for each)."""

    trials: TrialsSpec = TrialsSpec()
    cost_limit_usd: Positive | None = None
    concurrency: Annotated[StrictInt, Field(ge=1, le=MAX_CONCURRENCY)] = 8
    timeout_s: Positive = 60.0
    retries: Annotated[StrictInt, Field(ge=0)] = 2
    backoff_s: NonNegative = 0.5
    seed: Annotated[StrictInt, Field(ge=0)] = 0  # numpy's generators (the summary's bootstrap) need >= 0
    threshold: _Probability | None = None
    borderline: _Probability | None = None
    skill_threshold: _Probability | None = None
    adaptive: StrictBool = False
    sequential: StrictBool = False
    alpha: Annotated[float, Field(gt=0.0, lt=1.0)] = 0.05

    @model_validator(mode="after")
    def _sequential_needs_adaptive(self) -> ExecutionSpec:
        if self.sequential and not self.adaptive:
            raise ValueError(
                "sequential: true needs adaptive: true (the sequential rule stops an adaptive run)"
            )
        return self

    @property
    def skill_mark(self) -> float:
        """Seed 000's skill pass mark: ``skill_threshold``, else ``threshold``, else 0.5."""
        for mark in (self.skill_threshold, self.threshold):
            if mark is not None:
                return mark
        return 0.5


class TrialsOverride(Spec):
    """Per-case override of the suite's trials settings."""

    count: Annotated[StrictInt, Field(ge=1, le=MAX_TRIALS)] | None = None
    strategy: Strategy | None = None
    cost_limit_usd: Positive | None = None


class CaseExecution(Spec):
    """Per-case overrides of the suite's execution settings."""

    trials: TrialsOverride | None = None
    timeout_s: Positive | None = None
    retries: Annotated[StrictInt, Field(ge=0)] | None = None
    threshold: _Probability | None = None
    borderline: _Probability | None = None


class CaseSpec(Spec):
    """One eval case: ``input`` (or ``prompt``), ``expected``, ``category``, ``tags`` and ``graders``."""

    id: Label
    input: str | dict[str, Any] | list[Any] | None = None
    prompt: str | None = None
    expected: Any = None
    category: OneLine | None = None
    tags: tuple[str, ...] = ()
    metadata: dict[str, Any] = Field(default_factory=dict)
    graders: tuple[GraderSpec, ...] | None = None
    execution: CaseExecution | None = None

    @property
    def text(self) -> str:
        """What a target is given: ``prompt``, else ``input`` (as JSON when it is not a string)."""
        value = self.prompt if self.prompt is not None else self.input
        return value if isinstance(value, str) else json.dumps(value)


@dataclass(frozen=True)
class CaseSettings:
    """The execution settings of one case: the suite's, with the case's overrides applied."""

    trials: int
    strategy: Strategy
    cost_limit_usd: float | None
    timeout_s: float
    retries: int
    backoff_s: float
    threshold: float | None
    borderline: float | None

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dict."""
        return dict(self.__dict__)


def case_settings(base: ExecutionSpec, over: CaseExecution | None) -> CaseSettings:
    """The suite's execution settings with a case's overrides applied.

    >>> case_settings(ExecutionSpec(), CaseExecution(trials=TrialsOverride(count=7), retries=0)).trials
    7
    """
    over = over or CaseExecution()
    trials = over.trials or TrialsOverride()

    def pick(value: Any, default: Any) -> Any:
        return default if value is None else value

    return CaseSettings(
        trials=pick(trials.count, base.trials.count),
        strategy=pick(trials.strategy, base.trials.strategy),
        cost_limit_usd=pick(trials.cost_limit_usd, base.trials.cost_limit_usd),
        timeout_s=pick(over.timeout_s, base.timeout_s),
        retries=pick(over.retries, base.retries),
        backoff_s=base.backoff_s,
        threshold=pick(over.threshold, base.threshold),
        borderline=pick(over.borderline, base.borderline),
    )
