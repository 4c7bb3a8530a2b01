"""Grouping across inputs, and groups too small to judge: decided once for both sides, named, never fatal."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_runner import CliRunner
from trialscore.cli import app

runner = CliRunner()


def _long(path: Path, rows: dict[tuple[str, str], list[int | None]]) -> Path:
    """A long CSV: one row per (target, case, trial); None is an errored trial."""
    lines = ["case_id,trial,target,passed"]
    for (target, case), outcomes in rows.items():
        lines += [f"{case},{t},{target},{'' if value is None else value}" for t, value in enumerate(outcomes)]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.slow
def test_targets_are_grouped_alike_in_both_runs_and_one_sided_ones_are_listed(tmp_path: Path) -> None:
    cases = [f"q{i}" for i in range(6)]
    base = _long(
        tmp_path / "base.csv",
        {**{("cli", c): [1, 0, 1, 1] for c in cases}, **{("gpt", c): [1, 1, 1, 0] for c in cases}},
    )
    cand = _long(tmp_path / "cand.csv", {("cli", c): [1, 1, 0, 1] for c in cases})
    result = runner.invoke(app, ["compare", str(base), str(cand), "-f", "json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert [c["label"] for c in payload["comparisons"]] == ["target=cli"]
    assert payload["only_in_baseline"] == ["target=gpt"] and payload["only_in_candidate"] == []
    table = runner.invoke(app, ["compare", str(base), str(cand)])
    assert "only in baseline" in table.output and "target=gpt" in table.output


def test_two_single_model_runs_are_compared_with_each_other(tmp_path: Path) -> None:
    cases = [f"q{i}" for i in range(6)]
    base = _long(tmp_path / "a.csv", {("model-a", c): [1, 0, 1] for c in cases})
    cand = _long(tmp_path / "b.csv", {("model-b", c): [1, 1, 1] for c in cases})
    payload = json.loads(runner.invoke(app, ["compare", str(base), str(cand), "-f", "json"]).stdout)
    assert [c["label"] for c in payload["comparisons"]] == ["all"]


@pytest.mark.slow
def test_k_above_a_cases_scored_trials_names_the_case_not_an_index(tmp_path: Path) -> None:
    rows = {("m", f"case-{i}"): [1, 0] * 5 for i in range(8)}
    rows[("m", "case-6")] = [1, 0, 1, 0, 1, 0, 1, 0, 1, None]  # 9 scored trials: one errored
    path = _long(tmp_path / "runs.csv", rows)
    result = runner.invoke(
        app, ["compare", str(path), str(path), "--metric", "pass@k", "--k", "10", "-f", "json"]
    )
    assert result.exit_code == 0, result.output
    (untested,) = json.loads(result.stdout)["not_tested"]
    assert (
        "case 'case-6'" in untested["reason"] and "needs 10 scored trials of every case" in untested["reason"]
    )
    copy = tmp_path / "copy.csv"
    copy.write_text(path.read_text())
    ranked = runner.invoke(
        app, ["rank", str(path), str(copy), "--by", "file", "--metric", "pass@k", "--k", "10"]
    )
    assert ranked.exit_code == 2 and "R[" not in ranked.output and "case 'case-6'" in ranked.output


def test_rank_without_a_model_column_says_how_to_name_one(tmp_path: Path) -> None:
    path = tmp_path / "one.csv"
    path.write_text("case_id,trial,passed\nq1,0,1\nq1,1,0\nq2,0,1\nq2,1,1\n")
    result = runner.invoke(app, ["rank", str(path)])
    assert result.exit_code == 2
    assert "rank needs a column naming each model" in result.output and "--by COLUMN" in result.output
    assert "--by column 'target' is not a column" not in result.output


def test_compare_gate_with_no_testable_group_could_not_judge(tmp_path: Path) -> None:
    path = _long(tmp_path / "one-case.csv", {("m", "only"): [1, 0, 1]})
    result = runner.invoke(app, ["compare", str(path), str(path), "--fail-on", "regression"])
    assert result.exit_code == 3, result.output
    assert "COULD NOT JUDGE" in result.output and "1 case in both runs" in result.output


@pytest.mark.slow
def test_a_mistyped_name_gets_the_nearest_one(tmp_path: Path) -> None:
    path = _long(tmp_path / "runs.csv", {("m", f"q{i}"): [1, 0, 1] for i in range(4)})
    other = _long(tmp_path / "other.csv", {("m", f"q{i}"): [1, 1, 1] for i in range(4)})
    for args, hint in [
        (["score", str(path), "--ci", "wilsn"], "(did you mean 'wilson'?)"),
        (["score", str(path), "--metric", "pas@k"], "(did you mean 'pass@k'?)"),
        (["score", str(path), "--from", "promptfo"], "(did you mean 'promptfoo'?)"),
        (
            ["rank", str(path), str(other), "--by", "file", "--method", "compettition"],
            "(did you mean 'competition'?)",
        ),
    ]:
        result = runner.invoke(app, args)
        assert result.exit_code == 2 and hint in result.output, (args, result.output)
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        "name: s\ntargets: [{name: agent, type: comand, argv: [cat]}]\n"
        "graders: [{type: exacct}]\ncases: [{id: a, input: x, expected: x}]\nexecution: {concurency: 2}\n"
    )
    result = runner.invoke(app, ["validate", str(suite)])
    assert result.exit_code == 2
    for hint in ("(did you mean 'command'?)", "(did you mean 'exact'?)", "(did you mean 'concurrency'?)"):
        assert hint in result.output, result.output
