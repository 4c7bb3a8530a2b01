"""The cases panel: one row per (target, case) with its trial strip, and the case drawer's data.

The table's rows are :attr:`~trialscore.report.context.ReportContext.rows`; the drawer's data
(:class:`~trialscore.report.drawer.Drawer`: each case's trials column by column, its distinct
outputs and errors grouped with counts, its tool calls, what it asked and expected) is embedded
as JSON and laid out by ``cases.js``, which also gives the permalinks
(``report.html#case=ID&trial=N``, with ``&target=T`` when the run has several targets) and each
case's Markdown copy.
"""

from __future__ import annotations

from typing import Any

from markupsafe import Markup, escape

from trialscore.report.context import ReportContext
from trialscore.report.drawer import asked
from trialscore.report.packing import pack
from trialscore.report.panel import Built, Panel

__all__ = ["PANEL", "case_rows"]


def _value(number: float | None) -> str:
    """A sort key of the cases table (``data-v``): 4 significant digits, -1 when unknown."""
    return "-1" if number is None else f"{number:.4g}"


def case_rows(rows: list[dict[str, Any]], flips: bool) -> Markup:
    """The body rows of the cases table, one line each, every text escaped.

    One string per row instead of a template loop (the table has a row per case); ``flips``
    adds the columns of the change against the baseline: the delta of the pass rate (sorted
    with a case only in this run last, ``data-v`` 2) and the flip.

    >>> print(case_rows([{"state": "pass", "errored": 0, "target": "<m>", "case": "a&b", "strip": "pp",
    ...     "passed": 2, "n": 2, "rate": 1.0, "rate_text": "100.0%", "interval": "[34.2%, 100.0%]",
    ...     "flakiness": 0.0, "cost": None, "cost_text": "—", "category": "", "flip": "new",
    ...     "delta": None, "delta_text": "—"}], True))
    <tr data-s="pass"><td>&lt;m&gt;</td><td><button class="case">a&amp;b</button></td><td class="st">pp</td>\
<td data-v="2">2/2</td><td data-v="1">100.0% <small>[34.2%, 100.0%]</small></td><td>0%</td>\
<td data-v="-1">—</td><td></td><td data-v="2">—</td><td class="flip new">new</td></tr>
    <BLANKLINE>
    """
    out = []
    for r in rows:
        # texts from the data are escaped; the rest is the report's own (numbers, fixed words, letters)
        errored = f' data-e="{r["errored"]}"' if r["errored"] else ""
        last = (
            f'<td data-v="{2 if r["delta"] is None else _value(r["delta"])}">{r["delta_text"]}</td>'
            f'<td class="flip {r["flip"].replace(" ", "-")}">{r["flip"]}</td>'
            if flips
            else ""
        )
        out.append(
            f'<tr data-s="{r["state"]}"{errored}><td>{escape(r["target"])}</td>'
            f'<td><button class="case">{escape(r["case"])}</button></td>'
            f'<td class="st">{r["strip"]}</td><td data-v="{r["passed"]}">{r["passed"]}/{r["n"]}</td>'
            f'<td data-v="{_value(r["rate"])}">{r["rate_text"]} <small>{r["interval"]}</small></td>'
            f'<td>{r["flakiness"]:.0f}%</td><td data-v="{_value(r["cost"])}">{r["cost_text"]}</td>'
            f"<td>{escape(r['category'])}</td>{last}</tr>\n"
        )
    return Markup("".join(out))


def build(context: ReportContext) -> Built:
    """The table (rows as one escaped string) and the drawer's data."""
    run, rows, drawer = context.run, context.rows, context.drawer
    trials = context.trial_data
    view = {
        "rows": case_rows(rows, context.baseline is not None),
        "count": len(rows),
        "categories": sorted({row["category"] for row in rows}),
        "flips": context.baseline is not None,
        "detailed": run.detailed,
        "calls": drawer.calls.cases,
    }
    data = {
        "trials": trials,
        "texts": pack(drawer.texts.texts),  # every distinct text once, deflated
        "graders": list(drawer.graders),
        "tools": list(drawer.calls.tools),
        "asked": [asked(case, run.asked) for case in run.cases],
        "targets": len({case.target for case in run.cases}) > 1,
    }
    return Built(view, data)


PANEL = Panel("cases", "Cases", "cases.html.j2", build, script="cases.js")
