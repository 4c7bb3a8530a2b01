"""Wide outcome matrices (items x trials of 0/1) from ``.npy``, ``.npz`` and headerless CSV files.

Rows are items (named by their row number, ``"0"``, ``"1"``, ...), columns are
trials.  Entries must be 0 or 1 (or booleans); in a float matrix ``NaN`` marks an
errored trial, which is counted per item and, by default, left out of its ``n``.
Every array of an ``.npz`` file is read, labelled ``file.npz:name``.

>>> import tempfile, pathlib
>>> path = pathlib.Path(tempfile.mkdtemp()) / "R.npy"
>>> np.save(path, np.array([[1, 0, 1], [1, 1, np.nan]]))
>>> [(g.tolist(), c.tolist(), e.tolist()) for _, g, c, e in matrix_counts(path)]
[([3, 2], [2, 2], [0, 1])]
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from trialscore.bank import Bank, checked_matrix
from trialscore.errors import EvaluationError

__all__ = ["matrix_counts"]

Counts = tuple[str, np.ndarray, np.ndarray, np.ndarray]


def _row_counts(label: str, matrix: object) -> Counts:
    """``(label, graded, passed, errored)`` per row of one 0/1 matrix with NaN = errored."""
    array = np.asarray(matrix)
    if array.dtype.kind == "f":
        missing = np.isnan(array)
        if missing.any():
            array = np.where(missing, 0.0, array)
        errored = missing.sum(axis=1, dtype=np.int64) if array.ndim == 2 else None
    else:
        errored = None
    bank = Bank.from_matrix(checked_matrix(array, label), label)
    if errored is None:
        errored = np.zeros(bank.items, dtype=np.int64)
    return label, bank.n - errored, bank.c, errored


def matrix_counts(path: Path) -> list[Counts]:
    """Per-row counts of every matrix in a ``.npy``, ``.npz`` or numeric ``.csv`` file."""
    suffix = path.suffix.lower()
    try:
        if suffix == ".npy":
            return [_row_counts(str(path), np.load(path, allow_pickle=False))]
        if suffix == ".npz":
            with np.load(path, allow_pickle=False) as archive:
                if not archive.files:
                    raise EvaluationError(f"{path}: the .npz file holds no arrays")
                return [_row_counts(f"{path}:{name}", archive[name]) for name in sorted(archive.files)]
        delimiter = "\t" if suffix == ".tsv" else ","
        matrix = np.loadtxt(path, delimiter=delimiter, comments="#", dtype=np.float64, ndmin=2)
        return [_row_counts(str(path), matrix)]
    except (OSError, ValueError) as exc:
        if isinstance(exc, EvaluationError):
            raise
        raise EvaluationError(f"{path}: cannot read an items x trials 0/1 matrix: {exc}") from exc
