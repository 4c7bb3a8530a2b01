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
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from trialscore.errors import EvaluationError, parameter, worded
from trialscore.results.columns import ColumnMap
from trialscore.results.counts import ErrorPolicy, ItemCounts, PartialRun, check_error_policy
from trialscore.results.formats import read_input
from trialscore.results.sink import FILE_KEY, TrialSink
from trialscore.results.sources import is_url
from trialscore.results.tally import LongTable, text_value
from trialscore.results.trials import TRIAL_FIELDS

if TYPE_CHECKING:
    from trialscore.results.records import TrialRecord

__all__ = ["FILE_KEY", "SCORER", "RecordSource", "count_records", "read_counts", "read_counts_together"]

_RECORD_GROUPS = ("run_id", "suite", "target", "category")
#: The group key of models / agents.
_TARGET = "target"
#: The group keys of automatic grouping (``group_targets``): models, and the tasks of an eval set.
_AUTO = (_TARGET, "suite")
#: The group key of scorers: several scorers of the same trials are never pooled.
SCORER = "scorer"
_PLURAL = {_TARGET: "targets", "suite": "suites (tasks)", SCORER: "scorers"}
#: TrialRecord fields that are not one value per trial, left out of a record source's rows.
_NESTED = frozenset({"grader_results", "tokens", "output", "tool_calls"})
#: Of those, the ones trial detail reads (as JSON text).
_DETAIL = frozenset({"grader_results", "output", "tokens", "tool_calls"})

#: What ``detail`` asks for: every field of TRIAL_FIELDS (True), none (False: counts only), or these.
Detail = bool | Collection[str]


@dataclass(frozen=True)
class RecordSource:
    """Trial records standing for one input (a run read from the store), named ``label``.

    They are read as the runner's ``trials.jsonl`` would be: every scalar field of
    :class:`~trialscore.results.records.TrialRecord` is a column, found by the same
    column roles and options; ``label`` is the ``file`` group key and names the rows
    in errors (``run 20250101-120000-a1b2c3 case q1 trial 0``).  ``partial`` says that the
    run stopped short of its plan by accident (interrupted, still running: it lands in
    ``ReadStats.partial``); ``notice`` is a line to say whenever it is read (cost-limited).
    """

    label: str
    records: Sequence[TrialRecord]
    notice: str | None = None
    partial: PartialRun | None = None

    def table(self, detail: bool = False) -> LongTable:
        """The records as long trial rows (text columns, as the JSON Lines reader makes them); with
        ``detail`` also each trial's output and grader results."""
        exclude = set(_NESTED - _DETAIL if detail else _NESTED)
        rows = [record.model_dump(mode="json", exclude=exclude) for record in self.records]
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
    scorer: str | None = None,
    detail: Detail = False,
    graders: bool = False,
) -> ItemCounts:
    """Read trial files and folders into per-(group, item) counts, with each trial if asked.

    Several scorers of the same trials (an inspect_ai task with two scorers, promptfoo assertions,
    deepeval metrics: a ``scorer`` column) are different judgements of one trial, never pooled:
    each is its own group (``scorer`` is added to the group key when the inputs hold more than
    one), unless ``scorer`` picks one.

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
        :data:`trialscore.results.formats.FORMATS`, or an alias) instead of detecting it
    group_targets : group by ``target`` first (unless ``by`` names it, or repeated trials are
        allowed) when the inputs hold more than one target (models are never pooled unasked),
        and likewise by ``suite`` (tasks of an inspect_ai eval set); inputs without the column
        count as one more value, ``None``
    scorer : keep only the trials judged by this scorer (the ``scorer`` column)
    detail : keep each trial too (``ItemCounts.trials``, see :mod:`trialscore.results.trials`): its
        verdict and the fields named (``True``: every field of
        :data:`~trialscore.results.trials.TRIAL_FIELDS`; ``()``: verdicts only) where the input has
        them.  Trials are then records of a target: the counts are split by ``target`` (None where
        the input names none), and a repeated (target, case, trial) is named where it is.
    graders : score each grader's verdict apart: one more group key, ``grader``, one group per grader of
        the trials' ``grader_results`` beside the trial's own verdict
        (:func:`~trialscore.results.by_grader.by_grader`)

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
        scorer=scorer,
        detail=detail,
        graders=graders,
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
    scorer: str | None = None,
    detail: Detail = False,
    graders: bool = False,
) -> list[ItemCounts]:
    """Several inputs read apart (one :class:`ItemCounts` each) with one grouping decision for all.

    Parameters are those of :func:`read_counts`; ``inputs`` holds the paths of each input (a
    baseline and a candidate, or the runs of a history).  With ``group_targets``, every input is
    grouped by target (and suite) as soon as any of them holds more than one, so that a baseline
    of targets ``a`` and ``b`` meets a candidate of ``a`` alone as ``target=a`` on both sides; when
    each holds one target (two models compared), none is grouped.  ``split`` names optional
    columns (``suite``, ``target``) that become group keys, before ``by``, when the inputs
    together hold more than one value of them (runs of two suites are never pooled in a history).
    Scorers are grouped as in :func:`read_counts`.

    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "base.csv").write_text("case_id,target,passed\\nq1,a,1\\nq1,b,0\\n")
    >>> _ = (folder / "cand.csv").write_text("case_id,target,passed\\nq1,a,1\\n")
    >>> base, cand = read_counts_together([[folder / "base.csv"], [folder / "cand.csv"]], group_targets=True)
    >>> [g.label for g in base.groups()], [g.label for g in cand.groups()]
    (['target=a', 'target=b'], ['target=a'])
    """
    policy = check_error_policy(errors)
    asked = _fields(detail)
    fields = asked if not graders else frozenset({"graders"}) | (asked or frozenset())
    kept = (_TARGET,) if asked is not None and _TARGET not in by else ()  # trials are records of a target
    extra = tuple(name for name in split if name not in (*by, *kept))
    auto: tuple[str, ...] = ()
    if group_targets and not allow_repeated_trials:
        auto = tuple(name for name in _AUTO if name not in (*by, *extra, *kept))
    apart = () if SCORER in by or (allow_repeated_trials and scorer is None) else (SCORER,)
    lead = (*kept, *extra, *auto)
    read = []
    for paths in inputs:
        with TrialSink(
            (*lead, *by, *apart), columns, skip_invalid, optional_groups=lead + apart, detail=fields
        ) as sink:
            for path in paths:
                if isinstance(path, RecordSource):
                    if not path.records:
                        raise EvaluationError(f"{path.label}: holds no trials")
                    sink.scan_table(path.label, path.table(detail=fields is not None))
                    if path.partial is not None:
                        sink.partial(path.partial)
                    if path.notice is not None:
                        sink.note(path.notice)
                else:
                    read_input(path if is_url(path) else Path(path), sink, input_format)
            counts = sink.counts(policy, allow_repeated_trials)
        read.append(counts if scorer is None else _pick_scorer(counts, scorer))
    drop = [name for name in extra if len(_values(read, name)) <= 1]
    for name in (*auto, *apart):
        if (name == SCORER and scorer is not None) or all(len(_values([c], name)) <= 1 for c in read):
            drop.append(name)  # one value in every input: no group of its own
        else:
            every = _values(read, name)
            read = [_noted(counts, name, max(_values([counts], name), every, key=len)) for counts in read]
    read = [_without(counts, drop) for counts in read]
    if graders:
        from trialscore.results.by_grader import by_grader

        read = [by_grader(counts) for counts in read]
        if asked is None:  # the graders' detail was read for the split alone
            read = [dataclasses.replace(counts, trials=None) for counts in read]
    return read


def _fields(detail: Detail) -> frozenset[str] | None:
    """The trial fields ``detail`` asks for (None: no trials, counts only)."""
    if detail is False:
        return None
    fields = frozenset(TRIAL_FIELDS if detail is True else detail)
    unknown = sorted(fields - TRIAL_FIELDS.keys())
    if unknown:
        raise EvaluationError(f"detail must name fields among {', '.join(TRIAL_FIELDS)}; got {unknown[0]!r}")
    return fields


def _values(read: Sequence[ItemCounts], name: str) -> list[str | None]:
    """The values group key ``name`` takes over the inputs ``read``, sorted (None last)."""
    index = read[0].by.index(name)
    found = {value for counts in read for value in counts.group_values[index].tolist()}
    return sorted(found, key=lambda value: (value is None, str(value)))


def _noted(counts: ItemCounts, name: str, values: Sequence[str | None]) -> ItemCounts:
    """``counts`` with a note saying why its groups split by ``name``."""
    shown = ", ".join("—" if value is None else str(value) for value in values)
    if name == SCORER:
        note = (
            f"scored per scorer: the inputs hold {len(values)} scorers ({shown}); "
            f"{parameter('scorer')} NAME picks one"
        )
    else:
        held = f"{len(values)} {_PLURAL[name]} ({shown})"
        note = f"grouped by {name}: the inputs hold {held} ({parameter('by')} chooses the groups)"
    note = worded(note)
    if note in counts.stats.notes:
        return counts
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


def _pick_scorer(counts: ItemCounts, scorer: str) -> ItemCounts:
    """Only the rows of one scorer; the other scorers' trials are counted out in a note."""
    values = [value for value in _values([counts], SCORER) if value is not None]
    if scorer not in values:
        named = f"the scorers are {', '.join(values)}" if values else "the inputs name no scorer"
        raise EvaluationError(f"scorer {scorer!r} is not in the inputs; {named}")
    keep = counts.group_values[counts.by.index(SCORER)] == scorer
    trials = counts.trials
    if trials is not None:
        trials = trials.take(np.flatnonzero(keep).astype(np.int64))
    left_out = int((counts.graded[~keep] + counts.errored[~keep]).sum())
    errored = counts.errored[keep]
    stats = dataclasses.replace(
        counts.stats,
        rows_read=counts.stats.rows_read - left_out,
        rows_errored=int(errored.sum()),
        notes=(*counts.stats.notes, f"scorer {scorer}: {left_out} trial rows of the other scorers left out"),
    )
    return dataclasses.replace(
        counts,
        group_values=tuple(values_[keep] for values_ in counts.group_values),
        item=counts.item[keep],
        graded=counts.graded[keep],
        c=counts.c[keep],
        errored=errored,
        stats=stats,
        cluster=None if counts.cluster is None else counts.cluster[keep],
        trials=trials,
        score_sum=None if counts.score_sum is None else counts.score_sum[keep],
        score_sumsq=None if counts.score_sumsq is None else counts.score_sumsq[keep],
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
