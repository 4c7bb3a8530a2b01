"""`trialscore score` in process: the default interval on saturated and single-item data."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_runner import CliRunner
from trialscore.cli import app
from trialscore.stats import item_interval, proportion_interval


def _write(path: Path, rows: list[tuple[str, int, bool]]) -> Path:
    path.write_text("".join(json.dumps({"case_id": c, "trial": t, "passed": p}) + "\n" for c, t, p in rows))
    return path


def test_twenty_items_solved_every_time_do_not_print_one_one(tmp_path: Path) -> None:
    path = _write(tmp_path / "t.jsonl", [(f"q{i}", t, True) for i in range(20) for t in range(5)])
    result = CliRunner().invoke(app, ["score", str(path), "--k", "1,5", "--format", "json"])
    assert result.exit_code == 0, result.output
    metrics = {m["label"]: m["interval"] for m in json.loads(result.output)["groups"][0]["metrics"]}
    for label in ("pass@1", "pass@5", "pass^5"):
        interval = metrics[label]
        assert interval["estimate"] == interval["high"] == 1.0 and interval["low"] < 1.0, label
        assert interval["method"] == "wilson-eff"
    # pass@5 of 5 trials is a 0/1 value per item: Wilson's interval of the 20 items.
    assert metrics["pass@5"]["low"] == proportion_interval(20, 20).low
    assert metrics["pass@1"]["low"] == item_interval([[1] * 5] * 20).low
    table = CliRunner().invoke(app, ["score", str(path), "--k", "1,5"], env={"COLUMNS": "120"})
    assert table.exit_code == 0 and "wilson-eff" in table.output


def test_one_item_gets_an_interval_not_an_error(tmp_path: Path) -> None:
    path = _write(tmp_path / "t.jsonl", [("only", t, t != 1) for t in range(4)])
    result = CliRunner().invoke(app, ["score", str(path), "--k", "1", "--format", "json"])
    assert result.exit_code == 0, result.output
    interval = json.loads(result.output)["groups"][0]["metrics"][0]["interval"]
    assert interval["low"] < 0.75 < interval["high"] and interval["n"] == 1


def test_a_group_that_cannot_be_scored_gets_its_numbers_and_a_reason(tmp_path: Path) -> None:
    rows = [
        {"case_id": "add", "trial": 0, "passed": True, "target": "cli", "category": "math"},
        {"case_id": "add", "trial": 1, "passed": True, "target": "cli", "category": "math"},
        {"case_id": "mul", "trial": 0, "passed": True, "target": "cli", "category": "math"},
        {"case_id": "mul", "trial": 1, "passed": None, "errored": True, "target": "cli", "category": "math"},
        {"case_id": "s", "trial": 0, "passed": False, "target": "cli", "category": "[/a]odd"},
        {"case_id": "s", "trial": 1, "passed": True, "target": "cli", "category": "[/a]odd"},
        {"case_id": "e", "trial": 0, "passed": None, "errored": True, "target": "cli", "category": "down"},
    ]
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    args = ["score", str(path), "--by", "target,category", "--k", "1,2", "--metric", "pass@k"]
    result = CliRunner().invoke(app, [*args, "--format", "json"])
    assert result.exit_code == 0, result.output
    groups = {group["label"]: group["metrics"] for group in json.loads(result.output)["groups"]}
    math_group = {m["label"]: m for m in groups["target=cli, category=math"]}
    assert math_group["pass@1"]["estimate"] == 1.0 and math_group["pass@1"]["reason"] is None
    assert math_group["pass@2"]["estimate"] is None and math_group["pass@2"]["interval"] is None
    assert "case 'mul' has 1 (1 errored)" in math_group["pass@2"]["reason"]
    assert "target=cli, category=math" in math_group["pass@2"]["reason"]
    assert all("the 1 trial errored" in m["reason"] for m in groups["target=cli, category=down"])
    # Labels are data, never markup: a category "[/a]odd" prints as written.
    table = CliRunner().invoke(app, args, env={"COLUMNS": "200"})
    assert table.exit_code == 0, table.output
    assert "category=[/a]odd" in table.output and "pass@2: needs 2 scored trials" in table.output


def test_error_messages_are_text_not_markup(tmp_path: Path) -> None:
    path = _write(tmp_path / "t.jsonl", [("a", 0, True)])
    result = CliRunner().invoke(app, ["score", str(path), "--metric", "pass@[/a]x[inspect]"])
    assert result.exit_code == 2
    assert "got 'pass@[/a]x[inspect]'" in result.output and "Traceback" not in result.output


@pytest.mark.slow
def test_plan_reads_a_normal_run_file_with_groups(tmp_path: Path) -> None:
    rows = [
        {"case_id": f"q{i}", "trial": t, "target": target, "passed": (i * 7 + t * 3 + len(target)) % 5 < 3}
        for target in ("a", "bb")
        for i in range(12)
        for t in range(4)
    ]
    path = tmp_path / "trials.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    # Models are never pooled unasked: with no --by, two targets are two plans (and a note says so).
    unasked = CliRunner().invoke(app, ["plan", "--delta", "0.1", "--pilot", str(path), "-f", "json"])
    assert unasked.exit_code == 0, unasked.output
    assert "grouped by target: the inputs hold 2 targets" in unasked.stderr
    assert [plan["label"] for plan in json.loads(unasked.stdout)["plans"]] == ["target=a", "target=bb"]
    result = CliRunner().invoke(
        app, ["plan", "--delta", "0.1", "--pilot", str(path), "--by", "target", "-f", "json"]
    )
    assert result.exit_code == 0, result.output
    plans = json.loads(result.output)["plans"]
    assert [plan["label"] for plan in plans] == ["target=a", "target=bb"]
    assert all(plan["trials"] == 4 and plan["items"] > 0 and "pilot" in plan["source"] for plan in plans)
    paired = CliRunner().invoke(
        app,
        ["plan", "--delta", "0.1", "--pilot", str(path), "--pilot-candidate", str(path), "--by", "target"],
    )
    assert paired.exit_code == 0 and "target=bb" in paired.output
    lonely = CliRunner().invoke(app, ["plan", "--delta", "0.1", "--pass-rate", "0.7", "--by", "target"])
    assert lonely.exit_code == 2 and "give --pilot" in lonely.output
