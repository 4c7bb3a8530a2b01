"""The SQLite file of the run store: its schema, its faults in one line each, and :class:`TrialStore`.

See :mod:`trialscore.runner.store` for the durability guarantee.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import socket
import sqlite3
import urllib.parse
from collections.abc import Iterable, Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from trialscore.errors import EvaluationError, StoreError, parameter
from trialscore.results.records import TrialRecord
from trialscore.runner.failures import total_usd
from trialscore.runner.store.runs import RUN_STATUSES, RunInfo, RunState, RunSummary, status_of

__all__ = ["DEFAULT_STORE", "LATEST", "TrialRow", "TrialStore", "open_history", "store_error"]

#: Where runs are stored when no store is named (relative to the working directory).
DEFAULT_STORE = Path(".trialscore") / "store.sqlite"

#: ``latest`` (the newest run) or ``latest~N`` (N runs before it), as git names commits.
LATEST = re.compile(r"latest(?:~(\d+))?")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY,
    suite TEXT NOT NULL,
    suite_path TEXT,
    suite_digest TEXT NOT NULL,
    settings TEXT NOT NULL,
    out_dir TEXT,
    created_at TEXT NOT NULL,
    suite_text TEXT
);
CREATE TABLE IF NOT EXISTS trials (
    run_id TEXT NOT NULL,
    target TEXT NOT NULL,
    case_id TEXT NOT NULL,
    trial INTEGER NOT NULL,
    verdict TEXT NOT NULL,
    cost_usd REAL,
    output TEXT,
    record TEXT NOT NULL,
    UNIQUE (run_id, target, case_id, trial)
);
"""

#: Columns of the runs table added after its first version: (name, SQL type), added to older stores.
_LATER_COLUMNS = (
    ("suite_text", "TEXT"),
    ("status", "TEXT"),
    ("planned", "INTEGER"),
    ("pid", "INTEGER"),
    ("host", "TEXT"),
    ("finished_at", "TEXT"),
)

#: One row of the trials table: (run_id, target, case_id, trial, verdict, cost_usd, output, record JSON).
TrialRow = tuple[str, str, str, int, str, "float | None", "str | None", str]

#: The record field kept in the ``output`` column instead of the record JSON.
_OUTPUT = {"output"}

#: What to do about a damaged store file.
_DAMAGED = (
    "the file is damaged or is not a run store: restore it from a copy, salvage what is readable with "
    f"`sqlite3 STORE .recover`, or name another store with {parameter('store')}"
)
#: What to do, by SQLite's primary result code (the last word of its error name).
_ADVICE = {
    "FULL": "free space on its disk",
    "READONLY": "it cannot be written (read-only file, folder or mount): reading commands still read it; "
    f"to run, copy it somewhere writable or name another store with {parameter('store')}",
    "CANTOPEN": "check that the file and its folder exist and can be read (and written, to run)",
    "CORRUPT": _DAMAGED,
    "NOTADB": _DAMAGED,
    "BUSY": "another process holds it locked: try again when that process has finished",
    "LOCKED": "another process holds it locked: try again when that process has finished",
    "IOERR": "the disk under it failed to read or write: check the disk, then try again",
    "PERM": "check the file's permissions",
}
#: SQLite's messages of those codes (Python before 3.11 gives no error name).
_MESSAGES = {
    "database or disk is full": "FULL",
    "readonly database": "READONLY",
    "unable to open database file": "CANTOPEN",
    "database disk image is malformed": "CORRUPT",
    "file is not a database": "NOTADB",
    "database is locked": "BUSY",
    "disk i/o error": "IOERR",
}


def store_error(path: Path, what: str, exc: BaseException) -> StoreError:
    """The one-line :class:`StoreError` of a failed store operation: the store, what failed, SQLite's
    reason, and what to do about it.

    >>> import sqlite3
    >>> error = store_error(Path("s.sqlite"), "list runs", sqlite3.DatabaseError("file is not a database"))
    >>> print(str(error)[:92])
    store 's.sqlite': cannot list runs: file is not a database; the file is damaged or is not a
    """
    name = getattr(exc, "sqlite_errorname", None) or ""
    code = name.removeprefix("SQLITE_").split("_")[0]
    if code not in _ADVICE:
        text = str(exc).lower()
        code = next((key for message, key in _MESSAGES.items() if message in text), "")
    if isinstance(exc, OSError) and not isinstance(exc, sqlite3.Error):
        reason = exc.strerror or str(exc)
        advice = "check that its folder exists and can be written"
    else:
        reason = str(exc)
        advice = _ADVICE.get(code, f"check the file, or name another store with {parameter('store')}")
    return StoreError(f"store {str(path)!r}: cannot {what}: {reason}; {advice}")


def _settings(text: str) -> dict[str, Any]:
    """A run's stored settings (JSON); a damaged value is an :class:`EvaluationError`."""
    try:
        settings = json.loads(text)
    except (TypeError, ValueError) as exc:
        raise EvaluationError(f"the run's settings are not JSON ({exc})") from exc
    if not isinstance(settings, dict):
        raise EvaluationError(f"the run's settings are not a JSON object; got {type(settings).__name__}")
    return settings


def _open_readonly(path: Path) -> sqlite3.Connection:
    """A read-only connection to the store at ``path``, also on read-only media.

    ``mode=ro`` first: it reads a WAL store with its ``-wal`` and ``-shm`` files (SQLite builds
    the shared memory index itself when ``-shm`` cannot be written).  A WAL store without a
    ``-wal`` file (closed cleanly, or copied alone) on media where the ``-shm`` file cannot be
    created cannot be opened that way (``unable to open database file``): then it is opened
    ``immutable`` (no locks, no change detection), which is exact as long as nothing writes it,
    and nothing can where not even ``-shm`` can be created.  A store whose ``-wal`` file holds
    commits is never opened immutable (that would silently drop them).
    """
    uri = f"file:{urllib.parse.quote(str(path))}"
    try:
        return _connected(f"{uri}?mode=ro")
    except sqlite3.OperationalError as exc:
        wal = path.with_name(path.name + "-wal")
        if "unable to open" not in str(exc) or (wal.exists() and wal.stat().st_size > 0):
            raise
    return _connected(f"{uri}?immutable=1")


def _connected(uri: str) -> sqlite3.Connection:
    """A connection to ``uri`` whose file has really been opened (SQLite opens lazily), else the error."""
    db = sqlite3.connect(uri, uri=True, isolation_level=None)
    try:
        db.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
    except BaseException:
        db.close()
        raise
    return db


def _pass_rate(rates: list[float]) -> float | None:
    return math.fsum(rates) / len(rates) if rates else None


class TrialStore:
    """A SQLite run store at ``path`` (created if missing), in WAL mode.

    One connection, used from the thread that opened it (the runner's event loop).

    >>> import tempfile
    >>> store = TrialStore(Path(tempfile.mkdtemp()) / "runs.sqlite")
    >>> store.create_run(RunInfo("r1", "demo", None, "abc"))
    >>> record = TrialRecord(case_id="c", trial=0, target="t", passed=True, verdict="pass", score=1.0,
    ...                      output="4")
    >>> store.insert([TrialStore.row("r1", record)])
    >>> store.count("r1"), store.records("r1")[0] == record
    (1, True)
    >>> store.close()
    """

    def __init__(self, path: str | Path, *, readonly: bool = False) -> None:
        self.path = Path(path)
        self.readonly = readonly
        try:
            if readonly:
                self._db = _open_readonly(self.path)
                tables = {row[0] for row in self._db.execute("SELECT name FROM sqlite_master")}
                if not {"runs", "trials"} <= tables:
                    self._db.close()
                    raise StoreError(
                        f"store {str(self.path)!r}: cannot open the SQLite run store: it is not a "
                        "trialscore run store (no runs and trials tables); name the store `trialscore run` "
                        f"wrote with {parameter('store')}"
                    )
            else:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._db = sqlite3.connect(self.path, isolation_level=None)
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute("PRAGMA synchronous=NORMAL")
                self._db.execute("PRAGMA busy_timeout=10000")
                self._db.executescript(_SCHEMA)
            columns = {row[1] for row in self._db.execute("PRAGMA table_info(runs)")}
            for name, kind in _LATER_COLUMNS:  # a store made before runs kept these
                if name not in columns and not readonly:
                    self._db.execute(f"ALTER TABLE runs ADD COLUMN {name} {kind}")
                    columns.add(name)
        except (OSError, sqlite3.Error) as exc:
            raise store_error(self.path, "open the SQLite run store", exc) from exc
        self._suite_text = "suite_text" if "suite_text" in columns else "NULL"
        # a read-only store made before runs kept their status reads as NULL (status "unknown")
        self._state = ", ".join(
            name if name in columns else "NULL" for name in ("status", "planned", "pid", "host")
        )

    @staticmethod
    def row(run_id: str, record: TrialRecord) -> TrialRow:
        """The table row of a finished trial.

        The output text goes to its own column (to read with SQL), and only
        there: the record JSON leaves it out, so a long output is stored once.
        :meth:`records` puts it back.
        """
        return (
            run_id,
            record.target or "",
            record.case_id,
            record.trial,
            record.verdict,
            record.cost_usd,
            record.output,
            record.model_dump_json(exclude=_OUTPUT),
        )

    def create_run(self, info: RunInfo) -> None:
        """Record a new run; a run id already in the store is an error."""
        try:
            self._db.execute(
                "INSERT INTO runs (run_id, suite, suite_path, suite_digest, settings, out_dir, created_at, "
                "suite_text) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    info.run_id,
                    info.suite,
                    info.suite_path,
                    info.suite_digest,
                    json.dumps(info.settings, sort_keys=True),
                    info.out_dir,
                    info.created_at,
                    info.suite_text,
                ),
            )
        except sqlite3.IntegrityError as exc:
            raise EvaluationError(f"run_id {info.run_id!r} is already in store {str(self.path)!r}") from exc
        except sqlite3.Error as exc:
            raise store_error(self.path, f"record run {info.run_id!r}", exc) from exc

    def run(self, run_id: str) -> RunInfo:
        """The stored run ``run_id``; an unknown id is an error that lists the latest runs."""
        with self._reading("read run"):
            row = self._db.execute(
                "SELECT run_id, suite, suite_path, suite_digest, settings, out_dir, created_at, "
                f"{self._suite_text} FROM runs WHERE run_id = ?",
                (run_id,),
            ).fetchone()
            latest = [
                r[0] for r in self._db.execute("SELECT run_id FROM runs ORDER BY created_at DESC LIMIT 5")
            ]
        if row is None:
            known = ", ".join(latest) if latest else "none"
            raise EvaluationError(
                f"run_id {run_id!r} is not in store {str(self.path)!r} (latest runs: {known})"
            )
        with self._reading(f"read run {run_id!r}"):
            settings = _settings(row[4])
        return RunInfo(row[0], row[1], row[2], row[3], settings, row[5], row[6], row[7])

    def start_session(self, run_id: str, planned: int) -> None:
        """Mark ``run_id`` as running in this process, with the trials it plans in all."""
        with self._reading(f"mark run {run_id!r} as running"):
            self._db.execute(
                "UPDATE runs SET status = 'running', planned = ?, pid = ?, host = ? WHERE run_id = ?",
                (planned, os.getpid(), socket.gethostname(), run_id),
            )

    def finish_session(self, run_id: str, status: str) -> None:
        """Record how this process's session of ``run_id`` ended (a status of :data:`RUN_STATUSES`)."""
        if status not in RUN_STATUSES:
            raise EvaluationError(f"status must be one of {', '.join(RUN_STATUSES)}; got {status!r}")
        with self._reading(f"mark run {run_id!r} as {status}"):
            self._db.execute(
                "UPDATE runs SET status = ?, finished_at = ? WHERE run_id = ?",
                (status, datetime.now(timezone.utc).isoformat(), run_id),
            )

    def state(self, run_id: str) -> RunState:
        """Where ``run_id`` stands: its status, trials planned and stored."""
        with self._reading("read the run's status"):
            row = self._db.execute(f"SELECT {self._state} FROM runs WHERE run_id = ?", (run_id,)).fetchone()
        if row is None:
            raise EvaluationError(f"run_id {run_id!r} is not in store {str(self.path)!r}")
        return RunState(run_id, status_of(row[0], row[2], row[3]), row[1], self.count(run_id))

    def insert(self, rows: Iterable[TrialRow]) -> None:
        """Insert finished trials and commit them in one transaction.

        Raises
        ------
        StoreError
            When the batch cannot be committed (a trial already stored, a full
            disk, ...): the whole batch is rolled back, earlier commits stay.
        """
        try:
            self._db.execute("BEGIN")
            self._db.executemany("INSERT INTO trials VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)
            self._db.execute("COMMIT")
        except sqlite3.Error as exc:
            # SQLite may have rolled back already (SQLITE_FULL on COMMIT does): a second
            # ROLLBACK outside a transaction would raise and hide the real cause.
            if self._db.in_transaction:
                with contextlib.suppress(sqlite3.Error):
                    self._db.execute("ROLLBACK")
            raise store_error(self.path, "commit trials", exc) from exc

    def count(self, run_id: str) -> int:
        """How many trials of ``run_id`` are stored."""
        with self._reading("count trials"):
            return int(
                self._db.execute("SELECT COUNT(*) FROM trials WHERE run_id = ?", (run_id,)).fetchone()[0]
            )

    def records(self, run_id: str) -> list[TrialRecord]:
        """Every stored trial of ``run_id``, ordered by target, case and trial."""
        return list(self.iter_records(run_id))

    def iter_records(
        self, run_id: str, target: str | None = None, case_id: str | None = None
    ) -> Iterator[TrialRecord]:
        """The stored trials of ``run_id`` one at a time (never all in memory), ordered by target, case
        and trial; only those of ``target`` and ``case_id`` when given."""
        where, parameters = "run_id = ?", [run_id]
        for column, value in (("target", target), ("case_id", case_id)):
            if value is not None:
                where += f" AND {column} = ?"
                parameters.append(value)
        with self._reading("read trials"):
            cursor = self._db.execute(
                f"SELECT record, output FROM trials WHERE {where} ORDER BY target, case_id, trial", parameters
            )
            for line, output in cursor:
                yield TrialRecord.from_json_line(line, where=f"run {run_id}").model_copy(
                    update={"output": output}
                )

    def case_trials(
        self, run_id: str, target: str, case_id: str
    ) -> list[tuple[int, float | None, str, float | None]]:
        """``(trial, score, verdict, cost_usd)`` of each stored trial of one case, in trial order."""
        with self._reading("read trials"):
            return self._db.execute(
                "SELECT trial, json_extract(record, '$.score'), verdict, cost_usd FROM trials "
                "WHERE run_id = ? AND target = ? AND case_id = ? ORDER BY trial",
                (run_id, target, case_id),
            ).fetchall()

    def run_ids(self, suite: str | None = None) -> list[str]:
        """Every stored run id (of ``suite`` only, when given), oldest first (by ``created_at``, then by
        when it was stored)."""
        where, args = ("WHERE suite = ? ", (suite,)) if suite is not None else ("", ())
        with self._reading("list runs"):
            return [
                row[0]
                for row in self._db.execute(
                    f"SELECT run_id FROM runs {where}ORDER BY created_at, rowid", args
                )
            ]

    def suites(self) -> list[str]:
        """The names of the suites the store holds runs of, sorted."""
        with self._reading("list suites"):
            return [row[0] for row in self._db.execute("SELECT DISTINCT suite FROM runs ORDER BY suite")]

    def resolve(self, name: str, suite: str | None = None) -> str | None:
        """The run id ``name`` means: a stored run id, ``latest`` or ``latest~N``; None when none.

        With ``suite``, ``latest`` and ``latest~N`` count the runs of that suite only.

        >>> import tempfile
        >>> store = TrialStore(Path(tempfile.mkdtemp()) / "runs.sqlite")
        >>> for run_id, when in (("a", "2025-01-01"), ("b", "2025-01-02")):
        ...     store.create_run(RunInfo(run_id, "s", None, "x", created_at=when))
        >>> store.resolve("latest"), store.resolve("latest~1"), store.resolve("a"), store.resolve("latest~2")
        ('b', 'a', 'a', None)
        >>> store.close()
        """
        if name in self.run_ids():
            return name
        ids = self.run_ids(suite)
        match = LATEST.fullmatch(name)
        if match is None:
            return None
        back = int(match.group(1) or 0)
        return ids[-1 - back] if back < len(ids) else None

    def summaries(self, suite: str | None = None) -> list[RunSummary]:
        """One :class:`RunSummary` per stored run (of ``suite`` only, when given), oldest first."""
        where, args = ("WHERE suite = ? ", (suite,)) if suite is not None else ("", ())
        with self._reading("summarise runs"):
            runs = self._db.execute(
                f"SELECT run_id, suite, created_at, settings, {self._state} "
                f"FROM runs {where}ORDER BY created_at, rowid",
                args,
            ).fetchall()
            cells = self._db.execute(
                "SELECT run_id, target, case_id, COUNT(*), SUM(verdict = 'error'), "
                "SUM(COALESCE(json_extract(record, '$.passed'), 0) = 1), SUM(cost_usd), COUNT(cost_usd) "
                "FROM trials GROUP BY run_id, target, case_id"
            ).fetchall()
        by_run: dict[str, list[tuple[Any, ...]]] = {}
        for cell in cells:
            by_run.setdefault(cell[0], []).append(cell)
        out = []
        for run_id, suite_name, created_at, settings, status, planned_trials, pid, host in runs:
            rows = by_run.get(run_id, [])
            with self._reading(f"summarise run {run_id!r}"):
                planned = _settings(settings).get("targets") or []
            targets = tuple(dict.fromkeys([*planned, *(row[1] for row in rows)]))
            rates: dict[str, list[float]] = {name: [] for name in targets}
            for _, target, _, trials, errored, passed, _, _ in rows:
                if trials > errored:
                    rates[target].append(passed / (trials - errored))
            known = [row[6] for row in rows if row[7]]
            out.append(
                RunSummary(
                    run_id=run_id,
                    suite=suite_name,
                    created_at=created_at,
                    targets=targets,
                    cases=len({row[2] for row in rows}),
                    trials=sum(row[3] for row in rows),
                    errored=sum(row[4] for row in rows),
                    pass_at_1=_pass_rate([rate for values in rates.values() for rate in values]),
                    pass_at_1_by_target={name: _pass_rate(values) for name, values in rates.items()},
                    cost_usd=total_usd(math.fsum(known)) if known else None,
                    status=status_of(status, pid, host),
                    planned=planned_trials,
                )
            )
        return out

    @contextlib.contextmanager
    def _reading(self, what: str) -> Iterator[None]:
        """Turn a failed read into a :class:`StoreError`: SQLite's own, or a row damaged past its checks."""
        try:
            yield
        except sqlite3.Error as exc:
            raise store_error(self.path, what, exc) from exc
        except EvaluationError as exc:  # a stored record that no longer parses
            raise StoreError(f"store {str(self.path)!r}: cannot {what}: {exc}; {_DAMAGED}") from exc

    def close(self) -> None:
        """Close the connection (committed trials are already durable)."""
        with contextlib.suppress(sqlite3.Error):
            self._db.close()


@contextlib.contextmanager
def open_history(path: str | Path) -> Iterator[TrialStore]:
    """An existing run store, opened read-only to read its history; a missing store is an error.

    A store on read-only media (a read-only mount, a CI artifact) is read as it is: see
    :func:`_open_readonly`.

    Raises
    ------
    EvaluationError
        When there is no store at ``path`` (it names the path and how runs get there).
    StoreError
        When the store cannot be opened or read (damaged, unreadable): the message names it and
        what to do.
    """
    path = Path(path)
    if not path.is_file():
        raise EvaluationError(
            f"no run store at {str(path)!r}: `trialscore run` writes its runs there "
            f"(or name one with {parameter('store')})"
        )
    store = TrialStore(path, readonly=True)
    try:
        yield store
    finally:
        store.close()
