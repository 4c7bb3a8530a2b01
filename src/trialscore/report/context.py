"""What every panel of the report reads: the runs, the settings, each case's row and its flip.

A :class:`ReportContext` is made once per report; panels (:mod:`trialscore.report.panels`) read
it and compute nothing twice: the per-group counts (:class:`Grouper`, one per run and grouping),
the case rows of the cases table (:attr:`ReportContext.rows`) and each case's flip against the
baseline are computed on first use.

Case states and flips against a baseline (a case's state is ``pass`` when every graded trial
passed, ``fail`` when none did, ``flaky`` in between, ``none`` with no graded trial):

==============  ============================================================
``regressed``   now ``fail``, before ``pass`` or ``flaky``
``became flaky`` now ``flaky``, before ``pass``
``improved``    now ``pass`` after ``fail`` or ``flaky``, or ``flaky`` after ``fail``
``lower``       ``flaky`` in both runs, its pass rate lower now (``higher``: higher)
``stable``      the same state and the same pass rate in both runs
``new``         only in this run (``removed``: only in the baseline)
==============  ============================================================

Each case also shows ``delta``, its pass rate now minus before, and the cases that changed are
listed by it, the largest fall first: a flip says how a case's state moved, the delta how far
(``0.9 -> 0.6`` is ``lower`` by -0.3, never ``stable``).  The first three flips change the
case's verdict (:data:`VERDICT_FLIPS`): those cases get a word diff of their outputs.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from trialscore.errors import EvaluationError
from trialscore.report._numbers import money, percent, signed
from trialscore.report.drawer import Drawer
from trialscore.report.runs import CaseTrials, RunData
from trialscore.results.counts import ErrorPolicy, GroupCounts

if TYPE_CHECKING:
    from trialscore.results.readers import RecordSource

__all__ = [
    "VERDICT_FLIPS",
    "Grouper",
    "ReportContext",
    "ReportSettings",
    "case_state",
    "flip",
    "group_name",
]


@dataclass(frozen=True)
class ReportSettings:
    """What the report groups by and how: ``by`` is ``target`` or ``category``; ``live``: the page is a
    snapshot of a run still going (:mod:`trialscore.report.live`), ``None`` for a finished one."""

    by: str = "target"
    level: float = 0.95
    errors: ErrorPolicy = "exclude"
    alpha: float = 0.05
    dates: tuple[date, ...] | None = None
    live: dict[str, Any] | None = None


def counted_n(case: CaseTrials, errors: ErrorPolicy) -> int:
    """The trials a case's pass rate counts under the error policy."""
    return case.graded + (case.errored if errors == "fail" else 0)


def case_state(case: CaseTrials, errors: ErrorPolicy = "exclude") -> str:
    """``pass``, ``fail``, ``flaky`` or ``none`` (no graded trial) of a case under the error policy.

    >>> case_state(CaseTrials("m", None, "a", "ppe")), case_state(CaseTrials("m", None, "a", "ppe"), "fail")
    ('pass', 'flaky')
    """
    return _state(case.passed, counted_n(case, errors))


def _state(passed: int, n: int) -> str:
    """The state of a case with ``passed`` of ``n`` counted trials passed (see :func:`case_state`)."""
    if n == 0:
        return "none"
    if passed == n:
        return "pass"
    return "fail" if passed == 0 else "flaky"


def _share(passed: int, n: int, level: float) -> dict[str, Any]:
    """What a row of the cases table says of ``passed`` of ``n``: its pass rate, Wilson interval and
    flakiness (keys in the row's order)."""
    from trialscore.stats import proportion_interval

    interval = proportion_interval(passed, n, level, "wilson") if n else None
    rate = passed / n if n else None
    return {
        "rate": rate,
        "rate_text": percent(rate),
        "low": None if interval is None else interval.low,
        "interval": "" if interval is None else f"[{percent(interval.low)}, {percent(interval.high)}]",
        "width": 0.0 if interval is None else interval.high - interval.low,
        "flakiness": 100 * min(passed, n - passed) / n if n else 0.0,
    }


_FLIPS = {
    ("pass", "fail"): "regressed",
    ("flaky", "fail"): "regressed",
    ("pass", "flaky"): "became flaky",
    ("fail", "pass"): "improved",
    ("flaky", "pass"): "improved",
    ("fail", "flaky"): "improved",
}
#: The flips that change a case's verdict (pass, fail or flaky).
VERDICT_FLIPS = frozenset(_FLIPS.values())


def flip(before: str | None, now: str | None, delta: float | None = 0.0) -> str:
    """The flip of a case from its baseline state to its state now, ``delta`` its pass rate now minus
    before (see the module docstring).

    >>> flip("pass", "fail"), flip("pass", "flaky"), flip("fail", "flaky")
    ('regressed', 'became flaky', 'improved')
    >>> flip("flaky", "flaky"), flip("flaky", "flaky", -0.3), flip("flaky", "flaky", 0.1), flip(None, "pass")
    ('stable', 'lower', 'higher', 'new')
    """
    if before is None:
        return "new"
    if now is None:
        return "removed"
    moved = _FLIPS.get((before, now))
    if moved is not None:
        return moved
    if delta:
        return "lower" if delta < 0 else "higher"
    return "stable"


#: The grouping of the trends when the runs hold several targets.
TARGET_CATEGORY = "target+category"


def group_name(case: CaseTrials, by: str) -> str | None:
    """The group of a case: its target, its category, or both (``target · category``)."""
    if by == TARGET_CATEGORY:  # a trend per target and category: targets are never pooled
        return f"{case.target or '—'} · {case.category or '—'}"
    return case.target if by == "target" else case.category


class Grouper:
    """Per-group counts of a run (one item per (target, case)) in the layout ``score`` scores.

    Each (run, grouping) is counted once: the headline, curves, paired verdicts and trends share it.
    """

    def __init__(self, errors: ErrorPolicy) -> None:
        self.errors = errors
        self._counted: dict[tuple[int, str], tuple[RunData, dict[str, GroupCounts]]] = {}

    def __call__(self, run: RunData, by: str) -> dict[str, GroupCounts]:
        """``{group name: counts}`` of ``run`` grouped ``by`` target or category, by name."""
        key = (id(run), by)
        if key not in self._counted:
            self._counted[key] = (run, self._count(run.cases, by))  # the run is kept: its id stays its own
        return self._counted[key][1]

    def _count(self, cases: Sequence[CaseTrials], by: str) -> dict[str, GroupCounts]:
        members: dict[str, list[int]] = {}
        for index, case in enumerate(cases):
            members.setdefault(group_name(case, by) or "—", []).append(index)
        passed = np.array([case.passed for case in cases], dtype=np.int64)
        errored = np.array([case.errored for case in cases], dtype=np.int64)
        graded = np.array([len(case.verdicts) for case in cases], dtype=np.int64) - errored
        items = [
            case.case_id if by != "category" else f"{case.target or ''}\x1f{case.case_id}" for case in cases
        ]
        out = {}
        for name in sorted(members):
            chosen = members[name]
            ids = [items[index] for index in chosen]
            out[name] = GroupCounts(
                ((by, name),),
                np.array(ids, dtype=object),
                graded[chosen],
                passed[chosen],
                errored[chosen],
                self.errors,
            )
        return out


@dataclass
class ReportContext:
    """The runs of one report (``runs[-1]`` is reported, earlier ones are its history), its baseline
    and settings; what panels share is computed once, on first use.  ``judged``: the reported run as
    the runner's records (a path or stored run) for the judges panel, ``human`` its labels file."""

    runs: Sequence[RunData]
    baseline: RunData | None
    settings: ReportSettings
    judged: str | Path | RecordSource | None = None
    human: str | Path | None = None

    def __post_init__(self) -> None:
        settings = self.settings
        if not self.runs:
            raise EvaluationError("a report needs at least one run; got none")
        if settings.by not in ("target", "category"):
            raise EvaluationError(f"by must be 'target' or 'category'; got {settings.by!r}")
        if settings.dates is not None and len(settings.dates) != len(self.runs):
            raise EvaluationError(
                f"dates must give one date per run; got {len(settings.dates)} for {len(self.runs)} runs"
            )
        self.grouper = Grouper(settings.errors)

    @property
    def run(self) -> RunData:
        """The reported run."""
        return self.runs[-1]

    @functools.cached_property
    def groups(self) -> dict[str, GroupCounts]:
        """The reported run's counts per group (``settings.by``)."""
        return self.grouper(self.run, self.settings.by)

    @functools.cached_property
    def before(self) -> dict[tuple[str | None, str], CaseTrials]:
        """The baseline's cases by (target, case id) (none without a baseline)."""
        if self.baseline is None:
            return {}
        return {(case.target, case.case_id): case for case in self.baseline.cases}

    @functools.cached_property
    def rows(self) -> list[dict[str, Any]]:
        """One row per case of the reported run (the cases table), with its flip against the baseline."""
        errors = self.settings.errors
        rows = []
        shares: dict[tuple[int, int], dict[str, Any]] = {}  # one per (passed, n): cases share few
        for index, case in enumerate(self.run.cases):
            passed, n = case.passed, counted_n(case, errors)
            share = shares.get((passed, n))
            if share is None:
                share = shares[passed, n] = _share(passed, n, self.settings.level)
            rate = share["rate"]
            state = _state(passed, n)
            then_case = self.before.get((case.target, case.case_id))
            then_n = 0 if then_case is None else counted_n(then_case, errors)
            then_rate = then_case.passed / then_n if then_case is not None and then_n else None
            delta = None if rate is None or then_rate is None else rate - then_rate
            then = None if then_case is None else case_state(then_case, errors)
            rows.append(
                {
                    "i": index,
                    "target": case.target or "",
                    "case": case.case_id,
                    "category": case.category or "",
                    "strip": case.verdicts,
                    "passed": passed,
                    "n": n,
                    "errored": case.errored,
                    **share,
                    "cost": case.cost,
                    "cost_text": money(case.cost),
                    "state": state,
                    "flip": flip(then, state, delta) if self.baseline is not None else "",
                    "before": "" if then_case is None else f"{then_case.passed}/{then_n}",
                    "delta": delta,
                    "delta_text": "—" if delta is None else signed(delta),
                }
            )
        return rows

    @functools.cached_property
    def drawer(self) -> Drawer:
        """The reported run's trial detail for the page (texts stored once, graders, tool calls)."""
        return Drawer(self.run.trials)

    @functools.cached_property
    def trial_data(self) -> list[list[Any] | None]:
        """Each case's drawer columns (:meth:`Drawer.case`; None without trial detail), in row order."""
        return [self.drawer.case(case) if case.detailed else None for case in self.run.cases]

    def run_date(self, index: int) -> date | None:
        """The date of run ``index``: the one given in the settings, else its trials' first ``started_at``."""
        if self.settings.dates is not None:
            return self.settings.dates[index]
        started = self.runs[index].started
        if started is None:
            return None
        try:
            return date.fromisoformat(started[:10])
        except ValueError:
            return None
