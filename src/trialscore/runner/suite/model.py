"""The validated suite: :class:`Suite`, made by :func:`validated` from a document that passed every rule.

The models of its parts are :mod:`~trialscore.runner.suite.schema`; the rules it must pass
:mod:`~trialscore.runner.suite.rules`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection, Iterable
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field, PrivateAttr

from trialscore._words import did_you_mean
from trialscore.errors import EvaluationError
from trialscore.runner.graders.judge import LlmJudgeGraderSpec
from trialscore.runner.registry import GraderSpecBase, Name, Problem, Spec, TargetSpecBase
from trialscore.runner.suite.datasets import expand_cases
from trialscore.runner.suite.locations import Locations, Site, invalid_suite
from trialscore.runner.suite.rules import (
    check_document,
    draft_graders,
    environment_problems,
    suite_sites,
)
from trialscore.runner.suite.schema import (
    CaseSettings,
    CaseSpec,
    ExecutionSpec,
    GraderSpec,
    TargetSpec,
    case_settings,
)

__all__ = ["Suite", "validated"]


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
        names = [t.name for t in self.targets]
        hint = did_you_mean(name, names)
        raise EvaluationError(
            f"target must name one of the suite's targets ({', '.join(names)}); got {name!r}{hint}"
        )

    @property
    def evaluated_targets(self) -> tuple[str, ...]:
        """The targets a run evaluates by default: all but the ``judge_only`` ones."""
        return tuple(target.name for target in self.targets if not target.judge_only)

    def judge_targets(self) -> tuple[str, ...]:
        """The targets ``llm_judge`` graders call, sorted."""
        return tuple(
            sorted(
                {
                    name
                    for case in self.cases
                    for grader in self.graders_for(case)
                    if isinstance(grader, LlmJudgeGraderSpec)
                    for name in grader.judge_names
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
        problems = environment_problems(*suite_sites(self), self.directory, targets)
        if problems:
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
        return validated(data, source, directory or Path.cwd(), text=json.dumps(data, default=str))


def validated(
    data: Any,
    source: str,
    directory: Path,
    text: str,
    *,
    path: Path | None = None,
    locations: Locations | None = None,
    duplicates: Iterable[tuple[Problem, int]] = (),
    environment: bool = False,
    targets: Collection[str] | None = None,
) -> Suite:
    """The :class:`Suite` in ``data``, or an error listing every problem (with lines from ``locations``).

    Dataset entries in ``cases`` are read first (:mod:`~trialscore.runner.suite.datasets`); a
    problem in a row is reported at its file and line.  ``environment`` adds
    :func:`environment_problems` (for ``targets``, None = all).
    """
    shown = Path(source).parent if path is not None else None
    expansion = expand_cases(data, directory, shown, locations)
    data = expansion.data
    draft = check_document(data, directory)
    problems = list(draft.problems)
    if environment:
        problems.extend(environment_problems(draft.targets, draft_graders(draft), directory, targets))
    located: list[tuple[Problem, int | Site | None]] = [
        *duplicates,
        *expansion.problems,
        *(expansion.origins.locate(problem) for problem in problems),
    ]
    if located:
        raise invalid_suite(source, located)
    suite = Suite.model_validate(data)
    suite._path, suite._directory, suite._text, suite._source = path, directory, text, source
    suite._lines = expansion.origins
    digest = hashlib.sha256(text.encode())
    for dataset in expansion.digests:  # a changed dataset file changes the suite (resume checks it)
        digest.update(bytes.fromhex(dataset))
    suite._digest = digest.hexdigest()
    return suite
