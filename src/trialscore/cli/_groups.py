"""Groups a command can judge and groups it cannot: every grouping command judges the first and names
the second with its reason, instead of stopping at the first small group.

A group is *not tested* when its data are valid but too small for the figure
(:class:`~trialscore.errors.InsufficientDataError`: one case in a category, fewer trials than k, every
trial errored); any other error is bad input and stops the command.

>>> from trialscore.errors import InsufficientDataError
>>> def paired(cases):
...     if cases < 2:
...         raise InsufficientDataError("share 1 item", unit="items", needed=2, got=cases)
...     return cases
>>> judged, untested = judge_each([("a", {"category": "a"}, lambda: paired(5)),
...                                ("b", {"category": "b"}, lambda: paired(1))])
>>> judged, [u.line() for u in untested]
([('a', {'category': 'a'}, 5)], ['b: not tested: 1 case in both runs; the paired test needs at least 2'])
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from trialscore._words import plural
from trialscore.cli._options import error_text
from trialscore.errors import InsufficientDataError

__all__ = ["Untested", "judge_each", "reason"]

T = TypeVar("T")


def reason(error: InsufficientDataError) -> str:
    """What was too small, in the command line's words (the library's message where it says it best)."""
    if error.got is None or error.needed is None:
        return error_text(error)
    if error.unit == "items":
        return f"{plural(error.got, 'case')} in both runs; the paired test needs at least {error.needed}"
    if error.unit == "pilot items":
        return (
            f"{plural(error.got, 'case')} in the pilot; a plan needs at least {error.needed} to estimate "
            "how much cases differ"
        )
    if error.unit == "trials":
        case = "" if error.item is None else f", case {error.item!r}"
        return (
            f"needs {error.needed} scored trials of every case; the fewest is {error.got}{case} "
            "(errored trials do not count)"
        )
    return error_text(error)


@dataclass(frozen=True)
class Untested:
    """A group a command could not judge, and why."""

    label: str
    group: Mapping[str, Any]
    reason: str

    def line(self) -> str:
        """``label: not tested: reason``."""
        return f"{self.label}: not tested: {self.reason}"

    def to_dict(self) -> dict[str, Any]:
        """The JSON entry: ``{"group", "label", "verdict": "not tested", "reason"}``."""
        return {
            "group": dict(self.group),
            "label": self.label,
            "verdict": "not tested",
            "reason": self.reason,
        }


def judge_each(
    groups: Iterable[tuple[str, Mapping[str, Any], Callable[[], T]]],
) -> tuple[list[tuple[str, Mapping[str, Any], T]], list[Untested]]:
    """Run each group's judgement; a group too small for it is set aside with its reason."""
    judged: list[tuple[str, Mapping[str, Any], T]] = []
    untested: list[Untested] = []
    for label, group, judge in groups:
        try:
            judged.append((label, group, judge()))
        except InsufficientDataError as exc:
            untested.append(Untested(label, group, reason(exc)))
    return judged, untested
