"""Word-level diffs of two outputs, computed when the report is built (no script library in the page).

A text is split into words and single punctuation marks, each with the whitespace after it
(:func:`tokens`), so the pieces joined give the text back exactly.  :func:`word_diff` keeps the
tokens both texts start and end with, aligns the rest with :class:`difflib.SequenceMatcher` (no
junk heuristic: every token counts) and returns the diff as
``[op, text]`` pieces, adjacent pieces of the same kind merged: ``0`` kept, ``-1`` deleted (only
in the first text), ``1`` inserted (only in the second).  A replaced stretch is its deletion then
its insertion.  The page draws them as ``<del>`` and ``<ins>`` elements, every text set as text.

>>> word_diff("The capital is Paris.", "The capital is Lyon.")
[[0, 'The capital is '], [-1, 'Paris'], [1, 'Lyon'], [0, '.']]
>>> word_diff("a b c d", "a x c d")
[[0, 'a '], [-1, 'b '], [1, 'x '], [0, 'c d']]
>>> "".join(text for op, text in word_diff("a  b", "a b c") if op >= 0)
'a b c'
"""

from __future__ import annotations

import difflib
import re

__all__ = ["tokens", "word_diff"]

_TOKEN = re.compile(r"\s+|\w+\s*|[^\w\s]\s*")


def tokens(text: str) -> list[str]:
    """Words and single other characters, each with the whitespace after it (and the whitespace the
    text starts with): joined they are ``text``.

    >>> tokens(" Hi, you  2!")
    [' ', 'Hi', ', ', 'you  ', '2', '!']
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

    start = 0
    while start < min(len(a), len(b)) and a[start] == b[start]:
        start += 1
    end = 0
    while end < min(len(a), len(b)) - start and a[-1 - end] == b[-1 - end]:
        end += 1
    add(0, "".join(a[:start]))
    middle_a, middle_b = a[start : len(a) - end], b[start : len(b) - end]
    matcher = difflib.SequenceMatcher(None, middle_a, middle_b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            add(0, "".join(middle_a[i1:i2]))
        else:
            add(-1, "".join(middle_a[i1:i2]))
            add(1, "".join(middle_b[j1:j2]))
    add(0, "".join(a[len(a) - end :]))
    return pieces
