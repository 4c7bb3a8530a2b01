"""Wide outcome matrices (items x trials of 0/1) from ``.npy``, ``.npz`` and headerless numeric text.

Rows are items (named by their row number, ``"0"``, ``"1"``, ...), columns are
trials.  Entries must be 0 or 1 (or booleans); in a float matrix ``NaN`` marks an
errored trial, which is counted per item and, by default, left out of its ``n``.
Every array of an ``.npz`` file is read, labelled ``file.npz:name``.  A text
matrix is comma- or tab-separated numbers with no header (``#`` lines are comments).

>>> import tempfile, pathlib
>>> path = pathlib.Path(tempfile.mkdtemp()) / "R.npy"
>>> np.save(path, np.array([[1, 0, 1], [1, 1, np.nan]]))
>>> sniff(path), [(g.tolist(), c.tolist(), e.tolist()) for _, g, c, e in matrix_counts(path)]
(True, [([3, 2], [2, 2], [0, 1])])
"""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from trialscore.core.bank import Bank, checked_matrix
from trialscore.errors import EvaluationError
from trialscore.results.formats._text import head_bytes, head_text

if TYPE_CHECKING:
    from trialscore.results.sink import TrialSink

__all__ = ["MAPS", "NAME", "SUFFIXES", "SUMMARY", "matrix_counts", "read", "sniff"]

NAME = "wide"
SUMMARY = "items x trials 0/1 matrix: .npy, .npz (every array), or headerless comma/tab-separated numbers"
MAPS = "row r is item 'r', each column a trial; 1 pass, 0 fail, NaN an errored trial; no group keys but file"
SUFFIXES = (".npy", ".npz", ".csv", ".tsv", ".txt")

Counts = tuple[str, np.ndarray, np.ndarray, np.ndarray]

_NPY = b"\x93NUMPY"
_ZIP = b"PK\x03\x04"


def _is_npz(path: Path) -> bool:
    if head_bytes(path, len(_ZIP)) != _ZIP:
        return False
    try:
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
    except (OSError, zipfile.BadZipFile):
        return False
    return bool(names) and all(name.endswith(".npy") for name in names)


def _numeric_line(path: Path) -> str | None:
    """The first line that is not blank or a ``#`` comment, when it is all numbers; else None."""
    text = head_text(path)
    if text is None:
        return None
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        try:
            [float(cell) for cell in stripped.split(_delimiter(stripped))]
        except ValueError:
            return None
        return stripped
    return None


def _delimiter(line: str) -> str:
    return "\t" if "\t" in line else ","


def sniff(path: Path) -> bool:
    """An ``.npy`` header, a zip of ``.npy`` arrays, or text whose first data line is only numbers."""
    return head_bytes(path, len(_NPY)) == _NPY or _is_npz(path) or _numeric_line(path) is not None


def _row_counts(label: str, matrix: object) -> Counts:
    """``(label, graded, passed, errored)`` per row of one 0/1 matrix with NaN = errored."""
    array = np.asarray(matrix)
    errored: np.ndarray | None = None
    if array.dtype.kind == "f":
        missing = np.isnan(array)
        if missing.any():
            array = np.where(missing, 0.0, array)
        errored = missing.sum(axis=1, dtype=np.int64) if array.ndim == 2 else None
    bank = Bank.from_matrix(checked_matrix(array, label), label)
    if errored is None:
        errored = np.zeros(bank.items, dtype=np.int64)
    return label, bank.n - errored, bank.c, errored


def matrix_counts(path: Path) -> list[Counts]:
    """Per-row counts of every matrix in an ``.npy``, ``.npz`` or numeric text file."""
    try:
        if head_bytes(path, len(_NPY)) == _NPY:
            return [_row_counts(str(path), np.load(path, allow_pickle=False))]
        if head_bytes(path, len(_ZIP)) == _ZIP:
            with np.load(path, allow_pickle=False) as archive:
                if not archive.files:
                    raise EvaluationError(f"{path}: the .npz file holds no arrays")
                return [_row_counts(f"{path}:{name}", archive[name]) for name in sorted(archive.files)]
        line = _numeric_line(path)
        if line is not None:
            delimiter = _delimiter(line)
        else:
            delimiter = "\t" if path.suffix.lower() == ".tsv" else ","
        matrix = np.loadtxt(
            path, delimiter=delimiter, comments="#", dtype=np.float64, ndmin=2, encoding="utf-8-sig"
        )
        return [_row_counts(str(path), matrix)]
    except (OSError, ValueError) as exc:
        if isinstance(exc, EvaluationError):
            raise
        raise EvaluationError(f"{path}: cannot read an items x trials 0/1 matrix: {exc}") from exc


def read(path: Path, sink: TrialSink) -> None:
    """Add every matrix of the file to ``sink`` (items are row numbers)."""
    for label, graded, c, errored in matrix_counts(path):
        sink.add_matrix(label, graded, c, errored)
