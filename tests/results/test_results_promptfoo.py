"""promptfoo eval output (-o results.json / results.jsonl), read from files the real promptfoo wrote."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from _big_logs import big_promptfoo, promptfoo_truth
from _readers import by_item, reading_peaks

from tests.cli_runner import CliRunner
from trialscore.cli import app
from trialscore.errors import EvaluationError
from trialscore.results.formats import FORMATS, detect_format
from trialscore.results.readers import read_counts

FIXTURES = Path(__file__).parent / "fixtures" / "promptfoo"
runner = CliRunner()

#: Per (target, item): (n graded, c passed, errored) of run1.json (see make_fixtures.sh).
RUN1 = {
    "capital": (3, 3, 0),
    "flaky": (3, 2, 0),
    "always-fails": (3, 0, 0),
    "unstable": (2, 2, 1),
}


def _score(*args: str) -> dict:
    result = runner.invoke(app, ["score", *args, "-f", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _pass_at_1(group: dict) -> float:
    return next(m["estimate"] for m in group["metrics"] if m["label"] == "pass@1")


def test_the_json_document_gives_per_target_items_trials_and_errors():
    path = FIXTURES / "run1.json"
    assert detect_format(path).NAME == "promptfoo"
    counts = read_counts([path], by=["target"])
    expected = {
        (target, item): value for target in ("dummy-a", "file://provider.js") for item, value in RUN1.items()
    }
    assert by_item(counts) == expected
    assert counts.stats.rows_read == 24 and counts.stats.rows_errored == 2
    report = _score(str(path), "--by", "target")
    assert {g["label"]: round(_pass_at_1(g), 4) for g in report["groups"]} == {
        "target=dummy-a": round((1 + 2 / 3 + 0 + 1) / 4, 4),
        "target=file://provider.js": round((1 + 2 / 3 + 0 + 1) / 4, 4),
    }


def test_jsonl_output_of_one_provider_scores_with_no_flags():
    path = FIXTURES / "results.jsonl"
    assert detect_format(path).NAME == "promptfoo"
    assert by_item(read_counts([path], by=["target"])) == {("dummy-a", item): v for item, v in RUN1.items()}
    report = _score(str(path))
    (group,) = report["groups"]
    assert (group["items"], group["trials"], group["errored_trials"], group["flaky_items"]) == (4, 11, 1, 1)
    assert _pass_at_1(group) == pytest.approx((1 + 2 / 3 + 0 + 1) / 4)


def test_from_promptfoo_reads_a_file_of_any_name(tmp_path):
    path = tmp_path / "output.dat"
    shutil.copy(FIXTURES / "results.jsonl", path)
    assert _score(str(path), "--from", "promptfoo")["rows"]["rows_read"] == 12


def test_compare_pairs_the_tests_of_two_runs_by_description():
    result = runner.invoke(
        app,
        ["compare", str(FIXTURES / "run1.json"), str(FIXTURES / "run2.json"), "--by", "target", "-f", "json"],
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)
    counts = read_counts([FIXTURES / "run2.json"], by=["target"])
    assert by_item(counts)[("dummy-a", "flaky")] == (3, 3, 0)


def test_several_prompts_split_the_target_and_tests_without_description_use_vars(tmp_path):
    rows = [
        {
            "testIdx": t,
            "promptIdx": p,
            "provider": {"id": "echo", "label": ""},
            "prompt": {"label": label},
            "testCase": {"vars": {"q": "x"}, "metadata": {"category": "math"}},
            "vars": {"q": "x"},
            "success": p == 0,
            "score": float(p == 0),
            "failureReason": 0 if p == 0 else 1,
        }
        for t in range(2)
        for p, label in enumerate(["A {{q}}", "B {{q}}"])
    ]
    path = tmp_path / "old.json"
    path.write_text(
        json.dumps({"evalId": "e", "results": rows}, indent=2)
    )  # older layout: results is the list
    counts = read_counts([path], by=["target", "category"])
    assert by_item(counts) == {
        ("echo prompt 0", "math", '{"q": "x"}'): (2, 2, 0),
        ("echo prompt 1", "math", '{"q": "x"}'): (2, 0, 0),
    }


def test_other_formats_are_not_taken_for_promptfoo(tmp_path):
    samples = {
        "cases.jsonl": json.dumps({"eval_id": "a", "verdict": "pass"}) + "\n",
        "rows.jsonl": json.dumps({"case_id": "a", "trial": 0, "passed": True}) + "\n",
        "rows.json": json.dumps([{"case_id": "a", "trial": 0, "passed": True}], indent=2),
        "obj.json": json.dumps({"results": [{"case_id": "a"}]}, indent=2),
        "log.json": json.dumps({"version": 2, "status": "success", "eval": {}}, indent=2),
    }
    for name, text in samples.items():
        (tmp_path / name).write_text(text)
        assert not FORMATS["promptfoo"].sniff(tmp_path / name), name
    for other in Path(__file__).parent.rglob("*"):
        if other.is_file() and "promptfoo" not in other.parts:
            assert not FORMATS["promptfoo"].sniff(other), other
    for fixture in FIXTURES.glob("*.json*"):
        earlier = list(FORMATS)[: list(FORMATS).index("promptfoo")]
        assert [name for name in earlier if FORMATS[name].sniff(fixture)] == [], fixture


def test_a_result_breaking_the_schema_is_one_line_naming_file_result_and_field(tmp_path):
    document = json.loads((FIXTURES / "run1.json").read_text())
    document["results"]["results"][4]["success"] = "yes"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(document, indent=2))
    with pytest.raises(EvaluationError) as caught:
        read_counts([path], by=["target"])
    message = str(caught.value)
    assert "\n" not in message
    assert f"{path} result 5" in message and "'success'" in message and "'yes'" in message
    result = runner.invoke(app, ["score", str(path)])
    assert result.exit_code != 0
    assert "result 5" in result.output and "'success'" in result.output


NEW = FIXTURES / "0.123"


def test_the_csv_export_is_read_as_its_json(tmp_path):
    assert (NEW / "VERSION").read_text() == "promptfoo 0.123.1\n"
    path = NEW / "plain.csv"
    assert detect_format(path).NAME == "promptfoo"
    expected = {
        (target, item): value for target in ("dummy-a", "file://provider.js") for item, value in RUN1.items()
    }
    assert by_item(read_counts([path], by=["target"])) == expected
    bad = tmp_path / "bad.csv"
    bad.write_text(path.read_text().replace(",PASS,", ",MAYBE,", 1))
    result = runner.invoke(app, ["score", str(bad)])
    assert result.exit_code == 2
    assert f"{bad} row 2: field 'Status' must be PASS, FAIL or ERROR; got 'MAYBE'" in result.stderr


def test_each_assertion_is_its_own_scorer_as_promptfoo_counts_it():
    from_json = read_counts([NEW / "several.json"], group_targets=True)
    from_csv = read_counts([NEW / "several.csv"], group_targets=True)
    assert from_json.by == from_csv.by == ("target", "scorer")
    assert by_item(from_json) == by_item(from_csv)
    assert "the inputs hold 4 scorers (exact, mentions-paris, short, success)" in " ".join(
        from_json.stats.notes
    )
    document = json.loads((NEW / "several.json").read_text())
    groups = {
        dict(group.key)["target"] + "|" + dict(group.key)["scorer"]: group for group in from_json.groups()
    }
    for prompt in document["results"]["prompts"]:
        recorded = prompt["metrics"]
        success = groups[f"{prompt['provider']}|success"]
        assert (int(success.c.sum()), int(success.n.sum() - success.c.sum()), success.errored_trials) == (
            recorded["testPassCount"],
            recorded["testFailCount"],
            recorded["testErrorCount"],
        )
        for metric, passes in recorded["namedScores"].items():  # every assertion scores 0 or 1
            assert int(groups[f"{prompt['provider']}|{metric}"].c.sum()) == passes
    picked = read_counts([NEW / "several.csv"], by=["target"], scorer="short")
    assert {item for _, item in by_item(picked)} == {"flaky", "unstable"}


# ------------------------------------------------------------- large output, read one result at a time


@pytest.mark.slow
def test_a_grown_document_counts_what_its_results_say(tmp_path):
    """promptfoo 0.123.1's document grown to 3,000 results (tests/results/_big_logs.py): per target,
    scorer and test, the graded, passed and errored trials the results record."""
    path = big_promptfoo(tmp_path / "results.json", 3000, text_chars=200)
    counts = read_counts([path], by=("target", "scorer"))
    assert by_item(counts) == {key: tuple(value) for key, value in promptfoo_truth(3000).items()}
    assert counts.stats.rows_errored == sum(value[2] for value in promptfoo_truth(3000).values()) > 0


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_document_is_read_one_result_at_a_time_not_whole(tmp_path):
    """Memory grows with the number of results, not with the document: a document of 2,000 results with
    32 KB of text each (64 MB: over the 48 MiB a document may be parsed whole) takes about the memory
    of the same results with no text (measured in child processes)."""
    big = big_promptfoo(tmp_path / "big.json", 2000, text_chars=32_000)
    small = big_promptfoo(tmp_path / "small.json", 2000, text_chars=10)
    size = big.stat().st_size / 2**20
    by = ("target", "scorer")
    (rows, peak), (small_rows, small_peak) = reading_peaks(big, small, by=by)
    assert rows == small_rows > 5900 and size > 60
    assert peak - small_peak < size / 4, (peak, small_peak, size)


def test_a_document_whose_results_moved_names_the_field(tmp_path):
    document = json.loads((NEW / "several.json").read_text())
    document["results"]["rows"] = document["results"].pop("results")  # a future promptfoo, say
    path = tmp_path / "moved.json"
    path.write_text(json.dumps(document))
    result = runner.invoke(app, ["score", str(path), "--from", "promptfoo"])
    assert result.exit_code == 2
    assert f"{path}: field 'results.results' is missing" in " ".join(result.output.split())
