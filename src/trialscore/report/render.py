"""Render the report page: Jinja2 with autoescape, the data embedded as safe JSON, CSS and JS inline.

The page loads nothing: its style, script and charts are inline, and the trials of the case
drawer are one ``<script type="application/json">`` block that the script reads with
``JSON.parse`` (never evaluated).  :func:`safe_json` escapes ``<``, ``>``, ``&`` and the
line separators U+2028 / U+2029 inside that JSON, so no text can close the script element.

>>> safe_json({"text": "</script><b>&\\u2028"})
'{"text":"\\\\u003c/script\\\\u003e\\\\u003cb\\\\u003e\\\\u0026\\\\u2028"}'
"""

from __future__ import annotations

import functools
import json
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup, escape

from trialscore._words import plural

__all__ = ["case_rows", "render_page", "safe_json"]

_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def safe_json(data: Any) -> str:
    """Compact JSON of ``data`` that is safe inside ``<script type="application/json">``.

    ``data`` must hold no NaN or infinity (JSON has neither): that raises ``ValueError``.
    """
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    for raw, escaped in _ESCAPES.items():
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


def render_page(page: dict[str, Any], data: dict[str, Any]) -> str:
    """The whole HTML document of a report (see :func:`trialscore.report.model.build_model`)."""
    from trialscore.results.trials import OUTPUT_CHARS

    template = _environment().get_template("report.html.j2")
    rows = case_rows(page["cases"], page["baseline"] is not None)
    return template.render(page=page, data=data, case_rows=rows, output_chars=OUTPUT_CHARS)
