"""tau-bench and tau2-bench results files (fixtures written by fixtures/tau-bench/make_fixtures.py)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from _readers import by_item, pass1, score_json

from tests.cli_runner import CliRunner
from trialscore.cli import app
from trialscore.errors import EvaluationError
from trialscore.results.formats import detect_format
from trialscore.results.readers import read_counts

runner = CliRunner()

FIXTURES = Path(__file__).parent / "fixtures"
TAU = FIXTURES / "tau-bench"
TAU2 = FIXTURES / "tau2-bench"
MINI = TAU / "tool-calling-gpt-4o-mini-0.0_range_0-3_user-gpt-4o-llm_1122203000.json"
SONNET = TAU / "tool-calling-claude-3-5-sonnet-20241022-0.0_range_0-3_user-gpt-4o-llm_1122204500.json"
TAU2_FILE = TAU2 / "airline_llm_agent_gpt-4.1-mini_user_simulator_gpt-4.1.json"
TAU2_DIR = TAU2 / "airline_claude-sonnet-4"


def test_tau_bench_counts_per_item_and_target() -> None:
    counts = read_counts([MINI, SONNET], by=("target",))
    assert by_item(counts) == {
        # flaky, always fails, one errored trial (the run raised: info.error, empty traj)
        ("gpt-4o-mini", "0"): (3, 2, 0),
        ("gpt-4o-mini", "1"): (3, 0, 0),
        ("gpt-4o-mini", "2"): (2, 2, 1),
        ("claude-3-5-sonnet-20241022", "0"): (3, 3, 0),
        ("claude-3-5-sonnet-20241022", "1"): (3, 1, 0),
        ("claude-3-5-sonnet-20241022", "2"): (3, 2, 0),
    }
    assert counts.stats.rows_errored == 1


def test_tau_bench_file_name_groups() -> None:
    counts = read_counts([MINI], by=("agent", "user_model"))
    assert {key for key in by_item(counts)} == {("tool-calling", "gpt-4o", item) for item in "012"}


@pytest.mark.slow
def test_tau_bench_score_with_no_flags() -> None:
    assert detect_format(MINI).NAME == "tau-bench"
    assert pass1(score_json(str(MINI))) == {"all": pytest.approx((2 / 3 + 0 + 1) / 3)}
    assert pass1(score_json(str(SONNET))) == {"all": pytest.approx((1 + 1 / 3 + 2 / 3) / 3)}
    both = pass1(score_json(str(MINI), str(SONNET), "--by", "target"))
    assert both == {
        "target=gpt-4o-mini": pytest.approx(5 / 9),
        "target=claude-3-5-sonnet-20241022": pytest.approx(2 / 3),
    }


def test_tau2_counts_per_item() -> None:
    counts = read_counts([TAU2_FILE, TAU2_DIR], by=("target", "category"))
    assert by_item(counts) == {
        # "1" always fails: too_many_errors / max_steps are the agent's failures, not errored trials
        ("gpt-4.1-mini", "airline", "0"): (3, 2, 0),
        ("gpt-4.1-mini", "airline", "1"): (3, 0, 0),
        ("gpt-4.1-mini", "airline", "2"): (2, 2, 1),  # infrastructure_error
        ("claude-sonnet-4", "airline", "0"): (3, 3, 0),
        ("claude-sonnet-4", "airline", "1"): (3, 1, 0),  # context_window_exceeded: graded, as tau2 1.0 does
        ("claude-sonnet-4", "airline", "2"): (3, 2, 0),
    }


@pytest.mark.slow
def test_tau2_score_with_no_flags_file_folder_and_results_json() -> None:
    assert detect_format(TAU2_FILE).NAME == "tau2-bench"
    assert detect_format(TAU2_DIR).NAME == "tau2-bench"
    assert pass1(score_json(str(TAU2_FILE))) == {"all": pytest.approx(5 / 9)}
    sonnet = {"all": pytest.approx((1 + 1 / 3 + 2 / 3) / 3)}
    assert pass1(score_json(str(TAU2_DIR))) == sonnet
    assert pass1(score_json(str(TAU2_DIR / "results.json"))) == sonnet


@pytest.mark.parametrize(("path", "name"), [(MINI, "tau-bench"), (TAU2_FILE, "tau2-bench")])
def test_from_names_the_format(path: Path, name: str) -> None:
    assert score_json(str(path), "--from", name)["rows"]["rows_read"] == 9


@pytest.mark.slow
def test_compare_two_runs() -> None:
    for first, second in ((SONNET, MINI), (TAU2_DIR, TAU2_FILE)):
        result = runner.invoke(app, ["compare", str(first), str(second), "-f", "json"])
        assert result.exit_code == 0, result.output


def test_reward_band_and_numeric_task_ids(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    results = [
        {"task_id": 7, "reward": 0.9999995, "info": {}, "traj": [{}], "trial": 0},
        {"task_id": 7, "reward": 0.99, "info": {}, "traj": [{}], "trial": 1},
    ]
    path.write_text(json.dumps(results), encoding="utf-8")
    counts = read_counts([path], by=("target",))
    assert by_item(counts) == {("results", "7"): (2, 1, 0)}


def test_other_formats_are_not_taken_for_tau(tmp_path: Path) -> None:
    samples = {
        "trials.jsonl": '{"case_id": "a", "trial": 0, "passed": true}\n',
        "rows.json": '[{"case_id": "a", "trial": 0, "passed": true}]',
        "cases.json": '[{"eval_id": "a", "verdict": "pass"}]',
        "cases.jsonl": '{"eval_id": "a", "verdict": "pass"}\n',
        "rows.csv": "case_id,trial,passed\na,0,true\n",
        "task.json": '[{"task": "a", "reward": 1, "trial": 0}]',
        "object.json": '{"timestamp": "x", "info": {"model": "m"}, "simulations": []}',
    }
    for name, text in samples.items():
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        assert detect_format(path).NAME not in ("tau-bench", "tau2-bench"), name
    copy = tmp_path / "dir"
    shutil.copytree(TAU2_DIR / "simulations", copy)
    with pytest.raises(EvaluationError):
        detect_format(copy)


def test_malformed_tau_bench_result_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    path.write_text(
        json.dumps(
            [
                {"task_id": 0, "reward": 1.0, "info": {}, "traj": [], "trial": 0},
                {"task_id": 1, "reward": "high", "info": {}, "traj": [], "trial": 0},
            ]
        ),
        encoding="utf-8",
    )
    result = runner.invoke(app, ["score", str(path)])
    assert result.exit_code == 2
    message = result.output.strip()
    assert "\n" not in message
    assert f"{path} result 2: field 'reward' must be a number; got 'high'" in message


def test_malformed_tau2_simulation_is_one_line(tmp_path: Path) -> None:
    data = json.loads(TAU2_FILE.read_text(encoding="utf-8"))
    del data["simulations"][4]["trial"]
    path = tmp_path / "results.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    expected = (
        r"results.json simulation 5: field 'trial' is null while other simulations of the run are numbered"
    )
    with pytest.raises(EvaluationError, match=expected):
        read_counts([path])
    counts = read_counts([path], skip_invalid=True)
    assert counts.stats.rows_skipped == 1
