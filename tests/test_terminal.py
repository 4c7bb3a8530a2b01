"""Tables never cut a value: they fit the width or become one record per row."""

from __future__ import annotations

import pytest
from rich.console import Console
from rich.table import Table

from trialscore.terminal import fitted_table

HEADER = ["group", "metric", "baseline", "candidate", "delta", "low", "high", "p", "verdict"]
ROW = ["target=alpha, category=[/a]math", "pass@10", "0.7143", "0.6667", "-0.04762", "-0.4222", "0.3269",
       "0.7663", "within_noise"]  # fmt: skip


@pytest.mark.parametrize("width", [40, 60, 80, 100, 200])
def test_every_value_is_printed_whole_at_any_width(width: int) -> None:
    console = Console(width=width, record=True, color_system=None)
    console.print(fitted_table("compare: a -> b", HEADER, [ROW, ROW], width))
    text = console.export_text()
    for value in ROW[1:]:
        assert text.count(value) == 2, (width, value)
    assert "…" not in text and "category=[/a]math" in text.replace("\n", "")
    assert max(len(line) for line in text.splitlines()) <= width


def test_a_table_that_fits_stays_a_table() -> None:
    assert isinstance(fitted_table(None, HEADER, [ROW], 200), Table)
    assert not isinstance(fitted_table(None, HEADER, [ROW], 80), Table)
