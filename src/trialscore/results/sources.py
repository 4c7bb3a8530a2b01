"""Where trials are kept at scale: Parquet datasets (folders, globs, hive layouts) and object storage.

A :class:`ParquetFiles` is one or more Parquet files read as one table: a folder (every
``.parquet`` / ``.pq`` file below it), a glob (``runs/*/trials.parquet``), or a hive-partitioned
layout (``run=*/model=*/*.parquet``: each ``key=value`` folder becomes a column ``key``).  Local
files are scanned by DuckDB itself; only the columns a reading needs are read (Parquet keeps each
column apart), and :meth:`ParquetFiles.bytes_needed` says how many bytes of column chunks that is.

A URL (``s3://bucket/prefix/``, ``gs://...``) is read through PyArrow's file systems, which ship
inside the ``pyarrow`` wheel and work offline (no extension is downloaded at run time): S3 takes
the standard settings from the environment (``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``,
``AWS_PROFILE``, ``AWS_ENDPOINT_URL``, ``AWS_DEFAULT_REGION``).  Other schemes (``hf://``,
``https://``...) go through fsspec when it is installed (the ``remote`` extra).  A remote Parquet
dataset is scanned in place, fetching only the needed column chunks (the bytes fetched are
counted, :attr:`ParquetFiles.fetched`); any other remote file is copied whole to a temporary
folder and read as a local file.

>>> is_url("s3://bucket/runs/"), is_url("runs/a.parquet"), has_glob("run=*/x.parquet")
(True, False, True)
>>> url_of("s3:/bucket/runs")  # a URL that went through pathlib.Path
's3://bucket/runs'
"""

from __future__ import annotations

import glob as globbing
import re
import shutil
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from trialscore.errors import EvaluationError
from trialscore.results.tally import quote_literal

if TYPE_CHECKING:
    import duckdb

__all__ = [
    "PARQUET_SUFFIXES",
    "ParquetFiles",
    "download",
    "has_glob",
    "hive_keys",
    "is_url",
    "local_files",
    "remote_files",
    "url_of",
]

#: The suffixes of a Parquet file in a folder, a glob or a bucket prefix.
PARQUET_SUFFIXES = (".parquet", ".pq")
_URL = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*)://")
_MANGLED = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]+):/(?!/)")
_HIVE = re.compile(r"(^|/)[^/=]+=[^/]*/")
_KEY = re.compile(r"(?<![^/])([^/=]+)=[^/]*(?=/)")


def hive_keys(path: str) -> list[str]:
    """The keys of the ``key=value`` folders in ``path``, in order, each once.

    >>> hive_keys("runs/run=a/model=m1/run=a/part.parquet")
    ['run', 'model']
    """
    return list(dict.fromkeys(match[1] for match in _KEY.finditer(path)))


def is_url(text: str | Path) -> bool:
    """Whether ``text`` is a URL (``scheme://...``) rather than a local path."""
    return isinstance(text, str) and _URL.match(text) is not None


def url_of(text: str) -> str:
    """``text`` with its scheme's second slash put back (``pathlib.Path`` folds ``s3://`` into ``s3:/``)."""
    return _MANGLED.sub(lambda match: f"{match.group(1)}://", text, count=1)


def has_glob(text: str | Path) -> bool:
    """Whether ``text`` holds a glob wildcard (``*``, ``?`` or ``[``)."""
    return any(char in str(text) for char in "*?[")


def _is_parquet_name(name: str) -> bool:
    return name.lower().endswith(PARQUET_SUFFIXES)


@dataclass
class ParquetFiles:
    """Parquet files read as one table, named ``label`` in messages.

    ``paths`` are local paths, or paths on ``filesystem`` (a PyArrow file system) for a remote
    dataset; ``hive`` says that ``key=value`` folders become columns.
    """

    label: str
    paths: list[str]
    filesystem: Any = None
    hive: bool = False
    fetched: list[int] = field(default_factory=lambda: [0])
    _dataset: Any = None
    _uniform: bool | None = None
    _chunks: dict[str, tuple[int, bool]] | None = None

    @property
    def remote(self) -> bool:
        """Whether the files are read through a remote file system."""
        return self.filesystem is not None

    def relation(self, con: duckdb.DuckDBPyConnection, name: str) -> str:
        """A SQL relation over every file (a view ``name`` registered on ``con`` for a remote dataset).

        Files whose columns differ are matched by column name; files of one schema (the usual
        dataset) are read without that matching, which costs DuckDB about a sixth of a scan."""
        if not self.remote:
            files = "[" + ", ".join(quote_literal(path) for path in self.paths) + "]"
            hive = "true" if self.hive else "false"
            by_name = "false" if self._one_schema(con) else "true"
            return f"read_parquet({files}, union_by_name={by_name}, hive_partitioning={hive})"
        con.register(name, self.dataset())
        return name

    def _one_schema(self, con: duckdb.DuckDBPyConnection) -> bool:
        """Whether every local file has the same columns, in the same order, of the same types (read
        from the files' footers)."""
        if self._uniform is None:
            if len(self.paths) == 1:
                self._uniform = True
            else:
                files = "[" + ", ".join(quote_literal(path) for path in self.paths) + "]"
                rows = con.execute(
                    f"SELECT file_name, name, duckdb_type FROM parquet_schema({files})"
                ).fetchall()
                schemas: dict[str, list[tuple[str, str]]] = {}
                for file, column, kind in rows:
                    schemas.setdefault(file, []).append((column, kind))
                self._uniform = len({tuple(schema) for schema in schemas.values()}) <= 1
        return self._uniform

    def dataset(self) -> Any:
        """The remote files as a PyArrow dataset (columns are fetched only when scanned)."""
        if self._dataset is None:
            import pyarrow.dataset as ds

            counting = _counting(self.filesystem, self.fetched)
            self._dataset = ds.dataset(
                self.paths, filesystem=counting, format="parquet", partitioning="hive" if self.hive else None
            )
        return self._dataset

    def columns(self, con: duckdb.DuckDBPyConnection) -> list[str]:
        """The table's column names (the first file's, and the hive keys)."""
        if self.remote:
            return list(self.dataset().schema.names)
        relation = self.relation(con, "")
        return [row[0] for row in con.execute(f"DESCRIBE SELECT * FROM {relation}").fetchall()]

    def metadata(self, con: duckdb.DuckDBPyConnection, key: str) -> list[bytes]:
        """The value of the Parquet key-value metadata ``key`` in each file that has it."""
        if self.remote:
            values = []
            for fragment in self.dataset().get_fragments():
                found = (fragment.metadata.metadata or {}).get(key.encode())
                if found is not None:
                    values.append(found)
            return values
        files = "[" + ", ".join(quote_literal(path) for path in self.paths) + "]"
        rows = con.execute(
            f"SELECT value FROM parquet_kv_metadata({files}) WHERE key = {quote_literal(key)}"
        ).fetchall()
        return [bytes(row[0]) for row in rows]

    def bytes_needed(self, con: duckdb.DuckDBPyConnection, columns: Sequence[str]) -> int:
        """Bytes of the column chunks of ``columns`` in every file (what a scan of them reads);
        for a remote dataset, the bytes fetched so far."""
        if self.remote:
            return self.fetched[0]
        chunks = self._column_chunks(con)
        return sum(chunks[name][0] for name in set(columns) if name in chunks)

    def never_null(self, con: duckdb.DuckDBPyConnection) -> frozenset[str]:
        """The columns whose Parquet statistics show no null in any row group of any local file.

        A column some file lacks (read by name as nulls there), one without statistics, or a hive
        key is not among them; a remote dataset names none.  A scan may then skip testing these
        columns for null: the engine trusts the same statistics to skip row groups.
        """
        if self.remote:
            return frozenset()
        keys = {key for path in self.paths for key in hive_keys(path)} if self.hive else set()
        return frozenset(name for name, (_, free) in self._column_chunks(con).items() if free) - keys

    def _column_chunks(self, con: duckdb.DuckDBPyConnection) -> dict[str, tuple[int, bool]]:
        """Per column path of the local files' footers (read once): the bytes of its column chunks, and
        whether every row group of every file has it with statistics showing no null."""
        if self._chunks is None:
            files = "[" + ", ".join(quote_literal(path) for path in self.paths) + "]"
            rows = con.execute(
                f"WITH chunks AS (SELECT * FROM parquet_metadata({files})) "
                "SELECT path_in_schema, coalesce(sum(total_compressed_size), 0), "
                "count(*) = (SELECT count(DISTINCT (file_name, row_group_id)) FROM chunks) "
                "AND bool_and(coalesce(stats_null_count = 0, false)) "
                "FROM chunks GROUP BY path_in_schema"
            ).fetchall()
            self._chunks = {str(path): (int(size), bool(free)) for path, size, free in rows}
        return self._chunks

    def locate(self, con: duckdb.DuckDBPyConnection) -> Callable[[int], str]:
        """Name the 0-based row ``index`` of the table by its file and row (a single file: its row)."""
        if len(self.paths) == 1:
            return lambda index: f"row {index + 1}"

        def locate(index: int) -> str:
            sizes = self._rows(con)
            for path, rows in zip(self.paths, sizes, strict=True):
                if index < rows:
                    return f"file {path} row {index + 1}"
                index -= rows
            return f"row {index + 1}"  # pragma: no cover - past the last file

        return locate

    def _rows(self, con: duckdb.DuckDBPyConnection) -> list[int]:
        if self.remote:
            return [fragment.metadata.num_rows for fragment in self.dataset().get_fragments()]
        files = "[" + ", ".join(quote_literal(path) for path in self.paths) + "]"
        found = dict(
            con.execute(f"SELECT file_name, num_rows FROM parquet_file_metadata({files})").fetchall()
        )
        return [int(found[path]) for path in self.paths]


def local_files(label: str, paths: Sequence[Path]) -> ParquetFiles:
    """Local Parquet files read as one table (hive columns when their folders are ``key=value``)."""
    texts = [str(path) for path in paths]
    return ParquetFiles(label, texts, hive=any(_HIVE.search(text) for text in texts))


def _filesystem(url: str) -> tuple[Any, str]:
    """The PyArrow file system of ``url`` and the path on it (fsspec for a scheme PyArrow lacks)."""
    import pyarrow.fs as pafs

    try:
        found: tuple[Any, str] = pafs.FileSystem.from_uri(url)
        return found
    except ValueError as exc:  # pyarrow.lib.ArrowInvalid: a scheme PyArrow has no file system for
        scheme = url.split("://", 1)[0]
        try:
            import fsspec
        except ImportError:
            raise EvaluationError(
                f"{url}: PyArrow reads no {scheme}:// URL ({exc}); other schemes need the remote extra: "
                "pip install 'trialscore[remote]'"
            ) from exc
        try:
            fs, path = fsspec.core.url_to_fs(url)
        except (ImportError, ValueError) as inner:
            raise EvaluationError(f"{url}: cannot open: {inner}") from inner
        return pafs.PyFileSystem(pafs.FSSpecHandler(fs)), path
    except OSError as exc:
        raise EvaluationError(f"{url}: cannot open: {exc}") from exc


def remote_files(url: str) -> tuple[ParquetFiles | None, Any, list[str]]:
    """What ``url`` names: its Parquet files as one dataset (a file, a prefix or a glob of them), or
    else the file system and the one file to copy (None, filesystem, [path]).

    Raises
    ------
    EvaluationError
        When the URL names nothing, or cannot be listed (naming the URL and the reason).
    """
    import pyarrow.fs as pafs

    filesystem, path = _filesystem(url)
    try:
        if has_glob(path):
            base = re.split(r"[*?\[]", path, maxsplit=1)[0].rsplit("/", 1)[0]
            infos = filesystem.get_file_info(pafs.FileSelector(base, recursive=True))
            files = sorted(
                info.path for info in infos if info.is_file and PurePosixPath(info.path).match(path)
            )
        else:
            info = filesystem.get_file_info(path)
            if info.type == pafs.FileType.NotFound:
                raise EvaluationError(f"{url}: no such file or prefix")
            if info.is_file:
                if _is_parquet_name(path) or _magic(filesystem, path):
                    return ParquetFiles(url, [path], filesystem, bool(_HIVE.search(path))), filesystem, [path]
                return None, filesystem, [path]
            infos = filesystem.get_file_info(pafs.FileSelector(path.rstrip("/"), recursive=True))
            files = sorted(info.path for info in infos if info.is_file)
    except OSError as exc:
        raise EvaluationError(f"{url}: cannot list: {exc}") from exc
    parquet = [name for name in files if _is_parquet_name(name)]
    if not parquet:
        shown = f"it holds {len(files)} files, none .parquet" if files else "it matches no file"
        raise EvaluationError(
            f"{url}: no Parquet file to read ({shown}); name one file to read another format"
        )
    return (
        ParquetFiles(url, parquet, filesystem, any(_HIVE.search(name) for name in parquet)),
        filesystem,
        parquet,
    )


def _magic(filesystem: Any, path: str) -> bool:
    with filesystem.open_input_file(path) as handle:
        return bool(handle.read(4) == b"PAR1")


def download(url: str, filesystem: Any, path: str, folder: Path) -> Path:
    """Copy the remote file to ``folder`` (same name); return the copy."""
    copy = folder / PurePosixPath(path).name
    try:
        with filesystem.open_input_stream(path) as source, copy.open("wb") as out:
            shutil.copyfileobj(source, out, 2**20)
    except OSError as exc:
        raise EvaluationError(f"{url}: cannot read: {exc}") from exc
    return copy


def glob_paths(pattern: str) -> list[Path]:
    """The local paths a glob pattern matches (``**`` crosses folders), sorted; none is an error."""
    matches = sorted(Path(found) for found in globbing.glob(pattern, recursive=True))
    if not matches:
        raise EvaluationError(f"{pattern}: no file or folder matches this pattern")
    return matches


def _counting(filesystem: Any, fetched: list[int]) -> Any:
    """``filesystem`` whose opened files add every byte they return to ``fetched[0]``."""
    import pyarrow as pa
    import pyarrow.fs as pafs

    lock = threading.Lock()

    class Counted:
        """A file-like object over a PyArrow input file that counts what it reads."""

        def __init__(self, handle: Any) -> None:
            self.handle = handle
            self.closed = False

        def _add(self, size: int) -> None:
            with lock:
                fetched[0] += size

        def read(self, size: int = -1) -> bytes:
            data = self.handle.read() if size is None or size < 0 else self.handle.read(size)
            self._add(len(data))
            return bytes(data)

        def seek(self, offset: int, whence: int = 0) -> int:
            return int(self.handle.seek(offset, whence))

        def tell(self) -> int:
            return int(self.handle.tell())

        def size(self) -> int:
            return int(self.handle.size())

        def readable(self) -> bool:
            return True

        def seekable(self) -> bool:
            return True

        def writable(self) -> bool:
            return False

        def close(self) -> None:
            self.closed = True
            self.handle.close()

    class Handler(pafs.FileSystemHandler):  # type: ignore[misc]
        """Delegates every call to ``filesystem``; input files count their bytes."""

        def __eq__(self, other: object) -> bool:
            return self is other

        def __ne__(self, other: object) -> bool:
            return self is not other

        def get_type_name(self) -> str:
            return f"counting+{filesystem.type_name}"

        def normalize_path(self, path: str) -> str:
            return str(filesystem.normalize_path(path))

        def get_file_info(self, paths: list[str]) -> list[Any]:
            return list(filesystem.get_file_info(paths))

        def get_file_info_selector(self, selector: Any) -> list[Any]:
            return list(filesystem.get_file_info(selector))

        def open_input_file(self, path: str) -> Any:
            return pa.PythonFile(Counted(filesystem.open_input_file(path)), mode="r")

        def open_input_stream(self, path: str) -> Any:
            return pa.PythonFile(Counted(filesystem.open_input_file(path)), mode="r")

        def create_dir(self, path: str, recursive: bool) -> None:  # pragma: no cover - read only
            raise OSError("read only")

        delete_dir = delete_dir_contents = delete_root_dir_contents = delete_file = create_dir
        move = copy_file = open_output_stream = open_append_stream = create_dir

    return pafs.PyFileSystem(Handler())
