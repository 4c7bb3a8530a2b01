"""The messages between a run's controller and its workers, the same over both transports.

The controller sends a worker a :class:`WorkUnit` (one trial: run, target, case, trial, seed,
under a lease id).  A worker answers with :class:`Ready` once it has rebuilt the suite, then
with a :class:`Completion` per unit (the trial record as JSON) or a :class:`Crash` (an
exception the single-process run would also have stopped on), and a :class:`Heartbeat` every
few seconds that keeps its leases alive.  :class:`WorkerLost` is what a transport reports
when a worker process or actor is gone (its pipe closed, its actor died).

Every message is a small frozen dataclass of plain values: it pickles (a pipe) and travels
through Ray's object store alike.

>>> unit = WorkUnit(lease=7, target="agent", case_id="add", trial=2, seed=11)
>>> unit.key
Unit(target='agent', case_id='add', trial=2)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trialscore._record import Record
from trialscore.runner.adaptive import Unit

__all__ = [
    "Completion",
    "Crash",
    "Heartbeat",
    "Ready",
    "WorkUnit",
    "WorkerLost",
    "WorkerSetup",
]


@dataclass(frozen=True)
class WorkerSetup(Record):
    """What a worker needs to rebuild the run's targets, graders and cases on its own.

    ``suite_text`` is the suite file as the controller read it (``suite_path`` resolves its
    relative paths); ``trials`` is the run's ``--trials`` override (None = the suite's);
    ``targets`` the evaluated targets; ``slots`` the trials the worker may run at once;
    ``overrides`` the settings the run overrides (:class:`~trialscore.runner.overrides.Overrides`).
    """

    run_id: str
    suite_text: str
    suite_path: str | None
    targets: tuple[str, ...]
    trials: int | None
    slots: int
    heartbeat_s: float
    overrides: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class WorkUnit(Record):
    """One trial to run under lease ``lease``: the trial ``trial`` of case ``case_id`` on ``target``."""

    lease: int
    target: str
    case_id: str
    trial: int
    seed: int

    @property
    def key(self) -> Unit:
        """The unit's identity in the run (the store's unique key without the run id)."""
        return Unit(self.target, self.case_id, self.trial)


@dataclass(frozen=True)
class Ready(Record):
    """A worker has rebuilt the suite and takes units."""

    worker: int


@dataclass(frozen=True)
class Completion(Record):
    """A finished trial: the unit it ran and the trial record as one JSON line."""

    worker: int
    unit: WorkUnit
    record_json: str


@dataclass(frozen=True)
class Crash(Record):
    """An exception that stops the run (as it would stop a single-process run), by kind and message.

    ``kind`` is ``"evaluation"`` for bad input (an :class:`~trialscore.errors.EvaluationError`:
    the command exits 2), otherwise ``"internal"``; ``unit`` is None when the worker could not
    start at all.
    """

    worker: int
    unit: WorkUnit | None
    kind: str
    message: str


@dataclass(frozen=True)
class Heartbeat(Record):
    """The worker is alive: every lease it holds is renewed."""

    worker: int


@dataclass(frozen=True)
class WorkerLost(Record):
    """The transport saw the worker die (pipe closed, actor gone); ``why`` says how."""

    worker: int
    why: str


def source_path(path: str | None) -> Path | None:
    """The suite's path as a :class:`~pathlib.Path` (None for a suite without a file)."""
    return Path(path) if path is not None else None
