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
from markupsafe import Markup

__all__ = ["render_page", "safe_json"]

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
    return env


def render_page(page: dict[str, Any], data: dict[str, Any]) -> str:
    """The whole HTML document of a report (see :func:`trialscore.report.model.build_model`)."""
    from trialscore.report.runs import OUTPUT_CHARS

    template = _environment().get_template("report.html.j2")
    return template.render(page=page, data=data, output_chars=OUTPUT_CHARS)
