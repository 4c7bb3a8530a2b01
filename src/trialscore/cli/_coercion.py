"""Command-line values to Python values without importing Pydantic on every start.

Typer 0.29 turns each value of the command line into its parameter's type through a Pydantic
``TypeAdapter``, built when the parameter is first coerced; the first one imports Pydantic,
which costs about as much as importing NumPy (``benchmarks/startup.py``), in every command,
even ``trialscore score FILE``.  trialscore's parameters are plain types: ``str``, ``int``,
``float``, ``bool``, ``Path``, a string ``Enum`` of choices, or a list of those.  For those,
:func:`install` gives each parameter a coercer that turns what Typer hands it (the strings of
the command line, or the declared default) into the value Typer's adapter gives, by the same
rules: Typer's own path and choice checks (``coerce_cli_path``, ``coerce_cli_choice``), Python's
``int`` and ``float`` on plain decimal numerals.  Any other value (``--k 1.5`` for an ``int``, a
number under its minimum, a name that is not a choice) goes to Typer's adapter, built then: a
bad value gets Typer's own message.  The tests check the two agree on every parameter of every
command, for good values and bad.

Typer documents no hook for this: the coercer is set as the parameter's runtime coercion (the
``_runtime_param`` Typer builds on first use).  Where the installed Typer has no such interface
(older versions coerce with Click's types and never import Pydantic), :func:`install` leaves
Typer's own path alone.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any, get_args, get_origin

from typer.core import TyperGroup

try:  # Typer 0.29's coercion layer; absent in Typer versions that coerce with Click's types
    from typer._coercion import RuntimeParam, build_runtime_param
    from typer._param_types import coerce_cli_choice, coerce_cli_path
    from typer.core import _TyperParameter
except ImportError:  # pragma: no cover - depends on the installed Typer
    RuntimeParam = None  # type: ignore[assignment,misc]

__all__ = ["Commands", "install"]

#: Not answered here: the value goes to Typer's own adapter.
_TYPER = object()
_INTEGER = re.compile(r"-?[0-9]+")
_DECIMAL = re.compile(r"-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]{1,3})?")

Convert = Callable[[Any, Any, Any], Any]


def _converter(annotation: Any, info: Any) -> Convert | None:
    """The coercion of one value of ``annotation`` (``value, param, ctx``), or None when not handled here."""
    if annotation is str:
        return lambda value, param, ctx: value if type(value) is str else _TYPER
    if annotation is bool:
        return lambda value, param, ctx: value if type(value) is bool else _TYPER
    if annotation in (int, float):
        if info.clamp:
            return None
        pattern = _INTEGER if annotation is int else _DECIMAL

        def number(value: Any, param: Any, ctx: Any) -> Any:
            """A plain decimal numeral (or a value of the type) within the bounds."""
            if type(value) is str and pattern.fullmatch(value):
                value = annotation(value)
            elif type(value) is not annotation:
                return _TYPER
            if (info.min is not None and value < info.min) or (info.max is not None and value > info.max):
                return _TYPER  # out of bounds: Typer words the refusal
            return value

        return number
    if annotation is Path and info.path_type is None:

        def path(value: Any, param: Any, ctx: Any) -> Any:
            if type(value) is str:
                value = Path(value)
            elif not isinstance(value, Path):
                return _TYPER
            return coerce_cli_path(value, info, path_type=Path, param=param, ctx=ctx)

        return path
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        choices = list(annotation)

        def choice(value: Any, param: Any, ctx: Any) -> Any:
            try:
                return coerce_cli_choice(value, choices=choices, case_sensitive=info.case_sensitive, ctx=ctx)
            except ValueError:
                return _TYPER

        return choice
    if get_origin(annotation) is list:
        (item,) = get_args(annotation)
        each = _converter(item, info)
        if each is None:
            return None

        def items(value: Any, param: Any, ctx: Any) -> Any:
            if not isinstance(value, (list, tuple)):
                return _TYPER
            done = [each(one, param, ctx) for one in value]
            return _TYPER if any(one is _TYPER for one in done) else done

        return items
    return None


if RuntimeParam is not None:

    @dataclass(frozen=True)
    class _Direct(RuntimeParam):
        """A parameter's coercion: :func:`_converter`'s, else (from then on) Typer's adapter."""

        convert: Convert

        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            done = self.convert(value, param, ctx)
            if done is not _TYPER:
                return done
            param._runtime_param = build_runtime_param(param.type_descriptor)
            return param._runtime_param._coerce_value(value, param=param, ctx=ctx)


def install(params: Iterable[Any]) -> None:
    """Give each of ``params`` the coercion of this module, where its type is one handled here and the
    installed Typer coerces through ``_runtime_param`` (else leave it to Typer)."""
    if RuntimeParam is None:  # pragma: no cover - depends on the installed Typer
        return
    for param in params:
        if not isinstance(param, _TyperParameter) or getattr(param, "_runtime_param", False) is not None:
            continue
        descriptor = param.type_descriptor
        if descriptor.file_annotation is not None or descriptor.parameter_info.parser is not None:
            continue
        convert = _converter(descriptor.annotation, descriptor.parameter_info)
        if convert is not None:
            param._runtime_param = _Direct(descriptor.parameter_info, descriptor.annotation, convert)


class Commands(TyperGroup):
    """A Typer group whose parameters, and those of the command it runs, are coerced by :func:`install`.

    A command's parameters are complete only in a context (Click adds ``--help`` then), so they get
    their coercion when the group parses its own or resolves the command to run.
    """

    def get_params(self, ctx: Any) -> Any:
        params = super().get_params(ctx)
        install(params)
        return params

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        name, command, rest = super().resolve_command(ctx, args)
        if command is not None:
            install(command.get_params(ctx))
        return name, command, rest
