"""Pydantic's validation errors in a suite's own words: one problem per bad value, with a hint.

Pydantic reports one error per member of a union (``input: 5`` fails ``str``, ``dict`` and ``list``:
three errors), names the union's members and tags in its locations, and says "Extra inputs are not
permitted" for a misspelled key.  :func:`pydantic_problems` turns that into the suite's terms:

* one problem per value, listing what it may be (``must be a string, a mapping or a list``);
* a misspelled key is an ``unknown field`` with the nearest field name (``did you mean
  'concurrency'?``), or the fields that exist there;
* a string where a list belongs says how to write the list (``argv: python3 agent.py`` ->
  ``[python3, agent.py]``).

>>> from pydantic import BaseModel, ConfigDict, ValidationError
>>> class Settings(BaseModel):
...     model_config = ConfigDict(extra="forbid")
...     concurrency: int = 1
...     argv: tuple[str, ...] = ()
...     input: str | dict[str, int] | list[int] = ""
>>> try:
...     Settings.model_validate({"concurency": 4, "argv": "python3 agent.py", "input": 5})
... except ValidationError as exc:
...     for problem in pydantic_problems(exc, ("execution",), Settings):
...         print(problem.loc, problem.message)
('execution', 'argv') must be a list, written [python3, agent.py]; got 'python3 agent.py'
('execution', 'input') must be a string, a mapping or a list; got 5
('execution', 'concurency') unknown field (did you mean 'concurrency'?); got 4
"""

from __future__ import annotations

import shlex
import types
from collections.abc import Sequence
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from trialscore._validate import describe_data
from trialscore._words import did_you_mean
from trialscore.runner.registry import GRADERS, TARGETS, Loc, Problem

__all__ = ["pydantic_problems"]

#: What a value of each Pydantic type error should have been, in the suite's words.
_KINDS = {
    "string_type": "a string",
    "dict_type": "a mapping",
    "model_type": "a mapping",
    "model_attributes_type": "a mapping",
    "list_type": "a list",
    "tuple_type": "a list",
    "set_type": "a list",
    "int_type": "an integer",
    "int_parsing": "an integer",
    "int_from_float": "an integer",
    "float_type": "a number",
    "float_parsing": "a number",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
}

#: Pydantic's names for the members of a plain union (``str``, ``dict[str,any]``, ``constrained-str``).
_SCALARS = frozenset({"str", "int", "float", "bool", "bytes", "none", "decimal", "date", "datetime"})


def _member_label(part: object) -> bool:
    """Whether a location part names a union member (Pydantic's label), not a field or an index."""
    if not isinstance(part, str):
        return False
    return part in _SCALARS or "[" in part or part.startswith(("function-", "constrained-", "lax-"))


def _is_tag(part: object) -> bool:
    """Whether ``part`` is a target or grader ``type``: Pydantic names them in error locations, the
    suite file does not (the registries are read when an error is worded: every type is registered)."""
    return part in TARGETS or part in GRADERS


def _without_tags(loc: Sequence[str | int]) -> Loc:
    """The suite's place of Pydantic's ``loc``: without the union tag Pydantic puts after a list
    index (``cases.0.numeric.tolerance``) and without union members' labels (``input.str``)."""
    return tuple(
        part
        for index, part in enumerate(loc)
        if not (_is_tag(part) and (index == 0 or isinstance(loc[index - 1], int))) and not _member_label(part)
    )


def _members(annotation: Any) -> tuple[Any, ...]:
    """``annotation`` without ``Annotated`` and ``Optional``: its union members (itself when none)."""
    while get_origin(annotation) is Annotated:
        annotation = get_args(annotation)[0]
    if get_origin(annotation) in (Union, types.UnionType):
        return tuple(member for arg in get_args(annotation) for member in _members(arg))
    return (annotation,)


def _tag(model: type[BaseModel]) -> object:
    """A target or grader model's ``type`` (its ``Literal``), None for another model."""
    field = model.model_fields.get("type")
    names = get_args(field.annotation) if field is not None else ()
    return names[0] if len(names) == 1 else None


def _model_at(root: Any, loc: Sequence[str | int]) -> type[BaseModel] | None:
    """The model holding the field at Pydantic's raw ``loc`` from type ``root`` (None: not a model)."""
    current: tuple[Any, ...] = _members(root)
    for part in loc:
        models = [m for m in current if isinstance(m, type) and issubclass(m, BaseModel)]
        if _member_label(part):
            current = tuple(m for m in models if m.__name__ == part) or current
        elif isinstance(part, int):
            current = tuple(
                member
                for kind in current
                if get_origin(kind) in (tuple, list)
                for member in _members(get_args(kind)[0])
            )
        elif _is_tag(part) and any(_tag(m) == part for m in models):
            current = tuple(m for m in models if _tag(m) == part)
        elif models and part in models[0].model_fields:
            current = _members(models[0].model_fields[part].annotation)
        else:
            return None
    models = [m for m in current if isinstance(m, type) and issubclass(m, BaseModel)]
    return models[0] if len(models) == 1 else None


def _unknown_field(root: Any, loc: Sequence[str | int]) -> str:
    """An unknown key's message: the nearest field name of the model there, else its fields."""
    model = _model_at(root, loc[:-1]) if root is not None else None
    if model is None:
        return "unknown field"
    names = [field.alias or name for name, field in model.model_fields.items()]
    hint = did_you_mean(loc[-1], names)
    if hint:
        return f"unknown field{hint}"
    return f"unknown field (the fields here: {', '.join(names)})"


def _as_list(text: str) -> str:
    try:
        words = shlex.split(text)
    except ValueError:
        words = text.split()
    return "[" + ", ".join(words) + "]"


def _message(error: ErrorDetails, root: Any) -> str:
    kind = error["type"]
    if kind == "extra_forbidden":
        return _unknown_field(root, error["loc"])
    if kind in ("list_type", "tuple_type") and isinstance(error["input"], str):
        return f"must be a list, written {_as_list(error['input'])}"
    return error["msg"].removeprefix("Value error, ")


def _union(errors: Sequence[ErrorDetails]) -> str:
    """One message for the errors of one value against every member of a union."""
    kinds = list(dict.fromkeys(_KINDS.get(error["type"], "") for error in errors))
    if "" in kinds:  # a member matched the type and broke a constraint: that is the message
        return "; ".join(
            dict.fromkeys(
                error["msg"].removeprefix("Value error, ") for error in errors if error["type"] not in _KINDS
            )
        )
    shown = kinds[0] if len(kinds) == 1 else ", ".join(kinds[:-1]) + f" or {kinds[-1]}"
    return f"must be {shown}"


def pydantic_problems(exc: ValidationError, prefix: Loc = (), root: Any = None) -> list[Problem]:
    """A Pydantic error as problems: ``loc`` in the suite's terms, ``message; got value``.

    ``root`` is the type that was validated (a model or a union): it names the fields an unknown
    key may have meant.  The errors of one value against the members of a union are one problem.
    """
    entries: list[tuple[bool, list[ErrorDetails]]] = []  # (a union's errors, the errors)
    unions: dict[Loc, list[ErrorDetails]] = {}
    for error in exc.errors(include_url=False):
        raw = tuple(error["loc"])
        if raw and _member_label(raw[-1]) and error["type"] not in ("extra_forbidden", "missing"):
            loc = _without_tags(raw)
            if loc not in unions:
                unions[loc] = []
                entries.append((True, unions[loc]))
            unions[loc].append(error)
        else:
            entries.append((False, [error]))
    problems = []
    for union, errors in entries:
        error = errors[0]
        loc = (*prefix, *_without_tags(tuple(error["loc"])))
        if union:
            problems.append(_problem(loc, _union(errors), error["input"]))
        elif error["type"] == "union_tag_invalid":
            tags = error["ctx"]["expected_tags"]
            hint = did_you_mean(error["ctx"]["tag"], [tag.strip(" '") for tag in str(tags).split(",")])
            message = f"unknown type{hint}; expected one of {tags}"
            problems.append(_problem((*loc, "type"), message, error["ctx"]["tag"]))
        elif error["type"] == "union_tag_not_found":
            problems.append(Problem((*loc, "type"), "missing; every target and grader needs a type"))
        elif error["type"] == "missing":
            problems.append(Problem(loc, error["msg"]))
        else:
            problems.append(_problem(loc, _message(error, root), error["input"]))
    return problems


def _problem(loc: Loc, message: str, value: object) -> Problem:
    if value is None or isinstance(value, dict):
        return Problem(loc, message)
    return Problem(loc, f"{message}; got {describe_data(value)}")
