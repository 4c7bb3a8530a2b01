"""Shared test settings.

Property tests have no per-example deadline (a loaded CI machine must not turn
a slow example into a failure). Under CI (``CI`` set) they are derandomized, so
a run is reproducible: the same examples every time.

Python's full garbage collection walks every object alive, and a test process holds
millions once it has imported SciPy, Ray or inspect_ai: it took about a tenth of the
CPU time of the reader tests.  What collection imported is frozen (never walked
again: it lives until the process ends anyway), and a full collection comes after
100 collections of the middle generation instead of 10.  Young objects are collected
as usual, so a test's cyclic garbage still goes soon.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Iterator

import pytest
from hypothesis import settings

from tests.forks import ForkServers

#: Plugins of the suite: the scheduling of the files that share a costly thing, and the shared Ray.
pytest_plugins = ["tests._units", "tests._ray"]

settings.register_profile("default", deadline=None)
settings.register_profile("ci", deadline=None, derandomize=True)
settings.load_profile("ci" if os.environ.get("CI") else "default")


#: The garbage collector's thresholds in test processes: Python's own, the last (full collections
#: per collection of the middle generation) ten times higher.
GC_THRESHOLDS = (700, 10, 100)


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    """Freeze what collection imported and space the full collections out (see the module's doc)."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)


@pytest.fixture(scope="session")
def fork_servers() -> Iterator[ForkServers]:
    """The fork servers of this test process (tests/forks.py), shared by its test modules and ended at
    the session's end."""
    servers = ForkServers()
    yield servers
    servers.close()
