"""The report's panels, in page order: the one place a panel is registered.

Each entry is a :class:`~trialscore.report.panel.Panel` of its own module (see that module for
what a panel is, and docs/report.md, "Adding a panel").  A panel whose ``build`` gives None (no
baseline, a single run, no tool calls) is left out of the page and its navigation.
"""

from __future__ import annotations

from trialscore.report.panel import Panel
from trialscore.report.panels import (
    against,
    cases,
    curves,
    effort,
    errors,
    flaky,
    headline,
    judges,
    tool_calls,
    trends,
)

__all__ = ["PANELS"]

PANELS: tuple[Panel, ...] = (
    headline.PANEL,
    cases.PANEL,
    flaky.PANEL,
    curves.PANEL,
    against.PANEL,
    judges.PANEL,
    tool_calls.PANEL,
    effort.PANEL,
    errors.PANEL,
    trends.PANEL,
)
