"""The errors panel: errored trials grouped by the first line of their message, most frequent first,
with the cases they hit.  An errored trial has no outcome: it is never a failure."""

from __future__ import annotations

from typing import Any

from trialscore.report.context import ReportContext
from trialscore.report.panel import Built, Panel

__all__ = ["PANEL"]

#: The cases listed per message.
_CASES = 20


def build(context: ReportContext) -> Built:
    """The messages, their counts and the cases they hit."""
    grouped: dict[str, dict[str, None]] = {}
    counts: dict[str, int] = {}
    errored = 0
    for case in context.run.cases:
        if not case.errored:
            continue
        errored += case.errored
        label = case.case_id if case.target is None else f"{case.case_id} ({case.target})"
        messages: list[str | None] = [None] * case.errored
        if case.detailed and case.trials is not None:
            errors = case.trials.error[case.start : case.stop]
            messages = [errors[index] for index, letter in enumerate(case.verdicts) if letter == "e"]
        for message in messages:
            text = (
                (message or "").strip().splitlines()[0] if (message or "").strip() else "(no error message)"
            )
            grouped.setdefault(text, {})[label] = None
            counts[text] = counts.get(text, 0) + 1
    order = sorted(grouped, key=lambda text: (-counts[text], text))
    rows: list[dict[str, Any]] = [
        {
            "message": text,
            "count": counts[text],
            "cases": list(grouped[text])[:_CASES],
            "more": max(0, len(grouped[text]) - _CASES),
        }
        for text in order
    ]
    return Built({"rows": rows, "errored": errored})


PANEL = Panel("errors", "Errors", "errors.html.j2", build)
