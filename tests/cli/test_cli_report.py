"""The report command and ``run --report`` of the ``trialscore`` app (in process)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.cli_runner import CliRunner
from tests.report.conftest import write_trials
from trialscore.cli import app
from trialscore.cli._app import EXIT_BAD_INPUT, EXIT_CANT_CREATE

runner = CliRunner()


@pytest.mark.slow
def test_run_report_writes_report_html_beside_the_results(tmp_path: Path) -> None:
    out = tmp_path / "out"
    args = [
        "run",
        "--demo",
        "--store",
        str(tmp_path / "s.sqlite"),
        "--out",
        str(out),
        "--no-progress",
        "--report",
        str(out / "report.html"),
    ]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    html = (out / "report.html").read_text(encoding="utf-8")
    assert f"report: {out / 'report.html'}" in result.output
    assert html.count('<tr data-s="') == 13 and "sim-agent" in html


@pytest.mark.slow
def test_run_report_that_cannot_be_written_is_a_warning(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("a file, not a folder")
    page = tmp_path / "file" / "report.html"
    store, out = tmp_path / "s.sqlite", tmp_path / "out"
    args = ["run", "--demo", "--store", str(store), "--out", str(out), "--no-progress", "--report", str(page)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output  # the run stands
    assert (
        f"warning: {str(page)!r}: cannot write the report: Not a directory; the run is stored"
        in result.output
    )
    assert (out / "trials.jsonl").is_file() and f"report: {page}" not in result.output
    run_id = json.loads((out / "summary.json").read_text())["run_id"]
    assert f"`trialscore report {run_id} --store {store} --out FILE` writes its report" in result.output
    written = runner.invoke(app, ["report", run_id, "--store", str(store), "--out", str(tmp_path / "r.html")])
    assert written.exit_code == 0, written.output
    assert (tmp_path / "r.html").read_text(encoding="utf-8").count('<tr data-s="') == 13


def _asked(html: str) -> dict[str, list[str | None]]:
    """Case id -> [input, expected] as the page embeds them for the drawer."""
    data = json.loads(
        re.search(r'<script type="application/json" id="trial-data">(.*?)</script>', html, re.S)[1]
    )
    cases = re.findall(r'<button class="case">([^<]+)</button>', html)
    return {
        case: entry for case, entry in zip(cases, data["cases"]["asked"], strict=True) if entry is not None
    }


@pytest.mark.slow
def test_the_drawer_has_each_case_input_and_expected_from_a_folder_or_the_store(tmp_path: Path) -> None:
    out, store = tmp_path / "out", str(tmp_path / "s.sqlite")
    assert (
        runner.invoke(app, ["run", "--demo", "--store", store, "--out", str(out), "--no-progress"]).exit_code
        == 0
    )
    cases = [json.loads(line) for line in (out / "cases.jsonl").read_text().splitlines()]
    assert {
        "eval_id": "multiply",
        "input": "What is 17 * 23? Answer with the number.",
        "expected": 391,
    }.items() <= (next(case for case in cases if case["eval_id"] == "multiply").items())
    for source in (str(out), "latest"):  # the run folder, and the run as the store keeps it
        page = tmp_path / "r.html"
        result = runner.invoke(app, ["report", source, "--store", store, "--out", str(page)])
        assert result.exit_code == 0, result.output
        asked = _asked(page.read_text(encoding="utf-8"))
        assert asked["multiply"] == ["What is 17 * 23? Answer with the number.", "391"], source
        assert asked["person-json"][0] == "Return Ada Lovelace as JSON with name and birth year."
        assert asked["person-json"][1] is None and len(asked) == 13


def test_report_of_runs_with_baseline_dates_and_category(tmp_path: Path) -> None:
    base = write_trials(tmp_path / "base.jsonl", 20, 4, seed=1)
    now = write_trials(tmp_path / "now.jsonl", 20, 4, seed=2, shift=-0.2)
    out = tmp_path / "r.html"
    args = ["report", str(base), str(now), "--baseline", str(base), "--by", "category", "--out", str(out)]
    result = runner.invoke(app, [*args, "--dates", "2025-01-06,2025-01-13"])
    assert result.exit_code == 0, result.output
    html = out.read_text(encoding="utf-8")
    assert "Headline per category" in html and "category: cat-0" in html
    assert "Paired verdict per target" in html and "Paired verdict per category" in html
    assert (
        '<th scope="col"><time datetime="2025-01-06">2025-01-06</time></th>'
        '<th scope="col"><time datetime="2025-01-13">2025-01-13</time></th>'
    ) in html


def test_report_reads_any_format_score_reads(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text("item,trial,ok\nq1,0,1\nq1,1,0\nq2,0,1\nq2,1,1\n", encoding="utf-8")
    out = tmp_path / "r.html"
    result = runner.invoke(
        app, ["report", str(path), "--item-col", "item", "--pass-col", "ok", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert out.read_text(encoding="utf-8").count('<tr data-s="') == 2


def test_bad_input_is_one_line_and_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "t.jsonl"
    bad.write_text('{"case_id": "[red]x", "trial": 0, "passed": true, "verdict": "fail"}\n', encoding="utf-8")
    result = runner.invoke(app, ["report", str(bad), "--out", str(tmp_path / "r.html")])
    assert result.exit_code == EXIT_BAD_INPUT
    assert result.output.startswith("error: ") and "t.jsonl line 1" in result.output
    assert "Traceback" not in result.output and not (tmp_path / "r.html").exists()
    result = runner.invoke(
        app, ["report", str(bad), "--dates", "yesterday", "--out", str(tmp_path / "r.html")]
    )
    assert result.exit_code == EXIT_BAD_INPUT and "--dates" in result.output
    good = write_trials(tmp_path / "g.jsonl", 3, 2, seed=1)
    result = runner.invoke(app, ["report", str(good), "--out", str(tmp_path / "missing" / "r.html")])
    assert result.exit_code == EXIT_CANT_CREATE and "cannot write the report" in result.output
