"""Running part of a suite: the cases whose id matches a glob pattern, or whose category is named.

``trialscore run --case 'math-*' --case geo-3 --category algebra`` keeps a case when its id
matches any ``--case`` pattern (:func:`fnmatch.fnmatchcase`: ``*``, ``?``, ``[seq]``, case
sensitive) **and** its category is any ``--category`` name; an option not given selects every
case.  A pattern or a category that selects no case is an error (a typo must not run nothing,
or everything): the message lists what the suite has.

The selection is stored with the run (its ``settings``), so a resumed run keeps it.

>>> from trialscore.runner.suite import Suite
>>> suite = Suite.from_mapping({
...     "name": "s", "targets": [{"name": "t", "type": "command", "argv": ["cat"]}],
...     "graders": [{"type": "exact", "value": "ok"}],
...     "cases": [{"id": "add-1", "input": "1+1", "category": "math"},
...               {"id": "add-2", "input": "2+2", "category": "math"},
...               {"id": "capital", "input": "France?", "category": "geo"}]})
>>> [case.id for case in selected_suite(suite, ["add-*"], None).cases]
['add-1', 'add-2']
>>> [case.id for case in selected_suite(suite, None, ["geo"]).cases]
['capital']
>>> selected_suite(suite, ["sub-*"], None)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
trialscore.errors.EvaluationError: case pattern 'sub-*' matches no case id of suite 's' (3 cases: add-1, ...)
"""

from __future__ import annotations

from collections.abc import Sequence
from fnmatch import fnmatchcase
from typing import Any

from trialscore.errors import EvaluationError
from trialscore.runner.suite import CaseSpec, Suite

__all__ = ["selected_cases", "selected_suite", "selection_settings"]

_SHOWN = 10


def _listing(names: Sequence[str], what: str) -> str:
    unique = list(dict.fromkeys(names))
    shown = ", ".join(unique[:_SHOWN]) + (", ..." if len(unique) > _SHOWN else "")
    return f"{len(unique)} {what}: {shown}" if unique else f"no {what}"


def selected_cases(
    suite: Suite, patterns: Sequence[str] | None, categories: Sequence[str] | None
) -> tuple[CaseSpec, ...]:
    """The suite's cases matching any of ``patterns`` (None: all) and in any of ``categories`` (None: all).

    Raises
    ------
    EvaluationError
        When a pattern or a category selects no case, or the two together select none.
    """
    cases = suite.cases
    for pattern in patterns or ():
        if not any(fnmatchcase(case.id, pattern) for case in cases):
            raise EvaluationError(
                f"case pattern {pattern!r} matches no case id of suite {suite.name!r} "
                f"({_listing([case.id for case in cases], 'cases')})"
            )
    for name in categories or ():
        if not any(case.category == name for case in cases):
            raise EvaluationError(
                f"category {name!r} is not a category of suite {suite.name!r} "
                f"({_listing([case.category for case in cases if case.category], 'categories')})"
            )
    chosen = tuple(
        case
        for case in cases
        if (not patterns or any(fnmatchcase(case.id, pattern) for pattern in patterns))
        and (not categories or case.category in categories)
    )
    if not chosen:
        raise EvaluationError(
            f"no case of suite {suite.name!r} matches both case patterns {list(patterns or ())} "
            f"and categories {list(categories or ())}"
        )
    return chosen


def selected_suite(suite: Suite, patterns: Sequence[str] | None, categories: Sequence[str] | None) -> Suite:
    """``suite`` with only the selected cases (itself when nothing is selected); same digest and text."""
    if not patterns and not categories:
        return suite
    return suite.model_copy(update={"cases": selected_cases(suite, patterns, categories)})


def selection_settings(
    suite: Suite, patterns: Sequence[str] | None, categories: Sequence[str] | None
) -> dict[str, Any]:
    """The run settings that record a selection (checked now: a selection of nothing is refused)."""
    if not patterns and not categories:
        return {}
    selected_cases(suite, patterns, categories)
    return {
        "cases": list(patterns) if patterns else None,
        "categories": list(categories) if categories else None,
    }
