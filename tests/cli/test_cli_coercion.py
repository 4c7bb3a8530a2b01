"""trialscore's coercion of command-line values (:mod:`trialscore.cli._coercion`) against Typer's own."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from enum import Enum
from pathlib import Path
from typing import Any

import typer.main
from typer._coercion import build_runtime_param

from trialscore.cli import app
from trialscore.cli._coercion import _TYPER, _converter, _Direct

#: What a command line may hand a parameter: numerals of every spelling, words, paths, odd text.
WORDS = [
    "0", "7", "-3", "007", "-0", "+5", " 5", "5 ", "1_000", "12345678901234567890", "1.5", "-0.25",
    ".5", "5.", "1e3", "1E-3", "2.5e+2", "1e400", "1e-400", "nan", "inf", "-inf", "0x10", "½", "٣",
    "abc", "", "-", "true", "false", "yes", "no", "on", "1", "table", "json", "TABLE", "Json",
    "exclude", "raise", "regression", "/tmp", "a b", "x\udcff", "é.jsonl", ".", "~",
]  # fmt: skip


def _parameters() -> Iterator[tuple[str, Any, Any]]:
    """Every parameter of every command (``--help`` included), with a context of its command."""
    root = typer.main.get_command(app)

    def walk(command: Any, parent: Any, path: str) -> Iterator[tuple[str, Any, Any]]:
        ctx = command.make_context(path, [], parent=parent, resilient_parsing=True)
        for param in command.get_params(ctx):
            yield f"{path} {param.name}", param, ctx
        for name in getattr(command, "commands", {}):
            _, sub, _ = command.resolve_command(ctx, [name])  # as a command line names it
            yield from walk(sub, ctx, f"{path} {name}")

    yield from walk(root, None, "trialscore")


PARAMETERS = list(_parameters())


def _outcome(runtime: Any, param: Any, ctx: Any, value: Any) -> tuple[str, Any]:
    try:
        done = runtime.coerce(value, param=param, ctx=ctx)
    except Exception as exc:  # the refusal, to compare with the other's
        return "raised", (type(exc).__name__, str(exc))
    items = [type(one).__name__ for one in done] if isinstance(done, list) else None
    return "gave", (type(done).__name__, items, repr(done))  # repr: NaN equals NaN


def _values(param: Any) -> list[Any]:
    singles: list[Any] = [*WORDS, param.default, 0, 1, 2.5, True, Path("x.jsonl")]
    if param.multiple or param.nargs == -1:
        lists = [(), tuple(WORDS[:5]), ("a.jsonl", "b.jsonl"), ("x", ""), ["table"]]
        return [*lists, *[(one,) for one in singles]]
    return singles


def test_the_application_gives_every_parameter_of_every_command_its_own_coercion() -> None:
    assert len(PARAMETERS) > 150
    handled = 0
    for name, param, _ in PARAMETERS:
        descriptor = param.type_descriptor
        if _converter(descriptor.annotation, descriptor.parameter_info) is not None:
            assert isinstance(param._runtime_param, _Direct), name
            handled += 1
    assert handled == len(PARAMETERS), "a parameter type this module does not handle: it needs Pydantic"


def test_every_value_coerces_as_typers_own_adapter_coerces_it() -> None:
    """The same value of the same type, or the same refusal with the same message, as Typer's adapter,
    for every parameter of every command."""
    for name, param, ctx in PARAMETERS:
        descriptor = param.type_descriptor
        convert = _converter(descriptor.annotation, descriptor.parameter_info)
        assert convert is not None, name
        ours = _Direct(descriptor.parameter_info, descriptor.annotation, convert)
        typers = build_runtime_param(descriptor)
        for value in _values(param):
            assert _outcome(ours, param, ctx, value) == _outcome(typers, param, ctx, value), (name, value)
            assert param._runtime_param is not typers  # a fallback replaces the parameter's own, not this one


def _plain(annotation: Any) -> Any:
    """A plain command-line value of ``annotation``: what a user usually types."""
    if getattr(annotation, "__origin__", None) is list:
        return (_plain(annotation.__args__[0]),)
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        return next(iter(annotation)).value
    return {str: "x", int: "3", float: "0.5", bool: False, Path: "x.jsonl"}[annotation]


def test_a_default_and_a_plain_value_are_answered_without_typers_adapter() -> None:
    """What a command line usually holds never needs Pydantic: each parameter's default, and a plain
    value of its type."""
    for name, param, ctx in PARAMETERS:
        descriptor = param.type_descriptor
        convert = _converter(descriptor.annotation, descriptor.parameter_info)
        assert convert is not None, name
        for value in [param.default, _plain(descriptor.annotation)]:
            if value is not None:
                assert convert(value, param, ctx) is not _TYPER, (name, value)


def test_a_command_runs_without_importing_pydantic(tmp_path: Path) -> None:
    """``trialscore score FILE`` in a fresh interpreter never imports Pydantic (Typer's adapters do)."""
    path = tmp_path / "t.jsonl"
    path.write_text('{"case_id": "a", "trial": 0, "passed": 1}\n{"case_id": "a", "trial": 1, "passed": 0}\n')
    code = (
        "import sys\n"
        "from trialscore.cli import main\n"
        f"sys.argv = ['trialscore', 'score', {str(path)!r}, '--k', '1', '--level', '0.9', '-f', 'json']\n"
        "try:\n    main()\nexcept SystemExit as exc:\n    assert not exc.code, exc.code\n"
        "assert 'pydantic' not in sys.modules, 'pydantic imported'\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert '"command": "score"' in done.stdout
