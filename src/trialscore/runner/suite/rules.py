"""Validating a suite document part by part, then the rules that span fields, then the environment.

A suite is validated in pieces (the top-level settings, each target, each grader, each case and its
``execution``), so one bad field never hides another: every piece that is valid takes part in the
cross-field rules (unique names, graders present, a judge names a target, thresholds), and with
``environment=True`` in the checks only this machine can answer (a callable imports, an API key
variable is set, a schema file parses).  :func:`~trialscore.runner.suite.model.validated` reports every
problem at once.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from trialscore.runner.registry import GraderSite, GraderSpecBase, Loc, Problem, TargetSpecBase
from trialscore.runner.suite.messages import pydantic_problems
from trialscore.runner.suite.schema import (
    MEAN_STRATEGIES,
    CaseExecution,
    CaseSettings,
    CaseSpec,
    ExecutionSpec,
    GraderSpec,
    TargetSpec,
    case_settings,
)

if TYPE_CHECKING:
    from trialscore.runner.suite.model import Suite

__all__ = ["Draft", "check_document", "draft_graders", "environment_problems", "suite_sites"]

#: The parts validated one by one: each type (it names the fields of a misspelled key) and its adapter.
_TARGET = (TargetSpec, TypeAdapter(TargetSpec))
_GRADER = (GraderSpec, TypeAdapter(GraderSpec))
_CASE = (CaseSpec, TypeAdapter(CaseSpec))
_LISTS = ("targets", "graders", "cases")


class _Head(BaseModel):
    """The top level of a suite, its lists taken as lists (their items are validated one by one)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    name: Annotated[str, Field(min_length=1)]
    description: str | None = None
    targets: Annotated[tuple[Any, ...], Field(min_length=1)]
    graders: tuple[Any, ...] = ()
    cases: Annotated[tuple[Any, ...], Field(min_length=1)]
    execution: Any = None  # validated on its own (ExecutionSpec)


#: The execution fields the threshold rules read: while one of them is invalid those rules wait.
_RULE_FIELDS = (("trials", "strategy"), ("threshold",), ("borderline",))


def _pruned(value: Mapping[str, Any], places: Iterable[tuple[str | int, ...]]) -> dict[str, Any]:
    """``value`` without the values at ``places`` (Pydantic locations; a place that ends inside a
    list or a scalar removes the key holding it).

    >>> value = {"trials": {"count": 0, "strategy": "mean"}, "retries": -1}
    >>> _pruned(value, [("trials", "count"), ("retries",)])
    {'trials': {'strategy': 'mean'}}
    """
    out = dict(value)
    for place in places:
        holder, key = out, str(place[0])
        for inner_key in place[1:]:
            inner = holder.get(key)
            if not isinstance(inner, Mapping):
                break  # the place ends inside a list or a scalar: its key goes
            holder[key] = holder = dict(inner)  # copied on the way down: ``value`` is left as it is
            key = str(inner_key)
        holder.pop(key, None)
    return out


@dataclass
class _CaseDraft:
    """One case as far as it validated: its fields, its ``execution`` and its own graders."""

    index: int
    raw: Mapping[str, Any]
    spec: CaseSpec | None = None
    execution: CaseExecution | None = None
    execution_rules: bool = True  # the fields the threshold rules read are valid
    own_graders: list[tuple[Loc, GraderSpecBase]] | None = None  # None: the case uses the suite's
    graders_listed: int = 0
    graders_valid: bool = True

    @property
    def id(self) -> str | None:
        """The case's id as written, even when the case did not validate (None when it has none)."""
        return _written(self.raw, "id")


@dataclass
class Draft:
    """A suite document validated piece by piece: the valid pieces and how many were listed."""

    directory: Path
    execution: ExecutionSpec | None = None
    execution_rules: bool = True  # the fields the threshold rules read are valid
    targets: list[tuple[Loc, TargetSpecBase]] = field(default_factory=list)
    targets_valid: bool = True
    target_names: tuple[str | None, ...] = ()  # every target's name as written, its spec valid or not
    graders: list[tuple[Loc, GraderSpecBase]] = field(default_factory=list)
    graders_listed: int = 0
    graders_valid: bool = True
    cases: list[_CaseDraft] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    def partial(self, model: type[Any], value: Any, loc: Loc) -> tuple[Any, bool]:
        """``value`` validated by ``model`` (problems recorded under ``loc``); on errors, again without
        the invalid values (``trials.count`` goes, ``trials.strategy`` stays), so that the valid ones
        still take part in the rules, in the same pass.

        Returns the spec (None when even that fails) and whether the fields the threshold rules
        read (:data:`_RULE_FIELDS`) are all valid.
        """
        try:
            return model.model_validate(value), True
        except ValidationError as exc:
            self.problems.extend(pydantic_problems(exc, loc, model))
            bad = [tuple(error["loc"]) for error in exc.errors()]
        if not isinstance(value, Mapping) or not all(bad):
            return None, False
        try:
            spec = model.model_validate(_pruned(value, bad))
        except ValidationError:
            return None, False
        rules_valid = not any(
            place[: len(field)] == field[: len(place)] for place in bad for field in _RULE_FIELDS
        )
        return spec, rules_valid

    def check(self, part: tuple[Any, TypeAdapter[Any]], value: Any, loc: Loc) -> Any:
        """``value`` validated as ``part`` (a type and its adapter), or None with its problems
        recorded under ``loc``."""
        root, adapter = part
        try:
            return adapter.validate_python(value)
        except ValidationError as exc:
            self.problems.extend(pydantic_problems(exc, loc, root))
            return None


def _items(data: Mapping[str, Any], key: str) -> list[tuple[int, Any]]:
    value = data.get(key)
    return list(enumerate(value)) if isinstance(value, list | tuple) else []


def _graders(draft: Draft, items: Iterable[tuple[int, Any]], loc: Loc) -> tuple[list[tuple[Loc, Any]], bool]:
    valid, complete = [], True
    for index, item in items:
        spec = draft.check(_GRADER, item, (*loc, index))
        if spec is None:
            complete = False
        else:
            valid.append(((*loc, index), spec))
    return valid, complete


def check_document(data: Any, directory: Path) -> Draft:
    """Validate ``data`` piece by piece and apply the cross-field rules; the problems are in the draft."""
    draft = Draft(directory)
    if not isinstance(data, Mapping):
        draft.problems.append(Problem((), f"a suite must be a YAML mapping; got {_short(data)}"))
        return draft
    try:
        _Head.model_validate(data)
    except ValidationError as exc:
        draft.problems.extend(pydantic_problems(exc, (), _Head))
    execution = data.get("execution")
    draft.execution, draft.execution_rules = draft.partial(
        ExecutionSpec, {} if execution is None else execution, ("execution",)
    )
    names = []
    for index, item in _items(data, "targets"):
        spec = draft.check(_TARGET, item, ("targets", index))
        if spec is None:
            draft.targets_valid = False
        else:
            draft.targets.append((("targets", index), spec))
        names.append(_written(item, "name"))
    draft.target_names = tuple(names)
    suite_graders = _items(data, "graders")
    draft.graders_listed = len(suite_graders)
    draft.graders, draft.graders_valid = _graders(draft, suite_graders, ("graders",))
    for index, item in _items(data, "cases"):
        draft.cases.append(_case(draft, index, item))
    draft.problems.extend(_rules(draft))
    return draft


def _case(draft: Draft, index: int, item: Any) -> _CaseDraft:
    loc: Loc = ("cases", index)
    if not isinstance(item, Mapping):
        draft.problems.append(Problem(loc, f"a case must be a mapping; got {_short(item)}"))
        return _CaseDraft(index, {}, execution_rules=False, graders_valid=False, own_graders=[])
    case = _CaseDraft(index, item)
    fields = {key: value for key, value in item.items() if key not in ("graders", "execution")}
    case.spec = draft.check(_CASE, fields, loc)
    if item.get("execution") is not None:
        case.execution, case.execution_rules = draft.partial(
            CaseExecution, item["execution"], (*loc, "execution")
        )
    graders = item.get("graders")
    if graders is not None:
        if not isinstance(graders, list | tuple):
            draft.problems.append(
                Problem((*loc, "graders"), f"must be a list of graders; got {_short(graders)}")
            )
            case.own_graders, case.graders_valid = [], False
        else:
            case.graders_listed = len(graders)
            case.own_graders, case.graders_valid = _graders(draft, enumerate(graders), (*loc, "graders"))
    return case


def _written(item: object, key: str) -> str | None:
    """``item[key]`` when ``item`` is a mapping and that is a string (a name or id as written)."""
    value = item.get(key) if isinstance(item, Mapping) else None
    return value if isinstance(value, str) else None


def _unique(where: str, key: str, what: str, names: Iterable[tuple[int, str | None]]) -> list[Problem]:
    problems, seen = [], set()
    for index, name in names:
        if name is not None and name in seen:
            problems.append(Problem((where, index, key), f"{what} must be unique; got {name!r} twice"))
        seen.add(name)
    return problems


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _rules(draft: Draft) -> list[Problem]:
    """Rules that span fields, over the pieces that validated."""
    problems: list[Problem] = []
    if draft.targets_valid and draft.targets and all(spec.judge_only for _, spec in draft.targets):
        problems.append(
            Problem(("targets",), "at least one target must not be judge_only (else nothing runs)")
        )
    problems.extend(_unique("targets", "name", "target names", enumerate(draft.target_names)))
    problems.extend(_unique("cases", "id", "case ids", ((case.index, case.id) for case in draft.cases)))
    if draft.execution is not None and draft.execution_rules:
        problems.extend(_settings_problems(case_settings(draft.execution, None), ("execution",), ""))
    for case in draft.cases:
        problems.extend(_case_rules(draft, case))
    return problems


def _case_rules(draft: Draft, case: _CaseDraft) -> list[Problem]:
    problems: list[Problem] = []
    where: Loc = ("cases", case.index)
    if case.spec is not None and (case.spec.input is None) == (case.spec.prompt is None):
        problems.append(Problem(where, "a case needs exactly one of input or prompt"))
    own = case.own_graders is not None
    graders = case.own_graders if case.own_graders is not None else draft.graders
    listed = case.graders_listed if own else draft.graders_listed
    complete = case.graders_valid if own else draft.graders_valid
    if listed == 0 and complete:
        problems.append(Problem(where, "a case needs graders (on the case, or suite-level graders)"))
    elif complete and not any(spec.weight > 0 for _, spec in graders):
        problems.append(
            Problem(where, "grader weights must not all be 0 (the trial score divides by their sum)")
        )
    for loc, spec in graders:
        names = tuple(name for name in draft.target_names if name is not None)
        site = GraderSite(loc, where, case.id or "?", case.raw.get("expected"), names, draft.directory)
        problems.extend(spec.problems(site))
    if draft.execution is not None and draft.execution_rules and case.execution and case.execution_rules:
        settings = case_settings(draft.execution, case.execution)
        problems.extend(
            _settings_problems(settings, (*where, "execution"), f" (case {case.id or '?'!r})", case.execution)
        )
    return problems


def _settings_problems(
    settings: CaseSettings, where: Loc, for_case: str, overrides: CaseExecution | None = None
) -> list[Problem]:
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
            Problem(
                (*where, "threshold"),
                f"strategy {settings.strategy!r} compares the mean score to threshold, "
                f"which is not set{for_case}",
            )
        )
    if band_set and settings.borderline is not None:
        if settings.threshold is None:
            problems.append(
                Problem((*where, "borderline"), f"borderline needs a threshold above it{for_case}")
            )
        elif settings.borderline >= settings.threshold:
            problems.append(
                Problem(
                    (*where, "borderline"),
                    f"must be below threshold={settings.threshold}; got {settings.borderline}{for_case}",
                )
            )
    return problems


def environment_problems(
    targets: Iterable[tuple[Loc, TargetSpecBase]],
    graders: Iterable[tuple[Loc, GraderSpecBase]],
    directory: Path,
    selected: Collection[str] | None = None,
) -> list[Problem]:
    """What only this machine can tell: python callables import, API key variables are set.

    ``selected`` limits the target checks to those targets and the judges the graders name
    (None: every target).  Every grader is checked (every case runs).
    """
    graders = list(graders)
    if selected is not None:
        judges = {name for _, spec in graders for name in getattr(spec, "judge_names", ())}
        wanted = set(selected) | judges
        targets = [(loc, spec) for loc, spec in targets if spec.name in wanted]
    problems: list[Problem] = []
    for loc, target in targets:
        problems.extend(target.environment_problems(loc, directory))
    seen: set[Loc] = set()
    for loc, grader in graders:
        if loc not in seen:
            seen.add(loc)
            problems.extend(grader.environment_problems(loc, directory))
    return problems


def draft_graders(draft: Draft) -> list[tuple[Loc, GraderSpecBase]]:
    """Every valid grader of the document: the suite's, then each case's own."""
    graders = list(draft.graders)
    for case in draft.cases:
        graders.extend(case.own_graders or [])
    return graders


def suite_sites(suite: Suite) -> tuple[list[tuple[Loc, TargetSpecBase]], list[tuple[Loc, GraderSpecBase]]]:
    """A valid suite's targets and graders, each with its place in the document."""
    targets: list[tuple[Loc, TargetSpecBase]] = [
        (("targets", i), spec) for i, spec in enumerate(suite.targets)
    ]
    graders: list[tuple[Loc, GraderSpecBase]] = [
        (("graders", g), spec) for g, spec in enumerate(suite.graders)
    ]
    for index, case in enumerate(suite.cases):
        graders.extend((("cases", index, "graders", g), spec) for g, spec in enumerate(case.graders or ()))
    return targets, graders
