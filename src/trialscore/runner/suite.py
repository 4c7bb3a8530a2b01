"""The eval-suite file: a YAML document validated by a Pydantic schema.

A suite names its ``targets`` (what is evaluated), its ``cases`` (inputs, the
expected answer, a category and the graders that judge an output) and its
``execution`` settings (trials, strategy, cost limits, concurrency, timeouts,
retries, seed and pass threshold).  :func:`load_suite` reads a file and reports
*every* problem at once, each as ``file:line: field: rule; got value``, with the
line taken from the YAML node the field came from.

>>> import tempfile, pathlib
>>> text = '''
... name: arithmetic
... targets:
...   - {name: calc, type: command, argv: [bc, -q]}
... cases:
...   - {id: add, input: "2+2", expected: "4", graders: [{type: exact}]}
... execution:
...   trials: {count: 5, strategy: pass_at_k}
... '''
>>> path = pathlib.Path(tempfile.mkdtemp()) / "suite.yaml"
>>> _ = path.write_text(text)
>>> suite = load_suite(path)
>>> suite.name, suite.cases[0].id, suite.settings_for(suite.cases[0]).trials
('arithmetic', 'add', 5)
>>> _ = path.write_text(text.replace("count: 5", "count: 0"))
>>> load_suite(path)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
trialscore.errors.EvaluationError: ...suite.yaml: invalid suite (1 problem):
  ...suite.yaml:8: execution.trials.count: Input should be greater than or equal to 1; got 0
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, get_args

import jsonschema
import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    StrictBool,
    StrictInt,
    ValidationError,
    field_validator,
)

from trialscore.errors import EvaluationError

__all__ = [
    "CaseSettings",
    "CaseSpec",
    "CommandTargetSpec",
    "ExecutionSpec",
    "GraderSpec",
    "OpenAITargetSpec",
    "PriceTable",
    "PythonTargetSpec",
    "Strategy",
    "Suite",
    "TargetSpec",
    "load_suite",
]

#: How a case's trials are aggregated into the case result (seed 003, plus pass_all).
Strategy = Literal["pass_at_k", "pass_all", "mean", "confidence_interval"]

#: Strategies whose case verdict compares a mean score to ``threshold``.
MEAN_STRATEGIES = ("mean", "confidence_interval")

_Probability = Annotated[float, Field(ge=0.0, le=1.0)]
_NonNegative = Annotated[float, Field(ge=0.0)]
_Positive = Annotated[float, Field(gt=0.0)]
_Name = Annotated[str, Field(min_length=1)]
_Argv = Annotated[tuple[_Name, ...], Field(min_length=1)]


class _Spec(BaseModel):
    """Frozen, closed (unknown keys are errors, so typos are caught) suite fragment."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False, populate_by_name=True)


# --------------------------------------------------------------------------- targets


class PriceTable(_Spec):
    """US dollars per million prompt (input) and completion (output) tokens."""

    input_per_mtok: _NonNegative
    output_per_mtok: _NonNegative


class _TargetBase(_Spec):
    name: _Name
    judge_only: StrictBool = False


class CommandTargetSpec(_TargetBase):
    """A program run once per trial: the case input on stdin and in ``TRIALSCORE_*`` variables."""

    type: Literal["command"]
    argv: _Argv
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None


class PythonTargetSpec(_TargetBase):
    """A callable ``module:attr`` (or ``file.py:attr``, relative to the suite) given the case and seed."""

    type: Literal["python"]
    callable: _Name


class OpenAITargetSpec(_TargetBase):
    """An OpenAI-compatible chat-completions endpoint; the key is read from ``api_key_env``."""

    type: Literal["openai"]
    base_url: _Name
    model: _Name
    temperature: Annotated[float, Field(ge=0.0, le=2.0)] | None = None
    max_tokens: Annotated[int, Field(ge=1)] | None = None
    system: str | None = None
    api_key_env: _Name | None = None
    prices: PriceTable | None = None


TargetSpec = Annotated[CommandTargetSpec | PythonTargetSpec | OpenAITargetSpec, Field(discriminator="type")]


# --------------------------------------------------------------------------- graders


class _GraderBase(_Spec):
    weight: _NonNegative = 1.0
    name: _Name | None = None

    @property
    def label(self) -> str:
        """The grader's name in results: ``name`` if given, else its type."""
        return self.name or self.type  # type: ignore[attr-defined]


class ExactGraderSpec(_GraderBase):
    """Output equals ``value`` (default: the case's ``expected``)."""

    type: Literal["exact"]
    value: Any = None
    case_sensitive: StrictBool = True
    strip: StrictBool = True


class ContainsGraderSpec(_GraderBase):
    """Output contains ``value`` (a string, or every string of a list; default ``expected``)."""

    type: Literal["contains"]
    value: str | tuple[str, ...] | None = None
    case_sensitive: StrictBool = True


class RegexGraderSpec(_GraderBase):
    """``pattern`` matches somewhere in the output (``re.search``)."""

    type: Literal["regex"]
    pattern: str
    ignore_case: StrictBool = False

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, pattern: str) -> str:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ValueError(f"not a valid regular expression ({exc})") from exc
        return pattern


class NumericGraderSpec(_GraderBase):
    """The number in the output is within ``tolerance`` (absolute) or ``relative_tolerance`` of ``value``."""

    type: Literal["numeric"]
    value: float | None = None
    tolerance: _NonNegative = 0.0
    relative_tolerance: _NonNegative = 0.0


class JsonSchemaGraderSpec(_GraderBase):
    """The output parses as JSON and validates against ``schema`` (inline) or ``schema_file``."""

    type: Literal["json_schema"]
    schema_: dict[str, Any] | None = Field(default=None, alias="schema")
    schema_file: _Name | None = None

    @field_validator("schema_")
    @classmethod
    def _valid_schema(cls, schema: dict[str, Any] | None) -> dict[str, Any] | None:
        if schema is not None:
            try:
                jsonschema.validators.validator_for(schema).check_schema(schema)
            except jsonschema.SchemaError as exc:
                raise ValueError(f"not a valid JSON Schema ({exc.message})") from exc
        return schema


class CommandGraderSpec(_GraderBase):
    """A program given the output on stdin; exit status 0 passes."""

    type: Literal["command"]
    argv: _Argv
    timeout_s: _Positive = 30.0


class PythonGraderSpec(_GraderBase):
    """A callable ``module:attr`` given ``(output, case)``; returns a bool, a score or a dict.

    A bare score passes when it is at least ``pass_score``.
    """

    type: Literal["python"]
    callable: _Name
    pass_score: _Probability = 0.5


class LlmJudgeGraderSpec(_GraderBase):
    """A rubric prompt sent to the suite target ``target``; its reply carries a score."""

    type: Literal["llm_judge"]
    target: _Name
    rubric: _Name
    scale: _Positive = 1.0
    pass_score: _Probability = 0.5


GraderSpec = Annotated[
    ExactGraderSpec
    | ContainsGraderSpec
    | RegexGraderSpec
    | NumericGraderSpec
    | JsonSchemaGraderSpec
    | CommandGraderSpec
    | PythonGraderSpec
    | LlmJudgeGraderSpec,
    Field(discriminator="type"),
]


#: Every target and grader ``type``: Pydantic names them in error locations, the suite file does not.
_TYPE_TAGS = frozenset(
    get_args(model.model_fields["type"].annotation)[0]
    for spec in (TargetSpec, GraderSpec)
    for model in get_args(get_args(spec)[0])
)

# --------------------------------------------------------------------------- execution


#: The most trials of one case: a hostile or mistyped count (1e9) is refused, not run for days.
MAX_TRIALS = 100_000
#: The most trials in flight at once (each holds a task, and maybe a program or a connection).
MAX_CONCURRENCY = 10_000


class TrialsSpec(_Spec):
    """``count`` trials per case, aggregated by ``strategy``; ``cost_limit_usd`` is a per-case budget."""

    count: Annotated[StrictInt, Field(ge=1, le=MAX_TRIALS)] = 1
    strategy: Strategy = "pass_at_k"
    cost_limit_usd: _Positive | None = None


class ExecutionSpec(_Spec):
    """Suite-wide execution settings (see docs/runner.md for each)."""

    trials: TrialsSpec = TrialsSpec()
    cost_limit_usd: _Positive | None = None
    concurrency: Annotated[StrictInt, Field(ge=1, le=MAX_CONCURRENCY)] = 8
    timeout_s: _Positive = 60.0
    retries: Annotated[StrictInt, Field(ge=0)] = 2
    backoff_s: _NonNegative = 0.5
    seed: Annotated[StrictInt, Field(ge=0)] = 0  # numpy's generators (the summary's bootstrap) need >= 0
    threshold: _Probability | None = None
    borderline: _Probability | None = None
    skill_threshold: _Probability | None = None

    @property
    def skill_mark(self) -> float:
        """Seed 000's skill pass mark: ``skill_threshold``, else ``threshold``, else 0.5."""
        for mark in (self.skill_threshold, self.threshold):
            if mark is not None:
                return mark
        return 0.5


class TrialsOverride(_Spec):
    """Per-case override of the suite's trials settings."""

    count: Annotated[StrictInt, Field(ge=1, le=MAX_TRIALS)] | None = None
    strategy: Strategy | None = None
    cost_limit_usd: _Positive | None = None


class CaseExecution(_Spec):
    """Per-case overrides of the suite's execution settings."""

    trials: TrialsOverride | None = None
    timeout_s: _Positive | None = None
    retries: Annotated[StrictInt, Field(ge=0)] | None = None
    threshold: _Probability | None = None
    borderline: _Probability | None = None


class CaseSpec(_Spec):
    """One eval case: ``input`` (or ``prompt``), ``expected``, ``category``, ``tags`` and ``graders``."""

    id: _Name
    input: str | dict[str, Any] | list[Any] | None = None
    prompt: str | None = None
    expected: Any = None
    category: str | None = None
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


class Suite(_Spec):
    """A validated eval suite; build it with :func:`load_suite` (or ``Suite.from_mapping``)."""

    name: _Name
    description: str | None = None
    targets: Annotated[tuple[TargetSpec, ...], Field(min_length=1)]
    graders: tuple[GraderSpec, ...] = ()
    cases: Annotated[tuple[CaseSpec, ...], Field(min_length=1)]
    execution: ExecutionSpec = ExecutionSpec()

    _path: Path | None = PrivateAttr(default=None)
    _directory: Path = PrivateAttr(default_factory=Path.cwd)
    _digest: str = PrivateAttr(default="")

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

    def target(self, name: str) -> TargetSpec:
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

    def graders_for(self, case: CaseSpec) -> tuple[GraderSpec, ...]:
        """The case's graders, or the suite's default ``graders`` when the case has none."""
        return case.graders if case.graders is not None else self.graders

    def settings_for(self, case: CaseSpec) -> CaseSettings:
        """The case's execution settings: the suite's with the case's overrides applied."""
        base, over = self.execution, case.execution or CaseExecution()
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

    @classmethod
    def from_mapping(cls, data: Any, source: str = "<suite>", directory: Path | None = None) -> Suite:
        """Validate an already-parsed suite (a dict); errors name fields but no lines.

        >>> Suite.from_mapping({"name": "s", "targets": [], "cases": []})  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        trialscore.errors.EvaluationError: <suite>: invalid suite (2 problems):
          <suite>: targets: Tuple should have at least 1 item after validation, not 0; got []
          <suite>: cases: Tuple should have at least 1 item after validation, not 0; got []
        """
        return _validated(
            data, None, source, None, directory or Path.cwd(), text=json.dumps(data, default=str)
        )


# --------------------------------------------------------------------------- loading


@dataclass(frozen=True)
class _Problem:
    loc: tuple[str | int, ...]
    message: str


def _field_name(loc: tuple[str | int, ...]) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "(document)"


def _describe(value: object) -> str:
    text = json.dumps(value, default=str) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _node_at(root: yaml.Node | None, loc: tuple[str | int, ...]) -> tuple[yaml.Node | None, tuple]:
    """The deepest YAML node along ``loc`` and the loc parts actually found in the document."""
    node, found = root, ()
    for part in loc:
        child = None
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                if isinstance(key, yaml.ScalarNode) and key.value == part:
                    child = value
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            child = node.value[part]
        if child is None:
            continue  # a discriminator tag in Pydantic's loc, or a missing key: stay on this node
        node, found = child, (*found, part)
    return node, found


def _duplicate_keys(node: yaml.Node | None, loc: tuple = ()) -> list[tuple[_Problem, yaml.Node]]:
    problems: list[tuple[_Problem, yaml.Node]] = []
    if isinstance(node, yaml.MappingNode):
        seen: set[str] = set()
        for key, value in node.value:
            name = key.value if isinstance(key, yaml.ScalarNode) else str(key)
            if name in seen:
                problems.append((_Problem((*loc, name), "duplicate key (YAML keeps only the last)"), key))
            seen.add(name)
            problems.extend(_duplicate_keys(value, (*loc, name)))
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            problems.extend(_duplicate_keys(item, (*loc, index)))
    return problems


def _without_tags(loc: tuple[str | int, ...]) -> tuple[str | int, ...]:
    """Pydantic puts the union tag after a list index (``cases.0.numeric.tolerance``); drop it."""
    return tuple(
        part
        for index, part in enumerate(loc)
        if not (part in _TYPE_TAGS and index > 0 and isinstance(loc[index - 1], int))
    )


def _pydantic_problems(exc: ValidationError) -> list[_Problem]:
    problems = []
    for error in exc.errors(include_url=False):
        loc, message = _without_tags(tuple(error["loc"])), error["msg"].removeprefix("Value error, ")
        if error["type"] == "union_tag_invalid":
            loc = (*loc, "type")
            message = f"unknown type; expected one of {error['ctx']['expected_tags']}"
            value: object = error["ctx"]["tag"]
        elif error["type"] == "union_tag_not_found":
            loc, message, value = (*loc, "type"), "missing; every target and grader needs a type", None
        else:
            value = error["input"]
        if error["type"] == "missing" or value is None:
            problems.append(_Problem(loc, message))
        else:
            problems.append(_Problem(loc, f"{message}; got {_describe(value)}"))
    return problems


def _reference_problems(suite: Suite) -> list[_Problem]:
    """Rules that span fields: unique names, graders present, judges name targets, thresholds."""
    problems: list[_Problem] = []
    target_names = [t.name for t in suite.targets]
    if not suite.evaluated_targets:
        problems.append(
            _Problem(("targets",), "at least one target must not be judge_only (else nothing runs)")
        )
    for index, name in enumerate(target_names):
        if name in target_names[:index]:
            problems.append(
                _Problem(("targets", index, "name"), f"target names must be unique; got {name!r} twice")
            )
    case_ids = [case.id for case in suite.cases]
    for index, case_id in enumerate(case_ids):
        if case_id in case_ids[:index]:
            problems.append(
                _Problem(("cases", index, "id"), f"case ids must be unique; got {case_id!r} twice")
            )
    problems.extend(_settings_problems(suite.settings_for(CaseSpec(id="-", input="")), ("execution",), ""))
    for index, case in enumerate(suite.cases):
        where = ("cases", index)
        if (case.input is None) == (case.prompt is None):
            problems.append(_Problem(where, "a case needs exactly one of input or prompt"))
        graders = suite.graders_for(case)
        if not graders:
            problems.append(_Problem(where, "a case needs graders (on the case, or suite-level graders)"))
        elif not any(grader.weight > 0 for grader in graders):
            problems.append(
                _Problem(where, "grader weights must not all be 0 (the trial score divides by their sum)")
            )
        own = case.graders is not None
        for g, grader in enumerate(suite.graders_for(case)):
            loc = (*where, "graders", g) if own else ("graders", g)
            problems.extend(_grader_problems(grader, case, where, loc, target_names, suite.directory))
        if case.execution is not None:
            settings = suite.settings_for(case)
            problems.extend(
                _settings_problems(settings, (*where, "execution"), f" (case {case.id!r})", case.execution)
            )
    return problems


def _grader_problems(
    grader: GraderSpec, case: CaseSpec, case_loc: tuple, loc: tuple, target_names: list[str], directory: Path
) -> list[_Problem]:
    problems = []
    for_case = f"(case {case.id!r})"
    needs_expected = isinstance(grader, ExactGraderSpec | ContainsGraderSpec | NumericGraderSpec)
    if needs_expected and grader.value is None and case.expected is None:
        problems.append(
            _Problem((*loc, "value"), f"a {grader.type} grader needs value or expected {for_case}")
        )
    if isinstance(grader, NumericGraderSpec) and grader.value is None and case.expected is not None:
        try:
            float(case.expected)
        except (TypeError, ValueError):
            problems.append(
                _Problem(
                    (*case_loc, "expected"),
                    f"a numeric grader needs a number; got {_describe(case.expected)} {for_case}",
                )
            )
    if isinstance(grader, JsonSchemaGraderSpec):
        if (grader.schema_ is None) == (grader.schema_file is None):
            problems.append(_Problem(loc, "a json_schema grader needs exactly one of schema or schema_file"))
        elif grader.schema_file is not None and not (directory / grader.schema_file).is_file():
            problems.append(
                _Problem(
                    (*loc, "schema_file"),
                    f"file not found (relative to the suite); got {grader.schema_file!r}",
                )
            )
    if isinstance(grader, LlmJudgeGraderSpec) and grader.target not in target_names:
        problems.append(
            _Problem(
                (*loc, "target"),
                f"must name one of the suite's targets ({', '.join(dict.fromkeys(target_names))}); "
                f"got {grader.target!r}",
            )
        )
    return problems


def _settings_problems(
    settings: CaseSettings, where: tuple, for_case: str, overrides: CaseExecution | None = None
) -> list[_Problem]:
    """Threshold rules; for a case, only those its own ``execution`` overrides can break."""
    problems = []
    strategy_set = (
        overrides is None
        or overrides.threshold is not None
        or (overrides.trials is not None and overrides.trials.strategy is not None)
    )
    band_set = overrides is None or overrides.threshold is not None or overrides.borderline is not None
    if strategy_set and settings.strategy in MEAN_STRATEGIES and settings.threshold is None:
        problems.append(
            _Problem(
                (*where, "threshold"),
                f"strategy {settings.strategy!r} compares the mean score to threshold, "
                f"which is not set{for_case}",
            )
        )
    if band_set and settings.borderline is not None:
        if settings.threshold is None:
            problems.append(
                _Problem((*where, "borderline"), f"borderline needs a threshold above it{for_case}")
            )
        elif settings.borderline >= settings.threshold:
            problems.append(
                _Problem(
                    (*where, "borderline"),
                    f"must be below threshold={settings.threshold}; got {settings.borderline}{for_case}",
                )
            )
    return problems


def _report(source: str, problems: list[tuple[_Problem, yaml.Node | None]]) -> EvaluationError:
    lines = []
    for problem, node in problems:
        where = f"{source}:{node.start_mark.line + 1}" if node is not None else source
        lines.append(f"  {where}: {_field_name(problem.loc)}: {problem.message}")
    unique = list(dict.fromkeys(lines))
    count = f"{len(unique)} problem" + ("s" if len(unique) != 1 else "")
    return EvaluationError(f"{source}: invalid suite ({count}):\n" + "\n".join(unique))


def _validated(
    data: Any, root: yaml.Node | None, source: str, path: Path | None, directory: Path, text: str
) -> Suite:
    def located(problem: _Problem) -> tuple[_Problem, yaml.Node | None]:
        return problem, _node_at(root, problem.loc)[0] if root is not None else None

    if not isinstance(data, dict):
        raise _report(
            source, [(_Problem((), f"a suite must be a YAML mapping; got {_describe(data)}"), root)]
        )
    duplicates = _duplicate_keys(root)
    try:
        suite = Suite.model_validate(data)
    except ValidationError as exc:
        problems = [p for p, _ in duplicates] + _pydantic_problems(exc)
        raise _report(source, [located(p) for p in problems]) from exc
    suite._path, suite._directory = path, directory
    problems = [p for p, _ in duplicates] + _reference_problems(suite)
    if problems:
        raise _report(source, [located(p) for p in problems])
    suite._digest = hashlib.sha256(text.encode()).hexdigest()
    return suite


def load_suite(path: str | Path) -> Suite:
    """Read and validate a suite file; every problem is reported as ``file:line: field: rule; got value``.

    Raises
    ------
    EvaluationError
        When the file cannot be read, is not YAML, or breaks a schema rule.
    """
    path = Path(path)
    source = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise EvaluationError(f"{source}: cannot read the suite file ({exc.strerror or exc})") from exc
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{source}:{mark.line + 1}" if mark is not None else source
        problem = getattr(exc, "problem", None) or str(exc)
        raise EvaluationError(f"{where}: not valid YAML: {problem}") from exc
    resolved = path.resolve()
    return _validated(data, root, source, resolved, resolved.parent, text)
