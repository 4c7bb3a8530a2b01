r"""Small inline SVG line charts with interval bands: the report's only plotting.

A chart is one ``<svg>`` element with a ``<title>`` (its accessible name), one polyline per
series, a translucent band between each series' lows and highs, axes from 0 to 1, and a
legend.  Colours come from CSS classes (``s0``, ``s1``, ...), so the page's light and dark
themes and print style colour them.  Every text is escaped; coordinates are rounded to one
decimal, so the same series give the same bytes.

The y axis maps a value :math:`v \in [0, 1]` to :math:`y = top + (1 - v) \cdot height`.

>>> svg = line_chart([Series("pass@k", [0.5, 0.75], [0.4, 0.6], [0.6, 0.9])], ["1", "2"], "demo <1>", "k")
>>> svg.startswith("<svg") and "demo &lt;1&gt;" in svg and svg.count("<polyline") == 1
True
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from markupsafe import Markup, escape

__all__ = ["Series", "line_chart"]

_WIDTH, _HEIGHT = 460, 236
_LEFT, _RIGHT, _TOP, _BOTTOM = 40, 12, 12, 68


@dataclass(frozen=True)
class Series:
    """One line: its name, its values (None = no point), and optionally an interval band."""

    name: str
    values: Sequence[float | None]
    lows: Sequence[float] | None = None
    highs: Sequence[float] | None = None


def _x(index: int, count: int) -> float:
    span = _WIDTH - _LEFT - _RIGHT
    return _LEFT + (span * index / (count - 1) if count > 1 else span / 2)


def _y(value: float) -> float:
    return _TOP + (1.0 - min(max(value, 0.0), 1.0)) * (_HEIGHT - _TOP - _BOTTOM)


def _points(pairs: Sequence[tuple[float, float]]) -> str:
    return " ".join(f"{x:.1f},{y:.1f}" for x, y in pairs)


def line_chart(series: Sequence[Series], ticks: Sequence[str], title: str, x_label: str) -> Markup:
    """An SVG chart of ``series`` over the x positions ``ticks`` (values in [0, 1]), as safe markup."""
    count = len(ticks)
    parts = [
        f'<svg class="chart" viewBox="0 0 {_WIDTH} {_HEIGHT}" role="img" xmlns="http://www.w3.org/2000/svg">',
        f"<title>{escape(title)}</title>",
    ]
    for value in (0.0, 0.25, 0.5, 0.75, 1.0):
        y = _y(value)
        parts.append(f'<line class="grid" x1="{_LEFT}" x2="{_WIDTH - _RIGHT}" y1="{y:.1f}" y2="{y:.1f}"/>')
        parts.append(f'<text class="tick" x="{_LEFT - 4}" y="{y + 3:.1f}" text-anchor="end">{value:g}</text>')
    step = max(1, count // 12)
    for index, tick in enumerate(ticks):
        if index % step == 0 or index == count - 1:
            x = _x(index, count)
            y = _HEIGHT - _BOTTOM + 14
            parts.append(f'<text class="tick" x="{x:.1f}" y="{y}" text-anchor="middle">{escape(tick)}</text>')
    parts.append(
        f'<text class="tick" x="{(_LEFT + _WIDTH - _RIGHT) / 2:.1f}" y="{_HEIGHT - _BOTTOM + 28}" '
        f'text-anchor="middle">{escape(x_label)}</text>'
    )
    for number, line in enumerate(series):
        style = f"s{number % 6}"
        kept = [(index, value) for index, value in enumerate(line.values) if value is not None]
        if line.lows is not None and line.highs is not None and kept:
            upper = [(_x(i, count), _y(line.highs[i])) for i, _ in kept]
            lower = [(_x(i, count), _y(line.lows[i])) for i, _ in reversed(kept)]
            parts.append(f'<polygon class="band {style}" points="{_points(upper + lower)}"/>')
        pairs = [(_x(i, count), _y(value)) for i, value in kept]
        parts.append(f'<polyline class="line {style}" points="{_points(pairs)}"/>')
        parts.extend(f'<circle class="dot {style}" cx="{x:.1f}" cy="{y:.1f}" r="2.5"/>' for x, y in pairs)
        if number >= 8:  # the legend holds 8 names; the table beside the chart names every line
            continue
        legend_x = _LEFT + 104 * (number % 4)
        legend_y = _HEIGHT - 26 + 13 * (number // 4)
        parts.append(
            f'<rect class="key {style}" x="{legend_x}" y="{legend_y - 8}" width="10" height="10"/>'
            f'<text class="tick" x="{legend_x + 14}" y="{legend_y + 1}">{escape(line.name[:16])}</text>'
        )
    parts.append("</svg>")
    return Markup("".join(parts))
