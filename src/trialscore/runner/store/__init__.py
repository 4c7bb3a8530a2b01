"""The run store: one SQLite file (WAL) holding runs and every finished trial, committed as it lands.

Durability guarantee (what a test kills the runner to check):

* A trial is *finished* only once its row is committed.  The runner hands each
  trial to one writer the moment it finishes; the writer commits everything
  handed to it since its last commit in one transaction (group commit), and
  the worker that ran the trial waits for that commit before it starts another
  trial.  So at any instant at most ``concurrency`` trials are started but not
  committed, and a run killed with SIGKILL loses at most those: the trials in
  flight.
* ``(run_id, target, case_id, trial)`` is unique: a trial is stored once (a
  second insert is an error, never a silent duplicate), and a resumed run skips
  every stored trial.
* WAL with ``synchronous=NORMAL``: a commit survives the process being killed;
  after a power loss the last commits before it may be missing (never a torn
  or corrupt file).

The package's modules: :mod:`.runs` (what is kept of a run), :mod:`.sqlite` (the file and
:class:`TrialStore`), :mod:`.writer` (the single writer a running session commits through).
"""

from trialscore.errors import StoreError
from trialscore.runner.store.runs import PARTIAL, RUN_STATUSES, RunInfo, RunState, RunSummary
from trialscore.runner.store.sqlite import (
    DEFAULT_STORE,
    LATEST,
    TrialRow,
    TrialStore,
    open_history,
    store_error,
)

__all__ = [
    "DEFAULT_STORE",
    "LATEST",
    "PARTIAL",
    "RUN_STATUSES",
    "RunInfo",
    "RunState",
    "RunSummary",
    "StoreError",
    "TrialRow",
    "TrialStore",
    "open_history",
    "store_error",
]
