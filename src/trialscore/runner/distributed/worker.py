"""A worker's side of a run: the suite rebuilt from its text, and one trial run per work unit.

A worker (a local process or a Ray actor) gets a :class:`~.protocol.WorkerSetup`, validates the
suite text again on its own machine (callables import, API key variables are set), builds its
own targets and graders with ``slots`` connections, and runs each unit with the same code as
a single-process run (targets, graders, retries, timeouts, secrets redacted), so a trial's
record does not depend on where it ran.
"""

from __future__ import annotations

import contextlib
from dataclasses import replace

from trialscore.errors import EvaluationError
from trialscore.runner.distributed.protocol import Completion, Crash, WorkerSetup, WorkUnit, source_path
from trialscore.runner.execution import Execution, build_targets
from trialscore.runner.overrides import Overrides
from trialscore.runner.session import Session
from trialscore.runner.suite import suite_from_text
from trialscore.runner.targets import Target

__all__ = ["WorkerRuntime", "crash"]


def crash(worker: int, unit: WorkUnit | None, error: BaseException) -> Crash:
    """The :class:`~.protocol.Crash` message of ``error`` (bad input, or anything else)."""
    if isinstance(error, EvaluationError):
        return Crash(worker, unit, "evaluation", str(error))
    return Crash(worker, unit, "internal", f"{type(error).__name__}: {error}")


class WorkerRuntime:
    """The targets, graders and cases of one worker; :meth:`run` runs a unit."""

    def __init__(self, worker: int, setup: WorkerSetup) -> None:
        self.worker = worker
        where = setup.suite_path or f"<suite of run {setup.run_id}>"
        suite = suite_from_text(setup.suite_text, where, source_path(setup.suite_path), targets=setup.targets)
        # The run's overridden settings, on every case (the controller chose the cases: no --limit here).
        suite = replace(Overrides.from_settings(setup.overrides), limit=None).apply(suite)
        self._targets: dict[str, Target] = {}
        build_targets(suite, setup.targets, setup.slots, self._targets)
        # A worker's session has no schedule and no store: the controller's session hands out the
        # units and is the store's only writer.
        self._session = Session(Execution(suite, setup.run_id, self._targets, setup.trials))

    async def run(self, unit: WorkUnit) -> Completion | Crash:
        """Run one unit: its trial record, or the error that stops the run."""
        try:
            record = await self._session.run(unit.key)
        except Exception as exc:  # sent to the controller, which stops the run with it
            return crash(self.worker, unit, exc)
        return Completion(self.worker, unit, record.model_dump_json())

    async def aclose(self) -> None:
        """Release the targets (HTTP clients)."""
        for target in self._targets.values():
            with contextlib.suppress(Exception):
                await target.aclose()
