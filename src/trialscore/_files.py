"""Writing an output file all or nothing: a temporary file beside it, synced, then renamed over it.

A kill, a full disk or a file size limit part way through leaves the previous file (or none),
never an empty or cut one: the rename is the only step that changes what the name holds.

>>> import tempfile
>>> path = Path(tempfile.mkdtemp()) / "out.txt"
>>> write_atomic(path, ["a\\n", "b\\n"], "the example")
>>> path.read_text()
'a\\nb\\n'
>>> write_atomic(Path(tempfile.mkdtemp()) / "no" / "out.txt", ["x"], "the example")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
trialscore.errors.OutputError: ...out.txt': cannot write the example: No such file or directory
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path

from trialscore.errors import OutputError

__all__ = ["append_atomic", "write_atomic", "write_with"]


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_atomic(path: Path, parts: Iterable[str], what: str) -> None:
    """Write the text ``parts`` to ``path`` (UTF-8, ``\\n`` line ends) all or nothing.

    Raises
    ------
    OutputError
        When the file cannot be written (``what`` names it in the message, with the reason);
        ``path`` then holds what it held before.
    """

    def write(temporary: str) -> None:
        with open(temporary, "w", encoding="utf-8", newline="\n") as handle:
            handle.writelines(parts)
            handle.flush()
            os.fsync(handle.fileno())

    write_with(path, write, what)


def write_with(path: Path, write: Callable[[str], None], what: str) -> None:
    """Have ``write`` write the file at a temporary path beside ``path`` (another library's writer:
    DuckDB's ``COPY``), then rename it over ``path``: all or nothing, as :func:`write_atomic`.

    ``write`` may raise :class:`~trialscore.errors.OutputError` with its own reason; an ``OSError``
    becomes one naming ``what``.  Either way the temporary file is removed and ``path`` holds what
    it held before.
    """
    try:
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise OutputError(f"{str(path)!r}: cannot write {what}: {exc.strerror or exc}") from exc
    os.close(handle)
    try:
        write(temporary)
        os.chmod(temporary, 0o666 & ~_umask())  # as open() would have made it, not the temp file's 0600
        os.replace(temporary, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        if isinstance(exc, OSError):
            raise OutputError(f"{str(path)!r}: cannot write {what}: {exc.strerror or exc}") from exc
        raise


def append_atomic(path: Path, text: str, what: str) -> None:
    """Append ``text`` to ``path`` (created if missing) all or nothing: the file is rewritten whole
    with ``text`` at its end, so a full disk leaves it as it was.

    Raises
    ------
    OutputError
        When the file cannot be read or written.
    """
    try:
        before = path.read_text(encoding="utf-8") if path.exists() else ""
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else str(exc)
        raise OutputError(f"{str(path)!r}: cannot append {what}: {reason or exc}") from exc
    write_atomic(path, [before, text], what)
