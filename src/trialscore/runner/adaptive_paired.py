"""Comparing while running: an adaptive run against a baseline run stops once the paired verdict is settled.

``trialscore run suite.yaml --baseline RUN --adaptive``: per target, a
:class:`~trialscore.stats.paired_sequential.SequentialComparison` over the cases both runs hold
chooses which case the next trial goes to (where the paired difference is still uncertain),
pairs each candidate trial with a block of baseline trials of that case not used before (the
comparison sizes the block: large while few further draws of the case are expected), and stops the
target's trials once its anytime-valid verdict (``regression``, ``improvement`` or
``no_difference`` within the margin) is settled.  The comparison also ends, unsettled, when the
case it drew has no trial left (its planned trial count, or no unused baseline trial of it).

:class:`PairedScheduler` has the seam of :class:`~trialscore.runner.adaptive.Scheduler`
(``start``/``finish``/``drop``/``in_flight``/``exhausted``/``outcome``), so every backend leases
its units the same way.  A block is set aside when its unit starts and drawn when it finishes, in
a random order drawn from the case's counts (the pass/fail outcomes of a case's trials are
exchangeable), seeded by the run.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from trialscore.errors import EvaluationError, parameter
from trialscore.results.records import TrialRecord
from trialscore.runner.adaptive import CaseOutcome, Unit
from trialscore.runner.suite import CaseSettings
from trialscore.stats.paired_sequential import Draw, SequentialComparison

__all__ = ["UNDECIDED_GATE", "BaselineComparison", "PairedScheduler", "StopCause", "stop_note"]

#: Why a target's comparison stopped: its verdict settled, a drawn case had no trial left, or a budget.
StopCause = Literal["verdict settled", "trials ran out", "budget", "running"]

#: How a gate treats an unsettled comparison (stated in every report and gate line).
UNDECIDED_GATE = (
    "undecided never fails the gate: --fail-on regression fails only on a settled regression; an "
    "undecided comparison is not evidence of no change"
)


def stop_note(body: Mapping[str, Any]) -> str:
    """What follows why a comparison stopped: which run ran out and what it would take; the gate's undecided.

    >>> stop_note({"verdict": "regression", "ran_out": None})
    ''
    >>> stop_note({"verdict": "undecided", "ran_out": {"advice": "more"}, "undecided_gate": "never fails"})
    ' (more); never fails'
    """
    note = f" ({body['ran_out']['advice']})" if body.get("ran_out") else ""
    if body["verdict"] == "undecided" and "undecided_gate" in body:
        note += f"; {body['undecided_gate']}"
    return note


@dataclass(frozen=True)
class BaselineComparison:
    """What an adaptive run compares against: the baseline's (trials, passes) per target and case.

    Examples
    --------
    >>> BaselineComparison("latest", {"m": {"a": (10, 7)}}, margin=0.05).to_dict()
    {'baseline': 'latest', 'margin': 0.05, 'alpha': 0.05}
    """

    name: str
    counts: Mapping[str, Mapping[str, tuple[int, int]]]
    margin: float = 0.05
    alpha: float = 0.05

    def to_dict(self) -> dict[str, Any]:
        """The settings stored with the run."""
        return {"baseline": self.name, "margin": self.margin, "alpha": self.alpha}


@dataclass
class _Target:
    name: str
    order: int
    cases: list[str]  # compared case ids, in suite order
    baseline: list[list[int]]  # [trials left, passes left] of each case's baseline
    comparison: SequentialComparison
    started: list[int] = field(default_factory=list)
    in_flight: dict[tuple[str, int], Draw] = field(default_factory=dict)
    finished: int = 0
    wasted: int = 0
    cause: StopCause = "running"


class PairedScheduler:
    """Which units may start next in a run compared with a baseline while it runs.

    Parameters
    ----------
    cases : sequence of (case id, settings)
        The suite's cases; only those the baseline holds (with a scored trial) are compared and run.
    targets : sequence of str
        The evaluated targets; each must be in the baseline.
    comparison : BaselineComparison
        The baseline's counts, the margin and alpha.
    seed : int
        Seeds the case draws and the order the baseline's trials are used in.

    Examples
    --------
    >>> s = CaseSettings(10, "mean", None, 60.0, 2, 0.5, 0.5, None)
    >>> base = BaselineComparison("b", {"m": {c: (10, 10) for c in "abcd"}})
    >>> sched = PairedScheduler([(c, s) for c in "abcd"], ["m"], base, seed=1)
    >>> def failed(unit):
    ...     return TrialRecord(case_id=unit.case_id, trial=unit.trial, passed=False, verdict="fail")
    >>> while (unit := sched.start()) is not None:
    ...     sched.finish(unit, failed(unit))
    >>> report = sched.report()["m"]
    >>> report["verdict"], report["interval"][1] < 0, report["stopped_because"]
    ('regression', True, 'verdict settled')
    """

    def __init__(
        self,
        cases: Sequence[tuple[str, CaseSettings]],
        targets: Sequence[str],
        comparison: BaselineComparison,
        seed: int = 0,
    ) -> None:
        self.comparison = comparison
        self._rng = random.Random(seed)
        self._planned = {case_id: settings.trials for case_id, settings in cases}
        self._targets: dict[str, _Target] = {}
        for order, name in enumerate(targets):
            base = comparison.counts.get(name)
            if base is None:
                raise EvaluationError(
                    f"{parameter('baseline')} {comparison.name!r}: target {name!r} has no trials in the "
                    "baseline run; comparing while running needs every evaluated target in it"
                )
            compared = [(c, s) for c, s in cases if base.get(c, (0, 0))[0] > 0]
            if not compared:
                raise EvaluationError(
                    f"{parameter('baseline')} {comparison.name!r}: no case of the suite has a scored trial "
                    f"of target {name!r} in the baseline run"
                )
            self._targets[name] = _Target(
                name,
                order,
                [c for c, _ in compared],
                [[base[c][0], base[c][1]] for c, _ in compared],
                SequentialComparison(
                    len(compared),
                    comparison.alpha,
                    comparison.margin,
                    baseline=[base[c][0] for c, _ in compared],
                    trials=[s.trials for _, s in compared],
                ),
                [0] * len(compared),
            )
        self.in_flight = 0  #: units started and not finished
        self._turn = 0

    def _open(self, target: _Target) -> bool:
        return target.cause == "running" and target.comparison.verdict() is None

    def start(self) -> Unit | None:
        """The next unit (marked in flight), or None when no target's comparison wants another trial now."""
        names = list(self._targets)
        for step in range(len(names)):
            target = self._targets[names[(self._turn + step) % len(names)]]
            if not self._open(target):
                continue
            draw = target.comparison.draw(self._rng.random())
            if draw.block == 0:
                target.cause = "trials ran out"
                continue
            index = draw.case
            trial = target.started[index]
            target.started[index] += 1
            case_id = target.cases[index]
            target.in_flight[(case_id, trial)] = draw
            self.in_flight += 1
            self._turn = (self._turn + step + 1) % len(names)
            return Unit(target.name, case_id, trial)
        return None

    def _baseline_rate(self, target: _Target, draw: Draw) -> float:
        """The pass rate of the draw's block of baseline trials, drawn without replacement from the unused."""
        left = target.baseline[draw.case]
        passes = 0
        for _ in range(draw.block):
            passed = int(self._rng.random() * left[0] < left[1])
            left[0] -= 1
            left[1] -= passed
            passes += passed
        return passes / draw.block

    def finish(self, unit: Unit, record: TrialRecord) -> None:
        """Record a finished trial: its paired difference goes into the target's comparison."""
        target = self._targets[unit.target]
        draw = target.in_flight.pop((unit.case_id, unit.trial))
        self.in_flight -= 1
        target.finished += 1
        if target.comparison.verdict() is not None:
            target.wasted += 1
        difference = None
        if not record.errored:  # an errored trial voids its draw; its baseline block stays unused
            difference = float(record.passed is True) - self._baseline_rate(target, draw)
        target.comparison.observe(draw, difference)

    def drop(self, target: str, case_id: str, unit: Unit | None = None) -> int:
        """A budget stops this case: the target's comparison ends (unsettled); returns 0 trials dropped.

        ``unit``, just handed out by :meth:`start` and not started, is voided in the comparison.
        """
        state = self._targets[target]
        if unit is not None:
            draw = state.in_flight.pop((unit.case_id, unit.trial))
            self.in_flight -= 1
            state.started[draw.case] -= 1
            state.comparison.cancel(draw)
        if self._open(state):
            state.cause = "budget"
        return 0

    @property
    def exhausted(self) -> bool:
        """True when no unit will ever start again (every target's comparison settled or ended)."""
        return not any(self._open(target) for target in self._targets.values())

    @property
    def saved(self) -> int:
        """Trials of the fixed design never started: planned trials of every case, less those started."""
        if not self.exhausted:
            return 0
        planned = len(self._targets) * sum(self._planned.values())
        return planned - sum(sum(t.started) for t in self._targets.values())

    def wasted(self) -> int:
        """Trials that finished after their target's verdict was settled."""
        return sum(target.wasted for target in self._targets.values())

    def outcome(self, target: str, case_id: str) -> CaseOutcome:
        """A case's trials in this run (a compared run stops no single case: reason None)."""
        state = self._targets[target]
        started = state.started[state.cases.index(case_id)] if case_id in state.cases else 0
        return CaseOutcome(None, None, started, self._planned[case_id], 0)

    def report(self) -> dict[str, dict[str, Any]]:
        """Per target: the verdict, its anytime-valid interval, alpha, margin, trials, why it stopped."""
        out = {}
        for name, target in self._targets.items():
            comparison = target.comparison
            settled = comparison.verdict()
            cause: StopCause = "verdict settled" if settled is not None else target.cause
            low, high = comparison.interval()
            ran_out = None
            if cause == "trials ran out" and comparison.ran_out_of is not None:
                ran_out = self._ran_out(target, *comparison.ran_out_of)
            out[name] = {
                "verdict": settled or "undecided",
                "interval": [low, high],
                "alpha": self.comparison.alpha,
                "margin": self.comparison.margin,
                "parameter": "mean over the compared cases of (candidate - baseline) pass rate",
                "cases_compared": len(target.cases),
                "trials_run": sum(target.started),
                "trials_fixed_design": sum(self._planned[c] for c in target.cases),
                "pairs_observed": comparison.observed,
                "stopped_because": cause,
                "ran_out": ran_out,
                "undecided_gate": UNDECIDED_GATE,
                "baseline": self.comparison.name,
            }
        return out

    def _ran_out(self, target: _Target, run: str, index: int) -> dict[str, Any]:
        """Which run had no trial left for which case, and what would have let the comparison go on."""
        case = target.cases[index]
        baseline_trials = self.comparison.counts[target.name][case][0]
        planned = self._planned[case]
        if run == "baseline":
            advice = (
                f"the baseline run {self.comparison.name!r} has {baseline_trials} trials of case "
                f"{case!r} and every one was paired: a baseline with more trials per case (at least "
                f"twice the {planned} planned here), or a full run without --adaptive compared with "
                f"trialscore compare, which uses every planned trial"
            )
        else:
            advice = (
                f"case {case!r} ran all its {planned} planned candidate trials: more trials per case in the "
                f"suite would let the comparison go on"
            )
        return {"run": run, "case": case, "baseline_trials": baseline_trials, "advice": advice}
