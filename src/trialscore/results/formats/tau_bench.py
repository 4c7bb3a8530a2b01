"""tau-bench results (sierra-research/tau-bench): the JSON list of ``EnvRunResult`` that ``run.py`` writes.

The file is a JSON array, one object per (task, trial)::

    [{"task_id": 0, "reward": 1.0, "info": {...}, "traj": [...], "trial": 0}, ...]

Each object is one trial row:

* ``case_id`` is ``task_id`` and ``trial`` is ``trial``;
* ``passed`` is true exactly when ``reward`` is within 1e-6 of 1 (tau-bench's own
  success band, ``REWARD_SUCCESS_MIN``/``MAX``);
* a run that raised (tau-bench stores ``reward`` 0, ``info`` with an ``"error"``
  and an empty ``traj``) is an **errored** trial, not a failure;
* ``target`` is the agent model read from the file name tau-bench gives its
  results, ``<agent>-<model>-<temperature>_range_<start>-<end>_user-<user model>-<user strategy>_<time>.json``
  (the model's ``/`` is written ``_`` there); ``agent`` and ``user_model`` come from
  the same name.  A file with another name has its stem as ``target``.

With trial detail the trajectory is read from ``traj`` (the agent's messages): ``steps`` is its
number of assistant messages (one model call each), and ``tool_calls`` the ``tool_calls`` of
those messages (``function.name``, ``function.arguments`` parsed), each with the ``content`` of
the ``tool`` message answering it as its ``result``.  Only the ``tool-calling`` agent (or a
trajectory that holds structured tool calls) records calls that way; the text agents (``react``,
``act``, ``few-shot``) write their actions into the message text, so their tool calls are left
unknown.  tau-bench keeps neither the agent's tokens nor its cost in the results file (the
``total_cost`` its agents add up is not saved; ``info.user_cost`` is the user simulator's).

>>> name_fields("tool-calling-gpt-4o-0.0_range_0-5_user-gpt-4o-llm_1122203000")
{'agent': 'tool-calling', 'target': 'gpt-4o', 'user_model': 'gpt-4o'}
>>> name_fields("my-run")
{'agent': None, 'target': 'my-run', 'user_model': None}
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import TYPE_CHECKING

from trialscore.errors import EvaluationError
from trialscore.results.formats._text import file_keys, json_array_items
from trialscore.results.tally import LongTable, Skips, text_value

if TYPE_CHECKING:
    from trialscore.results.sink import TrialSink

__all__ = ["MAPS", "NAME", "SUFFIXES", "SUMMARY", "name_fields", "read", "sniff", "tau_bench_table"]

NAME = "tau-bench"
SUMMARY = "tau-bench results: the JSON list of {task_id, reward, info, traj, trial} its run.py writes"
MAPS = (
    "item = task_id, trial = trial, outcome = reward within 1e-6 of 1; a run that raised (info.error, "
    "empty traj) is errored; group keys target (model, from the file name), agent, user_model"
)
SUFFIXES = (".json",)

#: The agent strategies whose messages carry structured tool calls (the others write actions as text).
_STRUCTURED = frozenset({"tool-calling", "orchestrated-tool-calling"})
#: tau-bench's success band around reward 1.
_TOLERANCE = 1e-6
#: How ``json.dump(results)`` starts: the first result's first keys (``EnvRunResult`` field order).
#: Keys of every result of the array.
_RESULT_KEYS = frozenset({"[].task_id", "[].reward"})
_FILE_NAME = re.compile(
    r"^(?P<agent>tool-calling|act|react|few-shot|orchestrated-tool-calling|[a-z]+)"
    r"-(?P<model>.+)-(?P<temperature>\d+(?:\.\d+)?)_range_-?\d+--?\d+"
    r"_user-(?P<user>.+)-(?P<strategy>[a-z_]+)_[^_]+$"
)


def name_fields(stem: str) -> dict[str, str | None]:
    """``agent``, ``target`` (the model) and ``user_model`` from a tau-bench results file name."""
    match = _FILE_NAME.match(stem)
    if match is None:
        return {"agent": None, "target": stem, "user_model": None}
    return {"agent": match["agent"], "target": match["model"], "user_model": match["user"]}


def sniff(path: Path) -> bool:
    """A JSON array whose first object starts ``{"task_id": ..., "reward": ...``."""
    if not path.is_file():
        return False
    return _RESULT_KEYS <= file_keys(path)


def read(path: Path, sink: TrialSink) -> None:
    """Add every result of the file to ``sink``; a bad result raises (or is skipped and counted)."""
    sink.scan_table(str(path), tau_bench_table(path, sink.skip_invalid, sink.detail))


def _trajectory(traj: object, structured: bool) -> tuple[str | None, str | None]:
    """(tool_calls as JSON text, steps) of one result's ``traj``; calls None when not recorded."""
    from trialscore.results.trajectory import calls_text  # its Pydantic records: built on first use

    if not isinstance(traj, list) or not traj:
        return None, None
    messages = [message for message in traj if isinstance(message, dict)]
    answers = {
        message.get("tool_call_id"): message.get("content")
        for message in messages
        if message.get("role") == "tool"
    }
    assistant = [message for message in messages if message.get("role") == "assistant"]
    calls = [call for message in assistant for call in message.get("tool_calls") or ()]
    if not structured and not calls:
        return None, str(len(assistant))
    made = []
    for index, call in enumerate(calls):
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict):
            raise EvaluationError(
                f"traj tool call {index + 1}: field 'function' must be an object; got {call!r:.60}"
            )
        result = answers.get(call.get("id"))
        made.append({"name": function.get("name"), "arguments": function.get("arguments"), "result": result})
    try:
        return calls_text(made), str(len(assistant))
    except EvaluationError as exc:
        raise EvaluationError(f"traj: {exc}") from exc


def _trial_row(result: object) -> tuple[str, str, str | None]:
    """(case_id, trial, passed) of one result; passed is None for a run that raised."""
    if not isinstance(result, dict):
        raise EvaluationError(f"expected a result object; got {result!r:.60}")
    task_id = result.get("task_id")
    if isinstance(task_id, bool) or not isinstance(task_id, (int, str)) or task_id == "":
        raise EvaluationError(f"field 'task_id' must be a task number; got {task_id!r:.60}")
    trial = result.get("trial")
    if isinstance(trial, bool) or not isinstance(trial, int) or trial < 0:
        raise EvaluationError(f"field 'trial' must be a whole number >= 0; got {trial!r:.60}")
    reward = result.get("reward")
    if isinstance(reward, bool) or not isinstance(reward, (int, float)) or not math.isfinite(reward):
        raise EvaluationError(f"field 'reward' must be a number; got {reward!r:.60}")
    info = result.get("info")
    if info is not None and not isinstance(info, dict):
        raise EvaluationError(f"field 'info' must be an object; got {info!r:.60}")
    if info and "error" in info and not result.get("traj"):
        return str(task_id), str(trial), None
    return str(task_id), str(trial), "true" if abs(reward - 1.0) <= _TOLERANCE else "false"


def tau_bench_table(path: Path, skip_invalid: bool = False, detail: bool = False) -> LongTable:
    """Trial rows of one tau-bench results file (with ``detail``, each trial's trajectory too)."""
    results = json_array_items(path)  # one result at a time: a results file can be GBs of trajectories
    fields = name_fields(path.stem)
    names: tuple[str, ...] = ("case_id", "trial", "passed", "reward") + (
        ("tool_calls", "steps") if detail else ()
    )
    columns: dict[str, list[str | None]] = {name: [] for name in names}
    structured = fields["agent"] in _STRUCTURED
    where: list[str] = []
    skips = Skips(skip_invalid, "results")
    for index, result in enumerate(results):
        location = f"{path} result {index + 1}"
        try:
            case_id, trial, passed = _trial_row(result)
            assert isinstance(result, dict)
            if detail:
                calls, steps = _trajectory(result.get("traj"), structured)
                columns["tool_calls"].append(calls)
                columns["steps"].append(steps)
        except EvaluationError as exc:
            skips.note(location, exc)
            continue
        columns["case_id"].append(case_id)
        columns["trial"].append(trial)
        columns["passed"].append(passed)
        columns["reward"].append(text_value(result.get("reward")))
        where.append(f"{location} (task_id {case_id}, trial {trial})")
    rows = len(where)
    table = {**columns, **{name: [value] * rows for name, value in fields.items()}}
    return LongTable(table, tuple(where), skips.count, skips.first)
