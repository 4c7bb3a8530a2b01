"""Watching a run as it goes: the observer a run tells when it starts, commits a trial and ends.

An object with these three methods, given as ``RunOptions(observer=...)``, is called on the run's
event loop (so each call must return at once: do slow work elsewhere, as
:class:`trialscore.report.live.LiveReport` does on a thread of its own):

* ``started(run_id, suite, planned, earlier)``: once the run is stored, before any trial runs;
  ``suite`` is the suite as run (selection and overrides applied), ``planned`` its planned trials,
  ``earlier`` the trials a resumed run committed before;
* ``committed(record)``: after each trial is committed to the store (the record as stored,
  secrets redacted), in commit order;
* ``ended(completed)``: once no trial is in flight (the run completed, was interrupted, or its store
  failed), before the run's report is made; whatever it raises is the run's error.

>>> class Count:
...     def __init__(self) -> None:
...         self.trials = 0
...     def started(self, run_id, suite, planned, earlier) -> None:
...         self.trials = len(earlier)
...     def committed(self, record) -> None:
...         self.trials += 1
...     def ended(self, completed: bool) -> None:
...         pass
>>> isinstance(Count(), RunObserver)
True
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from trialscore.results.records import TrialRecord
    from trialscore.runner.suite import Suite

__all__ = ["RunObserver"]


@runtime_checkable
class RunObserver(Protocol):
    """Told when a run starts, commits a trial and ends (see the module docstring)."""

    def started(self, run_id: str, suite: Suite, planned: int, earlier: Sequence[TrialRecord]) -> None:
        """The run is stored and about to run its trials."""
        ...

    def committed(self, record: TrialRecord) -> None:
        """A trial is committed."""
        ...

    def ended(self, completed: bool) -> None:
        """No trial is in flight any more; ``completed``: every planned trial ran."""
        ...
