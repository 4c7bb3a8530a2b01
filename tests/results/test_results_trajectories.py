"""The readers fill each trial's trajectory where the tool logs it: tool calls, steps, tokens, cost.

One fixture per tool that logs tool calls:

* inspect_ai: a real eval with mockllm and a real tool, written at test time (offline);
* Harbor: ``fixtures/harbor/jobs-trajectories``, built with Harbor 0.26's own models (TrialResult
  and the ATIF trajectory classes) by ``make_fixtures_trajectories.py`` beside it (``harbor run``
  needs Docker and Python 3.12);
* tau-bench and tau2-bench: ``fixtures/*/trajectories``, written from the tools' current source
  schema by ``fixtures/tau-bench/make_trajectory_fixtures.py`` (neither tool runs offline).

Each test works out the expected figures from the fixture file itself, independently of the reader.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from trialscore.results import read_counts
from trialscore.results.trials import TrialColumns

FIXTURES = Path(__file__).parent / "fixtures"
TAU = (
    FIXTURES
    / "tau-bench"
    / "trajectories"
    / "tool-calling-gpt-4o-0.0_range_0-2_user-gpt-4o-llm_1124090000.json"
)
TAU2 = FIXTURES / "tau2-bench" / "trajectories" / "telecom_llm_agent_gpt-4.1-mini.json"
HARBOR = FIXTURES / "harbor" / "jobs-trajectories"


def _trials(path: Path | str) -> dict[tuple[str, int], dict[str, Any]]:
    """(case, trial) -> the trial's verdict and trajectory as the reader kept it."""
    counts = read_counts([path], detail=True)
    trials: TrialColumns = counts.trials  # type: ignore[assignment]
    out = {}
    for row, item in enumerate(counts.item.tolist()):
        for index in range(int(trials.starts[row]), int(trials.starts[row + 1])):
            calls = trials.calls(index)
            out[(item, trials.trial[index])] = {
                "verdict": trials.verdicts[index],
                "calls": None if calls is None else [(c.name, c.arguments, c.result) for c in calls],
                "steps": trials.steps[index],
                "tokens": trials.tokens[index],
                "cost": trials.cost[index],
                "latency": trials.latency[index],
            }
    return out


def _same(value: float, expected: float | None) -> bool:
    return bool(np.isnan(value)) if expected is None else value == pytest.approx(expected)


def test_tau_bench_tool_calls_come_from_the_tool_calling_agents_messages() -> None:
    read = _trials(TAU)
    for result in json.loads(TAU.read_text()):
        got = read[(str(result["task_id"]), result["trial"])]
        if not result["traj"]:  # the run raised: errored, no trajectory
            assert got["verdict"] == "e" and got["calls"] is None and np.isnan(got["steps"])
            continue
        replies = {m["tool_call_id"]: m["content"] for m in result["traj"] if m["role"] == "tool"}
        assistant = [m for m in result["traj"] if m["role"] == "assistant"]
        expected = [
            (c["function"]["name"], json.loads(c["function"]["arguments"]), replies[c["id"]])
            for m in assistant
            for c in m["tool_calls"] or ()
        ]
        assert got["calls"] == expected
        assert got["steps"] == len(assistant)
        assert np.isnan(got["tokens"]) and np.isnan(got["cost"])  # tau-bench keeps neither
    assert (
        read[("0", 1)]["calls"][1:3]
        == [("get_order_details", {"order_id": "#W1"}, "get_order_details: done")] * 2
    )
    assert read[("1", 2)]["calls"] == []  # a trial that made no call records an empty list


def test_tau2_bench_agent_calls_tokens_and_cost_not_the_users() -> None:
    read = _trials(TAU2)
    document = json.loads(TAU2.read_text())
    for sim in document["simulations"]:
        got = read[(sim["task_id"], sim["trial"])]
        assistant = [m for m in sim["messages"] if m["role"] == "assistant"]
        replies = {m["id"]: m["content"] for m in sim["messages"] if m["role"] == "tool"}
        expected = [
            (c["name"], c["arguments"], replies[c["id"]]) for m in assistant for c in m["tool_calls"] or ()
        ]
        assert got["calls"] == expected
        assert all(c["requestor"] == "assistant" for m in assistant for c in m["tool_calls"] or ())
        assert got["steps"] == len(assistant)
        tokens = sum(m["usage"]["prompt_tokens"] + m["usage"]["completion_tokens"] for m in assistant)
        assert got["tokens"] == tokens
        assert _same(got["cost"], sim["agent_cost"]) and got["latency"] == sim["duration"]
    users = [
        c
        for s in document["simulations"]
        for m in s["messages"]
        if m["role"] == "user"
        for c in m["tool_calls"] or ()
    ]
    assert users and all(call["name"] == "toggle_airplane_mode" for call in users)  # present, never counted
    assert all(name != "toggle_airplane_mode" for got in read.values() for name, *_ in got["calls"] or ())


def test_harbor_trajectories_are_read_from_the_atif_file_beside_each_result() -> None:
    read = _trials(HARBOR)
    seen = 0
    for result_file in sorted(HARBOR.glob("*/*/result.json")):
        result = json.loads(result_file.read_text())
        matches = [got for (task, _), got in read.items() if task == result["task_name"]]
        atif = result_file.parent / "agent" / "trajectory.json"
        agent = result["agent_result"]
        if result["exception_info"] is not None:
            assert agent is None and not atif.exists()
            continue
        tokens = agent["n_input_tokens"] + agent["n_output_tokens"]
        got = next(g for g in matches if g["tokens"] == tokens)
        assert _same(got["cost"], agent["cost_usd"])
        if not atif.exists():
            assert got["calls"] is None and np.isnan(got["steps"])
            continue
        steps = [s for s in json.loads(atif.read_text())["steps"] if s["source"] == "agent"]
        assert got["steps"] == len(steps)
        assert got["calls"] == [
            (c["function_name"], c["arguments"], "ok\n") for s in steps for c in s.get("tool_calls") or ()
        ]
        seen += 1
    assert seen == 4
    fix_git = sorted(len(g["calls"]) for (task, _), g in read.items() if task == "fix-git")
    assert fix_git == [1, 3, 4]  # a run that gave up early, a clean one, one that repeated a call


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # raised inside inspect_ai
def test_inspect_ai_tool_events_written_by_the_real_tool(tmp_path: Path) -> None:
    pytest.importorskip("inspect_ai", reason="the inspect extra (inspect_ai) is not installed")
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.log import read_eval_log
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.scorer import includes
    from inspect_ai.solver import generate, use_tools
    from inspect_ai.tool import tool

    @tool
    def weather():  # type: ignore[no-untyped-def]
        async def execute(city: str) -> str:
            """The weather in a city.

            Args:
                city: The city.
            """
            return f"sunny in {city}"

        return execute

    def reply(messages, tools, tool_choice, config):  # type: ignore[no-untyped-def]
        asked = sum(message.role == "tool" for message in messages)
        number = int(messages[0].text.split()[-1])
        if asked < number:  # sample sN calls the tool N times, then answers
            output = ModelOutput.for_tool_call("mockllm", "weather", {"city": f"city-{asked}"})
        else:
            output = ModelOutput.from_content(model="mockllm", content=f"done {number}")
        output.usage = ModelUsage(input_tokens=10, output_tokens=2, total_tokens=12)
        return output

    dataset = [Sample(input=f"calls {n}", target=f"done {n}", id=f"s{n}") for n in (0, 1, 2)]
    (log,) = inspect_eval(
        Task(dataset=dataset, solver=[use_tools(weather()), generate()], scorer=includes(), epochs=2),
        model=get_model("mockllm/model", custom_outputs=reply),
        log_dir=str(tmp_path / "logs"),
        display="none",
    )
    read = _trials(log.location)
    full = read_eval_log(log.location)
    assert len(full.samples) == 6
    for sample in full.samples:
        got = read[(str(sample.id), sample.epoch - 1)]
        number = int(str(sample.id)[1:])
        assert sample.error is None and got["verdict"] == "p"
        assert got["calls"] == [
            ("weather", {"city": f"city-{i}"}, f"sunny in city-{i}") for i in range(number)
        ]
        assert got["steps"] == number + 1  # one model call per tool call, then the answer
        assert got["tokens"] == 12 * (number + 1)
        assert got["latency"] == pytest.approx(sample.total_time)
        assert got["verdict"] == "p"
    assert np.isnan(next(iter(read.values()))["cost"])  # mockllm prices nothing: unknown, never free
    assert read_counts([log.location]).trials is None  # no detail asked: no transcripts read
