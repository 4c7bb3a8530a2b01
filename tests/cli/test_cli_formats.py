"""``trialscore formats`` lists the registry; ``--from`` picks a format instead of detection."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli_runner import CliRunner
from trialscore.cli import app
from trialscore.results.formats import FORMATS


def test_formats_lists_the_registry_in_detection_order() -> None:
    result = CliRunner().invoke(app, ["formats", "-f", "json"])
    assert result.exit_code == 0, result.output
    listed = json.loads(result.stdout)["formats"]
    assert [entry["name"] for entry in listed] == list(FORMATS)
    assert all(entry["summary"] and entry["maps"] for entry in listed)


def test_from_overrides_detection_and_an_unknown_name_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "trials.txt"
    rows = [{"case_id": f"c{i % 3}", "trial": i // 3, "passed": i % 2 == 0} for i in range(9)]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    given = CliRunner().invoke(app, ["score", str(path), "--from", "jsonl", "--k", "1", "-f", "json"])
    assert given.exit_code == 0, given.output
    assert json.loads(given.stdout)["groups"][0]["items"] == 3
    wrong = CliRunner().invoke(app, ["score", str(path), "--from", "xlsx"])
    assert wrong.exit_code == 2
    assert wrong.stderr.strip().splitlines() == [
        "error: unknown input format 'xlsx'; the formats are " + ", ".join(FORMATS)
    ]
