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
from collections.abc import Sequence

__all__ = ["token_diff", "tokens", "word_diff"]

_TOKEN = re.compile(r"\s+|\w+\s*|[^\w\s]\s*")


def tokens(text: str) -> list[str]:
    """Words and single other characters, each with the whitespace after it (and the whitespace the
    text starts with): joined they are ``text``.

    >>> tokens(" Hi, you  2!")
    [' ', 'Hi', ', ', 'you  ', '2', '!']
    """
    return _TOKEN.findall(text)


def _alike(a: str, b: str, backwards: bool = False) -> int:
    """How many characters ``a`` and ``b`` start with alike (``backwards``: end with), found by halves.

    >>> _alike("the cat", "the dog"), _alike("a cat", "one cat", backwards=True)
    (4, 4)
    """
    low, high = 0, min(len(a), len(b))
    while low < high:  # the first (last) ``low`` characters are alike, none past ``high``
        middle = (low + high + 1) // 2
        if backwards:
            same = a[len(a) - middle : len(a) - low] == b[len(b) - middle : len(b) - low]
        else:
            same = a[low:middle] == b[low:middle]
        low, high = (middle, high) if same else (low, middle - 1)
    return low


def _starts_word(text: str, place: int) -> bool:
    """Whether a word starts at ``place`` after whitespace: a token starts there, whatever the text
    around it (the tokens of ``text[place:]`` are those of ``text`` from there)."""
    return text[place - 1].isspace() and not text[place].isspace()


def word_diff(before: str, now: str) -> list[list[int | str]]:
    """The word-level diff of ``before`` and ``now`` as ``[op, text]`` pieces (see the module docstring).

    The texts' common start and end are cut at the last (first) place within them where a word starts
    after whitespace, and only the rest is split into tokens: the tokens there are the whole texts'.
    """
    alike = _alike(before, now)
    head = next((place for place in range(alike - 1, 0, -1) if _starts_word(before, place)), 0)
    rest_a, rest_b = before[head:], now[head:]
    alike = _alike(rest_a, rest_b, backwards=True)
    size = len(rest_a)
    tail = next((size - place for place in range(size - alike + 1, size) if _starts_word(rest_a, place)), 0)
    a, b = tokens(rest_a[: size - tail]), tokens(rest_b[: len(rest_b) - tail])
    # The rests' common leading tokens never run on into their common end: the texts after them differ
    # (else a word would start within the common start after ``head``, the last that does).
    return token_diff(a, b, before[:head], rest_a[size - tail :])


def token_diff(a: Sequence[str], b: Sequence[str], lead: str = "", trail: str = "") -> list[list[int | str]]:
    """The diff of the token lists ``a`` and ``b`` as ``[op, text]`` pieces, pieces of one kind merged:
    their common leading and trailing tokens kept, the rest aligned by difflib; ``lead`` and ``trail``,
    text both share, go before and after.

    >>> token_diff(["x ", "y ", "z"], ["x ", "y ", "y ", "z"])
    [[0, 'x y '], [1, 'y '], [0, 'z']]
    """
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
    add(0, lead + "".join(a[:start]))
    middle_a, middle_b = a[start : len(a) - end], b[start : len(b) - end]
    matcher = difflib.SequenceMatcher(None, middle_a, middle_b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            add(0, "".join(middle_a[i1:i2]))
        else:
            add(-1, "".join(middle_a[i1:i2]))
            add(1, "".join(middle_b[j1:j2]))
    add(0, "".join(a[len(a) - end :]) + trail)
    return pieces
