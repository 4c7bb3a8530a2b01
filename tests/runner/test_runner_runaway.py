"""Runaway programs: a target that floods its output, and descendants that leave the process group.

Each test runs the real thing (``yes``, ``setsid``, ``sh``) and bounds its own time.  Memory is
measured in the child: the ``trialscore run`` process's peak resident set (``wait4``'s rusage, plus
the shared libraries of the Python it is forked from: tests/forks.py).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.cli_runner import CliRunner
from tests.forks import HELPERS, RUNNER, Forks, ForkServers
from tests.runner.test_runner_faults import wait_gone, write_suite
from trialscore.cli import app
from trialscore.cli._app import EXIT_INTERRUPTED, EXIT_NOTHING_GRADED


@pytest.fixture(scope="module")
def runs(fork_servers: ForkServers) -> Forks:
    """Runs ``trialscore run``, each run a process of its own forked from one Python that imported the
    runner once (tests/forks.py, which also measures its peak memory); one that does not end within
    120 s fails the test, as hung."""
    return fork_servers.get(120, HELPERS + RUNNER)


def start_run(runs: Forks, tmp_path: Path, suite: Path, *extra: str) -> int:
    """Start ``trialscore run SUITE`` (its store in ``tmp_path``) in a process of its own; its id."""
    return runs.start("run", str(suite), "--store", str(tmp_path / "s.sqlite"), "--no-progress", *extra)


def run_measured(runs: Forks, tmp_path: Path, suite: Path) -> tuple[int, str, float]:
    """``trialscore run SUITE`` in a child process: (exit status, stderr, the child's peak RSS in MiB)."""
    start_run(runs, tmp_path, suite, "--out", str(tmp_path / "out"))
    done = runs.finish()
    return done.code, done.stderr, done.peak_mb


def run_here(tmp_path: Path, suite: Path) -> tuple[int, str]:
    """``trialscore run SUITE`` in this process (Typer's runner): (exit status, stderr)."""
    args = ["run", str(suite), "--store", str(tmp_path / "s.sqlite")]
    result = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "out"), "--no-progress"])
    return result.exit_code, result.stderr


def trials(tmp_path: Path) -> list[dict]:
    return [json.loads(line) for line in (tmp_path / "out" / "trials.jsonl").read_text().splitlines()]


# ---------------------------------------------------------------- outputs that never end


@pytest.mark.slow
def test_a_command_target_writing_without_end_errors_its_trials_in_bounded_memory(
    runs: Forks, tmp_path: Path
) -> None:
    """``yes`` writes hundreds of MB a second: reading stops at 8 MiB, the program is ended, the trial
    errors (never fails), and the run's memory stays that of a small run."""
    document = {
        "name": "flood",
        "targets": [{"name": "spam", "type": "command", "argv": ["yes", "spam"]}],
        "graders": [{"type": "contains", "value": "spam"}],
        "cases": [{"id": f"c{i}", "input": "x"} for i in range(4)],
        "execution": {"trials": {"count": 2}, "timeout_s": 60, "concurrency": 8, "retries": 1},
    }
    code, err, peak_mib = run_measured(runs, tmp_path, write_suite(tmp_path, document))
    assert code == EXIT_NOTHING_GRADED, err
    records = trials(tmp_path)
    assert len(records) == 8
    for record in records:
        assert record["verdict"] == "error" and record["passed"] is None and record["output"] is None
        assert record["error"] == (
            "target 'spam': output over 8 MiB (max_output_bytes=8388608); stopped reading it and ended "
            "the program"
        )  # not retried: more of the same would not help
    # 8 programs at once, 8 MiB each at most: the child stays far below the 1.3 GB an unbounded read
    # reached; a run of the same suite with `echo` peaks near 130 MiB on the development machine.
    assert peak_mib < 400, peak_mib
    assert (tmp_path / "s.sqlite").stat().st_size < 2**20


@pytest.mark.slow
@pytest.mark.timeout(120)  # a hang fails as a timeout, never a slow machine
def test_the_cap_is_set_per_target_and_a_command_grader_is_capped_too(tmp_path: Path) -> None:
    agent = """
    import sys
    size = int(sys.argv[1])
    sys.stdout.write("y" * size)
    """
    (tmp_path / "write.py").write_text(textwrap.dedent(agent))
    write = [sys.executable, "write.py"]
    document = {
        "name": "caps",
        "targets": [
            {"name": "small", "type": "command", "argv": [*write, "900"], "max_output_bytes": 1000},
            {"name": "large", "type": "command", "argv": [*write, "1100"], "max_output_bytes": 1000},
        ],
        "cases": [
            {"id": "plain", "input": "x", "graders": [{"type": "contains", "value": "y"}]},
            {
                "id": "flooding-grader",
                "input": "x",
                "graders": [{"type": "command", "argv": ["yes"], "max_output_bytes": 65536}],
            },
        ],
        "execution": {"trials": {"count": 1}, "retries": 0},
    }
    code, err = run_here(tmp_path, write_suite(tmp_path, document))
    assert code == 0, err
    by_key = {(r["target"], r["case_id"]): r for r in trials(tmp_path)}
    assert by_key[("small", "plain")]["verdict"] == "pass"
    assert by_key[("large", "plain")]["error"].startswith(
        "target 'large': output over 1000 bytes (max_output_bytes=1000); stopped reading it"
    )
    grader = by_key[("small", "flooding-grader")]
    assert grader["verdict"] == "error" and grader["error"].startswith(
        "command grader 'command': output over 64 KiB (max_output_bytes=65536)"
    )


HUGE_AGENT = """
def answer(case, seed):
    return "z" * (int(case.input) * 2**20)
"""


@pytest.mark.slow
@pytest.mark.timeout(120)  # a hang fails as a timeout, never a slow machine
def test_a_python_target_returning_a_huge_output_errors_and_nothing_of_it_is_kept(tmp_path: Path) -> None:
    document = {
        "name": "huge",
        "targets": [{"name": "py", "type": "python", "callable": "agent.py:answer"}],
        "graders": [{"type": "contains", "value": "z"}],
        "cases": [{"id": "small", "input": "1"}, {"id": "huge", "input": "40"}],
        "execution": {"trials": {"count": 2}, "retries": 0},
    }
    code, err = run_here(tmp_path, write_suite(tmp_path, document, HUGE_AGENT))
    assert code == 0, err
    by_case = {(r["case_id"], r["trial"]): r for r in trials(tmp_path)}
    assert by_case[("small", 0)]["verdict"] == "pass"
    for trial in range(2):
        record = by_case[("huge", trial)]
        assert record["verdict"] == "error" and record["output"] is None
        assert record["error"] == "target 'py': output over 8 MiB (max_output_bytes=8388608); not kept"
    assert (tmp_path / "out" / "trials.jsonl").stat().st_size < 4 * 2**20  # the two 1 MiB outputs
    assert (tmp_path / "s.sqlite").stat().st_size < 8 * 2**20


# ---------------------------------------------------------------- descendants that leave the group


#: A program that starts three grandchildren outside its group: one in its tree (``setsid``), one
#: whose parent exits at once (an orphan, re-parented), one that also forks a child of its own.
ESCAPING = (
    "setsid sleep 600 & echo $! >> {pids}; "
    "(setsid sleep 600 & echo $! >> {pids}); "
    "setsid sh -c 'sleep 600 & echo $! >> {pids}; echo $$ >> {pids}; wait' & "
    "{tail}"
)


def read_pids(path: Path, expected: int, seconds: float = 30) -> list[int]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        pids = [int(word) for word in path.read_text().split()] if path.exists() else []
        if len(pids) >= expected:
            return pids
        time.sleep(0.05)
    pytest.fail(f"the programs did not start their grandchildren: {path.read_text()!r}")


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the subreaper is Linux's")
@pytest.mark.parametrize("ending", ["timeout", "exit"])
def test_no_descendant_of_a_command_target_survives_its_trial(
    runs: Forks, tmp_path: Path, ending: str
) -> None:
    """8 trials x 4 escaping descendants: after a timeout (the program waits) or a normal exit (the
    program answers at once), none of the 32 runs on."""
    pids = tmp_path / "pids"
    tail = "sleep 600" if ending == "timeout" else "sleep 0.3; echo done"
    program = ESCAPING.format(pids=pids, tail=tail)
    document = {
        "name": "escapes",
        "targets": [{"name": "sh", "type": "command", "argv": ["sh", "-c", program]}],
        "graders": [{"type": "contains", "value": "done"}],
        "cases": [{"id": f"c{i}", "input": "x"} for i in range(4)],
        "execution": {"trials": {"count": 2}, "timeout_s": 3, "concurrency": 8, "retries": 0},
    }
    code, err, _ = run_measured(runs, tmp_path, write_suite(tmp_path, document))
    assert code == (EXIT_NOTHING_GRADED if ending == "timeout" else 0), err
    verdicts = {r["verdict"] for r in trials(tmp_path)}
    assert verdicts == ({"error"} if ending == "timeout" else {"pass"})
    started = read_pids(pids, 32)
    assert not wait_gone(started), "descendants outlived their trial"


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the subreaper is Linux's")
def test_sigterm_ends_every_descendant_that_left_the_group(runs: Forks, tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    document = {
        "name": "escapes",
        "targets": [
            {"name": "sh", "type": "command", "argv": ["sh", "-c", ESCAPING.format(pids=pids, tail="wait")]}
        ],
        "graders": [{"type": "contains", "value": "x"}],
        "cases": [{"id": f"c{i}", "input": "x"} for i in range(3)],
        "execution": {"trials": {"count": 2}, "timeout_s": 300, "concurrency": 6},
    }
    pid = start_run(runs, tmp_path, write_suite(tmp_path, document))
    started = read_pids(pids, 24)
    os.kill(pid, signal.SIGTERM)
    done = runs.finish(timeout=60)  # a run that does not stop fails here, as hung
    assert done.code == EXIT_INTERRUPTED, done.stderr
    assert not wait_gone(started), "descendants outlived the interrupted run"


ORPHAN = """
import asyncio, sys
from pathlib import Path
from trialscore.runner.reaper import enable_subreaper
from trialscore.runner.targets.command import run_program
assert enable_subreaper()
folder = Path(sys.argv[1])
script = "(setsid sh -c 'echo $$ > {p}; sleep 0.2' &); sleep 1; echo done".format(p=folder / "pid")
print(asyncio.run(run_program(("sh", "-c", script), "", {}, folder)))
orphan = int((folder / "pid").read_text())
print("zombie" if Path(f"/proc/{orphan}").exists() else "reaped")
"""


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the subreaper is Linux's")
def test_an_orphan_that_exits_on_its_own_is_reaped_not_left_a_zombie(tmp_path: Path) -> None:
    """A subreaper inherits orphans; one that ends by itself must not stay its zombie.  In a process of
    its own: a subreaper adopts every orphan below it, and this test session must not become one."""
    done = subprocess.run(
        [sys.executable, "-c", ORPHAN, str(tmp_path)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["(0, 'done\\n', '')", "reaped"]
