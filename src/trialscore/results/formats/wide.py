"""Wide outcome matrices (items x trials of 0/1) from ``.npy``, ``.npz`` and headerless numeric text.

Rows are items (named by their row number, ``"0"``, ``"1"``, ...), columns are
trials.  Entries must be 0 or 1 (or booleans); in a float matrix ``NaN`` marks an
errored trial, which is counted per item and, by default, left out of its ``n``.
Every array of an ``.npz`` file is read, labelled ``file.npz:name``.  A text
matrix is comma- or tab-separated numbers with no header (``#`` lines are comments).

Every matrix is read a block of rows at a time (at most :data:`BLOCK_BYTES`), so memory does
not grow with its size.  An array's header is checked against the bytes that hold it before
anything is read: a header claiming more values than the file (or the ``.npz`` member) holds is
an error naming it, as is an ``.npz`` member inflating past :data:`MAX_MEMBER_BYTES` or by more
than :data:`~trialscore.results.formats._text.MAX_ZIP_RATIO` times its compressed size (a zip bomb).

>>> import tempfile, pathlib
>>> path = pathlib.Path(tempfile.mkdtemp()) / "R.npy"
>>> np.save(path, np.array([[1, 0, 1], [1, 1, np.nan]]))
>>> sniff(path), [(g.tolist(), c.tolist(), e.tolist()) for _, g, c, e in matrix_counts(path)]
(True, [([3, 2], [2, 2], [0, 1])])
"""

from __future__ import annotations

import math
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING

import numpy as np

from trialscore.errors import EvaluationError
from trialscore.results.formats._text import check_zip_member, head_bytes, head_text, lines

if TYPE_CHECKING:
    from trialscore.results.sink import TrialSink

__all__ = [
    "BLOCK_BYTES",
    "MAPS",
    "MAX_MEMBER_BYTES",
    "NAME",
    "SUFFIXES",
    "SUMMARY",
    "matrix_counts",
    "read",
    "sniff",
]

NAME = "wide"
SUMMARY = "items x trials 0/1 matrix: .npy, .npz (every array), or headerless comma/tab-separated numbers"
MAPS = "row r is item 'r', each column a trial; 1 pass, 0 fail, NaN an errored trial; no group keys but file"
SUFFIXES = (".npy", ".npz", ".csv", ".tsv", ".txt")

Counts = tuple[str, np.ndarray, np.ndarray, np.ndarray]

#: The most bytes of a matrix held at once (a block of whole rows; one row may be longer).
BLOCK_BYTES = 16 * 2**20
#: The longest single row read (bytes): a row is held whole.
MAX_ROW_BYTES = 64 * 2**20
#: The most an ``.npz`` member may inflate to (bytes; it is read a block at a time).
MAX_MEMBER_BYTES = 2**30

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


class _Rows:
    """Per-row (graded, passed, errored) counts of a matrix read a block of rows at a time."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.items = 0
        self.trials: int | None = None
        self.parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []

    def add(self, block: np.ndarray) -> None:
        """Count one block of rows (items ``self.items`` on); a bad entry names its item and trial."""
        if block.ndim != 2:
            raise EvaluationError(
                f"{self.label} must be a 2-D matrix (items x trials); got shape {block.shape}"
            )
        kind = block.dtype.kind
        if kind not in "biuf":
            raise EvaluationError(f"{self.label} must hold numbers or booleans; got dtype {block.dtype}")
        missing = np.isnan(block) if kind == "f" else np.zeros(block.shape, dtype=bool)
        if kind != "b":
            bad = ~missing & (block != 0) & (block != 1)
            if bad.any():
                item, trial = (int(index) for index in np.argwhere(bad)[0])
                raise EvaluationError(
                    f"{self.label} must be binary (0 or 1, NaN for an errored trial); got "
                    f"{block[item, trial]} at item {self.items + item}, trial {trial}"
                )
        errored = missing.sum(axis=1, dtype=np.int64)
        passed = np.count_nonzero(block == 1, axis=1).astype(np.int64)
        self.parts.append((block.shape[1] - errored, passed, errored))
        self.items += block.shape[0]
        self.trials = block.shape[1]

    def counts(self) -> Counts:
        if not self.items or not self.trials:
            raise EvaluationError(f"{self.label} must hold at least one item and one trial; got none")
        graded, passed, errored = (np.concatenate(column) for column in zip(*self.parts, strict=True))
        return self.label, graded, passed, errored


def _header(handle: IO[bytes], label: str) -> tuple[tuple[int, ...], bool, np.dtype]:
    """Shape, Fortran order and dtype from an ``.npy`` header (version 1 or 2)."""
    fmt = np.lib.format
    try:
        version = fmt.read_magic(handle)
        if version == (1, 0):
            shape, fortran, dtype = fmt.read_array_header_1_0(handle)
        elif version == (2, 0):
            shape, fortran, dtype = fmt.read_array_header_2_0(handle)
        else:
            raise ValueError(
                f"npy format version {version[0]}.{version[1]} is not read (save with numpy.save)"
            )
    except ValueError as exc:
        raise EvaluationError(f"{label}: not a readable .npy array: {exc}") from exc
    if dtype.hasobject:
        raise EvaluationError(f"{label}: holds Python objects (dtype {dtype}); expected numbers or booleans")
    return shape, fortran, dtype


def _blocks(handle: IO[bytes], data_bytes: int, label: str) -> Iterator[np.ndarray]:
    """The matrix behind an ``.npy`` header, as blocks of rows; the header must match ``data_bytes``."""
    shape, fortran, dtype = _header(handle, label)
    declared = math.prod(shape) * dtype.itemsize
    if declared != data_bytes - handle.tell():
        raise EvaluationError(
            f"{label}: its header declares shape {shape} of {dtype} ({declared:,} bytes) but "
            f"{data_bytes - handle.tell():,} bytes follow it"
        )
    if len(shape) != 2:
        raise EvaluationError(f"{label} must be a 2-D matrix (items x trials); got shape {shape}")
    items, trials = shape
    row_bytes = trials * dtype.itemsize
    if fortran and declared > BLOCK_BYTES:
        raise EvaluationError(
            f"{label}: a column-major (Fortran-order) matrix over {BLOCK_BYTES // 2**20} MiB is not "
            "read; save it in row-major order (numpy.ascontiguousarray)"
        )
    if row_bytes > MAX_ROW_BYTES:
        raise EvaluationError(
            f"{label}: a row of {trials:,} trials is over the {MAX_ROW_BYTES // 2**20} MiB a row may take"
        )
    if fortran:
        data = handle.read(declared)
        yield np.frombuffer(data, dtype=dtype).reshape(shape, order="F")
        return
    step = max(1, BLOCK_BYTES // max(row_bytes, 1))
    for start in range(0, items, step):
        rows = min(step, items - start)
        data = handle.read(rows * row_bytes)
        if len(data) != rows * row_bytes:
            raise EvaluationError(f"{label}: the array ends before its header's {items:,} rows")
        yield np.frombuffer(data, dtype=dtype).reshape(rows, trials)


def _npz_members(path: Path) -> Iterator[tuple[str, IO[bytes], int]]:
    """(label, open member, inflated size) of every array of an ``.npz``, each checked against a bomb."""
    with zipfile.ZipFile(path) as archive:
        infos = sorted(archive.infolist(), key=lambda info: info.filename)
        if not infos:
            raise EvaluationError(f"{path}: the .npz file holds no arrays")
        for info in infos:
            check_zip_member(path, info, MAX_MEMBER_BYTES)
            with archive.open(info) as member:
                yield f"{path}:{info.filename.removesuffix('.npy')}", member, info.file_size


def _text_blocks(path: Path, delimiter: str) -> Iterator[np.ndarray]:
    """A numeric text matrix as blocks of rows, read a bounded number of lines at a time."""
    block: list[tuple[int, str]] = []
    size = 0
    for number, raw in lines(path, MAX_ROW_BYTES):
        text = raw.decode("utf-8", errors="replace").strip()
        if not text or text.startswith("#"):
            continue
        block.append((number, text))
        size += len(raw)
        if size >= BLOCK_BYTES // 8:
            yield _parse_text(path, block, delimiter)
            block, size = [], 0
    if block:
        yield _parse_text(path, block, delimiter)


def _parse_text(path: Path, block: list[tuple[int, str]], delimiter: str) -> np.ndarray:
    try:
        return np.loadtxt([text for _, text in block], delimiter=delimiter, dtype=np.float64, ndmin=2)
    except ValueError:
        pass
    width = len(block[0][1].split(delimiter))
    for number, text in block:  # find the line to name
        cells = text.split(delimiter)
        if len(cells) != width:
            raise EvaluationError(
                f"{path} line {number}: cannot read an items x trials 0/1 matrix: {len(cells)} values, "
                f"where earlier rows have {width}"
            )
        for cell in cells:
            try:
                float(cell)
            except ValueError:
                raise EvaluationError(
                    f"{path} line {number}: cannot read an items x trials 0/1 matrix: {cell.strip()!r} "
                    "is not a number"
                ) from None
    raise EvaluationError(f"{path}: cannot read an items x trials 0/1 matrix")  # pragma: no cover


def _count(label: str, blocks: Iterator[np.ndarray]) -> Counts:
    rows = _Rows(label)
    for block in blocks:
        if rows.trials is not None and block.shape[1] != rows.trials:
            raise EvaluationError(
                f"{label}: cannot read an items x trials 0/1 matrix: row {rows.items} has "
                f"{block.shape[1]} values, where earlier rows have {rows.trials}"
            )
        rows.add(block)
    return rows.counts()


def matrix_counts(path: Path) -> list[Counts]:
    """Per-row counts of every matrix in an ``.npy``, ``.npz`` or numeric text file."""
    try:
        if head_bytes(path, len(_NPY)) == _NPY:
            with path.open("rb") as handle:
                return [_count(str(path), _blocks(handle, path.stat().st_size, str(path)))]
        if head_bytes(path, len(_ZIP)) == _ZIP:
            return [_count(label, _blocks(member, size, label)) for label, member, size in _npz_members(path)]
        line = _numeric_line(path)
        if line is not None:
            delimiter = _delimiter(line)
        else:
            delimiter = "\t" if path.suffix.lower() == ".tsv" else ","
        return [_count(str(path), _text_blocks(path, delimiter))]
    except zipfile.BadZipFile as exc:
        raise EvaluationError(f"{path}: cannot read an .npz file: {exc}") from exc


def read(path: Path, sink: TrialSink) -> None:
    """Add every matrix of the file to ``sink`` (items are row numbers)."""
    for label, graded, c, errored in matrix_counts(path):
        sink.add_matrix(label, graded, c, errored)
