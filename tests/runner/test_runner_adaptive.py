"""Adaptive runs: the fixed run's verdicts on the same seeds, no wasted trial in flight, the rule stated."""

from __future__ import annotations

import itertools
import json
import random
from pathlib import Path
from typing import Any

import pytest

from tests.cli_runner import CliRunner
from trialscore.cli import app
from trialscore.errors import EvaluationError
from trialscore.examples.simulated_agent import RELIABILITY
from trialscore.results.records import TrialRecord
from trialscore.runner.adaptive import Scheduler, Tally, distance, settled
from trialscore.runner.options import RunOptions
from trialscore.runner.orchestrator import execute_suite
from trialscore.runner.outputs import write_outputs
from trialscore.runner.strategies import aggregate
from trialscore.runner.suite import CaseSettings, Suite


def _suite(strategy: str, seed: int, trials: int = 10, **execution: Any) -> Suite:
    cases: list[dict[str, Any]] = [
        {"id": case_id, "input": case_id, "expected": right, "graders": [{"type": "exact"}]}
        for case_id, (_, right, _) in RELIABILITY.items()
        if case_id != "vowels"
    ]
    # a case with continuous scores: two graders of different weights (0, 0.25, 0.75 or 1)
    cases.append(
        {
            "id": "vowels",
            "input": "vowels",
            "expected": 5,
            "graders": [{"type": "numeric", "weight": 3}, {"type": "regex", "pattern": "vowels"}],
        }
    )
    return Suite.from_mapping(
        {
            "name": "adaptive-test",
            "targets": [
                {"name": "sim", "type": "python", "callable": "trialscore.examples.simulated_agent:answer"}
            ],
            "cases": cases,
            "execution": {
                "trials": {"count": trials, "strategy": strategy},
                "seed": seed,
                "concurrency": 8,
                "retries": 3,
                "backoff_s": 0.0,
                "threshold": 0.7,
                "borderline": 0.5,
                **execution,
            },
        }
    )


def _run(suite: Suite, tmp: Path, **options: Any) -> Any:
    return execute_suite(suite, RunOptions(store=tmp / "store.sqlite", progress=False, **options))


@pytest.mark.slow
@pytest.mark.parametrize("strategy", ["pass_at_k", "pass_all", "mean", "confidence_interval"])
@pytest.mark.parametrize("seed", [1, 2])
def test_adaptive_verdicts_equal_the_fixed_runs_on_the_same_seeds(
    strategy: str, seed: int, tmp_path: Path
) -> None:
    suite = _suite(strategy, seed)
    fixed = _run(suite, tmp_path)
    adaptive = _run(suite, tmp_path, adaptive=True)
    assert [(c.eval_id, c.verdict) for c in adaptive.cases] == [(c.eval_id, c.verdict) for c in fixed.cases]
    # the same seeds: every trial the adaptive run ran is the fixed run's trial, outcome for outcome
    fixed_trials = {(r.case_id, r.trial): (r.score, r.seed) for r in fixed.records}
    assert all(fixed_trials[(r.case_id, r.trial)] == (r.score, r.seed) for r in adaptive.records)
    info = adaptive.adaptive
    assert info["trials_run"] == len(adaptive.records) == info["trials_planned"] - info["trials_saved"]
    assert info["trials_wasted_in_flight"] == 0
    if strategy != "confidence_interval":
        assert info["trials_saved"] > 0
    stopped = [c for c in adaptive.cases if c.stop_reason is not None]
    assert all(c.stop_reason == f"settled_{c.verdict}" for c in stopped)
    assert all(len(c.trials) < c.planned_attempts for c in stopped)


def test_outputs_mark_stopped_cases_and_state_the_rule(tmp_path: Path) -> None:
    report = _run(_suite("pass_at_k", 3), tmp_path, adaptive=True, out_dir=tmp_path / "out")
    files = write_outputs(report)
    cases = [json.loads(line) for line in files.cases.read_text().splitlines()]
    stopped = [c for c in cases if "stopped" in c]
    assert stopped and all(c["stopped"] == "settled_pass" and "metrics" not in c for c in stopped)
    assert all(c["planned_attempts"] == 10 > len(c["trials"]) for c in stopped)
    summary = json.loads(files.summary.read_text())
    assert summary["adaptive"]["rule"] == "exact curtailment"
    assert summary["adaptive"]["trials_saved"] == 10 * len(cases) - summary["adaptive"]["trials_run"]
    metrics = summary["targets"]["sim"]["metrics"]
    k = min(len([t for t in c["trials"] if t["verdict"] != "error"]) for c in cases)
    assert metrics["k"] == k and metrics["basis"] == f"the first {k} scored trials of every case"
    assert "mean_score" not in metrics and 0 < metrics["bayes"]["mean"] < 1


@pytest.mark.slow
def test_the_cli_runs_adaptive_and_rejects_sequential_alone(tmp_path: Path) -> None:
    runner = CliRunner()
    args = ["run", "--demo", "--store", str(tmp_path / "s.sqlite"), "--no-progress"]
    result = runner.invoke(app, [*args, "--adaptive", "--out", str(tmp_path / "o")])
    assert result.exit_code == 0, result.output
    assert "adaptive (exact curtailment)" in result.output and "saved" in result.output
    result = runner.invoke(app, [*args, "--sequential"])
    assert result.exit_code == 2
    assert "sequential needs adaptive" in result.output


def test_the_suite_keys_are_validated() -> None:
    with pytest.raises(EvaluationError, match="sequential: true needs adaptive: true"):
        _suite("mean", 0, sequential=True)
    with pytest.raises(EvaluationError, match="alpha"):
        _suite("mean", 0, adaptive=True, alpha=1.5)
    with pytest.raises(EvaluationError, match="adaptive"):
        _suite("mean", 0, adaptive="yes")
    assert _suite("mean", 0, adaptive=True, sequential=True, alpha=0.1).execution.alpha == 0.1


def test_suite_key_adaptive_runs_adaptively(tmp_path: Path) -> None:
    report = _run(_suite("pass_all", 4, adaptive=True), tmp_path)
    assert report.adaptive is not None and report.adaptive["trials_saved"] > 0
    assert report.settings["adaptive"]["rule"] == "exact curtailment"


def _brute_verdict(settings: CaseSettings, outcomes: list[tuple[float, bool] | None]) -> str:
    records = [
        TrialRecord(case_id="c", trial=i, passed=None, verdict="error", error="x")
        if o is None
        else TrialRecord(case_id="c", trial=i, passed=o[1], score=o[0], verdict="pass" if o[1] else "fail")
        for i, o in enumerate(outcomes)
    ]
    return aggregate(records, settings, "c", "t").verdict


def _outcome(rng: random.Random, p: float, continuous: bool) -> tuple[float, bool] | None:
    if rng.random() < 0.05:
        return None
    score = rng.choice([0.0, 0.25, 0.75, 1.0]) if continuous else float(rng.random() < p)
    return score, score >= 0.7


@pytest.mark.slow
@pytest.mark.parametrize("strategy", ["pass_at_k", "pass_all", "mean", "confidence_interval"])
def test_the_scheduler_settles_only_what_the_full_design_would_say(strategy: str) -> None:
    """Many random cases, random finishing order: settled verdicts equal the verdict of all trials,
    and no case ever has more trials in flight than could still settle it."""
    rng = random.Random(7)
    for case in range(60):
        planned = rng.choice([3, 6, 10, 20])
        settings = CaseSettings(planned, strategy, None, 60.0, 0, 0.0, 0.7, 0.5)  # type: ignore[arg-type]
        outcomes = [
            _outcome(rng, rng.choice([0.0, 0.3, 0.7, 0.9, 1.0]), case % 3 == 0) for _ in range(planned)
        ]
        scheduler = Scheduler([("c", settings)], ["t"])
        running: list[Any] = []
        while True:
            while (unit := scheduler.start()) is not None:
                running.append(unit)
            state = scheduler._states[("t", "c")]
            assert state.in_flight <= max(1, distance(settings, state.tally, state.remaining))
            if not running:
                break
            unit = running.pop(rng.randrange(len(running)))
            o = outcomes[unit.trial]
            record = (
                TrialRecord(case_id="c", trial=unit.trial, passed=None, verdict="error", error="x")
                if o is None
                else TrialRecord(
                    case_id="c", trial=unit.trial, passed=o[1], score=o[0], verdict="pass" if o[1] else "fail"
                )
            )
            scheduler.finish(unit, record)
        outcome = scheduler.outcome("t", "c")
        if outcome.verdict is not None:
            assert outcome.verdict == _brute_verdict(settings, outcomes), (strategy, outcomes)
        assert outcome.wasted == 0


def test_settled_mean_follows_the_fixed_runs_floating_point() -> None:
    settings = CaseSettings(10, "mean", None, 60.0, 0, 0.0, 0.8, None)
    tally = Tally()
    for _ in range(8):
        tally = tally.add(1.0, True)
    assert settled(settings, tally, 2) == "pass"  # 8/10 == 0.8 in floating point, as aggregation computes it
    assert distance(settings, Tally(), 10) == 3
    # every 0/1 completion of 10 trials: a settled state never disagrees with the full verdict
    for flags in itertools.product([0, 1], repeat=6):
        partial = Tally()
        for flag in flags[:3]:
            partial = partial.add(float(flag), bool(flag))
        verdict = settled(CaseSettings(6, "mean", None, 60.0, 0, 0.0, 0.8, 0.5), partial, 3)
        full = _brute_verdict(
            CaseSettings(6, "mean", None, 60.0, 0, 0.0, 0.8, 0.5), [(float(f), bool(f)) for f in flags]
        )
        assert verdict is None or verdict == full


@pytest.mark.slow
def test_sequential_stops_a_clear_case_with_a_stated_interval(tmp_path: Path) -> None:
    suite = _suite("mean", 5, trials=200, adaptive=True, sequential=True, alpha=0.05)
    report = _run(suite, tmp_path, targets=None)
    by_id = {c.eval_id: c for c in report.cases}
    multiply = by_id["multiply"]  # always right: the sequence clears 0.7 long before 200 trials
    assert multiply.stop_reason in ("sequential", "settled_pass") and multiply.verdict == "pass"
    never = by_id["big-prime"]  # never right: settled fail by curtailment or the sequence
    assert never.verdict == "fail" and len(never.trials) < 200
    sequential = [c for c in report.cases if c.stop_reason == "sequential"]
    assert sequential and all(c.sequence is not None and c.sequence["alpha"] == 0.05 for c in sequential)
    for c in sequential:
        low, high = c.sequence["interval"]
        assert (c.verdict == "pass" and low > 0.7) or (c.verdict == "fail" and high < 0.7)
    assert report.adaptive["rule"].startswith("exact curtailment + sequential")
