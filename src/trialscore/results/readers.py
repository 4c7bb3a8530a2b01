"""Read trial results from files, folders (or records) into per-(group, item) counts.

:func:`read_counts` takes any mix of inputs and returns one
:class:`~trialscore.results.counts.ItemCounts`; the same item in two files is
one item with the trials of both.  The format of each input is found from its
content (or named with ``input_format``); :mod:`trialscore.results.formats`
holds one module per format:

==============  =====================================================================================
format          input
==============  =====================================================================================
``runner``      a run folder ``trialscore run --out`` wrote, or its ``summary.json``: its trials.jsonl
``inspect``     an inspect_ai eval log (``.eval`` / ``.json``), or a folder of them (``inspect`` extra)
``parquet``     long format, one row per trial (DuckDB)
``wide``        ``.npy`` / ``.npz`` / headerless numeric CSV: items x trials 0/1 (NaN = errored trial)
``cases``       per-case results with ``trials`` arrays (seed 003, the runner's cases.jsonl)
``json-array``  a JSON array of trial rows (DuckDB)
``jsonl``       JSON Lines: trial records (the runner's trials.jsonl) or any long rows (DuckDB)
``csv``         CSV / TSV with a header, long format (DuckDB; bad rows named by Python's csv module)
==============  =====================================================================================

Every input says how many rows it had; invalid rows raise an error naming the
file, line or row, field and value, or with ``skip_invalid`` are skipped and
counted once each.  An input with no trials is an error.  The group key
``file`` (unless the data has such a column) is the file name, so
``by=("file",)`` compares files.

>>> import tempfile, pathlib
>>> path = pathlib.Path(tempfile.mkdtemp()) / "trials.csv"
>>> _ = path.write_text("case_id,trial,model,passed\\nq1,0,a,1\\nq1,1,a,0\\nq2,0,a,1\\nq2,1,a,\\n")
>>> counts = read_counts([path], by=["model"])
>>> [(g.label, g.n.tolist(), g.c.tolist(), g.errored.tolist()) for g in counts.groups()]
[('model=a', [2, 1], [1, 1], [0, 1])]
>>> counts.stats.rows_read, counts.stats.rows_used, counts.stats.rows_errored
(4, 3, 1)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from trialscore.errors import EvaluationError
from trialscore.results.columns import ColumnMap
from trialscore.results.counts import ErrorPolicy, ItemCounts, check_error_policy
from trialscore.results.formats import read_input
from trialscore.results.sink import FILE_KEY, TrialSink
from trialscore.results.tally import LongTable, text_value

if TYPE_CHECKING:
    from trialscore.results.records import TrialRecord

__all__ = ["FILE_KEY", "RecordSource", "count_records", "read_counts", "read_counts_together"]

_RECORD_GROUPS = ("run_id", "suite", "target", "category")
#: The group key of models / agents.
_TARGET = "target"
#: TrialRecord fields that are not one value per trial, left out of a record source's rows.
_NESTED = frozenset({"grader_results", "tokens", "output"})


@dataclass(frozen=True)
class RecordSource:
    """Trial records standing for one input (a run read from the store), named ``label``.

    They are read as the runner's ``trials.jsonl`` would be: every scalar field of
    :class:`~trialscore.results.records.TrialRecord` is a column, found by the same
    column roles and options; ``label`` is the ``file`` group key and names the rows
    in errors (``run 20250101-120000-a1b2c3 case q1 trial 0``).  ``notice`` is a line to say
    whenever the run is read (it is interrupted, or cost-limited), and ``partial`` whether it
    stopped short of its plan by accident (the line then lands in ``ReadStats.partial``).
    """

    label: str
    records: Sequence[TrialRecord]
    notice: str | None = None
    partial: bool = False

    def table(self) -> LongTable:
        """The records as long trial rows (text columns, as the JSON Lines reader makes them)."""
        rows = [record.model_dump(mode="json", exclude=set(_NESTED)) for record in self.records]
        names = list(dict.fromkeys(name for row in rows for name in row))
        table = {name: [text_value(row.get(name)) for row in rows] for name in names}
        where = tuple(f"{self.label} case {r.case_id} trial {r.trial}" for r in self.records)
        return LongTable(table, where)


def read_counts(
    paths: Iterable[str | Path | RecordSource],
    by: Sequence[str] = (),
    columns: ColumnMap | None = None,
    skip_invalid: bool = False,
    errors: ErrorPolicy = "exclude",
    allow_repeated_trials: bool = False,
    input_format: str | None = None,
    group_targets: bool = False,
) -> ItemCounts:
    """Read trial files and folders into per-(group, item) counts.

    Parameters
    ----------
    paths : files or folders to read (their trials are pooled per (group, item)), or
        :class:`RecordSource` values (a stored run's records)
    by : group columns, e.g. ``("target", "category")``; ``"file"`` groups by file
    columns : which column holds the item, trial, outcome (see :mod:`trialscore.results.columns`)
    skip_invalid : skip and count invalid rows instead of raising
    errors : ``"exclude"`` errored trials from ``n`` (default) or count them as ``"fail"``
    allow_repeated_trials : pool rows whose (item, trial) repeat instead of raising
    input_format : read every input as this format (a name of
        :data:`trialscore.results.formats.FORMATS`) instead of detecting it
    group_targets : group by ``target`` first (unless ``by`` names it, or repeated trials are
        allowed) when the inputs hold more than one target (models are never pooled unasked);
        inputs without a target column count as one more target, ``None``

    Returns
    -------
    ItemCounts
        Per-(group, item) counts and the :class:`~trialscore.results.counts.ReadStats`.
    """
    (counts,) = read_counts_together(
        [paths],
        by,
        columns,
        skip_invalid,
        errors,
        allow_repeated_trials,
        input_format,
        group_targets,
    )
    return counts


def read_counts_together(
    inputs: Sequence[Iterable[str | Path | RecordSource]],
    by: Sequence[str] = (),
    columns: ColumnMap | None = None,
    skip_invalid: bool = False,
    errors: ErrorPolicy = "exclude",
    allow_repeated_trials: bool = False,
    input_format: str | None = None,
    group_targets: bool = False,
    split: Sequence[str] = (),
) -> list[ItemCounts]:
    """Several inputs read apart (one :class:`ItemCounts` each) with one grouping decision for all.

    Parameters are those of :func:`read_counts`; ``inputs`` holds the paths of each input (a
    baseline and a candidate, or the runs of a history).  With ``group_targets``, every input is
    grouped by target as soon as any of them holds more than one target, so that a baseline of
    targets ``a`` and ``b`` meets a candidate of ``a`` alone as ``target=a`` on both sides; when
    each holds one target (two models compared), none is grouped.  ``split`` names optional
    columns (``suite``, ``target``) that become group keys, before ``by``, when the inputs
    together hold more than one value of them (runs of two suites are never pooled in a history).

    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "base.csv").write_text("case_id,target,passed\\nq1,a,1\\nq1,b,0\\n")
    >>> _ = (folder / "cand.csv").write_text("case_id,target,passed\\nq1,a,1\\n")
    >>> base, cand = read_counts_together([[folder / "base.csv"], [folder / "cand.csv"]], group_targets=True)
    >>> [g.label for g in base.groups()], [g.label for g in cand.groups()]
    (['target=a', 'target=b'], ['target=a'])
    """
    policy = check_error_policy(errors)
    extra = tuple(name for name in split if name not in by)
    auto = group_targets and not allow_repeated_trials and _TARGET not in (*by, *extra)
    lead = (*extra, _TARGET) if auto else extra
    read = []
    for paths in inputs:
        with TrialSink((*lead, *by), columns, skip_invalid, optional_groups=lead) as sink:
            for path in paths:
                if isinstance(path, RecordSource):
                    if not path.records:
                        raise EvaluationError(f"{path.label}: holds no trials")
                    sink.scan_table(path.label, path.table())
                    if path.notice is not None:
                        (sink.partial if path.partial else sink.note)(path.notice)
                else:
                    read_input(Path(path), sink, input_format)
            read.append(sink.counts(policy, allow_repeated_trials))
    constant = [name for name in extra if len(_values(read, name)) <= 1]
    if auto:
        index = read[0].by.index(_TARGET)
        targets = [len(set(counts.group_values[index].tolist())) for counts in read]
        if max(targets, default=0) <= 1:
            constant.append(_TARGET)
        else:
            read = [
                _noted(counts, "the inputs hold " + (f"{found} targets" if found > 1 else "several targets"))
                for counts, found in zip(read, targets, strict=True)
            ]
    return [_without(counts, constant) for counts in read]


def _values(read: Sequence[ItemCounts], name: str) -> set[object]:
    """The values group key ``name`` takes over every input."""
    index = read[0].by.index(name)
    return {value for counts in read for value in counts.group_values[index].tolist()}


def _noted(counts: ItemCounts, held: str) -> ItemCounts:
    note = f"grouped by target: {held} (--by chooses the groups; models are never pooled unasked)"
    return dataclasses.replace(
        counts, stats=dataclasses.replace(counts.stats, notes=(*counts.stats.notes, note))
    )


def _without(counts: ItemCounts, names: Sequence[str]) -> ItemCounts:
    """``counts`` without the group keys ``names``, each of which holds one value (rows stay sorted)."""
    if not names:
        return counts
    keep = [index for index, name in enumerate(counts.by) if name not in names]
    return dataclasses.replace(
        counts,
        by=tuple(counts.by[i] for i in keep),
        group_values=tuple(counts.group_values[i] for i in keep),
    )


def count_records(
    records: Iterable[TrialRecord],
    by: Sequence[str] = (),
    errors: ErrorPolicy = "exclude",
    allow_repeated_trials: bool = False,
) -> ItemCounts:
    """Per-(group, item) counts of :class:`TrialRecord` objects (group keys: record fields).

    >>> from trialscore.results import TrialRecord
    >>> records = [TrialRecord(case_id=c, trial=t, target="m", passed=p, verdict="pass" if p else "fail")
    ...            for c, t, p in [("a", 0, True), ("a", 1, False), ("b", 0, True)]]
    >>> [(g.label, g.n.tolist(), g.c.tolist()) for g in count_records(records, by=["target"]).groups()]
    [('target=m', [2, 1], [1, 1])]
    """
    policy = check_error_policy(errors)
    unknown = [name for name in by if name not in _RECORD_GROUPS]
    if unknown:
        raise EvaluationError(
            f"by must name TrialRecord fields among {', '.join(_RECORD_GROUPS)}; got {unknown[0]!r}"
        )
    records = list(records)
    if not records:
        raise EvaluationError("records must hold at least one TrialRecord; got none")
    table: dict[str, list[str | None]] = {
        "case_id": [record.case_id for record in records],
        "trial": [str(record.trial) for record in records],
        "passed": [text_value(record.passed) for record in records],
        **{name: [text_value(getattr(r, name)) for r in records] for name in by},
    }
    with TrialSink(by) as sink:
        sink.scan_table(
            "records", LongTable(table, tuple(f"record {index}" for index in range(len(records))))
        )
        return sink.counts(policy, allow_repeated_trials)
