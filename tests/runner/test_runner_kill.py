"""SIGKILL loses at most the trials in flight; Ctrl-C stops cleanly; resume duplicates nothing.

The run that is killed or interrupted is a real process; its resume runs in this process (Typer's
runner), under a timeout mark that bounds each test by the sum of its steps' bounds.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import yaml
from _distributed import stored

from tests.cli_runner import CliRunner
from trialscore.cli import app
from trialscore.runner.seeds import trial_seed

CASES, TRIALS, CONCURRENCY = 10, 10, 4

AGENT = """
import asyncio, os
async def answer(case, seed):
    with open(os.path.join(os.path.dirname(__file__), "started.log"), "a") as log:
        log.write(f"{os.getpid()} {case.id} {seed}\\n")
    await asyncio.sleep(0.02)
    return "yes"
"""


def setup(tmp_path: Path) -> tuple[Path, Path]:
    (tmp_path / "agent.py").write_text(textwrap.dedent(AGENT))
    document = {
        "name": "killable",
        "targets": [{"name": "a", "type": "python", "callable": "agent.py:answer"}],
        "cases": [
            {"id": f"case-{i}", "input": "q", "expected": "yes", "graders": [{"type": "exact"}]}
            for i in range(CASES)
        ],
        "execution": {"trials": {"count": TRIALS}, "concurrency": CONCURRENCY, "seed": 5},
    }
    suite = tmp_path / "suite.yaml"
    suite.write_text(yaml.safe_dump(document, sort_keys=False))
    return suite, tmp_path / "store.sqlite"


def start(suite: Path, store: Path) -> subprocess.Popen[str]:
    command = [
        sys.executable,
        "-m",
        "trialscore",
        "run",
        str(suite),
        "--store",
        str(store),
        "--no-progress",
    ]
    return subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=suite.parent
    )


def run_here(*args: str) -> None:
    """``trialscore run ARGS --no-progress`` in this process (Typer's runner); it must succeed."""
    result = CliRunner().invoke(app, ["run", *args, "--no-progress"])
    assert result.exit_code == 0, result.output


def run_id(store: Path) -> str:
    with sqlite3.connect(store) as db:
        return db.execute("SELECT run_id FROM runs").fetchone()[0]


def wait_for_trials(process: subprocess.Popen[str], store: Path, count: int) -> None:
    deadline = time.monotonic() + 60
    while len(stored(store)) < count:
        assert process.poll() is None, f"the run ended before it could be stopped: {process.communicate()}"
        assert time.monotonic() < deadline, "the run made no progress"
        time.sleep(0.005)


def started_by(tmp_path: Path, pid: int) -> list[tuple[str, int]]:
    """The (case, trial) of every target call made by process ``pid``."""
    trial_of = {(f"case-{i}", trial_seed(5, f"case-{i}", t)): t for i in range(CASES) for t in range(TRIALS)}
    lines = (tmp_path / "started.log").read_text().splitlines()
    return [
        (case, trial_of[(case, int(seed))])
        for owner, case, seed in (line.split() for line in lines)
        if int(owner) == pid
    ]


ALL = {(f"case-{i}", t) for i in range(CASES) for t in range(TRIALS)}


@pytest.mark.slow
@pytest.mark.timeout(210)  # 60 s to make progress, 30 s for the kill to land, 120 s for the resume
def test_sigkill_loses_at_most_the_trials_in_flight_and_resume_duplicates_nothing(tmp_path: Path) -> None:
    suite, store = setup(tmp_path)
    first = start(suite, store)
    wait_for_trials(first, store, 30)
    first.send_signal(signal.SIGKILL)
    first.wait(30)
    assert first.returncode == -signal.SIGKILL
    before = stored(store)
    assert len(before) == len(set(before)) and 30 <= len(before) < CASES * TRIALS
    started = set(started_by(tmp_path, first.pid))
    assert set(before) <= started
    lost = started - set(before)
    assert len(lost) <= CONCURRENCY, (
        f"lost {len(lost)} finished trials, more than the {CONCURRENCY} in flight"
    )

    run_here(str(suite), "--store", str(store), "--resume", run_id(store))
    after = stored(store)
    assert len(after) == CASES * TRIALS and set(after) == ALL  # complete, and no trial twice
    rerun = started_by(tmp_path, os.getpid())
    assert len(rerun) == len(set(rerun))
    assert set(rerun) == ALL - set(before)  # the resume ran exactly the missing trials, lost ones included


@pytest.mark.slow
@pytest.mark.timeout(240)  # 60 s to make progress, 60 s to stop, 120 s for the resume
def test_ctrl_c_stops_cleanly_and_says_how_to_resume(tmp_path: Path) -> None:
    suite, store = setup(tmp_path)
    first = start(suite, store)
    wait_for_trials(first, store, 20)
    first.send_signal(signal.SIGINT)
    _, err = first.communicate(timeout=60)
    assert first.returncode == 130, err
    identifier = run_id(store)
    # The resume command needs no suite file: the store keeps the suite with the run.
    assert f"Resume with: trialscore run --resume {identifier} --store {store}" in err
    before = set(stored(store))
    assert len(set(started_by(tmp_path, first.pid)) - before) <= CONCURRENCY
    assert not (tmp_path / ".trialscore").exists() or not any(
        (tmp_path / ".trialscore").rglob("trials.jsonl")
    )

    run_here("--store", str(store), "--resume", identifier, "--out", str(tmp_path / "out"))
    assert set(stored(store)) == ALL
    lines = (tmp_path / "out" / "trials.jsonl").read_text().splitlines()
    assert len(lines) == CASES * TRIALS
    # Trials stored before the interruption get their output text back from the store too.
    assert [json.loads(line)["output"] for line in lines] == ["yes"] * (CASES * TRIALS)
