"""Agents end to end: two python agents that reply with trajectories run by ``trialscore run``, graded on the
answer and on the process (the ``tool_calls`` grader with argument matchers), then ``score --per-grader``
(pass@k, pass^k and flakiness of the process beside the answer's, cost per success with its interval)
and ``compare --non-inferior`` (of the scores per grader, and of the cost per success).

The bundled agents suite (trialscore/data/agents_suite.yaml) books 24 trips, 4 trials each, with
:mod:`trialscore.examples.booking_agent`: the careful agent sometimes makes an extra weather call, the
cheap one sometimes forgets the confirmation (a missing call) or pays a wrong amount (outside the
matcher's tolerance).  What each trial did is known from its seed (``booking_agent.attempt``), so
every figure the commands print is checked against the library computed on that ground truth.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import numpy as np
import pytest
import yaml

from tests.cli_runner import CliRunner
from trialscore import Bank
from trialscore.cli import app
from trialscore.cli._app import EXIT_GATE_FAILED
from trialscore.core.estimators import pass_at_k, pass_hat_k
from trialscore.examples import agents_suite_path
from trialscore.examples.booking_agent import Attempt, attempt
from trialscore.results.records import TrialRecord
from trialscore.stats import cost_non_inferiority, non_inferiority
from trialscore.stats._effort import item_totals

runner = CliRunner()
AGENTS = ("careful", "cheap")


def cli(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args), env={"COLUMNS": "200", "NO_COLOR": "1"})
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Each agent's run folder, written by ``trialscore run`` on the bundled suite."""
    folder = tmp_path_factory.mktemp("agents")
    out = {}
    for agent in AGENTS:
        args = ["run", str(agents_suite_path()), "--target", agent, "--store", str(folder / "store.sqlite")]
        code, _, err = cli(*args, "--out", str(folder / agent), "--no-progress")
        assert code == 0, err
        out[agent] = folder / agent
    return out


@functools.cache
def trials(run: Path) -> list[tuple[TrialRecord, Attempt]]:
    """The run's trial records, each with what its agent did on that trial (from the trial's seed).

    Read once a run (the tests only read them; the suite's YAML alone takes a tenth of a second).
    """
    suite = yaml.safe_load(agents_suite_path().read_text())
    trips = {case["id"]: case["input"] for case in suite["cases"]}
    lines = (run / "trials.jsonl").read_text().splitlines()
    records = [TrialRecord.from_json_line(line) for line in lines]
    return [(r, attempt(str(r.target), trips[r.case_id], int(r.seed))) for r in records]  # type: ignore[arg-type]


def outcome(done: Attempt, grader: str) -> bool:
    """Whether a trial passes ``grader`` (``(trial)``: every grader), from what the agent did."""
    answer, process = done.answered, done.right_procedure
    return {"answer": answer, "process": process, "(trial)": answer and process}[grader]


def banks(run: Path) -> dict[str, Bank]:
    """Per grader: the case x trial outcomes the run should have, as a bank with the case ids."""
    by_case: dict[str, list[Attempt]] = {}
    for record, done in trials(run):
        by_case.setdefault(record.case_id, []).append(done)
    ids = sorted(by_case)
    return {
        grader: Bank.from_counts(
            [len(by_case[case]) for case in ids],
            [sum(outcome(done, grader) for done in by_case[case]) for case in ids],
            ids=ids,
        )
        for grader in ("(trial)", "answer", "process")
    }


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_the_records_keep_the_trajectories_and_the_graders_judge_them(runs: dict[str, Path]) -> None:
    seen = {"extra": 0, "missing": 0, "wrong": 0, "misanswered": 0}
    for agent in AGENTS:
        for record, done in trials(runs[agent]):
            assert [call.name for call in record.tool_calls or ()] == [call["name"] for call in done.calls]
            assert record.cost_usd == pytest.approx(done.cost_usd) and record.steps == len(done.calls) + 1
            answer, process = record.grader_results
            assert (answer.name, answer.passed) == ("answer", done.answered)
            matched = 4 - done.missing - done.wrong  # the wrong amount is outside the tolerance: unmatched
            made = 4 + done.extra - done.missing
            assert process.details == pytest.approx(
                {"precision": matched / made, "recall": matched / 4, "f1": process.score}
            )
            assert (process.name, process.passed) == ("process", done.right_procedure)
            assert record.passed is (done.answered and done.right_procedure)
            seen["extra"] += done.extra
            seen["missing"] += done.missing
            seen["wrong"] += done.wrong
            seen["misanswered"] += not done.answered
    assert min(seen.values()) > 0  # extra, missing and wrong calls and wrong answers all occurred


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_score_per_grader_shows_the_process_beside_the_answer(runs: dict[str, Path]) -> None:
    args = ["score", str(runs["careful"]), str(runs["cheap"]), "--by", "target", "--per-grader"]
    code, out, err = cli(*args, "--k", "1,4", "--metric", "pass@k,pass^k,cost-per-success", "-f", "json")
    assert code == 0, err
    assert "scored per grader: 2 graders (answer, process)" in err
    groups = {group["label"]: group for group in json.loads(out)["groups"]}
    assert len(groups) == 6
    for agent in AGENTS:
        expected = banks(runs[agent])
        for grader, bank in expected.items():
            group = groups[f"target={agent}, grader={grader}"]
            figures = {metric["label"]: metric for metric in group["metrics"]}
            assert group["flaky_items"] == int(((bank.c > 0) & (bank.c < bank.n)).sum())
            assert figures["pass@1"]["estimate"] == pytest.approx(float(np.mean(bank.c / bank.n)))
            assert figures["pass@4"]["estimate"] == pytest.approx(pass_at_k(bank, 4))
            assert figures["pass^4"]["estimate"] == pytest.approx(pass_hat_k(bank, 4))
            assert figures["pass^4"]["convention"]["estimator"] == "unbiased"
            records = trials(runs[agent])
            cost = sum(done.cost_usd for _, done in records)
            solved = sum(outcome(done, grader) for _, done in records)
            per_success = figures["cost-per-success"]
            assert per_success["estimate"] == pytest.approx(cost / solved, rel=1e-9)
            low, high = per_success["interval"]["low"], per_success["interval"]["high"]
            assert low < per_success["estimate"] < high
    # the answers are alike, the procedures are not: the cheap agent's process flakes on more cases
    cheap_process, cheap_answer = (
        groups["target=cheap, grader=process"],
        groups["target=cheap, grader=answer"],
    )
    assert cheap_process["flaky_items"] > cheap_answer["flaky_items"]
    code, table, _ = cli(*args, "--k", "1,4")
    assert code == 0 and "target=cheap, grader=process" in table and "pass^k: unbiased" in table


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_compare_non_inferior_per_grader_and_on_cost(runs: dict[str, Path]) -> None:
    base, cand = str(runs["careful"]), str(runs["cheap"])
    code, out, err = cli("compare", base, cand, "--per-grader", "--non-inferior", "0.1", "-f", "json")
    assert code == EXIT_GATE_FAILED, err  # the process is worse: the gate fails
    body = json.loads(out)
    expected_a, expected_b = banks(runs["careful"]), banks(runs["cheap"])
    verdicts = {}
    for comparison in body["comparisons"]:
        grader = comparison["group"]["grader"]
        result = non_inferiority(expected_a[grader], expected_b[grader], 0.1)
        assert comparison["verdict"] == result.verdict
        assert comparison["interval"]["low"] == pytest.approx(result.interval.low)
        assert (
            comparison["non_inferiority"]["margin"] == 0.1 and comparison["non_inferiority"]["alpha"] == 0.05
        )
        verdicts[grader] = comparison["verdict"]
    assert verdicts == {"(trial)": "inferior", "answer": "non-inferior", "process": "inferior"}
    assert body["gate"]["non_inferior"]["passed"] is False
    code, out, err = cli(
        "compare", base, cand, "--metric", "cost-per-success", "--non-inferior", "0.1", "-f", "json"
    )
    assert code == 0, err  # no more expensive: the gate passes
    (comparison,) = json.loads(out)["comparisons"]
    totals = []
    for agent in AGENTS:
        rows = trials(runs[agent])
        passed = [outcome(done, "(trial)") for _, done in rows]
        totals.append(item_totals([r.case_id for r, _ in rows], passed, [done.cost_usd for _, done in rows]))
    result = cost_non_inferiority(totals[0], totals[1], 0.1)
    assert comparison["verdict"] == result.verdict == "non-inferior"
    assert comparison["delta"] == pytest.approx(result.estimate)
    assert (
        comparison["interval"]["high"] == pytest.approx(result.interval.high) and result.interval.high < 1.1
    )


@pytest.mark.slow
def test_per_grader_refuses_human_labels(runs: dict[str, Path], tmp_path: Path) -> None:
    labels = tmp_path / "labels.csv"
    labels.write_text("case_id,trial,target,passed\ntrip-00-paris,0,careful,true\n")
    code, _, err = cli("score", str(runs["careful"]), "--per-grader", "--human", str(labels))
    assert code == 2 and "--human labels a trial's verdict, not each grader's: drop --per-grader" in err


def test_per_grader_needs_the_graders_of_the_trials(tmp_path: Path) -> None:
    path = tmp_path / "plain.csv"
    path.write_text("case_id,trial,passed\na,0,1\na,1,0\n")
    code, _, err = cli("score", str(path), "--per-grader")
    assert code == 2 and "the trials hold no grader results" in err
    code, _, err = cli("plan", "--delta", "0.1", "--pass-rate", "0.5", "--per-grader")
    assert code == 2 and "--per-grader splits a pilot's trials per grader; give --pilot" in err
