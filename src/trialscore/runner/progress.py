"""The live progress bar of a run: trials done / total, pass rate so far, spend so far, ETA."""

from __future__ import annotations

from dataclasses import dataclass
from types import TracebackType

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

from trialscore.runner.failures import format_usd

__all__ = ["RunCounters", "RunProgress"]


@dataclass
class RunCounters:
    """Running totals of a run, updated as trials finish (a mutable tally, not a record).

    ``done`` counts committed trials (earlier sessions of a resumed run included)
    and trials the cost limit skipped; ``scored`` the committed trials that did
    not error, ``passed`` those that passed; ``spent_usd`` the known cost so far and
    ``unknown_cost`` the trials whose target reported none; ``workers`` and ``leases``
    the worker processes or actors ready and the units leased to them (0 for a
    single-process run).
    """

    total: int
    done: int = 0
    scored: int = 0
    passed: int = 0
    errored: int = 0
    skipped: int = 0
    spent_usd: float = 0.0
    unknown_cost: int = 0
    workers: int = 0
    leases: int = 0

    @property
    def pass_rate(self) -> float | None:
        """``passed / scored`` so far (errored trials left out), None before the first scored trial.

        >>> RunCounters(total=10, scored=4, passed=3).pass_rate
        0.75
        """
        return self.passed / self.scored if self.scored else None

    @property
    def spend(self) -> str:
        """The spend so far: ``cost unknown`` while no finished trial reported a cost (never ``$0``),
        ``+?`` after a known spend when some trials reported none.

        >>> [RunCounters(10, done=2, spent_usd=0.5, unknown_cost=u).spend for u in (0, 1, 2)]
        ['$0.5000', '$0.5000+?', 'cost unknown']
        """
        if self.unknown_cost and self.unknown_cost >= self.done - self.skipped:
            return "cost unknown"
        return format_usd(self.spent_usd) + ("+?" if self.unknown_cost else "")

    def describe(self) -> str:
        """One line: pass rate, spend, errors and skips so far (and workers and leases, if any).

        >>> RunCounters(total=10, done=5, scored=4, passed=3, errored=1, spent_usd=0.0123).describe()
        'pass 75.0% | $0.0123 | errors 1'
        >>> RunCounters(total=10, workers=2, leases=5).describe()
        'pass  --   | $0 | workers 2, leases 5'
        """
        rate = "pass  --  " if self.pass_rate is None else f"pass {self.pass_rate:.1%}"
        text = f"{rate} | {self.spend}"
        if self.errored:
            text += f" | errors {self.errored}"
        if self.skipped:
            text += f" | cost-limited {self.skipped}"
        if self.workers:
            text += f" | workers {self.workers}, leases {self.leases}"
        return text


#: The width of the bar on a wide terminal, and the least it is given on a narrow one.
_BAR, _NARROW_BAR = 40, 10
#: The fixed parts of the line: "running", "ETA" and the time left (h:mm:ss), each followed by a space.
_FIXED = len("running ") + len("ETA ") + len("0:00:00 ")


def _cut(text: str, width: int) -> str:
    """``text`` in at most ``width`` characters, cut with an ellipsis.

    >>> _cut("pass 75.0% | $0.0123", 12), _cut("pass", 12), _cut("pass", 0)
    ('pass 75.0% …', 'pass', '')
    """
    if len(text) <= width:
        return text
    return text[: width - 1] + "…" if width > 0 else ""


class RunProgress:
    """A Rich progress bar over :class:`RunCounters`; call :meth:`refresh` to show the latest counts.

    One line at any width: ``running  734/1500 trials  [bar]  ETA 0:01:02  pass 71.4% | ...``.  The
    trial count and the time left come first and are never cut; the bar narrows on a narrow terminal
    and the status (pass rate, spend, errors, workers) is cut to the room left.  Disabled
    (``enabled=False``) it does nothing, so the runner need not branch.
    """

    def __init__(self, counters: RunCounters, console: Console | None = None, enabled: bool = True) -> None:
        self._counters = counters
        self._bar = BarColumn(bar_width=_BAR)
        self._progress = Progress(
            TextColumn("[bold]{task.description}"),
            TextColumn("{task.completed}/{task.total} trials"),
            self._bar,
            TextColumn("ETA"),
            TimeRemainingColumn(),
            TextColumn("{task.fields[status]}"),
            console=console,
            disable=not enabled,
            refresh_per_second=8,
        )
        self._task = self._progress.add_task(
            "running", total=counters.total, completed=counters.done, status=self._status()
        )

    def _status(self) -> str:
        """The status cut to the width the count, the bar and the time left leave."""
        counters = self._counters
        count = len(f"{counters.done}/{counters.total} trials ")
        room = self._progress.console.width - 1 - _FIXED - count
        status = counters.describe()
        self._bar.bar_width = max(_NARROW_BAR, min(_BAR, room - len(status) - 1))
        return _cut(status, room - self._bar.bar_width - 1)

    def refresh(self) -> None:
        """Show the current counts."""
        self._progress.update(self._task, completed=self._counters.done, status=self._status())

    def __enter__(self) -> RunProgress:
        self._progress.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.refresh()
        self._progress.stop()
