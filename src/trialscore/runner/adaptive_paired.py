"""Comparing while running: an adaptive run against a baseline run stops once the paired verdict is settled.

``trialscore run suite.yaml --baseline RUN --adaptive``: per target, a
:class:`~trialscore.stats._paired_sequential.SequentialComparison` over the cases both runs hold
hands out the candidate's trials in an order fixed by the baseline before the first trial (every
case once, then where the baseline says the difference is least certain), compares each case's
candidate trials with all of the baseline's trials of it (the baseline never runs out), reads the
paired interval at planned looks, and stops the target's trials once the verdict (``regression``,
``improvement`` or ``no_difference`` within the margin) is settled.  Otherwise the comparison ends
``undecided`` when every case has run its planned trials (the last look), or a budget stops it.

:class:`PairedScheduler` has the seam of :class:`~trialscore.runner.adaptive.Scheduler`
(``start``/``finish``/``drop``/``in_flight``/``exhausted``/``outcome``), so every backend leases
its units the same way.  A look is read once every trial handed out before it has finished, so
the verdict does not depend on which trials finish first.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from trialscore.errors import EvaluationError, parameter
from trialscore.results.records import TrialRecord
from trialscore.runner.adaptive import CaseOutcome, Unit
from trialscore.runner.suite import CaseSettings
from trialscore.stats._paired_sequential import Draw, SequentialComparison

__all__ = ["UNDECIDED_GATE", "BaselineComparison", "PairedScheduler", "StopCause", "stop_note"]

#: Why a target's comparison stopped: its verdict settled, every case ran its planned trials, or a budget.
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
    cases: list[str]  # compared case ids, in suite order
    comparison: SequentialComparison
    started: list[int] = field(default_factory=list)
    in_flight: dict[tuple[str, int], Draw] = field(default_factory=dict)
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
        Shuffles the order of each comparison's first round.

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
        self._planned = {case_id: settings.trials for case_id, settings in cases}
        self._targets: dict[str, _Target] = {}
        for name in targets:
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
                [c for c, _ in compared],
                SequentialComparison(
                    [base[c] for c, _ in compared],
                    [s.trials for _, s in compared],
                    comparison.alpha,
                    comparison.margin,
                    seed=seed,
                ),
                [0] * len(compared),
            )
        self.in_flight = 0  #: units started and not finished
        self._turn = 0

    def _open(self, target: _Target) -> bool:
        return target.cause == "running" and not target.comparison.settled

    def start(self) -> Unit | None:
        """The next unit (marked in flight), or None when no target's comparison wants another trial now."""
        names = list(self._targets)
        for step in range(len(names)):
            target = self._targets[names[(self._turn + step) % len(names)]]
            if not self._open(target):
                continue
            draw = target.comparison.draw()
            if draw is None:  # every planned trial handed out: the last looks wait for those in flight
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

    def finish(self, unit: Unit, record: TrialRecord) -> None:
        """A finished trial's outcome goes into the target's comparison (an errored one is left out)."""
        target = self._targets[unit.target]
        draw = target.in_flight.pop((unit.case_id, unit.trial))
        self.in_flight -= 1
        if target.comparison.settled:
            target.wasted += 1
        target.comparison.observe(draw, None if record.errored else record.passed is True)

    def drop(self, target: str, case_id: str, unit: Unit | None = None) -> int:
        """A budget stops this case: the target's comparison ends (unsettled); returns 0 trials dropped.

        ``unit``, just handed out by :meth:`start` and not started, never runs.
        """
        state = self._targets[target]
        if self._open(state):
            state.cause = "budget"
        if unit is not None:
            draw = state.in_flight.pop((unit.case_id, unit.trial))
            self.in_flight -= 1
            state.started[draw.case] -= 1
            state.comparison.cancel(draw)
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
        """Per target: the verdict, its repeated interval, alpha, margin, trials, looks, why it stopped."""
        out = {}
        for name, target in self._targets.items():
            comparison = target.comparison
            settled = comparison.verdict()
            cause: StopCause = target.cause
            if settled is not None:
                cause = "verdict settled"
            elif comparison.ended and cause == "running":
                cause = "trials ran out"
            low, high = comparison.interval()
            out[name] = {
                "verdict": settled or "undecided",
                "interval": [low, high],
                "interval_kind": f"repeated {1 - self.comparison.alpha:.0%} confidence interval",
                "alpha": self.comparison.alpha,
                "margin": self.comparison.margin,
                "parameter": "mean over the compared cases of (candidate - baseline) pass rate",
                "cases_compared": len(target.cases),
                "trials_run": sum(target.started),
                "trials_fixed_design": sum(self._planned[c] for c in target.cases),
                "trials_scored": comparison.observed,
                "looks_read": comparison.looks_read,
                "looks_planned": len(comparison.design.positions),
                "stopped_because": cause,
                "ran_out": self._ran_out(target) if cause == "trials ran out" else None,
                "undecided_gate": UNDECIDED_GATE,
                "baseline": self.comparison.name,
            }
        return out

    def _ran_out(self, target: _Target) -> dict[str, Any]:
        """Which run ran out (the candidate's planned trials: the baseline never does) and what would help."""
        comparison = target.comparison
        if comparison.unscored is not None:
            case = target.cases[comparison.unscored]
            return {
                "run": "candidate",
                "case": case,
                "advice": f"case {case!r} has no scored candidate trial (every one errored), so no look "
                "could be read; fix the errors and run again",
            }
        low, high = comparison.interval()
        half = (high - low) / 2
        floor = comparison.design.baseline_half_width
        held = (
            f"holds 0 and reaches past the margin {self.comparison.margin:g}"
            if self.comparison.margin > 0
            else "holds 0"
        )
        if floor >= 0.8 * half:
            what = (
                f"the baseline {self.comparison.name!r}'s own trials set most of that width (+/-{floor:.2g} "
                "however many candidate trials run): a baseline with more trials per case would narrow it"
            )
        else:
            what = (
                f"more trials per case in the suite would narrow it, to no less than +/-{floor:.2g} (the "
                f"baseline {self.comparison.name!r}'s own noise; a baseline with more trials per case "
                "lowers that)"
            )
        return {
            "run": "candidate",
            "trials_planned": sum(self._planned[c] for c in target.cases),
            "half_width": half,
            "baseline_half_width": floor,
            "advice": f"every case ran its planned candidate trials; the last look's interval "
            f"[{low:.3g}, {high:.3g}] still {held}; {what}",
        }
