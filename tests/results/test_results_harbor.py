"""Harbor job folders (fixtures built with Harbor's own models by fixtures/harbor/make_fixtures.py)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from _readers import by_item, pass1
from typer.testing import CliRunner

from trialscore.cli import app
from trialscore.errors import EvaluationError
from trialscore.results.formats import FORMATS, detect_format
from trialscore.results.readers import read_counts

runner = CliRunner()

FIXTURES = Path(__file__).parent / "fixtures"
JOBS = FIXTURES / "harbor" / "jobs"
CLAUDE_JOB = JOBS / "2026-03-02__09-00-00"
GPT_JOB = JOBS / "2026-03-03__09-00-00"
CLAUDE = "terminus-2 (anthropic/claude-sonnet-4)"
GPT = "terminus-2 (openai/gpt-5)"


def test_counts_per_item_and_target_from_a_folder_of_jobs() -> None:
    counts = read_counts([JOBS], by=("target",))
    assert by_item(counts) == {
        (CLAUDE, "hello-world"): (3, 3, 0),
        (CLAUDE, "fix-git"): (3, 2, 0),  # flaky
        (CLAUDE, "build-linux-kernel-qemu"): (3, 0, 0),  # always fails; one AgentTimeoutError graded 0
        (CLAUDE, "crack-7z-hash"): (2, 1, 1),  # EnvironmentStartTimeoutError: errored
        (GPT, "hello-world"): (3, 2, 0),
        (GPT, "fix-git"): (3, 1, 0),
        (GPT, "build-linux-kernel-qemu"): (3, 0, 0),
        (GPT, "crack-7z-hash"): (1, 1, 1),  # ApiRateLimitError errored; a third trial still running
    }
    # the jobs' own result.json files are not trials; the running trial is noted, not counted
    assert counts.stats.rows_read == 23
    assert counts.stats.notes == (
        f"{JOBS}: 1 trial with neither finished_at nor exception_info is still running",
    )


def test_trials_are_ordered_by_start_and_other_groups() -> None:
    counts = read_counts([CLAUDE_JOB], by=("agent", "model", "dataset"))
    assert {key[:3] for key in by_item(counts)} == {
        ("terminus-2", "anthropic/claude-sonnet-4", "terminal-bench")
    }
    result = runner.invoke(app, ["score", str(CLAUDE_JOB), "-f", "json"])
    assert result.exit_code == 0, result.output
    # trial indices 0, 1, 2 per task: no repeats, so no flags are needed
    assert pass1(json.loads(result.stdout)) == {"all": pytest.approx((1 + 2 / 3 + 0 + 1 / 2) / 4)}


def test_score_with_no_flags_job_trial_and_file() -> None:
    trial = next(path for path in CLAUDE_JOB.iterdir() if path.name.startswith("fix-git"))
    for path in (JOBS, CLAUDE_JOB, trial, trial / "result.json"):
        assert detect_format(path).NAME == "harbor", path
    assert not FORMATS["harbor"].sniff(CLAUDE_JOB / "result.json")  # the job's own result
    result = runner.invoke(app, ["score", str(JOBS), "--by", "target", "-f", "json"])
    assert result.exit_code == 0, result.output
    assert "note: " in result.stderr
    assert pass1(json.loads(result.stdout)) == {
        f"target={CLAUDE}": pytest.approx((1 + 2 / 3 + 0 + 1 / 2) / 4),
        f"target={GPT}": pytest.approx((2 / 3 + 1 / 3 + 0 + 1) / 4),
    }


def test_compare_two_jobs() -> None:
    result = runner.invoke(app, ["compare", str(CLAUDE_JOB), str(GPT_JOB), "-f", "json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["comparisons"]


def _copy_job(tmp_path: Path) -> tuple[Path, Path]:
    job = tmp_path / "job"
    shutil.copytree(CLAUDE_JOB, job)
    trial = sorted(path for path in job.iterdir() if path.is_dir())[0]
    return job, trial / "result.json"


def test_malformed_trial_result_is_one_line(tmp_path: Path) -> None:
    job, path = _copy_job(tmp_path)
    data = json.loads(path.read_text(encoding="utf-8"))
    data["verifier_result"] = {"rewards": {"reward": "pass"}}
    data["exception_info"] = None
    path.write_text(json.dumps(data, indent=4), encoding="utf-8")
    result = runner.invoke(app, ["score", str(job)])
    assert result.exit_code == 2
    message = result.output.strip()
    assert "\n" not in message
    assert f"{path}: field 'verifier_result.rewards.reward' must be a number; got 'pass'" in message
    counts = read_counts([job], skip_invalid=True)
    assert counts.stats.rows_skipped == 1
    data["agent_info"] = {"version": "2.0.0"}
    path.write_text(json.dumps(data, indent=4), encoding="utf-8")
    with pytest.raises(
        EvaluationError, match=r"result\.json agent_info: field 'name' must be non-empty text"
    ):
        read_counts([job])


def test_several_rewards_and_a_single_named_reward(tmp_path: Path) -> None:
    job, path = _copy_job(tmp_path)
    data = json.loads(path.read_text(encoding="utf-8"))
    data["exception_info"] = None
    data["verifier_result"] = {"rewards": {"accuracy": 1, "style": 0.5}}
    path.write_text(json.dumps(data, indent=4), encoding="utf-8")
    with pytest.raises(EvaluationError, match=r"has several rewards and none named 'reward'"):
        read_counts([job])
    data["verifier_result"] = {"rewards": {"accuracy": 1}}
    path.write_text(json.dumps(data, indent=4), encoding="utf-8")
    assert read_counts([path]).c.tolist() == [1]


def test_other_formats_are_not_taken_for_harbor(tmp_path: Path) -> None:
    (tmp_path / "result.json").write_text('{"task_name": "a", "reward": 1}', encoding="utf-8")
    assert not FORMATS["harbor"].sniff(tmp_path / "result.json") and not FORMATS["harbor"].sniff(tmp_path)
    others = [path for path in FIXTURES.rglob("*") if "harbor" not in path.parts]
    assert not [path for path in others if FORMATS["harbor"].sniff(path)]
