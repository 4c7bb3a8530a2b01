"""Errored runs say why: errors grouped in the terminal and summary.json, exit status 3 when nothing
could be graded; costs never print as a false zero; resume needs no suite file."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from typer.testing import Result

from tests.cli_runner import CliRunner
from trialscore.cli import app
from trialscore.cli._app import EXIT_NOTHING_GRADED


def write_suite(tmp_path: Path, document: dict, agent: str | None = None) -> Path:
    if agent is not None:
        (tmp_path / "agent.py").write_text(agent)
    path = tmp_path / "suite.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    return path


def _run_args(tmp_path: Path, args: tuple[str, ...]) -> list[str]:
    return ["run", *args, "--store", str(tmp_path / "store.sqlite"), "--no-progress"]


def run_cli(tmp_path: Path, *args: str) -> Result:
    """``trialscore run ARGS`` in this process (Typer's runner) from ``tmp_path``, 200 columns wide."""
    with contextlib.chdir(tmp_path):
        return CliRunner().invoke(app, _run_args(tmp_path, args), env={"COLUMNS": "200"})


def run_process(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The same as its own process (the smoke test of a real run's exit status and output)."""
    command = [sys.executable, "-m", "trialscore", *_run_args(tmp_path, args)]
    env = {**os.environ, "COLUMNS": "200"}
    return subprocess.run(command, capture_output=True, text=True, cwd=tmp_path, timeout=120, env=env)


def cases(count: int, **extra: object) -> list[dict]:
    return [
        {"id": f"case-{i}", "input": f"q{i}", "expected": "yes", "graders": [{"type": "exact"}], **extra}
        for i in range(count)
    ]


def summary_of(out: Path) -> dict:
    return json.loads((out / "summary.json").read_text())


@pytest.mark.slow
def test_a_command_target_that_does_not_exist_exits_3_with_the_errors_grouped(tmp_path: Path) -> None:
    missing = str(tmp_path / "no-such-agent")
    document = {
        "name": "broken",
        "targets": [{"name": "cli", "type": "command", "argv": [missing]}],
        "cases": cases(3),
        "execution": {"trials": {"count": 2}, "retries": 0},
    }
    out = tmp_path / "out"
    done = run_process(tmp_path, str(write_suite(tmp_path, document)), "--out", str(out))
    assert done.returncode == EXIT_NOTHING_GRADED == 3, done.stderr
    assert "Traceback" not in done.stderr
    assert "every trial of run" in done.stderr and "no trial could be graded" in done.stderr
    # The terminal: the errors after the table, no metrics pretending to exist, no $0 spend.
    assert "errors: every trial errored (6): no trial could be graded" in done.stdout
    message = f"target 'cli': cannot start '{missing}': No such file or directory"
    assert f"6 x {message}" in done.stdout
    assert "target cli; cases case-0, case-1, case-2" in done.stdout
    assert "metrics: none, no case has a graded trial" in done.stdout and "pass@1 -" not in done.stdout
    assert "cost unknown" in done.stdout and "$0.0000" not in done.stdout
    # summary.json: the same errors, a warning, and unknown cost as null.
    summary = summary_of(out)
    assert summary["errors"] == {
        "errored_trials": 6,
        "stored_trials": 6,
        "all_errored": True,
        "groups": [
            {"message": message, "count": 6, "targets": ["cli"], "cases": ["case-0", "case-1", "case-2"]}
        ],
        "groups_left_off": 0,
        "trials_left_off": 0,
    }
    assert summary["warnings"][0].startswith("every trial errored (6): no trial could be graded")
    assert summary["targets"]["cli"]["cost_usd"] is None and summary["cost"]["spent_usd"] is None
    assert summary["targets"]["cli"]["trials_with_unknown_cost"] == 6


@pytest.mark.slow
def test_an_endpoint_answering_404_to_every_call_exits_3(tmp_path: Path, chat_server) -> None:
    document = {
        "name": "wrong-url",
        "targets": [
            {
                "name": "gpt",
                "type": "openai",
                "base_url": chat_server.url + "/oops",  # a real 127.0.0.1 server; this path is not routed
                "model": "m",
                "prices": {"input_per_mtok": 1.0, "output_per_mtok": 1.0},
            }
        ],
        "cases": cases(4),
        "execution": {"trials": {"count": 3}, "retries": 2, "backoff_s": 0.01},
    }
    out = tmp_path / "out"
    done = run_cli(tmp_path, str(write_suite(tmp_path, document)), "--out", str(out))
    assert done.exit_code == 3, done.stderr
    assert set(chat_server.statuses) == {404} and len(chat_server.statuses) == 12  # a 404 is not retried
    summary = summary_of(out)
    (group,) = summary["errors"]["groups"]
    assert group["count"] == 12 and group["targets"] == ["gpt"]
    assert group["cases"] == ["case-0", "case-1", "case-2", "case-3"]
    assert (
        group["message"].startswith("target 'gpt': HTTP 404: ")
        and "no route /v1/oops/chat/completions" in group["message"]
    )
    assert "12 x target 'gpt': HTTP 404" in done.stdout and "cost unknown" in done.stdout


AGENT = """
def answer(case, seed):
    if case.id == "case-1":
        raise RuntimeError(f"agent crashed on seed {seed + 10**6}")
    return {"output": "yes", "cost_usd": 0.00021}
"""


@pytest.mark.slow
def test_a_partly_errored_run_exits_0_and_shows_the_errors_and_sub_cent_costs(tmp_path: Path) -> None:
    document = {
        "name": "partly",
        "targets": [{"name": "a", "type": "python", "callable": "agent.py:answer"}],
        "cases": [*cases(2), {**cases(3)[2], "execution": {"trials": {"count": 1}}}],
        "execution": {"trials": {"count": 2}, "retries": 0},
    }
    out = tmp_path / "out"
    done = run_cli(tmp_path, str(write_suite(tmp_path, document, AGENT)), "--out", str(out))
    assert done.exit_code == 0, done.stderr
    assert "errors: 2 of 5 trials errored" in done.stdout
    # Seeds differ per trial; the volatile number is normalised, so both trials make one group.
    assert "2 x target 'a': raised RuntimeError: agent crashed on seed <n>" in done.stdout
    summary = summary_of(out)
    assert summary["errors"]["errored_trials"] == 2 and not summary["errors"]["all_errored"]
    assert summary["errors"]["groups"][0]["cases"] == ["case-1"]
    assert summary["warnings"] == ["2 of 5 trials errored and are left out of the metrics; see errors"]
    # Sub-cent costs: three trials at $0.00021, printed with their digits, not as $0.0000.
    assert abs(summary["targets"]["a"]["cost_usd"] - 0.00063) < 1e-12
    assert "cost $0.00063 + 2 trials of unknown cost" in done.stdout and "$0.0000" not in done.stdout
    assert "0.00042" in done.stdout  # case-0's two trials in the table's cost column
    # The effective trial count is written, not null, with the cases whose own count differs.
    assert summary["settings"]["trials"] == 2 and summary["settings"]["trials_source"] == "suite"
    assert summary["settings"]["case_trials"] == {"case-2": 1}


@pytest.mark.slow
def test_resume_needs_no_suite_file_and_a_changed_file_is_named(tmp_path: Path) -> None:
    agent = "def answer(case, seed):\n    return 'yes'\n"
    document = {
        "name": "resumable",
        "targets": [{"name": "a", "type": "python", "callable": "agent.py:answer"}],
        "cases": cases(2),
        "execution": {"trials": {"count": 3}},
    }
    path = write_suite(tmp_path, document, agent)
    first = run_cli(tmp_path, str(path), "--out", str(tmp_path / "first"))
    assert first.exit_code == 0, first.stderr
    run_id = summary_of(tmp_path / "first")["run_id"]
    # The file goes away (or moves): the store has the suite; agent.py still resolves beside it.
    path.rename(tmp_path / "moved.yaml")
    again = run_cli(tmp_path, "--resume", run_id, "--out", str(tmp_path / "again"))
    assert again.exit_code == 0, again.stderr
    assert f"run {run_id}: 0 trials run now, 6 stored" in again.stdout
    assert summary_of(tmp_path / "again")["targets"]["a"]["trials"]["stored"] == 6
    # A suite file that differs from the stored suite is refused, and the message says what to do.
    document["execution"]["seed"] = 9
    changed = write_suite(tmp_path, document)
    refused = run_cli(tmp_path, str(changed), "--resume", run_id)
    assert refused.exit_code == 2, refused.stderr
    assert f"resume: suite '{changed}' has changed since run '{run_id}' started" in refused.stderr
    assert "resume without the suite file to use the suite the run was started with: " in refused.stderr
    assert f"trialscore run --resume {run_id} --store {tmp_path / 'store.sqlite'}" in refused.stderr
