"""A progress bar on every reading of trials that lasts longer than a second.

The command line turns it on (:func:`shown`); the library shows nothing unasked.  A reading
is watched by :func:`watching`: a thread polls DuckDB's progress of the query running on the
sink's connection (``query_progress``) or what a reader in Python says it has done
(:meth:`Watch.update`), and once a second has passed draws a bar on standard error (nothing
when standard error is not a terminal).  A reading shorter than a second draws nothing.

>>> with watching(None, "reading x") as watch:
...     watch.update(0.5)
>>> watch.fraction
0.5
"""

from __future__ import annotations

import contextvars
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import duckdb

__all__ = ["DELAY", "Watch", "shown", "watching"]

#: Seconds a reading runs before its bar appears.
DELAY = 1.0
_POLL = 0.1
_SHOWN: contextvars.ContextVar[bool] = contextvars.ContextVar("trialscore_progress", default=False)


@contextmanager
def shown() -> Iterator[None]:
    """Show progress bars for the readings inside (the command line's)."""
    token = _SHOWN.set(True)
    try:
        yield
    finally:
        _SHOWN.reset(token)


class Watch:
    """The progress of one reading: a fraction from 0 to 1 (None: not known yet)."""

    def __init__(self, con: duckdb.DuckDBPyConnection | None, label: str) -> None:
        self.con = con
        self.label = label
        self.fraction: float | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def update(self, fraction: float) -> None:
        """Say how much of the reading is done (a reader in Python)."""
        self.fraction = min(max(fraction, 0.0), 1.0)

    def _polled(self) -> float | None:
        if self.con is not None:
            try:
                percent = self.con.query_progress()
            except Exception:  # the connection is busy or closing: no news this time
                percent = -1.0
            if percent >= 0:
                return float(percent) / 100
        return self.fraction

    def _run(self) -> None:
        start = time.monotonic()
        if self._stop.wait(DELAY):
            return
        from rich.console import Console

        console = Console(stderr=True)
        if not console.is_terminal:  # nothing is drawn: the bar's module is not imported either
            return
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

        bar: Any = Progress(
            TextColumn("{task.description}"), BarColumn(), TextColumn("{task.percentage:>3.0f}%"),
            TimeElapsedColumn(), console=console, transient=True,
        )  # fmt: skip
        with bar:
            task = bar.add_task(self.label, total=1.0)
            while not self._stop.wait(_POLL):
                fraction = self._polled()
                bar.update(task, completed=fraction or 0.0, elapsed=time.monotonic() - start)

    def start(self) -> None:
        if _SHOWN.get():
            self._thread = threading.Thread(target=self._run, name="trialscore-progress", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()


@contextmanager
def watching(con: duckdb.DuckDBPyConnection | None, label: str) -> Iterator[Watch]:
    """Watch the reading inside: a bar after :data:`DELAY` seconds, when bars are :func:`shown`."""
    watch = Watch(con, label)
    watch.start()
    try:
        yield watch
    finally:
        watch.stop()
