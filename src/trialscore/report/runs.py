"""Each RUN of a report as its cases: one per (target, case), with its trials in trial order.

A run is anything ``trialscore score`` reads, read by the same reader
(:func:`trialscore.results.readers.read_counts` with trial ``detail``): the runner's trial records
carry each trial's output, grader scores and reasons, error text, cost and latency; another
tool's log what it records (a score, an error); a format with per-case counts only (a wide
matrix) shows its passes, then failures, then errors.  This module only lays out what the
reader gives: cases ordered by target, category and case id, a case's category that of its
first trial.

Verdict letters: ``p`` pass, ``f`` fail, ``b`` borderline (a failure between the thresholds),
``e`` error (no outcome; never a failure).

>>> import tempfile, pathlib, json
>>> path = pathlib.Path(tempfile.mkdtemp()) / "trials.jsonl"
>>> rows = [{"case_id": "a", "trial": t, "target": "m", "passed": t != 1,
...          "verdict": "pass" if t != 1 else "fail", "output": f"answer {t}"} for t in (2, 0, 1)]
>>> _ = path.write_text("\\n".join(json.dumps(row) for row in rows))
>>> run = read_run(path)
>>> [(case.case_id, case.verdicts, case.detailed, case.details[1].output) for case in run.cases]
[('a', 'pfp', True, 'answer 1')]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

from trialscore.results.columns import ColumnMap
from trialscore.results.readers import RecordSource, read_counts
from trialscore.results.trials import TRIAL_FIELDS, TrialColumns, TrialDetail

__all__ = ["CaseTrials", "RunData", "read_run", "read_runs"]

#: What a run read without its trial detail still needs: each case's category and target, and the
#: run's ids, suites and date (for its trends).
_RUN_FIELDS = ("target", "category", "started_at", "run_id", "suite")
#: The file ``trialscore run`` writes beside its trials: what each case asked and expected.
_CASES = "cases.jsonl"


@dataclass
class CaseTrials:
    """The trials of one case of one target: verdict letters in trial order, and their detail.

    With trial detail (``detailed``), the case's trials are ``trials`` at positions ``start`` to
    ``start + len(verdicts)``.
    """

    target: str | None
    category: str | None
    case_id: str
    verdicts: str = ""
    cost: float | None = None
    detailed: bool = True
    trials: TrialColumns | None = None
    start: int = 0

    @property
    def passed(self) -> int:
        """Trials that passed."""
        return self.verdicts.count("p")

    @property
    def graded(self) -> int:
        """Trials with an outcome (pass, fail or borderline)."""
        return len(self.verdicts) - self.errored

    @property
    def errored(self) -> int:
        """Trials that errored (no outcome)."""
        return self.verdicts.count("e")

    @property
    def stop(self) -> int:
        """The position after this case's last trial in :attr:`trials`."""
        return self.start + len(self.verdicts)

    @property
    def details(self) -> list[TrialDetail]:
        """The case's trials one by one (empty without trial detail)."""
        if self.trials is None or not self.detailed:
            return []
        return [self.trials.detail(index) for index in range(self.start, self.stop)]


@dataclass(frozen=True)
class RunData:
    """One run of the report: where it came from, its cases, and what was read and skipped."""

    label: str
    run_id: str | None
    suite: str | None
    started: str | None
    cases: tuple[CaseTrials, ...]
    rows_read: int
    rows_skipped: int = 0
    first_skipped: str | None = None
    trials: TrialColumns | None = None
    asked: Mapping[str, tuple[object, object]] = field(default_factory=dict)
    """Case id -> (input, expected) from the run's ``cases.jsonl`` (the drawer shows them)."""
    partial: tuple[str, ...] = ()
    source: Path | RecordSource | None = None
    """The input the run was read from (None: not known)."""

    @property
    def detailed(self) -> bool:
        """Whether trial detail (outputs, graders, errors) was read."""
        return any(case.detailed for case in self.cases)


def _listed(values: Sequence[str | None]) -> str | None:
    """Distinct values, sorted, as one text (None when there is none)."""
    return ", ".join(sorted({value for value in values if value})) or None


def _cases(counts: Any, trials: TrialColumns, detailed: bool) -> tuple[CaseTrials, ...]:
    """One case per counted row (target and case), ordered by target, category and case id."""
    target = counts.group_values[counts.by.index("target")].tolist()
    starts = trials.starts.tolist()
    known = ~np.isnan(trials.cost)
    firsts = trials.starts[:-1]
    sums = np.add.reduceat(np.where(known, trials.cost, 0.0), firsts).tolist() if known.size else []
    priced = np.add.reduceat(known, firsts).tolist() if known.size else []
    cases = []
    for row, item in enumerate(counts.item.tolist()):
        start, stop = starts[row], starts[row + 1]
        cases.append(
            CaseTrials(
                target[row],
                trials.category[start],
                str(item),
                trials.verdicts[start:stop],
                float(sums[row]) if priced[row] else None,
                detailed=detailed,
                trials=trials,
                start=start,
            )
        )
    order = sorted(
        cases,
        key=lambda case: (case.target or "", case.category or "", case.case_id, case.target is not None),
    )
    return tuple(order)


def read_run(
    path: str | Path | RecordSource,
    columns: ColumnMap | None = None,
    skip_invalid: bool = False,
    input_format: str | None = None,
    label: str | None = None,
    detail: bool | Literal["outputs"] = True,
    scorer: str | None = None,
    asked: Mapping[str, tuple[object, object]] | None = None,
) -> RunData:
    """Read one run (a file or folder ``score`` reads, or a stored run's records) into its cases.

    Parameters
    ----------
    path : a run folder, a trial-record file, any input of :mod:`trialscore.results.formats`, or
        the records of a stored run
    columns : which column holds what (see :mod:`trialscore.results.columns`)
    skip_invalid : skip and count invalid rows instead of raising
    input_format : read as this format instead of detecting it
    label : the run's name in the report (default: ``path``)
    detail : read each trial's detail (output, graders, error, cost, latency); without it only the
        verdicts (and each case's category) are read, enough for an earlier run; ``"outputs"``: the
        verdicts and each trial's output (a baseline: the diffs of the cases whose verdict flipped)
    scorer : of an input with several scorers, read only this one's judgements
    asked : case id -> (input, expected) for the drawer (default: the ``cases.jsonl`` that
        ``trialscore run`` wrote beside the trials, if any)
    """
    from trialscore.report._collector import collector_paused
    from trialscore.report.asked import read_asked

    source = path if isinstance(path, RecordSource) else Path(path)
    with collector_paused():
        counts = read_counts(
            [source],
            columns=columns,
            skip_invalid=skip_invalid,
            input_format=input_format,
            group_targets=True,
            scorer=scorer,
            detail=TRIAL_FIELDS if detail is True else (*_RUN_FIELDS, "output") if detail else _RUN_FIELDS,
        )
    trials = counts.trials
    assert trials is not None
    stats = counts.stats
    if asked is None and detail is True and isinstance(source, Path):
        folder = source if source.is_dir() else source.parent
        asked = read_asked(folder / _CASES) if source.name != _CASES else {}
    return RunData(
        label or (source.label if isinstance(source, RecordSource) else str(source)),
        _listed(trials.run_id),
        _listed(trials.suite),
        min((when for when in trials.started_at if when is not None), default=None),
        _cases(counts, trials, detail is True and trials.detailed),
        stats.rows_read,
        stats.rows_skipped,
        stats.first_skipped,
        trials if detail is True else None,
        asked or {},
        tuple(run.message for run in stats.partial),
        source,
    )


def read_runs(paths: Sequence[str | Path], **options: Any) -> list[RunData]:
    """:func:`read_run` of each path, in order."""
    return [read_run(path, **options) for path in paths]
