"""The controller and transport of a run spread over workers, from its :class:`~.options.Distribution`."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from trialscore.errors import EvaluationError
from trialscore.runner.distributed.controller import Controller, Transport
from trialscore.runner.distributed.options import Distribution
from trialscore.runner.distributed.protocol import WorkerSetup

if TYPE_CHECKING:
    from trialscore.runner.session import Session
    from trialscore.runner.store import RunInfo

__all__ = ["DEFAULT_LOCAL_WORKERS", "open_backend"]

#: Local worker processes when ``--workers`` is not given.
DEFAULT_LOCAL_WORKERS = 2


def open_backend(distribution: Distribution, session: Session, info: RunInfo, concurrency: int) -> Controller:
    """The controller that runs ``session``'s units on the workers ``distribution`` asks for.

    ``concurrency`` trials are in flight at once over all workers: each worker gets
    ``ceil(concurrency / workers)`` slots.
    """
    suite = session.suite
    if not suite.text:
        raise EvaluationError("a suite without its text cannot be sent to workers; run it from its file")
    workers = distribution.workers
    setup = WorkerSetup(
        run_id=info.run_id,
        suite_text=suite.text,
        suite_path=str(suite.path) if suite.path is not None else None,
        targets=tuple(session.evaluated),
        trials=info.settings.get("trials"),
        slots=math.ceil(concurrency / (workers or DEFAULT_LOCAL_WORKERS)),
        heartbeat_s=distribution.lease_ttl_s / 3,
        overrides=info.settings.get("overrides") or {},
    )
    transport: Transport
    if distribution.backend == "ray":
        from trialscore.runner.distributed.ray_backend import RayWorkers

        transport = RayWorkers(setup, workers, distribution.address, concurrency)
    else:
        from trialscore.runner.distributed.local import LocalWorkers

        transport = LocalWorkers(setup, workers or DEFAULT_LOCAL_WORKERS)
    return Controller(transport, distribution.lease_ttl_s, concurrency)
