"""HELM run folders (stanford-crfm/helm, ``helm-run``): per-instance stats of each run.

``helm-run --suite S`` writes ``benchmark_output/runs/S/<run name>/`` per run
(``mmlu:subject=anatomy,model=openai_gpt-4o``), holding

* ``run_spec.json``: ``name``, ``adapter_spec`` (``model``, ``model_deployment``,
  ``num_train_trials``, ...), ``metric_specs``, ``groups``;
* ``per_instance_stats.json``: a JSON list of ``PerInstanceStats``,
  ``{"instance_id", "perturbation", "train_trial_index", "stats": [{"name":
  {"name": "exact_match", "split": "test"}, "count", "sum", "mean", ...}, ...]}``;
* ``scenario_state.json``: ``{"adapter_spec", "request_states": [{"instance":
  {"id", "split", ...}, "train_trial_index", "request", "result": {"success", ...}}]}``.

Input may be a run folder, its ``per_instance_stats.json``, a suite folder, or
``runs/`` or ``benchmark_output/`` above it.  Each entry of ``per_instance_stats``
is one trial row:

* ``case_id`` is ``<scenario>/<instance_id>``: HELM numbers instances within a
  scenario, so the scenario part is the run name without its model arguments
  (``mmlu:subject=anatomy/id12``); a perturbed variant gets `` [<perturbation name>]``;
* ``trial`` is ``train_trial_index`` (HELM's replications, ``--num-train-trials``);
* ``target`` is ``adapter_spec.model`` of ``run_spec.json`` (``deployment`` is its
  ``model_deployment``), ``category`` is the run's first run group (else the
  scenario, the run name before ``:``) and ``run`` the run name;
* the outcome is the run's correctness stat: the first of :data:`MAIN_STATS` that
  the run's first entry has.  Its ``mean`` (one instance, so its value) is the
  ``score``; ``passed`` is true exactly when it is 1 (these stats are 0/1 for one
  instance; a partial-credit value fails and keeps its score for ``--threshold``);
* a trial whose request failed (``scenario_state.json``: ``request_states[].result.success``
  false, or no ``result``) is **errored**: HELM scores its empty completion 0, but
  it is no answer of the model.

Each run's files are read whole with ``json`` (HELM's own readers do the same):
about 1 KB per instance and trial in ``per_instance_stats.json``, so a run of
10,000 trials takes tens of MB of memory while it is read.

>>> scenario("mmlu:subject=anatomy,method=multiple_choice_joint,model=openai_gpt-4o")
'mmlu:subject=anatomy,method=multiple_choice_joint'
>>> stat_value({"name": {"name": "exact_match", "split": "test"}, "count": 1, "sum": 1, "mean": 1.0})
1.0
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trialscore.errors import EvaluationError
from trialscore.results.formats._text import head_keys, head_text, load_json
from trialscore.results.tally import LongTable, Skips, text_value

if TYPE_CHECKING:
    from trialscore.results.sink import TrialSink

__all__ = [
    "MAIN_STATS",
    "MAPS",
    "NAME",
    "SUFFIXES",
    "SUMMARY",
    "read",
    "run_folders",
    "scenario",
    "sniff",
    "stat_value",
]

NAME = "helm"
SUMMARY = (
    "HELM run folders (benchmark_output/runs/<suite>/<run>/ with per_instance_stats.json), or above them"
)
MAPS = (
    "item = <run name without model>/instance_id (plus perturbation), trial = train_trial_index, "
    "outcome = the run's correctness stat (exact_match, quasi_exact_match, ...) == 1, score = its value; "
    "a failed request (scenario_state result.success false) is errored; group keys target "
    "(adapter_spec.model), deployment, category (run group), run"
)
SUFFIXES = (".json",)

#: Per-instance correctness stats, in the order the main one is chosen (0/1 for one instance).
MAIN_STATS = (
    "exact_match",
    "quasi_exact_match",
    "prefix_exact_match",
    "quasi_prefix_exact_match",
    "final_number_exact_match",
    "math_equiv",
    "math_equiv_chain_of_thought",
    "exact_match_indicator",
    "exact_set_match",
)
_STATS = "per_instance_stats.json"
_SPEC = "run_spec.json"
_STATE = "scenario_state.json"
_COLUMNS = ("case_id", "trial", "passed", "score", "target", "deployment", "category", "run")


def _is_run(folder: Path) -> bool:
    stats = folder / _STATS
    if not (stats.is_file() and (folder / _SPEC).is_file()):
        return False
    head = head_text(stats, 4096)
    if head is None:
        return False
    empty = head.strip().removeprefix("[").strip() == "]"
    return empty or "[].instance_id" in (head_keys(head) or ())


def _subfolders(folders: list[Path]) -> list[Path]:
    found = []
    for folder in folders:
        try:
            found.extend(sorted(child for child in folder.iterdir() if child.is_dir()))
        except OSError:
            continue
    return found


def run_folders(path: Path) -> list[Path]:
    """The run folders of ``path``: its folder (for ``per_instance_stats.json``), itself, or those
    one to three levels down (suite, ``runs/``, ``benchmark_output/``)."""
    if path.is_file():
        return [path.parent] if path.name == _STATS and _is_run(path.parent) else []
    level = [path]
    for _ in range(4):
        runs = [folder for folder in level if _is_run(folder)]
        if runs:
            return runs
        level = _subfolders(level)
        if not level:
            break
    return []


def sniff(path: Path) -> bool:
    """A ``per_instance_stats.json`` starting ``[{"instance_id":`` beside a ``run_spec.json``, or a
    folder holding such a run (itself or up to three levels down)."""
    return bool(run_folders(path))


def scenario(run_name: str) -> str:
    """The run name without its ``model=`` / ``model_deployment=`` arguments."""
    head, colon, arguments = run_name.partition(":")
    kept = [
        part for part in arguments.split(",") if part and not part.startswith(("model=", "model_deployment="))
    ]
    return f"{head}:{','.join(kept)}" if colon and kept else head


def stat_value(stat: dict[str, Any]) -> float | None:
    """A HELM ``Stat``'s mean (None when it counted nothing)."""
    count = stat.get("count")
    if count == 0:
        return None
    mean = stat.get("mean")
    if mean is None and isinstance(count, int) and count > 0 and isinstance(stat.get("sum"), (int, float)):
        mean = stat["sum"] / count
    return float(mean) if isinstance(mean, (int, float)) and not isinstance(mean, bool) else None


def _load(path: Path) -> Any:
    return load_json(path)


def _perturbation(value: object) -> str | None:
    if isinstance(value, dict):
        name = value.get("name")
        return name if isinstance(name, str) and name else "perturbed"
    return None


def _item(scope: str, instance_id: object, perturbation: object) -> str:
    name = _perturbation(perturbation)
    return f"{scope}/{instance_id} [{name}]" if name else f"{scope}/{instance_id}"


def _failed_requests(folder: Path, scope: str) -> set[tuple[str, int]]:
    """(item, train_trial_index) of every request whose result is missing or not a success."""
    path = folder / _STATE
    if not path.is_file():
        return set()
    state = _load(path)
    requests = state.get("request_states") if isinstance(state, dict) else None
    if not isinstance(requests, list):
        raise EvaluationError(f"{path}: field 'request_states' must be a list; got {requests!r:.60}")
    failed = set()
    for number, request in enumerate(requests, start=1):
        instance = request.get("instance") if isinstance(request, dict) else None
        if not isinstance(instance, dict) or not isinstance(request.get("train_trial_index"), int):
            raise EvaluationError(
                f"{path} request_states[{number - 1}]: fields 'instance' and 'train_trial_index' are needed"
            )
        result = request.get("result")
        if not isinstance(result, dict) or result.get("success") is not True:
            item = _item(scope, instance.get("id"), instance.get("perturbation"))
            failed.add((item, request["train_trial_index"]))
    return failed


def _groups(folder: Path) -> dict[str, str | None]:
    path = folder / _SPEC
    spec = _load(path)
    adapter = spec.get("adapter_spec") if isinstance(spec, dict) else None
    if not isinstance(adapter, dict):
        raise EvaluationError(f"{path}: field 'adapter_spec' must be an object; got {adapter!r:.60}")
    model = adapter.get("model") or adapter.get("model_deployment")
    if not isinstance(model, str) or not model:
        raise EvaluationError(f"{path}: field 'adapter_spec.model' must name the model; got {model!r:.60}")
    name = spec.get("name") if isinstance(spec.get("name"), str) else folder.name
    groups = spec.get("groups")
    category = groups[0] if isinstance(groups, list) and groups and isinstance(groups[0], str) else None
    return {
        "target": model,
        "deployment": text_value(adapter.get("model_deployment")),
        "category": category or name.split(":", 1)[0],
        "run": name,
    }


def _main_stat(entries: list[Any], path: Path) -> str:
    first = entries[0] if entries and isinstance(entries[0], dict) else {}
    names = {
        stat["name"].get("name") for stat in first.get("stats") or [] if isinstance(stat.get("name"), dict)
    }
    for name in MAIN_STATS:
        if name in names:
            return name
    raise EvaluationError(
        f"{path} entry 1: field 'stats' has no correctness stat (one of {', '.join(MAIN_STATS)}) "
        "to pass or fail on"
    )


def _entry(entry: object, metric: str, scope: str) -> tuple[str, int, float]:
    """(item, train_trial_index, value of ``metric``) of one PerInstanceStats entry."""
    if not isinstance(entry, dict):
        raise EvaluationError(f"expected a per-instance stats object; got {entry!r:.60}")
    instance_id = entry.get("instance_id")
    if not isinstance(instance_id, str) or not instance_id:
        raise EvaluationError(f"field 'instance_id' must be an instance id; got {instance_id!r:.60}")
    trial = entry.get("train_trial_index")
    if isinstance(trial, bool) or not isinstance(trial, int) or trial < 0:
        raise EvaluationError(f"field 'train_trial_index' must be a whole number >= 0; got {trial!r:.60}")
    stats = entry.get("stats")
    if not isinstance(stats, list):
        raise EvaluationError(f"field 'stats' must be a list of stats; got {stats!r:.60}")
    for stat in stats:
        name = stat.get("name") if isinstance(stat, dict) else None
        if isinstance(name, dict) and name.get("name") == metric:
            value = stat_value(stat)
            if value is None or not math.isfinite(value) or not 0 <= value <= 1:
                raise EvaluationError(f"field 'stats.{metric}' must have a mean in [0, 1]; got {stat!r:.80}")
            return _item(scope, instance_id, entry.get("perturbation")), trial, value
    raise EvaluationError(f"field 'stats' has no {metric!r} stat (the run's correctness stat)")


def helm_table(folders: list[Path], skip_invalid: bool = False) -> LongTable:
    """Trial rows of HELM run folders."""
    columns: dict[str, list[str | None]] = {name: [] for name in _COLUMNS}
    where: list[str] = []
    skips = Skips(skip_invalid, "entries")
    for folder in folders:
        groups = _groups(folder)
        scope = scenario(groups["run"] or folder.name)
        failed = _failed_requests(folder, scope)
        path = folder / _STATS
        entries = _load(path)
        if not isinstance(entries, list):
            raise EvaluationError(f"{path}: per_instance_stats.json is a JSON list of per-instance stats")
        metric = _main_stat(entries, path) if entries else MAIN_STATS[0]
        for number, entry in enumerate(entries, start=1):
            location = f"{path} entry {number}"
            try:
                item, trial, value = _entry(entry, metric, scope)
            except EvaluationError as exc:
                skips.note(location, exc)
                continue
            errored = (item, trial) in failed
            passed = None if errored else ("true" if value == 1 else "false")
            values = (item, str(trial), passed, None if errored else text_value(value), *groups.values())
            for name, text in zip(_COLUMNS, values, strict=True):
                columns[name].append(text)
            where.append(f"{location} (instance {item}, train_trial_index {trial})")
    return LongTable(columns, tuple(where), skips.count, skips.first)


def read(path: Path, sink: TrialSink) -> None:
    """Add every per-instance entry of every run folder under ``path`` to ``sink``."""
    folders = run_folders(path)
    if not folders:
        raise EvaluationError(
            f"{path}: holds no HELM run folder (per_instance_stats.json with run_spec.json)"
        )
    sink.scan_table(str(path), helm_table(folders, sink.skip_invalid))
