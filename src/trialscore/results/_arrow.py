"""Arrow columns as NumPy arrays, without PyArrow's pandas bridge.

``Array.to_numpy`` (and compute functions given Python scalars) go through PyArrow's pandas
conversion layer, which imports pandas when it is installed: a quarter of a second at the start
of every command that reads a file.  The counts DuckDB hands over are plain integer, float and
string columns, so they are read here straight from their Arrow buffers.

>>> import pyarrow as pa
>>> floats(pa.chunked_array([[1, None, 3]], type=pa.int64())).tolist()
[1.0, nan, 3.0]
>>> integers(pa.chunked_array([[4, 5], [6]])).tolist(), objects(pa.chunked_array([["a", None]])).tolist()
([4, 5, 6], ['a', None])
>>> repeated_objects(pa.chunked_array([["x", "y", None, "x"]])).tolist()
['x', 'y', None, 'x']
"""

from __future__ import annotations

from typing import TypeAlias

import numpy as np
import pyarrow as pa
from numpy.typing import NDArray

__all__ = ["floats", "integers", "objects", "repeated_objects"]

_NUMPY: dict[pa.DataType, type[np.generic]] = {
    pa.int8(): np.int8,
    pa.int16(): np.int16,
    pa.int32(): np.int32,
    pa.int64(): np.int64,
    pa.uint8(): np.uint8,
    pa.uint16(): np.uint16,
    pa.uint32(): np.uint32,
    pa.uint64(): np.uint64,
    pa.float32(): np.float32,
    pa.float64(): np.float64,
}

Column: TypeAlias = "pa.ChunkedArray | pa.Array"


def _array(column: Column) -> pa.Array:
    return column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column


def _nulls(array: pa.Array) -> NDArray[np.bool_]:
    """True where ``array`` is null (from its validity bitmap)."""
    if array.null_count == 0:
        return np.zeros(len(array), dtype=bool)
    if pa.types.is_null(array.type):
        return np.ones(len(array), dtype=bool)
    bits = np.unpackbits(np.frombuffer(array.buffers()[0], dtype=np.uint8), bitorder="little")
    valid: NDArray[np.bool_] = bits[array.offset : array.offset + len(array)].astype(bool)
    return ~valid


def _values(array: pa.Array) -> NDArray[np.generic]:
    """The data buffer of a numeric array (null slots hold arbitrary values)."""
    if pa.types.is_null(array.type) or len(array) == 0:
        return np.zeros(len(array), dtype=np.float64)
    dtype = _NUMPY.get(array.type)
    if dtype is None:
        raise TypeError(f"expected a numeric Arrow column; got {array.type}")
    return np.frombuffer(array.buffers()[1], dtype=dtype, count=len(array) + array.offset)[array.offset :]


def floats(column: Column) -> NDArray[np.float64]:
    """A numeric column as float64, nulls as NaN."""
    array = _array(column)
    out = _values(array).astype(np.float64)
    out[_nulls(array)] = np.nan
    return out


def integers(column: Column) -> NDArray[np.int64]:
    """An integer column without nulls as int64."""
    array = _array(column)
    if array.null_count:
        raise ValueError(f"expected an integer column without nulls; got {array.null_count} null(s)")
    return _values(array).astype(np.int64)


def objects(column: Column) -> NDArray[np.object_]:
    """Any column as a NumPy object array of Python values (None for null)."""
    values = _array(column).to_pylist()
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def repeated_objects(column: Column) -> NDArray[np.object_]:
    """Like :func:`objects` for a column of few distinct values (a group key): one object per value."""
    encoded = _array(column).dictionary_encode()
    dictionary = objects(encoded.dictionary)
    values = np.empty(len(dictionary) + 1, dtype=object)
    values[:-1] = dictionary
    indices = _values(encoded.indices).astype(np.int64)
    indices[_nulls(encoded.indices)] = len(dictionary)
    result: NDArray[np.object_] = values[indices]
    return result
