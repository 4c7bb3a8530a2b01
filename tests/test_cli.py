"""The ``trialscore`` command line, run in process on files written here (and once as a subprocess).

JSON output is checked against the library functions computed from the same trials.
"""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from tests.cli_runner import CliRunner
from trialscore.cli import app
from trialscore.compat.advice import insights
from trialscore.core.bank import Bank
from trialscore.core.estimators import pass_at_k, pass_hat_k
from trialscore.ranking import rank_models
from trialscore.results.records import TrialRecord
from trialscore.stats import (
    bayes_interval,
    bootstrap_interval,
    compare_bayes,
    compare_paired,
    plan_sample_size,
)

SCRIPT = shutil.which("trialscore", path=str(Path(sys.executable).parent))


@dataclass(frozen=True)
class Ran:
    """What a command printed and its exit code."""

    returncode: int
    stdout: str
    stderr: str


def run(*args: str) -> Ran:
    """Run ``trialscore ARGS`` in process (Typer's CliRunner), as the script would."""
    result = CliRunner().invoke(app, list(args), env={"COLUMNS": "200", "NO_COLOR": "1"})
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return Ran(result.exit_code, result.stdout, result.stderr)


@pytest.mark.slow
def test_the_installed_script_runs_a_command() -> None:
    """One subprocess smoke test of the installed entry point."""
    assert SCRIPT is not None, "the trialscore script is not installed next to the test interpreter"
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}
    done = subprocess.run(
        [SCRIPT, "plan", "--delta", "0.1", "--pass-rate", "0.5", "--trials", "3", "-f", "json"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["command"] == "plan"


def _outcomes(seed: int, models: dict[str, float], cases: int = 12, trials: int = 6) -> dict[str, np.ndarray]:
    """Per-model items x trials 0/1 matrices with item difficulty shared across models."""
    rng = np.random.default_rng(seed)
    difficulty = rng.normal(size=cases)
    result = {}
    for model, skill in models.items():
        rate = 1 / (1 + np.exp(-(skill - difficulty)))
        result[model] = (rng.random((cases, trials)) < rate[:, None]).astype(int)
    return result


def _write_records(
    path: Path, outcomes: dict[str, np.ndarray], errored: set[tuple[str, int, int]] = frozenset()
):
    lines = []
    for model, matrix in outcomes.items():
        for case, row in enumerate(matrix):
            for trial, value in enumerate(row):
                if (model, case, trial) in errored:
                    record = TrialRecord(
                        case_id=f"q{case:02d}",
                        trial=trial,
                        target=model,
                        passed=None,
                        verdict="error",
                        error="x",
                    )
                else:
                    passed = bool(value)
                    record = TrialRecord(
                        case_id=f"q{case:02d}",
                        trial=trial,
                        target=model,
                        passed=passed,
                        verdict="pass" if passed else "fail",
                    )
                lines.append(record.to_json_line())
    path.write_text("\n".join(lines) + "\n")


def _bank(matrix: np.ndarray) -> Bank:
    return Bank.from_matrix(matrix)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cli")
    outcomes = _outcomes(3, {"alpha": 1.0, "beta": 0.0})
    path = folder / "runs.jsonl"
    _write_records(path, outcomes)
    return folder, path, outcomes


def test_every_command_has_help_with_an_example():
    for command in ("score", "compare", "rank", "plan", "schema"):
        result = run(command, "--help")
        assert result.returncode == 0, result.stderr
        assert "Example: trialscore " + command in " ".join(result.stdout.split())


def test_score_json_matches_the_library(runs):
    _, path, outcomes = runs
    result = run(
        "score",
        str(path),
        "--by",
        "target",
        "--k",
        "1,3",
        "--metric",
        "pass@k,pass^k,bayes",
        "--ci",
        "bootstrap",
        "--seed",
        "3",
        "--resamples",
        "2000",
        "-f",
        "json",
    )
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    assert payload["command"] == "score" and payload["version"] == 1
    assert payload["rows"]["rows_read"] == sum(m.size for m in outcomes.values())
    assert payload["rows"]["rows_used"] == payload["rows"]["rows_read"]
    assert [group["label"] for group in payload["groups"]] == ["target=alpha", "target=beta"]
    for group in payload["groups"]:
        bank = _bank(outcomes[group["group"]["target"]])
        metrics = {metric["label"]: metric for metric in group["metrics"]}
        assert list(metrics) == ["pass@1", "pass@3", "pass^1", "pass^3", "bayes"]
        assert metrics["pass@3"]["estimate"] == pytest.approx(pass_at_k(bank, 3), abs=1e-12)
        assert metrics["pass^3"]["estimate"] == pytest.approx(pass_hat_k(bank, 3), abs=1e-12)
        expected = bootstrap_interval(bank, "pass@k", 3, seed=3, resamples=2000)
        assert metrics["pass@3"]["interval"] == pytest.approx(expected.to_dict())
        assert metrics["bayes"]["interval"] == pytest.approx(bayes_interval(bank).to_dict())
        assert group["items"] == bank.items and group["trials"] == int(bank.n.sum())
        assert group["flaky_items"] == int(((bank.c > 0) & (bank.c < bank.n)).sum())
        printed = bootstrap_interval(bank, "pass@k", 1, seed=3, resamples=2000)
        assert metrics["pass@1"]["interval"] == pytest.approx(printed.to_dict())
        assert group["advice"] == [advice.to_dict() for advice in insights(bank, 3, 0.95, printed)]


@pytest.mark.slow
def test_score_csv_and_markdown_carry_the_same_numbers(runs):
    _, path, outcomes = runs
    common = ("score", str(path), "--by", "target", "--k", "2", "--metric", "pass@k")
    rows = list(csv.DictReader(io.StringIO(run(*common, "-f", "csv").stdout)))
    assert [row["target"] for row in rows] == ["alpha", "beta"]
    for row in rows:
        bank = _bank(outcomes[row["target"]])
        assert float(row["estimate"]) == pytest.approx(pass_at_k(bank, 2), abs=1e-12)
        assert row["method"] == "wilson-eff" and row["rows_skipped"] == "0"
    markdown = run(*common, "-f", "markdown").stdout
    assert "### target=alpha" in markdown and "| pass@2 |" in markdown
    assert "rows: 144 read, 144 used, 0 skipped, 0 errored" in markdown
    table = run(*common)
    assert table.returncode == 0 and "pass@2" in table.stdout and "rows: 144 read" in table.stdout


@pytest.mark.slow
def test_errored_and_skipped_rows_are_reported(tmp_path):
    outcomes = _outcomes(5, {"m": 0.5}, cases=10, trials=4)
    path = tmp_path / "runs.jsonl"
    _write_records(path, outcomes, errored={("m", 0, 1), ("m", 3, 2)})
    with path.open("a") as handle:
        handle.write('{"case_id": "q99", "trial": 0, "passed": "perhaps", "verdict": "pass"}\n')
    failed = run("score", str(path), "-f", "json")
    assert failed.returncode == 2 and failed.stdout == ""
    assert f"{path} line 41: field 'passed' must be true/false or 1/0" in failed.stderr
    result = run("score", str(path), "--skip-invalid", "-f", "json", "--metric", "avg")
    assert result.returncode == 0, result.stderr
    assert "warning: skipped 1 invalid row;" in result.stderr
    rows = json.loads(result.stdout)["rows"]
    assert (rows["rows_read"], rows["rows_used"], rows["rows_skipped"], rows["rows_errored"]) == (
        41,
        38,
        1,
        2,
    )
    (group,) = json.loads(result.stdout)["groups"]
    matrix = outcomes["m"]
    n = np.full(10, 4) - np.isin(np.arange(10), [0, 3])
    c = matrix.sum(axis=1) - np.array(
        [matrix[0, 1] if i == 0 else matrix[3, 2] if i == 3 else 0 for i in range(10)]
    )
    assert group["metrics"][0]["estimate"] == pytest.approx(float(np.mean(c / n)), abs=1e-12)
    as_failures = json.loads(
        run("score", str(path), "--skip-invalid", "--errors", "fail", "-f", "json").stdout
    )
    assert as_failures["rows"]["rows_used"] == 40 and as_failures["groups"][0]["trials"] == 40


@pytest.mark.slow
def test_compare_verdict_matches_the_library_and_gates(tmp_path):
    base = _outcomes(8, {"m": 1.5}, cases=40, trials=5)
    worse = {"m": np.where(np.random.default_rng(9).random((40, 5)) < 0.5, 0, base["m"])}
    _write_records(tmp_path / "base.jsonl", base)
    _write_records(tmp_path / "cand.jsonl", worse)
    args = (
        "compare",
        str(tmp_path / "base.jsonl"),
        str(tmp_path / "cand.jsonl"),
        "--metric",
        "pass@k",
        "--k",
        "1",
    )
    result = run(*args, "-f", "json", "--fail-on", "regression")
    assert result.returncode == 1, result.stderr
    assert "gate failed" in result.stderr
    (comparison,) = json.loads(result.stdout)["comparisons"]
    ids = [f"q{i:02d}" for i in range(40)]
    expected = compare_paired(
        Bank.from_matrix(base["m"]),
        Bank.from_matrix(worse["m"]),
        "pass@k",
        1,
        ids_baseline=ids,
        ids_candidate=ids,
    )
    assert comparison["verdict"] == expected.verdict == "regression"
    assert comparison["delta"] == pytest.approx(expected.delta)
    assert comparison["p_value"] == pytest.approx(expected.p_value)
    assert json.loads(result.stdout)["gate"] == {
        "fail_on": "regression",
        "failed": True,
        "judged": True,
        "not_tested": [],
    }
    assert run(*args, "-f", "json").returncode == 0  # no gate asked
    markdown = run(*args, "-f", "markdown", "--fail-on", "regression")
    assert markdown.returncode == 1 and "### trialscore compare: regression" in markdown.stdout
    same = run(
        "compare", str(tmp_path / "base.jsonl"), str(tmp_path / "base.jsonl"), "--fail-on", "regression"
    )
    assert same.returncode == 0 and "identical" in same.stdout


def test_compare_bayes_matches_the_library(runs):
    _, path, outcomes = runs
    result = run("compare", str(path), str(path), "--by", "target", "--metric", "bayes", "-f", "json")
    assert result.returncode == 0, result.stderr
    comparisons = json.loads(result.stdout)["comparisons"]
    for comparison in comparisons:
        bank = _bank(outcomes[comparison["group"]["target"]])
        expected = compare_bayes(bank, bank)
        assert comparison["verdict"] == expected.verdict == "identical"
        assert comparison["probability"] == pytest.approx(expected.probability)


def test_rank_matches_rank_models_and_beat_probability(runs):
    _, path, outcomes = runs
    result = run("rank", str(path), "--by", "target", "--metric", "bayes", "-f", "json")
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    banks = [_bank(outcomes["alpha"]), _bank(outcomes["beta"])]
    expected = rank_models(banks, "bayes", names=["target=alpha", "target=beta"])
    assert payload["ranking"]["scores"] == pytest.approx(list(expected.scores))
    assert payload["ranking"]["ranks"] == list(expected.ranks)
    best, second = payload["models"]
    assert best["rank"] == 1 and best["label"] == "target=alpha"
    assert best["p_beats_next"] == pytest.approx(compare_bayes(banks[1], banks[0]).probability)
    assert second["p_beats_next"] is None
    assert best["interval"] == pytest.approx(bayes_interval(banks[0]).to_dict())


def test_plan_matches_plan_sample_size():
    result = run("plan", "--delta", "0.05", "--pass-rate", "0.7", "--trials", "5", "-f", "json")
    assert result.returncode == 0, result.stderr
    expected = plan_sample_size(0.05, pass_rate=0.7, trials=5)
    assert json.loads(result.stdout)["plan"] == pytest.approx(expected.to_dict())
    bad = run("plan", "--delta", "0.05")
    assert bad.returncode == 2 and "give exactly one of --pass-rate" in bad.stderr


def test_schema_is_the_trial_record_schema():
    result = run("schema")
    assert result.returncode == 0
    assert json.loads(result.stdout) == TrialRecord.model_json_schema()


def test_bad_usage_and_bad_input_exit_2(tmp_path):
    missing = run("score", str(tmp_path / "absent.jsonl"))
    assert missing.returncode == 2 and "no such file" in missing.stderr and missing.stdout == ""
    unknown = run("score", str(tmp_path / "x.csv"), "--nonsense")
    assert unknown.returncode == 2 and "No such option" in unknown.stderr
    (tmp_path / "bad.csv").write_text("case_id,trial,passed\na,0,1\na,1,0\n")
    bad_metric = run("score", str(tmp_path / "bad.csv"), "--metric", "pass@x")
    assert bad_metric.returncode == 2 and "metric must be one of" in bad_metric.stderr
    too_big = run("score", str(tmp_path / "bad.csv"), "--k", "3", "--metric", "pass@k")
    assert too_big.returncode == 2 and "pass@3 cannot be computed in any group" in too_big.stderr
    assert "needs 3 scored trials of every case; in all, case 'a' has 2" in too_big.stderr


@pytest.mark.slow
def test_python_dash_m_and_demo_still_work():
    demo = subprocess.run(
        [sys.executable, "-m", "trialscore", "demo", "--k", "1,2"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert demo.returncode == 0, demo.stderr
    assert "Bayes@N" in demo.stdout and "flaky items" in demo.stdout


def _write_category_run(path: Path, outcomes: dict[str, np.ndarray]) -> None:
    """One run: for each category, items x trials outcomes as JSON lines."""
    lines = []
    for category, matrix in outcomes.items():
        for case, row in enumerate(matrix):
            for trial, value in enumerate(row):
                lines.append(
                    json.dumps(
                        {
                            "case_id": f"{category}-{case}",
                            "trial": trial,
                            "category": category,
                            "passed": bool(value),
                        }
                    )
                )
    path.write_text("\n".join(lines) + "\n")


def test_track_reports_each_category_trend_against_the_library(tmp_path: Path) -> None:
    from trialscore.compat.tracking import track_category

    rng = np.random.default_rng(21)
    week1 = {
        "bug_fix": (rng.random((30, 3)) < 0.4).astype(int),
        "docs": (rng.random((20, 3)) < 0.8).astype(int),
    }
    week2 = {
        "bug_fix": (rng.random((30, 3)) < 0.9).astype(int),
        "docs": (rng.random((20, 3)) < 0.8).astype(int),
    }
    _write_category_run(tmp_path / "w1.jsonl", week1)
    _write_category_run(tmp_path / "w2.jsonl", week2)
    result = run(
        "track",
        str(tmp_path / "w1.jsonl"),
        str(tmp_path / "w2.jsonl"),
        "--dates",
        "2024-01-08,2024-01-15",
        "--format",
        "json",
    )
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    got = {entry["task_category"]: entry for entry in payload["categories"]}
    for category in ("bug_fix", "docs"):
        runs = [
            (day, {f"{category}-{i}": list(row) for i, row in enumerate(week[category])})
            for day, week in (("2024-01-08", week1), ("2024-01-15", week2))
        ]
        want = track_category(category, runs, ks=(1, 3))
        assert got[category]["pass@1"] == pytest.approx(want.pass_at_k[1], rel=1e-15)
        assert got[category]["pass@3"] == pytest.approx(want.pass_at_k[3], rel=1e-15)
        assert got[category]["trend"] == want.trend
        assert got[category]["comparison"]["p_value"] == pytest.approx(want.comparison.p_value, rel=1e-12)
        assert got[category]["last_updated"] == "2024-01-15" and got[category]["samples"] == len(
            week2[category]
        )
    assert got["bug_fix"]["trend"] == "improving"


def test_track_needs_one_date_per_file(tmp_path: Path) -> None:
    _write_category_run(tmp_path / "w1.jsonl", {"a": np.ones((3, 2), dtype=int)})
    result = run("track", str(tmp_path / "w1.jsonl"), "--dates", "2024-01-08,2024-01-15")
    assert result.returncode == 2
    assert "--dates must give one date per run file; got 2 dates for 1 files" in result.stderr
