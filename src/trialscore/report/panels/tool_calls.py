"""The tool-calls panel: for agent trials that recorded tool calls, the cases whose trials took different
paths, listed by the first step where they diverge (earliest first), each with its trials' strips.

The strips and divergence steps are the case drawer's (:class:`~trialscore.report.calls.CallTable`);
``tool_calls.js`` draws them from the cases panel's data.
"""

from __future__ import annotations

from trialscore.report.context import ReportContext
from trialscore.report.panel import Built, Panel

__all__ = ["PANEL"]

#: The diverging cases listed (each case's drawer shows its own strips).
_LISTED = 100


def build(context: ReportContext) -> Built | None:
    """The diverging cases (None when no trial recorded tool calls)."""
    recorded = [
        (row, entry[9])
        for row, entry in zip(context.rows, context.trial_data, strict=True)
        if entry and entry[9]
    ]
    if not recorded:
        return None
    diverging = sorted(
        ((row, calls[1]) for row, calls in recorded if calls[1] is not None),
        key=lambda found: (found[1], found[0]["target"], found[0]["case"]),
    )
    rows = [
        {"i": row["i"], "case": row["case"], "target": row["target"], "step": step, "strip": row["strip"]}
        for row, step in diverging[:_LISTED]
    ]
    return Built({"cases": len(recorded), "diverging": len(diverging), "rows": rows})


PANEL = Panel("tool-calls", "Tool calls", "tool_calls.html.j2", build, script="tool_calls.js")
