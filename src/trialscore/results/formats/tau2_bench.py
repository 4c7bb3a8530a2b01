"""tau2-bench results (sierra-research/tau2-bench): the ``Results`` JSON its runs save.

A results file is one JSON object (``Results.model_dump_json``)::

    {"timestamp": "...",
     "info": {"git_commit": "...", "num_trials": 3, ...,
              "agent_info": {"implementation": "llm_agent", "llm": "gpt-4.1", ...},
              "user_info": {"implementation": "user_simulator", "llm": "gpt-4.1", ...},
              "environment_info": {"domain_name": "airline", ...}},
     "tasks": [...],
     "simulations": [{"id": "...", "task_id": "0", "trial": 0,
                      "termination_reason": "user_stop",
                      "reward_info": {"reward": 1.0, ...}, ...}, ...]}

Each simulation is one trial row:

* ``case_id`` is ``task_id``, ``trial`` is ``trial``;
* ``passed`` is true exactly when ``reward_info.reward`` is within 1e-6 of 1;
* a simulation tau2 calls non-evaluable (``termination_reason``
  ``infrastructure_error`` or ``context_window_exceeded``, tau2's
  ``NON_EVALUABLE_TERMINATION_REASONS``), or one with no ``reward_info``, is an
  **errored** trial; every other termination (``too_many_errors``, ``max_steps``,
  ``agent_error``, ...) is the agent's outcome and is graded by its reward;
* ``target`` is ``info.agent_info.llm`` (else its ``implementation``), ``category``
  is ``info.environment_info.domain_name``, ``user_model`` is ``info.user_info.llm``.

The "dir" layout (``results.json`` without ``simulations``, one file per
simulation in ``simulations/`` beside it) is read too: pass the folder or its
``results.json``.

With trial detail each simulation's trajectory is read from its ``messages``: the agent's tool
calls are the ``tool_calls`` of its ``assistant`` messages (``name``, ``arguments``), each with
the ``content`` of the ``tool`` message of the same ``id`` as its ``result`` (the user
simulator's own tool calls, in ``user`` messages, are not the agent's); ``steps`` is the number
of assistant messages; ``tokens`` the sum of their ``usage`` (``prompt_tokens`` +
``completion_tokens``; unknown if one lacks it); ``cost`` is ``agent_cost`` (the agent's, not the
user simulator's ``user_cost``) and ``latency`` the simulation's ``duration``.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING

from trialscore.errors import EvaluationError
from trialscore.results.formats._text import file_keys, load_json
from trialscore.results.tally import LongTable, Skips, text_value
from trialscore.results.trajectory import calls_text

if TYPE_CHECKING:
    from trialscore.results.sink import TrialSink

__all__ = ["MAPS", "NAME", "NON_EVALUABLE", "SUFFIXES", "SUMMARY", "read", "sniff", "tau2_table"]

NAME = "tau2-bench"
SUMMARY = "tau2-bench results JSON ({timestamp, info, tasks, simulations}), or its dir layout"
MAPS = (
    "item = task_id, trial = trial, outcome = reward_info.reward within 1e-6 of 1; termination "
    "infrastructure_error / context_window_exceeded (or no reward_info) is errored; group keys target "
    "(info.agent_info.llm), category (domain), user_model"
)
SUFFIXES = (".json",)

#: tau2's NON_EVALUABLE_TERMINATION_REASONS: runs that never produced an evaluable rollout.
NON_EVALUABLE = frozenset({"infrastructure_error", "context_window_exceeded"})
_TOLERANCE = 1e-6
_RESULTS = "results.json"
_SIMULATIONS = "simulations"
#: How ``Results.model_dump_json`` starts: timestamp, then info whose first field is git_commit.
#: Keys of a ``Results`` document: its ``info`` names the git commit it was run at.
_RESULTS_KEYS = frozenset({"info", "info.git_commit"})


def _is_results(path: Path) -> bool:
    return _RESULTS_KEYS <= file_keys(path)


def sniff(path: Path) -> bool:
    """A JSON object starting ``{"timestamp": ..., "info": {"git_commit": ...``, or a folder whose
    ``results.json`` is one."""
    if path.is_dir():
        return (path / _RESULTS).is_file() and _is_results(path / _RESULTS)
    return path.is_file() and _is_results(path)


def read(path: Path, sink: TrialSink) -> None:
    """Add every simulation to ``sink``; a bad simulation raises (or is skipped and counted)."""
    sink.scan_table(str(path), tau2_table(path, sink.skip_invalid, sink.detail))


def _load(path: Path) -> object:
    return load_json(path)


def _field(data: dict[str, object], *names: str) -> object:
    value: object = data
    for name in names:
        value = value.get(name) if isinstance(value, dict) else None
    return value


def _simulations(path: Path, results: dict[str, object]) -> list[tuple[str, object]]:
    """(where, simulation) pairs: the file's ``simulations``, or the dir layout's simulation files."""
    simulations = results.get("simulations")
    folder = path.parent / _SIMULATIONS
    if not simulations and folder.is_dir():
        files = sorted(folder.glob("*.json"))
        return [(str(file), _load(file)) for file in files]
    if not isinstance(simulations, list):
        raise EvaluationError(f"{path}: field 'simulations' must be a list of simulation runs")
    return [(f"{path} simulation {index + 1}", simulation) for index, simulation in enumerate(simulations)]


def _trial_row(simulation: object) -> tuple[str, str, str | None, str | None]:
    """(case_id, trial, passed, termination_reason); passed is None for a non-evaluable run."""
    if not isinstance(simulation, dict):
        raise EvaluationError(f"expected a simulation run object; got {simulation!r:.60}")
    task_id = simulation.get("task_id")
    if isinstance(task_id, bool) or not isinstance(task_id, (int, str)) or task_id == "":
        raise EvaluationError(f"field 'task_id' must be a task id; got {task_id!r:.60}")
    trial = simulation.get("trial")
    if isinstance(trial, bool) or not isinstance(trial, int) or trial < 0:
        raise EvaluationError(f"field 'trial' must be a whole number >= 0; got {trial!r:.60}")
    reason = simulation.get("termination_reason")
    if not isinstance(reason, str):
        raise EvaluationError(f"field 'termination_reason' must be a string; got {reason!r:.60}")
    reward_info = simulation.get("reward_info")
    if reason in NON_EVALUABLE or reward_info is None:
        return str(task_id), str(trial), None, reason
    reward = reward_info.get("reward") if isinstance(reward_info, dict) else None
    if isinstance(reward, bool) or not isinstance(reward, (int, float)) or not math.isfinite(reward):
        raise EvaluationError(f"field 'reward_info.reward' must be a number; got {reward!r:.60}")
    return str(task_id), str(trial), "true" if abs(reward - 1.0) <= _TOLERANCE else "false", reason


def _usage(message: dict[str, object]) -> float | None:
    usage = message.get("usage")
    if not isinstance(usage, dict):
        return None
    parts = [usage.get("prompt_tokens"), usage.get("completion_tokens")]
    if not all(isinstance(part, int) and not isinstance(part, bool) for part in parts):
        return None
    return float(sum(parts))  # type: ignore[arg-type]


def _trajectory(simulation: dict[str, object]) -> dict[str, str | None]:
    """The trajectory columns of one simulation (tool_calls as JSON text, steps, tokens, cost, latency)."""
    messages = simulation.get("messages")
    out: dict[str, str | None] = {
        "tool_calls": None,
        "steps": None,
        "tokens": None,
        "cost_usd": text_value(simulation.get("agent_cost")),
        "latency_s": text_value(simulation.get("duration")),
    }
    if not isinstance(messages, list):
        return out
    listed = [message for message in messages if isinstance(message, dict)]
    results = {
        message.get("id"): message.get("content") for message in listed if message.get("role") == "tool"
    }
    assistant = [message for message in listed if message.get("role") == "assistant"]
    made = [
        {"name": call.get("name"), "arguments": call.get("arguments"), "result": results.get(call.get("id"))}
        for message in assistant
        for call in message.get("tool_calls") or ()
        if isinstance(call, dict)
    ]
    try:
        out["tool_calls"] = calls_text(made)
    except EvaluationError as exc:
        raise EvaluationError(f"messages: {exc}") from exc
    used = [_usage(message) for message in assistant]
    out["steps"] = str(len(assistant))
    out["tokens"] = None if None in used else text_value(sum(used))  # type: ignore[arg-type]
    return out


def tau2_table(path: Path, skip_invalid: bool = False, detail: bool = False) -> LongTable:
    """Trial rows of a tau2-bench results file (or dir-layout folder); with ``detail``, trajectories too."""
    if path.is_dir():
        path = path / _RESULTS
    results = _load(path)
    if not isinstance(results, dict) or not isinstance(results.get("info"), dict):
        raise EvaluationError(f"{path}: a tau2-bench results file is a JSON object with 'info'")
    agent = ("info", "agent_info")
    target = _field(results, *agent, "llm") or _field(results, *agent, "implementation")
    groups = {
        "target": text_value(target),
        "category": text_value(_field(results, "info", "environment_info", "domain_name")),
        "user_model": text_value(_field(results, "info", "user_info", "llm")),
    }
    names: tuple[str, ...] = ("case_id", "trial", "passed", "termination_reason")
    names += ("tool_calls", "steps", "tokens", "cost_usd", "latency_s") if detail else ()
    columns: dict[str, list[str | None]] = {name: [] for name in names}
    where: list[str] = []
    skips = Skips(skip_invalid, "simulations")
    for location, simulation in _simulations(path, results):
        try:
            case_id, trial, passed, reason = _trial_row(simulation)
            trajectory = _trajectory(simulation) if detail else {}  # type: ignore[arg-type]
        except EvaluationError as exc:
            skips.note(location, exc)
            continue
        for name, value in trajectory.items():
            columns[name].append(value)
        columns["case_id"].append(case_id)
        columns["trial"].append(trial)
        columns["passed"].append(passed)
        columns["termination_reason"].append(reason)
        where.append(f"{location} (task_id {case_id}, trial {trial})")
    rows = len(where)
    table = {**columns, **{name: [value] * rows for name, value in groups.items()}}
    return LongTable(table, tuple(where), skips.count, skips.first)
