"""The tool_calls grader: matchers, order modes, optimal pairing, checks, and suites that use it."""

from __future__ import annotations

import asyncio
import itertools
import json
import re
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trialscore.errors import EvaluationError
from trialscore.results.trajectory import ToolCall, Trajectory
from trialscore.runner.graders import GraderError, build_grader
from trialscore.runner.graders.tool_calls import (
    ExpectedCall,
    ToolCallGrade,
    ToolCallsGrader,
    ToolCallsGraderSpec,
    call_matches,
    matched_pairs,
    score_calls,
)
from trialscore.runner.suite import Suite, load_suite
from trialscore.runner.targets import TrialRequest


def spec(**fields: Any) -> ToolCallsGraderSpec:
    return ToolCallsGraderSpec(type="tool_calls", **fields)


def calls(*pairs: tuple[str, dict[str, Any]]) -> tuple[ToolCall, ...]:
    return tuple(ToolCall(name=name, arguments=arguments) for name, arguments in pairs)


def grade(
    grader_spec: ToolCallsGraderSpec, made: tuple[ToolCall, ...], steps: int | None = None
) -> ToolCallGrade:
    return ToolCallsGrader(grader_spec).grade_trajectory(Trajectory(tool_calls=made, steps=steps))


WEATHER = {"name": "get_weather", "arguments": {"city": "Paris"}}
BOOK = {"name": "book", "arguments": {"city": "Paris", "nights": 2}, "match": "subset"}


# --- matchers -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expected", "arguments", "matches"),
    [
        ({"arguments": {"city": "Paris"}}, {"city": "Paris"}, True),
        ({"arguments": {"city": "Paris"}}, {"city": "Paris", "units": "C"}, False),  # exact: same keys
        ({"arguments": {"city": "Paris"}, "match": "subset"}, {"city": "Paris", "units": "C"}, True),
        ({"arguments": {"city": "Paris"}, "match": "subset"}, {"units": "C"}, False),
        ({"arguments": {"nights": 2}}, {"nights": 2.0}, True),  # numbers compare as numbers
        ({"arguments": {"nights": 2}}, {"nights": "2"}, False),  # a string is not a number
        ({"arguments": {"flag": True}}, {"flag": 1}, False),  # nor is a bool
        ({"arguments": {"price": 10.0}, "tolerance": 0.5}, {"price": 10.4}, True),
        ({"arguments": {"price": 10.0}, "tolerance": 0.5}, {"price": 10.6}, False),
        ({"arguments": {"price": 200.0}, "relative_tolerance": 0.01}, {"price": 201.5}, True),
        ({"arguments": {"price": 200.0}, "relative_tolerance": 0.01}, {"price": 202.5}, False),
        ({"arguments": {"route": {"km": [1.0, 2.0]}}, "tolerance": 0.1}, {"route": {"km": [1.05, 2]}}, True),
        ({"patterns": {"date": r"\d{4}-\d{2}-\d{2}"}}, {"date": "2026-11-25"}, True),
        ({"patterns": {"date": r"\d{4}-\d{2}-\d{2}"}}, {"date": "on 2026-11-25"}, False),  # whole value
        ({"patterns": {"date": r"\d+"}}, {"date": 2026}, False),  # only strings
        (
            {"schema": {"type": "object", "required": ["q"], "properties": {"q": {"type": "string"}}}},
            {"q": "weather"},
            True,
        ),
        (
            {"schema": {"type": "object", "required": ["q"], "properties": {"q": {"type": "string"}}}},
            {"q": 3},
            False,
        ),
    ],
)
def test_each_argument_matcher(expected: dict[str, Any], arguments: dict[str, Any], matches: bool) -> None:
    assert (
        call_matches(ExpectedCall(name="tool", **expected), ToolCall(name="tool", arguments=arguments))
        is matches
    )


def test_names_must_be_equal_and_a_bare_name_takes_any_arguments() -> None:
    assert not call_matches(ExpectedCall(name="book"), ToolCall(name="Book"))
    assert call_matches(ExpectedCall(name="book"), ToolCall(name="book", arguments={"nights": 1}))
    assert not call_matches(
        ExpectedCall(name="book", arguments={}), ToolCall(name="book", arguments={"nights": 1})
    )
    assert call_matches(ExpectedCall(name="book", arguments={}), ToolCall(name="book"))


# --- pairing, precision, recall -------------------------------------------------------------------


def test_repeated_names_are_paired_optimally_not_greedily() -> None:
    """A loose expectation listed first would take the call a strict one needs, first come first served."""
    expected = [
        ExpectedCall(name="book", arguments={"city": "Paris"}, match="subset"),
        ExpectedCall(name="book", arguments={"city": "Paris", "nights": 2}),
    ]
    made = calls(("book", {"city": "Paris", "nights": 2}), ("book", {"city": "Paris", "nights": 3}))
    greedy = 0
    taken: set[int] = set()
    for call in expected:
        for index, actual in enumerate(made):
            if index not in taken and call_matches(call, actual):
                taken.add(index)
                greedy += 1
                break
    assert greedy == 1
    score = score_calls(expected, made, "any_order")
    assert (score.matched, score.precision, score.recall, score.f1) == (2, 1.0, 1.0, 1.0)


def test_extra_calls_lower_precision_and_missing_ones_recall() -> None:
    expected = [ExpectedCall(**WEATHER), ExpectedCall(**BOOK)]
    extra = calls(
        ("get_weather", {"city": "Paris"}), ("search", {}), ("book", {"city": "Paris", "nights": 2})
    )
    score = score_calls(expected, extra)
    assert (score.precision, score.recall) == (2 / 3, 1.0)
    assert score.f1 == pytest.approx(0.8)
    missing = score_calls(expected, extra[:1])
    assert (missing.precision, missing.recall, missing.f1) == (1.0, 0.5, pytest.approx(2 / 3))


def test_order_modes() -> None:
    expected = [ExpectedCall(name=name) for name in ("a", "b", "c")]
    swapped = calls(("b", {}), ("a", {}), ("c", {}))
    spaced = calls(("a", {}), ("x", {}), ("b", {}), ("c", {}))
    assert score_calls(expected, swapped, "any_order").matched == 3
    assert score_calls(expected, swapped, "in_order").matched == 2  # a, c or b, c keep their order
    assert score_calls(expected, swapped, "strict").matched == 1  # only c is in its place
    assert score_calls(expected, spaced, "in_order").matched == 3  # calls between are allowed
    assert score_calls(expected, spaced, "strict").matched == 1  # but not in strict order
    assert score_calls(expected, calls(("a", {}), ("b", {}), ("c", {})), "strict").f1 == 1.0


def test_subset_and_superset_are_checks_beside_the_f1() -> None:
    expected = (ExpectedCall(**WEATHER), ExpectedCall(**BOOK))
    more = calls(("get_weather", {"city": "Paris"}), ("book", {"city": "Paris", "nights": 2}), ("log", {}))
    fewer = calls(("get_weather", {"city": "Paris"}))
    assert grade(spec(expected=expected, order="superset", min_f1=0.0), more).result.passed
    result = grade(spec(expected=expected, order="superset", min_f1=0.0), fewer)
    assert not result.result.passed and result.failed_checks == (
        "superset: 1 of the expected calls not made",
    )
    assert grade(spec(expected=expected, order="subset", min_f1=0.0), fewer).result.passed
    result = grade(spec(expected=expected, order="subset", min_f1=0.0), more)
    assert not result.result.passed and "subset: 1 call outside" in result.failed_checks[0]


def test_nothing_expected_and_nothing_made() -> None:
    assert score_calls([], ()).f1 == 1.0
    assert score_calls([], calls(("a", {}))).f1 == 0.0
    assert score_calls([ExpectedCall(name="a")], ()).f1 == 0.0


# --- checks and the pass rule ---------------------------------------------------------------------


def test_score_is_the_f1_and_the_grade_carries_precision_recall_f1() -> None:
    expected = (ExpectedCall(**WEATHER), ExpectedCall(**BOOK))
    made = calls(("get_weather", {"city": "Paris"}), ("search", {}), ("book", {"city": "Paris", "nights": 2}))
    result = grade(spec(expected=expected, min_f1=0.75), made)
    assert result.result.score == pytest.approx(0.8) == result.f1
    assert (result.precision, result.recall) == (pytest.approx(2 / 3), 1.0)
    assert result.result.passed
    assert result.result.reason is not None and result.result.reason.startswith(
        "precision 0.6667, recall 1, f1 0.8 (any_order: 2 of 2 expected calls matched, "
        "3 calls made; min_f1 0.75)"
    )
    assert not grade(spec(expected=expected, min_f1=0.9), made).result.passed
    assert grade(spec(expected=expected), made).result.passed is False  # min_f1 defaults to 1


def test_max_steps_forbidden_and_loops() -> None:
    made = calls(*[("search", {"q": "x"})] * 3, ("get_weather", {"city": "Paris"}))
    base = {"expected": (ExpectedCall(**WEATHER),), "min_f1": 0.0}
    assert grade(spec(**base, max_steps=4), made).result.passed
    assert grade(spec(**base, max_steps=3), made).failed_checks == ("max_steps: 4 steps, over 3",)
    assert grade(spec(**base, max_steps=3), made, steps=2).result.passed  # the agent's own count
    assert grade(spec(**base, forbidden=("delete", "search")), made).failed_checks == (
        "forbidden: 'search' called",
    )
    assert grade(spec(**base, max_repeats=3), made).result.passed
    looped = grade(spec(**base, max_repeats=2), made)
    assert looped.failed_checks == ("loop: 'search' called identically 3 times in a row, over 2",)
    assert "failed loop" in (looped.result.reason or "")
    varied = calls(("search", {"q": "x"}), ("search", {"q": "y"}), ("search", {"q": "x"}))
    assert grade(spec(**base, max_repeats=1), varied).result.passed


def test_reply_that_is_not_a_trajectory_errors_the_trial() -> None:
    suite = Suite.from_mapping(
        {
            "name": "s",
            "targets": [{"name": "t", "type": "python", "callable": "m:f"}],
            "cases": [
                {"id": "c", "input": "go", "graders": [{"type": "tool_calls", "expected": [WEATHER, BOOK]}]}
            ],
        },
        directory=Path("."),
    )
    case = suite.cases[0]
    grader = build_grader(suite.graders_for(case)[0], case, suite.directory, None)
    request = TrialRequest(case, 0, 1, case.text)
    reply = json.dumps(
        {
            "output": "Booked.",
            "tool_calls": [
                {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                {"name": "book", "arguments": {"city": "Paris", "nights": 2, "hotel": "H"}, "result": "ok"},
            ],
            "steps": 2,
            "cost_usd": 0.01,
        }
    )
    result = asyncio.run(grader(reply, request)).result
    assert (result.passed, result.score) == (True, 1.0)
    with pytest.raises(GraderError, match="tool_calls grader 'tool_calls': the reply is not a trajectory"):
        asyncio.run(grader("I booked it.", request))


# --- against exhaustive pairing on small inputs ---------------------------------------------------


def brute_any_order(matches: np.ndarray) -> int:
    rows, columns = matches.shape
    best = 0
    if rows <= columns:
        for chosen in itertools.permutations(range(columns), rows):
            best = max(best, sum(bool(matches[i, j]) for i, j in enumerate(chosen)))
    else:
        for chosen in itertools.permutations(range(rows), columns):
            best = max(best, sum(bool(matches[i, j]) for j, i in enumerate(chosen)))
    return best


def brute_in_order(matches: np.ndarray) -> int:
    rows, columns = matches.shape
    for size in range(min(rows, columns), 0, -1):
        for picked_rows in itertools.combinations(range(rows), size):
            for picked_columns in itertools.combinations(range(columns), size):
                if all(matches[i, j] for i, j in zip(picked_rows, picked_columns, strict=True)):
                    return size
    return 0


matrices = st.integers(0, 5).flatmap(
    lambda rows: st.integers(0, 5).flatmap(
        lambda columns: st.lists(st.booleans(), min_size=rows * columns, max_size=rows * columns).map(
            lambda cells: np.array(cells, dtype=bool).reshape(rows, columns)
        )
    )
)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(matrices)
def test_pairing_equals_exhaustive_search(matches: np.ndarray) -> None:
    assert matched_pairs(matches, "any_order") == brute_any_order(matches)
    assert matched_pairs(matches, "in_order") == brute_in_order(matches)


call_lists = st.lists(st.tuples(st.sampled_from("ab"), st.integers(0, 2), st.booleans()), max_size=4)


@settings(max_examples=200, deadline=None)
@given(
    call_lists, st.lists(st.tuples(st.sampled_from("ab"), st.integers(0, 2), st.integers(0, 2)), max_size=4)
)
@pytest.mark.slow
def test_score_of_calls_equals_exhaustive_pairing(
    wanted: list[tuple[str, int, bool]], made: list[tuple[str, int, int]]
) -> None:
    """Repeated tool names with loose (subset) and strict (exact) expectations."""
    expected = [
        ExpectedCall(name=name, arguments={"x": x}, match="subset" if loose else "exact")
        for name, x, loose in wanted
    ]
    actual = [
        ToolCall(name=name, arguments={"x": x} if extra == 0 else {"x": x, "y": extra})
        for name, x, extra in made
    ]
    matches = np.array([[call_matches(e, a) for a in actual] for e in expected], dtype=bool).reshape(
        len(expected), len(actual)
    )
    score = score_calls(expected, actual)
    assert score.matched == brute_any_order(matches)
    precision = score.matched / len(actual) if actual else 1.0
    recall = score.matched / len(expected) if expected else 1.0
    assert (score.precision, score.recall) == (precision, recall)


# --- suites ---------------------------------------------------------------------------------------


def write(tmp_path: Path, graders: str) -> Path:
    path = tmp_path / "suite.yaml"
    path.write_text(
        textwrap.dedent(
            f"""\
            name: agent
            targets: [{{name: t, type: command, argv: [cat]}}]
            cases:
              - id: c
                input: book a room
                graders: [{graders}]
            """
        )
    )
    return path


def test_a_suite_with_a_tool_calls_grader_validates(tmp_path: Path) -> None:
    suite = load_suite(
        write(
            tmp_path,
            "{type: tool_calls, expected: [{name: get_weather, arguments: {city: Paris}}, "
            "{name: book, arguments: {city: Paris, nights: 2}, match: subset}], "
            "order: any_order, min_f1: 0.9}",
        )
    )
    (grader,) = suite.graders_for(suite.cases[0])
    assert isinstance(grader, ToolCallsGraderSpec)
    assert grader.order == "any_order" and grader.min_f1 == 0.9 and len(grader.expected) == 2


@pytest.mark.parametrize(
    ("graders", "line"),
    [
        (
            "{type: tool_calls, expected: [{name: book}], order: sideways}",
            r"suite\.yaml:6: cases\[0\]\.graders\[0\]\.order: .*'strict'.*; got 'sideways'",
        ),
        (
            "{type: tool_calls, expected: [{name: book}], min_f1: 2}",
            r"suite\.yaml:6: cases\[0\]\.graders\[0\]\.min_f1: .*less than or equal to 1.*; got 2",
        ),
        (
            "{type: tool_calls, expected: [{name: book, patterns: {date: '(a'}}]}",
            r"suite\.yaml:6: cases\[0\]\.graders\[0\]\.expected\[0\]\.patterns: "
            r"patterns\['date'\]: not a valid regular expression",
        ),
        (
            "{type: tool_calls, expected: [{name: book}], forbidden: [book, delete]}",
            r"suite\.yaml:6: cases\[0\]\.graders\[0\]: forbidden tools must not be expected; "
            r"got 'book' in both",
        ),
        (
            "{type: tool_calls, expected: [{name: book, argumnets: {city: Paris}}]}",
            r"suite\.yaml:6: cases\[0\]\.graders\[0\]\.expected\[0\]\.argumnets: unknown field",
        ),
    ],
)
def test_a_bad_tool_calls_grader_is_one_clear_line(tmp_path: Path, graders: str, line: str) -> None:
    path = write(tmp_path, graders)
    with pytest.raises(EvaluationError) as info:
        load_suite(path)
    header, *lines = str(info.value).splitlines()
    assert header == f"{path}: invalid suite (1 problem):", str(info.value)
    assert re.match(r".*" + line, lines[0].strip()), lines[0]


@pytest.mark.slow
@pytest.mark.timeout(60)
def test_a_pattern_that_backtracks_errors_the_trial_within_timeout_s() -> None:
    expected = (ExpectedCall(name="f", patterns={"x": "(a|aa)+c"}),)
    grader = ToolCallsGrader(spec(expected=expected, timeout_s=0.5))
    reply = json.dumps({"tool_calls": [{"name": "f", "arguments": {"x": "a" * 5000 + "b"}}]})
    graders = [{"type": "tool_calls", "expected": [{"name": "f"}]}]
    suite = {"name": "s", "targets": [{"name": "t", "type": "command", "argv": ["cat"]}]}
    case = Suite.from_mapping({**suite, "cases": [{"id": "c", "input": "go", "graders": graders}]}).cases[0]
    with pytest.raises(GraderError, match=r"result within timeout_s=0\.5"):
        asyncio.run(grader(reply, TrialRequest(case, 0, 1, case.text)))
