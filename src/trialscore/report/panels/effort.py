r"""The cost panel: which targets are worth their cost, and what a solved task costs.

Shown when the reported run's trials carry a cost.  Per target (errored trials by the report's
error policy, as every panel counts them):

* **the front**: each target's pass rate (mean over items of each item's pass rate) and cost per
  task (mean cost of a trial whose cost is known), each with its interval, on one chart (cost on a
  log axis), the targets on the observed front ringed and joined; and the probability that each is
  on the front, the share of :data:`RESAMPLES` bootstrap resamples of the shared items (seed
  :data:`SEED`) whose front holds it.  Figures, intervals and probabilities are
  :func:`~trialscore.stats.cost_success_front`'s, as ``trialscore rank --pareto`` prints them;
* **per success**: cost, latency, tokens and steps per solved trial (total over solved trials),
  with item-clustered intervals, on each target's own trials (:func:`~trialscore.stats.per_success`,
  as ``trialscore score --metric cost-per-success`` prints them).

A trial of unknown cost is never taken as free: it is left out of the cost (its success too), counted
and named; a target with no trial of known cost is named and left off the chart.  The chart maps a
pass rate :math:`v` to :math:`y` as the report's other charts do, and a cost :math:`c` to
:math:`x = left + (\log c - \log c_{lo}) / (\log c_{hi} - \log c_{lo}) \cdot width` (a linear axis
from 0 when a cost is 0).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from markupsafe import Markup, escape

from trialscore.report._numbers import number
from trialscore.report._svg import (
    CHAR_WIDTH,
    CHART_WIDTH,
    FONT_SIZE,
    LEGEND_ENTRY,
    PLOT_HEIGHT,
    PLOT_TOP,
    points_of,
    y_of,
)
from trialscore.report.panel import Built, Panel

if TYPE_CHECKING:
    from trialscore.report.context import ReportContext
    from trialscore.results.per_success import GroupTrials
    from trialscore.stats import FrontPoint
    from trialscore.stats._intervals import Interval

__all__ = ["PANEL", "RESAMPLES", "SEED", "effort_panel", "front_chart"]

#: The bootstrap behind P(on front): its resamples and seed (the page's bytes are the same each time).
RESAMPLES, SEED = 2000, 0
#: The per-success figures, their words and units, in table order.
QUANTITIES = (("cost", "USD"), ("latency", "s"), ("tokens", "tokens"), ("steps", "steps"))
#: How many trials of unknown cost a note names (the rest are counted).
NAMED = 5
#: The chart's width (the report's charts' own, so its text stays readable in the narrowest card), and
#: the least left and right margins of its plot.
_WIDTH, _LEFT, _RIGHT = float(CHART_WIDTH), 40.0, 16.0


def _bounds(interval: Interval | None, digits: int = 3) -> dict[str, str] | None:
    """An interval's figures as the page writes them."""
    if interval is None:
        return None
    return {key: number(getattr(interval, key), digits) for key in ("estimate", "low", "high")}


def _nice(value: float) -> float:
    """The least of 1, 2, 5 (times a power of ten) at least ``value``.

    >>> _nice(0.0031), _nice(0.7)
    (0.005, 1.0)
    """
    power = 10.0 ** math.floor(math.log10(value))
    return next(base * power for base in (1, 2, 5, 10) if base * power >= value)


@dataclass(frozen=True)
class _Axis:
    """The chart's cost axis: ``lo`` to ``hi`` on a log scale, or linear from 0; the plot's margins hold
    half the widest tick label, so no label is clipped."""

    lo: float
    hi: float
    log: bool
    left: float = _LEFT
    right: float = _RIGHT

    @classmethod
    def of(cls, lows: Sequence[float], highs: Sequence[float]) -> _Axis:
        lo, hi = min(lows), max(highs)
        axis = cls(lo / 1.25, hi * 1.25, True) if lo > 0 else cls(0.0, hi * 1.05 if hi > 0 else 1.0, False)
        half = max(len(number(tick, 2)) for tick in axis.ticks()) * CHAR_WIDTH / 2 + 6
        return dataclasses.replace(axis, left=max(_LEFT, half), right=max(_RIGHT, half))

    def x(self, value: float) -> float:
        span = _WIDTH - self.left - self.right
        if self.log:
            share = (math.log(value) - math.log(self.lo)) / (math.log(self.hi) - math.log(self.lo))
        else:
            share = (value - self.lo) / (self.hi - self.lo)
        return self.left + span * min(max(share, 0.0), 1.0)

    def ticks(self) -> list[float]:
        """Round values on the axis: 1-2-5 steps on a log axis (decades only when they are many); on a
        narrow log axis, and on a linear one, even steps of a round size."""
        if self.log:
            found = [
                base * 10.0**power
                for power in range(math.floor(math.log10(self.lo)), math.ceil(math.log10(self.hi)) + 1)
                for base in (1, 2, 5)
            ]
            inside = [value for value in found if self.lo <= value <= self.hi]
            if len(inside) > 6:
                inside = [value for value in inside if f"{value:.0e}".startswith("1")]
            if len(inside) >= 2:
                return inside
        step = _nice((self.hi - self.lo) / 4)
        return [index * step for index in range(math.ceil(self.lo / step), math.floor(self.hi / step) + 1)]


def _line(cls: str, x1: float, y1: float, x2: float, y2: float) -> str:
    return f'<line class="{cls}" x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}"/>'


def _text(x: float, y: float, text: str, anchor: str = "middle") -> str:
    return f'<text class="tick" x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}">{escape(text)}</text>'


def front_chart(points: Sequence[FrontPoint], title: str) -> Markup:
    """An SVG chart of each target's pass rate (y, 0 to 1) against its cost per task (x), both intervals
    as bars, the observed front ringed and joined cheapest first, as safe markup."""
    axis = _Axis.of([p.cost_per_task.low for p in points], [p.cost_per_task.high for p in points])
    left, right = axis.left, _WIDTH - axis.right
    per_row = max(1, int((_WIDTH - left) // LEGEND_ENTRY))
    bottom = PLOT_TOP + PLOT_HEIGHT
    height = bottom + 2.6 * FONT_SIZE + 1.6 * FONT_SIZE * math.ceil(min(len(points), 8) / per_row) + 8
    parts = [
        f'<svg class="chart front" width="{_WIDTH:g}" height="{height:g}" '
        f'viewBox="0 0 {_WIDTH:g} {height:g}" role="img" xmlns="http://www.w3.org/2000/svg">',
        f"<title>{escape(title)}</title>",
    ]
    for share in (0.0, 0.5, 1.0):
        parts += [
            _line("grid", left, y_of(share), right, y_of(share)),
            _text(left - 4, y_of(share) + 4, f"{share:g}", "end"),
        ]
    for tick in axis.ticks():
        x = axis.x(tick)
        parts += [_line("grid", x, PLOT_TOP, x, bottom), _text(x, bottom + 1.3 * FONT_SIZE, number(tick, 2))]
    scale = ", log scale" if axis.log else ""
    parts.append(_text((left + right) / 2, bottom + 2.6 * FONT_SIZE, f"cost per task (USD{scale})"))
    front = sorted((p for p in points if p.on_front), key=lambda p: p.cost_per_task.estimate)
    joined = points_of([(axis.x(p.cost_per_task.estimate), y_of(p.pass_rate.estimate)) for p in front])
    parts.append(f'<polyline class="front-line grid" stroke-dasharray="4 3" fill="none" points="{joined}"/>')
    for index, point in enumerate(points):
        style = f"line s{index % 6}"
        rate, cost = point.pass_rate, point.cost_per_task
        x, y = axis.x(cost.estimate), y_of(rate.estimate)
        parts += [
            f'<g class="target"><title>{escape(point.target)}</title>',
            _line(style, x, y_of(rate.low), x, y_of(rate.high)),
            _line(style, axis.x(cost.low), y, axis.x(cost.high), y),
            f'<circle class="dot s{index % 6}" cx="{x:.1f}" cy="{y:.1f}" r="3"/>',
            f'<circle class="ring {style}" cx="{x:.1f}" cy="{y:.1f}" r="6.5"/>' if point.on_front else "",
            "</g>",
        ]
        if index >= 8:  # the legend holds 8 names; the table under the chart names every target
            continue
        legend_x = left + LEGEND_ENTRY * (index % per_row)
        legend_y = bottom + 4.2 * FONT_SIZE + 1.6 * FONT_SIZE * (index // per_row)
        parts.append(
            f'<rect class="key s{index % 6}" x="{legend_x:g}" y="{legend_y - 10:g}" width="10" height="10"/>'
            + _text(legend_x + 14, legend_y, point.target[:16], "start")
        )
    parts.append("</svg>")
    return Markup("".join(parts))


def _target_trials(context: ReportContext) -> dict[str, GroupTrials]:
    """Each target's trials of the reported run, a row each (errored trials by the error policy)."""
    from trialscore.results.per_success import FIELDS, GroupTrials

    trials = context.run.trials
    assert trials is not None
    counted = context.grouper(context.run, "target")
    every = context.settings.errors == "fail"
    rows: dict[str, tuple[list[object], list[int], list[int]]] = {}
    for case in context.run.cases:
        items, order, picked = rows.setdefault(case.target or "—", ([], [], []))
        start, stop = case.start, case.stop
        if every or "e" not in case.verdicts:  # every trial of the case
            items.extend([case.case_id] * (stop - start))
            order.extend(trials.trial[start:stop])
            picked.extend(range(start, stop))
            continue
        for index in range(start, stop):
            if trials.verdicts[index] != "e":
                items.append(case.case_id)
                order.append(trials.trial[index])
                picked.append(index)
    letters = np.frombuffer(trials.verdicts.encode("ascii"), dtype=np.uint8)
    out = {}
    for name, (items, order, picked) in rows.items():
        where = np.array(picked, dtype=np.int64)
        out[name] = GroupTrials(
            counts=counted[name],
            items=items,
            trial=order,
            passed=(letters[where] == ord("p")).astype(np.int64),
            values={field: getattr(trials, field)[where] for field in FIELDS},
        )
    return out


def _unknown_note(name: str, group: GroupTrials, positions: Sequence[int]) -> str:
    """``name: 2 trials of unknown cost left out (never taken as free): q1 trial 0, q3 trial 2``."""
    named = group.named(positions, NAMED)
    more = len(positions) - len(named)
    return (
        f"{name}: {len(positions)} trial{'s' * (len(positions) != 1)} of unknown cost left out of the cost "
        f"(never taken as free): {', '.join(named)}" + (f" and {more} more" if more > 0 else "")
    )


def _per_success_rows(groups: dict[str, GroupTrials], level: float) -> tuple[list[str], list[dict[str, Any]]]:
    """The per-success table: the quantities some trial reports, and per target each figure or why not."""
    from trialscore.errors import InsufficientDataError
    from trialscore.stats import per_success

    shown = [
        (field, unit)
        for field, unit in QUANTITIES
        if any(np.isfinite(group.values[field]).any() for group in groups.values())
    ]
    rows = []
    for name, group in groups.items():
        cells: list[dict[str, Any]] = []
        for field, _ in shown:
            try:
                figure = per_success(
                    group.items, group.passed, group.values[field], quantity=field, level=level
                )
            except InsufficientDataError as exc:
                cells.append({"reason": str(exc)})
                continue
            interval = figure.interval
            cells.append(
                {"figure": _bounds(interval), "method": interval.method, "unknown": figure.unknown_trials}
            )
        rows.append({"target": name, "cells": cells})
    return [f"{field} per success ({unit})" for field, unit in shown], rows


def effort_panel(context: ReportContext) -> dict[str, Any] | None:
    """The panel's model (None when no trial of the reported run has a known cost)."""
    from trialscore.errors import InsufficientDataError
    from trialscore.results.per_success import totals_of
    from trialscore.stats import cost_success_front

    if context.run.trials is None or not np.isfinite(context.run.trials.cost).any():
        return None
    level = context.settings.level
    groups = _target_trials(context)
    totals = {name: totals_of(group, "cost") for name, group in groups.items()}
    priced = {name: own for name, own in totals.items() if int(own.trials.sum()) > 0}
    notes = [
        _unknown_note(name, groups[name], own.unknown_positions)
        for name, own in priced.items()
        if own.unknown_trials
    ]
    notes += [
        f"{name}: no trial has a known cost: left off the chart (never taken as free)"
        for name in totals
        if name not in priced
    ]
    points: list[FrontPoint] = []
    front = None
    if len(priced) < 2:
        notes.append("a front needs at least 2 targets with a known cost; this run has " + ", ".join(priced))
    else:
        try:
            front = cost_success_front(priced, level=level, replicates=RESAMPLES, seed=SEED)
        except InsufficientDataError as exc:
            notes.append(f"no front: {exc}")
        else:
            points = sorted(front.points, key=lambda p: (p.cost_per_task.estimate, -p.pass_rate.estimate))
    header, rows = _per_success_rows(groups, level)
    return {
        "level": level,
        "svg": front_chart(points, "pass rate against cost per task, the front ringed") if points else None,
        "points": [
            {
                "target": p.target,
                "rate": _bounds(p.pass_rate),
                "cost": _bounds(p.cost_per_task),
                "on_front": p.on_front,
                "p": f"{p.front_probability:.3f}",
            }
            for p in points
        ],
        "shared": None if front is None else front.items,
        "dropped": None if front is None else front.items_dropped,
        "method": None if front is None else front.method,
        "rate_method": points[0].pass_rate.method if points else None,
        "cost_method": points[0].cost_per_task.method if points else None,
        "per_success_header": header,
        "per_success": rows,
        "notes": notes,
    }


def build(context: ReportContext) -> Built | None:
    """The panel (None when the run's trials carry no cost)."""
    found = effort_panel(context)
    return None if found is None else Built(found)


PANEL = Panel("cost", "Cost", "effort.html.j2", build)
