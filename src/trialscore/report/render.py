"""Render the report page: its panels in order, Jinja2 with autoescape, the data embedded as safe JSON,
CSS and JS inline.

The page loads nothing: its style, script and charts are inline, and the data of the panels'
scripts (the case drawer's trials, the diffs, the heat map) is one
``<script type="application/json">`` block that the script reads with ``JSON.parse`` (never
evaluated).  :func:`safe_json` escapes ``<``, ``>``, ``&`` and the line separators U+2028 /
U+2029 inside that JSON, so no text can close the script element.

>>> safe_json({"text": "</script><b>&\\u2028"})
'{"text":"\\\\u003c/script\\\\u003e\\\\u003cb\\\\u003e\\\\u0026\\\\u2028"}'
"""

from __future__ import annotations

import functools
import json
import math
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup

from trialscore._words import plural
from trialscore.report._numbers import money, run_start
from trialscore.report.context import ReportContext
from trialscore.report.runs import RunData

__all__ = ["render_page", "safe_json"]

_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def safe_json(data: Any) -> str:
    """Compact JSON of ``data`` that is safe inside ``<script type="application/json">``.

    ``data`` must hold no NaN or infinity (JSON has neither): that raises ``ValueError``.  It is the
    page's own data, a tree, so it is not searched for cycles (a quarter of the encoding time).
    """
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False, check_circular=False)
    for raw, escaped in _ESCAPES.items():
        if raw in text:
            text = text.replace(raw, escaped)
    return text


@functools.lru_cache(maxsize=1)
def _environment() -> Environment:
    env = Environment(
        loader=PackageLoader("trialscore.report", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["json"] = lambda data: Markup(safe_json(data))
    env.filters["plural"] = plural
    return env


def _totals(run: RunData) -> dict[str, Any]:
    """The header's counts: cases, trials, errored trials, cost (known, and trials of unknown cost)."""
    trials = sum(len(case.verdicts) for case in run.cases)
    costs = [] if run.trials is None else run.trials.cost.tolist()
    known = [cost for cost in costs if not math.isnan(cost)]
    return {
        "cases": len(run.cases),
        "trials": trials,
        "errored": sum(case.errored for case in run.cases),
        "cost": money(float(sum(known))) if known else "unknown",
        "cost_unknown": trials - len(known),
        "targets": sorted({case.target for case in run.cases if case.target is not None}),
    }


def render_page(context: ReportContext) -> str:
    """The whole HTML document of a report: every registered panel that has something to show
    (:data:`trialscore.report.panels.PANELS`), in order."""
    from trialscore.report.panels import PANELS
    from trialscore.results.trials import OUTPUT_CHARS, OUTPUT_TEXT_CHARS

    run = context.run
    shown = [(panel, built) for panel in PANELS if (built := panel.build(context)) is not None]
    data: dict[str, Any] = {panel.id: built.data for panel, built in shown if built.data is not None}
    data["live"] = context.settings.live
    page = {
        "title": f"trialscore report: {run.suite or run.label}",
        "run": run,
        "started": run_start(run.started),
        "runs": context.runs,
        "baseline": context.baseline,
        "settings": context.settings,
        "totals": _totals(run),
        "live": context.settings.live,
    }
    template = _environment().get_template("report.html.j2")
    return template.render(
        page=page,
        panels=shown,
        scripts=[panel.script for panel, _ in shown if panel.script is not None],
        data=data,
        output_chars=OUTPUT_CHARS,
        output_text_chars=OUTPUT_TEXT_CHARS,
    )
