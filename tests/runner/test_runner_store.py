"""The SQLite run store: runs round-trip, a trial is stored once, a failed batch leaves nothing behind."""

from __future__ import annotations

import io
import json
import sqlite3
from pathlib import Path

import pytest
from rich.console import Console

from trialscore.errors import EvaluationError, StoreError
from trialscore.results.records import TrialRecord
from trialscore.runner.progress import RunCounters, RunProgress
from trialscore.runner.store import RunInfo, TrialStore


def record(case: str, trial: int, verdict: str = "pass", output: str | None = None) -> TrialRecord:
    passed = None if verdict == "error" else verdict == "pass"
    score = None if verdict == "error" else float(passed)
    return TrialRecord(
        case_id=case, trial=trial, target="t", passed=passed, verdict=verdict, score=score, output=output
    )


def test_run_info_round_trips_and_unknown_ids_are_named(tmp_path: Path) -> None:
    store = TrialStore(tmp_path / "deep" / "runs.sqlite")
    info = RunInfo("r1", "suite", "/x/suite.yaml", "abc", {"trials": 3, "targets": ["t"]}, "/out")
    store.create_run(info)
    assert store.run("r1") == info
    with pytest.raises(EvaluationError, match=r"run_id 'r1' is already in store"):
        store.create_run(info)
    with pytest.raises(
        EvaluationError, match=r"run_id 'r2' is not in store '.*runs\.sqlite' \(latest runs: r1\)"
    ):
        store.run("r2")
    assert sqlite3.connect(store.path).execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_a_trial_is_stored_once_and_a_failed_batch_is_rolled_back(tmp_path: Path) -> None:
    store = TrialStore(tmp_path / "runs.sqlite")
    store.create_run(RunInfo("r", "s", None, "d"))
    store.insert([TrialStore.row("r", record("b", 1, output="out")), TrialStore.row("r", record("a", 0))])
    with pytest.raises(StoreError, match=r"cannot commit trials: UNIQUE constraint failed"):
        store.insert([TrialStore.row("r", record("c", 0)), TrialStore.row("r", record("a", 0))])
    assert store.count("r") == 2  # the new trial of the failed batch was rolled back with it
    assert [(r.case_id, r.trial) for r in store.records("r")] == [("a", 0), ("b", 1)]
    store.insert([TrialStore.row("r", record("c", 0, "error"))])
    assert store.records("r")[2].errored
    other = TrialStore(tmp_path / "runs.sqlite")  # a second connection sees the committed trials
    assert other.count("r") == 3


def test_progress_bar_shows_done_total_pass_rate_and_spend() -> None:
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=True, width=120)
    counters = RunCounters(total=40)
    with RunProgress(counters, console) as progress:
        counters.done, counters.scored, counters.passed, counters.spent_usd = 10, 8, 6, 0.125
        progress.refresh()
    text = buffer.getvalue()
    assert "10/40" in text and "pass 75.0%" in text and "$0.1250" in text and "ETA" in text


def test_output_text_is_stored_once_in_its_column_and_comes_back_in_the_record(tmp_path: Path) -> None:
    store = TrialStore(tmp_path / "runs.sqlite")
    store.create_run(RunInfo("r", "s", None, "d"))
    said = 'The answer is "42".\nDone.'
    kept = [record("a", 0, output=said), record("a", 1, "error", output="partial"), record("b", 0)]
    store.insert([TrialStore.row("r", r) for r in kept])
    assert store.records("r") == kept
    rows = sqlite3.connect(store.path).execute("SELECT output, record FROM trials ORDER BY case_id, trial")
    stored = [(output, json.loads(line)) for output, line in rows]
    assert [output for output, _ in stored] == [said, "partial", None]
    assert all("output" not in data for _, data in stored)  # the text is not stored a second time
