"""Word-level diffs of two outputs, computed when the report is built (no script library in the page).

A text is split into words, runs of whitespace and single punctuation marks (:func:`tokens`), so
the pieces joined give the text back exactly.  :func:`word_diff` aligns the two token lists with
:class:`difflib.SequenceMatcher` (no junk heuristic: every token counts) and returns the diff as
``[op, text]`` pieces, adjacent pieces of the same kind merged: ``0`` kept, ``-1`` deleted (only
in the first text), ``1`` inserted (only in the second).  A replaced stretch is its deletion then
its insertion.  The page draws them as ``<del>`` and ``<ins>`` elements, every text set as text.

>>> word_diff("The capital is Paris.", "The capital is Lyon.")
[[0, 'The capital is '], [-1, 'Paris'], [1, 'Lyon'], [0, '.']]
>>> "".join(text for op, text in word_diff("a  b", "a b c") if op >= 0)
'a b c'
"""

from __future__ import annotations

import difflib
import re

__all__ = ["tokens", "word_diff"]

_TOKEN = re.compile(r"\s+|\w+|[^\w\s]")


def tokens(text: str) -> list[str]:
    """Words, whitespace runs and single other characters: joined they are ``text``.

    >>> tokens("Hi, you  2!")
    ['Hi', ',', ' ', 'you', '  ', '2', '!']
    """
    return _TOKEN.findall(text)


def word_diff(before: str, now: str) -> list[list[int | str]]:
    """The word-level diff of ``before`` and ``now`` as ``[op, text]`` pieces (see the module docstring)."""
    a, b = tokens(before), tokens(now)
    pieces: list[list[int | str]] = []

    def add(op: int, text: str) -> None:
        if not text:
            return
        if pieces and pieces[-1][0] == op:
            pieces[-1][1] = f"{pieces[-1][1]}{text}"
        else:
            pieces.append([op, text])

    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            add(0, "".join(a[i1:i2]))
        else:
            add(-1, "".join(a[i1:i2]))
            add(1, "".join(b[j1:j2]))
    return pieces
