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

__all__ = ["Record", "plain"]


def plain(value: object) -> Any:
    """``value`` as JSON data: dicts, lists, strings, numbers, booleans and None.

    >>> from fractions import Fraction
    >>> plain({"tau": Fraction(1, 2), "ks": (1, 5), "n": np.int64(3)})
    {'tau': 0.5, 'ks': [1, 5], 'n': 3}
    """
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, Record):
        return value.to_dict()
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
        return value.model_dump(mode="json")
    if isinstance(value, Mapping):
        return {str(key): plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [plain(item) for item in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {field.name: plain(getattr(value, field.name)) for field in dataclasses.fields(value)}
    raise TypeError(f"cannot turn {type(value).__name__} into JSON data")


class Record:
    """Mixin of frozen dataclass results: ``to_dict()`` gives every field as JSON data."""

    def to_dict(self) -> dict[str, Any]:
        """Every field as plain JSON data (see :func:`plain`)."""
        assert dataclasses.is_dataclass(self)
        return {field.name: plain(getattr(self, field.name)) for field in dataclasses.fields(self)}
