"""Suite files: a valid suite loads with its settings; each malformed suite names file, line, field, rule."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

from trialscore.errors import EvaluationError
from trialscore.runner.suite import Suite, load_suite

VALID = """\
name: arithmetic
targets:
  - {name: calc, type: command, argv: [bc, -q]}
  - name: gpt
    type: openai
    base_url: http://127.0.0.1:9/v1
    model: m
    prices: {input_per_mtok: 1, output_per_mtok: 2}
graders:
  - {type: exact}
cases:
  - {id: add, input: "2+2", expected: "4", category: sums}
  - id: mul
    prompt: "3*3"
    expected: 9
    graders:
      - {type: numeric, tolerance: 0.5, weight: 2}
      - {type: llm_judge, target: gpt, rubric: "Is {{output}} right?", scale: 10}
    execution:
      trials: {count: 7, strategy: mean}
      threshold: 0.7
execution:
  trials: {count: 5, strategy: pass_at_k, cost_limit_usd: 2.5}
  concurrency: 3
  seed: 11
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "suite.yaml"
    path.write_text(textwrap.dedent(text))
    return path


def test_valid_suite_loads_with_defaults_and_per_case_overrides(tmp_path: Path) -> None:
    suite = load_suite(write(tmp_path, VALID))
    add, mul = suite.cases
    assert [t.name for t in suite.targets] == ["calc", "gpt"]
    assert suite.graders_for(add)[0].type == "exact"
    assert [g.type for g in suite.graders_for(mul)] == ["numeric", "llm_judge"]
    plain = suite.settings_for(add)
    assert (plain.trials, plain.strategy, plain.cost_limit_usd, plain.threshold) == (
        5,
        "pass_at_k",
        2.5,
        None,
    )
    over = suite.settings_for(mul)
    assert (over.trials, over.strategy, over.cost_limit_usd, over.threshold) == (7, "mean", 2.5, 0.7)
    assert mul.text == "3*3" and add.text == "2+2"
    assert suite.directory == tmp_path.resolve()
    assert len(suite.digest) == 64


def test_digest_changes_with_the_text(tmp_path: Path) -> None:
    first = load_suite(write(tmp_path, VALID)).digest
    second = load_suite(write(tmp_path, VALID.replace("seed: 11", "seed: 12"))).digest
    assert first != second


def problems(tmp_path: Path, text: str) -> str:
    with pytest.raises(EvaluationError) as info:
        load_suite(write(tmp_path, text))
    return str(info.value)


# Each malformed suite: (what is wrong, replacement applied to VALID, expected line, expected message regex).
MALFORMED = [
    (
        "trial count below 1",
        ("count: 5,", "count: 0,"),
        23,
        r"execution\.trials\.count: Input should be greater than or equal to 1; got 0",
    ),
    (
        "unknown strategy",
        ("strategy: pass_at_k", "strategy: best_of"),
        23,
        r"execution\.trials\.strategy: Input should be 'pass_at_k', 'pass_all', 'mean' or "
        r"'confidence_interval'; got 'best_of'",
    ),
    (
        "misspelled key",
        ("concurrency: 3", "concurency: 3"),
        24,
        r"execution\.concurency: unknown field \(did you mean 'concurrency'\?\); got 3",
    ),
    (
        "misspelled grader key",
        ("{type: exact}", "{type: exact, vlaue: 4}"),
        10,
        r"graders\[0\]\.vlaue: unknown field \(did you mean 'value'\?\); got 4",
    ),
    (
        "unknown key like no field",
        ("seed: 11", "seed: 11\n  colour: blue"),
        26,
        r"execution\.colour: unknown field \(the fields here: trials, cost_limit_usd, concurrency, ",
    ),
    (
        "argv written as a string",
        ("argv: [bc, -q]", "argv: bc -q"),
        3,
        r"targets\[0\]\.argv: must be a list, written \[bc, -q\]; got 'bc -q'",
    ),
    (
        "input that is none of string, mapping, list",
        ('input: "2+2"', "input: 5"),
        12,
        r"cases\[0\]\.input: must be a string, a mapping or a list; got 5$",
    ),
    (
        "unknown target type",
        ("type: command", "type: shell"),
        3,
        r"targets\[0\]\.type: unknown type; expected one of 'command', 'openai', 'python'; got 'shell'",
    ),
    ("missing required field", ("    model: m\n", ""), 4, r"targets\[1\]\.model: Field required"),
    (
        "negative tolerance",
        ("tolerance: 0.5", "tolerance: -0.5"),
        17,
        r"cases\[1\]\.graders\[0\]\.tolerance: Input should be greater than or equal to 0; got -0\.5",
    ),
    (
        "bad regex",
        ("{type: exact}", "{type: regex, pattern: '[a-'}"),
        10,
        r"graders\[0\]\.pattern: not a valid regular expression "
        r"\(unterminated character set at position 0\); got '\[a-'",
    ),
    (
        "judge names no target",
        ("target: gpt", "target: gpt5"),
        18,
        r"cases\[1\]\.graders\[1\]\.target: must name one of the suite's targets \(calc, gpt\); got 'gpt5'",
    ),
    (
        "duplicate case id",
        ("id: mul", "id: add"),
        13,
        r"cases\[1\]\.id: case ids must be unique; got 'add' twice",
    ),
    (
        "duplicate key",
        ("  concurrency: 3\n", "  concurrency: 3\n  concurrency: 4\n"),
        25,
        r"execution\.concurrency: duplicate key \(the first value is used; remove one\)",
    ),
    (
        "mean without threshold",
        ("      threshold: 0.7\n", ""),
        20,
        r"cases\[1\]\.execution\.threshold: strategy 'mean' compares the mean score to threshold, "
        r"which is not set \(case 'mul'\)",
    ),
    (
        "numeric grader, non-number expected",
        ("expected: 9", "expected: nine"),
        15,
        r"cases\[1\]\.expected: a numeric grader needs a number; got 'nine' \(case 'mul'\)",
    ),
    (
        "both input and prompt",
        ('prompt: "3*3"', 'prompt: "3*3"\n    input: "3*3"'),
        13,
        r"cases\[1\]: a case needs exactly one of input or prompt",
    ),
    (
        "threshold above 1",
        ("threshold: 0.7", "threshold: 1.5"),
        21,
        r"cases\[1\]\.execution\.threshold: Input should be less than or equal to 1; got 1\.5",
    ),
    (
        "non-integer seed",
        ("seed: 11", "seed: eleven"),
        25,
        r"execution\.seed: Input should be a valid integer; got 'eleven'",
    ),
]


@pytest.mark.parametrize(("what", "change", "line", "message"), MALFORMED, ids=[m[0] for m in MALFORMED])
def test_malformed_suite_names_file_line_field_and_rule(
    tmp_path: Path, what: str, change: tuple[str, str], line: int, message: str
) -> None:
    old, new = change
    assert old in VALID, what
    text = problems(tmp_path, VALID.replace(old, new, 1))
    path = str(tmp_path / "suite.yaml")
    assert text.startswith(f"{path}: invalid suite (1 problem):"), text
    assert re.search(re.escape(f"{path}:{line}: ") + message, text), text


def test_all_problems_are_reported_at_once(tmp_path: Path) -> None:
    text = problems(
        tmp_path, VALID.replace("count: 5,", "count: 0,").replace("concurrency: 3", "concurrency: x")
    )
    assert "invalid suite (2 problems)" in text
    assert "execution.trials.count" in text and "execution.concurrency" in text


def test_cross_field_rules_are_reported_with_field_errors(tmp_path: Path) -> None:
    # trials.count is invalid, trials.strategy is not: the rule on strategy 'mean' is judged in the same pass
    text = problems(tmp_path, VALID.replace("count: 5, strategy: pass_at_k", "count: 0, strategy: mean"))
    assert "invalid suite (2 problems)" in text, text
    assert "execution.trials.count: Input should be greater than or equal to 1; got 0" in text
    assert (
        "execution.threshold: strategy 'mean' compares the mean score to threshold, which is not set" in text
    )
    # the same in a case's own execution
    text = problems(
        tmp_path,
        VALID.replace("count: 7, strategy: mean}\n      threshold: 0.7", "count: 0, strategy: mean}"),
    )
    assert "invalid suite (2 problems)" in text, text
    assert "cases[1].execution.trials.count" in text and "cases[1].execution.threshold" in text


def test_an_invalid_strategy_holds_back_the_rule_that_reads_it(tmp_path: Path) -> None:
    text = problems(tmp_path, VALID.replace("strategy: pass_at_k", "strategy: best_of"))
    assert "invalid suite (1 problem)" in text and "execution.trials.strategy" in text, text


def test_yaml_syntax_error_names_the_line(tmp_path: Path) -> None:
    text = problems(tmp_path, "name: x\ntargets: [\n  {name: a\n")
    assert re.search(r"suite\.yaml:\d+: not valid YAML: ", text), text


def test_suite_must_be_a_mapping(tmp_path: Path) -> None:
    assert "a suite must be a YAML mapping; got [1, 2]" in problems(tmp_path, "[1, 2]\n")


def test_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(EvaluationError, match=r"nope\.yaml: cannot read the suite file"):
        load_suite(tmp_path / "nope.yaml")


def test_missing_schema_file_and_case_without_graders(tmp_path: Path) -> None:
    text = VALID.replace("graders:\n  - {type: exact}\n", "").replace(
        "{type: numeric, tolerance: 0.5, weight: 2}", "{type: json_schema, schema_file: missing.json}"
    )
    message = problems(tmp_path, text)
    assert re.search(r"suite\.yaml:10: cases\[0\]: a case needs graders", message), message
    assert re.search(
        r"suite\.yaml:15: cases\[1\]\.graders\[0\]\.schema_file: file not found \(relative to the suite\); "
        r"got 'missing\.json'",
        message,
    ), message


def test_zero_weights_and_borderline_above_threshold(tmp_path: Path) -> None:
    text = (
        VALID.replace("weight: 2}", "weight: 0}")
        .replace("scale: 10}", "scale: 10, weight: 0}")
        .replace("threshold: 0.7", "threshold: 0.7\n      borderline: 0.8")
    )
    message = problems(tmp_path, text)
    assert "cases[1]: grader weights must not all be 0" in message
    assert "cases[1].execution.borderline: must be below threshold=0.7; got 0.8 (case 'mul')" in message


def test_invalid_inline_json_schema(tmp_path: Path) -> None:
    text = VALID.replace("{type: exact}", "{type: json_schema, schema: {type: 12}}")
    assert re.search(
        r"suite\.yaml:10: graders\[0\]\.schema: not a valid JSON Schema", problems(tmp_path, text)
    )


def test_from_mapping_validates_without_lines() -> None:
    with pytest.raises(EvaluationError, match=r"<suite>: name: Field required"):
        Suite.from_mapping({"targets": [{"name": "t", "type": "python", "callable": "m:f"}], "cases": []})
