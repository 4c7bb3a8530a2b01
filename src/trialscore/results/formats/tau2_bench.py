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

Each simulation is one trial row, as tau2's own metrics (``tau2/metrics/agent_metrics.py``,
tau2 1.0.1) count it:

* ``case_id`` is ``task_id``, ``trial`` is ``trial`` (a run whose simulations carry no trial
  number has no trial column; some with and some without is an error naming the field);
* ``passed`` is true exactly when ``reward_info.reward`` is within 1e-6 of 1 (tau2's
  ``is_successful``);
* a simulation that ended in ``infrastructure_error`` (tau2 leaves it out of its metrics: the
  run never happened), or one with no ``reward_info``, is an **errored** trial; every other
  termination (``too_many_errors``, ``max_steps``, ``agent_error``,
  ``context_window_exceeded``, ...) is the agent's outcome and is graded by its reward;
* ``target`` is ``info.agent_info.llm`` (else its ``implementation``), ``category``
  is ``info.environment_info.domain_name``, ``user_model`` is ``info.user_info.llm``.

What tau2 writes (``Results.save``), all read: the "json" layout, one file (``tau2 run`` saves it
as ``data/simulations/<run>/results.json``; older releases as ``<run>.json``), streamed one
simulation at a time (its ``info`` first), so a results file of any size is read; and the
"dir" layout, ``results.json`` without ``simulations`` but with a ``simulation_index`` of them,
one file per simulation in ``simulations/`` beside it.  Pass a results file, its run folder, or
the folder of run folders (``data/simulations/``: each run is read on its own).  As tau2's
``Results.load`` does, a dir layout whose files and index disagree is an error naming the
simulations; a ``results.json`` whose ``simulations/`` folder is not there (as the leaderboard
keeps it) is read from its ``simulation_index`` (task, trial, reward and termination reason).

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
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from trialscore.errors import EvaluationError
from trialscore.results.formats._text import (
    MAX_DOCUMENT_BYTES,
    file_keys,
    load_json,
    member_items,
    member_value,
)
from trialscore.results.tally import LongTable, Skips, text_value

if TYPE_CHECKING:
    from trialscore.results.sink import TrialSink

__all__ = ["MAPS", "NAME", "NON_EVALUABLE", "SUFFIXES", "SUMMARY", "read", "sniff", "tau2_table"]

NAME = "tau2-bench"
SUMMARY = "tau2-bench results JSON ({timestamp, info, tasks, simulations}), or its dir layout"
MAPS = (
    "item = task_id, trial = trial, outcome = reward_info.reward within 1e-6 of 1; termination "
    "infrastructure_error (or no reward_info) is errored; group keys target (info.agent_info.llm), "
    "category (domain), user_model; a folder of run folders reads each run"
)
SUFFIXES = (".json",)

#: The terminations tau2 leaves out of its metrics (``agent_metrics.get_metrics_df``): runs that never
#: produced an evaluable rollout, errored trials here.
NON_EVALUABLE = frozenset({"infrastructure_error"})
_TOLERANCE = 1e-6
_RESULTS = "results.json"
_SIMULATIONS = "simulations"
#: Keys of a ``Results`` document: its ``info`` names the git commit it was run at.
_RESULTS_KEYS = frozenset({"info", "info.git_commit"})


def _is_results(path: Path) -> bool:
    return _RESULTS_KEYS <= file_keys(path)


def _run_folders(path: Path) -> list[Path]:
    """The run folders (each with its ``results.json``) of a folder of them, in name order."""
    try:
        return sorted(
            folder for folder in path.iterdir() if folder.is_dir() and _is_results(folder / _RESULTS)
        )
    except OSError:
        return []


def sniff(path: Path) -> bool:
    """A JSON object whose ``info`` has a ``git_commit`` (keys in any order), a run folder whose
    ``results.json`` is one, or a folder of such run folders."""
    if path.is_dir():
        return _is_results(path / _RESULTS) or bool(_run_folders(path))
    return path.is_file() and _is_results(path)


def read(path: Path, sink: TrialSink) -> None:
    """Add every simulation to ``sink`` (each run of a folder of run folders as its own input); a bad
    simulation raises (or is skipped and counted)."""
    runs = [path] if not path.is_dir() or _is_results(path / _RESULTS) else _run_folders(path)
    for run in runs:
        sink.scan_table(str(run), tau2_table(run, sink.skip_invalid, sink.detail))


def _field(data: dict[str, object], *names: str) -> object:
    value: object = data
    for name in names:
        value = value.get(name) if isinstance(value, dict) else None
    return value


def _run(path: Path) -> tuple[dict[str, object], Iterable[tuple[str, object]]]:
    """A results file's ``info`` and its (where, simulation) pairs: the file's ``simulations``, the dir
    layout's simulation files (checked against its ``simulation_index``), or that index alone."""
    if path.stat().st_size > MAX_DOCUMENT_BYTES:  # only simulations make a results file this big
        with path.open("r", encoding="utf-8-sig", errors="replace") as handle:
            info = member_value(handle, str(path), "info")
        return _checked_info(path, info), _streamed(path)
    results = load_json(path)
    if not isinstance(results, dict):
        raise EvaluationError(f"{path}: a tau2-bench results file is a JSON object with 'info'")
    info = _checked_info(path, results.get("info"))
    simulations, index = results.get("simulations"), results.get("simulation_index")
    folder = path.parent / _SIMULATIONS
    if not simulations and folder.is_dir():
        return info, _files(path, folder, index)
    if simulations is None and isinstance(index, list):
        return info, [(f"{path} simulation_index entry {n}", _from_index(e)) for n, e in enumerate(index, 1)]
    if not isinstance(simulations, list):
        raise EvaluationError(f"{path}: field 'simulations' must be a list of simulation runs")
    return info, [
        (f"{path} simulation {index + 1}", simulation) for index, simulation in enumerate(simulations)
    ]


def _checked_info(path: Path, info: object) -> dict[str, object]:
    if not isinstance(info, dict):
        raise EvaluationError(f"{path}: field 'info' must be an object (tau2's run info); got {info!r:.60}")
    return info


def _streamed(path: Path) -> Iterator[tuple[str, object]]:
    """The file's simulations, parsed one at a time."""
    with path.open("r", encoding="utf-8-sig", errors="replace") as handle:
        for index, simulation in enumerate(member_items(handle, str(path), ("simulations",)), start=1):
            yield f"{path} simulation {index}", simulation


def _files(path: Path, folder: Path, index: object) -> Iterator[tuple[str, object]]:
    """The dir layout's simulation files, in name order; files and index must name the same simulations."""
    files = sorted(folder.glob("*.json"))
    if isinstance(index, list):
        indexed = {str(entry.get("id")) for entry in index if isinstance(entry, dict)}
        on_disk = {file.stem for file in files}
        missing, extra = sorted(indexed - on_disk), sorted(on_disk - indexed)
        if missing or extra:
            said = [f"no file for {', '.join(missing[:3])}"] if missing else []
            said += [f"files not in the index: {', '.join(extra[:3])}"] if extra else []
            raise EvaluationError(
                f"{path}: field 'simulation_index' and the files of {folder} disagree (tau2's Results.load "
                f"refuses it too): {'; '.join(said)}"
            )
    for file in files:
        yield str(file), load_json(file)


def _from_index(entry: object) -> dict[str, object]:
    """A simulation index entry as the simulation fields it summarises."""
    if not isinstance(entry, dict):
        raise EvaluationError(f"expected a simulation index entry; got {entry!r:.60}")
    reward = entry.get("reward")
    return {
        "task_id": entry.get("task_id"),
        "trial": entry.get("trial"),
        "termination_reason": entry.get("termination_reason"),
        "reward_info": None if reward is None else {"reward": reward},
        "agent_cost": entry.get("agent_cost"),
        "duration": entry.get("duration"),
    }


def _trial_row(simulation: object) -> tuple[str, str | None, str | None, str | None]:
    """(case_id, trial, passed, termination_reason); passed is None for a non-evaluable run, trial
    for a simulation that has no trial number."""
    if not isinstance(simulation, dict):
        raise EvaluationError(f"expected a simulation run object; got {simulation!r:.60}")
    task_id = simulation.get("task_id")
    if isinstance(task_id, bool) or not isinstance(task_id, (int, str)) or task_id == "":
        raise EvaluationError(f"field 'task_id' must be a task id; got {task_id!r:.60}")
    trial = simulation.get("trial")
    if trial is not None and (isinstance(trial, bool) or not isinstance(trial, int) or trial < 0):
        raise EvaluationError(f"field 'trial' must be a whole number >= 0 (or null); got {trial!r:.60}")
    reason = simulation.get("termination_reason")
    if not isinstance(reason, str):
        raise EvaluationError(f"field 'termination_reason' must be a string; got {reason!r:.60}")
    reward_info = simulation.get("reward_info")
    if reason in NON_EVALUABLE or reward_info is None:
        return str(task_id), text_value(trial), None, reason
    reward = reward_info.get("reward") if isinstance(reward_info, dict) else None
    if isinstance(reward, bool) or not isinstance(reward, (int, float)) or not math.isfinite(reward):
        raise EvaluationError(f"field 'reward_info.reward' must be a number; got {reward!r:.60}")
    return str(task_id), text_value(trial), "true" if abs(reward - 1.0) <= _TOLERANCE else "false", reason


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
    from trialscore.results.trajectory import calls_text  # its Pydantic records: built on first use

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
    info, simulations = _run(path)
    target = _field(info, "agent_info", "llm") or _field(info, "agent_info", "implementation")
    groups = {
        "target": text_value(target),
        "category": text_value(_field(info, "environment_info", "domain_name")),
        "user_model": text_value(_field(info, "user_info", "llm")),
    }
    names: tuple[str, ...] = ("case_id", "trial", "passed", "termination_reason")
    names += ("tool_calls", "steps", "tokens", "cost_usd", "latency_s") if detail else ()
    columns: dict[str, list[str | None]] = {name: [] for name in names}
    where: list[str] = []
    skips = Skips(skip_invalid, "simulations")
    places: list[str] = []
    for location, simulation in simulations:
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
        places.append(location)
    numbered = [trial is not None for trial in columns["trial"]]
    if not any(numbered):  # simulations run one at a time carry no trial number: the run has no trial column
        del columns["trial"]
    elif not all(numbered):  # some numbered, some not: the unnumbered ones are bad
        for place in (place for place, known in zip(places, numbered, strict=True) if not known):
            skips.note(
                place,
                EvaluationError("field 'trial' is null while other simulations of the run are numbered"),
            )
        columns = {
            name: [v for v, known in zip(values, numbered, strict=True) if known]
            for name, values in columns.items()
        }
        where = [place for place, known in zip(where, numbered, strict=True) if known]
    rows = len(where)
    table = {**columns, **{name: [value] * rows for name, value in groups.items()}}
    return LongTable(table, tuple(where), skips.count, skips.first)
