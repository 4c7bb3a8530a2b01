"""The trends panel: pass@1 per category over the runs with the trend ``track`` tests, and a case x run
heat map of pass rates.

The trend is :func:`trialscore.compat.tracking.track_category`'s (with two runs the latest against
the one before, paired on shared cases; with three or more every run counts), per category, per
target and category when the runs hold several targets, per suite too when they span suites.  The
heat map has a row per (target, case) of any run and a column per run (its date, or its place),
each cell that case's pass rate in that run (passed/n under the error policy; empty when the case
is not in the run), the rows grouped as the trends are, each group with its tested trend.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from typing import Any

from trialscore.report._numbers import number, signed
from trialscore.report._svg import Series, line_chart
from trialscore.report.context import TARGET_CATEGORY, ReportContext, counted_n, group_name
from trialscore.report.panel import Built, Panel
from trialscore.report.runs import RunData

__all__ = ["PANEL"]


def _trend_by(runs: Sequence[RunData]) -> str:
    """How trends are grouped: per target and category when the runs hold several targets."""
    targets = {case.target for run in runs for case in run.cases}
    return TARGET_CATEGORY if len(targets) > 1 else "category"


def _trends(context: ReportContext, dates: list[date | None]) -> dict[str, Any]:
    """pass@1 per group in each dated run and the trend of each group."""
    from trialscore.compat.tracking import track_category

    runs, settings = context.runs, context.settings
    if any(when is None for when in dates):
        return {
            "note": "trends need a date per run: give each run's date, or runs whose trials record started_at"
        }
    by = _trend_by(runs)
    suites = {run.suite for run in runs}
    history: dict[str, list[tuple[date, Any]]] = {}
    for run, when in zip(runs, dates, strict=True):
        assert when is not None
        prefix = f"{run.suite or '—'} · " if len(suites) > 1 else ""  # suites are never pooled either
        for name, group in context.grouper(run, by).items():
            if group.items:
                history.setdefault(prefix + name, []).append((when, group.bank()))
    ticks = sorted({when.isoformat() for when in dates if when is not None})
    rows, series = [], []
    for name, points in sorted(history.items()):
        snapshot = track_category(name, points, ks=[1], alpha=settings.alpha)
        by_day = {when.isoformat(): float(bank.c.sum() / bank.n.sum()) for when, bank in points}
        series.append(Series(name, [by_day.get(tick) for tick in ticks]))
        comparison = snapshot.comparison
        rows.append(
            {
                "name": name,
                "points": [number(by_day.get(tick)) for tick in ticks],
                "trend": snapshot.trend,
                "delta": "—" if comparison is None else signed(comparison.delta, 3),
                "p": "—" if comparison is None else number(comparison.p_value),
                "rule": snapshot.rule,
            }
        )
    return {
        "ticks": ticks,
        "rows": rows,
        "rules": list(dict.fromkeys(row["rule"] for row in rows)),
        "svg": line_chart(series, ticks, "pass@1 per category over runs", "run date"),
    }


def _heat(context: ReportContext, dates: list[date | None], trends: dict[str, Any]) -> dict[str, Any]:
    """The heat map's data: runs, groups with their trend, and each case's (passed, n) per run."""
    runs, errors = context.runs, context.settings.errors
    by = _trend_by(runs)
    trend = {row["name"]: row["trend"] for row in trends.get("rows", [])}
    cells: dict[tuple[str, str, str], list[Any]] = {}
    for column, run in enumerate(runs):
        for case in run.cases:
            key = (group_name(case, by) or "—", case.target or "", case.case_id)
            row = cells.setdefault(key, [None] * len(runs))
            row[column] = [case.passed, counted_n(case, errors)]
    groups: list[list[Any]] = []
    for (name, target, case_id), row in sorted(cells.items()):
        if not groups or groups[-1][0] != name:
            groups.append([name, trend.get(name), []])
        groups[-1][2].append([case_id, target, row])
    columns = [
        [when.isoformat() if when is not None else None, run.run_id or run.label]
        for when, run in zip(dates, runs, strict=True)
    ]
    return {"runs": columns, "groups": groups}


def build(context: ReportContext) -> Built | None:
    """The trends and the heat map (None with a single run)."""
    if len(context.runs) < 2:
        return None
    dates = [context.run_date(index) for index in range(len(context.runs))]
    trends = _trends(context, dates)
    heat = _heat(context, dates, trends)
    cases = sum(len(group[2]) for group in heat["groups"])
    return Built({"trends": trends, "runs": len(context.runs), "cases": cases}, heat)


PANEL = Panel("trends", "Trends", "trends.html.j2", build, script="trends.js")
