"""Validated per-item counts: the one input every estimator works on.

Pass@k, pass^k, G-Pass@k_tau and mG-Pass@k of an item depend only on its
number of trials ``n`` and successes ``c``; Bayes@N only on its category
counts.  A :class:`Bank` holds those counts for M items, built once from a
rectangular 0/1 matrix, from ragged per-item outcome lists, or from ``n`` and
``c`` arrays directly; the estimators then work on the at most ``n + 1``
distinct states instead of on trials.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import cast

import numpy as np
from numpy.typing import ArrayLike, NDArray

from trialscore._validate import check_integer, describe
from trialscore.errors import EvaluationError, InsufficientDataError

__all__ = ["Bank", "CategoryBank", "as_bank", "checked_matrix", "is_ragged"]

IntArray = NDArray[np.int64]

#: Row sums by SIMD-within-a-register are exact while a byte lane holds at most 255.
_SWAR_MAX_TRIALS = 2040


def checked_matrix(R: ArrayLike, name: str = "R") -> np.ndarray:
    """``R`` as a non-empty 2-D real or boolean array with finite entries."""
    try:
        array = np.asarray(R)
    except (TypeError, ValueError) as exc:
        raise EvaluationError(f"{name} must be a rectangular numeric array; got {describe(R)}") from exc
    if array.dtype == object:
        raise EvaluationError(
            f"{name} must be a rectangular numeric array; got entries of mixed or "
            f"non-numeric type (dtype object): {describe(R)}"
        )
    if array.ndim != 2:
        raise EvaluationError(
            f"{name} must be a 2-D matrix (items x trials); got {array.ndim} dimension(s) "
            f"with shape {array.shape}"
        )
    if array.size == 0:
        raise EvaluationError(f"{name} must hold at least one item and one trial; got shape {array.shape}")
    kind = array.dtype.kind
    if kind not in "biuf":
        raise EvaluationError(f"{name} must hold numbers or booleans; got dtype {array.dtype}")
    if kind == "f":
        finite = np.isfinite(array)
        if not finite.all():
            item, trial = np.argwhere(~finite)[0]
            raise EvaluationError(
                f"{name} entries must be finite; got {array[item, trial]} at item {item}, trial {trial}"
            )
    return array


def _first_bad(mask: np.ndarray) -> tuple[int, int]:
    item, trial = np.argwhere(mask)[0]
    return int(item), int(trial)


def _not_binary(name: str, value: object, item: int, trial: int) -> EvaluationError:
    return EvaluationError(
        f"{name} must be binary (0 or 1) for this metric; got {value} at item {item}, trial {trial}"
    )


def _binary_row_sums(array: np.ndarray, name: str) -> IntArray:
    """Row sums of a matrix whose entries must all be 0 or 1 (checked)."""
    kind = array.dtype.kind
    if kind == "b":
        bytes_view = np.ascontiguousarray(array).view(np.uint8)
    elif kind in "iu":
        unsigned = array.view(np.dtype(f"u{array.itemsize}")) if kind == "i" else array
        if unsigned.max() > 1:
            item, trial = _first_bad((array < 0) | (array > 1))
            raise _not_binary(name, array[item, trial], item, trial)
        if array.itemsize == 8:
            wide: IntArray = np.einsum("ij->i", unsigned).view(np.int64)
            return wide
        if array.itemsize != 1:
            summed: IntArray = array.sum(axis=1, dtype=np.int64)
            return summed
        bytes_view = np.ascontiguousarray(array).view(np.uint8)
    else:
        bad = (array != 0) & (array != 1)
        if bad.any():
            item, trial = _first_bad(bad)
            raise _not_binary(name, array[item, trial], item, trial)
        counted: IntArray = np.count_nonzero(array, axis=1).astype(np.int64)
        return counted
    trials = bytes_view.shape[1]
    if trials % 8 or trials > _SWAR_MAX_TRIALS:
        byte_sums: IntArray = bytes_view.sum(axis=1, dtype=np.int64)
        return byte_sums
    # Eight 0/1 bytes per 64-bit word: add words lane-wise, then fold the lanes.
    lanes = np.einsum("ij->i", bytes_view.view(np.uint64))
    low = lanes & np.uint64(0x00FF00FF00FF00FF)
    high = (lanes >> np.uint64(8)) & np.uint64(0x00FF00FF00FF00FF)
    pairs = low + high
    folded: IntArray = ((pairs * np.uint64(0x0001000100010001)) >> np.uint64(48)).astype(np.int64)
    return folded


def _item_ids(ids: Sequence[object], items: int) -> NDArray[np.object_]:
    """``ids`` as an object array of ``items`` unique ids."""
    array = np.empty(len(ids), dtype=object)
    array[:] = list(ids)
    if array.size != items:
        raise EvaluationError(f"ids must hold one id per item; got {array.size} ids for {items} items")
    seen: set[object] = set()
    for item in array.tolist():
        if item in seen:
            raise EvaluationError(f"ids must be unique; got {item!r} more than once")
        seen.add(item)
    return array


def _integer_vector(values: ArrayLike, name: str) -> IntArray:
    array = np.asarray(values)
    if array.ndim != 1:
        raise EvaluationError(f"{name} must be a 1-D array of counts; got shape {array.shape}")
    if array.size == 0:
        raise EvaluationError(f"{name} must hold at least one item; got an empty array")
    if array.dtype.kind == "b" or array.dtype.kind not in "iuf":
        raise EvaluationError(f"{name} must hold integer counts; got dtype {array.dtype}")
    if array.dtype.kind == "f":
        bad = ~np.isfinite(array) | (array != np.round(array))
        if bad.any():
            item = int(np.flatnonzero(bad)[0])
            raise EvaluationError(f"{name} must hold whole numbers; got {array[item]} at item {item}")
    return array.astype(np.int64)


@dataclass(frozen=True, eq=False)
class Bank:
    """Per-item trial counts ``n`` and success counts ``c`` for M items.

    Build one with :meth:`from_matrix` (an M x N 0/1 matrix),
    :meth:`from_outcomes` (a ragged list of per-item outcome lists) or
    :meth:`from_counts`.  Items may have different numbers of trials: every
    estimator uses each item's own ``n``, and a ``k`` larger than some item's
    ``n`` is an error, never a silent bias.

    >>> bank = Bank.from_outcomes([[1, 0, 1], [1, 1, 1, 0, 1]])
    >>> bank.n.tolist(), bank.c.tolist()
    ([3, 5], [2, 4])
    >>> bank.items, bank.min_trials
    (2, 3)

    A bank may carry its items' ids (``ids``, one unique id per item): comparisons then pair
    two banks by id, and :meth:`select` picks items by id.
    """

    n: IntArray
    c: IntArray
    ids: NDArray[np.object_] | None = None

    def __post_init__(self) -> None:
        for field in (self.n, self.c, self.ids):
            if field is not None:
                field.setflags(write=False)

    @classmethod
    def from_counts(cls, n: ArrayLike, c: ArrayLike, ids: Sequence[object] | None = None) -> Bank:
        """Items with ``n[i]`` trials of which ``c[i]`` passed (and, optionally, id ``ids[i]``).

        >>> Bank.from_counts([5, 5], [3, 4]).c.tolist()
        [3, 4]
        >>> Bank.from_counts([5, 5], [3, 4], ids=["q1", "q2"]).select(["q2"]).c.tolist()
        [4]
        >>> Bank.from_counts([5], [6])
        Traceback (most recent call last):
        ...
        trialscore.errors.EvaluationError: c must satisfy 0 <= c <= n; got c=6 with n=5 at item 0
        """
        n_arr = _integer_vector(n, "n")
        c_arr = _integer_vector(c, "c")
        if n_arr.shape != c_arr.shape:
            raise EvaluationError(
                f"n and c must have one entry per item; got {n_arr.size} trial counts "
                f"and {c_arr.size} success counts"
            )
        if (n_arr < 1).any():
            item = int(np.flatnonzero(n_arr < 1)[0])
            raise EvaluationError(f"n must be >= 1 for every item; got n={n_arr[item]} at item {item}")
        bad = (c_arr < 0) | (c_arr > n_arr)
        if bad.any():
            item = int(np.flatnonzero(bad)[0])
            raise EvaluationError(
                f"c must satisfy 0 <= c <= n; got c={c_arr[item]} with n={n_arr[item]} at item {item}"
            )
        return cls(n_arr, c_arr, None if ids is None else _item_ids(ids, n_arr.size))

    def select(self, ids: Sequence[object]) -> Bank:
        """The items named ``ids``, in that order (the bank must carry ids).

        >>> bank = Bank.from_counts([3, 4, 5], [1, 2, 3], ids=["a", "b", "c"])
        >>> bank.select(["c", "a"]).n.tolist()
        [5, 3]
        >>> bank.select(["d"])
        Traceback (most recent call last):
        ...
        trialscore.errors.EvaluationError: ids must name items of the bank; got 'd', which it does not hold
        """
        if self.ids is None:
            raise EvaluationError("select needs a bank that carries item ids; this one has none")
        position = {item: index for index, item in enumerate(self.ids.tolist())}
        rows = []
        for item in ids:
            if item not in position:
                raise EvaluationError(
                    f"ids must name items of the bank; got {item!r}, which it does not hold"
                )
            rows.append(position[item])
        index = np.array(rows, dtype=np.int64)
        return Bank.from_counts(self.n[index], self.c[index], ids=list(ids))

    @classmethod
    def from_matrix(cls, R: ArrayLike, name: str = "R") -> Bank:
        """Items are the rows of an M x N 0/1 (or boolean) matrix.

        >>> Bank.from_matrix([[0, 1, 1, 0, 1], [1, 1, 0, 1, 1]]).c.tolist()
        [3, 4]
        """
        array = checked_matrix(R, name)
        c = _binary_row_sums(array, name)
        return cls(np.full(array.shape[0], array.shape[1], dtype=np.int64), c)

    @classmethod
    def from_outcomes(cls, outcomes: Sequence[Sequence[object]], name: str = "R") -> Bank:
        """Items given as lists of 0/1 (or bool) outcomes, possibly of different lengths.

        >>> Bank.from_outcomes([[True, False], [1]]).n.tolist()
        [2, 1]
        """
        if isinstance(outcomes, np.ndarray) and outcomes.ndim == 2:
            return cls.from_matrix(outcomes, name)
        if len(outcomes) == 0:
            raise EvaluationError(f"{name} must hold at least one item; got no items")
        n = np.empty(len(outcomes), dtype=np.int64)
        c = np.empty(len(outcomes), dtype=np.int64)
        for item, row in enumerate(outcomes):
            values = np.asarray(row)
            if values.ndim != 1 or values.size == 0:
                raise EvaluationError(
                    f"{name}[{item}] must be a non-empty list of outcomes; got {describe(row)}"
                )
            if values.dtype.kind not in "biuf":
                raise EvaluationError(f"{name}[{item}] must hold 0/1 outcomes; got {describe(row)}")
            if values.dtype.kind != "b":
                bad = ~((values == 0) | (values == 1))
                if bad.any():
                    trial = int(np.flatnonzero(bad)[0])
                    raise _not_binary(name, values[trial], item, trial)
            n[item] = values.size
            c[item] = np.count_nonzero(values)
        return cls(n, c)

    @property
    def items(self) -> int:
        """Number of items M."""
        return int(self.n.size)

    @property
    def min_trials(self) -> int:
        """The smallest number of trials of any item (the largest valid k)."""
        return int(self.n.min())

    @property
    def trials(self) -> int | None:
        """The common number of trials N when every item has it, else None."""
        first = int(self.n[0])
        return first if bool((self.n == first).all()) else None

    def states(self) -> tuple[IntArray, IntArray, IntArray]:
        """Distinct ``(n, c)`` states and how many items are in each.

        >>> [a.tolist() for a in Bank.from_counts([5, 5, 3], [3, 3, 1]).states()]
        [[3, 5], [1, 3], [1, 2]]
        """
        n, c, freq, _ = self._states
        return n, c, freq

    def state_index(self) -> tuple[IntArray, IntArray, IntArray]:
        """Distinct ``(n, c)`` states and, for each item, the index of its state.

        >>> [a.tolist() for a in Bank.from_counts([5, 3, 5], [3, 1, 3]).state_index()]
        [[3, 5], [1, 3], [1, 0, 1]]
        """
        n, c, _, inverse = self._state_index
        return n, c, inverse

    # The bank is read-only (its arrays too): its states are found once, on first use, and kept
    # read-only, however many estimators, intervals and comparisons read them.
    @cached_property
    def _states(self) -> tuple[IntArray, IntArray, IntArray, IntArray]:
        return self._distinct_states(inverse=False)

    @cached_property
    def _state_index(self) -> tuple[IntArray, IntArray, IntArray, IntArray]:
        return self._distinct_states(inverse=True)

    def _distinct_states(self, inverse: bool) -> tuple[IntArray, IntArray, IntArray, IntArray]:
        """States keyed by ``c`` (common n) or ``n * (n_max + 1) + c``; histogram when small, else sort."""
        common = self.trials
        width = int(self.n.max()) + 1
        key = self.c if common is not None else self.n * width + self.c
        span = width if common is not None else width * width
        if span <= 4 * self.items + 64:
            freq = np.bincount(key, minlength=span)
            present = np.flatnonzero(freq)
            index = (np.cumsum(freq > 0) - 1)[key] if inverse else present
            freq = freq[present]
        else:
            present, index, freq = np.unique(key, return_inverse=True, return_counts=True)
        if common is not None:
            n, c = np.full(present.size, common, dtype=np.int64), present
        else:
            n, c = present // width, present % width
        out = (n, c.astype(np.int64), freq.astype(np.int64), index.ravel())
        for part in out:
            part.setflags(write=False)
        return out

    def check_k(self, k: object, name: str = "k") -> int:
        """Validate a draw size against every item; return it as ``int``.

        >>> Bank.from_counts([5, 3], [1, 1]).check_k(4)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        trialscore.errors.InsufficientDataError: k must satisfy 1 <= k <= n for every item; got k=4 but ...
        """
        k = check_integer(k, name)
        if k < 1:
            raise EvaluationError(f"{name} must satisfy 1 <= {name} <= n; got {name}={k}")
        too_big = self.n < k
        if too_big.any():
            short = np.flatnonzero(too_big)
            item = int(short[0])
            fewest = int(self.n.min())
            if self.trials is not None:
                raise InsufficientDataError(
                    f"{name} must satisfy 1 <= {name} <= n; got {name}={k} with n={self.trials}",
                    unit="trials",
                    needed=k,
                    got=fewest,
                )
            named = f"item {item}" if self.ids is None else f"item {self.ids[item]!r}"
            more = f" (and {short.size - 1} more item(s) with n < {k})" if short.size > 1 else ""
            raise InsufficientDataError(
                f"{name} must satisfy 1 <= {name} <= n for every item; "
                f"got {name}={k} but {named} has n={self.n[item]}{more}",
                unit="trials",
                needed=k,
                got=fewest,
                item=None if self.ids is None else self.ids[int(np.argmin(self.n))],
            )
        return k


def is_ragged(R: object) -> bool:
    """True for a list of per-item outcome lists of different lengths.

    >>> is_ragged([[1, 0], [1]]), is_ragged([[1, 0], [1, 1]])
    (True, False)
    """
    if not isinstance(R, (list, tuple)) or not R:
        return False
    if not all(isinstance(row, (list, tuple, np.ndarray)) for row in R):
        return False
    return len({len(row) for row in R}) > 1


def as_bank(R: ArrayLike | Bank, name: str = "R") -> Bank:
    """Accept a :class:`Bank`, a rectangular matrix or ragged outcome lists."""
    if isinstance(R, Bank):
        return R
    if is_ragged(R):
        return Bank.from_outcomes(cast("Sequence[Sequence[object]]", R), name)
    return Bank.from_matrix(R, name)


@dataclass(frozen=True, eq=False)
class CategoryBank:
    """Per-item counts of each outcome category ``0..C`` (for Bayes@N).

    ``counts[i, j]`` is how many of item ``i``'s trials fell in category ``j``.

    >>> CategoryBank.from_matrix([[0, 1, 2, 2, 1], [1, 1, 0, 2, 2]], categories=3).counts.tolist()
    [[1, 2, 2], [1, 2, 2]]
    """

    counts: IntArray

    @classmethod
    def from_matrix(cls, R: ArrayLike, categories: int, name: str = "R") -> CategoryBank:
        """Count categories per row of an integer matrix with entries in ``0..categories-1``."""
        array = checked_matrix(R, name)
        if array.dtype.kind == "f":
            whole = array == np.round(array)
            if not whole.all():
                item, trial = _first_bad(~whole)
                raise EvaluationError(
                    f"{name} entries must be whole category numbers; got {array[item, trial]} "
                    f"at item {item}, trial {trial}"
                )
        values = array.astype(np.int64)
        bad = (values < 0) | (values >= categories)
        if bad.any():
            item, trial = _first_bad(bad)
            raise EvaluationError(
                f"{name} entries must be categories in 0..{categories - 1} (C = len(w) - 1); "
                f"got {array[item, trial]} at item {item}, trial {trial}"
            )
        counts = np.stack([np.count_nonzero(values == j, axis=1) for j in range(categories)], axis=1)
        return cls(counts.astype(np.int64))

    @classmethod
    def from_bank(cls, bank: Bank) -> CategoryBank:
        """Binary items as two categories: failures (0) and successes (1)."""
        return cls(np.stack([bank.n - bank.c, bank.c], axis=1))
