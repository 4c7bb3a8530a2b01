"""The item / trial / judge split of a judged run's variance, beside the item / trial split.

A run whose ``llm_judge`` calls each judge several times on the same output (``repeats``) shows
how much of the spread of a judged grade is the judge's own call-to-call noise.  For each grader,
target and judge with repeats, :func:`judge_splits` gives

* ``variance``: :func:`~trialscore.stats.judge_variance` of one call's verdict (1 pass, 0 fail),
  items x trials x calls: the item, trial and judge components (nested method of moments);
* ``trials``: :func:`~trialscore.stats.decompose_variance` of the trials' own verdicts (the
  calls combined), the item / trial split ``score`` speaks of without repeats.

The judge split needs 2 answered calls on a trial and 2 such trials on an item: trials with fewer
answered calls and items with fewer such trials are left out, and counted.

>>> from trialscore.results.records import GraderResult, JudgeGrade, TrialRecord
>>> def record(case, trial, said):
...     calls = tuple(JudgeGrade(judge="j", repeat=r, score=float(p), passed=p == 1)
...                   for r, p in enumerate(said))
...     passed = sum(said) * 2 > len(said)
...     grade = GraderResult(name="judge", score=float(passed), passed=passed, calls=calls)
...     return TrialRecord(case_id=case, trial=trial, passed=passed, verdict="pass" if passed else "fail",
...                        grader_results=(grade,))
>>> said = {"a": [(1, 1), (1, 0)], "b": [(0, 0), (0, 1)], "c": [(1, 1), (1, 1)]}
>>> (split,) = judge_splits([record(c, t, s) for c, calls in said.items() for t, s in enumerate(calls)])
>>> split.judge, split.variance.items, round(split.variance.judge, 4)
('j', 3, 0.1667)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from trialscore._record import Record
from trialscore.core.bank import Bank

if TYPE_CHECKING:
    from trialscore.results.records import TrialRecord
    from trialscore.stats._judge_noise import JudgeVariance
    from trialscore.stats._variance import VarianceDecomposition

__all__ = ["JudgeSplit", "judge_splits"]


@dataclass(frozen=True)
class JudgeSplit(Record):
    """One judge's split on one target's trials (module docstring)."""

    grader: str
    target: str | None
    judge: str
    variance: JudgeVariance
    trials: VarianceDecomposition | None
    left_out_trials: int
    left_out_items: int


def _trial_split(records: Sequence[TrialRecord]) -> VarianceDecomposition | None:
    """The item / trial split of the trials' verdicts (None with fewer than 2 graded items)."""
    from trialscore.stats._variance import decompose_variance

    n: dict[str, int] = {}
    c: dict[str, int] = {}
    for record in records:
        if record.passed is not None:
            n[record.case_id] = n.get(record.case_id, 0) + 1
            c[record.case_id] = c.get(record.case_id, 0) + int(record.passed)
    if len(n) < 2:
        return None
    return decompose_variance(Bank.from_counts(list(n.values()), [c[key] for key in n]))


def judge_splits(records: Sequence[TrialRecord]) -> list[JudgeSplit]:
    """The split of every (grader, target, judge) with repeated calls (module docstring)."""
    from trialscore.results.judged import record_grades
    from trialscore.stats._judge_noise import judge_variance

    out = []
    targets = list(dict.fromkeys(record.target for record in records))
    for target in targets:
        own = [record for record in records if record.target == target]
        trials = _trial_split(own)
        for grades in record_grades(own):
            table = grades.table
            for judge in table.judges:
                cube = table.judge_cube(judge).copy()
                calls = (~np.isnan(cube)).sum(axis=2)
                if calls.max(initial=0) < 2:
                    continue
                short = (calls > 0) & (calls < 2)
                cube[short] = np.nan
                kept = ((~np.isnan(cube)).any(axis=2)).sum(axis=1) >= 2
                if kept.sum() < 2:
                    continue
                out.append(
                    JudgeSplit(
                        grades.name,
                        target,
                        str(judge),
                        judge_variance(cube[kept]),
                        trials,
                        int(short.sum()),
                        int((~kept).sum()),
                    )
                )
    return out
