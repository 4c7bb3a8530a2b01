"""Graders: each gives a score in [0, 1] and a pass/fail; weights combine them (seed 000)."""

from __future__ import annotations

import asyncio
import json
import sys
import textwrap
from fractions import Fraction
from pathlib import Path

import pytest

from trialscore.results.records import GraderResult
from trialscore.runner.graders import GraderError, build_grader, judge_score
from trialscore.runner.grading import trial_outcome
from trialscore.runner.suite import Suite
from trialscore.runner.targets import TargetError, TargetReply, TrialRequest


def grade(
    spec: dict, output: str, expected: object = None, directory: Path = Path("."), judge=None
) -> GraderResult:
    suite = Suite.from_mapping(
        {
            "name": "g",
            "targets": [{"name": "judge", "type": "python", "callable": "m:f"}],
            "cases": [{"id": "c", "input": "question?", "expected": expected, "graders": [spec]}],
        },
        directory=directory,
    )
    case = suite.cases[0]
    grader = build_grader(suite.graders_for(case)[0], case, suite.directory, judge)
    return asyncio.run(grader(output, TrialRequest(case, 3, 99, case.text))).result


@pytest.mark.parametrize(
    ("spec", "output", "expected", "passed"),
    [
        ({"type": "exact"}, "  Paris\n", "Paris", True),
        ({"type": "exact"}, "paris", "Paris", False),
        ({"type": "exact", "case_sensitive": False}, "paris", "Paris", True),
        ({"type": "exact", "strip": False}, "Paris ", "Paris", False),
        ({"type": "exact", "value": 4}, "4", "ignored", True),
        ({"type": "contains"}, "The capital is Paris.", "Paris", True),
        ({"type": "regex", "pattern": r"^\d{3}-\d{4}$"}, "555-1234", None, True),
        ({"type": "regex", "pattern": r"^\d{3}-\d{4}$"}, "call 555-1234", None, False),
        ({"type": "regex", "pattern": "yes", "ignore_case": True}, "YES", None, True),
        ({"type": "numeric", "tolerance": 0.001}, "x = 3.14159", 3.14, False),
        ({"type": "numeric", "tolerance": 0.01}, "so 3.145", 3.14, True),
        ({"type": "numeric", "relative_tolerance": 0.1}, "1,050", 1000, True),
        ({"type": "numeric"}, "no number here", 1, False),
    ],
)
def test_text_graders(spec: dict, output: str, expected: object, passed: bool) -> None:
    result = grade(spec, output, expected)
    assert result.passed is passed
    assert result.score == (1.0 if passed else 0.0)


def test_contains_list_scores_the_share_found() -> None:
    result = grade(
        {"type": "contains", "value": ["alpha", "beta", "gamma", "delta"]}, "alpha and gamma", None
    )
    assert result.score == 0.5 and result.passed is False


def test_json_schema_grader_inline_and_file(tmp_path: Path) -> None:
    schema = {
        "type": "object",
        "required": ["name"],
        "properties": {"age": {"type": "integer", "minimum": 0}},
    }
    (tmp_path / "person.json").write_text(json.dumps(schema))
    for spec in (
        {"type": "json_schema", "schema": schema},
        {"type": "json_schema", "schema_file": "person.json"},
    ):
        assert grade(spec, '{"name": "Ada", "age": 36}', directory=tmp_path).passed is True
        assert grade(spec, '{"name": "Ada", "age": -1}', directory=tmp_path).passed is False
        assert grade(spec, "not json", directory=tmp_path).passed is False


def test_command_grader_uses_the_exit_status(tmp_path: Path) -> None:
    checker = tmp_path / "check.py"
    checker.write_text(
        textwrap.dedent(
            """
            import json, os, sys
            expected = json.loads(os.environ["TRIALSCORE_EXPECTED"])
            sys.exit(0 if sys.stdin.read().strip() == str(expected) else 1)
            """
        )
    )
    spec = {"type": "command", "argv": [sys.executable, str(checker)]}
    assert grade(spec, "42\n", 42, tmp_path).passed is True
    assert grade(spec, "41", 42, tmp_path).passed is False


def test_command_grader_timeout_is_a_grader_error(tmp_path: Path) -> None:
    spec = {
        "type": "command",
        "argv": [sys.executable, "-c", "import time; time.sleep(30)"],
        "timeout_s": 0.3,
    }
    with pytest.raises(GraderError, match=r"command grader 'command': no exit within timeout_s=0\.3"):
        grade(spec, "x", None, tmp_path)


def test_python_grader_return_shapes(tmp_path: Path) -> None:
    (tmp_path / "checks.py").write_text(
        textwrap.dedent(
            """
            def as_bool(output, case):
                return output == case.expected
            def as_score(output, case):
                return len(output) / 10
            async def as_mapping(output, case):
                return {"score": 0.3, "passed": True}
            def broken(output, case):
                raise RuntimeError("no")
            def out_of_range(output, case):
                return 2.5
            """
        )
    )

    def run(name: str, output: str, **extra: object) -> GraderResult:
        return grade({"type": "python", "callable": f"checks.py:{name}", **extra}, output, "yes", tmp_path)

    assert (run("as_bool", "yes").score, run("as_bool", "no").passed) == (1.0, False)
    assert (run("as_score", "abcd").score, run("as_score", "abcd").passed) == (0.4, False)
    assert run("as_score", "abcd", pass_score=0.4).passed is True
    assert (run("as_mapping", "x").score, run("as_mapping", "x").passed) == (0.3, True)
    with pytest.raises(GraderError, match=r"python grader 'python': raised RuntimeError: no"):
        run("broken", "x")
    with pytest.raises(
        GraderError, match=r"must return a bool, a score in \[0, 1\] or \{score, passed\}; got 2\.5"
    ):
        run("out_of_range", "x")


def test_llm_judge_fills_the_rubric_and_adds_its_cost() -> None:
    seen: list[tuple[str, TrialRequest]] = []

    async def judge(name: str, request: TrialRequest) -> TargetReply:
        seen.append((name, request))
        return TargetReply('{"score": 7}', cost_usd=0.002)

    spec = {
        "type": "llm_judge",
        "target": "judge",
        "rubric": "Q={{input}} A={{output}} E={{expected}}",
        "scale": 10,
    }
    suite = Suite.from_mapping(
        {
            "name": "g",
            "targets": [{"name": "judge", "type": "python", "callable": "m:f"}],
            "cases": [{"id": "c", "input": "question?", "expected": "answer", "graders": [spec]}],
        }
    )
    case = suite.cases[0]
    grader = build_grader(suite.graders_for(case)[0], case, suite.directory, judge)
    result = asyncio.run(grader("my answer", TrialRequest(case, 3, 99, case.text)))
    assert (result.result.score, result.result.passed, result.cost_usd) == (0.7, True, 0.002)
    name, request = seen[0]
    assert name == "judge" and request.prompt == "Q=question? A=my answer E=answer"
    assert request.case.text == request.prompt and request.case.id == "c"
    assert (request.trial, request.seed) == (3, 99)


def test_llm_judge_target_failure_is_a_grader_error() -> None:
    async def judge(name: str, request: TrialRequest) -> TargetReply:
        raise TargetError("HTTP 500 (gave up after 3 attempts)")

    spec = {"type": "llm_judge", "target": "judge", "rubric": "r"}
    with pytest.raises(
        GraderError,
        match=r"llm_judge 'llm_judge': no judge call answered \(1 call: judge repeat 0: HTTP 500 \(gave up",
    ):
        grade(spec, "x", judge=judge)


@pytest.mark.parametrize(
    ("reply", "scale", "score"),
    [("Score: 4/5", 5, 0.8), ("SCORE = 9", 10, 0.9), ("I'd give it 3.", 4, 0.75), ('{"score": 1}', 1, 1.0)],
)
def test_judge_score_parsing(reply: str, scale: float, score: float) -> None:
    assert judge_score(reply, scale) == pytest.approx(score, abs=1e-15)


def test_judge_reply_without_a_number() -> None:
    with pytest.raises(GraderError, match=r"judge reply carries no score; reply 'looks good'"):
        judge_score("looks good", 1)


def test_weighted_combination_is_exact() -> None:
    results = [
        GraderResult(name="a", score=1.0, passed=True, weight=3.0),
        GraderResult(name="b", score=0.25, passed=False, weight=1.0),
        GraderResult(name="c", score=0.5, passed=True, weight=0.0),
    ]
    exact = (Fraction(3) * 1 + Fraction(1, 4)) / 4
    outcome = trial_outcome(results)
    assert Fraction(outcome.score) == exact
    assert outcome.verdict == "fail"  # grader b failed and no threshold: the graders' verdicts decide
    assert trial_outcome(results, threshold=0.8).verdict == "pass"
    assert trial_outcome(results, threshold=0.9, borderline=0.8).verdict == "borderline"
    assert trial_outcome(results, threshold=0.9, borderline=0.85).verdict == "fail"
