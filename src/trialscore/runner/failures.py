"""What went wrong in a run: errored trials grouped by message, and costs printed honestly.

An errored trial (the target or a grader could not give a verdict) is never a failed trial: it is
left out of every metric.  So a run whose every trial errored has no metric at all, and the only
useful output is *why*: :func:`error_summary` groups the error messages (with their volatile parts,
such as ports, process ids, temporary paths and durations, replaced by placeholders) and counts
them, with the targets and cases each group hit.  ``summary.json`` carries it as ``errors``, the
terminal prints it after the run table, and ``trialscore run`` exits with status 3 when no trial
could be graded.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from typing import Any

from rich.console import Console
from rich.markup import escape

from trialscore._words import plural
from trialscore.results.records import TrialRecord

__all__ = [
    "MAX_GROUPS",
    "ErrorTally",
    "error_summary",
    "format_usd",
    "normalise_error",
    "print_errors",
    "total_usd",
]

#: The most error groups kept in ``summary.json`` (the rest are counted in ``groups_left_off``).
MAX_GROUPS = 50
#: The most groups and case ids the terminal lists.
_SHOWN_GROUPS, _SHOWN_CASES = 8, 6

_VOLATILE = [
    (re.compile(r"\b\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d)?"), "<time>"),
    (re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.I), "<uuid>"),
    (re.compile(r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{12,}\b", re.I), "<hex>"),
    (re.compile(r"\b\d+\.\d+(?=\s?(?:s|ms|seconds?)\b)"), "<n>"),
    (re.compile(r"\b\d{5,}\b"), "<n>"),
]


def normalise_error(message: str) -> str:
    """An error message with its volatile parts replaced, so that like errors group together.

    Replaced: timestamps, UUIDs, long hex ids, durations (``0.52 s``) and numbers of 5 or more
    digits (ports, process and request ids).  HTTP statuses, exit statuses, attempt counts and
    paths stay: they tell errors apart.

    >>> normalise_error("target 'a': HTTP 404 (request 5f0c2a9e71b3d8aa, pid 48211) after 0.52 s")
    "target 'a': HTTP 404 (request <hex>, pid <n>) after <n> s"
    """
    for pattern, placeholder in _VOLATILE:
        message = pattern.sub(placeholder, message)
    return message


def error_summary(
    records: Iterable[TrialRecord], case_order: Sequence[str] = (), max_groups: int = MAX_GROUPS
) -> dict[str, Any]:
    """The ``errors`` section of ``summary.json``: how many trials errored, and why, grouped.

    ``groups`` holds ``{message, count, targets, cases}`` (most frequent first; ``cases`` are the
    case ids hit, in ``case_order``, the suite's, then in first-seen order), at most ``max_groups``
    of them; ``groups_left_off`` and ``trials_left_off`` count the rest.  ``all_errored`` is true
    when trials were stored and none could be graded.

    >>> from trialscore.results.records import TrialRecord
    >>> def trial(case, error):
    ...     return TrialRecord(case_id=case, trial=0, target="t", passed=None, verdict="error", error=error)
    >>> summary = error_summary([trial("a", "HTTP 404 (pid 40001)"), trial("b", "HTTP 404 (pid 40002)")])
    >>> summary["errored_trials"], summary["all_errored"], summary["groups"][0]
    (2, True, {'message': 'HTTP 404 (pid <n>)', 'count': 2, 'targets': ['t'], 'cases': ['a', 'b']})
    """
    tally = ErrorTally()
    for record in records:
        tally.add(record)
    return tally.summary(case_order, max_groups)


class ErrorTally:
    """Errored trials grouped by normalised message as they come (:func:`error_summary`, kept up to
    date): memory grows with the kinds of error and the cases they hit, not with the trials."""

    def __init__(self) -> None:
        self.stored = 0
        self.errored = 0
        self._groups: dict[str, dict[str, Any]] = {}

    def add(self, record: TrialRecord) -> None:
        """Count one finished trial."""
        self.stored += 1
        if not record.errored:
            return
        self.errored += 1
        message = normalise_error(record.error or "no error message")
        group = self._groups.setdefault(message, {"message": message, "count": 0, "targets": {}, "cases": {}})
        group["count"] += 1
        group["targets"][record.target or ""] = None
        group["cases"][record.case_id] = None

    def summary(self, case_order: Sequence[str] = (), max_groups: int = MAX_GROUPS) -> dict[str, Any]:
        """The ``errors`` section of ``summary.json`` (see :func:`error_summary`)."""
        ordered = sorted(self._groups.values(), key=lambda group: -group["count"])
        rank = {case_id: index for index, case_id in enumerate(case_order)}
        kept = [
            {
                **group,
                "targets": list(group["targets"]),
                "cases": sorted(group["cases"], key=lambda case_id: rank.get(case_id, len(rank))),
            }
            for group in ordered[:max_groups]
        ]
        return {
            "errored_trials": self.errored,
            "stored_trials": self.stored,
            "all_errored": self.stored > 0 and self.errored == self.stored,
            "groups": kept,
            "groups_left_off": len(ordered) - len(kept),
            "trials_left_off": sum(group["count"] for group in ordered[max_groups:]),
        }


def _listed(items: Iterable[str], limit: int) -> str:
    items = list(items)
    shown = ", ".join(items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


def print_errors(errors: dict[str, Any], console: Console) -> None:
    """Print the ``errors`` section: a headline, then each group with its count, targets and cases."""
    if not errors["errored_trials"]:
        return
    if errors["all_errored"]:
        head = f"[red]every trial errored ({errors['errored_trials']}): no trial could be graded[/red]"
    else:
        stored = plural(errors["stored_trials"], "trial")
        head = f"[yellow]{errors['errored_trials']} of {stored} errored[/yellow]"
    console.print(f"errors: {head}", highlight=False, soft_wrap=True)
    for group in errors["groups"][:_SHOWN_GROUPS]:
        console.print(f"  {group['count']} x {escape(group['message'])}", highlight=False, soft_wrap=True)
        targets, cases = group["targets"], group["cases"]
        console.print(
            f"      {'target' if len(targets) == 1 else 'targets'} {escape(_listed(targets, _SHOWN_CASES))}; "
            f"{'case' if len(cases) == 1 else 'cases'} {escape(_listed(cases, _SHOWN_CASES))}",
            highlight=False,
            soft_wrap=True,
        )
    hidden = len(errors["groups"]) - _SHOWN_GROUPS + errors["groups_left_off"]
    if hidden > 0:
        more = plural(hidden, "more kind", "more kinds")
        console.print(f"  ... and {more} of error (see summary.json and trials.jsonl)", highlight=False)


def total_usd(value: float | None) -> float | None:
    """A summed cost as written to JSON: 12 significant digits, which drop the float noise of the sum
    and keep every digit a price has (a sum of n costs is off by about n times 1e-16 of it).

    >>> total_usd(0.06933389999999988), total_usd(0.1 + 0.2), total_usd(1.5e-7), total_usd(None)
    (0.0693339, 0.3, 1.5e-07, None)
    """
    return None if value is None or not math.isfinite(value) else float(f"{value:.12g}")


def format_usd(value: float | None, unknown: str = "unknown") -> str:
    """A cost in US dollars that never rounds a spend to zero and never shows an unknown cost as one.

    Four decimals from one cent up; below, two significant digits (down to a millionth of a
    dollar, then ``<$0.000001``); exactly zero as ``$0``; None (unknown) as ``unknown``.

    >>> [format_usd(v) for v in (12.3456, 0.0123, 0.00042, 4.2e-6, 1e-9, 0.0, None)]
    ['$12.3456', '$0.0123', '$0.00042', '$0.0000042', '<$0.000001', '$0', 'unknown']
    """
    if value is None or not math.isfinite(value):
        return unknown
    if value == 0:
        return "$0"
    if value >= 0.01:
        return f"${value:.4f}"
    if value < 1e-6:
        return "<$0.000001"
    digits = 1 - math.floor(math.log10(value))
    return f"${value:.{digits}f}"
