"""What a format module provides: the :class:`Format` protocol and its :class:`FormatInfo` listing."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from trialscore._record import Record

if TYPE_CHECKING:
    from trialscore.results.sink import TrialSink

__all__ = ["Format", "FormatInfo"]


class Format(Protocol):
    """A format module: four constants (read-only here, so plain module constants match) and two functions.

    ``NAME`` is what ``input_format=`` (the CLI's ``--from``) takes; ``SUMMARY`` says
    in one line what the input is; ``MAPS`` says what becomes the item, the trial,
    the outcome and the group keys; ``SUFFIXES`` are the usual file suffixes (for
    listings and messages only: detection looks at the content).

    ``sniff(path)`` answers from the content (first bytes, first JSON keys, a
    folder's files) and raises nothing but ``OSError`` (the dispatcher takes a path
    it cannot read as not this format); ``read(path, sink)`` hands the trials to
    the :class:`~trialscore.results.sink.TrialSink` and raises
    :class:`~trialscore.errors.EvaluationError` with one line naming the file,
    the line or row, the field, the value and the rule.
    """

    @property
    def NAME(self) -> str: ...

    @property
    def SUMMARY(self) -> str: ...

    @property
    def MAPS(self) -> str: ...

    @property
    def SUFFIXES(self) -> tuple[str, ...]: ...

    def sniff(self, path: Path) -> bool: ...

    def read(self, path: Path, sink: TrialSink) -> None: ...


@dataclass(frozen=True)
class FormatInfo(Record):
    """One row of :func:`trialscore.results.formats.list_formats`."""

    name: str
    summary: str
    maps: str
    suffixes: tuple[str, ...]
