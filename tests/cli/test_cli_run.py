"""The run and validate commands of the ``trialscore`` app."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer

from tests.cli_runner import CliRunner
from trialscore.cli import app as trialscore_app
from trialscore.cli._app import EXIT_BAD_INPUT

runner = CliRunner()


def app() -> typer.Typer:
    return trialscore_app


def test_demo_run_prints_the_table_and_writes_outputs(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = runner.invoke(
        app(), ["run", "--demo", "--store", str(tmp_path / "s.sqlite"), "--out", str(out), "--no-progress"]
    )
    assert result.exit_code == 0, result.output
    assert "demo · sim-agent" in result.output and "pass@1" in result.output
    trials = (out / "trials.jsonl").read_text().splitlines()
    cases = [json.loads(line) for line in (out / "cases.jsonl").read_text().splitlines()]
    assert len(trials) == 13 * 5 and len(cases) == 13
    verdicts = {case["eval_id"]: case["verdict"] for case in cases}
    assert verdicts["multiply"] == "pass" and verdicts["big-prime"] == "fail"
    flaky = [case["eval_id"] for case in cases if case.get("metrics", {}).get("flaky")]
    assert flaky, "the demo agent is flaky on some cases"
    summary = json.loads((out / "summary.json").read_text())
    assert summary["trials"]["planned"] == 65 and summary["settings"]["seed"] == 2024


@pytest.mark.slow
def test_demo_is_reproducible(tmp_path: Path) -> None:
    outcomes = []
    for name in ("a", "b"):
        out = tmp_path / name
        args = ["run", "--demo", "--store", str(tmp_path / "s.sqlite"), "--out", str(out), "--no-progress"]
        assert runner.invoke(app(), args).exit_code == 0
        records = [json.loads(line) for line in (out / "trials.jsonl").read_text().splitlines()]
        outcomes.append(
            [(r["case_id"], r["trial"], r["verdict"], r["score"], r["cost_usd"]) for r in records]
        )
    assert outcomes[0] == outcomes[1]


def test_validate_good_and_bad(tmp_path: Path) -> None:
    good = tmp_path / "good.yaml"
    good.write_text(
        "name: s\ntargets: [{name: t, type: command, argv: [cat]}]\n"
        "cases: [{id: c, input: x, expected: x, graders: [{type: exact}]}]\n"
        "execution: {trials: {count: 4}}\n"
    )
    result = runner.invoke(app(), ["validate", str(good)])
    assert result.exit_code == 0
    assert "valid suite 's': 1 case, 1 evaluated target, 4 trials planned" in result.output
    bad = tmp_path / "bad.yaml"
    bad.write_text(good.read_text().replace("count: 4", "count: -4"))
    result = runner.invoke(app(), ["validate", str(bad)])
    assert result.exit_code == EXIT_BAD_INPUT
    assert (
        f"{bad}:4: execution.trials.count: Input should be greater than or equal to 1; got -4"
        in result.output
    )


def test_run_errors_exit_2_with_the_message(tmp_path: Path) -> None:
    result = runner.invoke(
        app(), ["run", "--demo", "--resume", "nope", "--store", str(tmp_path / "s.sqlite")]
    )
    assert result.exit_code == EXIT_BAD_INPUT
    assert "run_id 'nope' is not in store" in result.output
    result = runner.invoke(app(), ["run"])
    assert result.exit_code == EXIT_BAD_INPUT
    assert "a suite file is required (or --demo for the bundled demo suite)" in result.output
