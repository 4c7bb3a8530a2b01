"""Trajectories through the runner: targets that return tool calls, the record that keeps them, and the
tool_calls grader that reads them from the reply (python, command and openai targets)."""

from __future__ import annotations

import asyncio
import io
import json
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml
from rich.console import Console

from trialscore.errors import EvaluationError
from trialscore.results.records import TrialRecord
from trialscore.results.trajectory import TokenUsage
from trialscore.runner.options import RunOptions
from trialscore.runner.orchestrator import execute_suite
from trialscore.runner.outputs import write_outputs
from trialscore.runner.suite import load_suite
from trialscore.runner.targets import TrialRequest, reply_from
from trialscore.runner.targets.openai import OpenAITarget, OpenAITargetSpec

#: A booking agent whose procedure flakes by seed: sometimes an extra weather call, sometimes no booking.
AGENT = """
import random

def plan(seed):
    rng = random.Random(seed)
    made = [{"name": "get_weather", "arguments": {"city": "Paris"}, "result": "sunny"}]
    if rng.random() < 0.3:
        made.append({"name": "get_weather", "arguments": {"city": "Paris"}})
    if rng.random() < 0.8:
        made.append({"name": "book", "arguments": {"city": "Paris", "nights": 2, "late": False}})
    return made

def agent(case, seed):
    made = plan(seed)
    return {"output": "Booked 2 nights in Paris.", "tool_calls": made, "steps": len(made) + 1,
            "tokens": {"input": 100 * len(made), "output": 20}, "cost_usd": 0.001 * len(made)}
"""

GRADERS = [
    {"type": "contains", "value": "Booked", "name": "answer"},
    {
        "type": "tool_calls",
        "name": "process",
        "expected": [
            {"name": "get_weather", "arguments": {"city": "Paris"}},
            {"name": "book", "arguments": {"city": "Paris", "nights": 2}, "match": "subset"},
        ],
        "order": "in_order",
    },
]


def _suite(tmp_path: Path, target: dict[str, Any], trials: int = 6, cases: int = 3) -> Path:
    document = {
        "name": "booking",
        "targets": [target],
        "cases": [{"id": f"trip-{i}", "input": f"book trip {i}", "graders": GRADERS} for i in range(cases)],
        "execution": {"trials": {"count": trials}, "seed": 11, "concurrency": 4},
    }
    path = tmp_path / "suite.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    return path


def _run(path: Path, tmp_path: Path) -> list[TrialRecord]:
    console = Console(file=io.StringIO(), width=200)
    options = RunOptions(store=tmp_path / "store.sqlite", progress=False, out_dir=tmp_path / "out")
    report = execute_suite(load_suite(path), options, console)
    files = write_outputs(report)
    return [TrialRecord.from_json_line(line) for line in files.trials.read_text().splitlines()]


def _expected_figures(made: list[dict[str, Any]]) -> dict[str, float]:
    """Precision, recall and F1 worked by hand: the first weather call and a booking match, in order."""
    matched = 1 + any(call["name"] == "book" for call in made)
    precision, recall = matched / len(made), matched / 2
    return {"precision": precision, "recall": recall, "f1": 2 * precision * recall / (precision + recall)}


@pytest.mark.timeout(120)
def test_python_agent_trajectories_are_kept_and_graded(tmp_path: Path) -> None:
    (tmp_path / "agent.py").write_text(textwrap.dedent(AGENT))
    records = _run(
        _suite(tmp_path, {"name": "booker", "type": "python", "callable": "agent.py:agent"}), tmp_path
    )
    namespace: dict[str, Any] = {}
    exec(textwrap.dedent(AGENT), namespace)  # the agent's own plan, to know what each trial did
    assert len(records) == 18
    kinds = set()
    for record in records:
        made = namespace["plan"](record.seed)
        assert record.tool_calls is not None
        assert [call.to_dict() for call in record.tool_calls] == [{"result": None, **call} for call in made]
        assert record.steps == len(made) + 1
        assert record.tokens == TokenUsage(input=100 * len(made), output=20)
        assert record.cost_usd == pytest.approx(0.001 * len(made))
        assert record.output == "Booked 2 nights in Paris."
        answer, process = record.grader_results
        assert answer.passed and answer.details is None
        figures = _expected_figures(made)
        assert process.details == pytest.approx(figures)
        assert process.score == pytest.approx(figures["f1"])
        assert process.passed is (figures["f1"] == 1.0)
        assert record.passed is process.passed  # every grader must pass
        kinds.add((len(made), figures["f1"] == 1.0))
    assert {(2, True), (3, False)} <= kinds  # clean runs and runs with an extra call were both seen
    assert any(not any(c.name == "book" for c in r.tool_calls or ()) for r in records)  # and a missing call


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_command_agent_prints_its_trajectory_as_json(tmp_path: Path) -> None:
    program = tmp_path / "agent.py"
    program.write_text(
        textwrap.dedent(
            """
            import json, os
            calls = [{"name": "get_weather", "arguments": {"city": "Paris"}}]
            if int(os.environ["TRIALSCORE_SEED"]) % 2:
                calls.append({"name": "book", "arguments": '{"city": "Paris", "nights": 2}'})
            print(json.dumps({"output": "Booked", "tool_calls": calls, "steps": len(calls)}))
            """
        )
    )
    target = {"name": "prog", "type": "command", "argv": [sys.executable, str(program)]}
    records = _run(_suite(tmp_path, target, trials=4, cases=2), tmp_path)
    for record in records:
        booked = record.seed % 2 == 1  # type: ignore[operator]
        assert [call.name for call in record.tool_calls or ()] == ["get_weather", *(["book"] * booked)]
        assert record.output == "Booked" and record.steps == 1 + booked
        assert record.grader_results[1].details == pytest.approx(
            {"precision": 1.0, "recall": 1.0 if booked else 0.5, "f1": 1.0 if booked else 2 / 3}
        )


def test_a_bad_trajectory_is_one_line_naming_the_field() -> None:
    line = r"^target 'a': Trajectory field 'tool_calls.0': ToolCall field 'name': Field required$"
    with pytest.raises(EvaluationError, match=line):
        reply_from({"tool_calls": [{"arguments": {}}]}, "target 'a'")
    with pytest.raises(EvaluationError, match=r"^target 'a': Trajectory field 'steps': .*; got -1$"):
        reply_from({"tool_calls": [], "steps": -1}, "target 'a'")


def _request() -> TrialRequest:
    from trialscore.runner.suite import CaseSpec

    return TrialRequest(CaseSpec(id="c", input="book Paris"), 0, 5, "book Paris")


def test_openai_target_records_the_tool_calls_of_its_reply(chat_server) -> None:
    chat_server.tool_calls = lambda prompt, seed: [
        {"name": "get_weather", "arguments": {"city": "Paris"}},
        {"name": "book", "arguments": {"city": "Paris", "nights": 2}},
    ]
    target = OpenAITarget(OpenAITargetSpec(type="openai", name="gpt", base_url=chat_server.url, model="m"), 2)

    async def go() -> Any:
        try:
            return await target(_request())
        finally:
            await target.aclose()

    reply = asyncio.run(go())
    assert reply.output == ""  # a reply that only calls tools has no content
    assert [(call.name, call.arguments) for call in reply.tool_calls] == [
        ("get_weather", {"city": "Paris"}),
        ("book", {"city": "Paris", "nights": 2}),
    ]
    chat_server.tool_calls = lambda prompt, seed: None
    plain = asyncio.run(OpenAITarget(target._spec, 1)(_request()))
    assert plain.tool_calls == () and plain.output == "BOOK PARIS"


@pytest.mark.timeout(120)
def test_openai_suite_grades_the_recorded_tool_calls(chat_server, tmp_path: Path) -> None:
    # The model books on odd seeds only: the process grade follows, the record keeps the calls.
    def calls(prompt: str, seed: int) -> list[dict[str, Any]]:
        made = [{"name": "get_weather", "arguments": {"city": "Paris"}}]
        return made + [{"name": "book", "arguments": {"city": "Paris", "nights": 2}}] * (seed % 2)

    chat_server.tool_calls = calls
    chat_server.answer = lambda prompt, seed: ""
    target = {"name": "gpt", "type": "openai", "base_url": chat_server.url, "model": "m"}
    document = yaml.safe_load(_suite(tmp_path, target, trials=3, cases=2).read_text())
    for case in document["cases"]:
        case["graders"] = [GRADERS[1]]
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump(document))
    records = _run(tmp_path / "suite.yaml", tmp_path)
    sent = {json.dumps(r["body"]["seed"]) for r in chat_server.requests}
    assert len(records) == 6 and len(sent) == 6
    for record in records:
        booked = record.seed % 2 == 1  # type: ignore[operator]
        assert len(record.tool_calls or ()) == 1 + booked
        assert record.passed is booked
        assert record.grader_results[0].details["recall"] == (1.0 if booked else 0.5)  # type: ignore[index]
