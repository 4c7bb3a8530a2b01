"""Tables as columns of NumPy arrays: what DuckDB hands back and what it scans, without PyArrow.

DuckDB fetches a result as NumPy arrays (``fetchnumpy``) and scans a ``dict`` of NumPy arrays
registered as a view, so counts travel between the engine and Python with no Arrow or pandas
import (together about a quarter of a second at the start of every command that reads a file).
A :data:`Columns` table is a ``dict`` of equal-length arrays: numbers as ``int64`` or
``float64`` (null as NaN), text as ``object`` arrays of ``str`` (null as ``None``).

>>> import duckdb
>>> con = duckdb.connect()
>>> table = fetch(con, "SELECT * FROM (VALUES ('a', 1), (NULL, NULL)) AS t(item, trial)")
>>> table["item"].tolist(), floats(table["trial"]).tolist()
(['a', None], [1.0, nan])
>>> view = register(con, {"item": strings(["x", None])}, text=("item",))
>>> con.sql(f"SELECT typeof(item) FROM {view} LIMIT 1").fetchall()
[('VARCHAR',)]
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Iterable, Sequence
from typing import TypeAlias

import duckdb
import numpy as np
from numpy.typing import NDArray

__all__ = [
    "Columns",
    "fetch",
    "floats",
    "integers",
    "nulls",
    "register",
    "repeated",
    "row",
    "strings",
    "texts",
]

#: A table: column name -> equal-length NumPy array (numbers, or ``object`` text with ``None``).
Columns: TypeAlias = dict[str, NDArray[np.generic]]

_VIEWS = itertools.count()


def _plain(column: object) -> NDArray[np.generic]:
    """A fetched column without a mask: nulls as NaN (numbers) or ``None`` (text)."""
    masked = sys.modules.get("numpy.ma")  # loaded by DuckDB when a result has nulls (30 ms otherwise)
    if masked is None or not isinstance(column, masked.MaskedArray):
        plain: NDArray[np.generic] = np.asarray(column)
        return plain
    mask = masked.getmaskarray(column)
    data: NDArray[np.generic] = np.asarray(column.data)
    if not mask.any():
        return data
    if data.dtype == object:
        text: NDArray[np.generic] = data.copy()
        text[mask] = None  # type: ignore[assignment]
        return text
    out: NDArray[np.generic] = data.astype(np.float64)
    out[mask] = np.nan
    return out


#: What a null of each plain type is fetched as, beside a flag that says it was null (see :func:`fetch`).
_STAND_INS = {
    "VARCHAR": "''",
    "BIGINT": "0",
    "INTEGER": "0",
    "HUGEINT": "0",
    "DOUBLE": "0",
    "BOOLEAN": "false",
}


def fetch(con: duckdb.DuckDBPyConnection, sql: str, masked: bool = False) -> Columns:
    """Run ``sql`` and return its result as :data:`Columns`.

    Nulls travel as a stand-in value beside a null flag, so DuckDB hands back plain arrays: a
    masked result would load ``numpy.ma`` (about 20 ms at the start of every command that reads a
    file with an empty cell); a result of other column types is fetched as it is.  With ``masked``
    every result is fetched as it is, masks and all (then unmasked): the faster way for long text
    (the stand-ins copy it, 2.5x the fetch of 10,000 2 KB outputs), at the cost of ``numpy.ma``.
    """
    relation = con.sql(sql)
    types = [str(kind) for kind in relation.types]
    if masked or not all(kind in _STAND_INS for kind in types):
        return {name: _plain(column) for name, column in relation.fetchnumpy().items()}
    names = relation.columns
    quoted = ['"' + name.replace('"', '""') + '"' for name in names]
    parts = [
        f"COALESCE({column}, {_STAND_INS[kind]}) AS v{index}, {column} IS NULL AS n{index}"
        for index, (column, kind) in enumerate(zip(quoted, types, strict=True))
    ]
    view = f"fetched_{next(_VIEWS)}"
    relation.create_view(view, replace=True)
    try:
        raw = con.sql(f"SELECT {', '.join(parts)} FROM {view}").fetchnumpy()
    finally:
        con.execute(f"DROP VIEW IF EXISTS {view}")
    out: Columns = {}
    for index, name in enumerate(names):
        values: NDArray[np.generic] = np.asarray(raw[f"v{index}"])
        nulls = np.asarray(raw[f"n{index}"], dtype=bool)
        if nulls.any() and values.dtype == object:
            values = values.copy()
            values[nulls] = None  # type: ignore[assignment]
        elif nulls.any():
            values = values.astype(np.float64)
            values[nulls] = np.nan
        out[name] = values
    return out


def register(con: duckdb.DuckDBPyConnection, table: Columns, text: Iterable[str] = ()) -> str:
    """Make ``table`` queryable; return the view's name.

    The columns named in ``text`` are typed ``VARCHAR`` even when every value is null (DuckDB
    would otherwise type an all-``None`` column as ``NULL``); a NaN in a float column is NULL.
    """
    raw = f"columns_{next(_VIEWS)}"
    con.register(raw, table)
    text = set(text)
    if not text:
        return raw
    selected = ", ".join(
        f'CAST("{name}" AS VARCHAR) AS "{name}"' if name in text else f'"{name}"' for name in table
    )
    view = f"{raw}_typed"
    con.execute(f"CREATE OR REPLACE TEMP VIEW {view} AS SELECT {selected} FROM {raw}")
    return view


def strings(values: Sequence[str | None]) -> NDArray[np.object_]:
    """A text column (``None`` for null) as an ``object`` array."""
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def floats(column: NDArray[np.generic]) -> NDArray[np.float64]:
    """A numeric column as ``float64`` (nulls are NaN already)."""
    if column.dtype == object:
        return np.array([np.nan if value is None else value for value in column], dtype=np.float64)
    return column.astype(np.float64)


def integers(column: NDArray[np.generic]) -> NDArray[np.int64]:
    """An integer column without nulls as ``int64``."""
    if column.dtype.kind == "f" and np.isnan(column).any():
        raise ValueError(
            f"expected an integer column without nulls; got {int(np.isnan(column).sum())} null(s)"
        )
    return column.astype(np.int64)


def nulls(column: NDArray[np.generic]) -> NDArray[np.bool_]:
    """Which values of an ``object`` column are ``None`` (one pass in C, not a Python loop).

    >>> nulls(strings(["a", None])).tolist()
    [False, True]
    """
    found: NDArray[np.bool_] = np.equal(column, None)  # type: ignore[call-overload]
    return found


def repeated(column: NDArray[np.generic]) -> NDArray[np.object_]:
    """A column of few distinct values (a group key) with one Python object per run of equal values
    (per distinct value when the column is sorted, as the first group key of counts is).

    >>> key = repeated(np.array(["".join(["a", "b"]), "ab", "c", "ab"], dtype=object))
    >>> key.tolist(), key[0] is key[1], key[1] is key[3]
    (['ab', 'ab', 'c', 'ab'], True, False)
    """
    if len(column) == 0:
        return np.empty(0, dtype=object)
    values = column.astype(object, copy=False)
    starts = np.flatnonzero(np.concatenate(([True], values[1:] != values[:-1])))
    out: NDArray[np.object_] = np.repeat(values[starts], np.diff(np.append(starts, len(values))))
    return out


def texts(column: NDArray[np.generic]) -> NDArray[np.object_]:
    """A column DuckDB typed ``VARCHAR`` (an ``object`` array), typed as such."""
    if column.dtype != object:
        raise TypeError(f"expected a text column; got {column.dtype}")
    return column.astype(object, copy=False)


def row(table: Columns, position: int) -> dict[str, object]:
    """Row ``position`` as a ``dict`` of Python values (NaN as ``None``).

    >>> row({"item": strings(["a"]), "trial_lo": np.array([np.nan])}, 0)
    {'item': 'a', 'trial_lo': None}
    """
    out: dict[str, object] = {}
    for name, column in table.items():
        value = column[position].item() if column.dtype != object else column[position]
        out[name] = None if isinstance(value, float) and np.isnan(value) else value
    return out
