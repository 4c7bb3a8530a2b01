"""deepeval (``confident-ai/deepeval``) test runs: the ``TestRun`` JSON it saves per run.

deepeval serialises its ``TestRun`` model (``model_dump(by_alias=True, exclude_none=True)``)
to ``test_run_<YYYYMMDD_HHMMSS>.json`` in ``DEEPEVAL_RESULTS_FOLDER`` (or
``DisplayConfig(results_folder=...)``) after every run, and to ``.deepeval/.latest_run_full.json``
(``.deepeval/.latest_test_run.json`` holds it under ``testRunData``)::

    {"testFile": "test_app.py",
     "testCases": [{"name": "capital", "input": "...", "actualOutput": "...", "success": true,
                    "metricsData": [{"name": "Correctness", "threshold": 0.5, "success": true,
                                     "score": 1.0, "error": null, ...}], "order": 0, ...}],
     "conversationalTestCases": [...], "hyperparameters": {"model": "gpt-4.1", ...}, ...}

Each test case (``testCases`` and ``conversationalTestCases``) is one trial row:

* ``case_id`` is the test case's ``name`` (else its ``input``); ``deepeval test run --repeat N``
  (pytest-repeat) names the repeats ``test_x[1-N]`` ... ``test_x[N-N]``: in a run with a
  ``testFile`` that suffix is dropped, so the repeats are trials of ``test_x``;
* ``passed`` is ``success``; a metric with an ``error`` (deepeval keeps it with
  ``ignore_errors``) makes the trial **errored**, as does a ``success`` of null (never
  evaluated); flaky metrics (``flaky: true``) decide nothing in deepeval and are ignored here;
* ``score`` is the metric's score when the test case has exactly one metric that counts;
* ``target`` is ``hyperparameters.model``, else the run's ``identifier``, else the folder's
  name (runs read from a folder) or the file's stem; ``category`` is ``metadata.category``;
* ``trial`` is the order of appearance of the (target, item) pair: test cases by their ``order``
  within a run, runs by file name (``test_run_<time>``: the order they ran).

A folder is read as its ``test_run_*.json`` files, else as its ``.latest_run_full.json`` (a
``.deepeval`` folder): the other files there hold the same run again.

>>> base_name("test_flaky[2-3]"), base_name("test_x[golden0-1-3]"), base_name("capital")
('test_flaky', 'test_x[golden0]', 'capital')
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trialscore.errors import EvaluationError
from trialscore.results.formats._text import file_keys, load_json
from trialscore.results.tally import LongTable, Skips, text_value

if TYPE_CHECKING:
    from trialscore.results.sink import TrialSink

__all__ = ["MAPS", "NAME", "SUFFIXES", "SUMMARY", "base_name", "deepeval_table", "read", "run_files", "sniff"]

NAME = "deepeval"
SUMMARY = (
    "deepeval test runs (test_run_<time>.json in DEEPEVAL_RESULTS_FOLDER, .deepeval/.latest_run_full.json), "
    "or a folder of them"
)
MAPS = (
    "item = test case name (else input; --repeat suffix [i-N] dropped), trial = order of the "
    "(target, test case) pair over the runs in file-name order, outcome = success (a metric error = "
    "errored), score = the one metric's score; group keys target (hyperparameters.model, else "
    "identifier, else folder or file name), category (metadata.category)"
)
SUFFIXES = (".json",)

#: Keys of a ``TestRun`` beside its test case lists (exclude_none drops those it lacks), perhaps
#: under ``testRunData``.
_RUN_KEYS = frozenset({"testFile", "testPassed", "testFailed", "metricsScores", "runDuration"})
#: pytest-repeat's parameter id ``<i>-<N>``, alone or after other parameters.
_REPEAT = re.compile(r"^(?P<base>.+?)\[(?:(?P<params>.+)-)?(?P<i>\d+)-(?P<n>\d+)\]$")
_LATEST = (".latest_run_full.json", ".latest_test_run.json")
_COLUMNS = ("case_id", "trial", "passed", "score", "target", "category")


def base_name(name: str) -> str:
    """A test case name without pytest-repeat's ``[i-N]`` (kept: any other parameters)."""
    match = _REPEAT.match(name)
    if match is None or not 1 <= int(match["i"]) <= int(match["n"]):
        return name
    return match["base"] + (f"[{match['params']}]" if match["params"] else "")


def _is_run(path: Path) -> bool:
    """A JSON object with a test run's lists and one of its tallies or a metric result, in any order."""
    keys = {key.removeprefix("testRunData.") for key in file_keys(path, depth=4)}
    lists = {"testCases", "conversationalTestCases"} & keys
    return bool(lists) and any(key in _RUN_KEYS or key.endswith(".[].metricsData") for key in keys)


def _natural(path: Path) -> list[object]:
    """Sort key: ``test_run_<time>_2`` before ``test_run_<time>_10``."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", path.name)]


def run_files(path: Path) -> list[Path]:
    """The test runs of ``path``: the file itself; in a folder its ``test_run_*.json`` files, else its
    ``.latest_run_full.json`` (else ``.latest_test_run.json``)."""
    if not path.is_dir():
        return [path]
    try:
        found = [file for file in path.glob("test_run_*.json") if file.is_file() and _is_run(file)]
    except OSError:
        return []
    if found:
        return sorted(found, key=_natural)
    latest = [path / name for name in _LATEST if (path / name).is_file() and _is_run(path / name)]
    return latest[:1]


def sniff(path: Path) -> bool:
    """A JSON object starting ``{"testFile"`` / ``{"testCases"`` (perhaps under ``"testRunData"``),
    or a folder holding such ``test_run_*.json`` files or a ``.latest_run_full.json``."""
    if path.is_dir():
        return bool(run_files(path))
    return _is_run(path)


def _load(path: Path) -> dict[str, Any]:
    document = load_json(path)
    if isinstance(document, dict) and "testRunData" in document:
        document = document["testRunData"]
    if not isinstance(document, dict):
        raise EvaluationError(f"{path}: a deepeval test run is a JSON object; got {document!r:.60}")
    return document


def _run_target(run: dict[str, Any], fallback: str) -> str:
    hyperparameters = run.get("hyperparameters")
    model = hyperparameters.get("model") if isinstance(hyperparameters, dict) else None
    for value in (model, run.get("identifier")):
        if isinstance(value, str) and value:
            return value
    return fallback


def _cases(path: Path, run: dict[str, Any]) -> list[tuple[str, object]]:
    """(where, test case) of the run's single-turn then conversational test cases, each list by
    ``order``; ``where`` names the file and the case's position in its list."""
    cases: list[tuple[str, object]] = []
    for field, label in (("testCases", "test case"), ("conversationalTestCases", "conversational test case")):
        listed = run.get(field, [])
        if not isinstance(listed, list):
            raise EvaluationError(f"{path}: field {field!r} must be a list of test cases; got {listed!r:.60}")
        numbered = [(f"{path} {label} {index + 1}", case) for index, case in enumerate(listed)]
        if all(isinstance(case, dict) and isinstance(case.get("order"), int) for case in listed):
            numbered.sort(key=lambda pair: pair[1]["order"])
        cases.extend(numbered)
    return cases


#: The scorer of a test case's own success (every metric passed), beside each metric when there are several.
SUCCESS = "success"

Judgement = tuple[str | None, str | None]


def _score_text(metric: dict[str, Any]) -> str | None:
    score = metric.get("score")
    in_unit = isinstance(score, (int, float)) and not isinstance(score, bool) and 0 <= score <= 1
    return text_value(score) if in_unit else None


def _outcome(case: object, repeats: bool) -> tuple[str, str | None, dict[str, Judgement]]:
    """(item, category, scorer -> (passed, score)) of one test case: its own success, and each metric
    that counts by name; passed is None for an errored trial."""
    if not isinstance(case, dict):
        raise EvaluationError(f"expected a test case object; got {case!r:.60}")
    name = case.get("name") or case.get("input")
    if not isinstance(name, str) or not name:
        raise EvaluationError(
            f"field 'name' must be the test case's name (or 'input' its input); got {name!r:.60}"
        )
    metrics = case.get("metricsData") or []
    if not isinstance(metrics, list) or not all(isinstance(metric, dict) for metric in metrics):
        raise EvaluationError(f"field 'metricsData' must be a list of metric objects; got {metrics!r:.60}")
    counted = [metric for metric in metrics if metric.get("flaky") is not True]
    success = case.get("success")
    if success is not None and not isinstance(success, bool):
        raise EvaluationError(f"field 'success' must be true, false or null; got {success!r:.60}")
    errored = success is None or any(metric.get("error") for metric in counted)
    judged: dict[str, Judgement] = {
        SUCCESS: (
            None if errored else ("true" if success else "false"),
            _score_text(counted[0]) if len(counted) == 1 and not errored else None,
        )
    }
    for index, metric in enumerate(counted):
        label = metric.get("name")
        if not isinstance(label, str) or not label:
            raise EvaluationError(
                f"field 'metricsData[{index}].name' must name the metric; got {label!r:.60}"
            )
        passed = metric.get("success")
        if success is None or metric.get("error"):
            judged[label] = (None, None)
        elif isinstance(passed, bool):
            judged[label] = ("true" if passed else "false", _score_text(metric))
        else:
            raise EvaluationError(
                f"field 'metricsData[{index}].success' must be true or false; got {passed!r:.60}"
            )
    metadata = case.get("metadata")
    category = metadata.get("category") if isinstance(metadata, dict) else None
    return (
        base_name(name) if repeats else name,
        category if isinstance(category, str) and category else None,
        judged,
    )


def deepeval_table(files: list[Path], fallback: str | None = None, skip_invalid: bool = False) -> LongTable:
    """Trial rows of deepeval test runs, in the order given; ``fallback`` is the target of runs that
    name no model or identifier (default: each file's stem).  When a test case has several metrics,
    each metric is its own scorer beside the test case's own ``success``."""
    cases: list[tuple[str, str, str, str | None, dict[str, Judgement]]] = []
    skips = Skips(skip_invalid, "test cases")
    for path in files:
        run = _load(path)
        target = _run_target(run, fallback or path.stem.lstrip(".") or path.name)
        repeats = isinstance(run.get("testFile"), str)
        for location, case in _cases(path, run):
            try:
                item, category, judged = _outcome(case, repeats)
            except EvaluationError as exc:
                skips.note(location, exc)
                continue
            cases.append((location, target, item, category, judged))
    several = any(len(judged) > 2 for *_, judged in cases)
    columns: dict[str, list[str | None]] = {name: [] for name in (*_COLUMNS, "scorer")}
    where: list[str] = []
    seen: dict[tuple[str, str], int] = {}
    for location, target, item, category, judged in cases:
        trial = seen.get((target, item), 0)
        seen[(target, item)] = trial + 1
        for scorer, (passed, score) in judged.items() if several else [(SUCCESS, judged[SUCCESS])]:
            values = (item, str(trial), passed, score, target, category, scorer)
            for name, value in zip(columns, values, strict=True):
                columns[name].append(value)
            where.append(f"{location} ({item!r:.60}, {target}{f', {scorer}' if several else ''})")
    if not several:
        del columns["scorer"]
    if not any(value is not None for value in columns["category"]):
        del columns["category"]
    return LongTable(columns, tuple(where), skips.count, skips.first)


def read(path: Path, sink: TrialSink) -> None:
    """Add every test case of the run (one file, or a folder of runs) to ``sink``."""
    files = run_files(path)
    if not files:
        raise EvaluationError(
            f"{path}: the folder holds no deepeval test_run_*.json or .latest_run_full.json"
        )
    fallback = (path.name.lstrip(".") or path.name) if path.is_dir() else None
    sink.scan_table(str(path), deepeval_table(files, fallback, sink.skip_invalid))
