"""lm-evaluation-harness (EleutherAI ``lm_eval``) per-sample logs as trial rows.

``lm_eval ... --log_samples --output_path DIR`` writes, per model, a folder
``DIR/<model>/`` holding ``samples_<task>_<date>.jsonl`` (one JSON object per
doc: ``doc_id``, ``doc``, ``target``, ``filter``, ``metrics`` and one key per
metric with the doc's value, e.g. ``"acc": 1.0``) and ``results_<date>.json``
(``model_name``, ``config.model_args``, and ``configs[task].metric_list``).
Input may be one samples file, one model folder, the folder above the model
folders, or a folder of such folders (one ``--output_path`` per run, the natural way to run
seeds: ``runs/seed1/<model>/``, ``runs/seed2/<model>/``...).

* Several runs of the same task (different ``--seed``, one samples file per run,
  in one model folder or in one output folder per run) are the trials of each doc:
  ``trial`` is the run's position among that (model, task)'s runs, in the order of
  the date in the file name.
* ``case_id`` is ``<task>/<doc_id>`` (a doc id is only unique within its task),
  ``category`` is the task, ``target`` is the ``model_name`` of the run's
  ``results_<date>.json`` (else of any results file in the folder, else the
  folder's name), ``run`` is the date of the run.
* The outcome is the task's primary metric: the first of its ``metric_list``
  (from the results file, else the sample's own ``metrics`` list).  ``passed``
  is true exactly when the value is 1 (full credit) and ``score`` keeps the
  value, so a non-binary metric in [0, 1] (f1, ...) can be read with
  ``--threshold``.  A value outside [0, 1] has no pass/fail reading and is an
  error; an empty value (null, NaN) is an errored trial.
* A task logged with several filters (``strict-match``, ``flexible-extract``...)
  repeats each doc once per filter; only the task's first filter (that of its
  first sample line) is read, and its name is the ``filter`` column.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trialscore.errors import EvaluationError
from trialscore.results.formats._text import first_json_object, head_text, json_lines, load_json, tree_files
from trialscore.results.tally import LongTable, Skips, text_value

if TYPE_CHECKING:
    from trialscore.results.sink import TrialSink

__all__ = ["MAPS", "NAME", "SUFFIXES", "SUMMARY", "lm_eval_table", "read", "samples_files", "sniff"]

NAME = "lm-eval"
SUMMARY = (
    "lm-evaluation-harness --log_samples output: a samples_<task>_<date>.jsonl, a model folder, "
    "or the folder above the model folders"
)
MAPS = (
    "item = <task>/<doc_id>, trial = the run's order by date among that task's samples files, "
    "outcome = primary metric (first of metric_list) == 1, score = its value; group keys target "
    "(model_name), category (task), filter, run (date)"
)
SUFFIXES = (".jsonl",)

_SAMPLES = re.compile(r"^samples_(?P<task>.+)_(?P<date>\d{4}-\d{2}-\d{2}T[0-9.\-]+)\.jsonl$")
_SAMPLE_KEYS = ("doc_id", "doc", "filter")
_COLUMNS = ("case_id", "trial", "passed", "score", "target", "category", "filter", "run")


def _looks_like_samples(path: Path) -> bool:
    """A file whose first JSON line has lm_eval's ``doc_id``, ``doc`` and ``filter`` keys."""
    head = head_text(path)
    if head is None:
        return False
    first = first_json_object(head)
    return first is not None and all(key in first for key in _SAMPLE_KEYS)


def _is_samples_file(path: Path) -> bool:
    return path.name.startswith("samples_") and path.suffix == ".jsonl" and _looks_like_samples(path)


def samples_files(path: Path) -> list[Path]:
    """The samples files of ``path``: itself, or those in the folder and the folders below it (a model
    folder, an ``--output_path``, or a folder of one ``--output_path`` per run)."""
    return tree_files(path, _is_samples_file) if path.is_dir() else [path]


def sniff(path: Path) -> bool:
    """A samples file (first line has ``doc_id``, ``doc`` and ``filter``), or a folder holding one
    in it or below it."""
    if path.is_dir():
        return bool(samples_files(path))
    return _looks_like_samples(path)


def _task_and_date(path: Path) -> tuple[str, str]:
    match = _SAMPLES.match(path.name)
    if match is None:
        return path.stem.removeprefix("samples_"), ""
    return match["task"], match["date"]


def _results(folder: Path, date: str, cache: dict[Path, dict[str, Any] | None]) -> dict[str, Any] | None:
    """The run's ``results_<date>.json`` (else the folder's first results file), parsed; None if none."""
    candidates = [folder / f"results_{date}.json"] if date else []
    candidates += sorted(folder.glob("results_*.json"))
    for candidate in candidates:
        if candidate not in cache:
            try:
                loaded = load_json(candidate)
            except (OSError, EvaluationError):
                loaded = None
            cache[candidate] = loaded if isinstance(loaded, dict) else None
        if cache[candidate] is not None:
            return cache[candidate]
    return None


def _model(results: dict[str, Any] | None, folder: Path) -> str:
    name = results.get("model_name") if results else None
    return name if isinstance(name, str) and name else folder.name


def _config_metric(results: dict[str, Any] | None, task: str) -> str | None:
    """The first metric of the task's ``metric_list`` in the results file, if it says."""
    try:
        first = results["configs"][task]["metric_list"][0]["metric"]  # type: ignore[index]
    except (KeyError, IndexError, TypeError):
        return None
    return first if isinstance(first, str) and first else None


def _outcome(sample: dict[str, Any], metric: str) -> tuple[str | None, str | None]:
    """(passed, score) text of the sample's value of ``metric``; (None, None) for an empty value."""
    if metric not in sample:
        raise EvaluationError(f"field {metric!r} (the task's primary metric) is missing")
    value = sample[metric]
    if isinstance(value, bool):
        value = float(value)
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None, None
    if not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise EvaluationError(
            f"field {metric!r} (the task's primary metric) must be a number in [0, 1] "
            f"(empty means an errored trial); got {value!r:.60}"
        )
    return ("true" if value == 1 else "false"), text_value(float(value))


def lm_eval_table(files: list[Path], skip_invalid: bool = False) -> LongTable:
    """Trial rows of lm_eval samples files (trial = order by date within each (model, task))."""
    cache: dict[Path, dict[str, Any] | None] = {}
    runs: dict[tuple[str, str], list[tuple[str, Path, dict[str, Any] | None]]] = {}
    for file in files:
        task, date = _task_and_date(file)
        results = _results(file.parent, date, cache)
        runs.setdefault((_model(results, file.parent), task), []).append((date, file, results))
    columns: dict[str, list[str | None]] = {name: [] for name in _COLUMNS}
    where: list[str] = []
    skips = Skips(skip_invalid, "samples")
    for (model, task), task_runs in runs.items():
        ordered = sorted(task_runs, key=lambda run: (run[0], run[1].name))
        for trial, (date, file, results) in enumerate(ordered):
            metric = _config_metric(results, task)
            first_filter: object = None
            for number, sample in json_lines(file):
                location = f"{file} line {number}"
                try:
                    if not isinstance(sample, dict):
                        raise EvaluationError(f"expected a sample object; got {sample!r:.60}")
                    if first_filter is None:
                        first_filter = sample.get("filter", "none")
                    if sample.get("filter", "none") != first_filter:
                        continue
                    doc_id = sample.get("doc_id")
                    if isinstance(doc_id, bool) or not isinstance(doc_id, (int, str)) or doc_id == "":
                        raise EvaluationError(f"field 'doc_id' must be a doc id; got {doc_id!r:.60}")
                    used = metric
                    if used is None:
                        listed = sample.get("metrics")
                        if not isinstance(listed, list) or not listed or not isinstance(listed[0], str):
                            raise EvaluationError(
                                "field 'metrics' must list the task's metrics (no results file names them)"
                            )
                        used = listed[0]
                    passed, score = _outcome(sample, used)
                except EvaluationError as exc:
                    skips.note(location, exc)
                    continue
                for name, value in zip(
                    _COLUMNS,
                    (f"{task}/{doc_id}", str(trial), passed, score, model, task, str(first_filter), date),
                    strict=True,
                ):
                    columns[name].append(value)
                where.append(location)
    return LongTable(columns, tuple(where), skips.count, skips.first)


def read(path: Path, sink: TrialSink) -> None:
    """Add every doc of every samples file (one file, a model folder, or the folder above) to ``sink``."""
    files = samples_files(path)
    if not files:
        raise EvaluationError(f"{path}: the folder holds no lm_eval samples_<task>_<date>.jsonl file")
    sink.scan_table(str(path), lm_eval_table(files, sink.skip_invalid))
