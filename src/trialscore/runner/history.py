"""The run store as history: inputs named by run id (or ``latest``, ``latest~N``) instead of a path.

Every command that reads trial results takes, wherever it takes a path, a run id of the
store as well.  :func:`resolve_inputs` keeps each argument that is an existing file or
folder, and reads any other from the store: a stored run id, ``latest`` (the newest run)
or ``latest~N`` (N runs before it, by creation time).  A name that is neither is one error
naming what was tried.

>>> import tempfile
>>> from trialscore.results.records import TrialRecord
>>> from trialscore.runner.store import RunInfo, TrialStore
>>> path = Path(tempfile.mkdtemp()) / "store.sqlite"
>>> store = TrialStore(path)
>>> store.create_run(RunInfo("r1", "demo", None, "abc"))
>>> store.insert([TrialStore.row("r1", TrialRecord(case_id="c", trial=0, passed=True, verdict="pass"))])
>>> store.close()
>>> [source.label for source in resolve_inputs([Path("latest")], path)]
['run r1']
>>> resolve_inputs([Path("nope")], path)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
trialscore.errors.EvaluationError: nope: no such file or folder, and no such run in store ... (tried: ...
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from trialscore._words import plural
from trialscore.errors import EvaluationError
from trialscore.results.readers import RecordSource
from trialscore.runner.store import DEFAULT_STORE, TrialStore, open_history

__all__ = ["dated_runs", "read_run", "resolve_inputs"]


def _not_found(name: str, store: Path, known: Sequence[str]) -> EvaluationError:
    if known:
        latest = ", ".join(reversed(known[-5:]))
        runs = f"{plural(len(known), 'run')}, latest first: {latest}"
    else:
        runs = "the store has no run"
    return EvaluationError(
        f"{name}: no such file or folder, and no such run in store {str(store)!r} "
        f"(tried: the path {name!r}; a run id, 'latest' or 'latest~N' among {runs})"
    )


def read_run(store: TrialStore, name: str) -> RecordSource:
    """The trials of the run ``name`` means (a run id, ``latest``, ``latest~N``) in an open store."""
    run_id = store.resolve(name)
    if run_id is None:
        raise _not_found(name, store.path, store.run_ids())
    records = store.records(run_id)
    if not records:
        raise EvaluationError(f"run {run_id!r} in store {str(store.path)!r} holds no trials yet")
    return RecordSource(f"run {run_id}", records)


def dated_runs(store: Path | None, names: Sequence[str] | None = None) -> list[tuple[str, RecordSource]]:
    """``(created_at, trials)`` of the runs ``names`` means, or of every stored run (oldest first).

    Runs with no trial yet are left out of the whole history (they have nothing to track).
    """
    where = DEFAULT_STORE if store is None else store
    out = []
    with open_history(where) as opened:
        if names is None:
            wanted = [run_id for run_id in opened.run_ids() if opened.count(run_id)]
            if not wanted:
                raise EvaluationError(f"store {str(where)!r} holds no run with trials yet")
        else:
            wanted = [name for name in names]
        for name in wanted:
            source = read_run(opened, name)
            out.append((opened.run(source.label.removeprefix("run ")).created_at, source))
    return out


def resolve_inputs(
    paths: Sequence[Path | RecordSource], store: Path | None = None
) -> list[Path | RecordSource]:
    """Each input as given when it exists on disk, else as the stored run it names.

    ``store`` defaults to :data:`~trialscore.runner.store.DEFAULT_STORE`; it is opened only
    when some input is not a path, and never created.
    """
    where = DEFAULT_STORE if store is None else store
    missing = [path for path in paths if isinstance(path, Path) and not path.exists()]
    if not missing:
        return list(paths)
    if not where.is_file():
        name = str(missing[0])
        raise EvaluationError(
            f"{name}: no such file or folder, and no run store to look it up in (tried: the path "
            f"{name!r}; a run id in store {str(where)!r}, which does not exist: name one with --store)"
        )
    out: list[Path | RecordSource] = []
    with open_history(where) as opened:
        for path in paths:
            stored = isinstance(path, Path) and not path.exists()
            out.append(read_run(opened, str(path)) if stored else path)
    return out
