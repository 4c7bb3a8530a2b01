"""TrialRecord: fields, consistency rules, JSON round trip and error messages."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import jsonschema
import pytest

from trialscore.compat.scoring import GraderResult as ScoringGraderResult
from trialscore.errors import EvaluationError
from trialscore.results.records import GraderResult, TokenUsage, TrialRecord, verdict_of


def _full_record() -> TrialRecord:
    return TrialRecord(
        run_id="run-7",
        suite="math",
        case_id="add-1",
        trial=3,
        target="model-a",
        category="arithmetic",
        passed=False,
        score=0.55,
        verdict="borderline",
        grader_results=[GraderResult(name="judge", score=0.55, passed=False, weight=2.0)],
        output="The sum is 5.\nCheck: 2 + 3 = 5",
        cost_usd=0.0012,
        latency_s=1.5,
        tokens=TokenUsage(input=100, output=20),
        started_at=datetime(2024, 5, 1, 12, 30, tzinfo=timezone.utc),
        seed=42,
    )


def test_json_line_round_trip_keeps_every_field():
    record = _full_record()
    line = record.to_json_line()
    assert "\n" not in line
    back = TrialRecord.from_json_line(line)
    assert back == record
    data = json.loads(line)
    assert set(data) == set(TrialRecord.model_fields)
    assert data["started_at"] == "2024-05-01T12:30:00Z"
    assert data["tokens"] == {"input": 100, "output": 20}
    assert back.tokens is not None and back.tokens.total == 120
    assert data["output"] == "The sum is 5.\nCheck: 2 + 3 = 5"
    assert TrialRecord(case_id="a", trial=0, passed=True, verdict="pass").output is None


def test_to_dict_validates_against_the_published_json_schema():
    schema = TrialRecord.model_json_schema()
    jsonschema.validate(_full_record().to_dict(), schema)
    assert set(schema["required"]) == {"case_id", "trial", "passed", "verdict"}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"case_id": "a", "trial": 0, "passed": True, "verdict": "maybe"}, schema)


def test_record_is_frozen_and_closed():
    record = _full_record()
    with pytest.raises(Exception, match="frozen"):
        record.trial = 4  # type: ignore[misc]
    with pytest.raises(EvaluationError, match="field 'colour': Extra inputs are not permitted"):
        TrialRecord(case_id="a", trial=0, passed=True, verdict="pass", colour="red")


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"passed": None, "verdict": "fail"}, r"passed=None \(an errored trial\) requires verdict 'error'"),
        ({"passed": True, "verdict": "error"}, r"verdict 'error' requires passed=None; got passed=True"),
        ({"passed": True, "verdict": "borderline"}, r"passed=True requires verdict 'pass'"),
        ({"passed": False, "verdict": "pass"}, r"passed=False requires verdict 'fail' or 'borderline'"),
        ({"passed": None, "verdict": "error", "score": 0.0}, r"verdict 'error' requires score=None"),
        ({"passed": False, "verdict": "fail", "error": "boom"}, r"an error message requires verdict 'error'"),
    ],
)
def test_consistency_rules(fields, message):
    with pytest.raises(EvaluationError, match=message):
        TrialRecord(case_id="a", trial=0, **fields)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"case_id": ""}, r"field 'case_id': String should have at least 1 character"),
        ({"trial": -1}, r"field 'trial': Input should be greater than or equal to 0; got -1"),
        ({"trial": True}, r"field 'trial': Input should be a valid integer; got True"),
        ({"trial": "2"}, r"field 'trial': Input should be a valid integer; got '2'"),
        ({"passed": "yes"}, r"field 'passed': Input should be a valid boolean; got 'yes'"),
        ({"score": 1.01}, r"field 'score': Input should be less than or equal to 1; got 1.01"),
        ({"score": float("nan")}, r"field 'score': Input should be a finite number; got nan"),
        ({"cost_usd": -0.5}, r"field 'cost_usd': Input should be greater than or equal to 0; got -0.5"),
        ({"latency_s": float("inf")}, r"field 'latency_s': Input should be a finite number"),
        ({"verdict": "maybe"}, r"field 'verdict': Input should be 'pass', 'fail', 'borderline' or 'error'"),
        ({"output": 42}, r"field 'output': Input should be a valid string; got 42$"),
        (
            {"tokens": {"input": -1, "output": 0}},
            r"field 'tokens': TokenUsage field 'input': Input should be greater than or equal to 0; got -1$",
        ),
        (
            {"grader_results": [{"name": ""}]},
            r"field 'grader_results.0': GraderResult field 'name': String should have",
        ),
    ],
)
def test_bad_fields_name_field_value_and_rule(fields, message):
    base = {"case_id": "a", "trial": 0, "passed": True, "verdict": "pass"}
    with pytest.raises(EvaluationError, match=message):
        TrialRecord(**(base | fields))


def test_from_json_line_prefixes_location_and_reports_missing_fields():
    with pytest.raises(
        EvaluationError, match=r"^runs.jsonl line 4: TrialRecord field 'verdict': Field required$"
    ):
        TrialRecord.from_json_line('{"case_id": "a", "trial": 0, "passed": true}', where="runs.jsonl line 4")
    with pytest.raises(EvaluationError, match=r"^x line 1: not valid JSON: Expecting"):
        TrialRecord.from_json_line('{"case_id": ', where="x line 1")
    with pytest.raises(EvaluationError, match=r"must be a JSON object; got \[1, 2\]"):
        TrialRecord.from_json_line("[1, 2]")


def test_errored_record_and_verdict_of():
    record = TrialRecord(case_id="a", trial=0, passed=None, verdict="error", error="timeout")
    assert record.errored
    assert not _full_record().errored
    assert [verdict_of(p) for p in (True, False, None)] == ["pass", "fail", "error"]
    for passed in (True, False, None):
        assert TrialRecord(case_id="a", trial=0, passed=passed, verdict=verdict_of(passed)).passed is passed


def test_grader_results_use_the_one_scoring_grader_result():
    # One class serves seed 000's scoring and the trial record's JSON schema.
    assert GraderResult is ScoringGraderResult
    entry = TrialRecord.model_json_schema()["$defs"]["GraderResult"]
    # seed 000's fields, the optional judge calls of an llm_judge grader and a grader's own figures
    # (both absent from other entries)
    assert set(entry["properties"]) == {"name", "score", "passed", "weight", "reason", "calls", "details"}
    assert set(entry["required"]) == {"name", "score", "passed"}
    assert (entry["properties"]["score"]["minimum"], entry["properties"]["score"]["maximum"]) == (0.0, 1.0)
    assert entry["properties"]["weight"]["minimum"] == 0.0
    grade = GraderResult(name="judge", score=0.25, passed=False, weight=2.0, reason="partial")
    record = TrialRecord(case_id="c", trial=0, passed=False, verdict="fail", grader_results=[grade])
    data = json.loads(record.to_json_line())
    assert data["grader_results"] == [
        {"name": "judge", "score": 0.25, "passed": False, "weight": 2.0, "reason": "partial"}
    ]
    jsonschema.validate(data, TrialRecord.model_json_schema())
    assert TrialRecord.from_json_line(record.to_json_line()).grader_results == (grade,)
    with pytest.raises(
        EvaluationError, match=r"field 'grader_results.0': GraderResult field 'score': Field required"
    ):
        TrialRecord(case_id="c", trial=0, passed=True, verdict="pass", grader_results=[{"name": "a"}])


def test_judge_calls_validate_against_the_schema_and_errored_calls_have_no_verdict():
    from trialscore.results.records import JudgeGrade

    calls = (
        JudgeGrade(judge="gpt", repeat=0, score=0.8, passed=True, reason='{"score": 8}'),
        JudgeGrade(judge="gpt", repeat=1, error="HTTP 500 (gave up after 3 attempts)"),
    )
    grade = GraderResult(name="llm_judge", score=0.8, passed=True, calls=calls)
    record = TrialRecord(case_id="c", trial=0, passed=True, verdict="pass", grader_results=[grade])
    data = json.loads(record.to_json_line())
    jsonschema.validate(data, TrialRecord.model_json_schema())
    assert data["grader_results"][0]["calls"][1] == {
        "judge": "gpt",
        "repeat": 1,
        "score": None,
        "passed": None,
        "reason": None,
        "error": "HTTP 500 (gave up after 3 attempts)",
    }
    assert TrialRecord.from_json_line(record.to_json_line()) == record
    with pytest.raises(EvaluationError, match="an error message belongs to an errored call"):
        JudgeGrade(judge="gpt", repeat=0, score=1.0, passed=True, error="x")
    with pytest.raises(EvaluationError, match="JudgeGrade field 'repeat'"):
        JudgeGrade(judge="gpt", repeat=-1, score=1.0, passed=True)


def test_trajectory_fields_round_trip_and_older_records_read_as_before():
    record = TrialRecord(
        case_id="book-1",
        trial=0,
        passed=True,
        verdict="pass",
        tool_calls=[
            {"name": "get_weather", "arguments": '{"city": "Paris"}', "result": "sunny"},
            {"name": "book", "arguments": {"city": "Paris", "nights": 2}},
        ],
        steps=3,
        tokens=1520,
        cost_usd=0.0042,
    )
    data = json.loads(record.to_json_line())
    assert data["tool_calls"] == [
        {"name": "get_weather", "arguments": {"city": "Paris"}, "result": "sunny"},
        {"name": "book", "arguments": {"city": "Paris", "nights": 2}, "result": None},
    ]
    assert (data["steps"], data["tokens"]) == (3, 1520)
    jsonschema.validate(data, TrialRecord.model_json_schema())
    assert TrialRecord.from_json_line(record.to_json_line()) == record
    # A line written before the trajectory fields existed reads with them unknown.
    old = {key: value for key, value in json.loads(_full_record().to_json_line()).items()}
    for name in ("tool_calls", "steps"):
        old.pop(name)
    back = TrialRecord.from_dict(old)
    assert (back.tool_calls, back.steps, back.tokens) == (None, None, TokenUsage(input=100, output=20))
    with pytest.raises(EvaluationError, match=r"field 'tool_calls.0': ToolCall field 'name'"):
        TrialRecord(case_id="c", trial=0, passed=True, verdict="pass", tool_calls=[{"arguments": {}}])
    with pytest.raises(EvaluationError, match=r"tokens must be >= 0; got tokens=-3"):
        TrialRecord(case_id="c", trial=0, passed=True, verdict="pass", tokens=-3)


def test_grader_details_are_kept_and_left_out_when_absent():
    plain = GraderResult(name="exact", score=1.0, passed=True)
    assert "details" not in json.loads(plain.model_dump_json())
    assert plain.to_dict(camel=True) == {
        "graderName": "exact", "score": 1.0, "passed": True, "weight": 1.0, "reason": None,
    }  # fmt: skip
    graded = GraderResult(name="calls", score=0.8, passed=False, details={"precision": 1.0, "recall": 2 / 3})
    record = TrialRecord(case_id="c", trial=0, passed=False, verdict="fail", grader_results=[graded])
    back = TrialRecord.from_json_line(record.to_json_line())
    assert back.grader_results[0].details == {"precision": 1.0, "recall": 2 / 3}
    assert hash(back.grader_results[0]) == hash(graded)
    with pytest.raises(EvaluationError, match=r"GraderResult field 'details.f1'"):
        GraderResult(name="calls", score=0.8, passed=False, details={"f1": "high"})
