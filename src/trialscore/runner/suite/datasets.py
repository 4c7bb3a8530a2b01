"""Cases read from dataset files: JSON Lines, CSV or Parquet, with a field mapping and default graders.

A suite's ``cases`` may be one dataset entry, or a list mixing inline cases and dataset entries::

    cases:
      - file: data/questions.jsonl     # relative to the suite file
        id: qid                        # column of the case id (default: id)
        input: question                # column of the input (default: input), or prompt: COLUMN
        expected: answer               # column of the expected answer (default: expected, if present)
        category: topic                # column of the category (default: category, if present)
        tags: labels                   # column of the tags: a list, or one string "a,b"
        metadata: [source, difficulty] # columns copied into the case's metadata
        graders: [{type: exact}]       # the graders of this file's cases (default: the suite's)
        execution: {retries: 0}        # this file's cases' execution overrides
      - {id: extra, input: "2+2", expected: "4", graders: [{type: exact}]}

``format`` (``jsonl``, ``csv`` or ``parquet``) is taken from the file name (``.jsonl``,
``.ndjson``, ``.csv``, ``.parquet``, ``.pq``) unless given.  Every row becomes one case and is
validated like an inline case (ids unique across the suite, every rule); a problem in a row is
reported at the dataset file and line (Parquet: its row number), naming the column::

    data/questions.jsonl:17: question (input): Input should be a valid string; got 3

JSON Lines values keep their JSON types (an ``input`` may be an object; an integer ``id`` becomes
its decimal string); CSV values are strings, and an empty cell in an optional column (expected,
category, tags) is missing.  Parquet is read with DuckDB.  A resumed run checks that neither the
suite nor any dataset file has changed (the suite's digest covers the files' bytes).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from trialscore._validate import describe_data
from trialscore.runner.registry import Loc, Name, Problem, Spec
from trialscore.runner.suite.locations import Locations, Site

__all__ = [
    "DATASET_FORMATS",
    "MAX_DATASET_BYTES",
    "MAX_DATASET_ROWS",
    "CaseOrigins",
    "DatasetSpec",
    "Expansion",
    "expand_cases",
]

DatasetFormat = Literal["jsonl", "csv", "parquet"]
#: The dataset formats, and the file name endings that name them.
DATASET_FORMATS: dict[str, DatasetFormat] = {
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".csv": "csv",
    ".parquet": "parquet",
    ".pq": "parquet",
}
#: The largest dataset file read (bytes).
MAX_DATASET_BYTES = 2 * 2**30
#: The most rows (cases) of one dataset file.
MAX_DATASET_ROWS = 1_000_000

#: The case fields a column can be mapped to, and whether a row must have them.
_REQUIRED = ("id",)
_OPTIONAL = ("expected", "category", "tags")


class DatasetSpec(Spec):
    """One ``cases`` entry naming a dataset file: its format, the column of each case field, graders."""

    file: Name
    format: DatasetFormat | None = None
    id: Name = "id"
    input: Name | None = None
    prompt: Name | None = None
    expected: Name | None = None
    category: Name | None = None
    tags: Name | None = None
    metadata: tuple[Name, ...] = ()
    graders: Any = None  # validated with every case, like an inline case's graders
    execution: Any = None

    def columns(self) -> dict[str, tuple[str, bool]]:
        """Case field -> (column, explicitly mapped).  ``input`` defaults to the column ``input``."""
        mapped: dict[str, tuple[str, bool]] = {"id": (self.id, "id" in self.model_fields_set)}
        if self.prompt is not None:
            mapped["prompt"] = (self.prompt, True)
        if self.input is not None or self.prompt is None:
            mapped["input"] = (self.input or "input", self.input is not None)
        for name in _OPTIONAL:
            column = getattr(self, name)
            mapped[name] = (column or name, column is not None)
        return mapped


@dataclass(frozen=True)
class _Row:
    """Where a case came from: the dataset entry (its place in the suite), the file and the row's line."""

    entry: Loc
    where: Site
    columns: dict[str, str]


@dataclass
class CaseOrigins:
    """Maps a problem's place in the expanded suite back to where it was written.

    An inline case's fields are found in the suite file (its index before expansion); a dataset
    case's fields at its file's line (the column named), its ``graders`` and ``execution`` at the
    dataset entry in the suite file.
    """

    locations: Locations | None
    inline: dict[int, int] = field(default_factory=dict)
    rows: dict[int, _Row] = field(default_factory=dict)

    def locate(self, problem: Problem) -> tuple[Problem, int | Site | None]:
        """``problem`` at its place as written: its suite line (the field renamed to the suite's
        own index), or the dataset :class:`Site` of a field read from a file."""
        loc = problem.loc
        if len(loc) >= 2 and loc[0] == "cases" and isinstance(loc[1], int):
            index, rest = loc[1], loc[2:]
            row = self.rows.get(index)
            if row is None:
                loc = ("cases", self.inline.get(index, index), *rest)
            elif rest and rest[0] in ("graders", "execution"):
                loc = (*row.entry, *rest)
            elif not rest:
                return problem, row.where
            else:
                column = row.columns.get(str(rest[0]), str(rest[0]))
                return problem, Site(row.where.where, f"{column} ({rest[0]})")
            problem = Problem(loc, problem.message)
        return problem, self._suite_line(loc)

    def line(self, loc: Loc) -> int | Site | None:
        """The suite line of ``loc``, or the dataset :class:`Site` of a field read from a file."""
        return self.locate(Problem(loc, ""))[1]

    def _suite_line(self, loc: Loc) -> int | None:
        return self.locations.line(loc) if self.locations is not None else None


@dataclass
class Expansion:
    """The suite document with its dataset entries replaced by their cases, and what reading them found."""

    data: Any
    origins: CaseOrigins
    problems: list[tuple[Problem, int | Site | None]] = field(default_factory=list)
    digests: list[str] = field(default_factory=list)  # SHA-256 of each dataset file, in suite order


def _is_entry(item: object) -> bool:
    return isinstance(item, Mapping) and "file" in item


def expand_cases(data: Any, directory: Path, shown: Path | None, locations: Locations | None) -> Expansion:
    """Replace every dataset entry of ``data["cases"]`` by the cases its file holds.

    ``directory`` resolves relative file names; ``shown`` is the directory messages show them in
    (the suite file's as the user wrote it; None: the resolved path).  Problems reading the files
    are collected, each with its line, never raised.
    """
    origins = CaseOrigins(locations)
    items = data.get("cases") if isinstance(data, Mapping) else None
    if _is_entry(items):
        entries: list[tuple[Loc, Any]] = [(("cases",), items)]
    elif isinstance(items, list | tuple) and any(_is_entry(item) for item in items):
        entries = [(("cases", index), item) for index, item in enumerate(items)]
    else:
        return Expansion(data, origins)
    expansion = Expansion(data, origins)
    cases: list[Any] = []
    for loc, item in entries:
        if not _is_entry(item):
            origins.inline[len(cases)] = int(loc[1])
            cases.append(item)
            continue
        for where, columns, case in _entry_cases(expansion, loc, item, directory, shown):
            origins.rows[len(cases)] = _Row(loc, where, columns)
            cases.append(case)
    expansion.data = {**data, "cases": cases}
    return expansion


def _entry_cases(
    expansion: Expansion, loc: Loc, item: Mapping[str, Any], directory: Path, shown: Path | None
) -> Iterator[tuple[Site, dict[str, str], dict[str, Any]]]:
    from trialscore.runner.suite.messages import pydantic_problems

    def problem(where: Loc, message: str) -> None:
        expansion.problems.append((Problem(where, message), expansion.origins._suite_line(where)))

    try:
        spec = DatasetSpec.model_validate(item)
    except ValidationError as exc:
        for found in pydantic_problems(exc, loc, DatasetSpec):
            problem(found.loc, found.message)
        return
    path = directory / spec.file
    label = str(path if shown is None or Path(spec.file).is_absolute() else shown / spec.file)
    kind = spec.format or DATASET_FORMATS.get(path.suffix.lower())
    if kind is None:
        problem(
            (*loc, "file"),
            f"cannot tell the format of {label!r} from its name; add format: jsonl, csv or parquet",
        )
        return
    try:
        size = path.stat().st_size
        if size > MAX_DATASET_BYTES:
            problem(
                (*loc, "file"), f"{label} is {size:,} bytes; a dataset file is at most {MAX_DATASET_BYTES:,}"
            )
            return
        raw = path.read_bytes()
    except OSError as exc:
        problem((*loc, "file"), f"cannot read {label}: {exc.strerror or exc}")
        return
    expansion.digests.append(hashlib.sha256(raw).hexdigest())
    reader = {"jsonl": _jsonl_rows, "csv": _csv_rows, "parquet": _parquet_rows}[kind]
    mapped = spec.columns()
    columns = {name: column for name, (column, _) in mapped.items()}
    for metadata in spec.metadata:
        columns.setdefault(f"metadata.{metadata}", metadata)
    count = 0
    unseen = {name: column for name, (column, explicit) in mapped.items() if explicit and name in _OPTIONAL}
    try:
        for where, row in reader(raw, path, label):
            count += 1
            if count > MAX_DATASET_ROWS:
                problem((*loc, "file"), f"{label} has over {MAX_DATASET_ROWS:,} rows; split it")
                return
            if isinstance(row, str):  # a row that could not be read: the reason
                expansion.problems.append((Problem(loc, row), where))
                continue
            case = _case(expansion, spec, mapped, row, where, loc)
            if case is not None:
                yield where, columns, case
            for name in [name for name, column in unseen.items() if column in row]:
                del unseen[name]
    except _Unreadable as exc:
        problem((*loc, "file"), f"cannot read {label} as {kind}: {exc}")
        return
    if count == 0:
        problem((*loc, "file"), f"{label} has no rows")
        return
    for name, column in unseen.items():  # a mapping no row has is a typo, not a column of blanks
        problem((*loc, name), f"no row of {label} has the column {column!r}")


class _Unreadable(Exception):
    """A dataset file that cannot be read at all (not its format)."""


def _case(
    expansion: Expansion,
    spec: DatasetSpec,
    mapped: dict[str, tuple[str, bool]],
    row: Mapping[str, Any],
    where: Site,
    loc: Loc,
) -> dict[str, Any] | None:
    """The case of one row, or None (its problems recorded) when a column it needs is missing."""
    case: dict[str, Any] = {}
    missing = []
    for name, (column, _) in mapped.items():
        value = row.get(column)
        if column not in row or (value is None and name not in _OPTIONAL):
            if name not in _OPTIONAL:
                missing.append(f"{column} ({name})")
            continue
        if name in _OPTIONAL and value in ("", None):
            continue
        if name == "id" and isinstance(value, int) and not isinstance(value, bool):
            value = str(value)
        if name == "tags" and isinstance(value, str):
            value = [tag.strip() for tag in value.split(",") if tag.strip()]
        case[name] = value
    for column in spec.metadata:
        if column not in row:
            missing.append(f"{column} (metadata)")
        else:
            case.setdefault("metadata", {})[column] = row[column]
    if missing:
        present = ", ".join(list(row)[:12]) or "none"
        expansion.problems.append(
            (Problem(loc, f"no value for column {', '.join(missing)}; the row has: {present}"), where)
        )
        return None
    if spec.graders is not None:
        case["graders"] = spec.graders
    if spec.execution is not None:
        case["execution"] = spec.execution
    return case


def _jsonl_rows(raw: bytes, path: Path, label: str) -> Iterator[tuple[Site, Mapping[str, Any] | str]]:
    for number, line in enumerate(raw.splitlines(), 1):
        where = Site(f"{label}:{number}")
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except UnicodeDecodeError as exc:
            yield where, f"not UTF-8 text ({exc.reason})"
            continue
        except ValueError as exc:
            yield where, f"not valid JSON ({exc})"
            continue
        if isinstance(value, Mapping):
            yield where, value
        else:
            yield where, f"a row must be a JSON object; got {describe_data(value)}"


def _csv_rows(raw: bytes, path: Path, label: str) -> Iterator[tuple[Site, Mapping[str, Any] | str]]:
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise _Unreadable(f"not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start})") from exc
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader)
    except StopIteration:
        return
    except csv.Error as exc:
        raise _Unreadable(str(exc)) from exc
    twice = sorted({name for name in header if header.count(name) > 1})
    if twice:
        raise _Unreadable(f"the header names column(s) {', '.join(map(repr, twice))} twice")
    line = reader.line_num + 1
    while True:
        try:
            cells = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            yield Site(f"{label}:{line}"), f"not valid CSV ({exc})"
            return
        where = Site(f"{label}:{line}")
        line = reader.line_num + 1
        if not cells:
            continue
        if len(cells) != len(header):
            yield where, f"the row has {len(cells)} cells; the header has {len(header)}"
            continue
        yield where, dict(zip(header, cells, strict=True))


def _parquet_rows(raw: bytes, path: Path, label: str) -> Iterator[tuple[Site, Mapping[str, Any] | str]]:
    import duckdb

    connection = duckdb.connect()
    try:
        cursor = connection.execute("SELECT * FROM read_parquet(?)", [str(path)])
        names = [column[0] for column in cursor.description or ()]
        rows = cursor.fetchall()
    except duckdb.Error as exc:
        raise _Unreadable(str(exc).splitlines()[0]) from exc
    finally:
        connection.close()
    for number, values in enumerate(rows, 1):
        yield Site(f"{label}:row {number}"), dict(zip(names, values, strict=True))
