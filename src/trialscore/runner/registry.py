"""The registry of grader and target types: each type's module registers its spec model and factory.

A suite's ``type: regex`` (or ``type: openai``) is looked up here by name; the suite schema's
discriminated unions are built from these tables, and :func:`trialscore.runner.graders.build_grader`
and :func:`trialscore.runner.targets.build_target` call the registered factory.  So a new grader is
one module in :mod:`trialscore.runner.graders`: a spec model, the grader, and a call to
:func:`register_grader` (the package imports every module in it).

This module holds what those modules share and nothing else, so it imports no other runner module:
the specs' common base (:class:`Spec`, :class:`GraderSpecBase`, :class:`TargetSpecBase`), the
:class:`Problem` a rule reports, and the two tables.

>>> from typing import Literal
>>> class ShoutSpec(GraderSpecBase):
...     type: Literal["shout"]
>>> ShoutSpec(type="shout", weight=2).label
'shout'
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, get_args

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StrictBool, StrictInt

if TYPE_CHECKING:
    from trialscore.runner.graders.base import Grader
    from trialscore.runner.targets.base import Target

__all__ = [
    "DEFAULT_MAX_OUTPUT_BYTES",
    "GRADERS",
    "TARGETS",
    "GraderContext",
    "GraderKind",
    "GraderSite",
    "GraderSpecBase",
    "Label",
    "Loc",
    "OneLine",
    "Problem",
    "Spec",
    "TargetKind",
    "TargetSpecBase",
    "load_kinds",
    "load_plugins",
    "register_grader",
    "register_target",
]

#: A field's place in the suite document: keys and list indices, e.g. ``("cases", 1, "graders", 0)``.
Loc = tuple[str | int, ...]

#: The most a target's (or a command grader's) output may hold, unless its ``max_output_bytes`` says
#: otherwise: past it the trial errors (``output over 8 MiB``) and nothing more is read.
DEFAULT_MAX_OUTPUT_BYTES = 8 * 2**20

NonNegative = Annotated[float, Field(ge=0.0)]
Positive = Annotated[float, Field(gt=0.0)]
Name = Annotated[str, Field(min_length=1)]


def _one_line(value: str) -> str:
    if "\n" in value or "\r" in value:
        raise ValueError(
            "must be on one line (no line break): results name it on one line, and reading them "
            "refuses a line break (often an unbalanced quote)"
        )
    if value and not value.strip():
        raise ValueError("must not be blank (only spaces): results need a name to tell it apart")
    return value


#: Text results carry as a name (a category): on one line.
OneLine = Annotated[str, AfterValidator(_one_line)]
#: A name results carry (a case id, a target): non-empty and on one line.
Label = Annotated[str, Field(min_length=1), AfterValidator(_one_line)]


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a suite: where (``loc``) and the rule it breaks (``message``)."""

    loc: Loc
    message: str


class Spec(BaseModel):
    """Frozen, closed (unknown keys are errors, so typos are caught) suite fragment."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False, populate_by_name=True)


@dataclass(frozen=True)
class GraderSite:
    """Where a grader sits, for its cross-field rules: its case's id, ``expected`` and locations.

    ``case_expected`` is the raw value from the document (the case itself may have failed
    validation: its graders' rules are checked all the same).
    """

    loc: Loc
    case_loc: Loc
    case_id: str
    case_expected: Any
    target_names: tuple[str, ...]
    directory: Path


class GraderSpecBase(Spec):
    """What every grader spec has: ``weight`` (default 1) and an optional ``name``."""

    weight: NonNegative = 1.0
    name: Name | None = None

    @property
    def label(self) -> str:
        """The grader's name in results: ``name`` if given, else its type."""
        return self.name or str(getattr(self, "type", "grader"))

    def problems(self, site: GraderSite) -> Iterator[Problem]:
        """Rules that need more than this spec (the case's ``expected``, the suite's targets, files)."""
        return iter(())

    def environment_problems(self, loc: Loc, directory: Path) -> Iterator[Problem]:
        """What only the running machine can tell: a callable that does not import."""
        return iter(())


class TargetSpecBase(Spec):
    """What every target spec has: a ``name``, and ``judge_only`` (used only by ``llm_judge`` graders).

    ``max_concurrency`` caps the target's trials running at once over the whole run (every
    worker); ``max_cost_usd`` is the most one trial of it costs, reserved against the run's
    budget when a trial is leased to a worker (see docs/runner.md).  ``max_output_bytes`` is
    the most output one call may bring (default 8 MiB): past it the trial errors and reading stops.
    """

    name: Label
    judge_only: StrictBool = False
    max_concurrency: Annotated[StrictInt, Field(ge=1)] | None = None
    max_cost_usd: Positive | None = None
    max_output_bytes: Annotated[StrictInt, Field(ge=1)] = DEFAULT_MAX_OUTPUT_BYTES

    def environment_problems(self, loc: Loc, directory: Path) -> Iterator[Problem]:
        """What only the running machine can tell: a callable that does not import, an unset API key."""
        return iter(())


@dataclass(frozen=True)
class GraderContext:
    """What a grader factory is given besides its spec: the case, the suite's directory, the judge."""

    case: Any
    directory: Path
    judge: Any


@dataclass(frozen=True)
class GraderKind:
    """A registered grader type: its spec model and ``build(spec, context) -> Grader``."""

    spec: type[GraderSpecBase]
    build: Callable[[Any, GraderContext], Grader]


@dataclass(frozen=True)
class TargetKind:
    """A registered target type: its spec model and ``build(spec, directory, concurrency) -> Target``."""

    spec: type[TargetSpecBase]
    build: Callable[[Any, Path, int], Target]


#: Grader type name -> kind, in registration order.
GRADERS: dict[str, GraderKind] = {}
#: Target type name -> kind, in registration order.
TARGETS: dict[str, TargetKind] = {}


def _type_name(spec: type[Spec]) -> str:
    field = spec.model_fields.get("type")
    args = get_args(field.annotation) if field is not None else ()
    if len(args) != 1 or not isinstance(args[0], str):
        raise TypeError(f"{spec.__name__} needs a field type: Literal['name']")
    name: str = args[0]
    return name


def register_grader(spec: type[GraderSpecBase], build: Callable[[Any, GraderContext], Grader]) -> None:
    """Register a grader type under its spec's ``type`` literal (a name taken twice is an error)."""
    name = _type_name(spec)
    if name in GRADERS and GRADERS[name].spec is not spec:
        raise TypeError(f"grader type {name!r} is registered twice")
    GRADERS[name] = GraderKind(spec, build)


def register_target(spec: type[TargetSpecBase], build: Callable[[Any, Path, int], Target]) -> None:
    """Register a target type under its spec's ``type`` literal (a name taken twice is an error)."""
    name = _type_name(spec)
    if name in TARGETS and TARGETS[name].spec is not spec:
        raise TypeError(f"target type {name!r} is registered twice")
    TARGETS[name] = TargetKind(spec, build)


def load_plugins(kind: str) -> list[str]:
    """Import the modules installed packages name for ``kind`` (``"targets"`` or ``"graders"``).

    A package adds a target or grader type by naming a module in its ``pyproject.toml``::

        [project.entry-points."trialscore.graders"]
        shout = "my_package.shout_grader"

    The module calls :func:`register_grader` (or :func:`register_target`) when imported, as the
    built-in ones do; the packages :mod:`trialscore.runner.graders` and
    :mod:`trialscore.runner.targets` load the plugins after their own modules, before the suite
    schema is built, so a plugin's type is known to ``validate``, ``run`` and every worker
    (:mod:`trialscore._plugins`).
    """
    from trialscore._plugins import load_entry_points

    return load_entry_points(f"trialscore.{kind}")


def load_kinds(package: str, path: Iterable[str], kind: str) -> None:
    """Import every module of ``package`` (found on ``path``), each registering its types, then the
    plugins installed packages add for ``kind`` (:func:`load_plugins`, docs/extending.md)."""
    for module in pkgutil.iter_modules(path):
        importlib.import_module(f"{package}.{module.name}")
    load_plugins(kind)
