"""End-to-end runs: real programs, a real HTTP server, seeds, errors vs failures, cost limits, outputs."""

from __future__ import annotations

import io
import json
import sys
import textwrap
from pathlib import Path

import pytest
import yaml
from rich.console import Console

from trialscore.errors import EvaluationError
from trialscore.runner.options import RunOptions
from trialscore.runner.orchestrator import execute_suite
from trialscore.runner.outputs import write_outputs
from trialscore.runner.run_report import RunReport
from trialscore.runner.seeds import trial_seed
from trialscore.runner.store import TrialStore
from trialscore.runner.suite import load_suite


def make_suite(tmp_path: Path, document: dict, agent: str | None = None) -> Path:
    if agent is not None:
        (tmp_path / "agent.py").write_text(textwrap.dedent(agent))
    path = tmp_path / "suite.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    return path


def run(path: Path, tmp_path: Path, **options: object) -> RunReport:
    console = Console(file=io.StringIO(), width=200)
    return execute_suite(
        load_suite(path), RunOptions(store=tmp_path / "store.sqlite", progress=False, **options), console
    )


def cases(count: int, graders: list[dict], **extra: object) -> list[dict]:
    return [
        {"id": f"case-{i}", "input": f"question {i}", "expected": "yes", "graders": graders, **extra}
        for i in range(count)
    ]


@pytest.mark.slow
def test_command_target_run_writes_seeded_trials_and_seed_003_cases(tmp_path: Path) -> None:
    # The program passes a trial when its seed is even: a deterministic function of (run seed, case, trial).
    agent = tmp_path / "agent.py"
    agent.write_text("import os\nprint('yes' if int(os.environ['TRIALSCORE_SEED']) % 2 == 0 else 'no')\n")
    document = {
        "name": "parity",
        "targets": [{"name": "prog", "type": "command", "argv": [sys.executable, str(agent)]}],
        "cases": cases(4, [{"type": "exact"}], category="parity"),
        "execution": {"trials": {"count": 6, "strategy": "pass_at_k"}, "seed": 7, "concurrency": 4},
    }
    report = run(make_suite(tmp_path, document), tmp_path, out_dir=tmp_path / "out")
    assert report.completed and report.committed == 24 and report.ran_now == 24
    files = write_outputs(report)
    trials = [json.loads(line) for line in files.trials.read_text().splitlines()]
    assert len(trials) == 24
    assert [(t["case_id"], t["trial"]) for t in trials] == [
        (f"case-{i}", j) for i in range(4) for j in range(6)
    ]
    for t in trials:
        seed = trial_seed(7, t["case_id"], t["trial"])
        assert t["seed"] == seed
        assert t["verdict"] == ("pass" if seed % 2 == 0 else "fail")
        assert t["output"] == ("yes" if seed % 2 == 0 else "no")
        assert t["run_id"] == report.run_id and t["suite"] == "parity" and t["target"] == "prog"
        assert t["category"] == "parity" and t["cost_usd"] is None and t["latency_s"] >= 0
    by_case = [json.loads(line) for line in files.cases.read_text().splitlines()]
    for case in by_case:
        mine = [t for t in trials if t["case_id"] == case["eval_id"]]
        passed = sum(t["verdict"] == "pass" for t in mine)
        assert case["aggregation"] == {
            "strategy": "pass_at_k",
            "passed_attempts": passed,
            "total_attempts": 6,
        }
        assert case["verdict"] == ("pass" if passed else "fail")
        assert [t["attempt"] for t in case["trials"]] == list(range(6))
    summary = json.loads(files.summary.read_text())
    target = summary["targets"]["prog"]
    total_passed = sum(t["verdict"] == "pass" for t in trials)
    assert target["trials"] == {
        "planned": 24,
        "stored": 24,
        "scored": 24,
        "passed": total_passed,
        "errored": 0,
        "cost_limited": 0,
    }
    rates = [sum(t["verdict"] == "pass" for t in trials if t["case_id"] == f"case-{i}") / 6 for i in range(4)]
    assert target["metrics"]["pass_at_1"]["estimate"] == pytest.approx(sum(rates) / 4, rel=1e-12)
    assert target["skill_scores"][0]["skill_name"] == "parity"
    assert len(target["stimulus_scores"]) == 4


def test_same_seed_same_outcomes_across_runs(tmp_path: Path) -> None:
    agent = """
    import numpy as np
    def answer(case, seed):
        return "yes" if np.random.default_rng(seed).random() < 0.5 else "no"
    """
    document = {
        "name": "coin",
        "targets": [{"name": "coin", "type": "python", "callable": "agent.py:answer"}],
        "cases": cases(5, [{"type": "exact"}]),
        "execution": {"trials": {"count": 8}, "seed": 3},
    }
    path = make_suite(tmp_path, document, agent)
    first, second = run(path, tmp_path), run(path, tmp_path)
    assert first.run_id != second.run_id

    def outcomes(report: RunReport) -> list[tuple]:
        return [(r.case_id, r.trial, r.seed, r.verdict) for r in report.records]

    assert outcomes(first) == outcomes(second)
    assert len({verdict for *_, verdict in outcomes(first)}) == 2  # the coin really is random across trials


def test_errored_trials_are_recorded_as_errors_not_failures(tmp_path: Path) -> None:
    agent = """
    import asyncio
    async def answer(case, seed):
        if case.id == "case-0":
            raise RuntimeError("agent crashed")
        if case.id == "case-1":
            await asyncio.sleep(10)
        return "yes"
    """
    document = {
        "name": "errors",
        "targets": [{"name": "a", "type": "python", "callable": "agent.py:answer"}],
        "cases": cases(3, [{"type": "exact"}]),
        "execution": {"trials": {"count": 2}, "timeout_s": 0.1, "retries": 1, "backoff_s": 0.01},
    }
    report = run(make_suite(tmp_path, document, agent), tmp_path)
    by_case = {case.eval_id: case for case in report.cases}
    crashed = [r for r in report.records if r.case_id == "case-0"]
    assert all(r.verdict == "error" and r.passed is None for r in crashed)
    assert crashed[0].error == "target 'a': raised RuntimeError: agent crashed"
    slow = [r for r in report.records if r.case_id == "case-1"]
    assert all(
        r.error == "target 'a': no reply within timeout_s=0.1 (gave up after 2 attempts)" for r in slow
    )
    assert by_case["case-0"].verdict == "error" and by_case["case-1"].verdict == "error"
    assert by_case["case-2"].verdict == "pass"
    metrics = write_and_read_summary(report)["targets"]["a"]
    assert metrics["trials"]["errored"] == 4 and metrics["trials"]["scored"] == 2
    assert metrics["metrics"]["pass_at_1"]["estimate"] == 1.0  # errors are out of the denominator
    assert metrics["metrics"]["cases_without_scored_trials"] == 2


def test_trials_jsonl_carries_what_the_target_said_even_when_grading_errors(tmp_path: Path) -> None:
    agent = """
    def answer(case, seed):
        if case.id == "case-0":
            raise RuntimeError("no reply")
        return f"reply to {case.id}"

    def grade(output, case):
        if case.id == "case-2":
            raise ValueError("grader broke")
        return output.endswith(case.id)
    """
    document = {
        "name": "said",
        "targets": [{"name": "a", "type": "python", "callable": "agent.py:answer"}],
        "cases": cases(3, [{"type": "python", "callable": "agent.py:grade"}]),
        "execution": {"trials": {"count": 2}, "retries": 0},
    }
    report = run(make_suite(tmp_path, document, agent), tmp_path)
    trials = [json.loads(line) for line in write_outputs(report).trials.read_text().splitlines()]
    said = {(t["case_id"], t["trial"]): (t["verdict"], t["output"]) for t in trials}
    assert said == {
        ("case-0", 0): ("error", None),  # the target gave nothing
        ("case-0", 1): ("error", None),
        ("case-1", 0): ("pass", "reply to case-1"),
        ("case-1", 1): ("pass", "reply to case-1"),
        ("case-2", 0): ("error", "reply to case-2"),  # the target replied; the grader could not judge
        ("case-2", 1): ("error", "reply to case-2"),
    }
    assert TrialStore(tmp_path / "store.sqlite").records(report.run_id) == sorted(
        report.records, key=lambda r: (r.case_id, r.trial)
    )


def write_and_read_summary(report: RunReport) -> dict:
    return json.loads(write_outputs(report).summary.read_text())


@pytest.mark.slow
def test_openai_target_through_429_500_and_slow_replies(tmp_path: Path, chat_server) -> None:
    # Seeds decide the script: some trials first get 429 then succeed, some 500 then a reply slower than
    # the timeout, then succeed; some get 429 three times and run out of retries (retries: 2).
    chat_server.failures = [[], [429], [500, "slow"], [429, 429, 429]]
    chat_server.slow_s = 5.0  # well past the timeout, which is generous so a loaded machine never trips it
    chat_server.answer = lambda prompt, seed: "yes it is"
    document = {
        "name": "http",
        "targets": [
            {
                "name": "gpt",
                "type": "openai",
                "base_url": chat_server.url,
                "model": "mini",
                "prices": {"input_per_mtok": 1.0, "output_per_mtok": 2.0},
            }
        ],
        "cases": cases(4, [{"type": "contains"}]),
        "execution": {
            "trials": {"count": 5},
            "timeout_s": 2.0,
            "retries": 2,
            "backoff_s": 0.01,
            "concurrency": 8,
        },
    }
    report = run(make_suite(tmp_path, document), tmp_path)
    assert report.completed and report.committed == 20
    for record in report.records:
        plan = chat_server.failures[record.seed % 4]
        if plan == [429, 429, 429]:
            assert (
                record.verdict == "error"
                and "HTTP 429" in record.error
                and "gave up after 3 attempts" in record.error
            )
        else:
            assert record.verdict == "pass", (record.seed % 4, record.error)
            assert record.cost_usd == pytest.approx((2 * 1.0 + 3 * 2.0) / 1e6, rel=1e-12)
            assert (record.tokens.input, record.tokens.output) == (2, 3)
    assert 429 in chat_server.statuses and 500 in chat_server.statuses
    expected_requests = sum(min(len(chat_server.failures[r.seed % 4]), 2) + 1 for r in report.records)
    assert len(chat_server.requests) == expected_requests


def test_llm_judge_through_a_judge_only_http_target(tmp_path: Path, chat_server) -> None:
    chat_server.answer = lambda prompt, seed: '{"score": 8}' if prompt.startswith("Grade") else "an answer"
    base = {
        "type": "openai",
        "base_url": chat_server.url,
        "prices": {"input_per_mtok": 1.0, "output_per_mtok": 1.0},
    }
    document = {
        "name": "judged",
        "targets": [
            {"name": "agent", "model": "m1", **base},
            {"name": "judge", "model": "m2", "judge_only": True, **base},
        ],
        "graders": [
            {"type": "llm_judge", "target": "judge", "rubric": "Grade 0-10: {{output}}", "scale": 10}
        ],
        "cases": [{"id": "c", "input": "explain"}],
        "execution": {"trials": {"count": 3}},
    }
    report = run(make_suite(tmp_path, document), tmp_path)
    assert report.settings["targets"] == ["agent"]
    assert [r.score for r in report.records] == [0.8, 0.8, 0.8]
    agent_cost = (1 + 2) / 1e6  # "explain" -> "an answer"
    judge_cost = (len("Grade 0-10: an answer".split()) + 2) / 1e6  # rubric -> '{"score": 8}'
    for record in report.records:
        assert record.cost_usd == pytest.approx(agent_cost + judge_cost, rel=1e-12)
    assert sorted(r["body"]["model"] for r in chat_server.requests) == ["m1"] * 3 + ["m2"] * 3


PRICED_AGENT = """
import asyncio, os
async def answer(case, seed):
    with open(os.path.join(os.path.dirname(__file__), "started.log"), "a") as log:
        log.write(f"{case.id} {seed}\\n")
    await asyncio.sleep(0.01)
    return {"output": "yes", "cost_usd": 0.01}
"""


@pytest.mark.parametrize("concurrency", [1, 4])
def test_run_cost_limit_is_exceeded_by_at_most_the_trials_in_flight(tmp_path: Path, concurrency: int) -> None:
    document = {
        "name": "budget",
        "targets": [{"name": "a", "type": "python", "callable": "agent.py:answer"}],
        "cases": cases(5, [{"type": "exact"}]),
        "execution": {"trials": {"count": 10}, "cost_limit_usd": 0.105, "concurrency": concurrency},
    }
    report = run(make_suite(tmp_path, document, PRICED_AGENT), tmp_path)
    started = (tmp_path / "started.log").read_text().splitlines()
    spent = report.cost["spent_usd"]
    assert len(started) == report.committed  # every trial that started was committed
    assert 0.105 <= spent < 0.105 + concurrency * 0.01 + 1e-12
    assert report.committed == round(spent / 0.01)
    assert report.skipped == 50 - report.committed
    assert any("cost limit reached" in warning for warning in report.warnings)
    assert report.cost["limit_enforced"] is True
    limited = {case.eval_id for case in report.cases if case.cost_limited}
    assert limited == {f"case-{i}" for i in range(5)}  # trial-major order: every case was cut short
    record = next(case for case in report.cases if case.eval_id == "case-0").to_dict()
    assert record["cost_limited"] is True and record["aggregation"]["total_attempts"] < 10


def test_case_cost_limit_stops_only_that_case(tmp_path: Path) -> None:
    document = {
        "name": "budget",
        "targets": [{"name": "a", "type": "python", "callable": "agent.py:answer"}],
        "cases": [
            {"id": "cheap", "input": "q", "expected": "yes", "graders": [{"type": "exact"}]},
            {
                "id": "capped",
                "input": "q",
                "expected": "yes",
                "graders": [{"type": "exact"}],
                "execution": {"trials": {"cost_limit_usd": 0.03}},
            },
        ],
        "execution": {"trials": {"count": 8}, "concurrency": 1},
    }
    report = run(make_suite(tmp_path, document, PRICED_AGENT), tmp_path)
    by_case = {case.eval_id: case for case in report.cases}
    assert len(by_case["cheap"].trials) == 8 and not by_case["cheap"].cost_limited
    assert len(by_case["capped"].trials) == 3 and by_case["capped"].cost_limited
    assert report.cost["cost_limited_cases"] == ["a/capped"]


def test_target_without_cost_warns_once_and_goes_on(tmp_path: Path) -> None:
    agent = "def answer(case, seed):\n    return 'yes'\n"
    document = {
        "name": "free",
        "targets": [{"name": "a", "type": "python", "callable": "agent.py:answer"}],
        "cases": cases(3, [{"type": "exact"}]),
        "execution": {"trials": {"count": 4, "cost_limit_usd": 0.01}, "cost_limit_usd": 1.0},
    }
    path = make_suite(tmp_path, document, agent)
    buffer = io.StringIO()
    report = execute_suite(
        load_suite(path),
        RunOptions(store=tmp_path / "s.sqlite", progress=False),
        Console(file=buffer, width=300),
    )
    assert report.committed == 12 and report.skipped == 0
    assert buffer.getvalue().count("cost_limit_usd cannot be enforced") == 1
    assert report.cost["limit_enforced"] is False and report.cost["trials_with_unknown_cost"] == 12
    assert report.warnings == (
        "cost limit could not be enforced: 12 trials reported no cost; trials went on",
    )
    assert write_and_read_summary(report)["cost"]["limit_enforced"] is False


def test_single_trial_cases_give_the_plain_record(tmp_path: Path) -> None:
    agent = "def answer(case, seed):\n    return 'yes'\n"
    document = {
        "name": "one",
        "targets": [{"name": "a", "type": "python", "callable": "agent.py:answer"}],
        "cases": cases(2, [{"type": "exact"}]),
    }
    report = run(make_suite(tmp_path, document, agent), tmp_path)
    lines = write_outputs(report).cases.read_text().splitlines()
    assert json.loads(lines[0]) == {
        "eval_id": "case-0",
        "target": "a",
        "category": None,
        "score": 1.0,
        "verdict": "pass",
        "cost_usd": None,
        "input": "question 0",  # what the case asked and expected (the report's drawer shows them)
        "expected": "yes",
    }


def test_target_option_and_trials_override(tmp_path: Path) -> None:
    agent = "def a(case, seed):\n    return 'yes'\ndef b(case, seed):\n    return 'no'\n"
    document = {
        "name": "two",
        "targets": [
            {"name": "a", "type": "python", "callable": "agent.py:a"},
            {"name": "b", "type": "python", "callable": "agent.py:b"},
        ],
        "cases": cases(2, [{"type": "exact"}]),
        "execution": {"trials": {"count": 3}},
    }
    path = make_suite(tmp_path, document, agent)
    both = run(path, tmp_path)
    assert both.committed == 12 and {c.target for c in both.cases} == {"a", "b"}
    only_b = run(path, tmp_path, targets=("b",), trials=2)
    assert only_b.committed == 4 and {c.verdict for c in only_b.cases} == {"fail"}
    with pytest.raises(
        EvaluationError, match=r"target must name one of the suite's targets \(a, b\); got 'c'"
    ):
        run(path, tmp_path, targets=("c",))


def test_resume_refuses_a_changed_suite_or_other_settings(tmp_path: Path) -> None:
    agent = "def answer(case, seed):\n    return 'yes'\n"
    document = {
        "name": "r",
        "targets": [{"name": "a", "type": "python", "callable": "agent.py:answer"}],
        "cases": cases(2, [{"type": "exact"}]),
        "execution": {"trials": {"count": 3}},
    }
    path = make_suite(tmp_path, document, agent)
    first = run(path, tmp_path)
    again = run(path, tmp_path, resume=first.run_id)
    assert (
        again.completed and again.ran_now == 0 and again.committed == 6
    )  # nothing to redo, nothing duplicated
    with pytest.raises(EvaluationError, match=r"resume: trials=5 differs from run '.*'s trials=None"):
        run(path, tmp_path, resume=first.run_id, trials=5)
    with pytest.raises(EvaluationError, match=r"run_id 'nope' is not in store .* \(latest runs: "):
        run(path, tmp_path, resume="nope")
    document["execution"]["seed"] = 1
    make_suite(tmp_path, document)
    with pytest.raises(EvaluationError, match=r"resume: suite .* has changed since run .* started"):
        run(path, tmp_path, resume=first.run_id)
    assert TrialStore(tmp_path / "store.sqlite").count(first.run_id) == 6


def test_summary_with_an_errored_trial_uses_the_smallest_k_for_metrics_and_skill(tmp_path: Path) -> None:
    bad_seed = trial_seed(0, "case-0", 0)
    agent = f"""
    def answer(case, seed):
        if seed == {bad_seed}:
            raise ValueError("boom")
        return "yes"
    """
    document = {
        "name": "ragged",
        "targets": [{"name": "a", "type": "python", "callable": "agent.py:answer"}],
        "cases": cases(2, [{"type": "exact"}], category="skill-x"),
        "execution": {"trials": {"count": 3}, "retries": 0},
    }
    summary = write_and_read_summary(run(make_suite(tmp_path, document, agent), tmp_path))
    target = summary["targets"]["a"]
    assert target["trials"]["errored"] == 1 and target["trials"]["scored"] == 5
    assert target["metrics"]["k"] == 2
    assert target["metrics"]["pass_at_1"]["estimate"] == 1.0
    skill = target["skill_scores"][0]
    assert skill["skill_name"] == "skill-x" and "error" not in skill
    assert [s["multi_trial"]["k"] for s in target["stimulus_scores"]] == [2, 3]
    # case-0: 2 of 2 scored trials passed, case-1: 3 of 3; at the common k = 2 both give 1, 1, 1.
    assert skill["overall_multi_trial"] == {
        "per_trial_pass_rate": 1.0,
        "pass_at_k": 1.0,
        "pass_to_the_k": 1.0,
        "k": 2,
    }
    assert skill["overall_score"] == 1.0 and skill["passed"] is True
    assert skill["stimulus_scores"] == ["case-0", "case-1"]
