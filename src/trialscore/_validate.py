"""Argument validation: the one place every public function's checks live.

Each check takes the value and the parameter's name, returns the value in its canonical type,
and raises :class:`~trialscore.errors.EvaluationError` with a message that names the parameter,
the value and the rule (SciPy's ``_..._iv`` pattern).  Messages speak of the library's
parameters (``skip_invalid=True``); the command line translates them to its flags.

>>> check_integer(3, "k", minimum=1), check_unit(0.25, "tau"), check_probability(0.95, "level")
(3, 0.25, 0.95)
>>> check_integer(True, "k")
Traceback (most recent call last):
...
trialscore.errors.EvaluationError: k must be an integer; got True (bool)
>>> check_real(float("nan"), "threshold")
Traceback (most recent call last):
...
trialscore.errors.EvaluationError: threshold must be a finite real number; got threshold=nan
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from numbers import Integral, Real

import numpy as np
from numpy.typing import ArrayLike, NDArray

from trialscore._words import did_you_mean
from trialscore.errors import EvaluationError

__all__ = [
    "check_choice",
    "check_flag",
    "check_integer",
    "check_integers",
    "check_name",
    "check_probability",
    "check_real",
    "check_unit",
    "check_values",
    "describe",
    "describe_data",
    "is_flag",
]


def describe(value: object) -> str:
    """``repr(value)`` cut to 60 characters, for error messages.

    >>> describe("x" * 100)[-6:]
    'xxx...'
    """
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def describe_data(value: object) -> str:
    """A value read from a YAML or JSON file, as JSON text (strings quoted), cut to 60 characters.

    >>> describe_data({"a": [1, 2]}), describe_data("x")
    ('{"a": [1, 2]}', "'x'")
    """
    import json

    text = json.dumps(value, default=str) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def is_flag(value: object) -> bool:
    """Whether ``value`` is a Python or NumPy bool (which are integers to ``numbers``, never counts here)."""
    return isinstance(value, (bool, np.bool_))


def _typed(value: object) -> str:
    return f"{describe(value)} ({type(value).__name__})"


def check_integer(value: object, name: str, minimum: int | None = None) -> int:
    """An integer (not a bool), at least ``minimum`` when given."""
    if type(value) is int:  # the common case, at once: an int is Integral and never a flag
        number = value
    elif is_flag(value) or not isinstance(value, Integral):
        raise EvaluationError(f"{name} must be {_integer_rule(minimum)}; got {_typed(value)}")
    else:
        number = int(value)
    if minimum is not None and number < minimum:
        raise EvaluationError(f"{name} must be {_integer_rule(minimum)}; got {name}={number}")
    return number


def _integer_rule(minimum: int | None) -> str:
    """What :func:`check_integer` asks for."""
    return f"an integer >= {minimum}" if minimum is not None else "an integer"


def check_integers(values: Iterable[object], name: str, minimum: int | None = None) -> NDArray[np.int64]:
    """:func:`check_integer` of each value, as an int64 array; Python ints in range are checked at once.

    >>> check_integers([3, 1], "k", minimum=1).tolist()
    [3, 1]
    >>> check_integers([3, 0, True], "k", minimum=1)
    Traceback (most recent call last):
    ...
    trialscore.errors.EvaluationError: k must be an integer >= 1; got k=0
    """
    values = list(values)
    if set(map(type, values)) == {int}:
        counts = np.array(values)
        if counts.dtype == np.int64 and (minimum is None or counts.min() >= minimum):
            return counts
    return np.array([check_integer(value, name, minimum) for value in values], dtype=np.int64)


def check_real(value: object, name: str, minimum: float | None = None) -> float:
    """A finite real number (not a bool), at least ``minimum`` when given."""
    if type(value) is not float and (is_flag(value) or not isinstance(value, Real)):  # a float is at once
        raise EvaluationError(f"{name} must be {_real_rule(minimum)}; got {_typed(value)}")
    number = float(value)
    if not math.isfinite(number) or (minimum is not None and number < minimum):
        raise EvaluationError(f"{name} must be {_real_rule(minimum)}; got {name}={value!r}")
    return number


def _real_rule(minimum: float | None) -> str:
    """What :func:`check_real` asks for."""
    return f"a finite real number >= {minimum:g}" if minimum is not None else "a finite real number"


def check_unit(value: object, name: str) -> float:
    """A real number in the closed interval [0, 1] (a rate, a share, a score)."""
    number = check_real(value, name)
    if not 0.0 <= number <= 1.0:
        raise EvaluationError(f"{name} must satisfy 0 <= {name} <= 1; got {name}={value!r}")
    return number


def check_probability(value: object, name: str) -> float:
    """A real number strictly between 0 and 1 (a level, an alpha, a power)."""
    number = check_real(value, name)
    if not 0.0 < number < 1.0:
        raise EvaluationError(f"{name} must satisfy 0 < {name} < 1; got {name}={value!r}")
    return number


def check_flag(value: object, name: str) -> bool:
    """A Python or NumPy bool."""
    if not is_flag(value):
        raise EvaluationError(f"{name} must be a bool; got {_typed(value)}")
    return bool(value)


def check_name(value: object, name: str) -> str:
    """A non-empty string."""
    if not isinstance(value, str) or not value.strip():
        raise EvaluationError(f"{name} must be a non-empty string; got {describe(value)}")
    return value


def check_values(values: ArrayLike, name: str, minimum: int) -> NDArray[np.float64]:
    """A 1-D array of at least ``minimum`` finite real numbers, as float64."""
    array = np.asarray(values)
    if array.ndim != 1:
        raise EvaluationError(f"{name} must be a 1-D array of numbers; got shape {array.shape}")
    if array.dtype.kind not in "biuf":
        raise EvaluationError(f"{name} must hold real numbers; got dtype {array.dtype}")
    if array.size < minimum:
        raise EvaluationError(f"{name} must hold at least {minimum} numbers; got {array.size}")
    floats = array.astype(np.float64)
    finite = np.isfinite(floats)
    if not finite.all():
        index = int(np.flatnonzero(~finite)[0])
        raise EvaluationError(f"{name} entries must be finite; got {floats[index]} at index {index}")
    return floats


def check_choice(value: object, name: str, choices: dict[str, str]) -> str:
    """One of the names (or aliases) in ``choices``; returns the canonical name."""
    key = str(value).strip().lower().replace("_", "-")
    if key not in choices:
        known = ", ".join(sorted(set(choices.values())))
        raise EvaluationError(f"{name} must be one of {known}; got {value!r}{did_you_mean(key, choices)}")
    return choices[key]
