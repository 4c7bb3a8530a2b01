"""Reading a suite file: bounded, strict UTF-8, YAML 1.2 (ruamel.yaml), with the line of every field.

:func:`read_suite_text` and :func:`parse_suite` turn a file into plain Python data (dicts, lists,
str, int, float, bool, None, dates) and a :class:`Locations` index from each field's place
(``("cases", 1, "graders", 0)``) to its line, taken from ruamel.yaml's round-trip loader.
Duplicate keys are found by the loader (the first value is kept) and reported as problems with
their line, not silently dropped.

Hostile files are refused with one ``file:line: rule`` message before anything is built from them:

* a file over :data:`MAX_SUITE_BYTES`, a line over :data:`MAX_LINE_CHARS` characters, bytes that are
  not UTF-8;
* nesting deeper than :data:`MAX_DEPTH` levels (checked on the parser's event stream, before the
  recursive composer could overflow the stack);
* aliases that expand to more than :data:`MAX_VALUES` values (the "billion laughs"), or that refer
  to themselves (a recursive anchor).

>>> source = parse_suite("name: s\\ncases:\\n  - id: a\\n    input: x\\n", "suite.yaml")
>>> source.data
{'name': 's', 'cases': [{'id': 'a', 'input': 'x'}]}
>>> source.line(("cases", 0, "input")), source.line(("cases", 0, "graders", 2, "weight"))
(4, 3)
>>> parse_suite("a: &x [1, *x]\\n", "suite.yaml")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
trialscore.errors.EvaluationError: suite.yaml:1: alias *x refers to the value that contains it (a ...)
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.constructor import RoundTripConstructor
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.events import AliasEvent, CollectionEndEvent, CollectionStartEvent
from ruamel.yaml.scalarbool import ScalarBoolean

from trialscore.errors import EvaluationError
from trialscore.runner.registry import Loc, Problem

__all__ = [
    "MAX_DEPTH",
    "MAX_LINE_CHARS",
    "MAX_SUITE_BYTES",
    "MAX_VALUES",
    "Locations",
    "Site",
    "SuiteSource",
    "check_text",
    "field_name",
    "invalid_suite",
    "parse_suite",
    "read_suite_text",
]

#: The largest suite file read (bytes).
MAX_SUITE_BYTES = 32 * 2**20
#: The longest line of a suite file (characters): a longer one is refused before the YAML scanner sees it.
MAX_LINE_CHARS = 1_000_000
#: The deepest nesting of mappings and lists.
MAX_DEPTH = 64
#: The most values a suite may expand to once its aliases are followed (the "billion laughs" bound).
MAX_VALUES = 1_000_000


def field_name(loc: Loc) -> str:
    """A field's place as the suite writes it: ``cases[1].graders[0].value``.

    >>> field_name(("cases", 1, "graders", 0, "value")), field_name(())
    ('cases[1].graders[0].value', '(document)')
    """
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "(document)"


@dataclass(frozen=True)
class Site:
    """A problem's place outside the suite file: ``where`` (a dataset's ``file:line``) and the field
    there (None: the whole row)."""

    where: str
    field: str | None = None


#: The most problems one error lists (the rest are counted).
MAX_LISTED_PROBLEMS = 100


def _order(item: tuple[Problem, int | Site | None]) -> tuple[int, str, int]:
    place = item[1]
    if isinstance(place, Site):  # dataset rows after the suite file, by file and line
        name, _, line = place.where.rpartition(":")
        number = line.removeprefix("row ")
        return 1, name, int(number) if number.isdigit() else 0
    return 0, "", place or 0


def invalid_suite(source: str, problems: list[tuple[Problem, int | Site | None]]) -> EvaluationError:
    """Every problem of a suite in one error: a header, then ``source:line: field: message`` per line.

    Problems are listed by line (those without one first, those in dataset files last), each once;
    past :data:`MAX_LISTED_PROBLEMS` the rest are counted.

    >>> print(invalid_suite("s.yaml", [(Problem(("cases", 0, "id"), "must be unique"), 7),
    ...                                (Problem(("cases", 3), "no value"), Site("q.jsonl:2"))]))
    s.yaml: invalid suite (2 problems):
      s.yaml:7: cases[0].id: must be unique
      q.jsonl:2: no value
    """
    lines = []
    for problem, place in sorted(problems, key=_order):
        if isinstance(place, Site):
            label = f"{place.field}: " if place.field is not None else ""
            lines.append(f"  {place.where}: {label}{problem.message}")
            continue
        where = f"{source}:{place}" if place is not None else source
        lines.append(f"  {where}: {field_name(problem.loc)}: {problem.message}")
    unique = list(dict.fromkeys(lines))
    count = f"{len(unique)} problem" + ("s" if len(unique) != 1 else "")
    if len(unique) > MAX_LISTED_PROBLEMS:
        rest = len(unique) - MAX_LISTED_PROBLEMS
        unique = [*unique[:MAX_LISTED_PROBLEMS], f"  ... and {rest} more problem{'s' if rest != 1 else ''}"]
    return EvaluationError(f"{source}: invalid suite ({count}):\n" + "\n".join(unique))


@dataclass(frozen=True)
class Locations:
    """Field place -> 1-based line; a place not in the file gets the line of its nearest parent."""

    lines: dict[Loc, int] = field(default_factory=dict)

    def line(self, loc: Loc) -> int | None:
        """The line of ``loc``, else of the deepest parent found (Pydantic's union tags are skipped)."""
        for end in range(len(loc), -1, -1):
            found = self.lines.get(loc[:end])
            if found is not None:
                return found
        return None


@dataclass(frozen=True)
class SuiteSource:
    """A parsed suite file: its text, plain data, field lines and duplicate keys (each with its line)."""

    text: str
    data: Any
    locations: Locations
    duplicates: tuple[tuple[Problem, int], ...] = ()

    def line(self, loc: Loc) -> int | None:
        """The line of the field at ``loc`` (see :meth:`Locations.line`)."""
        return self.locations.line(loc)


class _Constructor(RoundTripConstructor):
    """The round-trip constructor, recording duplicate keys (with their line) instead of raising."""

    def check_mapping_key(self, node: Any, key_node: Any, mapping: Any, key: Any, value: Any) -> bool:
        if key in mapping:
            self.duplicates.append((mapping, key, key_node.start_mark.line + 1))
            return False  # the first value stays
        return True

    @property
    def duplicates(self) -> list[tuple[Any, Any, int]]:
        found: list[tuple[Any, Any, int]] | None = getattr(self, "_duplicates", None)
        if found is None:
            found = []
            self._duplicates = found
        return found


def _fail(source: str, line: int | None, message: str) -> EvaluationError:
    return EvaluationError(f"{source}:{line}: {message}" if line is not None else f"{source}: {message}")


def check_text(raw: bytes, source: str) -> str:
    """Suite bytes as text: within the size and line bounds, and UTF-8 (a BOM is dropped)."""
    if len(raw) > MAX_SUITE_BYTES:
        raise _fail(
            source, None, f"the file is {len(raw):,} bytes; a suite file is at most {MAX_SUITE_BYTES:,}"
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise _fail(
            source,
            line,
            f"not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start}); save it as UTF-8",
        ) from exc
    text = text.removeprefix("\ufeff")
    for number, line_text in enumerate(text.splitlines(), 1):
        if len(line_text) > MAX_LINE_CHARS:
            raise _fail(
                source,
                number,
                f"the line is {len(line_text):,} characters long; a suite line is at most {MAX_LINE_CHARS:,} "
                "(put long inputs in a file the target reads)",
            )
    return text


def _check_events(yaml: YAML, text: str, source: str) -> bool:
    """Nesting depth and recursive anchors, on the parser's event stream (no recursion, no building).

    Returns whether the text has aliases (without them it has as many values as it shows).
    """
    anchors: list[str | None] = []  # the anchor of each open mapping or list
    aliased = False
    for event in yaml.parse(text):
        if isinstance(event, CollectionStartEvent):
            anchors.append(event.anchor)
            if len(anchors) > MAX_DEPTH:
                raise _fail(
                    source,
                    event.start_mark.line + 1,
                    f"nested deeper than {MAX_DEPTH} levels of mappings and lists",
                )
        elif isinstance(event, CollectionEndEvent):
            anchors.pop()
        elif isinstance(event, AliasEvent):
            aliased = True
            if event.anchor in anchors:
                raise _fail(
                    source,
                    event.start_mark.line + 1,
                    f"alias *{event.anchor} refers to the value that contains it (a recursive anchor)",
                )
    return aliased


class _Recursive(Exception):
    """A value met inside itself while sizing (left to :meth:`_Walk.value` to report)."""


class _Walk:
    """Copies ruamel's values into plain Python ones, recording lines, following aliases with bounds."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.lines: dict[Loc, int] = {}
        self.paths: dict[int, Loc] = {}
        self.count = 0
        self.open: set[int] = set()

    def _too_many(self, loc: Loc, line: int | None) -> EvaluationError:
        return _fail(
            self.source,
            line,
            f"{field_name(loc)}: the suite expands to over {MAX_VALUES:,} values (aliases of aliases?)",
        )

    def bound(self, root: Any, loc: Loc, line: int | None) -> None:
        """Refuse ``root`` if it expands to over :data:`MAX_VALUES` values, before copying any of it.

        The sizes of shared (aliased) values are counted once each, so an alias bomb is sized in
        the time of its text; the error is the one :meth:`value` would raise at the value past the
        bound, found by descending the sizes.
        """
        sizes: dict[int, int] = {}
        sizing: set[int] = set()

        def size(value: Any) -> int:
            if not isinstance(value, Mapping | list | tuple):
                return 1
            known = sizes.get(id(value))
            if known is None:
                if id(value) in sizing:
                    raise _Recursive
                sizing.add(id(value))
                items = value.values() if isinstance(value, Mapping) else value
                known = sizes[id(value)] = 1 + sum(size(item) for item in items)
            return known

        try:
            if size(root) <= MAX_VALUES:
                return
        except _Recursive:
            return
        index = MAX_VALUES + 1  # the refused value's place in the order :meth:`value` visits them
        value = root
        while index > 1:
            index -= 1
            mapping = isinstance(value, Mapping)
            for key in list(value) if mapping else range(len(value)):
                item = value[key]
                if index <= size(item):
                    loc, line = (*loc, self.key(key) if mapping else key), _line(value, key)
                    value = item
                    break
                index -= size(item)
        raise self._too_many(loc, line)

    def value(self, value: Any, loc: Loc, line: int | None) -> Any:
        self.count += 1
        if self.count > MAX_VALUES:
            raise self._too_many(loc, line)
        if line is not None:
            self.lines.setdefault(loc, line)
        if isinstance(value, Mapping | list | tuple):
            if id(value) in self.open:
                raise _fail(
                    self.source,
                    line,
                    f"{field_name(loc)}: an alias refers to the value that contains it (a recursive anchor)",
                )
            self.paths.setdefault(id(value), loc)
            self.open.add(id(value))
            try:
                if isinstance(value, Mapping):
                    return {
                        self.key(key): self.value(item, (*loc, self.key(key)), _line(value, key))
                        for key, item in value.items()
                    }
                return [
                    self.value(item, (*loc, index), _line(value, index)) for index, item in enumerate(value)
                ]
            finally:
                self.open.discard(id(value))
        return _scalar(value)

    def key(self, key: Any) -> Any:
        plain = _scalar(key)
        return plain if isinstance(plain, str | int | float | bool) or plain is None else str(plain)


def _line(container: Any, key: Any) -> int | None:
    """The 1-based line of a mapping's value or a list's item (None when ruamel kept none: ``<<``)."""
    lc: Any = getattr(container, "lc", None)
    try:
        if isinstance(container, Mapping):
            return int(lc.value(key)[0]) + 1
        return int(lc.item(key)[0]) + 1
    except (AttributeError, KeyError, IndexError, TypeError):
        return None


def _scalar(value: Any) -> Any:
    """ruamel's scalar subclasses (ScalarFloat, HexInt, ScalarBoolean, quoted strings) as plain values."""
    if value is None or type(value) in (str, int, float, bool):
        return value
    if isinstance(value, ScalarBoolean | bool):
        return bool(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        return str(value)
    if isinstance(value, datetime.datetime):
        return datetime.datetime.fromisoformat(value.isoformat())
    if isinstance(value, datetime.date):
        return datetime.date(value.year, value.month, value.day)
    return value


def parse_suite(text: str, source: str) -> SuiteSource:
    """Parse suite text (see the module docstring); ``source`` names it in messages.

    Raises
    ------
    EvaluationError
        For text that is not YAML, nests too deeply or expands too far: one ``source:line: rule`` line.
    """
    yaml = YAML(typ="rt", pure=True)
    yaml.Constructor = _Constructor
    try:
        aliased = _check_events(yaml, text, source)
        root = yaml.load(text)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or str(exc)
        raise _fail(
            source, mark.line + 1 if mark is not None else None, f"not valid YAML: {problem}"
        ) from exc
    except YAMLError as exc:
        raise _fail(source, None, f"not valid YAML: {exc}") from exc
    walk = _Walk(source)
    if aliased:
        walk.bound(root, (), 1)
    data = walk.value(root, (), 1)
    duplicates = tuple(
        (
            Problem(
                (*walk.paths.get(id(mapping), ()), walk.key(key)),
                "duplicate key (the first value is used; remove one)",
            ),
            line,
        )
        for mapping, key, line in yaml.constructor.duplicates
    )
    return SuiteSource(text, data, Locations(walk.lines), duplicates)


def read_suite_text(path: Path) -> str:
    """The text of a suite file, within the size and line bounds and UTF-8 (see the module docstring).

    Raises
    ------
    EvaluationError
        When the file cannot be read, is too large, has too long a line or is not UTF-8.
    """
    source = str(path)
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_SUITE_BYTES + 1)
    except OSError as exc:
        raise EvaluationError(f"{source}: cannot read the suite file ({exc.strerror or exc})") from exc
    return check_text(raw, source)
