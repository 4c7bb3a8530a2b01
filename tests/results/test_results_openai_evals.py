"""OpenAI evals logs (made by the real oaieval: fixtures/openai-evals/make_openai_evals_fixtures.py)."""

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
LOGS = FIXTURES / "openai-evals" / "logs"
TOY_A = sorted(LOGS.glob("toy-a-*.jsonl"))
TOY_B = sorted(LOGS.glob("toy-b-*.jsonl"))


def test_folder_of_runs_counts_per_item_and_target() -> None:
    counts = read_counts([LOGS], by=("target", "category"))
    assert by_item(counts) == {
        # capital: flaky; in toy-a's seed-3 run an error event precedes a failed match: errored, not failed
        ("toy-a", "toy-qa.dev.v0", "toy-qa.dev.0"): (2, 1, 1),
        ("toy-a", "toy-qa.dev.v0", "toy-qa.dev.1"): (3, 3, 0),
        ("toy-a", "toy-qa.dev.v0", "toy-qa.dev.2"): (3, 0, 0),  # always fails
        ("toy-b", "toy-qa.dev.v0", "toy-qa.dev.0"): (2, 1, 0),
        ("toy-b", "toy-qa.dev.v0", "toy-qa.dev.1"): (2, 2, 0),
        ("toy-b", "toy-qa.dev.v0", "toy-qa.dev.2"): (2, 0, 0),
    }
    assert counts.stats.rows_read == 15 and counts.stats.rows_errored == 1


def test_score_with_no_flags() -> None:
    assert detect_format(LOGS).NAME == "openai-evals"
    assert all(detect_format(path).NAME == "openai-evals" for path in TOY_A + TOY_B)
    assert pass1(score_json(str(LOGS), "--by", "target")) == {
        "target=toy-a": pytest.approx((1 / 2 + 1 + 0) / 3),
        "target=toy-b": pytest.approx((1 / 2 + 1 + 0) / 3),
    }
    single = score_json(str(TOY_A[1]))
    assert pass1(single) == {"all": pytest.approx(1 / 2)}  # dev.0 errored: 2 graded items
    assert single["rows"]["rows_errored"] == 1
    assert score_json(str(TOY_B[0]), "--from", "openai-evals")["rows"]["rows_read"] == 3


def test_runs_are_trials_in_the_order_they_were_created(tmp_path: Path) -> None:
    # copied under names that sort the other way: the spec's created_at decides the trial index
    for number, path in enumerate(reversed(TOY_A)):
        shutil.copy(path, tmp_path / f"run-{number}.jsonl")
    counts = read_counts([tmp_path], by=("run_id",))
    run_ids = [json.loads(path.read_text().splitlines()[0])["spec"]["run_id"] for path in TOY_A]
    assert {key[0] for key in by_item(counts)} == set(run_ids)
    from trialscore.results.formats.openai_evals import openai_evals_table

    table = _rows(openai_evals_table(sorted(tmp_path.iterdir())).columns)
    trial_of_run = {row["run_id"]: row["trial"] for row in table}
    assert [trial_of_run[run_id] for run_id in run_ids] == ["0", "1", "2"]


def test_compare_two_completion_functions() -> None:
    result = runner.invoke(app, ["compare", str(TOY_A[0]), str(TOY_B[0]), "-f", "json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)


def test_a_log_without_match_events_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "graded.jsonl"
    spec = json.loads(TOY_B[0].read_text().splitlines()[0])
    event = {"run_id": "r", "event_id": 0, "sample_id": "x.dev.0", "type": "metrics", "data": {"score": 1}}
    path.write_text(json.dumps(spec) + "\n" + json.dumps(event) + "\n")
    with pytest.raises(EvaluationError, match=r"graded\.jsonl: the log has no 'match' events"):
        read_counts([path])


def test_malformed_event_is_one_line_naming_file_line_and_field(tmp_path: Path) -> None:
    lines = TOY_A[0].read_text().splitlines()
    number, event = next((n, json.loads(line)) for n, line in enumerate(lines) if '"type": "match"' in line)
    event["data"]["correct"] = "yes"
    lines[number] = json.dumps(event)
    path = tmp_path / "run.jsonl"
    path.write_text("\n".join(lines) + "\n")
    result = runner.invoke(app, ["score", str(path)])
    assert result.exit_code == 2
    message = result.output.strip()
    assert "\n" not in message
    assert (
        f"{path} line {number + 1}: field 'data.correct' of a match event must be true or false; got 'yes'"
        in message
    )
    counts = read_counts([path], skip_invalid=True)
    assert counts.stats.rows_skipped == 1


def test_a_bad_spec_names_its_field(tmp_path: Path) -> None:
    lines = TOY_A[0].read_text().splitlines()
    spec = json.loads(lines[0])
    spec["spec"]["completion_fns"] = []
    path = tmp_path / "run.jsonl"
    path.write_text("\n".join([json.dumps(spec), *lines[1:]]) + "\n")
    with pytest.raises(EvaluationError, match=r"run\.jsonl line 1: field 'spec\.completion_fns' must list"):
        read_counts([path])


def test_other_formats_are_not_taken_for_evals_logs(tmp_path: Path) -> None:
    samples = {
        "trials.jsonl": '{"case_id": "a", "trial": 0, "passed": true}\n',
        "spec.jsonl": '{"spec": {"name": "x"}, "case_id": "a", "trial": 0, "passed": true}\n',
        "events.jsonl": '{"sample_id": "a", "type": "match", "trial": 0, "correct": true}\n',
        "cases.jsonl": '{"eval_id": "a", "verdict": "pass"}\n',
    }
    for name, text in samples.items():
        (tmp_path / name).write_text(text)
        assert detect_format(tmp_path / name).NAME != "openai-evals", name
    for fixture in FIXTURES.rglob("*"):
        if "openai-evals" not in fixture.parts:
            assert not FORMATS["openai-evals"].sniff(fixture), fixture
    order = list(FORMATS)
    for earlier in order[: order.index("openai-evals")]:
        assert not FORMATS[earlier].sniff(TOY_A[0]) and not FORMATS[earlier].sniff(LOGS), earlier


def _rows(columns):
    """The table's rows as dicts (column name -> text)."""
    return [dict(zip(columns, values, strict=True)) for values in zip(*columns.values(), strict=True)]
