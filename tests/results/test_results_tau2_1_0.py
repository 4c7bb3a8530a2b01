"""tau2-bench 1.0.1 runs: every file ``tau2 run`` writes is read to the per-task counts tau2's own
metrics give, and a layout that drifted is one line naming the field.

The run folders under ``fixtures/tau2-bench/data-1.0/`` are built from tau2's data model in its
source (v1.0.1), not written by tau2: it needs Python >= 3.12 and API models
(``fixtures/tau2-bench/make_fixtures_1_0.py`` says how).  "tau2's own records" below are what its
``metrics/agent_metrics.get_metrics_df`` counts, done again here on the raw JSON as tau2 loads it
(``utils/io_utils.load_results_dict``): infrastructure errors left out, a success is a reward within
1e-6 of 1, every other termination graded by its reward.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from _readers import by_item, score_json

from tests.cli_runner import CliRunner
from trialscore.cli import app
from trialscore.results.formats import detect_format
from trialscore.results.readers import read_counts

runner = CliRunner()

DATA = Path(__file__).parent / "fixtures" / "tau2-bench" / "data-1.0" / "simulations"
TEXT_RUN = DATA / "20261125_100000_airline_llm_agent_gpt-4.1-mini_user_simulator_gpt-4.1"
DIR_RUN = DATA / "20261125_110000_retail_llm_agent_claude-sonnet-4_user_simulator_gpt-4.1"


def _load_results_dict(path: Path) -> dict[str, Any]:
    """tau2's ``load_results_dict``: a results file, or a run folder in either layout."""
    meta = path / "results.json" if path.is_dir() else path
    folder = meta.parent / "simulations"
    data: dict[str, Any] = json.loads(meta.read_text(encoding="utf-8"))
    if folder.is_dir():
        data["simulations"] = [json.loads(file.read_text()) for file in sorted(folder.glob("*.json"))]
    return data


def _tau2_records(path: Path) -> dict[tuple[str, str, str], tuple[int, int, int]]:
    """(target, domain, task) -> (graded, successes, infrastructure errors), as tau2 1.0.1 counts them."""
    data = _load_results_dict(path)
    info = data["info"]
    out: dict[tuple[str, str, str], list[int]] = {}
    for simulation in data["simulations"]:
        key = (info["agent_info"]["llm"], info["environment_info"]["domain_name"], str(simulation["task_id"]))
        entry = out.setdefault(key, [0, 0, 0])
        if simulation["termination_reason"] == "infrastructure_error":
            entry[2] += 1
            continue
        reward = simulation["reward_info"]["reward"]
        entry[0] += 1
        entry[1] += (1 - 1e-6) <= reward <= (1 + 1e-6)
    return {key: (n, c, e) for key, (n, c, e) in out.items()}


@pytest.mark.parametrize("run", [TEXT_RUN, TEXT_RUN / "results.json", DIR_RUN, DIR_RUN / "results.json"])
def test_each_layout_counts_what_tau2_counts(run: Path) -> None:
    assert detect_format(run).NAME == "tau2-bench"
    counts = read_counts([run], by=("target", "category"))
    assert by_item(counts) == _tau2_records(run)
    assert counts.stats.rows_errored == sum(errored for _, _, errored in _tau2_records(run).values()) > 0


def test_context_window_exceeded_is_the_agents_failure_as_tau2_counts_it() -> None:
    counts = read_counts([TEXT_RUN], by=("target",))
    assert by_item(counts)[("gpt-4.1-mini", "1")] == (4, 1, 0)  # context_window_exceeded and max_steps fail


def test_the_folder_of_runs_reads_each_run() -> None:
    assert detect_format(DATA).NAME == "tau2-bench"
    counts = read_counts([DATA], by=("target", "category"))
    assert by_item(counts) == {**_tau2_records(TEXT_RUN), **_tau2_records(DIR_RUN)}
    report = score_json(str(DATA), "--by", "target")
    assert {group["label"] for group in report["groups"]} == {"target=gpt-4.1-mini", "target=claude-sonnet-4"}


def test_a_results_json_without_its_simulation_files_is_read_from_its_index(tmp_path: Path) -> None:
    """The leaderboard keeps a dir-layout run's results.json alone: its simulation_index has the outcomes."""
    shutil.copy(DIR_RUN / "results.json", tmp_path / "results.json")
    counts = read_counts([tmp_path / "results.json"], by=("target", "category"))
    assert by_item(counts) == _tau2_records(DIR_RUN)


def test_simulation_files_that_disagree_with_the_index_are_named(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(DIR_RUN, run)
    (run / "simulations" / "7-1-0c1d2e3f.json").unlink()
    result = runner.invoke(app, ["score", str(run)])
    assert result.exit_code == 2
    message = " ".join(result.output.split())
    assert "field 'simulation_index' and the files of" in message and "no file for 7-1-0c1d2e3f" in message


@pytest.mark.slow
def test_a_results_file_larger_than_a_document_is_streamed(tmp_path: Path) -> None:
    """A monolithic results file over the 48 MiB parsed whole (simulations with long transcripts) is
    read one simulation at a time, its info first."""
    data = json.loads((TEXT_RUN / "results.json").read_text())
    for simulation in data["simulations"]:
        if simulation["messages"]:
            simulation["messages"][1]["content"] = "x" * 5_000_000
    path = tmp_path / "results.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    assert path.stat().st_size > 48 * 2**20
    counts = read_counts([path], by=("target", "category"))
    assert by_item(counts) == _tau2_records(TEXT_RUN)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda sim: sim.update(trial="0"), "field 'trial' must be a whole number >= 0 (or null); got '0'"),
        (lambda sim: sim.pop("termination_reason"), "field 'termination_reason' must be a string; got None"),
        (
            lambda sim: sim["reward_info"].update(reward="1"),
            "field 'reward_info.reward' must be a number; got '1'",
        ),
        (lambda sim: sim.pop("task_id"), "field 'task_id' must be a task id; got None"),
    ],
)
def test_a_simulation_that_drifted_names_the_field(tmp_path: Path, change: Any, message: str) -> None:
    data = json.loads((TEXT_RUN / "results.json").read_text())
    change(data["simulations"][0])
    path = tmp_path / "results.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    result = runner.invoke(app, ["score", str(path)])
    assert result.exit_code == 2
    output = " ".join(result.output.split())
    assert f"{path} simulation 1: {message}" in output


def test_trial_numbers_all_missing_pool_the_trials_and_some_missing_is_an_error(tmp_path: Path) -> None:
    data = json.loads((TEXT_RUN / "results.json").read_text())
    for simulation in data["simulations"]:
        simulation["trial"] = None
    path = tmp_path / "results.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    assert by_item(read_counts([path], by=("target", "category"))) == _tau2_records(TEXT_RUN)
    data["simulations"][0]["trial"] = 0
    path.write_text(json.dumps(data), encoding="utf-8")
    result = runner.invoke(app, ["score", str(path)])
    assert result.exit_code == 2
    output = " ".join(result.output.split())
    assert (
        f"{path} simulation 2: field 'trial' is null while other simulations of the run are numbered"
        in output
    )


def test_info_that_moved_is_named(tmp_path: Path) -> None:
    data = json.loads((TEXT_RUN / "results.json").read_text())
    data["info"] = "see run_info"
    path = tmp_path / "results.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    result = runner.invoke(app, ["score", str(path), "--from", "tau2-bench"])
    assert result.exit_code == 2
    assert "field 'info' must be an object" in " ".join(result.output.split())
