"""Words of messages: counted nouns (``1 item``, ``2 items``, never ``1 items`` nor ``item(s)``), and the
nearest known name to a mistyped one."""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["all_of", "did_you_mean", "plural"]


def plural(count: int, noun: str, many: str | None = None) -> str:
    """``count`` and ``noun``, in the plural (``many``, default ``noun + "s"``) unless ``count`` is 1.

    >>> plural(1, "item"), plural(3, "item"), plural(0, "category", "categories")
    ('1 item', '3 items', '0 categories')
    """
    return f"{count} {noun if count == 1 else many or noun + 's'}"


def all_of(count: int, noun: str, many: str | None = None) -> str:
    """``all 3 trials``, or ``the 1 trial`` (never ``all 1 trials``).

    >>> all_of(3, "trial"), all_of(1, "trial")
    ('all 3 trials', 'the 1 trial')
    """
    return f"{'the' if count == 1 else 'all'} {plural(count, noun, many)}"


def did_you_mean(word: object, known: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the known name nearest ``word``, or nothing when none is near.

    >>> did_you_mean("wilsn", ["wilson", "jeffreys"]), did_you_mean("zzz", ["wilson"])
    (" (did you mean 'wilson'?)", '')
    """
    import difflib

    near = difflib.get_close_matches(str(word).strip().lower(), list(known), n=1, cutoff=0.6)
    return f" (did you mean {near[0]!r}?)" if near else ""
