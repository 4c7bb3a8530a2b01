"""One local Ray per test process, shared by the test files that use Ray (loaded by tests/conftest.py).

Starting a local Ray and stopping it costs seconds of CPU.  The files that use Ray take the
:func:`local_ray` fixture: the process's Ray is started by the first test that asks for it (and
again should a test have shut it down) and shut down when the test session ends.  Under
``pytest -n auto --dist loadfile`` (pytest-xdist) every file goes whole to one test process; the
scheduler :class:`RayFilesTogether` sends the files of :data:`RAY_FILES` to one process as one
unit, so they share that process's Ray, and keeps every other file a unit of its own, as loadfile
does.  A test that asks for :func:`local_ray` from a file outside :data:`RAY_FILES` fails, naming
the list to add it to.
"""

from __future__ import annotations

from collections.abc import Iterator
from types import ModuleType

import pytest
from xdist.remote import Producer
from xdist.scheduler import LoadFileScheduling

#: The test files that use Ray (paths from the repository's root, as in pytest's node ids).
RAY_FILES = frozenset(
    {
        "tests/results/test_results_engines.py",
        "tests/runner/test_runner_distributed_ray.py",
    }
)
#: The one scheduling unit of :data:`RAY_FILES`.
RAY_SCOPE = "tests (the files that use Ray)"


class RayFilesTogether(LoadFileScheduling):
    """pytest-xdist's loadfile scheduling, with the files of :data:`RAY_FILES` as one unit."""

    def _split_scope(self, nodeid: str) -> str:
        scope = super()._split_scope(nodeid)
        return RAY_SCOPE if scope in RAY_FILES else scope


@pytest.hookimpl(optionalhook=True, tryfirst=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Producer) -> LoadFileScheduling | None:
    """Under ``--dist loadfile``, :class:`RayFilesTogether`; otherwise xdist's own choice."""
    if config.getvalue("dist") != "loadfile":
        return None
    return RayFilesTogether(config, log)


@pytest.fixture(scope="session")
def _ray_session() -> Iterator[ModuleType]:
    """The ``ray`` module; Ray, if a test started it, is shut down when the session ends."""
    import ray  # the ray extra is part of the test set-up (pip install -e '.[test]'): no silent skip

    yield ray
    ray.shutdown()


@pytest.fixture
def local_ray(request: pytest.FixtureRequest, _ray_session: ModuleType) -> ModuleType:
    """The ``ray`` module, with this process's local Ray (2 CPUs) running."""
    path = request.node.nodeid.split("::", 1)[0]
    assert path in RAY_FILES, f"{path} uses Ray: add it to RAY_FILES in tests/_ray.py"
    if not _ray_session.is_initialized():
        _ray_session.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    return _ray_session
