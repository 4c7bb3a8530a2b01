"""Comparing while running: ``run --baseline RUN --adaptive`` stops on the anytime-valid paired verdict."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from trialscore.cli import app
from trialscore.cli._app import EXIT_BAD_INPUT, EXIT_GATE_FAILED
from trialscore.errors import EvaluationError
from trialscore.results.records import TrialRecord
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


def test_the_scheduler_runs_only_compared_cases_and_states_why_it_stopped() -> None:
    base = BaselineComparison("b", {"m": {"a": (3, 3), "b": (3, 0)}}, margin=0.0)
    cases = [("a", _settings(10)), ("b", _settings(10)), ("c", _settings(10))]
    sched = PairedScheduler(cases, ["m"], base, seed=2)
    units = []
    while (unit := sched.start()) is not None:
        units.append(unit)
        sched.finish(
            unit, TrialRecord(case_id=unit.case_id, trial=unit.trial, passed=True, verdict="pass", score=1.0)
        )
    assert {u.case_id for u in units} <= {"a", "b"}  # c is not in the baseline: not compared, not run
    assert max(u.trial for u in units) <= 2  # no more trials of a case than the baseline has
    report = sched.report()["m"]
    assert report["stopped_because"] == "trials ran out" and report["verdict"] == "undecided"
    # which run ran out, for which case, and what it would take (issue 29.8)
    assert report["ran_out"]["run"] == "baseline" and report["ran_out"]["baseline_trials"] == 3
    assert (
        "more trials per case" in report["ran_out"]["advice"]
        and "without --adaptive" in report["ran_out"]["advice"]
    )
    assert report["undecided_gate"].startswith("undecided never fails the gate")
    (gate,), _ = sequential_baseline_gates({"m": report}, True)
    assert gate.passed and "baseline run 'b' has 3 trials of case" in gate.detail
    assert "undecided never fails the gate" in gate.detail
    assert report["cases_compared"] == 2 and report["trials_fixed_design"] == 20
    assert sched.exhausted and sched.in_flight == 0 and sched.saved == 30 - len(units)


def test_errored_trials_are_not_pairs_and_a_missing_target_is_bad_input() -> None:
    base = BaselineComparison("b", {"m": {"a": (50, 25)}})
    sched = PairedScheduler([("a", _settings(50))], ["m"], base, seed=1)
    unit = sched.start()
    assert unit is not None
    sched.finish(unit, TrialRecord(case_id="a", trial=unit.trial, passed=None, verdict="error", error="boom"))
    assert sched._targets["m"].comparison.observed == 0  # an errored trial is no failed pair
    with pytest.raises(EvaluationError, match="target 'x' has no trials in the baseline run"):
        PairedScheduler([("a", _settings(5))], ["x"], base)
