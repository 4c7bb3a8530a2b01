"""One way to turn a result into JSON-ready data: frozen dataclasses that mix in :class:`Record`.

Internal values and results (an :class:`~trialscore.stats.Interval`, a
:class:`~trialscore.stats.Comparison`, a plan, a ranking) are frozen dataclasses; their
``to_dict()`` is :func:`plain` applied to every field, so nested results, tuples, NumPy arrays
and scalars, read-only mappings, fractions, dates, paths and Pydantic records all come out as
JSON types.  Records
that are written to files as JSON (trial records, seed 000's results) are Pydantic models
instead (:mod:`trialscore.record_model`).

>>> from dataclasses import dataclass
>>> import numpy as np
>>> @dataclass(frozen=True)
... class Pair(Record):
...     values: tuple[float, ...]
...     counts: np.ndarray
>>> Pair((0.5, 1.0), np.array([2, 3])).to_dict()
{'values': [0.5, 1.0], 'counts': [2, 3]}
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from datetime import date
from decimal import Decimal
from enum import Enum
from fractions import Fraction
from pathlib import PurePath
from typing import Any

import numpy as np

__all__ = ["Record", "camel_case", "plain"]


def camel_case(name: str) -> str:
    """A field name in camelCase, as seed 000's records spell their keys.

    >>> camel_case("per_trial_pass_rate"), camel_case("k")
    ('perTrialPassRate', 'k')
    """
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def plain(value: object, camel: bool = False) -> Any:
    """``value`` as JSON data: dicts, lists, strings, numbers, booleans and None.

    ``camel=True`` spells the fields of nested records in camelCase (:func:`camel_case`; a
    Pydantic record by its aliases), as seed 000's JSON does.

    >>> from fractions import Fraction
    >>> plain({"tau": Fraction(1, 2), "ks": (1, 5), "n": np.int64(3)})
    {'tau': 0.5, 'ks': [1, 5], 'n': 3}
    """
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, Record):
        return value.to_dict(camel=True) if camel else value.to_dict()
    if isinstance(value, Enum):
        return plain(value.value)
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (Fraction, Decimal)):
        return float(value)
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, PurePath):
        return str(value)
    if hasattr(value, "model_dump"):  # a Pydantic record (not imported here: it costs start-up time)
        return value.model_dump(mode="json", by_alias=camel)
    if isinstance(value, Mapping):
        return {str(key): plain(item, camel) for key, item in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [plain(item, camel) for item in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _fields(value, camel)
    raise TypeError(f"cannot turn {type(value).__name__} into JSON data")


def _fields(value: Any, camel: bool) -> dict[str, Any]:
    return {
        (camel_case(field.name) if camel else field.name): plain(getattr(value, field.name), camel)
        for field in dataclasses.fields(value)
    }


class Record:
    """Mixin of frozen dataclass results: ``to_dict()`` gives every field as JSON data."""

    def to_dict(self, camel: bool = False) -> dict[str, Any]:
        """Every field as plain JSON data (see :func:`plain`); ``camel=True``: keys in camelCase."""
        assert dataclasses.is_dataclass(self)
        return _fields(self, camel)
