"""The Rich consoles the command line prints to.

On a terminal Rich uses the terminal's width; when output goes to a file or a
CI log (no terminal) it would fall back to 80 columns and squeeze the tables,
so there the width is at least 120.  Tables never cut a value: one that does
not fit the width is printed as one record per row (:func:`fitted_table`).
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console, Group, JustifyMethod, RenderableType
from rich.table import Table
from rich.text import Text

__all__ = ["fitted_table", "stderr_console", "stdout_console"]

#: Width used when output is not a terminal.
LOG_WIDTH = 120


def _console(stderr: bool) -> Console:
    console = Console(stderr=stderr, emoji=False)  # ":a:" in a file name is data, never an emoji code
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
    wrapped between values, so a narrow terminal shows every digit.

    >>> from rich.console import Console
    >>> narrow = fitted_table(None, ["group", "metric", "estimate", "verdict"],
    ...                       [["target=a", "pass@10", "0.7143", "within_noise"]], 30)
    >>> Console(width=30).print(narrow)
    target=a
      metric pass@10 · estimate 0.7143 ·
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
        record = Text("  ")
        for index, (name, cell) in enumerate(zip(header[1:], row[1:], strict=True)):
            record.append(("" if index == 0 else " · ") + f"{name} ")
            record.append_text(cell)
        records.extend([row[0] if row else Text(""), record])
    return Group(*records)
