"""``trialscore run`` conveniences: --case and --category select cases; --dry-run runs nothing; --seed,
--limit, --max-cost, --timeout and --retries override the suite without editing it."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from tests.cli_runner import CliRunner
from trialscore.cli import app
from trialscore.cli._app import EXIT_BAD_INPUT

runner = CliRunner()


def demo(tmp_path: Path, *extra: str) -> tuple[int, str]:
    result = runner.invoke(
        app,
        ["run", "--demo", "--store", str(tmp_path / "s.sqlite"), "--no-progress", "--trials", "2", *extra],
    )
    return result.exit_code, result.output


def case_ids(out: Path) -> list[str]:
    return [json.loads(line)["eval_id"] for line in (out / "cases.jsonl").read_text().splitlines()]


@pytest.mark.slow
def test_case_patterns_and_categories_select_the_cases_run(tmp_path: Path) -> None:
    code, output = demo(tmp_path, "--case", "s*", "--case", "power", "--out", str(tmp_path / "a"))
    assert code == 0, output
    cases = case_ids(tmp_path / "a")
    assert cases == ["sqrt-two", "power", "shout"]  # suite order; "s*" matches sqrt-two and shout
    code, output = demo(tmp_path, "--category", "strings", "--case", "*o*", "--out", str(tmp_path / "b"))
    assert code == 0, output
    cases = case_ids(tmp_path / "b")
    assert cases == ["shout", "vowels"]  # in category strings AND matching *o* (reverse does not)
    summary = json.loads((tmp_path / "b" / "summary.json").read_text())
    assert summary["trials"]["planned"] == 4
    assert summary["settings"]["cases"] == ["*o*"] and summary["settings"]["categories"] == ["strings"]


@pytest.mark.slow
def test_a_selection_of_nothing_is_bad_input_and_stores_no_run(tmp_path: Path) -> None:
    code, output = demo(tmp_path, "--case", "nope-*")
    assert code == EXIT_BAD_INPUT
    assert "case pattern 'nope-*' matches no case id of suite 'demo' (13 cases: multiply, sqrt-two" in output
    code, output = demo(tmp_path, "--category", "poetry")
    assert code == EXIT_BAD_INPUT and "category 'poetry' is not a category of suite 'demo'" in output
    code, output = demo(tmp_path, "--category", "facts", "--case", "multiply")
    assert code == EXIT_BAD_INPUT and "no case of suite 'demo' matches both" in output
    if (tmp_path / "s.sqlite").exists():  # the selection is refused before the store is even opened
        with sqlite3.connect(tmp_path / "s.sqlite") as db:
            assert db.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 0


@pytest.mark.slow
def test_dry_run_runs_and_stores_nothing_then_estimates_from_the_store_history(tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    code, output = demo(tmp_path, "--dry-run", "--category", "arithmetic")
    assert code == 0, output
    assert "dry run of suite 'demo': 4 cases: multiply, sqrt-two, power, big-prime" in output
    assert "target sim-agent: 8 trials; estimated cost unknown; 0 earlier trials in the store" in output
    assert not store.exists()  # nothing written, not even an empty store
    code, output = demo(tmp_path, "--out", str(tmp_path / "out"))  # a real run: 13 cases x 2 trials
    assert code == 0, output
    trials = [json.loads(line) for line in (tmp_path / "out" / "trials.jsonl").read_text().splitlines()]
    mean = sum(t["cost_usd"] for t in trials) / len(trials)
    with sqlite3.connect(store) as db:
        runs = db.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
    code, output = demo(tmp_path, "--dry-run", "--trials", "4", "--case", "multiply")
    assert code == 0, output
    assert f"target sim-agent: 4 trials; estimated cost ${4 * mean:.4g}; 26 earlier trials" in output
    assert f"mean ${mean:.4g} per trial" in output and f"estimated total ${4 * mean:.4g}" in output
    with sqlite3.connect(store) as db:
        assert db.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == runs  # the dry run stored no run


def test_dry_run_prices_the_history_tokens_with_the_price_table(tmp_path: Path) -> None:
    from trialscore.results.records import TrialRecord
    from trialscore.runner.store import RunInfo, TrialStore

    store = TrialStore(tmp_path / "s.sqlite")
    store.create_run(RunInfo("old", "s", None, "x"))
    store.insert(
        [
            TrialStore.row(
                "old",
                TrialRecord(
                    case_id=f"c{i}",
                    trial=0,
                    target="gpt",
                    passed=True,
                    verdict="pass",
                    score=1.0,
                    cost_usd=1.0,
                    tokens={"input": 1000 * (i + 1), "output": 100},
                ),
            )
            for i in range(3)
        ]
    )
    store.close()
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        "name: s\n"
        "targets: [{name: gpt, type: openai, base_url: 'http://127.0.0.1:9/v1', model: m,\n"
        "           prices: {input_per_mtok: 2.0, output_per_mtok: 10.0}}]\n"
        "cases: [{id: a, input: x, expected: x, graders: [{type: exact}]}]\n"
        "execution: {trials: {count: 5}}\n"
    )
    result = runner.invoke(app, ["run", str(suite), "--store", str(tmp_path / "s.sqlite"), "--dry-run"])
    assert result.exit_code == 0, result.output
    per_trial = (2000 * 2.0 + 100 * 10.0) / 1e6  # mean tokens (2000 in, 100 out) at today's prices
    assert (
        f"target gpt: 5 trials; estimated cost ${5 * per_trial:.4g} (price table); 3 earlier" in result.output
    )


@pytest.mark.slow
def test_overrides_change_the_run_not_the_suite_and_resume_keeps_them(tmp_path: Path) -> None:
    code, output = demo(
        tmp_path,
        "--limit",
        "3",
        "--seed",
        "99",
        "--timeout",
        "7",
        "--retries",
        "0",
        "--out",
        str(tmp_path / "o"),
    )
    assert code == 0, output
    assert case_ids(tmp_path / "o") == ["multiply", "sqrt-two", "power"]  # the first 3 cases, suite order
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["settings"]["seed"] == 99
    assert summary["settings"]["overrides"] == {"seed": 99, "limit": 3, "timeout_s": 7.0, "retries": 0}
    trials = [json.loads(line) for line in (tmp_path / "o" / "trials.jsonl").read_text().splitlines()]
    again = demo(tmp_path, "--limit", "3", "--seed", "99", "--out", str(tmp_path / "p"))
    other = demo(tmp_path, "--limit", "3", "--seed", "98", "--out", str(tmp_path / "q"))
    assert again[0] == other[0] == 0
    seeds = {
        path: [
            json.loads(line)["seed"] for line in (tmp_path / path / "trials.jsonl").read_text().splitlines()
        ]
        for path in "pq"
    }
    assert [t["seed"] for t in trials] == seeds["p"] != seeds["q"]  # the seed decides the trials' seeds


def test_max_cost_is_the_run_budget(tmp_path: Path) -> None:
    code, output = demo(tmp_path, "--max-cost", "0.0001", "--concurrency", "1", "--out", str(tmp_path / "o"))
    assert code == 0, output
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["cost"]["run_limit_usd"] == 0.0001 and summary["cost"]["skipped_trials"] > 0
    listed = json.loads(
        runner.invoke(app, ["runs", "--store", str(tmp_path / "s.sqlite"), "-f", "json"]).stdout
    )
    assert listed["runs"][-1]["status"] == "cost-limited"


@pytest.mark.slow
def test_bad_overrides_exit_2_before_any_trial(tmp_path: Path) -> None:
    for args, message in [
        (["--max-cost", "0"], "max_cost_usd must be a number > 0"),
        (["--timeout", "-1"], "timeout_s must be a number > 0"),
        (["--limit", "0"], "Invalid value for '--limit'"),
    ]:
        code, output = demo(tmp_path, *args)
        assert code == EXIT_BAD_INPUT and message in output, (args, output)
    assert not (tmp_path / "s.sqlite").exists()
