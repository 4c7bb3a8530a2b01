"""One local Ray per test process, shared by the test files that use Ray (loaded by tests/conftest.py).

Starting a local Ray and stopping it costs seconds of CPU.  The files of
:data:`tests._units.RAY_FILES` take the :func:`local_ray` fixture: the process's Ray is started by
the first test that asks for it (and again should a test have shut it down) and shut down when the
process moves on to a file outside them (they run together, tests/_units.py) or has none left.
"""

from __future__ import annotations

import os
import sys
from types import ModuleType

import pytest

from tests._units import RAY_FILES, check_member, leaves


@pytest.fixture
def local_ray(request: pytest.FixtureRequest) -> ModuleType:
    """The ``ray`` module, with this process's local Ray (2 CPUs) running."""
    check_member(request.node, RAY_FILES, "Ray")
    import ray  # the ray extra is part of the test set-up (pip install -e '.[test]'): no silent skip

    # Ray Data reads Parquet footers on a pool of actors (up to 32 a read), each a new worker process
    # of about 1 CPU-s to start; the tests' inputs are a few small files, one actor a read reads them
    os.environ.setdefault("RAY_DATA_PARQUET_FOOTER_NUM_ACTORS", "1")
    if not ray.is_initialized():
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    return ray


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """Shut this process's Ray down after the last test of the Ray files (it would idle on), the
    session's last test included."""
    ray = sys.modules.get("ray")
    if leaves(item, nextitem, RAY_FILES) and ray is not None and ray.is_initialized():
        ray.shutdown()
