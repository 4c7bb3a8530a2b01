"""One renderer for every command: a result as a table, JSON, Markdown or CSV.

A command builds a :class:`Report` (the JSON payload plus the same numbers as titled
tables with notes) and hands it to :func:`render`; how each format looks is decided here
only.  Everything shown is data: it is never read as Rich markup.

Numbers are rounded where they are shown, never where they are kept: a table cell has four
significant digits (:func:`cell`), a difference of rates (:class:`Change`) four decimals with
its sign, so a slope of ``4.253e-18`` (float noise around zero) reads ``0.0000``; CSV and JSON
carry the full value.  In the terminal the verdict columns are coloured (a regression red, an
improvement green; plain off a terminal or with ``NO_COLOR``).
"""

from __future__ import annotations

import csv
import html
import io
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import typer
from rich.text import Text

from trialscore.cli._app import console
from trialscore.cli._options import OutputFormat, flagged
from trialscore.terminal import fitted_table, verdict

if TYPE_CHECKING:
    from trialscore.stats import Interval

__all__ = ["Change", "Report", "Section", "bounds", "cell", "markdown", "render"]

#: Table columns whose words are verdicts, coloured in the terminal (``terminal.VERDICT_STYLES``).
VERDICT_COLUMNS = frozenset({"verdict", "trend", "result"})


@dataclass(frozen=True)
class Change:
    """A difference of rates in a table (a delta, an interval's end, a slope): shown with its sign to
    four decimals, as the value itself in CSV.

    >>> cell(Change(0.0230769)), cell(Change(-0.07351)), cell(Change(4.253e-18)), cell(Change(None))
    ('+0.0231', '-0.0735', '0.0000', '—')
    """

    value: float | None


@dataclass(frozen=True)
class Section:
    """One table: a heading, a line under it, the rows, and notes after it."""

    header: Sequence[str]
    rows: Sequence[Sequence[object]]
    title: str = ""
    lead: str = ""
    notes: Sequence[str] = ()

    def __post_init__(self) -> None:  # the library's messages in it, said with the command line's flags
        for name in ("rows", "lead", "notes"):
            object.__setattr__(self, name, flagged(getattr(self, name)))


@dataclass(frozen=True)
class Report:
    """What a command prints: ``payload`` for JSON, ``sections`` (and ``footer``) for the rest.

    ``flat`` is the CSV table when it is not the only section (several sections flattened).
    """

    payload: dict[str, Any]
    sections: Sequence[Section]
    footer: Sequence[str] = ()
    flat: Section | None = field(default=None)

    def __post_init__(self) -> None:  # the library's messages in it, said with the command line's flags
        for name in ("payload", "footer"):
            object.__setattr__(self, name, flagged(getattr(self, name)))


def cell(value: object, digits: int = 4) -> str:
    """A table cell: ``—`` for a missing value, floats to ``digits`` significant digits, yes / no.

    >>> cell(0.70769), cell(True), cell(None), cell(3)
    ('0.7077', 'yes', '—', '3')
    """
    if isinstance(value, Change):
        value = value.value
        if value is None or not math.isfinite(value):
            return cell(value)
        text = f"{value:+.4f}"
        return text[1:] if float(text) == 0 else text  # no sign on a rounded zero
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.{digits}g}" if math.isfinite(value) else str(value)
    return str(value)


def bounds(interval: Interval | None) -> str | None:
    """``estimate [low, high]`` of a table cell (None: none).

    >>> from trialscore.stats import Interval
    >>> bounds(Interval(0.70769, 0.5, 0.85, 0.95, "wilson", 10)), bounds(None)
    ('0.7077 [0.5, 0.85]', None)
    """
    if interval is None:
        return None
    return f"{cell(interval.estimate)} [{cell(interval.low)}, {cell(interval.high)}]"


def _json_default(value: object) -> object:
    import numpy as np

    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    if isinstance(value, (tuple, set)):
        return list(value)
    raise TypeError(f"cannot write {type(value).__name__} as JSON")


def print_json(payload: dict[str, Any]) -> None:
    """``payload`` as indented JSON on standard output (NaN is refused, NumPy scalars are numbers)."""
    typer.echo(json.dumps(payload, indent=2, allow_nan=False, default=_json_default))


def _markdown_table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    def clean(value: object) -> str:
        return cell(value).replace("|", "\\|")

    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(clean(value) for value in row) + " |" for row in rows]
    return "\n".join(lines)


def _csv(section: Section) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(section.header)
    for row in section.rows:
        values = (value.value if isinstance(value, Change) else value for value in row)
        writer.writerow(["" if value is None else value for value in values])
    return buffer.getvalue()


def _markdown(report: Report) -> str:
    parts = []
    for section in report.sections:
        if section.title:
            parts.append(f"### {section.title}\n")
        if section.lead:
            parts.append(f"{section.lead}\n")
        parts.append(_markdown_table(section.header, section.rows) + "\n")
        if section.notes:
            parts.append("\n".join(f"- {note}" for note in section.notes) + "\n")
    parts.extend(report.footer)
    return "\n".join(parts)


def _safe(value: object) -> object:
    return html.escape(value, quote=False) if isinstance(value, str) else value


def markdown(report: Report, *, html_safe: bool = False) -> str:
    """``report`` as Markdown; ``html_safe`` escapes ``&``, ``<`` and ``>`` in every text, for
    renderers that also read HTML (GitHub's step summary), so data never becomes markup."""
    if not html_safe:
        return _markdown(report)
    sections = [
        Section(
            [str(_safe(name)) for name in section.header],
            [[_safe(value) for value in row] for row in section.rows],
            str(_safe(section.title)),
            str(_safe(section.lead)),
            [str(_safe(note)) for note in section.notes],
        )
        for section in report.sections
    ]
    return _markdown(Report(report.payload, sections, [str(_safe(line)) for line in report.footer]))


def styled_rows(section: Section) -> list[list[str | Text]]:
    """The rows of ``section`` as terminal cells: :func:`cell` text, the verdict columns coloured."""
    coloured = [name in VERDICT_COLUMNS for name in section.header]
    return [
        [verdict(cell(value)) if colour else cell(value) for colour, value in zip(coloured, row, strict=True)]
        for row in section.rows
    ]


def _table(report: Report) -> None:
    for section in report.sections:
        title = section.title
        if section.lead:
            lead = Text(f"{title}: ", style="bold") + section.lead if title else Text(section.lead)
            console.print(lead, highlight=False)
            title = ""
        console.print(fitted_table(title or None, section.header, styled_rows(section), console.width))
        for note in section.notes:
            console.print(f"  {note}", markup=False, highlight=False)
    for line in report.footer:
        console.print(line, markup=False, highlight=False)


def render(report: Report, output: OutputFormat) -> None:
    """Print ``report`` in the chosen format on standard output."""
    if output is OutputFormat.json:
        print_json(report.payload)
    elif output is OutputFormat.csv:
        flat = report.flat or report.sections[0]
        typer.echo(_csv(flat), nl=False)
    elif output is OutputFormat.markdown:
        typer.echo(_markdown(report))
    else:
        _table(report)
