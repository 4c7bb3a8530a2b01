"""SWE-bench run reports: the ``<model>.<run_id>.json`` that ``swebench.harness.run_evaluation`` writes.

``make_run_report`` (``swebench/harness/reporting.py``) writes one JSON object per
run, named ``<model_name_or_path with / as __>.<run_id>.json``::

    {"total_instances": 5, "submitted_instances": 4, "completed_instances": 3,
     "resolved_instances": 2, "unresolved_instances": 1, ..., "error_instances": 1,
     "completed_ids": [...], "incomplete_ids": [...], "empty_patch_ids": [...],
     "submitted_ids": [...], "resolved_ids": [...], "unresolved_ids": [...],
     "infra_failure_ids": [...], "error_ids": [...], "schema_version": 2}

Each report is one run, so one trial of each instance it names:

* ``case_id`` is the instance id; ``category`` is the repository the id names
  (``django__django-11099`` -> ``django/django``);
* ``passed`` is true for ``resolved_ids``, false for ``unresolved_ids`` and
  ``empty_patch_ids`` (the model's own failures);
* ``error_ids`` (the harness could not evaluate the patch) and ``infra_failure_ids``
  (the harness's post-hoc "environment broke" signature, listed besides
  ``unresolved_ids``) are **errored** trials, never failures;
* ``incomplete_ids`` (no prediction was submitted) are not trials: they are counted
  in a note, not scored;
* ``target`` is the model from the file name and ``run`` the run id: the run id is
  the part after the last dot of the file's stem (``gpt-4.1.run-3`` -> target
  ``gpt-4.1``, run ``run-3``), so a run id with a dot in it is read as part of the
  model;  a folder of reports gives ``trial`` as the order of each model's reports
  by run id.

>>> name_fields("openai__gpt-4.1.seed-0")
('openai__gpt-4.1', 'seed-0')
>>> repository("astropy__astropy-12907")
'astropy/astropy'
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from trialscore.errors import EvaluationError
from trialscore.results.formats._text import file_keys, load_json, member_files
from trialscore.results.tally import LongTable

if TYPE_CHECKING:
    from trialscore.results.sink import TrialSink

__all__ = [
    "MAPS",
    "NAME",
    "SCHEMA_VERSIONS",
    "SUFFIXES",
    "SUMMARY",
    "name_fields",
    "read",
    "report_files",
    "repository",
    "sniff",
    "swe_bench_table",
]

NAME = "swe-bench"
SUMMARY = "SWE-bench run reports (<model>.<run_id>.json of swebench run_evaluation), or a folder of them"
MAPS = (
    "item = instance id, one trial per report (trial = order of the model's reports by run id in a folder), "
    "outcome = resolved_ids pass, unresolved_ids / empty_patch_ids fail, error_ids / infra_failure_ids "
    "errored, "
    "incomplete_ids not trials (noted); group keys target (model, from the file name), run (run id), "
    "category (repository)"
)
SUFFIXES = (".json",)

#: How ``json.dumps(report, indent=4)`` starts: the two first counts of every schema version.
#: Keys every run report has.
_REPORT_KEYS = frozenset({"total_instances", "submitted_instances"})
_INSTANCE = re.compile(r"^(?P<owner>[^_]+(?:_[^_]+)*?)__(?P<repo>.+)-\d+$")
#: (id list, its count field, outcome: "true" / "false" / None for errored), in precedence order.
_LISTS: tuple[tuple[str, str, str | None], ...] = (
    ("error_ids", "error_instances", None),
    ("infra_failure_ids", "infra_failure_instances", None),
    ("resolved_ids", "resolved_instances", "true"),
    ("unresolved_ids", "unresolved_instances", "false"),
    ("empty_patch_ids", "empty_patch_instances", "false"),
)
_REQUIRED = ("resolved_ids", "unresolved_ids", "error_ids")
#: Lists an instance may be in together: the infrastructure flag is set besides the outcome list.
_OVERLAPS = {
    frozenset({"infra_failure_ids", "unresolved_ids"}),
    frozenset({"infra_failure_ids", "error_ids"}),
}
_COLUMNS = ("case_id", "trial", "passed", "target", "run", "category")


def name_fields(stem: str) -> tuple[str, str | None]:
    """(target, run id) of a report's file stem: the run id follows the last dot."""
    model, dot, run = stem.rpartition(".")
    return (model, run) if dot and model and run else (stem, None)


def repository(instance_id: str) -> str | None:
    """The ``owner/repo`` a SWE-bench instance id names (None for another kind of id)."""
    match = _INSTANCE.match(instance_id)
    return f"{match['owner']}/{match['repo']}" if match else None


def _is_report(path: Path) -> bool:
    return _REPORT_KEYS <= file_keys(path, 4096)


def report_files(path: Path) -> list[Path]:
    """``path`` itself, or the run reports directly in the folder (sorted by name)."""
    return member_files(path, "*.json", _is_report)


def sniff(path: Path) -> bool:
    """A JSON object starting ``{"total_instances": N, "submitted_instances": N,``, or a folder of them."""
    return bool(report_files(path)) if path.is_dir() else path.is_file() and _is_report(path)


#: The ``schema_version`` of the run reports this reader follows (none: the reports before it).
SCHEMA_VERSIONS = (None, 2)


def _drift(report: dict[str, object]) -> str:
    """What to add to an error about a report of a schema version this reader does not know."""
    version = report.get("schema_version")
    if version in SCHEMA_VERSIONS:
        return ""
    return (
        f" (the report has schema_version {version!r:.20}; trialscore reads SWE-bench run reports of "
        "schema_version 2 (swebench 3.0.3 to 5.0.2) and those before it)"
    )


def _outcomes(report: object, where: str) -> tuple[dict[str, str | None], list[str]]:
    """Instance id -> passed text (None = errored), and the incomplete ids, of one report."""
    if not isinstance(report, dict):
        raise EvaluationError(f"{where}: a SWE-bench run report is a JSON object; got {report!r:.60}")
    outcomes: dict[str, str | None] = {}
    listed: dict[str, str] = {}
    for field, count_field, outcome in _LISTS:
        ids = report.get(field)
        if ids is None and field not in _REQUIRED:
            continue
        if not isinstance(ids, list) or not all(isinstance(one, str) and one for one in ids):
            raise EvaluationError(
                f"{where}: field {field!r} must be a list of instance ids; got {ids!r:.60}{_drift(report)}"
            )
        count = report.get(count_field)
        if count is not None and count != len(ids):
            raise EvaluationError(
                f"{where}: field {count_field!r} is {count!r:.20} but {field!r} lists {len(ids)} instances"
            )
        for instance in ids:
            if instance in listed and frozenset({field, listed[instance]}) not in _OVERLAPS:
                raise EvaluationError(
                    f"{where}: instance {instance!r:.60} is in both {listed[instance]!r} and {field!r}"
                )
            if instance not in outcomes:
                outcomes[instance] = outcome
                listed[instance] = field
    incomplete = report.get("incomplete_ids", [])
    if not isinstance(incomplete, list):
        raise EvaluationError(
            f"{where}: field 'incomplete_ids' must be a list of instance ids; got {incomplete!r:.60}"
        )
    return outcomes, [str(one) for one in incomplete]


def swe_bench_table(files: list[Path]) -> tuple[LongTable, int]:
    """Trial rows of SWE-bench run reports, and how many ``incomplete_ids`` entries they list."""
    loaded: list[tuple[str, str | None, Path, object]] = []
    for file in files:
        report = load_json(file)
        target, run = name_fields(file.stem)
        loaded.append((target, run, file, report))
    loaded.sort(key=lambda entry: (entry[0], entry[1] or "", entry[2].name))
    numbered = len(files) > 1
    columns: dict[str, list[str | None]] = {name: [] for name in _COLUMNS}
    where: list[str] = []
    runs_of: dict[str, int] = {}
    not_trials = 0
    for target, run, file, report in loaded:
        trial = runs_of.get(target, 0)
        runs_of[target] = trial + 1
        outcomes, incomplete = _outcomes(report, str(file))
        not_trials += len(incomplete)
        for instance, passed in outcomes.items():
            values = (instance, str(trial) if numbered else None, passed, target, run, repository(instance))
            for name, value in zip(_COLUMNS, values, strict=True):
                columns[name].append(value)
            where.append(f"{file} (instance {instance})")
    if not numbered:
        del columns["trial"]
    return LongTable(columns, tuple(where)), not_trials


def read(path: Path, sink: TrialSink) -> None:
    """Add every instance of a run report (or of every report in a folder) to ``sink``."""
    files = report_files(path)
    if not files:
        raise EvaluationError(f"{path}: the folder holds no SWE-bench run report (<model>.<run_id>.json)")
    table, not_trials = swe_bench_table(files)
    sink.scan_table(str(path), table)
    if not_trials:
        reports = f"{len(files)} reports" if len(files) > 1 else "the report"
        sink.note(
            f"{path}: {not_trials} incomplete_ids entries in {reports} (instances with no prediction) "
            "are not trials"
        )
