"""A run folder (what ``trialscore run --out DIR`` writes) and its summary.json are inputs: its trials.jsonl.

The folder comes from actually running the bundled demo suite in this process.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.cli_runner import CliRunner
from trialscore.cli import app
from trialscore.errors import EvaluationError
from trialscore.results.formats import detect_format
from trialscore.results.readers import read_counts

runner = CliRunner()


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("run")
    out = base / "demo-output"
    result = runner.invoke(
        app, ["run", "--demo", "--out", str(out), "--store", str(base / "store.sqlite"), "--no-progress"]
    )
    assert result.exit_code == 0, result.output
    assert sorted(path.name for path in out.iterdir()) == ["cases.jsonl", "summary.json", "trials.jsonl"]
    return out


def _score_json(*args: str) -> dict:
    result = runner.invoke(app, ["score", *args, "--by", "target,category", "-f", "json"])
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


@pytest.mark.slow
def test_scoring_the_folder_or_its_summary_is_scoring_its_trials(run_folder):
    trials = run_folder / "trials.jsonl"
    expected = _score_json(str(trials))
    for source in (run_folder, run_folder / "summary.json"):
        assert detect_format(source).NAME == "runner"
        payload = _score_json(str(source))
        assert payload["groups"] == expected["groups"]
        assert payload["rows"] == expected["rows"]
        assert payload["rows"]["sources"] == [str(trials)]
    assert expected["rows"]["rows_read"] == sum(1 for line in trials.open() if line.strip())


@pytest.mark.slow
def test_the_folder_counts_each_trial_once_as_its_cases_file_does(run_folder):
    folder = read_counts([run_folder], by=["target"])
    cases = read_counts([run_folder / "cases.jsonl"], by=["target"])
    assert folder.stats.rows_read == cases.stats.rows_read
    assert folder.item.tolist() == cases.item.tolist()
    assert folder.graded.tolist() == cases.graded.tolist() and folder.c.tolist() == cases.c.tolist()


def test_a_summary_without_trials_beside_it_says_what_to_pass(run_folder, tmp_path):
    alone = tmp_path / "summary.json"
    shutil.copy(run_folder / "summary.json", alone)
    result = runner.invoke(app, ["score", str(alone)])
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.strip().splitlines() == [
        f"error: {alone}: a run summary holds no trials and there is no trials.jsonl beside it; "
        "give the run's trials.jsonl or its folder"
    ]
    with pytest.raises(EvaluationError, match=r"no trials\.jsonl in this folder"):
        read_counts([tmp_path])


def test_a_summary_is_recognised_by_its_keys_not_its_name(run_folder, tmp_path):
    renamed = tmp_path / "run-report.json"
    shutil.copy(run_folder / "summary.json", renamed)
    shutil.copy(run_folder / "trials.jsonl", tmp_path / "trials.jsonl")
    assert detect_format(renamed).NAME == "runner"
    assert read_counts([renamed]).stats.rows_read == read_counts([run_folder]).stats.rows_read
    other = tmp_path / "settings.json"
    other.write_text(json.dumps({"run_id": "x", "settings": {}, "trials": [1]}))
    assert detect_format(other).NAME != "runner"
