r"""Small inline SVG line charts with interval bands: the report's only plotting.

A chart is one ``<svg>`` element with a ``<title>`` (its accessible name), one polyline per
series, a translucent band between each series' lows and highs, axes from 0 to 1, and a
legend.  Colours come from CSS classes (``s0``, ``s1``, ...), so the page's light and dark
themes and print style colour them.  Every text is escaped; coordinates are rounded to one
decimal, so the same series give the same bytes.

The y axis maps a value :math:`v \in [0, 1]` to :math:`y = top + (1 - v) \cdot height`.  The chart
has its size in pixels (``width`` and ``height``, at most 640 px wide: a printed page's width) and
is drawn at that size or narrower (CSS ``max-width: 100%``), never wider, and never narrower than
11/12 of it (its ``min-width``: a narrower box scrolls it), so its 12 px text is never under 11 px;
the x axis leaves room for its last label, which is never clipped.

>>> svg = line_chart([Series("pass@k", [0.5, 0.75], [0.4, 0.6], [0.6, 0.9])], ["1", "2"], "demo <1>", "k")
>>> svg.startswith("<svg") and "demo &lt;1&gt;" in svg and svg.count("<polyline") == 1
True
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from markupsafe import Markup, escape

__all__ = [
    "CHART_WIDTH",
    "CHAR_WIDTH",
    "FONT_SIZE",
    "LEGEND_ENTRY",
    "PLOT_HEIGHT",
    "PLOT_TOP",
    "Series",
    "line_chart",
    "points_of",
    "y_of",
]

#: The chart's width for a few x positions (pass@k over k), its plot height, and its text size: the
#: page shows a chart at its own size in pixels (or narrower, never wider), so its text is at least
#: ``FONT_SIZE`` * (card width / chart width) px; the narrowest card holds 334 px, so 340 keeps 11.8 px.
CHART_WIDTH, PLOT_HEIGHT, FONT_SIZE = 340, 150, 12
#: The widest chart (px): a page printed portrait on A4 or Letter paper holds it at its own size.
_MAX_WIDTH = 640.0
#: The smallest text the page shows (px): a chart is never drawn narrower than _SMALLEST / FONT_SIZE of it.
_SMALLEST = 11
#: Margins: left of the y labels, above the plot; below it the x labels, the x title and the legend.
_LEFT, PLOT_TOP = 34, 10
#: An estimate of a character's width in the chart's text (px at FONT_SIZE): wide enough for digits.
CHAR_WIDTH = 7.0
LEGEND_ENTRY = 16 * CHAR_WIDTH + 18  # a swatch and a name cut to 16 characters


@dataclass(frozen=True)
class Series:
    """One line: its name, its values (None = no point), and optionally an interval band."""

    name: str
    values: Sequence[float | None]
    lows: Sequence[float] | None = None
    highs: Sequence[float] | None = None


@dataclass(frozen=True)
class _Frame:
    """Where the plot is in the chart: its left and right edges, and the number of x positions."""

    width: float
    left: float
    right: float
    count: int

    def x(self, index: int) -> float:
        span = self.width - self.left - self.right
        return self.left + (span * index / (self.count - 1) if self.count > 1 else span / 2)


def y_of(value: float) -> float:
    """The y coordinate of a share (clipped to [0, 1]) on a chart's plot: 1 at its top.

    >>> y_of(1.0), y_of(0.0), y_of(2.0)
    (10.0, 160.0, 10.0)
    """
    return PLOT_TOP + (1.0 - min(max(value, 0.0), 1.0)) * PLOT_HEIGHT


def points_of(pairs: Sequence[tuple[float, float]]) -> str:
    """An SVG ``points`` attribute of (x, y) pairs.

    >>> points_of([(1, 2.25), (3, 4)])
    '1.0,2.2 3.0,4.0'
    """
    return " ".join(f"{x:.1f},{y:.1f}" for x, y in pairs)


def _frame(ticks: Sequence[str]) -> tuple[_Frame, int]:
    """The chart's width, its right margin and the step between labelled ticks.

    The margins hold half the first and the last label (each is centred on its position, so neither
    is clipped nor runs into the y axis' labels); the chart widens (up to :data:`_MAX_WIDTH`) so
    labels do not overlap, and past that only every ``step``-th label is shown, counted back from the
    last (the latest run is always labelled).
    """
    label = max((len(tick) for tick in ticks), default=1) * CHAR_WIDTH + 12  # a label and a gap
    left, right = max(float(_LEFT), label / 2), max(12.0, label / 2)
    count = len(ticks)
    width = min(_MAX_WIDTH, max(float(CHART_WIDTH), left + right + label * count))
    span = width - left - right
    step = max(1, math.ceil(label * (count - 1) / span)) if count > 1 else 1
    return _Frame(width, left, right, count), step


def line_chart(series: Sequence[Series], ticks: Sequence[str], title: str, x_label: str) -> Markup:
    """An SVG chart of ``series`` over the x positions ``ticks`` (values in [0, 1]), as safe markup."""
    frame, step = _frame(ticks)
    count = len(ticks)
    per_row = max(1, int((frame.width - frame.left) // LEGEND_ENTRY))
    rows = math.ceil(min(len(series), 8) / per_row)
    axis = PLOT_TOP + PLOT_HEIGHT
    height = axis + 2.6 * FONT_SIZE + 1.6 * FONT_SIZE * rows + 8
    parts = [
        f'<svg class="chart" width="{frame.width:g}" height="{height:g}" viewBox="0 0 {frame.width:g} '
        f'{height:g}" style="min-width:{math.ceil(frame.width * _SMALLEST / FONT_SIZE)}px" role="img" '
        'xmlns="http://www.w3.org/2000/svg">',
        f"<title>{escape(title)}</title>",
    ]
    for value in (0.0, 0.25, 0.5, 0.75, 1.0):
        y = y_of(value)
        parts.append(
            f'<line class="grid" x1="{frame.left:g}" x2="{frame.width - frame.right:g}" '
            f'y1="{y:.1f}" y2="{y:.1f}"/>'
        )
        parts.append(
            f'<text class="tick" x="{frame.left - 4:g}" y="{y + 4:.1f}" text-anchor="end">{value:g}</text>'
        )
    for index in range(count - 1, -1, -step):  # from the last label back, every step-th
        parts.append(
            f'<text class="tick" x="{frame.x(index):.1f}" y="{axis + 1.3 * FONT_SIZE:g}" '
            f'text-anchor="middle">{escape(ticks[index])}</text>'
        )
    parts.append(
        f'<text class="tick" x="{(frame.left + frame.width - frame.right) / 2:.1f}" '
        f'y="{axis + 2.6 * FONT_SIZE:g}" text-anchor="middle">{escape(x_label)}</text>'
    )
    for number, line in enumerate(series):
        style = f"s{number % 6}"
        kept = [(index, value) for index, value in enumerate(line.values) if value is not None]
        if line.lows is not None and line.highs is not None and kept:
            upper = [(frame.x(i), y_of(line.highs[i])) for i, _ in kept]
            lower = [(frame.x(i), y_of(line.lows[i])) for i, _ in reversed(kept)]
            parts.append(f'<polygon class="band {style}" points="{points_of(upper + lower)}"/>')
        pairs = [(frame.x(i), y_of(value)) for i, value in kept]
        parts.append(f'<polyline class="line {style}" points="{points_of(pairs)}"/>')
        parts.extend(f'<circle class="dot {style}" cx="{x:.1f}" cy="{y:.1f}" r="2.5"/>' for x, y in pairs)
        if number >= 8:  # the legend holds 8 names; the table beside the chart names every line
            continue
        legend_x = frame.left + LEGEND_ENTRY * (number % per_row)
        legend_y = axis + 4.2 * FONT_SIZE + 1.6 * FONT_SIZE * (number // per_row)
        parts.append(
            f'<rect class="key {style}" x="{legend_x:g}" y="{legend_y - 10:g}" width="10" height="10"/>'
            f'<text class="tick" x="{legend_x + 14:g}" y="{legend_y:g}">{escape(line.name[:16])}</text>'
        )
    parts.append("</svg>")
    return Markup("".join(parts))
