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
from trialscore.errors import EvaluationError, parameter
from trialscore.results.counts import PartialRun
from trialscore.results.readers import RecordSource
from trialscore.runner.store import DEFAULT_STORE, LATEST, TrialStore, open_history

__all__ = ["dated_runs", "read_stored_run", "relative_suite", "resolve_inputs"]


def _not_found(name: str, store: Path, known: Sequence[str], suite: str | None = None) -> EvaluationError:
    of = "" if suite is None else f" of suite {suite!r}"
    if known:
        latest = ", ".join(reversed(known[-5:]))
        runs = f"{plural(len(known), 'run')}{of}, latest first: {latest}"
    else:
        runs = f"the store has no run{of}"
    return EvaluationError(
        f"{name}: no such file or folder, and no such run in store {str(store)!r} "
        f"(tried: the path {name!r}; a run id, 'latest' or 'latest~N' among {runs})"
    )


def read_stored_run(store: TrialStore, name: str, suite: str | None = None) -> RecordSource:
    """The trials of the run ``name`` means (a run id, ``latest``, ``latest~N``) in an open store.

    With ``suite``, ``latest`` and ``latest~N`` count that suite's runs only.  A run that is not
    complete carries the line that says so (``notice``); an interrupted or running one is ``partial``.
    """
    run_id = store.resolve(name, suite)
    if run_id is None:
        raise _not_found(name, store.path, store.run_ids(suite), suite)
    records = store.records(run_id)
    if not records:
        raise EvaluationError(f"run {run_id!r} in store {str(store.path)!r} holds no trials yet")
    state = store.state(run_id)
    label = f"run {run_id}"
    if state.partial:
        partial = PartialRun(label, state.status, state.planned or len(records), len(records), "trials")
        return RecordSource(label, records, partial=partial)
    return RecordSource(label, records, notice=state.line())


def dated_runs(
    store: Path | None, names: Sequence[str] | None = None, suite: str | None = None
) -> list[tuple[str, RecordSource]]:
    """``(created_at, trials)`` of the runs ``names`` means, or of every stored run (oldest first);
    with ``suite``, of that suite's runs only.

    Runs with no trial yet are left out of the whole history (they have nothing to track).
    """
    where = DEFAULT_STORE if store is None else store
    out = []
    with open_history(where) as opened:
        if names is None:
            wanted = [run_id for run_id in opened.run_ids(suite) if opened.count(run_id)]
            if not wanted:
                of = "" if suite is None else f" of suite {suite!r} (it has runs of {opened.suites()})"
                raise EvaluationError(f"store {str(where)!r} holds no run{of} with trials yet")
        else:
            wanted = [name for name in names]
        for name in wanted:
            source = read_stored_run(opened, name, suite)
            out.append((opened.run(source.label.removeprefix("run ")).created_at, source))
    return out


def relative_suite(names: Sequence[Path], store: Path | None = None) -> str | None:
    """The suite ``latest`` and ``latest~N`` should count in, when every stored name among ``names``
    is such a relative name and the store holds runs of several suites: the suite of the latest run.

    So ``compare latest~1 latest`` compares the newest run with the one before it *of the same
    suite*.  None when a name is a path or a run id, or the store holds one suite (or none).
    """
    where = DEFAULT_STORE if store is None else store
    stored = [str(name) for name in names if not name.exists()]
    if not stored or not all(LATEST.fullmatch(name) for name in stored) or not where.is_file():
        return None
    with open_history(where) as opened:
        if len(opened.suites()) < 2:
            return None
        latest = opened.resolve("latest")
        return None if latest is None else opened.run(latest).suite


def resolve_inputs(
    paths: Sequence[Path | RecordSource], store: Path | None = None, suite: str | None = None
) -> list[Path | RecordSource]:
    """Each input as given when it exists on disk, else as the stored run it names.

    ``store`` defaults to :data:`~trialscore.runner.store.DEFAULT_STORE`; it is opened only
    when some input is not a path, and never created.  With ``suite``, ``latest`` and
    ``latest~N`` count that suite's runs only.
    """
    where = DEFAULT_STORE if store is None else store
    missing = [path for path in paths if isinstance(path, Path) and not path.exists()]
    if not missing:
        return list(paths)
    if not where.is_file():
        name = str(missing[0])
        raise EvaluationError(
            f"{name}: no such file or folder, and no run store to look it up in (tried: the path "
            f"{name!r}; a run id in store {str(where)!r}, which does not exist: name one with "
            f"{parameter('store')})"
        )
    out: list[Path | RecordSource] = []
    with open_history(where) as opened:
        for path in paths:
            stored = isinstance(path, Path) and not path.exists()
            out.append(read_stored_run(opened, str(path), suite) if stored else path)
    return out
