"""A long table of judge grades, one row per (item, trial, judge, repeat), as arrays.

A judged eval grades each trial's output once or more: by several judges (a panel) and by each
judge several times (repeats: the judge called again on the same frozen output).  The long
table has one row per grade with the columns ``item``, ``trial``, ``judge``, ``repeat``
(optional: 0 when absent) and ``grade`` (0/1 for a verdict, any real number for an ordinal or
interval score).  :func:`grade_table` reads it into a :class:`GradeTable`, whose
``grades`` array is ``items x trials x judges x repeats`` with NaN where a grade is missing
(items with fewer trials, judges that skipped a trial, calls that errored).  From it come the
arrays each analysis needs:

* :meth:`GradeTable.inter_judge`: one row per graded trial (a *unit*), one column per judge,
  each judge's first repeat (the grade a single-call pipeline would have stored);
* :meth:`GradeTable.intra_judge`: for one judge, one row per unit and one column per repeat;
* :meth:`GradeTable.judge_cube`: for one judge, ``items x trials x repeats``.

Trials are numbered within each item in order of first appearance; repeats by their sorted
keys.

>>> table = grade_table([
...     ("q1", 0, "a", 0, 1), ("q1", 0, "b", 0, 1), ("q1", 1, "a", 0, 0), ("q1", 1, "b", 0, 1),
...     ("q2", 0, "a", 0, 0), ("q2", 0, "b", 0, 0), ("q2", 0, "a", 1, 1),
... ])
>>> table.items, table.judges, table.grades.shape
(('q1', 'q2'), ('a', 'b'), (2, 2, 2, 2))
>>> units, items = table.inter_judge()
>>> units.tolist(), items.tolist()
([[1.0, 1.0], [0.0, 1.0], [0.0, 0.0]], [0, 0, 1])
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass
from numbers import Real
from typing import Any

import numpy as np
from numpy.typing import NDArray

from trialscore._record import Record
from trialscore._validate import describe, is_flag
from trialscore.errors import EvaluationError

__all__ = ["COLUMNS", "GradeTable", "grade_table"]

FloatArray = NDArray[np.float64]
IndexArray = NDArray[np.int64]

#: The columns of the long table, in the order of a row tuple.
COLUMNS = ("item", "trial", "judge", "repeat", "grade")


@dataclass(frozen=True)
class GradeTable(Record):
    """Grades as an ``items x trials x judges x repeats`` array, NaN where a grade is missing.

    ``items`` and ``judges`` hold the keys in order of first appearance; ``repeats`` the sorted
    repeat keys; ``rows`` the number of grades read.
    """

    items: tuple[Hashable, ...]
    judges: tuple[Hashable, ...]
    repeats: tuple[Hashable, ...]
    grades: FloatArray
    rows: int

    def _units(self, block: FloatArray) -> tuple[FloatArray, IndexArray]:
        """Rows of ``block`` (items x trials x columns) for the trials with any grade, and their items."""
        graded = ~np.isnan(block).all(axis=2)
        item_index, trial_index = np.nonzero(graded)
        return block[item_index, trial_index], item_index.astype(np.int64)

    def inter_judge(self) -> tuple[FloatArray, IndexArray]:
        """Units x judges: each judge's first repeat on each graded trial, and each unit's item index.

        >>> table = grade_table({"item": [0, 0, 0], "trial": [0, 0, 0], "judge": ["a", "a", "b"],
        ...                      "repeat": [1, 0, 0], "grade": [1, 0, 0]})
        >>> table.inter_judge()[0].tolist()  # judge a's repeat 0 (a 0), not its repeat 1
        [[0.0, 0.0]]
        """
        present = ~np.isnan(self.grades)
        first = np.argmax(present, axis=3)
        chosen = np.take_along_axis(self.grades, first[..., None], axis=3)[..., 0]
        return self._units(chosen)

    def judge_position(self, judge: Hashable) -> int:
        """Index of ``judge`` in :attr:`judges`, or an error that names the judges there are."""
        try:
            return self.judges.index(judge)
        except ValueError:
            known = ", ".join(map(str, self.judges))
            raise EvaluationError(f"judge must be one of {known}; got {describe(judge)}") from None

    def judge_cube(self, judge: Hashable) -> FloatArray:
        """Items x trials x repeats of one judge's grades (NaN where missing)."""
        cube: FloatArray = self.grades[:, :, self.judge_position(judge), :]
        return cube

    def intra_judge(self, judge: Hashable) -> tuple[FloatArray, IndexArray]:
        """Units x repeats of one judge (its grades of each trial it graded), and each unit's item index.

        >>> table = grade_table([(0, 0, "a", 0, 1), (0, 0, "a", 1, 0), (1, 0, "a", 0, 1)])
        >>> units, items = table.intra_judge("a")
        >>> np.nan_to_num(units, nan=-1).tolist(), items.tolist()
        ([[1.0, 0.0], [1.0, -1.0]], [0, 1])
        """
        return self._units(self.judge_cube(judge))


def _rows(table: object) -> Iterable[tuple[Any, ...]]:
    """Rows as 5-tuples from a mapping of columns, or from tuples or mappings per row."""
    if isinstance(table, Mapping) or (hasattr(table, "keys") and hasattr(table, "__getitem__")):
        columns: Any = table
        keys = set(columns.keys())
        for needed in ("item", "trial", "judge", "grade"):
            if needed not in keys:
                raise EvaluationError(
                    f"table must have the columns {', '.join(COLUMNS)} (repeat optional); lacks {needed!r}"
                )
        data = [list(columns[name]) if name in keys else None for name in COLUMNS]
        length = len(data[0] or [])
        for name, column in zip(COLUMNS, data, strict=True):
            if column is not None and len(column) != length:
                raise EvaluationError(
                    f"table columns must have equal lengths; column {name!r} has {len(column)}, "
                    f"column 'item' {length}"
                )
        return (tuple(column[i] if column is not None else 0 for column in data) for i in range(length))
    if isinstance(table, (str, bytes)) or not isinstance(table, Iterable):
        raise EvaluationError(
            f"table must be a mapping of columns or rows of {', '.join(COLUMNS)}; got {describe(table)}"
        )
    return (_row(row, number) for number, row in enumerate(table, start=1))


def _row(row: object, number: int) -> tuple[Any, ...]:
    if isinstance(row, Mapping):
        try:
            return tuple(row[name] if name != "repeat" else row.get("repeat", 0) for name in COLUMNS)
        except KeyError as exc:
            raise EvaluationError(f"table row {number} lacks the column {exc.args[0]!r}") from None
    if isinstance(row, (tuple, list)) and len(row) in (4, 5):
        values = tuple(row)
        return values if len(values) == 5 else (*values[:3], 0, values[3])
    raise EvaluationError(
        f"table row {number} must be (item, trial, judge, repeat, grade) or a mapping; got {describe(row)}"
    )


def _grade(value: object, number: int) -> float:
    if is_flag(value):
        return float(bool(value))
    if isinstance(value, Real) and math.isfinite(float(value)):
        return float(value)
    raise EvaluationError(
        f"table row {number}: grade must be a finite number or a bool; got {describe(value)}"
    )


def grade_table(table: object) -> GradeTable:
    """Read a long table of grades (module docstring) into a :class:`GradeTable`.

    ``table`` is a mapping of columns (a dict of lists; a pandas DataFrame works too) or rows:
    5-tuples ``(item, trial, judge, repeat, grade)``, 4-tuples without the repeat, or mappings.
    A grade given twice for the same (item, trial, judge, repeat) is an error naming both rows.

    >>> grade_table([("q1", 0, "a", 1), ("q1", 0, "a", 0)])
    Traceback (most recent call last):
    ...
    trialscore.errors.EvaluationError: table row 2 repeats row 1: item 'q1', trial 0, judge 'a', repeat 0
    """
    items: dict[Hashable, int] = {}
    judges: dict[Hashable, int] = {}
    trials: dict[tuple[int, Hashable], int] = {}
    per_item: list[int] = []
    seen: dict[tuple[int, int, int, Hashable], int] = {}
    cells: list[tuple[int, int, int, Hashable, float]] = []
    for number, (item, trial, judge, repeat, grade) in enumerate(_rows(table), start=1):
        try:
            i = items.setdefault(item, len(items))
            j = judges.setdefault(judge, len(judges))
            if i == len(per_item):
                per_item.append(0)
            if (i, trial) not in trials:
                trials[(i, trial)] = per_item[i]
                per_item[i] += 1
            key = (i, trials[(i, trial)], j, repeat)
            hash(repeat)
        except TypeError:
            raise EvaluationError(
                f"table row {number}: item, trial, judge and repeat must be hashable keys (str, int)"
            ) from None
        if key in seen:
            raise EvaluationError(
                f"table row {number} repeats row {seen[key]}: item {item!r}, trial {trial!r}, "
                f"judge {judge!r}, repeat {repeat!r}"
            )
        seen[key] = number
        cells.append((*key, _grade(grade, number)))
    if not cells:
        raise EvaluationError("table must hold at least one grade; got none")
    try:
        repeat_keys = sorted({cell[3] for cell in cells})  # type: ignore[type-var]
    except TypeError:
        repeat_keys = list(dict.fromkeys(cell[3] for cell in cells))
    repeat_index = {key: position for position, key in enumerate(repeat_keys)}
    grades = np.full((len(items), max(per_item), len(judges), len(repeat_keys)), np.nan)
    i_idx, t_idx, j_idx, r_keys, values = zip(*cells, strict=True)
    grades[np.array(i_idx), np.array(t_idx), np.array(j_idx), [repeat_index[key] for key in r_keys]] = values
    return GradeTable(tuple(items), tuple(judges), tuple(repeat_keys), grades, len(cells))
