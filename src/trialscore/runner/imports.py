"""Load a callable named in a suite: ``package.module:attr`` or ``file.py:attr`` (relative to the suite)."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from trialscore.errors import EvaluationError

__all__ = ["load_callable"]


def _module_from_file(file: Path, where: str) -> Any:
    name = f"trialscore_suite_{abs(hash(str(file)))}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, file)
    if spec is None or spec.loader is None:
        raise EvaluationError(f"{where}: cannot load Python file {str(file)!r}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[name]
        raise EvaluationError(
            f"{where}: importing {str(file)!r} failed: {type(exc).__name__}: {exc}"
        ) from exc
    return module


def load_callable(reference: str, directory: Path, where: str) -> Callable[..., Any]:
    """The callable ``reference`` names: ``module:attr`` (importable) or ``file.py:attr`` (in ``directory``).

    Raises
    ------
    EvaluationError
        When the reference is malformed, the module cannot be imported, or the attribute is
        missing or not callable; the message starts with ``where``.

    >>> load_callable("math:sqrt", Path("."), "target 'calc'")(16.0)
    4.0
    >>> load_callable("math.sqrt", Path("."), "target 'calc'")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    trialscore.errors.EvaluationError: target 'calc': callable must look like ...; got 'math.sqrt'
    """
    module_name, sep, attr = reference.partition(":")
    if not sep or not module_name or not attr:
        raise EvaluationError(
            f"{where}: callable must look like 'module:attr' or 'file.py:attr'; got {reference!r}"
        )
    if module_name.endswith(".py"):
        file = (directory / module_name).resolve()
        if not file.is_file():
            raise EvaluationError(
                f"{where}: Python file not found (relative to the suite); got {module_name!r}"
            )
        module = _module_from_file(file, where)
    else:
        try:
            module = importlib.import_module(module_name)
        except Exception as exc:
            raise EvaluationError(
                f"{where}: cannot import module {module_name!r}: {type(exc).__name__}: {exc}"
            ) from exc
    target: Any = module
    for part in attr.split("."):
        if not hasattr(target, part):
            raise EvaluationError(f"{where}: {module_name!r} has no attribute {attr!r}")
        target = getattr(target, part)
    if not callable(target):
        raise EvaluationError(f"{where}: {reference!r} is not callable; got {type(target).__name__}")
    function: Callable[..., Any] = target
    return function
