"""``trialscore run`` conveniences: --case and --category select cases; --dry-run runs nothing."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from typer.testing import CliRunner

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


def test_a_selection_of_nothing_is_bad_input_and_stores_no_run(tmp_path: Path) -> None:
    code, output = demo(tmp_path, "--case", "nope-*")
    assert code == EXIT_BAD_INPUT
    assert "case pattern 'nope-*' matches no case id of suite 'demo' (13 cases: multiply, sqrt-two" in output
    code, output = demo(tmp_path, "--category", "poetry")
    assert code == EXIT_BAD_INPUT and "category 'poetry' is not a category of suite 'demo'" in output
    code, output = demo(tmp_path, "--category", "facts", "--case", "multiply")
    assert code == EXIT_BAD_INPUT and "no case of suite 'demo' matches both" in output
    with sqlite3.connect(tmp_path / "s.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 0
