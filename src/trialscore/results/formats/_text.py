"""Small helpers the format modules share to look at a file's first bytes and lines."""

from __future__ import annotations

import functools
import json
import os
import re
import sys
import zipfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TextIO

import numpy as np

from trialscore.errors import EvaluationError

__all__ = [
    "HEAD_BYTES",
    "MAX_DOCUMENT_BYTES",
    "MAX_LINE_BYTES",
    "MAX_ZIP_RATIO",
    "array_items",
    "check_nesting",
    "check_zip_member",
    "file_keys",
    "first_json_object",
    "first_line",
    "head_bytes",
    "head_keys",
    "head_text",
    "is_blank",
    "json_array_items",
    "json_lines",
    "lines",
    "load_json",
    "member_files",
    "member_items",
    "member_value",
    "nonblank_line_number",
    "parse_json",
    "tree_files",
]

#: How much of a file sniffing looks at.
HEAD_BYTES = 65536
#: The longest line a line-by-line reader takes (bytes); a longer one is an error, found without holding it.
MAX_LINE_BYTES = 80 * 2**20
#: The largest JSON document a reader parses whole (bytes): parsed, it takes several times its size.
MAX_DOCUMENT_BYTES = 48 * 2**20

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
        value = parse_json(first_line(text), "")
    except EvaluationError:
        return None
    return value if isinstance(value, dict) else None


def parse_json(text: str | bytes, where: str) -> object:
    """``json.loads(text)``; bad JSON, or JSON nested deeper than Python's parser goes, is an error
    naming ``where`` (the file, and the line or member).

    >>> parse_json('{"a": [1]}', "x.json")
    {'a': [1]}
    >>> parse_json("[" * 100_000, "x.json")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    trialscore.errors.EvaluationError: x.json: not valid JSON: nested too deeply ...
    """
    try:
        return json.loads(text)
    except RecursionError:
        raise EvaluationError(
            f"{where}: not valid JSON: nested too deeply (arrays or objects over about "
            f"{sys.getrecursionlimit()} levels deep)"
        ) from None
    except ValueError as exc:
        raise EvaluationError(f"{where}: not valid JSON: {exc}") from exc


def load_json(path: Path, limit: int = MAX_DOCUMENT_BYTES) -> object:
    """A whole JSON document, parsed; one over ``limit`` bytes is an error before it is read.

    Raises
    ------
    EvaluationError
        For a document over ``limit`` bytes, bad JSON, or JSON nested too deeply, naming the file.
    """
    size = path.stat().st_size
    if size > limit:
        raise EvaluationError(
            f"{path}: a JSON document of {size / 2**20:.0f} MiB is over the {limit // 2**20} MiB "
            "trialscore parses whole (parsed, it would take several times that memory)"
        )
    return parse_json(path.read_bytes().removeprefix(b"\xef\xbb\xbf"), str(path))


def file_keys(path: Path, size: int = HEAD_BYTES, depth: int = 2) -> frozenset[str]:
    """:func:`head_keys` of a file's first ``size`` bytes (empty for anything else: binary, not JSON)."""
    head = head_text(path, size)
    return (head_keys(head, depth) if head is not None else None) or frozenset()


#: The deepest nesting handed to another tool's JSON reader (its parser may overflow the C stack).
MAX_NESTING = 500
#: A JSON string, or one cut short by the end of the text: taken to the end, so that no quote inside
#: it (an escaped ``\"``) starts a new string to be scanned to the end again (quadratic in the text).
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*(?:"|\\?\Z)')


def check_nesting(data: bytes, where: str, limit: int = MAX_NESTING) -> None:
    """JSON text nested deeper than ``limit`` (arrays and objects) is an error naming ``where``.

    For text handed to a reader that would crash on it rather than say so.  Counted a block at a
    time with strings taken out, so it costs a few copies of one block, not of the text.

    >>> check_nesting(b'{"a": "[[[[", "b": [[1]]}', "x.json", limit=3)
    >>> check_nesting(b"[[[[]]]]", "x.json", limit=3)
    Traceback (most recent call last):
    ...
    trialscore.errors.EvaluationError: x.json: not valid JSON: nested too deeply (over 3 levels)
    """
    bare = _STRING.sub(b'""', data)
    depth = 0
    for start in range(0, len(bare), 2**22):
        codes = np.frombuffer(bare, dtype=np.uint8, count=min(2**22, len(bare) - start), offset=start)
        steps = np.zeros(codes.size, dtype=np.int32)
        steps[(codes == 0x5B) | (codes == 0x7B)] = 1
        steps[(codes == 0x5D) | (codes == 0x7D)] = -1
        running = np.cumsum(steps) + depth
        if running.size and int(running.max()) > limit:
            raise EvaluationError(f"{where}: not valid JSON: nested too deeply (over {limit} levels)")
        depth = int(running[-1]) if running.size else depth


_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*(?:"|\\?\Z)|[{}\[\]]')  # a string as _STRING, or a bracket
_COLON = re.compile(r"\s*:")


@functools.lru_cache(maxsize=8)  # every format's sniffer asks it of the same head: tokenised once
def head_keys(text: str, depth: int = 2) -> frozenset[str] | None:
    """The key paths of the JSON document that ``text`` begins, down to ``depth`` levels, or None
    when it does not begin a JSON object or array.

    A key inside an object is its name (``info.git_commit`` one level down); an array's
    elements are ``[]`` (``[].task_id``).  Only the text given is looked at, with no parse, so
    a document cut short, nested without end or with its keys in any order is answered in one
    pass: formats are recognised by the keys they have, never by their order.

    >>> sorted(head_keys('{"version": 2, "eval": {"task": "t", "x": [{"y": 1}]}, "sam'))
    ['eval', 'eval.task', 'eval.x', 'version']
    >>> sorted(head_keys('[{"task_id": 0, "reward": 1.0}, {"task_id'))
    ['[].reward', '[].task_id']
    >>> head_keys("case_id,passed") is None
    True
    """
    stripped = text.lstrip()
    if not stripped.startswith(("{", "[")):
        return None
    keys: set[str] = set()
    path: list[str] = []  # per open container: "[]" (an array) or the key being filled (an object)
    for match in _TOKEN.finditer(stripped):
        token = match.group()
        if token in ("{", "["):
            path.append("[]" if token == "[" else "")
        elif token in ("}", "]"):
            path.pop()
            if not path:
                break
        elif path and path[-1] != "[]" and _COLON.match(stripped, match.end()):
            path[-1] = token[1:-1].replace('\\"', '"')
            if len(path) <= depth:
                keys.add(".".join(path))
    return frozenset(keys)


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


def lines(path: Path, limit: int = MAX_LINE_BYTES) -> Iterator[tuple[int, bytes]]:
    """(line number, bytes) of every line of a file, a byte order mark removed; a line over
    ``limit`` bytes is an error naming it, found while reading at most ``limit`` bytes of it.

    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "t.jsonl"
    >>> _ = path.write_bytes(b"ab\\n" + b"x" * 40 + b"\\n")
    >>> [number for number, _ in lines(path, limit=10)]  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    trialscore.errors.EvaluationError: ...t.jsonl line 2: a line over 10 bytes ...
    """
    with path.open("rb") as handle:
        number = 0
        while True:
            line = handle.readline(limit + 1)
            if not line:
                return
            number += 1
            if len(line) > limit:
                raise EvaluationError(
                    f"{path} line {number}: a line over {_size(limit)} is longer than trialscore reads "
                    "(a log written one record a line never has one)"
                )
            yield number, line.removeprefix(b"\xef\xbb\xbf") if number == 1 else line


def _size(limit: int) -> str:
    return f"{limit // 2**20} MiB" if limit >= 2**20 else f"{limit} bytes"


def json_lines(path: Path) -> Iterator[tuple[int, object]]:
    """(line number, parsed value) of every non-blank line of a JSON Lines file.

    Raises
    ------
    EvaluationError
        For a line that is not JSON (or is too long, or nested too deeply), naming the file and the line.
    """
    for number, line in lines(path):
        if line.strip():
            yield number, parse_json(line.decode("utf-8", errors="replace"), f"{path} line {number}")


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
        yield from array_items(handle, str(path), chunk)


def array_items(handle: TextIO, label: str, chunk: int = 1 << 20) -> Iterator[object]:
    """Every element of the JSON array read from the text ``handle``, parsed one at a time (see
    :func:`json_array_items`); errors name ``label``.

    >>> import io
    >>> list(array_items(io.StringIO('[1, {"b": [2]}]'), "x"))
    [1, {'b': [2]}]
    """
    text = _ArrayText(handle, chunk)
    if text.peek() != "[":
        raise EvaluationError(f"{label}: expected a JSON array; it starts {text.rest(20)!r}")
    yield from _elements(text, label)
    text.end(label, "JSON array")


def member_items(handle: TextIO, label: str, keys: Sequence[str], chunk: int = 1 << 20) -> Iterator[object]:
    """Every element of the JSON array at ``keys`` in the object read from the text ``handle``, parsed
    one at a time: the whole document is never held, only the element being parsed and a read-ahead
    buffer (the other members are parsed one at a time and dropped).  Along ``keys``, the first value
    that is an array is the one read (``("results", "results")`` reads ``{"results": [...]}`` too).

    Raises
    ------
    EvaluationError
        When the document is not JSON, or a member along ``keys`` is missing or neither an object nor
        an array, naming ``label`` and the field (``field 'results.results'``).

    >>> import io
    >>> list(member_items(io.StringIO('{"id": 1, "results": {"v": 3, "results": [1, 2]}}'), "x",
    ...                   ("results", "results")))
    [1, 2]
    >>> list(member_items(io.StringIO('{"results": {"v": 3}}'), "x", ("results", "results")))
    Traceback (most recent call last):
    ...
    trialscore.errors.EvaluationError: x: field 'results.results' is missing
    """
    text = _ArrayText(handle, chunk)
    yield from _members(text, label, tuple(keys), 0)
    text.end(label, "JSON document")


def member_value(handle: TextIO, label: str, key: str, chunk: int = 1 << 20) -> object:
    """The value of the top-level member ``key`` of the JSON object read from the text ``handle``: the
    members before it are parsed one at a time and dropped, the text after it is not read.

    >>> import io
    >>> member_value(io.StringIO('{"timestamp": "t", "info": {"a": 1}, "simulations": [1, 2'), "x", "info")
    {'a': 1}

    Raises
    ------
    EvaluationError
        When the document is not a JSON object, is not valid JSON before ``key``, or has no ``key``.
    """
    text = _ArrayText(handle, chunk)
    for name in _keys(text, label, "the document"):
        value = _parsed(text, label, f"field {name!r}")
        if name == key:
            return value
    raise EvaluationError(f"{label}: field {key!r} is missing")


def _keys(text: _ArrayText, label: str, where: str) -> Iterator[str]:
    """The keys of the JSON object at the read position (``where`` it is, in messages), one at a time:
    after each, the read position is at its value, which the caller reads before the next key."""
    if text.peek() != "{":
        raise EvaluationError(f"{label}: {where} must be a JSON object; it starts {text.rest(20)!r}")
    text.position += 1
    first = True
    while text.peek() != "}":
        if not first:
            if text.peek() != ",":
                raise EvaluationError(f"{label}: expected ',' or '}}' in {where}; got {text.rest(20)!r}")
            text.position += 1
        first = False
        key = _parsed(text, label, where)
        if not isinstance(key, str) or text.peek() != ":":
            raise EvaluationError(f"{label}: {where} is not a valid JSON object near {text.rest(20)!r}")
        text.position += 1
        yield key
    text.position += 1


def _members(text: _ArrayText, label: str, keys: tuple[str, ...], depth: int) -> Iterator[object]:
    """The elements of the array at ``keys[depth:]`` in the object at the read position (see
    :func:`member_items`); the object is read to its end."""
    field = ".".join(keys[: depth + 1])
    found = False
    for key in _keys(text, label, f"field {'.'.join(keys[:depth])!r}" if depth else "the document"):
        if key != keys[depth] or found:
            _parsed(text, label, f"field {'.'.join((*keys[:depth], key))!r}")
            continue
        found, start = True, text.peek()
        if start == "[":
            yield from _elements(text, f"{label} field {field!r}")
        elif start == "{" and depth + 1 < len(keys):
            yield from _members(text, label, keys, depth + 1)
        elif depth + 1 < len(keys):
            raise EvaluationError(
                f"{label}: field {field!r} must be a list, or an object holding {keys[depth + 1]!r}; "
                f"it starts {text.rest(20)!r}"
            )
        else:
            raise EvaluationError(f"{label}: field {field!r} must be a list; it starts {text.rest(20)!r}")
    if not found:
        raise EvaluationError(f"{label}: field {field!r} is missing")


def _parsed(text: _ArrayText, label: str, where: str) -> object:
    """The JSON value at the read position; bad JSON is an error naming ``where``."""
    try:
        return text.value()
    except _TooLong as exc:
        raise EvaluationError(f"{label}: {where}: {exc}") from None
    except ValueError as exc:
        reason = getattr(exc, "msg", exc)
        raise EvaluationError(f"{label}: {where} is not valid JSON: {reason}") from exc


def _elements(text: _ArrayText, label: str) -> Iterator[object]:
    """The elements of the array at the read position (its ``[``), one at a time."""
    text.position += 1
    if text.peek() == "]":
        text.position += 1
        return
    index = 0
    while True:
        try:
            yield text.value()
        except _TooLong as exc:
            raise EvaluationError(f"{label}: element {index + 1}: {exc}") from None
        except ValueError as exc:
            reason = getattr(exc, "msg", exc)  # not the position: it is the buffer's, not the file's
            raise EvaluationError(f"{label}: element {index + 1} is not valid JSON: {reason}") from exc
        index += 1
        separator = text.peek()
        text.position += 1
        if separator == "]":
            return
        if separator != ",":
            got = separator or "the end of the file"
            raise EvaluationError(f"{label}: expected ',' or ']' after element {index}; got {got!r}")


class _TooLong(ValueError):
    """A JSON array element longer than :data:`MAX_LINE_BYTES`."""


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

    def end(self, label: str, what: str) -> None:
        """Nothing but white space may follow the document (``what`` it is, in the message)."""
        if self.peek():
            raise EvaluationError(f"{label}: text after the end of the {what}: {self.rest(20)!r}")

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
            except RecursionError:
                raise ValueError(
                    "nested too deeply (arrays or objects over about 1000 levels deep)"
                ) from None
            except ValueError:
                if len(self.buffer) - start > MAX_LINE_BYTES:
                    raise _TooLong(
                        f"an element over {_size(MAX_LINE_BYTES)} is longer than trialscore reads"
                    ) from None
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


#: The most a zip member may inflate by, over its compressed size: deflate cannot pass about 1032,
#: so a larger ratio is a crafted file (a zip bomb).
MAX_ZIP_RATIO = 1100


def check_zip_member(path: Path, info: zipfile.ZipInfo, limit: int) -> None:
    """A zip member that would inflate past ``limit`` bytes, or by over :data:`MAX_ZIP_RATIO` times its
    compressed size, is an error naming the file and the member, before a byte of it is inflated.

    The size checked is the one the archive declares: Python's ``zipfile`` never inflates a
    member past it (it stops there and checks the CRC).

    >>> info = zipfile.ZipInfo("header.json"); info.file_size, info.compress_size = 2**31, 2**21
    >>> check_zip_member(Path("log.eval"), info, 2**25)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    trialscore.errors.EvaluationError: log.eval member 'header.json': inflates to 2048 MiB (1024 times ...
    """
    ratio = info.file_size / max(info.compress_size, 1)
    if info.file_size > limit or ratio > MAX_ZIP_RATIO:
        raise EvaluationError(
            f"{path} member {info.filename!r}: inflates to {info.file_size / 2**20:.0f} MiB ({ratio:.0f} "
            f"times its compressed size); trialscore inflates a member to at most {limit // 2**20} MiB "
            f"and {MAX_ZIP_RATIO} times (a zip bomb is refused)"
        )


#: How many folders deep a format looks for its files below the folder it is given.
TREE_DEPTH = 6


def tree_files(folder: Path, accept: Callable[[Path], bool], depth: int = TREE_DEPTH) -> list[Path]:
    """The files ``accept`` takes in ``folder`` and the folders below it (at most ``depth`` levels
    down, symbolic links to folders not followed), in path order; an unreadable folder has none."""
    found: list[Path] = []
    base = len(folder.parts)
    for root, folders, files in os.walk(folder):
        here = Path(root)
        folders[:] = sorted(folders) if len(here.parts) - base < depth else []
        found += [here / name for name in sorted(files) if accept(here / name)]
    return found


def member_files(path: Path, pattern: str, belongs: Callable[[Path], bool]) -> list[Path]:
    """``[path]`` for a file; for a folder, its files matching ``pattern`` that ``belongs`` accepts,
    sorted by name (an unreadable folder has none)."""
    if not path.is_dir():
        return [path]
    try:
        return sorted(file for file in path.glob(pattern) if file.is_file() and belongs(file))
    except OSError:
        return []
