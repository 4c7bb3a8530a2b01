"""Every command that opens the run store survives one it cannot write or read.

A store on read-only media (a real read-only tmpfs where the test may mount one) is read by every
reading command; only ``run`` needs to write it, and says so.  A damaged store (its first page, a
page of its trials table, a row's JSON) is one line naming the store and what to do, exit 74, in
every command, never a traceback.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import shutil
import sqlite3
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.cli_runner import CliRunner
from tests.media import can_mount, copy_files, run_commands
from trialscore.cli import app
from trialscore.cli._app import EXIT_STORE_FAILED

runner = CliRunner()


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store with two demo runs (13 cases x 5 and x 3 trials), closed cleanly (no -wal file)."""
    folder = tmp_path_factory.mktemp("stored")
    store = folder / "store.sqlite"
    for trials in ("5", "3"):
        args = ["run", "--demo", "--store", str(store), "--no-progress", "--trials", trials]
        result = runner.invoke(app, [*args, "--out", str(folder / f"out{trials}")])
        assert result.exit_code == 0, result.output
    assert not store.with_name("store.sqlite-wal").exists()
    return store


def copy_of(store: Path, into: Path) -> Path:
    into.mkdir(parents=True, exist_ok=True)
    return Path(shutil.copy(store, into / "store.sqlite"))


#: Every reading command, as arguments after ``trialscore`` (``{store}``: the store, ``{out}``: a
#: writable folder outside it).
READERS = {
    "runs": ["runs", "--store", "{store}"],
    "runs show": ["runs", "show", "latest", "--store", "{store}"],
    "score": ["score", "latest", "--store", "{store}", "-f", "json"],
    "compare": ["compare", "latest~1", "latest", "--store", "{store}", "-f", "json"],
    "track": ["track", "--store", "{store}", "-f", "json"],
    "report": ["report", "latest", "--store", "{store}", "--out", "{out}/report.html"],
}


def arguments(command: str, store: Path, out: Path) -> list[str]:
    return [part.format(store=store, out=out) for part in READERS[command]]


def one_store_line(output: str, store: Path) -> str:
    """The single line a store failure prints; fails on a traceback or more lines."""
    lines = [line for line in output.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in output, output
    assert lines[0].startswith(f"error: store '{store}': cannot "), lines[0]
    return lines[0]


# ---------------------------------------------------------------- a damaged store


def damage_first_page(store: Path) -> None:
    with store.open("r+b") as handle:
        handle.write(b"this is no longer a SQLite header" * 3)


def damage_trials_table(store: Path) -> None:
    """Overwrite the root page of the trials table (an interior page: 65 + 39 trials span many pages)."""
    with contextlib.closing(sqlite3.connect(store)) as db:
        page_size = db.execute("PRAGMA page_size").fetchone()[0]
        (root,) = db.execute("SELECT rootpage FROM sqlite_master WHERE name = 'trials'").fetchone()
        pages = db.execute("SELECT COUNT(*) FROM dbstat WHERE name = 'trials'").fetchone()[0]
    assert pages > 2, "the trials table must span several pages for this test"
    with store.open("r+b") as handle:
        handle.seek((root - 1) * page_size)
        handle.write(b"\xff" * page_size)


#: Each damage, and what the line says of it.
DAMAGES = {
    "first page": (damage_first_page, ["file is not a database", "restore it from a copy"]),
    "trials table page": (damage_trials_table, ["malformed", "sqlite3 STORE .recover"]),
}


@pytest.mark.slow
@pytest.mark.parametrize("damage", sorted(DAMAGES))
@pytest.mark.parametrize("command", sorted(READERS))
def test_a_damaged_store_is_one_line_and_exit_74_in_every_command(
    stored: Path, tmp_path: Path, command: str, damage: str
) -> None:
    store = copy_of(stored, tmp_path / "damaged")
    spoil, said = DAMAGES[damage]
    spoil(store)
    result = runner.invoke(app, arguments(command, store, tmp_path))
    assert result.exit_code == EXIT_STORE_FAILED, result.output
    line = one_store_line(result.output, store)
    assert all(words in line for words in said), line


@pytest.mark.slow
def test_a_damaged_row_is_named_as_damage_not_as_bad_input(stored: Path, tmp_path: Path) -> None:
    store = copy_of(stored, tmp_path / "rows")
    with contextlib.closing(sqlite3.connect(store)) as db, db:
        db.execute("UPDATE runs SET settings = '{\"targets\": [' WHERE rowid = 2")
        db.execute("UPDATE trials SET record = 'not json' WHERE rowid = (SELECT MAX(rowid) FROM trials)")
    for command in ("runs", "score"):
        result = runner.invoke(app, arguments(command, store, tmp_path))
        assert result.exit_code == EXIT_STORE_FAILED, result.output
        line = one_store_line(result.output, store)
        assert "damaged" in line, line


def test_a_file_that_is_no_run_store_says_so(tmp_path: Path) -> None:
    other = tmp_path / "other.sqlite"
    with contextlib.closing(sqlite3.connect(other)) as db, db:
        db.execute("CREATE TABLE notes (text)")
    result = runner.invoke(app, ["runs", "--store", str(other)])
    assert result.exit_code == EXIT_STORE_FAILED, result.output
    assert "not a trialscore run store" in one_store_line(result.output, other)


def test_run_on_a_damaged_store_stops_before_any_trial(stored: Path, tmp_path: Path) -> None:
    store = copy_of(stored, tmp_path / "damaged")
    damage_first_page(store)
    args = ["run", "--demo", "--store", str(store), "--no-progress", "--out", str(tmp_path / "out")]
    result = runner.invoke(app, args)
    assert result.exit_code == EXIT_STORE_FAILED, result.output
    assert "file is not a database" in one_store_line(result.output, store)
    assert not (tmp_path / "out").exists()


# ---------------------------------------------------------------- read-only media


#: Runs the commands (a JSON object of name: arguments, in ``argv[1]``) in one process, in turn, through
#: Typer's runner; prints each one's [exit status, output] as a JSON object on the last line.
_IN_ONE_PROCESS = """
import json, sys, traceback
from tests.cli_runner import CliRunner
from trialscore.cli import app
said = {}
for name, args in json.loads(sys.argv[1]).items():
    result = CliRunner().invoke(app, args)
    text = result.output
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        text += "".join(traceback.format_exception(result.exception))
    said[name] = [result.exit_code, text]
print(json.dumps(said))
"""


def run_on_read_only(media: dict[Path, Path], commands: dict[str, list[str]]) -> dict[str, tuple[int, str]]:
    """Each command's (exit status, output), each folder of ``media`` read-only and holding a copy of
    the files of its store (the value).

    A real read-only tmpfs a folder (remounted ``ro`` in a mount namespace of the commands' own, so
    root is refused too); else, for a user other than root, files and folders without write
    permission.  The commands run in one Python process started there (see ``_IN_ONE_PROCESS``).
    """
    batch = shlex.join([sys.executable, "-c", _IN_ONE_PROCESS, json.dumps(commands)]) + " 2>&1"
    if can_mount():
        setup = ""
        for folder, source in media.items():
            setup += f"mount -t tmpfs -o size=16m tmpfs {folder}\ncp {source}* {folder}/\n"
            setup += f"mount -o remount,ro {folder}\nif touch {folder}/probe 2>/dev/null; then\n"
            setup += "  echo 'the media is writable' >&2; exit 99\nfi\n"
        status, text = run_commands({}, setup, namespace=True, after=batch)["after"]
    elif os.geteuid() == 0:
        pytest.skip("cannot mount here, and permission bits do not stop root: no read-only media to test")
    else:
        for folder, source in media.items():
            copy_files(source, folder)
            for path in [*folder.iterdir(), folder]:
                path.chmod(0o555 if path.is_dir() else 0o444)
        try:
            status, text = run_commands({}, "", namespace=False, after=batch)["after"]
        finally:
            for folder in media:
                folder.chmod(0o755)
    assert status == 0, text
    return {name: (code, output) for name, (code, output) in json.loads(text.splitlines()[-1]).items()}


@dataclass(frozen=True)
class ReadOnly:
    """A store read on read-only media: where it is, where the commands wrote, its latest run's trials,
    and what each command did (exit status, output)."""

    store: Path
    out: Path
    trials: int
    results: dict[str, tuple[int, str]]


#: The stores read on read-only media: one closed cleanly (no -wal: opened immutable), one copied while
#: a writer had it open (-wal and -shm beside it).
WAL = {"closed": False, "with-wal": True}


@pytest.fixture(scope="module")
def read_only(stored: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, ReadOnly]:
    """Every reading command (and ``run``) on each store of :data:`WAL` on read-only media, all in one
    process (one namespace, a medium each)."""
    media: dict[Path, Path] = {}
    commands: dict[str, list[str]] = {}
    places: dict[str, tuple[Path, Path, int, list[str]]] = {}
    writers = []
    for case, wal in WAL.items():
        folder = tmp_path_factory.mktemp(case)
        source = copy_of(stored, folder / "source")
        trials = 39
        if wal:  # a writer still has it open: the last run's trials are only in the -wal file
            writer = sqlite3.connect(source, isolation_level=None)
            writers.append(writer)
            writer.execute("PRAGMA journal_mode=WAL")
            writer.execute("PRAGMA wal_autocheckpoint=0")
            writer.execute(
                "INSERT INTO trials SELECT run_id, target, case_id, trial + 100, verdict, cost_usd, output, "
                "json_set(record, '$.trial', trial + 100) FROM trials "
                "WHERE run_id = (SELECT run_id FROM runs ORDER BY created_at DESC LIMIT 1)"
            )
            trials = 78
            assert source.with_name("store.sqlite-wal").stat().st_size > 0
        out = folder / "out"
        out.mkdir()
        medium = folder / "media"
        medium.mkdir()
        store = medium / "store.sqlite"
        media[medium] = source
        asked = {command: arguments(command, store, out) for command in READERS}
        asked["runs json"] = ["runs", "--store", str(store), "-f", "json"]
        asked["run"] = ["run", "--demo", "--store", str(store), "--no-progress", "--out", str(out / "run")]
        commands.update({f"{case}: {command}": args for command, args in asked.items()})
        places[case] = (store, out, trials, [f"{case}: {command}" for command in asked])
    try:
        results = run_on_read_only(media, commands)
    finally:
        for writer in writers:
            writer.close()
    return {
        case: ReadOnly(store, out, trials, {name.removeprefix(f"{case}: "): results[name] for name in asked})
        for case, (store, out, trials, asked) in places.items()
    }


@pytest.mark.slow
@pytest.mark.parametrize("case", list(WAL))
def test_every_reading_command_reads_a_store_on_read_only_media(
    read_only: dict[str, ReadOnly], case: str
) -> None:
    """A store closed cleanly (no -wal: opened immutable) and one copied while open (-wal and -shm
    beside it: read through them, its last commits included) are both read; ``run`` says it cannot
    write and how to go on."""
    seen = read_only[case]
    for command, (status, text) in seen.results.items():
        if command == "run":
            continue
        assert status == 0 and "Traceback" not in text, (command, text)
    listed = json.loads(seen.results["runs json"][1])
    assert [run["trials"] for run in listed["runs"]] == [65, seen.trials]
    assert json.loads(seen.results["score"][1])["rows"]["rows_read"] == seen.trials
    assert (seen.out / "report.html").stat().st_size > 10_000
    status, text = seen.results["run"]
    assert status == EXIT_STORE_FAILED, text
    line = one_store_line(text, seen.store)
    assert "readonly" in line or "unable to open" in line, line
    assert not (seen.out / "run").exists()
