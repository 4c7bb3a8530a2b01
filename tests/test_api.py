"""trialscore.run_suite / run_suite_async: in a plain script, inside a running event loop, cancelled."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest
import yaml

import trialscore
from trialscore.errors import OptionError
from trialscore.runner.store import TrialStore

AGENT = """
import random, time

def answer(case, seed):
    # passes with probability 0.7, decided by the trial's seed
    return case.expected if random.Random(seed).random() < 0.7 else "wrong"

def slow(case, seed):
    time.sleep(0.2)
    return case.expected
"""


def write_suite(tmp_path: Path, count: int = 6, callable_: str = "agent.py:answer") -> Path:
    (tmp_path / "agent.py").write_text(AGENT)
    document = {
        "name": "api",
        "targets": [{"name": "py", "type": "python", "callable": callable_}],
        "graders": [{"type": "exact"}],
        "cases": [
            {
                "id": f"{'add' if i % 2 else 'mul'}-{i}",
                "input": f"q{i}",
                "expected": f"a{i}",
                "category": "odd" if i % 2 else "even",
            }
            for i in range(count)
        ],
        "execution": {"trials": {"count": 4}, "seed": 11, "concurrency": 4},
    }
    path = tmp_path / "suite.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    return path


def test_run_suite_inside_a_running_event_loop_as_in_jupyter(tmp_path: Path) -> None:
    path = write_suite(tmp_path)

    async def cell() -> trialscore.RunReport:
        asyncio.get_running_loop()  # a loop is running, as in a notebook cell
        return trialscore.run_suite(path, store=tmp_path / "s.sqlite", out=tmp_path / "out", trials=5)

    report = asyncio.run(cell())
    assert report.completed and len(report.cases) == 6 and len(report.trials) == 30
    assert report.summary["trials"]["planned"] == 30
    assert report.settings["trials"] == 5
    lines = (tmp_path / "out" / "trials.jsonl").read_text().splitlines()
    assert len(lines) == 30
    # the same run in a plain call (no loop) gives the same outcomes: seeds, not scheduling, decide
    again = trialscore.run_suite(path, store=tmp_path / "s2.sqlite", write=False, trials=5)
    assert [
        (r.case_id, r.trial, r.passed) for r in sorted(again.trials, key=lambda r: (r.case_id, r.trial))
    ] == [(r.case_id, r.trial, r.passed) for r in sorted(report.trials, key=lambda r: (r.case_id, r.trial))]
    assert not (tmp_path / ".trialscore").exists()


def test_run_suite_async_on_the_callers_loop_with_a_selection(tmp_path: Path) -> None:
    path = write_suite(tmp_path)

    async def main() -> tuple[trialscore.RunReport, int]:
        ticks = 0

        async def ticker() -> None:  # the caller's loop stays free while the run goes on
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0.001)

        task = asyncio.create_task(ticker())
        report = await trialscore.run_suite_async(
            path, store=tmp_path / "s.sqlite", case="add-*", category=["odd"], write=False
        )
        task.cancel()
        return report, ticks

    report, ticks = asyncio.run(main())
    assert sorted({case.eval_id for case in report.cases}) == ["add-1", "add-3", "add-5"]
    assert len(report.trials) == 12 and ticks > 0
    assert report.settings["cases"] == ["add-*"] and report.settings["categories"] == ["odd"]


def test_cancelling_run_suite_async_keeps_the_committed_trials_and_resume_finishes(tmp_path: Path) -> None:
    path = write_suite(tmp_path, count=8, callable_="agent.py:slow")
    store = tmp_path / "s.sqlite"

    async def main() -> None:
        task = asyncio.create_task(trialscore.run_suite_async(path, store=store, concurrency=2, write=False))
        await asyncio.sleep(1.0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    opened = TrialStore(store)
    try:
        (run_id,) = [row[0] for row in opened._db.execute("SELECT run_id FROM runs")]
        kept = opened.count(run_id)
    finally:
        opened.close()
    assert 0 < kept < 32
    # no trial of the cancelled run goes on behind the caller's back
    assert not [t for t in threading.enumerate() if t.name.startswith("trialscore-run")]
    report = trialscore.run_suite(resume=run_id, store=store, write=False)
    assert report.completed and report.committed == 32 and report.ran_now == 32 - kept


def test_to_pandas_gives_trials_and_cases_and_a_clear_error_without_pandas(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pandas = pytest.importorskip("pandas")
    report = trialscore.run_suite(write_suite(tmp_path), store=tmp_path / "s.sqlite", write=False)
    trials = report.to_pandas()
    assert isinstance(trials, pandas.DataFrame) and len(trials) == 24
    assert {"case_id", "trial", "passed", "verdict", "seed", "input_tokens"} <= set(trials.columns)
    assert trials["passed"].sum() == sum(r.passed is True for r in report.trials)
    cases = report.to_pandas("cases")
    assert len(cases) == 6 and {"eval_id", "verdict", "passed_attempts", "total_attempts"} <= set(
        cases.columns
    )
    with pytest.raises(trialscore.EvaluationError, match="what must be one of 'trials', 'cases'; got 'case'"):
        report.to_pandas("case")
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ModuleNotFoundError, match=r"to_pandas\(\) needs pandas.*pip install pandas"):
        report.to_pandas()


def test_bad_options_raise_one_clear_error(tmp_path: Path) -> None:
    path = write_suite(tmp_path)
    with pytest.raises(trialscore.EvaluationError, match="case pattern 'sub-\\*' matches no case id"):
        trialscore.run_suite(path, store=tmp_path / "s.sqlite", case="sub-*")
    with pytest.raises(trialscore.EvaluationError, match=r"a suite .* is required, or resume=RUN_ID"):
        trialscore.run_suite(store=tmp_path / "s.sqlite")
    with pytest.raises(trialscore.EvaluationError, match="target must name one of the suite's targets"):
        trialscore.run_suite(path, store=tmp_path / "s.sqlite", target="nope")
    assert not (tmp_path / "s.sqlite").exists() or TrialStore(tmp_path / "s.sqlite").count("x") == 0


@pytest.mark.slow
def test_a_plain_script_and_a_mapping_suite_in_a_real_process(tmp_path: Path) -> None:
    write_suite(tmp_path)
    script = tmp_path / "script.py"
    script.write_text(
        textwrap.dedent(
            """
            import json, sys, yaml, trialscore
            document = yaml.safe_load(open("suite.yaml"))
            report = trialscore.run_suite(document, store="runs.sqlite", out="out", trials=3)
            metrics = report.summary["targets"]["py"]["metrics"]
            print(json.dumps({"completed": report.completed, "trials": len(report.trials),
                              "pass_at_1": metrics["pass_at_1"]["estimate"]}))
            """
        )
    )
    done = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["completed"] and result["trials"] == 18 and 0 < result["pass_at_1"] < 1
    assert (tmp_path / "out" / "summary.json").exists()


PAIRED_AGENT = """
import os, random
RATES = {rates}
def answer(case, seed):
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "pids.log"), "a") as log:
        log.write(f"{{os.getpid()}}\\n")
    return case.expected if random.Random(seed).random() < RATES[case.id] else "wrong"
"""


def _paired_suite(tmp_path: Path, version: str, rates: dict[str, float]) -> Path:
    (tmp_path / f"agent_{version}.py").write_text(PAIRED_AGENT.format(rates=rates))
    document = {
        "name": "paired",
        "targets": [{"name": "bot", "type": "python", "callable": f"agent_{version}.py:answer"}],
        "graders": [{"type": "exact"}],
        "cases": [{"id": case, "input": case, "expected": "yes"} for case in rates],
        "execution": {"trials": {"count": 12}, "seed": 5, "concurrency": 4},
    }
    path = tmp_path / f"suite_{version}.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    return path


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_the_library_runs_adaptive_in_worker_processes_against_the_latest_run(tmp_path: Path) -> None:
    """What ``trialscore run --adaptive --workers 2 --baseline latest`` does, as keyword options."""
    store = tmp_path / "s.sqlite"
    before = {f"c{i}": 1.0 if i < 10 else 0.8 for i in range(20)}
    after = {case: (0.1 if rate < 1 else 1.0) for case, rate in before.items()}  # the flaky half regressed
    base = trialscore.run_suite(_paired_suite(tmp_path, "v1", before), store=store, write=False)
    assert base.completed and len(base.trials) == 240
    (tmp_path / "pids.log").unlink()
    report = trialscore.run_suite(
        _paired_suite(tmp_path, "v2", after),
        store=store,
        out=tmp_path / "out",
        adaptive=True,
        workers=2,
        baseline="latest",
    )
    assert report.completed
    assert report.settings["adaptive"]["comparison"] == {"baseline": "latest", "margin": 0.05, "alpha": 0.05}
    compared = report.adaptive["comparison"]["bot"]  # type: ignore[index]
    assert compared["verdict"] == "regression" and compared["stopped_because"] == "verdict settled"
    assert len(report.trials) == report.adaptive["trials_run"] == compared["trials_run"] < 240  # type: ignore[index]
    pids = {int(line) for line in (tmp_path / "pids.log").read_text().split()}
    assert os.getpid() not in pids and 1 <= len(pids) <= 2  # the trials ran in the worker processes
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["adaptive"]["comparison"]["bot"]["verdict"] == "regression"


def test_options_given_whole_run_as_the_keywords_do(tmp_path: Path) -> None:
    path = write_suite(tmp_path)
    options = trialscore.RunOptions.of(trials=2, category="odd", store=tmp_path / "a.sqlite", progress=False)
    whole = trialscore.run_suite(path, options, write=False)
    keywords = trialscore.run_suite(path, trials=2, category="odd", store=tmp_path / "b.sqlite", write=False)
    assert [(r.case_id, r.trial, r.passed) for r in whole.trials] == [
        (r.case_id, r.trial, r.passed) for r in keywords.trials
    ]
    assert len(whole.trials) == 6
    with pytest.raises(
        trialscore.EvaluationError, match=r"give options=RunOptions.* or keyword options, not both"
    ):
        trialscore.run_suite(path, options, trials=3)


def test_a_baseline_needs_an_adaptive_new_run_and_bad_options_name_their_parameter(tmp_path: Path) -> None:
    path = write_suite(tmp_path)
    store = tmp_path / "s.sqlite"
    with pytest.raises(
        OptionError, match="baseline is compared with while running, which needs adaptive=True"
    ) as caught:
        trialscore.run_suite(path, store=store, baseline="latest")
    assert caught.value.option == "baseline"
    with pytest.raises(OptionError, match="choose one") as caught:
        trialscore.run_suite(path, store=store, baseline="latest", adaptive=True, sequential=True)
    assert caught.value.option == "sequential"
    with pytest.raises(OptionError, match=r"margin must satisfy 0 <= margin < 1; got 1.5"):
        trialscore.run_suite(path, store=store, baseline="latest", adaptive=True, margin=1.5)
    with pytest.raises(OptionError, match="trials must satisfy 1 <= trials") as caught:
        trialscore.run_suite(path, store=store, trials=0)
    assert caught.value.option == "trials" and not store.exists()
