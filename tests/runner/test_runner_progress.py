"""The live progress bar: one line at 80 columns that keeps the trial count, and an unknown cost is
never shown as $0."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from trialscore.runner.progress import RunCounters, RunProgress


def shown(counters: RunCounters, width: int) -> str:
    console = Console(width=width, file=io.StringIO(), force_terminal=False)
    progress = RunProgress(counters, console=console)
    progress.refresh()
    console.print(progress._progress.get_renderable())
    text = console.file.getvalue()  # type: ignore[attr-defined]
    assert text.count("\n") == 1, text  # one line, never wrapped
    return text.rstrip("\n")


@pytest.mark.parametrize("width", [80, 100, 120, 200])
def test_the_line_with_workers_keeps_its_trial_count_within_the_width(width: int) -> None:
    counters = RunCounters(
        total=1500,
        done=734,
        scored=700,
        passed=500,
        errored=34,
        skipped=3,
        spent_usd=0.123,
        workers=2,
        leases=5,
    )
    line = shown(counters, width)
    assert len(line.rstrip()) < width, line
    assert line.startswith("running 734/1500 trials "), line
    assert "ETA " in line and "pass 71.4%" in line, line
    if width >= 120:  # room for everything: nothing is cut
        assert line.rstrip().endswith("workers 2, leases 5"), line
    else:
        assert line.rstrip().endswith("\u2026"), line


def test_unknown_cost_is_cost_unknown_never_zero_dollars() -> None:
    unknown = RunCounters(total=10, done=4, scored=4, passed=2, unknown_cost=4)
    assert "cost unknown" in shown(unknown, 120) and "$0" not in shown(unknown, 120)
    some = RunCounters(total=10, done=4, scored=4, passed=2, spent_usd=0.02, unknown_cost=1)
    assert "$0.0200+?" in shown(some, 120)
    assert shown(RunCounters(total=10, done=4, scored=4, passed=2, spent_usd=0.02), 120).endswith("| $0.0200")
