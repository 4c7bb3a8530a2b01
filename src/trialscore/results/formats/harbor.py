"""Harbor jobs (laude-institute/harbor, the Terminal-Bench 2 harness): one ``result.json`` per trial.

``harbor run`` writes a job folder holding the job's own ``result.json``
(``JobResult``: ``n_total_trials``, ``stats``; not a trial) and one folder per
trial, ``<task>__<short id>/``, whose ``result.json`` is a ``TrialResult``
(``model_dump_json(indent=4)``)::

    {"id": "...", "task_name": "fix-git", "trial_name": "fix-git__Ab3dE7f",
     "trial_uri": "file:///...", "task_id": {...}, "source": "terminal-bench",
     "agent_info": {"name": "terminus-2", "version": "2.0.0",
                    "model_info": {"name": "claude-sonnet-4", "provider": "anthropic"}},
     "verifier_result": {"rewards": {"reward": 1.0}},
     "exception_info": null, "started_at": "...", "finished_at": "...", ...}

Harbor 0.26 writes ``"schema_version": 1`` first and ``reward_valid`` last; a result is
recognised by its keys (``task_name`` and ``trial_name``), in any order, and a
``schema_version`` other than 1 is an error naming that field.  A job may run several
agents (``agents:`` in its config): each agent (and model) is its own target.

Input may be one trial's ``result.json``, a trial folder, a job folder, or a
folder of job folders.  Each trial result is one trial row:

* ``case_id`` is ``task_name``; ``trial`` is the trial's order by ``started_at``
  (then ``trial_name``) among the trials of that (target, task) read together:
  Harbor numbers no attempts;
* ``target`` is ``agent_info.name`` with the model in parentheses
  (``terminus-2 (anthropic/claude-sonnet-4)``; ``provider/name`` of
  ``agent_info.model_info``); ``agent``, ``model`` and ``dataset`` (``source``) are
  group keys too;
* the outcome is the verifier's ``reward`` (``verifier_result.rewards.reward``, or
  the only reward when there is one): ``passed`` is true exactly when it is 1 and
  ``score`` keeps a value in [0, 1];
* a trial whose reward Harbor calls invalid is **errored**.  Harbor 0.26 writes its
  word in each result (``reward_valid``: the verifier gave rewards and every recorded
  exception's policy, ``policy_override`` included, keeps them), and that is used.
  Older results (no ``reward_valid``) follow the error policy of Harbor 0.25
  (``harbor/models/trial/error_policy.py``): a trial with ``exception_info`` is errored
  unless the agent exhausted its budget (``AgentTimeoutError``, context or output
  length exceeded) or refused the task, because the agent under evaluation ended
  those itself.  A finished trial with no reward is errored too;
* a trial with neither ``finished_at`` nor an exception is still running: it is
  not a trial, and a note counts it.

With trial detail, ``tokens`` (``n_input_tokens`` + ``n_output_tokens``) and ``cost_usd`` come
from the trial's ``agent_result``, and the trajectory from the ATIF file Harbor's agents write
beside the result, ``<trial>/agent/trajectory.json`` (``Trajectory``: ``steps`` of source
``system``, ``user`` or ``agent``): the tool calls are those of the agent's steps
(``function_name``, ``arguments``), each with the ``content`` of the observation result whose
``source_call_id`` is its ``tool_call_id`` as its ``result``; ``steps`` is the number of agent
steps; tokens and cost fall back on its ``final_metrics`` (``total_prompt_tokens`` +
``total_completion_tokens``, ``total_cost_usd``).  A trial without the file has its tool calls
and steps unknown.

>>> target("terminus-2", {"name": "gpt-5", "provider": "openai"}), target("oracle", None)
('terminus-2 (openai/gpt-5)', 'oracle')
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trialscore._words import plural
from trialscore.errors import EvaluationError
from trialscore.results.formats._text import file_keys, load_json
from trialscore.results.tally import LongTable, Skips, text_value

if TYPE_CHECKING:
    from trialscore.results.sink import TrialSink

__all__ = [
    "MAPS",
    "NAME",
    "REWARD_VALID",
    "SUFFIXES",
    "SUMMARY",
    "model",
    "read",
    "sniff",
    "target",
    "trial_files",
]

NAME = "harbor"
SUMMARY = (
    "Harbor (Terminal-Bench 2) trial results: a job folder, a folder of jobs, or one trial's result.json"
)
MAPS = (
    "item = task_name, trial = order by started_at within (target, task), outcome = verifier reward == 1, "
    "score = reward; exception_info is errored (except agent timeouts / refusals Harbor grades); group keys "
    "target (agent (provider/model)), agent, model, dataset (source)"
)
SUFFIXES = (".json",)

#: Exception types after which Harbor's error policy keeps the reward valid (the agent ended the trial).
REWARD_VALID = frozenset(
    {
        "AgentTimeoutError",
        "ContextWindowExceededError",
        "OutputTokenExceededError",
        "ContextLengthExceededError",
        "OutputLengthExceededError",
        "AgentSafetyRefusalError",
        "ContentPolicyViolationError",
    }
)
_RESULT = "result.json"
#: Keys every ``TrialResult`` has had, whatever its ``schema_version`` and key order.
_TRIAL_KEYS = frozenset({"task_name", "trial_name"})
_COLUMNS = ("case_id", "trial", "passed", "score", "target", "agent", "model", "dataset", "exception")
#: The trajectory columns read with trial detail.
_EFFORT = ("tool_calls", "steps", "tokens", "cost_usd")


def model(model_info: object) -> str | None:
    """``provider/name`` of an ``agent_info.model_info`` (None without a name)."""
    if not isinstance(model_info, dict) or not isinstance(model_info.get("name"), str):
        return None
    provider = model_info.get("provider")
    return (
        f"{provider}/{model_info['name']}" if isinstance(provider, str) and provider else model_info["name"]
    )


def target(agent: str, model_info: object) -> str:
    """``agent (provider/model)``, or the agent's name alone when no model is named."""
    name = model(model_info)
    return agent if name is None else f"{agent} ({name})"


def _is_trial_result(path: Path) -> bool:
    return _TRIAL_KEYS <= file_keys(path)


def _subfolders(path: Path) -> list[Path]:
    try:
        return sorted(child for child in path.iterdir() if child.is_dir())
    except OSError:
        return []


def trial_files(path: Path) -> list[Path]:
    """The trial ``result.json`` files of a file, a trial folder, a job folder or a folder of jobs."""
    if not path.is_dir():
        return [path]
    if (path / _RESULT).is_file() and _is_trial_result(path / _RESULT):
        return [path / _RESULT]
    for depth in (1, 2):
        folders = (
            _subfolders(path)
            if depth == 1
            else [sub for job in _subfolders(path) for sub in _subfolders(job)]
        )
        found = [folder / _RESULT for folder in folders if (folder / _RESULT).is_file()]
        found = [file for file in found if _is_trial_result(file)]
        if found:
            return found
    return []


def sniff(path: Path) -> bool:
    """A JSON object starting ``{"id": ..., "task_name": ..., "trial_name": ...``, or a folder holding
    one as ``result.json`` itself, one level down (a job) or two (a folder of jobs)."""
    if path.is_dir():
        return bool(trial_files(path))
    return path.is_file() and _is_trial_result(path)


def _text(data: dict[str, Any], name: str, where: str) -> str:
    value = data.get(name)
    if not isinstance(value, str) or not value:
        raise EvaluationError(f"{where}: field {name!r} must be non-empty text; got {value!r:.60}")
    return value


def _object(data: dict[str, Any], name: str, where: str) -> dict[str, Any] | None:
    value = data.get(name)
    if value is not None and not isinstance(value, dict):
        raise EvaluationError(f"{where}: field {name!r} must be an object or null; got {value!r:.60}")
    return value


def _reward(verifier: dict[str, Any] | None, where: str) -> float | None:
    """The trial's reward, or None when the verifier gave none."""
    rewards = verifier.get("rewards") if verifier is not None else None
    if rewards is None or rewards == {}:
        return None
    if not isinstance(rewards, dict):
        raise EvaluationError(
            f"{where}: field 'verifier_result.rewards' must be an object; got {rewards!r:.60}"
        )
    if "reward" in rewards:
        name = "reward"
    elif len(rewards) == 1:
        name = next(iter(rewards))
    else:
        raise EvaluationError(
            f"{where}: field 'verifier_result.rewards' has several rewards and none named 'reward'; "
            f"got {sorted(rewards)!r:.60}"
        )
    value = rewards[name]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise EvaluationError(
            f"{where}: field 'verifier_result.rewards.{name}' must be a number; got {value!r:.60}"
        )
    return float(value)


def _reward_valid(result: dict[str, Any], kind: str | None, where: str) -> bool:
    """Harbor's word on the reward (``reward_valid``, written since 0.26), else its older error policy."""
    version = result.get("schema_version", 1)
    if version != 1:
        raise EvaluationError(
            f"{where}: field 'schema_version' is {version!r:.20}; this reader knows Harbor's trial result "
            "schema version 1 (Harbor 0.25-0.26): the format changed, read it with a newer trialscore"
        )
    if "reward_valid" not in result:
        return kind is None or kind in REWARD_VALID
    valid = result["reward_valid"]
    if not isinstance(valid, bool):
        raise EvaluationError(f"{where}: field 'reward_valid' must be true or false; got {valid!r:.60}")
    return valid


def _trial(result: object, where: str) -> dict[str, str | None] | None:
    """One trial's row values (``started_at`` included for ordering); None for a trial still running."""
    if not isinstance(result, dict):
        raise EvaluationError(f"{where}: a Harbor trial result is a JSON object; got {result!r:.60}")
    task = _text(result, "task_name", where)
    agent_info = _object(result, "agent_info", where)
    if agent_info is None:
        raise EvaluationError(f"{where}: field 'agent_info' must be an object; got None")
    agent = _text(agent_info, "name", f"{where} agent_info")
    model_info = _object(agent_info, "model_info", f"{where} agent_info")
    exception = _object(result, "exception_info", where)
    kind = None
    if exception is not None:
        kind = _text(exception, "exception_type", f"{where} exception_info")
    if kind is None and result.get("finished_at") is None:
        return None
    reward = _reward(_object(result, "verifier_result", where), where)
    graded = reward is not None and _reward_valid(result, kind, where)
    started = result.get("started_at")
    return {
        "case_id": task,
        "passed": ("true" if reward == 1 else "false") if graded else None,
        "score": text_value(reward) if graded and reward is not None and 0 <= reward <= 1 else None,
        "target": target(agent, model_info),
        "agent": agent,
        "model": model(model_info),
        "dataset": text_value(result.get("source")),
        "exception": kind,
        "started_at": started if isinstance(started, str) else None,
        "trial_name": text_value(result.get("trial_name")),
    }


def _sum(*parts: object) -> str | None:
    """The sum of counts as text, None unless every part is a whole number."""
    if not all(isinstance(part, int) and not isinstance(part, bool) for part in parts):
        return None
    return text_value(sum(parts))  # type: ignore[arg-type]


def _atif(path: Path) -> tuple[str | None, str | None, str | None, str | None]:
    """(tool_calls as JSON text, steps, tokens, cost) of an ATIF trajectory file; all None without it."""
    from trialscore.results.trajectory import calls_text  # its Pydantic records: built on first use

    if not path.is_file():
        return None, None, None, None
    trajectory = load_json(path)
    steps = trajectory.get("steps") if isinstance(trajectory, dict) else None
    if not isinstance(steps, list):
        raise EvaluationError(f"{path}: field 'steps' must be a list of steps; got {steps!r:.60}")
    agent = [step for step in steps if isinstance(step, dict) and step.get("source") == "agent"]
    results: dict[object, object] = {}
    for step in steps:
        observation = step.get("observation") if isinstance(step, dict) else None
        for result in (observation or {}).get("results") or () if isinstance(observation, dict) else ():
            if isinstance(result, dict) and result.get("source_call_id") is not None:
                results[result["source_call_id"]] = result.get("content")
    made = [
        {"name": call.get("function_name"), "arguments": call.get("arguments"),
         "result": results.get(call.get("tool_call_id"))}
        for step in agent for call in step.get("tool_calls") or () if isinstance(call, dict)
    ]  # fmt: skip
    try:
        calls = calls_text(made)
    except EvaluationError as exc:
        raise EvaluationError(f"{path}: {exc}") from exc
    final = trajectory.get("final_metrics") if isinstance(trajectory, dict) else None
    final = final if isinstance(final, dict) else {}
    tokens = _sum(final.get("total_prompt_tokens"), final.get("total_completion_tokens"))
    return calls, str(len(agent)), tokens, text_value(final.get("total_cost_usd"))


def _effort(result: dict[str, Any], file: Path) -> dict[str, str | None]:
    """One trial's trajectory columns: its agent result's tokens and cost, its ATIF trajectory's calls."""
    calls, steps, tokens, cost = _atif(file.parent / "agent" / "trajectory.json")
    agent = result.get("agent_result")
    agent = agent if isinstance(agent, dict) else {}
    own_tokens = _sum(agent.get("n_input_tokens"), agent.get("n_output_tokens"))
    own_cost = agent.get("cost_usd")
    return {
        "tool_calls": calls,
        "steps": steps,
        "tokens": own_tokens if own_tokens is not None else tokens,
        "cost_usd": text_value(own_cost) if own_cost is not None else cost,
    }


def harbor_table(
    files: list[Path], skip_invalid: bool = False, detail: bool = False
) -> tuple[LongTable, int]:
    """Trial rows of Harbor trial results, and how many trials were still running (not trials); with
    ``detail``, each trial's trajectory columns too."""
    rows: list[tuple[dict[str, str | None], str]] = []
    running = 0
    skips = Skips(skip_invalid, "trial results")
    for file in files:
        try:
            result = load_json(file)
            row = _trial(result, str(file))
            if row is not None and detail:
                row.update(_effort(result, file))  # type: ignore[arg-type]
        except EvaluationError as exc:
            skips.note(None, exc)  # the message names the file
            continue
        if row is None:
            running += 1
        else:
            rows.append((row, f"{file} (task {row['case_id']})"))
    rows.sort(
        key=lambda pair: (
            pair[0]["started_at"] is None,
            pair[0]["started_at"] or "",
            pair[0]["trial_name"] or "",
        )
    )
    seen: dict[tuple[str | None, str | None], int] = {}
    names = _COLUMNS + (_EFFORT if detail else ())
    columns: dict[str, list[str | None]] = {name: [] for name in names}
    for row, _ in rows:
        key = (row["target"], row["case_id"])
        row["trial"] = str(seen.get(key, 0))
        seen[key] = seen.get(key, 0) + 1
        for name in names:
            columns[name].append(row[name])
    return LongTable(columns, tuple(where for _, where in rows), skips.count, skips.first), running


def read(path: Path, sink: TrialSink) -> None:
    """Add every trial result of a job folder (or a trial, or a folder of jobs) to ``sink``."""
    files = trial_files(path)
    if not files:
        raise EvaluationError(f"{path}: the folder holds no Harbor trial result (<trial>/result.json)")
    table, running = harbor_table(files, sink.skip_invalid, sink.detail)
    sink.scan_table(str(path), table)
    if running:
        still = "is still" if running == 1 else "are still"
        sink.note(
            f"{path}: {plural(running, 'trial')} with neither finished_at nor exception_info {still} running"
        )
