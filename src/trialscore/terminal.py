"""The Rich consoles the command line prints to, and how a table or a line of fields fits them.

On a terminal Rich uses the terminal's width; when output goes to a file or a
CI log (no terminal) it would fall back to 80 columns and squeeze the tables,
so there the width is at least 120.  Tables never cut a value: one that does
not fit the width is printed as one record per row (:func:`fitted_table`), and a
line of fields wraps between fields, never inside one (:func:`fields_line`).

Verdicts are coloured (:func:`verdict`: a regression or a failure red, an improvement
or a pass green) on a terminal only: Rich prints no colour when the output is not a
terminal or when ``NO_COLOR`` is set.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console, Group, JustifyMethod, RenderableType
from rich.table import Table
from rich.text import Text

__all__ = ["VERDICT_STYLES", "fields_line", "fitted_table", "stderr_console", "stdout_console", "verdict"]

#: Width used when output is not a terminal.
LOG_WIDTH = 120


def _console(stderr: bool) -> Console:
    # numbers are data: no colour guessed from their look; ":a:" in a file name is never an emoji code
    console = Console(stderr=stderr, highlight=False, emoji=False)
    if not console.is_terminal:
        console.width = max(console.width, LOG_WIDTH)
    return console


def stdout_console() -> Console:
    """Console for results (tables, JSON)."""
    return _console(stderr=False)


def stderr_console() -> Console:
    """Console for errors, warnings and the progress bar."""
    return _console(stderr=True)


Cell = str | Text

#: The colour of each verdict word the commands print (the one table of them); others are plain.
VERDICT_STYLES = {
    "regression": "red",
    "declining": "red",
    "fail": "red",
    "FAIL": "bold red",
    "FAILED": "bold red",
    "improvement": "green",
    "improving": "green",
    "pass": "green",
    "borderline": "yellow",
    "error": "magenta",
    "skipped": "dim",
}


def verdict(text: str, word: str | None = None) -> Text:
    """``text`` in the colour of the verdict ``word`` (default: ``text`` itself); plain for other words.

    >>> verdict("regression").style, verdict("fail (cost-limited)", "fail").style, verdict("stable").style
    ('red', 'red', '')
    """
    return Text(text, style=VERDICT_STYLES.get(text if word is None else word, ""))


def _packed(units: Sequence[Text], width: int, separator: str, indent: str) -> Text:
    """``units`` joined by ``separator``; a new line (and ``indent``) where one would pass ``width``."""
    out = Text(indent)
    column = len(indent)
    for index, unit in enumerate(units):
        if index:
            if column + len(separator) + unit.cell_len > width:
                out.append("\n" + indent)
                column = len(indent)
            else:
                out.append(separator)
                column += len(separator)
        out.append_text(unit)
        column += unit.cell_len
    return out


def fields_line(fields: Sequence[str | Text], width: int, separator: str = "   ") -> Text:
    """One line of fields (``pass@1 0.808 [0.461, 0.954]``), wrapped between fields at ``width``, never
    inside one; print it with ``soft_wrap=True``.

    >>> print(fields_line(["pass@1 0.808 [0.461, 0.954]", "pass@5 1.000 [0.521, 1.000]", "(95%)"], 40))
    pass@1 0.808 [0.461, 0.954]
    pass@5 1.000 [0.521, 1.000]   (95%)
    """
    return _packed(
        [field if isinstance(field, Text) else Text(field) for field in fields], width, separator, ""
    )


def fitted_table(
    title: str | None,
    header: Sequence[str],
    rows: Sequence[Sequence[Cell]],
    width: int,
    justify: Sequence[JustifyMethod] | None = None,
) -> RenderableType:
    """A table of plain-text cells that never cuts a value.

    Strings are data, never markup (a ``Text`` cell keeps its style).  When the
    table fits ``width`` it is a Rich table whose cells never wrap; when it does
    not, each row becomes one record, ``label`` then ``column value · ...``,
    wrapped between fields (never inside one), with empty cells left out, so a
    narrow terminal shows every digit.

    >>> from rich.console import Console
    >>> narrow = fitted_table(None, ["group", "metric", "estimate", "err", "verdict"],
    ...                       [["target=a", "pass@10", "0.7143", "", "within_noise"]], 36)
    >>> Console(width=36).print(narrow)
    target=a
      metric pass@10 · estimate 0.7143
      verdict within_noise
    """
    texts = [[cell if isinstance(cell, Text) else Text(cell) for cell in row] for row in rows]
    widths = [len(name) for name in header]
    for row in texts:
        for index, cell in enumerate(row):
            widths[index] = max(widths[index], cell.cell_len)
    right: list[JustifyMethod] = ["right"] * (len(header) - 1)
    aligns: list[JustifyMethod] = list(justify) if justify is not None else ["left", *right]
    if sum(widths) + 3 * len(widths) + 1 <= width:
        table = Table(title=Text(title) if title else None, title_justify="left")
        for name, align, column_width in zip(header, aligns, widths, strict=True):
            table.add_column(Text(name), justify=align, no_wrap=True, min_width=column_width)
        for row in texts:
            table.add_row(*row)
        return table
    records: list[RenderableType] = [Text(title, style="bold")] if title else []
    for row in texts:
        fields = [
            Text(f"{name} ").append_text(cell)
            for name, cell in zip(header[1:], row[1:], strict=True)
            if cell.plain.strip()
        ]
        records.extend([row[0] if row else Text(""), _packed(fields, width, " · ", "  ")])
    return Group(*records)
