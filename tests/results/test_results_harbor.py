"""Harbor job folders (fixtures built with Harbor's own models by fixtures/harbor/make_fixtures.py)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from _readers import by_item, pass1, score_json

from tests.cli_runner import CliRunner
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


JOB_026 = FIXTURES / "harbor" / "jobs-0.26" / "2026-11-20__10-00-00"


def _harbor_tally(job: Path) -> dict[tuple[str, str], tuple[int, int, int]]:
    """(agent, task) -> (graded, passed, errored) as Harbor 0.26 tallied the job in its result.json:
    ``stats.evals[...].reward_stats`` lists the trials with a valid reward by value, ``exception_stats``
    those with an exception (errored when their reward is not valid)."""
    stats = json.loads((job / "result.json").read_text())["stats"]["evals"]
    out: dict[tuple[str, str], list[int]] = {}
    for key, entry in stats.items():
        agent = key.split("__")[0]
        rewarded = {name: value for value, names in entry["reward_stats"]["reward"].items() for name in names}
        raised = {name for names in entry["exception_stats"].values() for name in names}
        for name in rewarded.keys() | raised:
            counts = out.setdefault((agent, name.split("__")[0]), [0, 0, 0])
            if name in rewarded:
                counts[0] += 1
                counts[1] += float(rewarded[name]) == 1.0
            else:
                counts[2] += 1
    return {key: (graded, passed, errored) for key, (graded, passed, errored) in out.items()}


def test_a_harbor_0_26_job_with_two_agents_scores_per_agent_as_harbor_tallies_it() -> None:
    assert detect_format(JOB_026).NAME == "harbor"
    assert (JOB_026.parent / "VERSION").read_text() == "harbor 0.26.0\n"
    first = json.loads(next(JOB_026.glob("*__*/result.json")).read_text())
    assert next(iter(first)) == "schema_version"  # the key that 0.25's detection tripped over
    counts = read_counts([JOB_026], group_targets=True)
    assert counts.by == ("target",)
    model = " (anthropic/claude-sonnet-4-5)"
    own = {(agent + model, task): value for (agent, task), value in _harbor_tally(JOB_026).items()}
    assert by_item(counts) == own
    assert own[("terminus-2" + model, "regex-log")] == (1, 0, 2)  # rate limit; reward overridden invalid
    assert own[("claude-code" + model, "fix-git")] == (3, 1, 0)  # a non-zero agent exit keeps reward 0
    report = pass1(score_json(str(JOB_026)))
    assert set(report) == {f"target=claude-code{model}", f"target=terminus-2{model}"}


def test_a_changed_harbor_schema_is_named_by_its_field(tmp_path: Path) -> None:
    job = tmp_path / "job"
    shutil.copytree(JOB_026, job)
    trial = next(job.glob("hello-world__*/result.json"))
    data = json.loads(trial.read_text())
    data["schema_version"] = 2
    trial.write_text(json.dumps(data))
    result = runner.invoke(app, ["score", str(job)])
    assert result.exit_code == 2
    assert f"{trial}: field 'schema_version' is 2; this reader knows Harbor's trial result" in result.stderr
    data["schema_version"] = 1
    data["reward_valid"] = "yes"
    trial.write_text(json.dumps({key: data[key] for key in reversed(data)}))  # keys in any order
    result = runner.invoke(app, ["score", str(job)])
    assert result.exit_code == 2
    assert f"{trial}: field 'reward_valid' must be true or false; got 'yes'" in result.stderr
