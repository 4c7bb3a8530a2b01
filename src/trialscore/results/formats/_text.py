"""Small helpers the format modules share to look at a file's first bytes and lines."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path

from trialscore.errors import EvaluationError

__all__ = [
    "HEAD_BYTES",
    "first_json_object",
    "first_line",
    "head_bytes",
    "head_text",
    "is_blank",
    "json_lines",
    "member_files",
    "nonblank_line_number",
]

#: How much of a file sniffing looks at.
HEAD_BYTES = 65536

_BOM = "\ufeff"


def head_bytes(path: Path, size: int = HEAD_BYTES) -> bytes:
    """The first ``size`` bytes of a file (b"" for a folder or an unreadable file)."""
    if not path.is_file():
        return b""
    try:
        with path.open("rb") as handle:
            return handle.read(size)
    except OSError:
        return b""


def head_text(path: Path, size: int = HEAD_BYTES) -> str | None:
    """The first ``size`` bytes as text (bad UTF-8 replaced), without a byte order mark; None for
    binary content (a NUL byte)."""
    raw = head_bytes(path, size)
    if b"\x00" in raw:
        return None
    return raw.decode("utf-8", errors="replace").removeprefix(_BOM)


def first_line(text: str) -> str:
    """The first line of ``text`` that is not blank, stripped ("" when there is none).

    >>> first_line("\\n  \\n{\\"a\\": 1}\\n")
    '{"a": 1}'
    """
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return ""


def first_json_object(text: str) -> dict[str, object] | None:
    """The first non-blank line parsed as a JSON object, or None.

    >>> first_json_object('{"eval_id": "c1"}\\n'), first_json_object("[1]")
    ({'eval_id': 'c1'}, None)
    """
    try:
        value = json.loads(first_line(text))
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


_BLANK = re.compile(rb"[\s]*")


def is_blank(path: Path) -> bool:
    """Whether a file holds nothing but white space (and perhaps a byte order mark)."""
    with path.open("rb") as handle:
        chunk = handle.read(HEAD_BYTES).removeprefix(b"\xef\xbb\xbf")
        while chunk:
            if not _BLANK.fullmatch(chunk):
                return False
            chunk = handle.read(2**20)
    return True


def nonblank_line_number(path: Path, index: int) -> int:
    """1-based line number of the ``index``-th (0-based) non-blank line (-1 past the end)."""
    with path.open("rb") as handle:
        seen = -1
        for number, line in enumerate(handle, start=1):
            if line.strip():
                seen += 1
                if seen == index:
                    return number
    return -1


def json_lines(path: Path) -> Iterator[tuple[int, object]]:
    """(line number, parsed value) of every non-blank line of a JSON Lines file.

    Raises
    ------
    EvaluationError
        For a line that is not JSON, naming the file and the line.
    """
    with path.open("r", encoding="utf-8-sig", errors="replace") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                yield number, json.loads(line)
            except ValueError as exc:
                raise EvaluationError(f"{path} line {number}: not valid JSON: {exc}") from exc


def member_files(path: Path, pattern: str, belongs: Callable[[Path], bool]) -> list[Path]:
    """``[path]`` for a file; for a folder, its files matching ``pattern`` that ``belongs`` accepts,
    sorted by name (an unreadable folder has none)."""
    if not path.is_dir():
        return [path]
    try:
        return sorted(file for file in path.glob(pattern) if file.is_file() and belongs(file))
    except OSError:
        return []
