"""The suite schema: Pydantic models of a suite's targets, graders, cases and execution settings.

The target and grader models live with their implementations (each module of
:mod:`trialscore.runner.targets` and :mod:`trialscore.runner.graders` registers its type in
:mod:`trialscore.runner.registry`); the discriminated unions :data:`TargetSpec` and
:data:`GraderSpec` are built here from those registries.  Rules that span fields are in
:mod:`trialscore.runner.suite.rules`; reading files and their line numbers in
:mod:`trialscore.runner.suite.locations`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, Union

from pydantic import Field, PrivateAttr, StrictBool, StrictInt, model_validator

import trialscore.runner.graders
import trialscore.runner.targets  # noqa: F401  (registers the target types)
from trialscore.errors import EvaluationError
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
    Name,
    NonNegative,
    OneLine,
    Positive,
    Problem,
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
    "Suite",
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


class Suite(Spec):
    """A validated eval suite; build it with ``load_suite`` or :meth:`from_mapping`."""

    name: Name
    description: str | None = None
    targets: Annotated[tuple[TargetSpec, ...], Field(min_length=1)]
    graders: tuple[GraderSpec, ...] = ()
    cases: Annotated[tuple[CaseSpec, ...], Field(min_length=1)]
    execution: ExecutionSpec = ExecutionSpec()

    _path: Path | None = PrivateAttr(default=None)
    _directory: Path = PrivateAttr(default_factory=Path.cwd)
    _digest: str = PrivateAttr(default="")
    _text: str = PrivateAttr(default="")
    _source: str = PrivateAttr(default="<suite>")
    _lines: Any = PrivateAttr(default=None)

    @property
    def path(self) -> Path | None:
        """The file the suite was read from (None when built from a mapping)."""
        return self._path

    @property
    def directory(self) -> Path:
        """Directory relative paths in the suite are resolved against (the file's, else the cwd)."""
        return self._directory

    @property
    def digest(self) -> str:
        """SHA-256 of the suite's source text (a resumed run checks it has not changed)."""
        return self._digest

    @property
    def text(self) -> str:
        """The suite's source text (YAML as read, or JSON for a suite built from a mapping)."""
        return self._text

    def target(self, name: str) -> TargetSpecBase:
        """The target called ``name``."""
        for target in self.targets:
            if target.name == name:
                return target
        names = ", ".join(t.name for t in self.targets)
        raise EvaluationError(f"target must name one of the suite's targets ({names}); got {name!r}")

    @property
    def evaluated_targets(self) -> tuple[str, ...]:
        """The targets a run evaluates by default: all but the ``judge_only`` ones."""
        return tuple(target.name for target in self.targets if not target.judge_only)

    def judge_targets(self) -> tuple[str, ...]:
        """The targets ``llm_judge`` graders call, sorted."""
        return tuple(
            sorted(
                {
                    grader.target
                    for case in self.cases
                    for grader in self.graders_for(case)
                    if isinstance(grader, LlmJudgeGraderSpec)
                }
            )
        )

    def graders_for(self, case: CaseSpec) -> tuple[GraderSpecBase, ...]:
        """The case's graders, or the suite's default ``graders`` when the case has none."""
        return case.graders if case.graders is not None else self.graders

    def settings_for(self, case: CaseSpec) -> CaseSettings:
        """The case's execution settings: the suite's with the case's overrides applied."""
        return case_settings(self.execution, case.execution)

    def check_environment(self, targets: tuple[str, ...] | None = None) -> None:
        """Check what only this machine can tell: callables import, API key variables are set.

        ``targets`` limits the target checks to those (the judges the graders call are always
        checked); every python grader is checked.

        Raises
        ------
        EvaluationError
            Listing every problem, each as ``file:line: field: message``.
        """
        from trialscore.runner.suite.rules import environment_problems, suite_sites

        problems = environment_problems(*suite_sites(self), self.directory, targets)
        if problems:
            from trialscore.runner.suite.locations import invalid_suite

            raise invalid_suite(self._source, [self._locate(p) for p in problems])

    def _locate(self, problem: Problem) -> tuple[Problem, Any]:
        """``problem`` with its line in the suite file (or its place in a dataset file)."""
        return self._lines.locate(problem) if self._lines is not None else (problem, None)

    def case_line(self, case_id: str) -> int | None:
        """The line of case ``case_id`` in the suite file (None without lines, for no such case, or for a
        case read from a dataset file)."""
        for index, case in enumerate(self.cases):
            if case.id == case_id:
                found = self._lines.line(("cases", index)) if self._lines is not None else None
                return found if isinstance(found, int) else None
        return None

    @classmethod
    def from_mapping(cls, data: Any, source: str = "<suite>", directory: Path | None = None) -> Suite:
        """Validate an already-parsed suite (a dict); errors name fields but no lines.

        Callables are not imported and API keys not looked up here (see :meth:`check_environment`).

        >>> Suite.from_mapping({"name": "s", "targets": [], "cases": []})  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        trialscore.errors.EvaluationError: <suite>: invalid suite (2 problems):
          <suite>: targets: Tuple should have at least 1 item after validation, not 0; got []
          <suite>: cases: Tuple should have at least 1 item after validation, not 0; got []
        """
        from trialscore.runner.suite.rules import validated

        return validated(data, source, directory or Path.cwd(), text=json.dumps(data, default=str))
