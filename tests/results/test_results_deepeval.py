"""deepeval test runs (made by the real deepeval: fixtures/deepeval/make_deepeval_fixtures.py)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from _readers import by_item, pass1, score_json

from tests.cli_runner import CliRunner
from trialscore.cli import app
from trialscore.results.formats import FORMATS, detect_format
from trialscore.results.readers import read_counts

runner = CliRunner()

FIXTURES = Path(__file__).parent / "fixtures"
RUNS = FIXTURES / "deepeval" / "runs"
REPEAT = FIXTURES / "deepeval" / "repeat" / "latest_run_full.json"
FILES = sorted(RUNS.glob("test_run_*.json"))


def test_folder_of_runs_counts_per_item_and_model() -> None:
    counts = read_counts([RUNS], by=("target",))
    assert by_item(counts) == {
        ("toy-a", "capital"): (3, 2, 0),  # flaky
        ("toy-a", "arithmetic"): (2, 2, 1),  # the metric raised in the second run: errored, not failed
        ("toy-a", "riddle"): (3, 0, 0),  # always fails
        ("toy-b", "capital"): (2, 1, 0),
        ("toy-b", "arithmetic"): (2, 2, 0),
        ("toy-b", "riddle"): (2, 0, 0),
    }
    assert counts.stats.rows_read == 15 and counts.stats.rows_errored == 1


def test_repeat_names_are_trials_of_one_test() -> None:
    counts = read_counts([REPEAT], by=("target",))
    assert by_item(counts) == {
        ("latest_run_full", "test_flaky"): (3, 2, 0),
        ("latest_run_full", "test_always_fails"): (3, 0, 0),
    }


@pytest.mark.slow
def test_score_with_no_flags() -> None:
    assert detect_format(RUNS).NAME == "deepeval"
    assert all(detect_format(path).NAME == "deepeval" for path in [*FILES, REPEAT])
    assert pass1(score_json(str(RUNS), "--by", "target")) == {
        "target=toy-a": pytest.approx((2 / 3 + 1 + 0) / 3),
        "target=toy-b": pytest.approx((1 / 2 + 1 + 0) / 3),
    }
    assert pass1(score_json(str(REPEAT))) == {"all": pytest.approx(1 / 3)}
    report = score_json(str(FILES[1]), "--from", "deepeval")
    assert report["rows"]["rows_read"] == 3 and report["rows"]["rows_errored"] == 1


def test_the_one_metrics_score_is_kept_for_a_threshold() -> None:
    report = score_json(str(FILES[0]), "--threshold", "0.5")
    assert pass1(report) == {"all": pytest.approx(2 / 3)}


def test_compare_two_runs() -> None:
    result = runner.invoke(app, ["compare", str(FILES[0]), str(FILES[1]), "-f", "json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)


def test_a_deepeval_folder_reads_one_copy_of_the_latest_run(tmp_path: Path) -> None:
    folder = tmp_path / ".deepeval"
    folder.mkdir()
    run = json.loads(REPEAT.read_text())
    (folder / ".latest_run_full.json").write_text(json.dumps(run))
    (folder / ".latest_test_run.json").write_text(json.dumps({"testRunData": run}))
    assert detect_format(folder).NAME == "deepeval"
    assert detect_format(folder / ".latest_test_run.json").NAME == "deepeval"
    assert read_counts([folder]).stats.rows_read == 6
    assert read_counts([folder / ".latest_test_run.json"]).stats.rows_read == 6


def test_runs_are_trials_in_file_name_order(tmp_path: Path) -> None:
    # the same second twice: deepeval appends _2, _3, ...; _10 comes after _2
    names = [
        "test_run_20260101_000000.json",
        "test_run_20260101_000000_2.json",
        "test_run_20260101_000000_10.json",
    ]
    for name, source in zip(names, FILES[:3], strict=True):
        shutil.copy(source, tmp_path / name)
    from trialscore.results.formats.deepeval import deepeval_table, run_files

    assert [path.name for path in run_files(tmp_path)] == names
    rows = _rows(deepeval_table(run_files(tmp_path)).columns)
    arithmetic = [(row["trial"], row["passed"]) for row in rows if row["case_id"] == "arithmetic"]
    assert arithmetic == [("0", "true"), ("1", None), ("2", "true")]


def test_malformed_test_case_is_one_line_naming_file_case_and_field(tmp_path: Path) -> None:
    run = json.loads(FILES[0].read_text())
    run["testCases"][1]["success"] = "yes"
    path = tmp_path / "test_run_bad.json"
    path.write_text(json.dumps(run))
    result = runner.invoke(app, ["score", str(path)])
    assert result.exit_code == 2
    message = result.output.strip()
    assert "\n" not in message
    assert f"{path} test case 2: field 'success' must be true, false or null; got 'yes'" in message
    assert read_counts([path], skip_invalid=True).stats.rows_skipped == 1


def test_other_formats_are_not_taken_for_deepeval(tmp_path: Path) -> None:
    samples = {
        "rows.json": '[{"case_id": "a", "trial": 0, "passed": true}]',
        "object.json": '{"testCase": "a", "testCases": 1}',
        "link.json": '{"testRunLink": "https://example.invalid/run"}',
        "trials.jsonl": '{"case_id": "a", "trial": 0, "passed": true}\n',
    }
    for name, text in samples.items():
        (tmp_path / name).write_text(text)
        assert not FORMATS["deepeval"].sniff(tmp_path / name), name
    for fixture in FIXTURES.rglob("*"):
        if "deepeval" not in fixture.parts:
            assert not FORMATS["deepeval"].sniff(fixture), fixture
    order = list(FORMATS)
    for earlier in order[: order.index("deepeval")]:
        for path in (FILES[0], RUNS, REPEAT):
            assert not FORMATS[earlier].sniff(path), (earlier, path)


def _rows(columns):
    """The table's rows as dicts (column name -> text)."""
    return [dict(zip(columns, values, strict=True)) for values in zip(*columns.values(), strict=True)]


def test_each_metric_is_its_own_scorer_as_deepeval_tallies_it() -> None:
    several = FIXTURES / "deepeval" / "several"
    assert (several / "VERSION").read_text() == "deepeval 4.3.1\n"
    counts = read_counts([several], group_targets=True)
    assert counts.by == ("scorer",)
    assert "the inputs hold 3 scorers (Contains Answer, Short Answer, success)" in " ".join(
        counts.stats.notes
    )
    tally: dict[str, list[int]] = {}
    for run in several.glob("test_run_*.json"):
        for metric in json.loads(run.read_text())["metricsScores"]:
            totals = tally.setdefault(metric["metric"], [0, 0, 0])
            for index, field in enumerate(("passes", "fails", "errors")):
                totals[index] += metric[field]
    for group in counts.groups():
        scorer = dict(group.key)["scorer"]
        ours = [int(group.c.sum()), int((group.n - group.c).sum()), group.errored_trials]
        if scorer != "success":
            assert ours == tally[scorer], scorer
    # the grader broke on "arithmetic" in one run: that metric's trial is errored, the other metric's is not
    assert by_item(counts)[("Contains Answer", "arithmetic")] == (2, 2, 1)
    assert by_item(counts)[("Short Answer", "arithmetic")] == (3, 3, 0)
