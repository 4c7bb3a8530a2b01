"""Every input format trialscore reads, one module each, behind one registry and dispatcher.

A format is a module with ``NAME``, ``SUMMARY``, ``MAPS``, ``SUFFIXES``,
``sniff(path) -> bool`` and ``read(path, sink) -> None`` (the
:class:`~trialscore.results.formats.base.Format` protocol).  :data:`FORMATS`
lists them in detection order: an input is read by the first format whose
``sniff`` recognises its content (first bytes, first JSON keys, a folder's
files), or by the one named with ``input_format=`` (the CLI's ``--from``).
Adding a format is adding its module and one line to :data:`FORMATS`.

Every input that is read must hold trials: an empty file, a CSV with only a
header, or a file whose every row was skipped as invalid is an error naming it.

>>> [info.name for info in list_formats()]
['runner', 'inspect', 'counts', 'parquet', 'wide', 'cases', 'promptfoo', 'lm-eval',
 'tau-bench', 'tau2-bench', 'openai-evals', 'deepeval', 'helm', 'swe-bench',
 'harbor', 'json-array', 'jsonl', 'csv']
>>> import tempfile, pathlib
>>> path = pathlib.Path(tempfile.mkdtemp()) / "trials.txt"
>>> _ = path.write_text('{"case_id": "a", "trial": 0, "passed": true}\\n')
>>> detect_format(path).NAME
'jsonl'
>>> get_format("xlsx")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
trialscore.errors.EvaluationError: unknown input format 'xlsx'; the formats are runner, inspect, ...
"""

from __future__ import annotations

import difflib
import stat
from pathlib import Path
from typing import TYPE_CHECKING

from trialscore.errors import EvaluationError, parameter
from trialscore.results import sources
from trialscore.results.formats import (
    cases,
    counts,
    deepeval,
    harbor,
    helm,
    inspect_log,
    json_array,
    jsonl,
    lm_eval,
    long_csv,
    openai_evals,
    parquet,
    promptfoo,
    run_folder,
    swe_bench,
    tau2_bench,
    tau_bench,
    wide,
)
from trialscore.results.formats._text import is_blank, tree_files
from trialscore.results.formats.base import Format, FormatInfo
from trialscore.results.progress import watching

if TYPE_CHECKING:
    from trialscore.results.counts import ReadStats
    from trialscore.results.sink import TrialSink

__all__ = [
    "ALIASES",
    "FORMATS",
    "Format",
    "FormatInfo",
    "detect_format",
    "get_format",
    "list_formats",
    "read_input",
    "register_format",
]

#: Every format by name, in detection order (the first whose ``sniff`` says yes reads the input).
FORMATS: dict[str, Format] = {
    run_folder.NAME: run_folder,
    inspect_log.NAME: inspect_log,
    counts.NAME: counts,
    parquet.NAME: parquet,
    wide.NAME: wide,
    cases.NAME: cases,
    promptfoo.NAME: promptfoo,
    lm_eval.NAME: lm_eval,
    tau_bench.NAME: tau_bench,
    tau2_bench.NAME: tau2_bench,
    openai_evals.NAME: openai_evals,
    deepeval.NAME: deepeval,
    helm.NAME: helm,
    swe_bench.NAME: swe_bench,
    harbor.NAME: harbor,
    json_array.NAME: json_array,
    jsonl.NAME: jsonl,
    long_csv.NAME: long_csv,
}


#: The formats that read any long table: tried last, after every tool's own format.
_GENERIC = (json_array.NAME, jsonl.NAME, long_csv.NAME)


def register_format(module: Format) -> Format:
    """Add a format (a module or object with the :class:`Format` attributes) to :data:`FORMATS`.

    It is tried after the built-in tool formats and before the generic long tables (JSON array,
    JSON Lines, CSV), so its ``sniff`` sees an input before a generic format takes it; its
    ``NAME`` must be new.  An installed package registers one by naming the module in the
    entry-point group ``trialscore.formats`` (docs/extending.md).

    >>> from types import SimpleNamespace
    >>> fmt = SimpleNamespace(NAME="tsv-lite", SUMMARY="s", MAPS="m", SUFFIXES=(".tsvl",),
    ...                       sniff=lambda path: False, read=lambda path, sink: None)
    >>> _ = register_format(fmt)
    >>> list(FORMATS)[-4:]
    ['tsv-lite', 'json-array', 'jsonl', 'csv']
    >>> del FORMATS["tsv-lite"]
    """
    missing = [
        name for name in ("NAME", "SUMMARY", "MAPS", "SUFFIXES", "sniff", "read") if not hasattr(module, name)
    ]
    if missing:
        raise EvaluationError(f"a format needs {', '.join(missing)}; {module!r} has none of them")
    if module.NAME in FORMATS:
        raise EvaluationError(f"format {module.NAME!r} is registered already")
    generic = {name: FORMATS.pop(name) for name in _GENERIC}
    FORMATS[module.NAME] = module
    FORMATS.update(generic)
    return module


_plugins_loaded = False


def _load_plugins() -> None:
    """Register the formats installed packages name (entry-point group ``trialscore.formats``), once.

    Loaded when first needed (a generic table is about to be tried, a name is not known, the list
    is asked for), so reading a tool's own log never scans the installed packages.
    """
    global _plugins_loaded
    if not _plugins_loaded:
        from trialscore._plugins import load_entry_points

        _plugins_loaded = True
        load_entry_points("trialscore.formats")


def list_formats() -> list[FormatInfo]:
    """Name, one-line summary, what maps to item / trial / outcome / groups, and usual suffixes of
    every format, in detection order."""
    _load_plugins()
    return [FormatInfo(fmt.NAME, fmt.SUMMARY, fmt.MAPS, fmt.SUFFIXES) for fmt in FORMATS.values()]


#: Other names of a format: each tool's own name and spellings (after :func:`_normal`).
ALIASES: dict[str, str] = {
    "trialscore": run_folder.NAME,
    "inspect-ai": inspect_log.NAME,
    "lm-evaluation-harness": lm_eval.NAME,
    "lm-eval-harness": lm_eval.NAME,
    "evals": openai_evals.NAME,
    "oaieval": openai_evals.NAME,
    "tau": tau_bench.NAME,
    "tau2": tau2_bench.NAME,
    "crfm-helm": helm.NAME,
    "swebench": swe_bench.NAME,
    "terminal-bench": harbor.NAME,
    "ndjson": jsonl.NAME,
    "tsv": long_csv.NAME,
    "npy": wide.NAME,
    "npz": wide.NAME,
    "seed-003": cases.NAME,
}


def _normal(name: str) -> str:
    """A format name as looked up: lower case, ``_`` and spaces as ``-``."""
    return "-".join(name.strip().lower().replace("_", "-").split())


def get_format(name: str) -> Format:
    """The format called ``name``, or by one of its :data:`ALIASES` (a tool's own name: ``inspect_ai``,
    ``lm_eval``, ``tau2``...); an unknown name is an error listing the formats, with the nearest.

    >>> get_format("inspect_ai").NAME, get_format("LM_Eval").NAME
    ('inspect', 'lm-eval')
    >>> get_format("promptfo")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    trialscore.errors.EvaluationError: unknown input format 'promptfo' (did you mean 'promptfoo'?); ...
    """
    wanted = _normal(name)
    found = FORMATS.get(wanted) or FORMATS.get(ALIASES.get(wanted, ""))
    if found is None:
        _load_plugins()
        found = FORMATS.get(wanted)
    if found is not None:
        return found
    names = {**{known: known for known in FORMATS}, **ALIASES}
    near = difflib.get_close_matches(wanted, list(names), n=1, cutoff=0.6)
    hint = f" (did you mean {names[near[0]]!r}?)" if near else ""
    raise EvaluationError(f"unknown input format {name!r}{hint}; the formats are {', '.join(FORMATS)}")


#: What a path that is neither a file nor a folder is, by its ``stat`` mode test.
_SPECIAL = (
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def _check_readable(path: Path) -> None:
    """A missing path, or one that is not a regular file or a folder (a FIFO, ``/dev/zero``...), is an
    error saying what it is, before anything opens it (opening a FIFO waits for a writer)."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise EvaluationError(f"{path}: no such file or folder") from None
    except OSError as exc:
        raise EvaluationError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return
    what = next((name for test, name in _SPECIAL if test(mode)), "not a regular file")
    raise EvaluationError(
        f"{path}: is {what}, not a file or folder of trials; save the log to a file and read that"
    )


def _known_suffixes() -> set[str]:
    return {suffix for fmt in FORMATS.values() for suffix in fmt.SUFFIXES}


def _recognises(fmt: Format, path: Path) -> bool:
    """``fmt.sniff(path)``; a file or folder it cannot read (``OSError``) is not its format."""
    try:
        return fmt.sniff(path)
    except OSError:
        return False


def detect_format(path: Path) -> Format:
    """The first format of :data:`FORMATS` that recognises ``path``'s content.

    Raises
    ------
    EvaluationError
        For a missing path, an empty file, or content no format recognises.
    """
    _check_readable(path)
    try:
        if path.is_file():
            path.open("rb").close()
        else:
            next(path.iterdir(), None)
    except OSError as exc:
        raise EvaluationError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    for fmt in list(FORMATS.values()):
        if fmt.NAME in _GENERIC and not _plugins_loaded:
            _load_plugins()  # the plugins' formats come before the generic tables
            return detect_format(path)
        if _recognises(fmt, path):
            return fmt
    if path.is_dir():
        raise EvaluationError(
            f"{path}: no format recognises this folder (a runner output folder with {run_folder.TRIALS}, "
            "or another tool's output folder: `trialscore formats` lists them); name a file in it instead"
        )
    suffix = path.suffix.lower()
    known = suffix in _known_suffixes()
    if (known or not suffix) and is_blank(path):
        raise EvaluationError(f"no trials in {path}: the file is empty")
    listing = "; ".join(f"{fmt.NAME} ({fmt.SUMMARY})" for fmt in FORMATS.values())
    if not known:
        raise EvaluationError(f"{path}: unknown file type {suffix!r}; its content is none of: {listing}")
    raise EvaluationError(f"{path}: its content is none of the formats trialscore reads: {listing}")


def read_input(path: Path | str, sink: TrialSink, input_format: str | None = None) -> Format:
    """Read one file or folder into ``sink`` (format by name, else detected); return the format used.

    ``path`` may also be a URL (``s3://bucket/prefix/``) or a glob (``runs/*/trials.parquet``,
    ``run=*/model=*/*.parquet``): Parquet files it names are read as one table (a counts table, or
    trial rows), any other file one by one (see :mod:`trialscore.results.sources`).

    Raises
    ------
    EvaluationError
        When the input cannot be read, holds a bad row (unless the sink skips them),
        or holds no trials (nothing, a header only, or only rows skipped as invalid).
    """
    if sources.is_url(path):
        return _read_url(str(path), sink, input_format)
    path = Path(path)
    if sources.has_glob(path) and not path.exists():
        return _read_glob(str(path), sink, input_format)
    fmt = get_format(input_format) if input_format is not None else detect_format(path)
    _check_readable(path)
    before = sink.stats
    read_before = sink.bytes_read
    try:
        with watching(sink.con, f"reading {path.name}") as sink.watch:
            fmt.read(path, sink)
    except OSError as exc:
        raise EvaluationError(
            f"{exc.filename or path}: cannot read as {fmt.NAME}: {exc.strerror or exc}"
        ) from exc
    if sink.bytes_read == read_before:  # the format read its files whole
        sink.bytes_read += _size(path)
    _check_rows(path, sink, before, fmt)
    return fmt


def _size(path: Path) -> int:
    """Bytes of a file, or of the files in a folder and below it."""
    if path.is_file():
        return path.stat().st_size
    return sum(file.stat().st_size for file in tree_files(path, lambda file: file.is_file()))


def _parquet_format(files: sources.ParquetFiles, sink: TrialSink, input_format: str | None) -> Format:
    """The format that reads these Parquet files: the one named, else counts or trial rows."""
    if input_format is not None:
        fmt = get_format(input_format)
        if fmt.NAME not in (counts.NAME, parquet.NAME):
            raise EvaluationError(f"{files.label}: holds Parquet files; they are read as counts or parquet")
        return fmt
    return counts if counts.holds_counts(files, sink.con) else parquet


def _read_files(files: sources.ParquetFiles, sink: TrialSink, input_format: str | None) -> Format:
    fmt = _parquet_format(files, sink, input_format)
    before = sink.stats
    with watching(sink.con, f"reading {files.label}") as sink.watch:
        (counts if fmt is counts else parquet).read_files(files, sink)
    _check_rows(files.label, sink, before, fmt)
    return fmt


def _read_url(url: str, sink: TrialSink, input_format: str | None) -> Format:
    """A remote Parquet dataset scanned in place, or a remote file copied and read as a local one."""
    files, filesystem, paths = sources.remote_files(url)
    if files is not None:
        return _read_files(files, sink, input_format)
    copy = sources.download(url, filesystem, paths[0], sink.scratch())
    return read_input(copy, sink, input_format)


def _read_glob(pattern: str, sink: TrialSink, input_format: str | None) -> Format:
    """The paths a glob matches: Parquet files as one table, anything else one by one."""
    matches = sources.glob_paths(pattern)
    if all(match.is_file() and match.suffix.lower() in sources.PARQUET_SUFFIXES for match in matches):
        return _read_files(sources.local_files(pattern, matches), sink, input_format)
    fmt = None
    for match in matches:
        fmt = read_input(match, sink, input_format)
    assert fmt is not None
    return fmt


def _check_rows(path: Path | str, sink: TrialSink, before: ReadStats, fmt: Format) -> None:
    """An input that gave no trial row, or only invalid ones, is an error naming it."""
    rows = sink.stats.rows_read - before.rows_read
    skipped = sink.stats.rows_skipped - before.rows_skipped
    if rows == 0:
        raise EvaluationError(f"no trials in {path}: read as {fmt.NAME}, it holds no trial rows")
    if rows == skipped:
        every = "its only row is" if rows == 1 else f"all {rows} of its rows are"
        raise EvaluationError(
            f"no valid trials in {path}: {every} invalid and skipped "
            f"(without {parameter('skip_invalid')} the first is named)"
        )
