"""One local Ray per test process, shared by the test files that use Ray (loaded by tests/conftest.py).

Starting a local Ray and stopping it costs seconds of CPU.  The files of
:data:`tests._units.RAY_FILES` take the :func:`local_ray` fixture: the process's Ray is started by
the first test that asks for it (and again should a test have shut it down) and shut down when the
process moves on to a file outside them (they run together, tests/_units.py) or the session ends.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from types import ModuleType

import pytest

from tests._units import RAY_FILES, check_member, file_of, leaves


@pytest.fixture(scope="session")
def _ray_session() -> Iterator[ModuleType]:
    """The ``ray`` module; Ray, if a test started it, is shut down when the session ends."""
    import ray  # the ray extra is part of the test set-up (pip install -e '.[test]'): no silent skip

    yield ray
    ray.shutdown()


@pytest.fixture
def local_ray(request: pytest.FixtureRequest, _ray_session: ModuleType) -> ModuleType:
    """The ``ray`` module, with this process's local Ray (2 CPUs) running."""
    check_member(request.node, RAY_FILES, "Ray")
    if not _ray_session.is_initialized():
        _ray_session.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    return _ray_session


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """Shut this process's Ray down after the last test of the Ray files (it would idle on)."""
    if file_of(item) not in RAY_FILES or not leaves(nextitem, RAY_FILES):
        return
    ray = sys.modules.get("ray")
    if ray is not None and ray.is_initialized():
        ray.shutdown()
