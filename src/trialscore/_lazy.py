"""Names of a package that load on first use, from the module that defines them (PEP 562).

>>> import sys
>>> from trialscore._lazy import load
>>> load("trialscore.results", {"ColumnMap": ".columns"}, "ColumnMap").__name__
'ColumnMap'
>>> "ColumnMap" in vars(sys.modules["trialscore.results"])  # kept: the next use is a plain lookup
True
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from importlib import import_module
from typing import Any

__all__ = ["load"]


def load(package: str, homes: Mapping[str, str], name: str) -> Any:
    """``package``'s ``name``, imported from its module ``homes[name]`` and kept in ``package``.

    A home with a leading dot is relative to ``package`` (``".columns"``); any other is absolute
    (``"scipy.special"``).

    Raises
    ------
    AttributeError
        When ``name`` is not one of ``homes`` (as a missing module attribute does).
    """
    if name not in homes:
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    value = getattr(import_module(homes[name], package), name)
    setattr(sys.modules[package], name, value)
    return value
