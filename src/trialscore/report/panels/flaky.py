"""The flaky-cases panel: cases that passed some trials and failed others, the most uncertain first
(the width of their pass rate's interval: near 50% and few trials first)."""

from __future__ import annotations

from trialscore.report.context import ReportContext
from trialscore.report.panel import Built, Panel

__all__ = ["PANEL"]

#: The most flaky cases listed (the cases table filters them all).
_LISTED = 50


def build(context: ReportContext) -> Built:
    """The flaky cases, ranked by the width of their interval."""
    flaky = sorted(
        (row for row in context.rows if row["state"] == "flaky"),
        key=lambda r: (-r["width"], r["case"], r["target"]),
    )
    return Built({"rows": flaky[:_LISTED], "total": len(flaky)})


PANEL = Panel("flaky", "Flaky", "flaky.html.j2", build)
