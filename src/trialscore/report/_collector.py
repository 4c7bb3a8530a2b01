"""Python's cycle collector paused while a report reads its runs and builds its page.

Reading a run and building its page make a great many small lists and tuples (each trial's grader
results, each case's drawer columns, groups and rows), and every few thousand of them the collector
walks every object the runs read hold: about a twentieth of building the report of 1,000 cases x 10
trials x 2 runs (``benchmarks/report.py``).  What they make is freed by reference counts; a cycle
left behind waits for the collector's next run, once it runs again.

>>> import gc
>>> with collector_paused():
...     gc.isenabled()
False
>>> gc.isenabled()
True
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

__all__ = ["collector_paused"]


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """The cycle collector off inside, as it was after (left off if it was off)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
