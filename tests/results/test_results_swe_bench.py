"""SWE-bench run reports (fixtures made by fixtures/swe-bench/make_fixtures.py with the harness's code)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from _readers import by_item, pass1, score_json

from tests.cli_runner import CliRunner
from trialscore.cli import app
from trialscore.errors import EvaluationError
from trialscore.results.formats import FORMATS, detect_format
from trialscore.results.readers import read_counts

runner = CliRunner()

FIXTURES = Path(__file__).parent / "fixtures"
REPORTS = FIXTURES / "swe-bench" / "reports"
GPT = sorted(REPORTS.glob("openai__gpt-4o.*.json"))
CLAUDE = sorted(REPORTS.glob("claude-3-5-sonnet.*.json"))


def test_counts_per_item_and_target_from_the_folder() -> None:
    counts = read_counts([REPORTS], by=("target",))
    gpt, claude = "openai__gpt-4o", "claude-3-5-sonnet"
    assert by_item(counts) == {
        (gpt, "astropy__astropy-12907"): (3, 2, 0),  # flaky
        (gpt, "django__django-11099"): (3, 3, 0),
        (gpt, "sympy__sympy-20590"): (3, 0, 0),  # always fails (unresolved twice, empty patch once)
        (gpt, "psf__requests-2317"): (2, 2, 1),  # error_ids: the harness could not evaluate it
        (gpt, "pytest-dev__pytest-5227"): (2, 0, 1),  # infra_failure_ids: the Docker daemon was gone
        (claude, "astropy__astropy-12907"): (3, 3, 0),
        (claude, "django__django-11099"): (3, 3, 0),
        (claude, "sympy__sympy-20590"): (3, 0, 0),
        (claude, "psf__requests-2317"): (3, 2, 0),
        (claude, "pytest-dev__pytest-5227"): (3, 3, 0),
    }
    # matplotlib__matplotlib-23314 had no prediction in any run: not a trial, but said so
    assert counts.stats.rows_read == 30 and counts.stats.rows_errored == 2
    assert counts.stats.notes == (
        f"{REPORTS}: 6 incomplete_ids entries in 6 reports (instances with no prediction) are not trials",
    )


def test_run_and_category_groups() -> None:
    counts = read_counts(GPT, by=("run", "category"))
    keys = by_item(counts)
    assert {key[0] for key in keys} == {"seed-0", "seed-1", "seed-2"}
    assert keys[("seed-1", "pytest-dev/pytest", "pytest-dev__pytest-5227")] == (0, 0, 1)
    assert keys[("seed-0", "psf/requests", "psf__requests-2317")] == (0, 0, 1)


@pytest.mark.slow
def test_score_with_no_flags_files_and_folder() -> None:
    assert detect_format(REPORTS).NAME == "swe-bench"
    assert detect_format(GPT[0]).NAME == "swe-bench"
    result = runner.invoke(app, ["score", str(REPORTS), "--by", "target", "-f", "json"])
    assert result.exit_code == 0, result.output
    assert "note: " in result.stderr and "are not trials" in result.stderr
    assert pass1(json.loads(result.stdout)) == {
        "target=openai__gpt-4o": pytest.approx((2 / 3 + 1 + 0 + 1 + 0) / 5),
        "target=claude-3-5-sonnet": pytest.approx((1 + 1 + 0 + 2 / 3 + 1) / 5),
    }
    # the three reports given one by one: each is one trial, pooled per instance
    assert pass1(score_json(*map(str, GPT))) == {"all": pytest.approx((2 / 3 + 1 + 0 + 1 + 0) / 5)}
    assert score_json(str(CLAUDE[0]), "--from", "swe-bench")["rows"]["rows_read"] == 5


def test_compare_two_models() -> None:
    result = runner.invoke(app, ["compare", str(CLAUDE[0]), str(GPT[0]), "-f", "json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["comparisons"], result.stdout


def test_malformed_report_is_one_line(tmp_path: Path) -> None:
    data = json.loads(GPT[0].read_text(encoding="utf-8"))
    data["resolved_ids"] = "django__django-11099"
    path = tmp_path / "gpt-4o.run-1.json"
    path.write_text(json.dumps(data, indent=4), encoding="utf-8")
    result = runner.invoke(app, ["score", str(path)])
    assert result.exit_code == 2
    message = result.output.strip()
    assert "\n" not in message
    expected = f"{path}: field 'resolved_ids' must be a list of instance ids; got 'django__django-11099'"
    assert expected in message
    data = json.loads(GPT[0].read_text(encoding="utf-8"))
    data["error_ids"] = ["django__django-11099"]
    data["error_instances"] = 1
    path.write_text(json.dumps(data, indent=4), encoding="utf-8")
    both = r"instance 'django__django-11099' is in both 'error_ids' and 'resolved_ids'"
    with pytest.raises(EvaluationError, match=both):
        read_counts([path])
    data["error_instances"] = 2
    path.write_text(json.dumps(data, indent=4), encoding="utf-8")
    count = r"field 'error_instances' is 2 but 'error_ids' lists 1 instances"
    with pytest.raises(EvaluationError, match=count):
        read_counts([path])


def test_run_id_is_after_the_last_dot(tmp_path: Path) -> None:
    path = tmp_path / "gpt-4.1.nightly.json"
    shutil.copy(GPT[0], path)
    counts = read_counts([path], by=("target", "run"))
    assert {key[:2] for key in by_item(counts)} == {("gpt-4.1", "nightly")}


def test_other_formats_are_not_taken_for_swe_bench(tmp_path: Path) -> None:
    samples = {
        "trials.jsonl": '{"case_id": "a", "trial": 0, "passed": true}\n',
        "rows.json": '[{"case_id": "a", "trial": 0, "passed": true}]',
        "summary.json": '{"total_instances": 3, "resolved": 2}',
        "rows.csv": "case_id,trial,passed\na,0,true\n",
    }
    for name, text in samples.items():
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        assert detect_format(path).NAME != "swe-bench", name
    others = [path for path in FIXTURES.rglob("*") if "swe-bench" not in path.parts]
    assert not [path for path in others if FORMATS["swe-bench"].sniff(path)]


def test_a_report_of_another_schema_version_names_the_field_and_the_version(tmp_path: Path) -> None:
    """swebench 5.0.2 (the newest release, which wrote the fixtures) writes schema_version 2; a report
    whose lists moved in a later schema is refused naming the field and the versions read."""
    data = json.loads(GPT[0].read_text(encoding="utf-8"))
    assert data["schema_version"] == 2
    data["schema_version"] = 3
    data["outcomes"] = {"resolved": data.pop("resolved_ids")}
    path = tmp_path / "gpt-4o.run-1.json"
    path.write_text(json.dumps(data, indent=4), encoding="utf-8")
    result = runner.invoke(app, ["score", str(path)])
    assert result.exit_code == 2
    message = " ".join(result.output.split())
    assert f"{path}: field 'resolved_ids' must be a list of instance ids; got None" in message
    assert (
        "the report has schema_version 3; trialscore reads SWE-bench run reports of schema_version 2"
        in message
    )


def test_ambiguous_failures_stay_failures_as_swe_bench_counts_them() -> None:
    """make_run_report (swebench 5.0.2) lists an ambiguous failure besides unresolved_ids, "purely
    additive": it is the model's failure; only infra_failure_ids (the environment broke) is errored."""
    data = json.loads(GPT[1].read_text(encoding="utf-8"))
    assert "ambiguous_failure_ids" in data and data["infra_failure_ids"]
    counts = read_counts([GPT[1]])
    assert counts.stats.rows_errored == len(set(data["infra_failure_ids"]) | set(data["error_ids"]))
