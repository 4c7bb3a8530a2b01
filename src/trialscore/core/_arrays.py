"""Array helpers of the numeric core.

:func:`distinct` is ``np.unique(values)`` for the core's integer and float arrays.  NumPy 2's
``np.unique`` asks ``np.ma.is_masked`` of its argument, which imports ``numpy.ma`` (about 30 ms,
a tenth of a command's start) the first time any plain ``np.unique`` runs.
"""

from __future__ import annotations

from typing import TypeVar

import numpy as np
from numpy.typing import NDArray

__all__ = ["distinct"]

ScalarT = TypeVar("ScalarT", bound=np.generic)


def distinct(values: NDArray[ScalarT]) -> NDArray[ScalarT]:
    """The sorted distinct values of ``values`` (flattened), as ``np.unique(values)`` gives them.

    >>> distinct(np.array([3, 1, 3, 2])).tolist()
    [1, 2, 3]
    >>> distinct(np.array([0.5, 0.25, 0.5])).tolist()
    [0.25, 0.5]
    >>> distinct(np.array([], dtype=np.int64)).size
    0
    """
    ordered = np.sort(values.ravel())
    if ordered.size == 0:
        return ordered
    first = np.empty(ordered.size, dtype=bool)
    first[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
    return ordered[first]
