"""Faults under a run: a full disk under the store, hostile servers, programs that fork, hung calls.

Each test drives the real thing (a real full filesystem or SQLite's own SQLITE_FULL, a real HTTP
server on 127.0.0.1, real process trees) and bounds its own time, so a regression fails rather than hangs.
"""

from __future__ import annotations

import contextlib
import shutil
import sqlite3
import subprocess
import sys
import textwrap
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from trialscore.runner.commands import EXIT_STORE_FAILED

SRC = Path(__file__).resolve().parents[2] / "src"


def write_suite(tmp_path: Path, document: dict, agent: str | None = None) -> Path:
    if agent is not None:
        (tmp_path / "agent.py").write_text(textwrap.dedent(agent))
    path = tmp_path / "suite.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    return path


def runner_command(*args: str, prelude: str = "") -> list[str]:
    """``python -m trialscore.runner ARGS`` in a fresh process, after ``prelude`` (test-only patches)."""
    code = f"import sys; sys.path.insert(0, {str(SRC)!r})\n{prelude}\n"
    code += "from trialscore.runner.__main__ import app\napp(prog_name='trialscore')\n"
    return [sys.executable, "-c", code, *args]


def run_cli(*args: str, prelude: str = "", timeout: float = 90, cwd: Path | None = None):
    """Run the runner's CLI; a run that does not end within ``timeout`` fails the test (no hang)."""
    process = subprocess.Popen(
        runner_command(*args, prelude=prelude),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=cwd,
    )
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
        pytest.fail(f"the run hung for {timeout} s: {err[-2000:]}")
    return process.returncode, out, err


# ---------------------------------------------------------------- 12: a full disk under the store


@dataclass
class SmallDisk:
    """A directory whose filesystem fills up: a real tmpfs when the test may mount one, else a
    store whose SQLite connection has a page limit (``PRAGMA max_page_count``: a real SQLITE_FULL)."""

    directory: Path
    prelude: str
    grow: Callable[[], None]
    kind: str


@contextlib.contextmanager
def small_disk(tmp_path: Path) -> Iterator[SmallDisk]:
    mountpoint = tmp_path / "small"
    mountpoint.mkdir()
    mounted = (
        shutil.which("mount") is not None
        and subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mountpoint)], capture_output=True
        ).returncode
        == 0
    )
    if mounted:

        def grow() -> None:
            subprocess.run(["mount", "-o", "remount,size=64m", str(mountpoint)], check=True)

        try:
            yield SmallDisk(mountpoint, "", grow, "tmpfs")
        finally:
            subprocess.run(["umount", "-l", str(mountpoint)], capture_output=True)
        return
    warnings.warn("cannot mount a tmpfs here: the full disk is SQLite's max_page_count", stacklevel=1)
    prelude = textwrap.dedent(
        """
        from trialscore.runner import store as _store
        _init = _store.TrialStore.__init__
        def _small(self, path):
            _init(self, path)
            pages = self._db.execute("PRAGMA page_count").fetchone()[0]
            self._db.execute(f"PRAGMA max_page_count={pages + 40}")
        _store.TrialStore.__init__ = _small
        """
    )
    yield SmallDisk(mountpoint, prelude, lambda: None, "max_page_count")


BIG_AGENT = """
import random
def answer(case, seed):
    rng = random.Random(seed)
    return "yes " + "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(8000))
"""


def test_a_full_disk_under_the_store_stops_the_run_with_one_message_and_it_resumes(tmp_path: Path) -> None:
    document = {
        "name": "fills",
        "targets": [{"name": "a", "type": "python", "callable": "agent.py:answer"}],
        "cases": [
            {"id": f"case-{i}", "input": "q", "graders": [{"type": "contains", "value": "yes"}]}
            for i in range(10)
        ],
        "execution": {"trials": {"count": 10}, "concurrency": 4, "seed": 1},
    }
    suite = write_suite(tmp_path, document, BIG_AGENT)
    with small_disk(tmp_path) as disk:
        store = disk.directory / "store.sqlite"
        out = tmp_path / "out"
        args = ("run", str(suite), "--store", str(store), "--out", str(out), "--no-progress")
        code, _, err = run_cli(*args, prelude=disk.prelude, cwd=tmp_path)
        assert code == EXIT_STORE_FAILED, (disk.kind, err)
        assert "Traceback" not in err, err
        lines = [line for line in err.splitlines() if line.strip()]
        assert len(lines) == 1, err
        message = lines[0]
        assert message.startswith("error: store ") and str(store) in message, message
        assert "database or disk is full" in message and "cannot commit" in message, message
        assert "resume with: trialscore run" in message and "--resume" in message, message
        assert not out.exists()
        with sqlite3.connect(store) as db:
            (run_id,) = db.execute("SELECT run_id FROM runs").fetchone()
            kept = db.execute("SELECT COUNT(*) FROM trials").fetchone()[0]
        assert 0 < kept < 100

        disk.grow()
        code, _, err = run_cli(*args, "--resume", run_id, cwd=tmp_path)
        assert code == 0, err
        with sqlite3.connect(store) as db:
            rows = db.execute("SELECT case_id, trial FROM trials").fetchall()
        assert len(rows) == len(set(rows)) == 100
        assert len((out / "trials.jsonl").read_text().splitlines()) == 100


def test_a_rollback_after_a_failed_commit_does_not_hide_the_cause(tmp_path: Path) -> None:
    from trialscore.results.records import TrialRecord
    from trialscore.runner.store import RunInfo, StoreError, TrialStore

    store = TrialStore(tmp_path / "s.sqlite")
    store.create_run(RunInfo("r", "s", None, "d"))
    pages = store._db.execute("PRAGMA page_count").fetchone()[0]
    store._db.execute(f"PRAGMA max_page_count={pages + 2}")
    record = TrialRecord(case_id="c", trial=0, target="t", passed=True, verdict="pass", score=1.0)
    big = record.model_copy(update={"output": "x" * 100_000})
    with pytest.raises(StoreError, match="database or disk is full"):
        store.insert([TrialStore.row("r", big)])
    store._db.execute("PRAGMA max_page_count=1000000")
    store.insert([TrialStore.row("r", record)])  # the store is still usable
    assert store.count("r") == 1
    store.close()
