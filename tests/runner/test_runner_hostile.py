"""Hostile suites: a huge trial plan starts at once in bounded memory; a catastrophic regex or a slow
python grader errors its trial after its time limit, and Ctrl-C / SIGTERM still stop the run."""

from __future__ import annotations

import io
import json
import os
import signal
import sys
import time
import tracemalloc
from pathlib import Path

import pytest
import yaml
from rich.console import Console

from tests.forks import HELPERS, RUNNER, Forks, ForkServers
from trialscore.runner.options import RunOptions
from trialscore.runner.orchestrator import execute_suite
from trialscore.runner.suite import load_suite

# A command target whose output makes the regex (a+)+$ backtrack for ages (with Python's re: forever).
BACKTRACKER = "import pathlib; pathlib.Path('started').touch(); print('a' * 5000 + 'b')"


def write_suite(tmp_path: Path, document: dict, agent: str | None = None) -> Path:
    if agent is not None:
        (tmp_path / "agent.py").write_text(agent)
    path = tmp_path / "suite.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    return path


def regex_suite(tmp_path: Path, timeout_s: float, trials: int) -> Path:
    return write_suite(
        tmp_path,
        {
            "name": "backtrack",
            "targets": [{"name": "cli", "type": "command", "argv": [sys.executable, "-c", BACKTRACKER]}],
            "cases": [
                {
                    "id": "c",
                    "input": "x",
                    "graders": [
                        {"type": "regex", "name": "greedy", "pattern": "(a+)+$", "timeout_s": timeout_s}
                    ],
                }
            ],
            "execution": {"trials": {"count": trials}, "concurrency": 2},
        },
    )


@pytest.fixture(scope="module")
def runs(fork_servers: ForkServers) -> Forks:
    """Runs ``trialscore run``, each run a process of its own (tests/forks.py); one that does not end
    within 60 s fails the test, as hung."""
    return fork_servers.get(60, HELPERS + RUNNER)


def start(runs: Forks, tmp_path: Path, suite: Path, *extra: str) -> int:
    """Start ``trialscore run SUITE`` in ``tmp_path`` (its store there); the process id."""
    store = tmp_path / "store.sqlite"
    return runs.start("run", str(suite), "--no-progress", "--store", str(store), *extra, cwd=tmp_path)


@pytest.mark.slow
def test_a_catastrophic_regex_errors_its_trial_naming_the_grader_and_the_limit(
    runs: Forks, tmp_path: Path
) -> None:
    start(runs, tmp_path, regex_suite(tmp_path, timeout_s=0.5, trials=2), "--out", str(tmp_path / "out"))
    done = runs.finish()
    assert done.code == 3, done.stderr  # every trial errored: nothing could be graded
    records = [json.loads(line) for line in (tmp_path / "out" / "trials.jsonl").read_text().splitlines()]
    assert [record["verdict"] for record in records] == ["error", "error"]
    assert records[0]["error"] == (
        "regex grader 'greedy': no match result within timeout_s=0.5 (a pattern that backtracks without end?)"
    )
    assert records[0]["output"] == "a" * 5000 + "b"  # what the target said is kept


@pytest.mark.slow
def test_sigterm_stops_a_run_while_a_catastrophic_regex_grades(runs: Forks, tmp_path: Path) -> None:
    pid = start(runs, tmp_path, regex_suite(tmp_path, timeout_s=120, trials=4))
    deadline = time.monotonic() + 60
    while not (tmp_path / "started").exists():
        assert not runs.ended(), runs.finish()
        assert time.monotonic() < deadline, "the target never ran"
        time.sleep(0.05)
    time.sleep(1.0)  # the grader is now deep in its match
    os.kill(pid, signal.SIGTERM)
    done = runs.finish()  # a run that does not stop fails here, as hung
    assert done.code == 130, done.stderr
    assert "Resume with: trialscore run --resume " in done.stderr


@pytest.mark.timeout(60)  # a grader that is never given up on fails as hung (the sleep is 30 s a call)
def test_a_slow_python_grader_errors_after_its_timeout_and_others_go_on(tmp_path: Path) -> None:
    agent = (
        "import time\n"
        "def answer(case, seed):\n    return 'yes'\n"
        "def slow(output, case):\n    time.sleep(30 if case.id == 'slow' else 0)\n    return True\n"
    )
    grader = {"type": "python", "callable": "agent.py:slow", "timeout_s": 0.5}
    document = {
        "name": "slow-grader",
        "targets": [{"name": "a", "type": "python", "callable": "agent.py:answer"}],
        "cases": [
            {"id": "slow", "input": "x", "graders": [grader]},
            {"id": "quick", "input": "x", "graders": [grader]},
        ],
        "execution": {"trials": {"count": 2}, "concurrency": 4},
    }
    report = execute_suite(
        load_suite(write_suite(tmp_path, document, agent)),
        RunOptions(store=tmp_path / "s.sqlite", progress=False),
        Console(file=io.StringIO()),
    )
    by_case = {(r.case_id, r.trial): r for r in report.records}
    assert by_case[("slow", 0)].error == "python grader 'python': no result within timeout_s=0.5"
    assert by_case[("quick", 0)].verdict == "pass" and by_case[("quick", 1)].verdict == "pass"


def test_a_two_million_trial_plan_starts_at_once_in_bounded_memory(tmp_path: Path) -> None:
    # 20 cases x 100,000 trials. Each trial costs $1 against a $2.5 run budget: the run stops after
    # the first few trials, so what is measured is the plan, not the trials.
    agent = (
        "import os, tracemalloc\n"
        "async def answer(case, seed):\n"
        "    first = os.path.join(os.path.dirname(__file__), 'first')\n"
        "    if not os.path.exists(first):  # the memory traced when the first trial starts\n"
        "        with open(first, 'w') as handle:\n"
        "            handle.write(repr(tracemalloc.get_traced_memory()[1]))\n"
        "    return {'output': 'yes', 'cost_usd': 1.0}\n"
    )
    document = {
        "name": "huge",
        "targets": [{"name": "a", "type": "python", "callable": "agent.py:answer"}],
        "cases": [
            {"id": f"c{i}", "input": "x", "expected": "yes", "graders": [{"type": "exact"}]}
            for i in range(20)
        ],
        "execution": {"trials": {"count": 100_000}, "concurrency": 2, "cost_limit_usd": 2.5},
    }
    suite = load_suite(write_suite(tmp_path, document, agent))
    tracemalloc.start()
    try:
        report = execute_suite(
            suite, RunOptions(store=tmp_path / "s.sqlite", progress=False), Console(file=io.StringIO())
        )
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert report.completed and report.planned == 2_000_000
    assert 3 <= report.committed <= 4  # the budget was reached after the trials in flight
    assert report.skipped == 2_000_000 - report.committed
    assert {case.eval_id for case in report.cases if case.cost_limited} == {f"c{i}" for i in range(20)}
    at_first_trial = int((tmp_path / "first").read_text())  # a plan built before the first trial shows here
    assert at_first_trial < 40 * 2**20, f"{at_first_trial / 2**20:.0f} MiB traced before the first trial"
    assert peak < 40 * 2**20, f"peak traced memory {peak / 2**20:.0f} MiB: the plan was built in memory"
