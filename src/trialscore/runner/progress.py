"""The live progress bar of a run: trials done / total, pass rate so far, spend so far, ETA."""

from __future__ import annotations

from dataclasses import dataclass
from types import TracebackType

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from trialscore.runner.failures import format_usd

__all__ = ["RunCounters", "RunProgress"]


@dataclass
class RunCounters:
    """Running totals of a run, updated as trials finish (a mutable tally, not a record).

    ``done`` counts committed trials (earlier sessions of a resumed run included)
    and trials the cost limit skipped; ``scored`` the committed trials that did
    not error, ``passed`` those that passed; ``workers`` and ``leases`` the worker
    processes or actors ready and the units leased to them (0 for a single-process run).
    """

    total: int
    done: int = 0
    scored: int = 0
    passed: int = 0
    errored: int = 0
    skipped: int = 0
    spent_usd: float = 0.0
    workers: int = 0
    leases: int = 0

    @property
    def pass_rate(self) -> float | None:
        """``passed / scored`` so far (errored trials left out), None before the first scored trial.

        >>> RunCounters(total=10, scored=4, passed=3).pass_rate
        0.75
        """
        return self.passed / self.scored if self.scored else None

    def describe(self) -> str:
        """One line: pass rate, spend, errors and skips so far (and workers and leases, if any).

        >>> RunCounters(total=10, done=5, scored=4, passed=3, errored=1, spent_usd=0.0123).describe()
        'pass 75.0% | $0.0123 | errors 1'
        >>> RunCounters(total=10, workers=2, leases=5).describe()
        'pass  --   | $0 | workers 2, leases 5'
        """
        rate = "pass  --  " if self.pass_rate is None else f"pass {self.pass_rate:.1%}"
        text = f"{rate} | {format_usd(self.spent_usd)}"
        if self.errored:
            text += f" | errors {self.errored}"
        if self.skipped:
            text += f" | cost-limited {self.skipped}"
        if self.workers:
            text += f" | workers {self.workers}, leases {self.leases}"
        return text


class RunProgress:
    """A Rich progress bar over :class:`RunCounters`; call :meth:`refresh` to show the latest counts.

    Disabled (``enabled=False``) it does nothing, so the runner need not branch.
    """

    def __init__(self, counters: RunCounters, console: Console | None = None, enabled: bool = True) -> None:
        self._counters = counters
        self._progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("trials"),
            TextColumn("{task.fields[status]}"),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=console,
            disable=not enabled,
            refresh_per_second=8,
        )
        self._task = self._progress.add_task(
            "running", total=counters.total, completed=counters.done, status=counters.describe()
        )

    def refresh(self) -> None:
        """Show the current counts."""
        counters = self._counters
        self._progress.update(self._task, completed=counters.done, status=counters.describe())

    def __enter__(self) -> RunProgress:
        self._progress.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.refresh()
        self._progress.stop()
