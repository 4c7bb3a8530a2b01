"""What the run store keeps of a run: how it was started (:class:`RunInfo`), where it stands
(:class:`RunState`) and its one-line summary (:class:`RunSummary`)."""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from trialscore._record import Record

__all__ = ["PARTIAL", "RUN_STATUSES", "RunInfo", "RunState", "RunSummary", "status_of"]

#: A run's status: ``running`` while a session runs it (``interrupted`` once that process is gone),
#: ``interrupted`` (stopped before its last trial: resume it), ``cost-limited`` (it ended with trials the
#: cost limit kept from starting), ``complete``; ``unknown`` for a run stored before statuses were kept.
RUN_STATUSES = ("running", "interrupted", "cost-limited", "complete", "unknown")

#: Statuses of a run whose trials stop short of its plan by accident, not by design (a gate refuses them).
PARTIAL = frozenset({"running", "interrupted"})


@dataclass(frozen=True)
class RunInfo(Record):
    """What a run was started with, so that ``--resume`` can finish it the same way.

    ``suite_text`` is the suite file's text as it was read: ``--resume`` rebuilds the suite from
    it (relative paths resolving against ``suite_path``'s folder) without the file.
    """

    run_id: str
    suite: str
    suite_path: str | None
    suite_digest: str
    settings: dict[str, Any] = field(default_factory=dict)
    out_dir: str | None = None
    created_at: str = field(default_factory=lambda: datetime.now(timezone.utc).isoformat())
    suite_text: str | None = None


@dataclass(frozen=True)
class RunSummary(Record):
    """One stored run in a line: what ``trialscore runs`` lists.

    ``pass_at_1`` is the mean over (target, case) pairs with a scored trial of ``c / n``
    (errored trials left out of ``n``), per target in ``pass_at_1_by_target``; None when no
    trial was scored.  ``cost_usd`` is the known spend (None when no trial's cost is known).
    """

    run_id: str
    suite: str
    created_at: str
    targets: tuple[str, ...]
    cases: int
    trials: int
    errored: int
    pass_at_1: float | None
    pass_at_1_by_target: dict[str, float | None]
    cost_usd: float | None
    status: str = "unknown"
    planned: int | None = None

    @property
    def partial(self) -> bool:
        """Whether the run stopped short of its plan by accident (interrupted, or still running)."""
        return self.status in PARTIAL


@dataclass(frozen=True)
class RunState(Record):
    """Where a run stands: its status (one of :data:`RUN_STATUSES`), trials planned and stored.

    >>> RunState("r1", "interrupted", 150, 54).line()
    'run r1 is interrupted: 54 of 150 planned trials stored'
    >>> RunState("r2", "complete", 150, 150).partial, RunState("r2", "complete", 150, 150).line()
    (False, None)
    """

    run_id: str
    status: str
    planned: int | None
    stored: int

    @property
    def partial(self) -> bool:
        """Whether the run stopped short of its plan by accident (interrupted, or still running)."""
        return self.status in PARTIAL

    def line(self) -> str | None:
        """One line for a reader of this run when it is not complete (None when it is, or is unknown)."""
        if self.status in ("complete", "unknown"):
            return None
        planned = "" if self.planned is None else f" of {self.planned} planned"
        return f"run {self.run_id} is {self.status}: {self.stored}{planned} trials stored"


def _alive(pid: int | None, host: str | None) -> bool:
    """Whether the process ``pid`` on ``host`` may still be running (True when it cannot be told)."""
    if pid is None or host != socket.gethostname():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def status_of(stored: str | None, pid: int | None, host: str | None) -> str:
    """The status to show: a ``running`` run whose process is gone was interrupted (killed)."""
    if stored is None:
        return "unknown"
    if stored == "running" and not _alive(pid, host):
        return "interrupted"
    return stored
