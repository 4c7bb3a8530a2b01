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


def loose(text: str) -> str:
    """A text as the loose grouping compares it: whitespace runs as one space, ends trimmed, case-folded.

    >>> loose("  The answer\\n is  42. "), loose("THE ANSWER IS 42.")
    ('the answer is 42.', 'the answer is 42.')
    """
    return " ".join(text.split()).casefold()


class TextTable:
    """Every distinct text of a run, once: ``texts`` (a cut one as ``[kept text, full length]``) and, per
    text, the index of its loose class (:attr:`classes`, the first text of the class)."""

    def __init__(self) -> None:
        self.texts: list[Any] = []
        self.classes: list[int] = []
        self._index: dict[tuple[str, int], int] = {}
        self._loose: dict[str, int] = {}

    def add(self, text: str | None, chars: int | None = None) -> int | None:
        """The index of ``text`` (added if new); ``chars``: its full length if it was cut.  None: no text."""
        if text is None:
            return None
        length = len(text) if chars is None or chars <= len(text) else chars
        key = (text, length)
        index = self._index.get(key)
        if index is None:
            index = self._index[key] = len(self.texts)
            self.texts.append(text if length == len(text) else [text, length])
            self.classes.append(self._loose.setdefault(f"{loose(text)}\x00{length - len(text)}", index))
        return index

    def text(self, index: int) -> str:
        """The (kept) text at ``index``."""
        value = self.texts[index]
        return value[0] if isinstance(value, list) else str(value)


def _groups(keys: Sequence[int | None], shown: Sequence[int | None]) -> list[list[Any]]:
    """Positions grouped by ``keys`` (None left out): ``[[shown text, [positions]], ...]``, the largest
    group first (ties: the earliest), each shown by its most frequent exact text (ties: the earliest)."""
    members: dict[int, list[int]] = {}
    for position, key in enumerate(keys):
        if key is not None:
            members.setdefault(key, []).append(position)
    out = []
    for positions in sorted(members.values(), key=lambda found: (-len(found), found[0])):
        counts: dict[int, int] = {}
        for position in positions:
            text = shown[position]
            assert text is not None
            counts[text] = counts.get(text, 0) + 1
        out.append([max(counts, key=counts.__getitem__), positions])  # the first of the most frequent
    return out


def case_groups(ids: Sequence[int | None], table: TextTable) -> list[list[list[Any]]] | None:
    """A case's texts (one index per trial, None: no text) grouped ``[exact, loose]`` (see the module
    docstring); the loose grouping equals the exact one when no two exact texts are loosely the same.
    None when no trial has a text."""
    if all(index is None for index in ids):
        return None
    exact = _groups(ids, ids)
    classes = [None if index is None else table.classes[index] for index in ids]
    return [exact, exact if len(set(classes) - {None}) == len(exact) else _groups(classes, ids)]
