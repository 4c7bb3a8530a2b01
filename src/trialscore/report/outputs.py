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

#: The ASCII characters ``str.split`` splits at.
_ASCII_SPACES = b" \t\n\x0b\x0c\r\x1c\x1d\x1e\x1f"
#: ASCII letters to lower case: ``casefold`` of ASCII text.
_ASCII_LOWER = bytes.maketrans(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ", b"abcdefghijklmnopqrstuvwxyz")


def loose(text: str) -> str:
    """A text as the loose grouping compares it: whitespace runs as one space, ends trimmed, case-folded.

    >>> loose("  The answer\\n is  42. "), loose("THE ANSWER IS 42.")
    ('the answer is 42.', 'the answer is 42.')
    """
    return " ".join(text.split()).casefold()


def _solid(text: str) -> bytes:
    """:func:`loose` ``(text)`` without its spaces, in UTF-8: texts loosely the same have the same one.
    An ASCII text's is made in one pass, without splitting it into words.

    >>> _solid(" The  answer\\n is\\x1f42. "), _solid("Straße \\u212a")
    (b'theansweris42.', b'strassek')
    """
    if text.isascii():
        return text.encode("ascii").translate(_ASCII_LOWER, _ASCII_SPACES)
    return loose(text).replace(" ", "").encode("utf-8", "surrogatepass")


class TextTable:
    """Every distinct text of a run, once: ``texts`` (a cut one as ``[kept text, full length]``); which
    of them are loosely the same is found when a case asks (:meth:`loosely_apart`, :meth:`loose_class`).
    """

    def __init__(self) -> None:
        self.texts: list[Any] = []
        self._index: dict[str | tuple[str, int], int] = {}  # a text, or a cut one with its full length
        self._solid: dict[int, tuple[int, bytes]] = {}  # text index -> (characters cut, its _solid)
        self._classes: dict[int, int] = {}  # text index -> its loose class
        self._loose: dict[str, int] = {}  # loose text and characters cut -> its class

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
        index = self._index[key] = len(self.texts)
        self.texts.append(key if isinstance(key, str) else list(key))
        return index

    def text(self, index: int) -> str:
        """The (kept) text at ``index``."""
        value = self.texts[index]
        return value[0] if isinstance(value, list) else str(value)

    def _cut(self, index: int) -> int:
        """How many characters of the text at ``index`` were cut (0: it is whole)."""
        value = self.texts[index]
        return value[1] - len(value[0]) if isinstance(value, list) else 0

    def loose_class(self, index: int) -> int:
        """The loose class of the text at ``index``: the first text asked about that is loosely the same
        (:func:`loose`, and as many characters cut)."""
        found = self._classes.get(index)
        if found is None:
            key = f"{loose(self.text(index))}\x00{self._cut(index)}"
            found = self._classes[index] = self._loose.setdefault(key, index)
        return found

    def loosely_apart(self, indices: Sequence[int]) -> bool:
        """Whether no two of the distinct texts at ``indices`` are loosely the same: told by their forms
        without whitespace where those differ (:func:`_solid`, and the characters cut), else by their
        loose forms."""
        solid = self._solid
        for index in indices:
            if index not in solid:
                solid[index] = (self._cut(index), _solid(self.text(index)))
        forms = [solid[index] for index in indices]
        if all(form != other for place, form in enumerate(forms) for other in forms[place + 1 :]):
            return True  # compared in pairs: a case has few texts, and unlike ones differ early
        return len({self.loose_class(index) for index in indices}) == len(indices)


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
    if len(exact) == 1 or table.loosely_apart([text for text, _ in exact]):
        return [exact, exact]
    loosely = []
    for _, positions in _grouped([None if index is None else table.loose_class(index) for index in ids]):
        counts: dict[int | None, int] = {}
        for position in positions:
            counts[ids[position]] = counts.get(ids[position], 0) + 1
        loosely.append([max(counts, key=counts.__getitem__), positions])  # the first of the most frequent
    return [exact, loosely]
