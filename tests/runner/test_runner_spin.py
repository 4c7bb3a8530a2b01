"""A CPU-bound python target: healthy trials are timed by their own call, and ``isolation: process``
ends a call that spins."""

from __future__ import annotations

import asyncio
import json
import textwrap
import time
from pathlib import Path

import pytest
import yaml

from tests.forks import HELPERS, RUNNER, Forks, ForkServers
from tests.processes import alive
from trialscore.runner.offloop import in_daemon_thread


def test_a_call_that_returned_in_time_is_not_a_timeout_when_the_loop_is_late() -> None:
    """The race a spinning thread causes, made certain: the loop is blocked past the deadline while the
    call returns at once.  Timed by the loop, the call would be a timeout; by its own clock it is not."""

    async def late_loop() -> str:
        call = asyncio.ensure_future(in_daemon_thread(lambda: "answer", timeout=0.2))
        await asyncio.sleep(0.05)  # the thread runs and returns
        time.sleep(0.5)  # the loop is late: a CPU-bound call holds the GIL
        return await call

    assert asyncio.run(late_loop()) == "answer"


def test_the_same_holds_through_the_retry_loop_for_a_python_target(tmp_path: Path) -> None:
    from trialscore.runner.retry import RetryPolicy, call_with_retries
    from trialscore.runner.suite import CaseSpec, PythonTargetSpec
    from trialscore.runner.targets import PythonTarget, TrialRequest

    (tmp_path / "agent.py").write_text("def answer(case, seed):\n    return 'fine'\n")
    target = PythonTarget(PythonTargetSpec(type="python", name="py", callable="agent.py:answer"), tmp_path)
    request = TrialRequest(CaseSpec(id="c", input="x"), 0, 1, "x")

    async def late_loop() -> str:
        call = asyncio.ensure_future(call_with_retries(target, request, RetryPolicy(0.2, 0, 0.01)))
        await asyncio.sleep(0.05)
        time.sleep(0.5)
        return (await call).output

    assert asyncio.run(late_loop()) == "fine"


AGENT = """
import os
import time

def answer(case, seed):
    if case.id.startswith("spin"):
        with open(os.environ["SPIN_PIDS"], "a") as handle:
            handle.write(f"{os.getpid()}\\n")
        deadline = time.monotonic() + float(case.input)
        while time.monotonic() < deadline:  # pure Python: holds the GIL
            pass
        return "spun"
    time.sleep(0.2)
    return "ok"
"""


@pytest.fixture(scope="module")
def runs(fork_servers: ForkServers) -> Forks:
    """Runs ``trialscore run``, each run a process of its own (tests/forks.py), within 180 s."""
    return fork_servers.get(180, HELPERS + RUNNER)


def run(runs: Forks, tmp_path: Path, isolation: str, spin_s: float) -> list[dict]:
    (tmp_path / "agent.py").write_text(textwrap.dedent(AGENT))
    target = {"name": "py", "type": "python", "callable": "agent.py:answer", "isolation": isolation}
    document = {
        "name": "spins",
        "targets": [target],
        "cases": [
            *({"id": f"spin-{i}", "input": str(spin_s)} for i in range(3)),
            *({"id": f"ok-{i}", "input": "x"} for i in range(30)),
        ],
        "graders": [{"type": "exact", "value": "ok"}],
        # 0.2 s healthy calls against a 2 s timeout: the margin is for a loaded machine, the spinning
        # calls (3 threads holding the GIL for 3 s, past the timeout) are what the test is about
        "execution": {"trials": {"count": 1}, "timeout_s": 2, "retries": 0, "concurrency": 12},
    }
    suite = tmp_path / "suite.yaml"
    suite.write_text(yaml.safe_dump(document, sort_keys=False))
    args = ["run", str(suite), "--store", str(tmp_path / "s.sqlite"), "--out", str(tmp_path / "out")]
    prelude = f"import os; os.environ['SPIN_PIDS'] = {str(tmp_path / 'pids')!r}"
    done = runs.run(*args, "--no-progress", prelude=prelude)
    assert done.code == 0, done.stderr
    return [json.loads(line) for line in (tmp_path / "out" / "trials.jsonl").read_text().splitlines()]


@pytest.mark.slow
def test_spinning_calls_in_threads_do_not_push_healthy_trials_past_their_timeout(
    runs: Forks, tmp_path: Path
) -> None:
    records = run(runs, tmp_path, "thread", spin_s=3.0)
    healthy = [r for r in records if r["case_id"].startswith("ok")]
    assert [r["verdict"] for r in healthy] == ["pass"] * 30, [r["error"] for r in healthy if r["error"]]
    spinning = [r for r in records if r["case_id"].startswith("spin")]
    assert all(
        r["error"] == "target 'py': no reply within timeout_s=2 (gave up after 1 attempt)" for r in spinning
    )


@pytest.mark.slow
def test_isolation_process_kills_a_call_that_would_spin_for_ever(runs: Forks, tmp_path: Path) -> None:
    records = run(runs, tmp_path, "process", spin_s=10_000.0)
    healthy = [r for r in records if r["case_id"].startswith("ok")]
    assert [r["verdict"] for r in healthy] == ["pass"] * 30, [r["error"] for r in healthy if r["error"]]
    spinning = [r for r in records if r["case_id"].startswith("spin")]
    assert [r["verdict"] for r in spinning] == ["error"] * 3
    assert all("no reply within timeout_s=2" in r["error"] for r in spinning)
    pids = [int(line) for line in (tmp_path / "pids").read_text().split()]
    assert len(pids) == 3
    for pid in pids:  # each call's process was killed, not left spinning
        assert not alive(pid)
