"""Local worker processes in real processes: the same records as one process, a worker killed or hung
mid-run, the controller killed then resumed, budgets and per-target caps held across workers."""

from __future__ import annotations

import itertools
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from _distributed import calls, make_suite, outcomes, run, stored

from tests.cli_runner import CliRunner
from tests.processes import alive, parent
from trialscore.cli import app
from trialscore.cli._app import EXIT_BAD_INPUT
from trialscore.runner.distributed.controller import MAX_LOSSES
from trialscore.runner.distributed.options import Distribution


@pytest.mark.slow
def test_workers_give_the_same_records_as_one_process(tmp_path: Path) -> None:
    suite = make_suite(tmp_path, metadata={i: {"sleep": 0.1} for i in range(6)})
    single = run(suite, tmp_path / "one.sqlite", None)
    spread = run(suite, tmp_path / "two.sqlite", Distribution("local", 2))
    assert single.completed and spread.completed and len(spread.records) == 24
    assert outcomes(spread.records) == outcomes(single.records)
    assert [case.to_dict() for case in spread.cases] == [case.to_dict() for case in single.cases]
    pids = {pid for pid, _, _ in calls(tmp_path)}
    assert os.getpid() in pids and len(pids - {os.getpid()}) == 2  # this process, then the two workers


@pytest.mark.slow
def test_a_worker_killed_mid_run_loses_and_duplicates_nothing(tmp_path: Path) -> None:
    suite = make_suite(tmp_path, cases=6, trials=4, metadata={2: {"mode": "die-once"}})
    report = run(suite, tmp_path / "s.sqlite", Distribution("local", 2))
    assert report.completed and report.ran_now == 24
    keys = stored(tmp_path / "s.sqlite")
    assert len(keys) == 24 and len(set(keys)) == 24  # every trial once
    assert all(record.verdict != "error" for record in report.records)
    ran = calls(tmp_path)
    ((killed, case, trial),) = calls(tmp_path, "died.log")
    death = ran.index((killed, case, trial))
    # it died on that call (its other threads may still log a start before the kill lands) ...
    with pytest.raises(ProcessLookupError):
        for _ in range(50):
            os.kill(killed, 0)
            time.sleep(0.1)
    # ... which another worker ran again
    assert (case, trial) in {(c, t) for pid, c, t in ran[death + 1 :] if pid != killed}
    assert outcomes(report.records) == outcomes(run(suite, tmp_path / "one.sqlite", None).records)


@pytest.mark.slow
def test_a_trial_that_kills_its_worker_every_time_is_stored_as_errored(tmp_path: Path) -> None:
    suite = make_suite(tmp_path, cases=2, trials=1, metadata={1: {"mode": "die-always"}})
    report = run(suite, tmp_path / "s.sqlite", Distribution("local", 2))
    assert report.completed
    by_case = {record.case_id: record for record in report.records}
    assert by_case["case-0"].verdict in {"pass", "fail"}
    lost = by_case["case-1"]
    assert lost.verdict == "error" and lost.passed is None  # errored, never failed
    assert f"its worker was lost {MAX_LOSSES} times" in (lost.error or "")
    assert sum(1 for _, case, _ in calls(tmp_path) if case == "case-1") == MAX_LOSSES


@pytest.mark.slow
def test_a_hung_worker_loses_its_leases_when_they_expire(tmp_path: Path) -> None:
    suite = make_suite(tmp_path, cases=4, trials=2, metadata={1: {"mode": "hang-once"}})
    report = run(suite, tmp_path / "s.sqlite", Distribution("local", 2, lease_ttl_s=1.5))
    # the stopped worker never answers: the run completes only because its lease expired
    assert report.completed and len(report.records) == 8
    assert len(set(stored(tmp_path / "s.sqlite"))) == 8
    ((hung, _, _),) = calls(tmp_path, "hung.log")
    with pytest.raises(ProcessLookupError):  # the stopped worker was killed, not left behind
        for _ in range(50):
            os.kill(hung, 0)
            time.sleep(0.1)


@pytest.mark.slow
def test_the_budget_holds_across_workers(tmp_path: Path) -> None:
    # 40 trials of $0.01 against a $0.10 limit on 2 workers with 4 slots each.
    (tmp_path / "ceiling").mkdir()
    (tmp_path / "mean").mkdir()
    ceiling = make_suite(
        tmp_path / "ceiling",
        cases=10,
        trials=4,
        concurrency=8,
        target={"max_cost_usd": 0.01},
        execution={"cost_limit_usd": 0.1},
    )
    report = run(ceiling, tmp_path / "c.sqlite", Distribution("local", 2))
    spent = sum(record.cost_usd or 0 for record in report.records)
    assert report.completed and spent <= 0.1 + 1e-9 and len(report.records) == 10  # the ceiling: no overshoot
    assert report.skipped == 30 and report.cost["cost_limited_cases"]

    mean = make_suite(
        tmp_path / "mean",
        cases=10,
        trials=4,
        concurrency=8,
        execution={"cost_limit_usd": 0.1},
    )
    report = run(mean, tmp_path / "m.sqlite", Distribution("local", 2))
    spent = sum(record.cost_usd or 0 for record in report.records)
    # The running mean is exact here, so no trial is leased that the budget cannot pay for.
    assert report.completed and 0.1 - 1e-9 <= spent <= 0.1 + 1e-9
    assert report.skipped + len(report.records) == 40


@pytest.mark.slow
def test_a_per_target_cap_holds_over_all_workers(tmp_path: Path) -> None:
    suite = make_suite(
        tmp_path,
        cases=4,
        trials=3,
        concurrency=8,
        target={"max_concurrency": 1},
        # 3.6 s of serial work: the second worker is ready long before the last unit is handed out,
        # even on a loaded machine (units go to the least recently used ready worker)
        metadata={i: {"sleep": 0.3} for i in range(4)},
    )
    report = run(suite, tmp_path / "s.sqlite", Distribution("local", 2))
    assert report.completed and len(report.records) == 12
    spans = sorted(
        tuple(map(float, line.split())) for line in (tmp_path / "spans.log").read_text().splitlines()
    )
    assert len(spans) == 12
    assert all(after[0] >= before[1] for before, after in itertools.pairwise(spans)), "two trials overlapped"
    assert len({pid for pid, _, _ in calls(tmp_path)}) == 2  # both workers took part


@pytest.mark.slow
# 90 s to make progress, 30 s for the kill to land, 15 s for the workers to stop, 120 s for the resume
@pytest.mark.timeout(255)
def test_the_controller_killed_then_resumed_reissues_only_the_missing_units(tmp_path: Path) -> None:
    # The controller that is killed is a real process; the resume runs in this one (Typer's runner).
    suite = make_suite(
        tmp_path, cases=10, trials=6, concurrency=4, metadata={i: {"sleep": 0.05} for i in range(10)}
    )
    store = tmp_path / "s.sqlite"
    args = ["run", str(suite), "--store", str(store), "--no-progress", "--workers", "2"]
    first = subprocess.Popen(
        [sys.executable, "-m", "trialscore", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 90
    while len(stored(store)) < 15:
        assert first.poll() is None, first.communicate()
        assert time.monotonic() < deadline, "the run made no progress"
        time.sleep(0.01)
    first.send_signal(signal.SIGKILL)
    first.communicate(timeout=30)
    before = set(stored(store))
    assert 15 <= len(before) < 60
    workers = {pid for pid, _, _ in calls(tmp_path)}
    deadline = time.monotonic() + 15
    while any(_alive(pid) for pid in workers):  # the workers saw their controller go and stopped
        assert time.monotonic() < deadline, "a worker outlived its controller"
        time.sleep(0.1)
    calls_before = len(calls(tmp_path))
    with sqlite3.connect(store) as db:
        run_id = db.execute("SELECT run_id FROM runs").fetchone()[0]
    second = CliRunner().invoke(app, [*args, "--resume", run_id])
    assert second.exit_code == 0, second.output
    after = stored(store)
    assert len(after) == 60 and len(set(after)) == 60
    resumed = [(case, trial) for _, case, trial in calls(tmp_path)[calls_before:]]
    assert (
        len(resumed) == len(set(resumed))
        and set(resumed) == {(f"case-{i}", t) for i in range(10) for t in range(6)} - before
    )  # only the missing units, each once
    trials = [json.loads(line) for line in (tmp_path / "runs" / run_id / "trials.jsonl").open()]
    assert len(trials) == 60


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


ENVIRONMENT_AGENT = """
import os

def answer(case, seed):
    return f"{os.environ.get('SPREAD_MARK')} {os.environ.get('SPREAD_GONE')}"
"""


@pytest.mark.slow
def test_workers_have_the_controllers_environment_as_it_is_when_they_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # On Linux the workers are forked from a server that keeps the environment it started with (in
    # the first run below at the latest): a variable set or removed since must still reach them.
    (tmp_path / "agent.py").write_text(ENVIRONMENT_AGENT)
    document = {
        "name": "environment",
        "targets": [{"name": "a", "type": "python", "callable": "agent.py:answer"}],
        "cases": [{"id": f"case-{i}", "input": "q"} for i in range(4)],
        "graders": [{"type": "contains", "value": "x"}],
        "execution": {"trials": {"count": 2}, "concurrency": 4, "seed": 3},
    }
    suite = tmp_path / "suite.yaml"
    suite.write_text(yaml.safe_dump(document, sort_keys=False))
    seen = []
    for store, mark in (("one.sqlite", "first"), ("two.sqlite", "second")):
        monkeypatch.setenv("SPREAD_MARK", mark)
        if mark == "first":
            monkeypatch.setenv("SPREAD_GONE", "here")
        else:
            monkeypatch.delenv("SPREAD_GONE")
        report = run(suite, tmp_path / store, Distribution("local", 2))
        assert report.completed
        seen.append({record.output for record in report.records})
    assert seen == [{"first here"}, {"second None"}]


@pytest.mark.slow
def test_cli_options_and_their_errors(tmp_path: Path) -> None:
    suite = make_suite(tmp_path, cases=2, trials=2)
    runner = CliRunner()
    base = [
        "run",
        str(suite),
        "--store",
        str(tmp_path / "s.sqlite"),
        "--no-progress",
        "--out",
        str(tmp_path / "o"),
    ]
    result = runner.invoke(app, [*base, "--workers", "2"])
    assert result.exit_code == 0, result.output
    assert len((tmp_path / "o" / "trials.jsonl").read_text().splitlines()) == 4
    bad = runner.invoke(app, [*base, "--backend", "spark"])
    assert bad.exit_code == EXIT_BAD_INPUT and "backend must be one of local, ray; got 'spark'" in bad.output
    assert len(bad.output.strip().splitlines()) == 1
    bad = runner.invoke(app, [*base, "--backend", "local", "--address", "ray://[x]:1"])
    assert bad.exit_code == EXIT_BAD_INPUT and "is for the ray backend" in bad.output
    assert "[x]" in bad.output  # user text is escaped, not read as markup


@pytest.mark.slow
@pytest.mark.parametrize("strategy", ["pass_all", "pass_at_k"])
def test_adaptive_runs_on_workers_keep_the_fixed_verdicts_and_save_trials(
    tmp_path: Path, strategy: str
) -> None:
    # The workers lease only the units the adaptive scheduler hands out; a case settled by a trial
    # committed on one worker gets no more units, and its verdict equals the fixed run's.
    execution = {"trials": {"count": 6, "strategy": strategy}, "adaptive": True}
    suite = make_suite(tmp_path, cases=8, trials=6, execution=execution)
    spread = run(suite, tmp_path / "two.sqlite", Distribution("local", 2))
    fixed_document = suite.read_text().replace("adaptive: true", "adaptive: false")
    (tmp_path / "fixed.yaml").write_text(fixed_document)
    fixed = run(tmp_path / "fixed.yaml", tmp_path / "one.sqlite", None)
    assert spread.completed and fixed.completed
    assert [(c.eval_id, c.verdict) for c in spread.cases] == [(c.eval_id, c.verdict) for c in fixed.cases]
    info = spread.adaptive
    assert info is not None and info["trials_saved"] > 0
    assert info["trials_run"] == len(spread.records) == 48 - info["trials_saved"]
    keys = stored(tmp_path / "two.sqlite")
    assert len(keys) == len(set(keys)) == len(spread.records)  # every trial the scheduler allowed, once
    by_fixed = {(r.case_id, r.trial): r.passed for r in fixed.records}
    assert all(by_fixed[(r.case_id, r.trial)] == r.passed for r in spread.records)  # the same seeds


@pytest.mark.slow
def test_a_target_with_process_isolation_runs_each_call_in_a_process_of_its_worker(tmp_path: Path) -> None:
    """A worker is daemonic to the controller, which ends it; it may still start a process per call."""
    suite = make_suite(tmp_path, cases=2, trials=2, target={"isolation": "process"})
    report = run(suite, tmp_path / "s.sqlite", Distribution("local", 2))
    assert report.completed and len(report.records) == 4
    assert all(record.verdict in ("pass", "fail") for record in report.records), report.records[0].error
    pids = [pid for pid, _, _ in calls(tmp_path)]
    assert len(set(pids)) == 4 and os.getpid() not in pids  # a process of its own for each call


SLEEPER = """
import os, time

HERE = os.path.dirname(os.path.abspath(__file__))


def answer(case, seed):
    try:  # the first call says its process id and sleeps; the call issued again returns
        os.close(os.open(os.path.join(HERE, "slept"), os.O_CREAT | os.O_EXCL))
    except FileExistsError:
        return "yes"
    with open(os.path.join(HERE, "call.pid"), "w") as out:
        out.write(str(os.getpid()))
    time.sleep(600)
    return "late"
"""


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the parent-death signal is Linux's")
def test_a_process_isolated_call_ends_with_its_killed_worker(tmp_path: Path) -> None:
    (tmp_path / "agent.py").write_text(SLEEPER)
    document = {
        "name": "orphans",
        "targets": [{"name": "a", "type": "python", "callable": "agent.py:answer", "isolation": "process"}],
        "cases": [{"id": "c", "input": "q", "expected": "yes"}],
        "graders": [{"type": "exact"}],
        "execution": {"trials": {"count": 1}, "timeout_s": 900},
    }
    suite = tmp_path / "suite.yaml"
    suite.write_text(yaml.safe_dump(document, sort_keys=False))
    args = ["run", str(suite), "--store", str(tmp_path / "s.sqlite"), "--no-progress", "--workers", "1"]
    run = subprocess.Popen(
        [sys.executable, "-m", "trialscore", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    call = 0
    try:
        deadline = time.monotonic() + 60
        while not (tmp_path / "call.pid").exists() or not (tmp_path / "call.pid").read_text():
            assert run.poll() is None, run.communicate()
            assert time.monotonic() < deadline, "hung: the call never started"
            time.sleep(0.05)
        call = int((tmp_path / "call.pid").read_text())
        worker = parent(parent(call))  # the call's parent is the worker's forkserver
        os.kill(worker, signal.SIGKILL)
        deadline = time.monotonic() + 30
        while alive(call):
            assert time.monotonic() < deadline, "the call outlived the worker that started it"
            time.sleep(0.05)
        _, err = run.communicate(timeout=120)  # the unit issued again to a new worker returns
        assert run.returncode == 0, err
    finally:
        for pid in (call, run.pid):
            if pid and alive(pid):
                os.kill(pid, signal.SIGKILL)
