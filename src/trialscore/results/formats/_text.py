"""Small helpers the format modules share to look at a file's first bytes and lines."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TextIO

from trialscore.errors import EvaluationError

__all__ = [
    "HEAD_BYTES",
    "first_json_object",
    "first_line",
    "head_bytes",
    "head_text",
    "is_blank",
    "json_array_items",
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


_DECODER = json.JSONDecoder()
_SPACE = re.compile(r"[ \t\r\n]*")
_NUMBER_TAIL = re.compile(r"[0-9.eE+-]*")


def json_array_items(path: Path, chunk: int = 1 << 20) -> Iterator[object]:
    """Every element of the JSON array that makes up ``path``, parsed one at a time.

    Only the element being parsed and a read-ahead buffer are held, not the whole document's
    objects (a 430 MB results file of 1M trials takes a fraction of the 3 GB one ``json.load``
    takes).  An element longer than the buffer grows it (doubling), so any size parses.

    Raises
    ------
    EvaluationError
        When the file is not one JSON array, naming the file and the element.

    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "a.json"
    >>> _ = path.write_text('[{"a": 1}, 2 , "x" ]')
    >>> list(json_array_items(path, chunk=4))
    [{'a': 1}, 2, 'x']
    """
    with path.open("r", encoding="utf-8-sig", errors="replace") as handle:
        text = _ArrayText(handle, chunk)
        if text.peek() != "[":
            raise EvaluationError(f"{path}: expected a JSON array; it starts {text.rest(20)!r}")
        text.position += 1
        if text.peek() == "]":
            text.position += 1
        else:
            index = 0
            while True:
                try:
                    yield text.value()
                except ValueError as exc:
                    reason = getattr(exc, "msg", exc)  # not the position: it is the buffer's, not the file's
                    raise EvaluationError(f"{path}: element {index + 1} is not valid JSON: {reason}") from exc
                index += 1
                separator = text.peek()
                text.position += 1
                if separator == "]":
                    break
                if separator != ",":
                    got = separator or "the end of the file"
                    raise EvaluationError(f"{path}: expected ',' or ']' after element {index}; got {got!r}")
        if text.peek():
            raise EvaluationError(f"{path}: text after the end of the JSON array: {text.rest(20)!r}")


class _ArrayText:
    """A text file read ahead in chunks, with a read position (see :func:`json_array_items`)."""

    def __init__(self, handle: TextIO, chunk: int) -> None:
        self.handle, self.chunk = handle, chunk
        self.buffer, self.position = "", 0

    def _more(self, size: int) -> bool:
        more = self.handle.read(size)
        self.buffer, self.position = self.buffer[self.position :] + more, 0
        return bool(more)

    def peek(self) -> str:
        """The next character that is not white space ('' at the end of the file)."""
        while True:
            self.position = _SPACE.match(self.buffer, self.position).end()  # type: ignore[union-attr]
            if self.position < len(self.buffer) or not self._more(self.chunk):
                return self.buffer[self.position : self.position + 1]

    def rest(self, length: int) -> str:
        """Up to ``length`` characters from the read position."""
        if len(self.buffer) - self.position < length:
            self._more(length)
        return self.buffer[self.position : self.position + length]

    def value(self) -> object:
        """The JSON value at the read position, reading on (in doubling steps) while it is cut off."""
        size = self.chunk
        self.peek()
        while True:
            start = self.position
            try:
                item, end = _DECODER.raw_decode(self.buffer, start)
            except ValueError:
                if not self._more(size):
                    raise
                size *= 2
                continue
            cut = isinstance(item, (int, float)) and _NUMBER_TAIL.fullmatch(self.buffer, end) is not None
            if cut:  # a number that reaches the buffer's end may go on ("1" then "2.5e3")
                more = self.handle.read(self.chunk)
                if more:
                    self.buffer, self.position = self.buffer[start:] + more, 0
                    continue
            self.position = end
            return item


def member_files(path: Path, pattern: str, belongs: Callable[[Path], bool]) -> list[Path]:
    """``[path]`` for a file; for a folder, its files matching ``pattern`` that ``belongs`` accepts,
    sorted by name (an unreadable folder has none)."""
    if not path.is_dir():
        return [path]
    try:
        return sorted(file for file in path.glob(pattern) if file.is_file() and belongs(file))
    except OSError:
        return []
