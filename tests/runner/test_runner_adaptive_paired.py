"""Comparing while running: ``run --baseline RUN --adaptive`` stops on the sequential paired verdict."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from tests.cli_runner import CliRunner
from trialscore.cli import app
from trialscore.cli._app import EXIT_BAD_INPUT, EXIT_GATE_FAILED
from trialscore.errors import EvaluationError
from trialscore.results.records import TrialRecord
from trialscore.runner.adaptive import Unit
from trialscore.runner.adaptive_paired import BaselineComparison, PairedScheduler
from trialscore.runner.gates import sequential_baseline_gates
from trialscore.runner.suite import CaseSettings

runner = CliRunner()

AGENT = """
import numpy as np
RATES = {rates}
def answer(case, seed):
    return "yes" if np.random.default_rng(seed).random() < RATES[case.id] else "no"
"""


def _suite(tmp: Path, version: str, rates: dict[str, float]) -> Path:
    (tmp / f"agent_{version}.py").write_text(textwrap.dedent(AGENT.format(rates=rates)))
    cases = "\n".join(
        f'  - {{id: {c}, input: "{c}", expected: "yes", graders: [{{type: exact}}]}}' for c in rates
    )
    path = tmp / f"suite_{version}.yaml"
    path.write_text(
        "name: paired\n"
        f"targets:\n  - {{name: bot, type: python, callable: agent_{version}.py:answer}}\n"
        f"cases:\n{cases}\n"
        "execution: {trials: {count: 12}, concurrency: 4, seed: 5}\n"
    )
    return path


@pytest.mark.slow
@pytest.mark.parametrize("spread", [[], ["--workers", "2"]], ids=["one-process", "two-workers"])
def test_a_known_regression_is_found_with_fewer_trials_than_the_fixed_design(
    tmp_path: Path, spread: list[str]
) -> None:
    store = str(tmp_path / "store.sqlite")
    before = {f"c{i}": 1.0 if i < 10 else 0.8 for i in range(20)}
    after = {c: (0.1 if p < 1 else 1.0) for c, p in before.items()}  # the flaky half regressed badly
    base = runner.invoke(app, ["run", str(_suite(tmp_path, "v1", before)), "--store", store, "--no-progress"])
    assert base.exit_code == 0, base.output
    out = tmp_path / "out"
    result = runner.invoke(
        app,
        [
            "run", str(_suite(tmp_path, "v2", after)), "--store", store, "--no-progress",
            "--baseline", "latest", "--adaptive", "--fail-on", "regression", "--out", str(out), *spread,
        ],
    )  # fmt: skip
    assert result.exit_code == EXIT_GATE_FAILED, result.output
    summary = json.loads((out / "summary.json").read_text())
    body = summary["adaptive"]["comparison"]["bot"]
    low, high = body["interval"]
    assert body["verdict"] == "regression" and high < 0 <= low + 1
    assert low <= -0.35 / 2 <= high or high < -0.35 / 2  # the true difference (-0.35) is not above it
    assert body["stopped_because"] == "verdict settled" and body["alpha"] == 0.05
    assert body["trials_run"] < body["trials_fixed_design"] == 240
    stored = sum(1 for _ in (out / "trials.jsonl").open())
    assert stored == body["trials_run"] == summary["adaptive"]["trials_run"]
    gate = summary["gates"]["results"][0]
    assert gate["gate"] == "baseline" and not gate["passed"] and "regression" in gate["detail"]
    text = " ".join(result.output.split())
    assert "compared with baseline latest while running (target bot): regression" in text
    assert f"{body['trials_run']} trials run vs 240 in the fixed design; stopped: verdict settled" in text


@pytest.mark.slow
def test_bad_combinations_are_one_clear_line(tmp_path: Path) -> None:
    store = str(tmp_path / "store.sqlite")
    suite = str(_suite(tmp_path, "v1", {"a": 1.0, "b": 0.5}))
    assert runner.invoke(app, ["run", suite, "--store", store, "--no-progress"]).exit_code == 0
    for extra, message in [
        (["--sequential"], "choose one"),
        (["--margin", "1.5"], "--margin must satisfy 0 <= margin < 1; got 1.5"),
    ]:
        result = runner.invoke(
            app, ["run", suite, "--store", store, "--baseline", "latest", "--adaptive", *extra]
        )
        assert result.exit_code == EXIT_BAD_INPUT, result.output
        assert message in " ".join(result.output.split()) and "Traceback" not in result.output


def _settings(trials: int) -> CaseSettings:
    return CaseSettings(trials, "mean", None, 60.0, 2, 0.5, 0.5, None)


def _drive(sched: PairedScheduler, passed: dict[str, bool]) -> list[Unit]:
    """Run every unit the scheduler hands out, two in flight at a time; each case always passes or fails."""
    units: list[Unit] = []
    flight: list[Unit] = []
    while True:
        while len(flight) < 2 and (unit := sched.start()) is not None:
            flight.append(unit)
        if not flight:
            return units
        unit = flight.pop(0)
        units.append(unit)
        ok = passed[unit.case_id]
        record = TrialRecord(
            case_id=unit.case_id, trial=unit.trial, passed=ok, verdict="pass" if ok else "fail"
        )
        sched.finish(unit, record)


def test_the_scheduler_runs_only_compared_cases_and_states_why_it_stopped() -> None:
    """No change: every case runs its planned trials; it ends undecided and says what would help."""
    base = BaselineComparison("b", {"m": {"a": (3, 3), "b": (3, 0)}}, margin=0.0)
    cases = [("a", _settings(10)), ("b", _settings(10)), ("c", _settings(10))]
    sched = PairedScheduler(cases, ["m"], base, seed=2)
    units = _drive(sched, {"a": True, "b": False})
    assert {u.case_id for u in units} == {"a", "b"}  # c is not in the baseline: not compared, not run
    assert len(units) == 20  # more candidate trials than the baseline has: the baseline never runs out
    report = sched.report()["m"]
    assert report["stopped_because"] == "trials ran out" and report["verdict"] == "undecided"
    assert report["looks_read"] == report["looks_planned"] and report["trials_scored"] == 20
    low, high = report["interval"]
    assert low < 0 < high and report["interval_kind"] == "repeated 95% confidence interval"
    # which run ran out (the candidate's planned trials), and what would help (issue 23.1)
    ran_out = report["ran_out"]
    assert ran_out["run"] == "candidate" and ran_out["trials_planned"] == 20
    assert 0 < ran_out["baseline_half_width"] <= ran_out["half_width"]
    assert "a baseline with more trials per case" in ran_out["advice"]
    assert report["undecided_gate"].startswith("undecided never fails the gate")
    (gate,), _ = sequential_baseline_gates({"m": report}, True)
    assert gate.passed and "every case ran its planned candidate trials" in gate.detail
    assert (
        "undecided never fails the gate" in gate.detail and "repeated 95% confidence interval" in gate.detail
    )
    assert report["cases_compared"] == 2 and report["trials_fixed_design"] == 20
    assert sched.exhausted and sched.in_flight == 0 and sched.saved == 30 - len(units)


def test_a_small_suite_with_a_short_baseline_settles_a_regression() -> None:
    """20 cases, 3 baseline trials each, 10 planned: the old design ran out of baseline trials here."""
    counts = {f"c{i}": (3, 3 if i < 12 else 2) for i in range(20)}
    base = BaselineComparison("b", {"m": counts}, margin=0.05)
    sched = PairedScheduler([(c, _settings(10)) for c in counts], ["m"], base, seed=1)
    units = _drive(sched, {c: int(c[1:]) < 6 for c in counts})  # 14 of 20 cases now fail
    report = sched.report()["m"]
    assert report["verdict"] == "regression" and report["stopped_because"] == "verdict settled"
    assert report["interval"][1] < 0 and report["ran_out"] is None
    assert len(units) == report["trials_run"] < 200 and sched.exhausted


def test_errored_trials_are_not_pairs_and_a_missing_target_is_bad_input() -> None:
    base = BaselineComparison("b", {"m": {"a": (50, 25)}})
    sched = PairedScheduler([("a", _settings(50))], ["m"], base, seed=1)
    unit = sched.start()
    assert unit is not None
    sched.finish(unit, TrialRecord(case_id="a", trial=unit.trial, passed=None, verdict="error", error="boom"))
    assert sched._targets["m"].comparison.observed == 0  # an errored trial is no failed trial
    with pytest.raises(EvaluationError, match="target 'x' has no trials in the baseline run"):
        PairedScheduler([("a", _settings(5))], ["x"], base)
