"""Distinct outputs with counts: each text of a run stored once, and a case's trials grouped by it.

The report stores every distinct text (outputs and error texts) once in a table
(:class:`TextTable`); a trial refers to its output and its error by their index in it.  A case's
trials are then grouped by what they said, twice:

* **exact**: trials whose text is the same, character for character;
* **loose**: after trimming whitespace and case: runs of whitespace count as one space, leading
  and trailing whitespace is dropped, and letters are compared case-folded
  (:func:`loose`).  A loose group shows its most frequent exact text.

Each group has its count and the trials it came from (positions among the case's trials, in trial
order); groups are listed by count, the largest first, then by their first trial.  Errors are
grouped the same way.  An output longer than
:data:`~trialscore.results.trials.OUTPUT_TEXT_CHARS` is kept to that many characters, with its
full length: two such outputs are the same when their kept text and their length are.

>>> table = TextTable()
>>> ids = [table.add(text) for text in ["Paris", "paris ", "Lyon", "Paris", None]]
>>> ids
[0, 1, 2, 0, None]
>>> case_groups(ids, table)
[[[0, [0, 3]], [1, [1]], [2, [2]]], [[0, [0, 1, 3]], [2, [2]]]]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["TextTable", "case_groups", "loose"]

#: The ASCII characters ``str.split`` splits at, but the space.
_OTHER_SPACES = b"\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f"


def loose(text: str) -> str:
    """A text as the loose grouping compares it: whitespace runs as one space, ends trimmed, case-folded.

    >>> loose("  The answer\\n is  42. "), loose("THE ANSWER IS 42.")
    ('the answer is 42.', 'the answer is 42.')
    >>> loose("a\\x1fb"), loose("Straße")
    ('a b', 'strasse')
    """
    if text.isascii():  # most outputs, whose words are one space apart already: only their case to fold
        raw = text.encode("ascii")
        if (
            len(raw.translate(None, _OTHER_SPACES)) == len(raw)
            and b"  " not in raw
            and not raw.startswith(b" ")
            and not raw.endswith(b" ")
        ):
            return text.lower()  # casefold, for ASCII
    return " ".join(text.split()).casefold()


class TextTable:
    """Every distinct text of a run, once: ``texts`` (a cut one as ``[kept text, full length]``) and, per
    text, the index of its loose class (:attr:`classes`, the first text of the class)."""

    def __init__(self) -> None:
        self.texts: list[Any] = []
        self.classes: list[int] = []
        self._index: dict[str | tuple[str, int], int] = {}  # a text, or a cut one with its full length
        self._loose: dict[str, int] = {}

    def add(self, text: str | None, chars: int | None = None) -> int | None:
        """The index of ``text`` (added if new); ``chars``: its full length if it was cut.  None: no text."""
        if text is None:
            return None
        key = text if chars is None or chars <= len(text) else (text, chars)
        index = self._index.get(key)
        return self._new(key) if index is None else index

    def add_all(self, texts: Sequence[str | None], chars: Sequence[int] | None = None) -> list[int | None]:
        """:meth:`add` of every text (``chars``: the full length of each), each distinct one looked at once.

        >>> table = TextTable()
        >>> table.add_all(["b", None, "a", "b"]), table.add_all(["a", "abc"], [1, 9]), table.texts
        ([0, None, 1, 0], [1, 2], ['b', 'a', ['abc', 9]])
        """
        keys: list[str | tuple[str, int] | None] = list(texts)
        if chars is not None:
            keys = [
                text if text is None or full <= len(text) else (text, full)
                for text, full in zip(texts, chars, strict=True)
            ]
        index = self._index
        for key in dict.fromkeys(keys):  # in order of first appearance, as one add after another
            if key is not None and key not in index:
                self._new(key)
        return [None if key is None else index[key] for key in keys]

    def _new(self, key: str | tuple[str, int]) -> int:
        """Add the text of ``key`` (a text, or a cut text and its full length), new to the table."""
        text, length = (key, len(key)) if isinstance(key, str) else key
        index = self._index[key] = len(self.texts)
        self.texts.append(key if isinstance(key, str) else [text, length])
        self.classes.append(self._loose.setdefault(f"{loose(text)}\x00{length - len(text)}", index))
        return index

    def text(self, index: int) -> str:
        """The (kept) text at ``index``."""
        value = self.texts[index]
        return value[0] if isinstance(value, list) else str(value)


def _grouped(keys: Sequence[int | None]) -> list[tuple[int, list[int]]]:
    """Positions grouped by ``keys`` (None left out): ``[(key, [positions]), ...]``, the largest group
    first (ties: the earliest)."""
    members: dict[int, list[int]] = {}
    for position, key in enumerate(keys):
        if key is not None:
            members.setdefault(key, []).append(position)
    return sorted(members.items(), key=lambda item: (-len(item[1]), item[1][0]))


def case_groups(ids: Sequence[int | None], table: TextTable) -> list[list[list[Any]]] | None:
    """A case's texts (one index per trial, None: no text) grouped ``[exact, loose]`` (see the module
    docstring); the loose grouping equals the exact one when no two exact texts are loosely the same.
    None when no trial has a text."""
    if ids.count(None) == len(ids):
        return None
    exact: list[list[Any]] = [[text, positions] for text, positions in _grouped(ids)]
    if len({table.classes[text] for text, _ in exact}) == len(exact):
        return [exact, exact]
    loosely = []
    for _, positions in _grouped([None if index is None else table.classes[index] for index in ids]):
        counts: dict[int | None, int] = {}
        for position in positions:
            counts[ids[position]] = counts.get(ids[position], 0) + 1
        loosely.append([max(counts, key=counts.__getitem__), positions])  # the first of the most frequent
    return [exact, loosely]
