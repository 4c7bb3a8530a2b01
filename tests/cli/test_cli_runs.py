"""The run store as history: ``runs``, ``runs show``, and run ids wherever a results path is read."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli_runner import CliRunner
from tests.forks import HELPERS, RUNNER, ForkServers
from trialscore.cli import app
from trialscore.cli._app import EXIT_BAD_INPUT

runner = CliRunner()


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """A store ``s.sqlite`` of two demo runs (5 then 3 trials, written to ``out5``, ``out3``) and their ids.

    Shared by the tests below, which only read it (reading a store or an output folder changes neither).
    """
    folder = tmp_path_factory.mktemp("two-runs")
    store = str(folder / "s.sqlite")
    for trials in ("5", "3"):
        args = ["run", "--demo", "--store", store, "--no-progress", "--trials", trials]
        assert runner.invoke(app, [*args, "--out", str(folder / f"out{trials}")]).exit_code == 0
    listed = runner.invoke(app, ["runs", "--store", store, "--format", "json"])
    assert listed.exit_code == 0, listed.output
    return folder, [run["run_id"] for run in json.loads(listed.output)["runs"]]


@pytest.mark.slow
def test_runs_lists_both_runs_with_their_numbers(two_runs: tuple[Path, list[str]]) -> None:
    tmp_path, (first, second) = two_runs
    payload = json.loads(
        runner.invoke(app, ["runs", "--store", str(tmp_path / "s.sqlite"), "-f", "json"]).output
    )
    runs = {run["run_id"]: run for run in payload["runs"]}
    assert (runs[first]["trials"], runs[second]["trials"]) == (65, 39)
    assert (
        runs[first]["cases"] == 13 and runs[first]["targets"] == ["sim-agent"] and runs[first]["errored"] == 0
    )
    trials = [json.loads(line) for line in (tmp_path / "out5" / "trials.jsonl").read_text().splitlines()]
    per_case: dict[str, list[bool]] = {}
    for trial in trials:
        per_case.setdefault(trial["case_id"], []).append(trial["passed"])
    want = sum(sum(v) / len(v) for v in per_case.values()) / len(per_case)
    assert abs(runs[first]["pass_at_1"] - want) < 1e-12
    assert abs(runs[first]["cost_usd"] - sum(t["cost_usd"] for t in trials)) < 1e-12
    table = runner.invoke(app, ["runs", "--store", str(tmp_path / "s.sqlite")])
    assert first in table.output and second in table.output


@pytest.mark.slow
def test_score_and_compare_read_run_ids_and_latest(two_runs: tuple[Path, list[str]]) -> None:
    tmp_path, (first, _) = two_runs
    store = ["--store", str(tmp_path / "s.sqlite")]
    by_id = runner.invoke(app, ["score", first, *store, "-f", "json"])
    by_file = runner.invoke(app, ["score", str(tmp_path / "out5" / "trials.jsonl"), "-f", "json"])
    assert by_id.exit_code == 0, by_id.output
    assert json.loads(by_id.output)["groups"] == json.loads(by_file.output)["groups"]
    latest = json.loads(runner.invoke(app, ["score", "latest", *store, "-f", "json"]).output)
    assert latest["rows"]["rows_read"] == 39
    compared = runner.invoke(app, ["compare", "latest~1", "latest", *store, "-f", "json"])
    assert compared.exit_code == 0, compared.output
    files = runner.invoke(app, ["compare", str(tmp_path / "out5"), str(tmp_path / "out3"), "-f", "json"])
    got, want = json.loads(compared.output)["comparisons"], json.loads(files.output)["comparisons"]
    assert [c["delta"] for c in got] == [c["delta"] for c in want]
    shown = runner.invoke(app, ["runs", "show", "latest~1", *store, "-f", "json"])
    detail = json.loads(shown.output)
    assert detail["run"]["run_id"] == first and detail["targets"][0]["trials"] == 65
    assert detail["targets"][0]["failing_cases"] == ["big-prime"]


@pytest.mark.slow
def test_a_name_that_is_neither_path_nor_run_is_one_clear_error(
    two_runs: tuple[Path, list[str]], tmp_path: Path
) -> None:
    store = ["--store", str(two_runs[0] / "s.sqlite")]
    for args in (["score", "latest~2", *store], ["runs", "show", "nope", *store]):
        result = runner.invoke(app, args)
        assert result.exit_code == EXIT_BAD_INPUT
        assert result.output.count("\n") == 1 and "no such file or folder" in result.output
        assert "latest first:" in result.output and "Traceback" not in result.output
    missing = runner.invoke(app, ["runs", "--store", str(tmp_path / "none.sqlite")])
    assert missing.exit_code == EXIT_BAD_INPUT and "no run store at" in missing.output
    assert not (tmp_path / "none.sqlite").exists()


@pytest.mark.slow
def test_real_processes_two_runs_then_runs_score_and_compare(
    tmp_path: Path, fork_servers: ForkServers
) -> None:
    """The first run is ``python -m trialscore`` started afresh (the real entry point); the other
    commands are processes forked from one Python that imported trialscore once (tests/forks.py: the
    runner's server of this test process, shared with its other test modules)."""
    started = subprocess.run(
        [sys.executable, "-m", "trialscore", "run", "--demo", "--no-progress"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert started.returncode == 0, started.stderr  # the default store
    forks = fork_servers.get(120, HELPERS + RUNNER)
    assert forks.run("run", "--demo", "--no-progress", cwd=tmp_path).code == 0
    assert (tmp_path / ".trialscore" / "store.sqlite").is_file()
    listed = forks.run("runs", "-f", "json", cwd=tmp_path)
    assert listed.code == 0 and len(json.loads(listed.stdout)["runs"]) == 2
    run_id = json.loads(listed.stdout)["runs"][0]["run_id"]
    assert forks.run("score", run_id, cwd=tmp_path).code == 0
    compared = forks.run("compare", "latest~1", "latest", "--fail-on", "regression", cwd=tmp_path)
    assert compared.code == 0 and "identical" in compared.stdout  # the seeded demo repeats exactly


@pytest.mark.slow
def test_track_reads_every_stored_run_dated_by_the_store(tmp_path: Path) -> None:
    from trialscore.runner.store import TrialStore

    store = tmp_path / "s.sqlite"
    for trials in ("3", "3", "4"):
        args = ["run", "--demo", "--store", str(store), "--no-progress", "--trials", trials]
        assert runner.invoke(app, args).exit_code == 0
    opened = TrialStore(store)
    created = opened.run(opened.resolve("latest") or "").created_at
    opened.close()
    result = runner.invoke(app, ["track", "--store", str(store), "-f", "json"])
    assert result.exit_code == 0, result.output
    categories = {c["task_category"]: c for c in json.loads(result.output)["categories"]}
    assert set(categories) == {"arithmetic", "concepts", "facts", "strings", "structured"}
    facts = categories["facts"]
    assert facts["last_updated"] == created[:10] and facts["trend_test"]["runs"] == 3
    assert facts["trend"] in ("stable", "improving", "declining") and "pass@3" in facts
    assert facts["trend_test"]["alpha_each"] == 0.025 and facts["advice"]["code"].startswith("pass_at_1_")
    by_name = runner.invoke(app, ["track", "latest~1", "latest", "--store", str(store), "-f", "json"])
    assert by_name.exit_code == 0 and json.loads(by_name.output)["categories"][0]["comparison"] is not None


@pytest.mark.slow
def test_report_reads_stored_runs_as_their_folders(two_runs: tuple[Path, list[str]], tmp_path: Path) -> None:
    runs, (first, second) = two_runs
    store = ["--store", str(runs / "s.sqlite")]
    stored = tmp_path / "stored.html"
    folders = tmp_path / "folders.html"
    by_name = runner.invoke(app, ["report", "latest", "--baseline", "latest~1", *store, "--out", str(stored)])
    assert by_name.exit_code == 0, by_name.output
    by_path = runner.invoke(
        app, ["report", str(runs / "out3"), "--baseline", str(runs / "out5"), "--out", str(folders)]
    )
    assert by_path.exit_code == 0, by_path.output
    html = stored.read_text()
    assert second in html and first in html  # the runs are named by their ids

    def trial_data(page: str) -> str:
        start = page.index('<script type="application/json" id="trial-data">')
        return page[start : page.index("</script>", start)]

    # The same trials either way: every case's outcomes, seeds, costs and latencies.
    assert trial_data(html) == trial_data(folders.read_text())
