r"""Adaptive trials: stop spending on a case once its verdict is settled.

Two stopping rules, and a scheduler that hands out work units under them.

**Exact curtailment** (``execution.adaptive: true``, ``--adaptive``).  After each finished
trial, :func:`settled` asks whether *any* outcome of the case's remaining trials (each one
passing or failing with any score in [0, 1], or erroring) could change the verdict the case
would get at its planned trial count.  If none can, no further trial of the case starts:
the verdict equals the fixed run's on the same seeds, by construction.

==========================  ====================================================================
strategy                    settled when
==========================  ====================================================================
``pass_at_k``               a trial passed (pass)
``pass_all``                a trial failed (fail)
``mean``                    every reachable mean (``m`` more scored trials, ``m = 0..r``, all
                            scoring 0 to all scoring 1, computed as the fixed run computes it)
                            gets the same verdict
``confidence_interval``     the verdict is the same at the extremes of a superset of the
                            reachable intervals: Wilson's interval depends on the mean and on
                            :math:`u = q^2 / n_{\text{eff}} \le t^2_{n_0-1, 0.975} / n_0`,
                            and its bounds rise with the mean and spread with :math:`u`
==========================  ====================================================================

**Sequential** (``--sequential --alpha A``).  For ``mean`` and ``confidence_interval`` cases, a
:class:`~trialscore.stats._sequential.BettingSequence` of the trial scores also stops a case as
soon as the anytime-valid confidence sequence lies wholly above (``pass``) or below (``fail``)
the threshold: the chance of a wrong sequential verdict is at most ``alpha`` however often it is
watched.  A case that reaches its planned trial count unsettled gets the fixed-design verdict
(whose error rate is the fixed design's, not ``alpha``).  ``pass_at_k`` and ``pass_all`` are
already settled by one trial, so they use curtailment alone.

**Scheduling** (:class:`Scheduler`).  A case may have at most :func:`distance` trials in
flight: the fewest further trials whose outcomes could settle it.  No trial in flight is then
wasted by curtailment (a finished trial lowers the distance by at most one, so the trials in
flight never exceed it, and a settled case has distance 0); the pool stays full by taking the
next eligible case in trial-major order (fewest trials started first, then target and suite
order).  The scheduler knows nothing of asyncio: given finished trials it says which
``(target, case, trial)`` units may start and which cases are settled.
"""

from __future__ import annotations

import dataclasses
import functools
import heapq
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Literal

from trialscore.errors import EvaluationError, parameter
from trialscore.results.records import TrialRecord
from trialscore.runner.strategies import CaseResult, CaseVerdict, mean_verdict
from trialscore.runner.suite import CaseSettings
from trialscore.stats._scipy import ndtri, stdtrit
from trialscore.stats._sequential import BettingSequence

__all__ = [
    "AdaptiveRule",
    "CaseOutcome",
    "Scheduler",
    "StopReason",
    "Tally",
    "Unit",
    "distance",
    "settled",
    "stopped_result",
]

#: Why an adaptive run stopped a case before its planned trial count.
StopReason = Literal["settled_pass", "settled_fail", "settled_borderline", "sequential"]

#: The most further trials :func:`distance` looks ahead (beyond it, the cap on trials in flight).
LOOKAHEAD = 64

_VERDICTS = ("fail", "borderline", "pass")  # worst to best
_ORDER: dict[str, int] = {verdict: rank for rank, verdict in enumerate(_VERDICTS)}
_MARGIN = 1e-9  # the interval rule's bounds are computed in floating point: settle only clear of it


@dataclass(frozen=True)
class Tally:
    """A case's scored trials as the stopping rules see them: count, exact score sum, passes.

    ``total`` is the exact sum of the float scores (a :class:`~fractions.Fraction`), so
    ``float(total + m)`` is exactly ``math.fsum`` of the scores and ``m`` ones.
    """

    n: int = 0
    total: Fraction = Fraction(0)
    passed: int = 0

    def add(self, score: float, passed: bool) -> Tally:
        """This tally with one more scored trial."""
        return Tally(self.n + 1, self.total + Fraction(score), self.passed + passed)


def _mean_verdicts(settings: CaseSettings, tally: Tally, remaining: int) -> set[str]:
    """Every verdict the ``mean`` strategy can reach with up to ``remaining`` more trials."""
    reached: set[str] = set()
    # float(total + m) exactly, without building a Fraction per m (int / int rounds correctly)
    numerator, denominator = tally.total.numerator, tally.total.denominator
    total = numerator / denominator
    for m in range(remaining + 1):
        n = tally.n + m
        if n == 0:
            reached.add("error")
            continue
        if tally.passed == 0:
            reached.add("fail")  # every further trial may fail: no trial passed, the case fails
            if m == 0:
                continue
        low = mean_verdict(total / n, True, settings)
        high = mean_verdict((numerator + m * denominator) / denominator / n, True, settings)
        reached.update(_VERDICTS[_ORDER[low] : _ORDER[high] + 1])
        if len(reached) > 1:
            break
    return reached


def _wilson(theta: float, u: float) -> tuple[float, float]:
    """Wilson's interval at mean ``theta`` with ``u = q**2 / n``."""
    centre = (theta + u / 2.0) / (1.0 + u)
    half = math.sqrt(u * theta * (1.0 - theta) + u * u / 4.0) / (1.0 + u)
    return centre - half, centre + half


def _interval_verdict(settings: CaseSettings, tally: Tally, remaining: int) -> CaseVerdict | None:
    threshold = settings.threshold
    if threshold is None or tally.n < 2:
        return None
    n_max = tally.n + remaining
    u_max = max(float(stdtrit(tally.n - 1, 0.975)), float(ndtri(0.975))) ** 2 / tally.n
    theta_low = float(tally.total) / n_max
    theta_high = float(tally.total + remaining) / n_max
    if _wilson(theta_low, u_max)[0] >= threshold + _MARGIN:
        return "pass"
    if _wilson(theta_high, u_max)[1] < threshold - _MARGIN:
        return "fail"
    return None


@functools.lru_cache(maxsize=65536)
def settled(settings: CaseSettings, tally: Tally, remaining: int) -> CaseVerdict | None:
    """The case's verdict at its planned trial count if no outcome of ``remaining`` more trials can change it.

    ``None`` while some outcome could.  With ``remaining == 0`` it is the verdict itself
    (``error`` when no trial was scored).

    Examples
    --------
    >>> s = CaseSettings(10, "mean", None, 60.0, 2, 0.5, 0.8, None)
    >>> t = Tally()
    >>> for _ in range(3):
    ...     t = t.add(0.0, False)
    >>> settled(s, t, 7)          # 0 of 3: at most 7/10 = 0.7 < 0.8
    'fail'
    >>> settled(s, Tally().add(0.0, False).add(0.0, False), 8)   # 8/10 is still reachable
    >>> settled(CaseSettings(10, "pass_at_k", None, 60.0, 2, 0.5, None, None), Tally().add(1.0, True), 9)
    'pass'
    """
    strategy = settings.strategy
    if strategy == "pass_at_k":
        if tally.passed > 0:
            return "pass"
        return None if remaining else ("fail" if tally.n else "error")
    if strategy == "pass_all":
        if tally.passed < tally.n:
            return "fail"
        return None if remaining else ("pass" if tally.n else "error")
    if strategy == "confidence_interval":
        if remaining == 0:
            return _final_interval_verdict(settings, tally)
        return _interval_verdict(settings, tally, remaining)
    reached = _mean_verdicts(settings, tally, remaining)
    return reached.pop() if len(reached) == 1 else None  # type: ignore[return-value]


def _final_interval_verdict(settings: CaseSettings, tally: Tally) -> CaseVerdict | None:
    """With no trial left the verdict is known, but only the scores give it: leave it to aggregation."""
    return "error" if tally.n == 0 else None


def _settles(settings: CaseSettings, tally: Tally, remaining: int, ones: int, zeros: int) -> bool:
    # the tally after ``ones`` trials scoring 1.0 (passed) and ``zeros`` scoring 0.0, in one step
    after = Tally(tally.n + ones + zeros, tally.total + ones, tally.passed + ones)
    return settled(settings, after, remaining - ones - zeros) is not None


@functools.lru_cache(maxsize=65536)
def distance(settings: CaseSettings, tally: Tally, remaining: int) -> int:
    """The fewest further trials (0/1 outcomes) that could settle the case; 0 when it is settled.

    At most ``remaining`` (all trials done settles every case) and at most :data:`LOOKAHEAD`.

    >>> s = CaseSettings(10, "mean", None, 60.0, 2, 0.5, 0.8, None)
    >>> distance(s, Tally(), 10)   # three failures settle a fail; eight passes a pass
    3
    >>> distance(CaseSettings(10, "pass_all", None, 60.0, 2, 0.5, None, None), Tally(), 10)
    1
    """
    if remaining == 0 or settled(settings, tally, remaining) is not None:
        return 0
    for j in range(1, min(remaining, LOOKAHEAD) + 1):
        mixes = range(j + 1) if remaining <= 32 else (0, j)
        if any(_settles(settings, tally, remaining, ones, j - ones) for ones in mixes):
            return j
    return min(remaining, LOOKAHEAD)


@dataclass(frozen=True)
class Unit:
    """One work unit: trial ``trial`` of case ``case_id`` against target ``target``."""

    target: str
    case_id: str
    trial: int


@dataclass(frozen=True)
class CaseOutcome:
    """What the scheduler decided for one (target, case): its verdict and why it stopped (None: ran out)."""

    verdict: CaseVerdict | None
    reason: StopReason | None
    started: int
    planned: int
    wasted: int
    interval: tuple[float, float] | None = None
    alpha: float | None = None


@dataclass
class _State:
    settings: CaseSettings
    order: tuple[int, int]
    pending: list[int]  # trial indices not yet started, ascending
    tally: Tally = field(default_factory=Tally)
    finished: int = 0
    in_flight: int = 0
    verdict: CaseVerdict | None = None
    reason: StopReason | None = None
    dropped: bool = False
    wasted: int = 0
    sequence: BettingSequence | None = None
    #: the sequence's distance, with the (values seen, trials remaining) it was found at
    sequence_steps: tuple[tuple[int, int], int] | None = None

    @property
    def remaining(self) -> int:
        """Trials of the planned count not finished (in flight or not started)."""
        return self.settings.trials - self.finished


class Scheduler:
    """Which units may start next, and which cases are settled, given the finished trials.

    Parameters
    ----------
    cases : sequence of (case id, settings)
        The suite's cases in order, each with its settings (planned trials, strategy, marks).
    targets : sequence of str
        The evaluated targets.
    done : iterable of TrialRecord
        Trials already finished (a resumed run): they count and are not handed out again.
    alpha : float, optional
        Adds the sequential rule at this error rate (``mean`` and ``confidence_interval`` cases).

    Examples
    --------
    >>> s = CaseSettings(3, "pass_all", None, 60.0, 2, 0.5, None, None)
    >>> sched = Scheduler([("a", s), ("b", s)], ["m"])
    >>> first, second = sched.start(), sched.start()
    >>> (first.case_id, first.trial), (second.case_id, second.trial), sched.start()
    (('a', 0), ('b', 0), None)
    >>> sched.finish(first, TrialRecord(case_id="a", trial=0, passed=False, verdict="fail", score=0.0))
    >>> sched.outcome("m", "a").reason, sched.start()     # b's one trial in flight could settle it
    ('settled_fail', None)
    >>> sched.finish(second, TrialRecord(case_id="b", trial=0, passed=True, verdict="pass", score=1.0))
    >>> sched.start(), sched.saved
    (Unit(target='m', case_id='b', trial=1), 2)
    """

    def __init__(
        self,
        cases: Sequence[tuple[str, CaseSettings]],
        targets: Sequence[str],
        done: Iterable[TrialRecord] = (),
        alpha: float | None = None,
    ) -> None:
        self.alpha = alpha
        self._states: dict[tuple[str, str], _State] = {}
        for t_index, name in enumerate(targets):
            for c_index, (case_id, settings) in enumerate(cases):
                state = _State(settings, (t_index, c_index), list(range(settings.trials)))
                if alpha is not None and settings.strategy in ("mean", "confidence_interval"):
                    state.sequence = BettingSequence(alpha, settings.threshold)
                self._states[(name, case_id)] = state
        self._heap: list[tuple[int, int, int, str, str]] = []
        self.in_flight = 0  #: units started and not finished
        self.saved = 0  #: trials of the planned design never started because their case was settled
        self._queued: set[tuple[str, str]] = set()
        for record in done:
            found = self._states.get((record.target or "", record.case_id))
            if found is None or record.trial not in found.pending:
                continue
            state = found
            state.pending.remove(record.trial)
            state.in_flight += 1
            self.in_flight += 1
            self._record(state, record)
        for key in self._states:
            self._push(key)

    def _eligible(self, state: _State) -> bool:
        if state.verdict is not None or state.dropped or not state.pending:
            return False
        return state.in_flight < max(1, self._distance(state))

    def _distance(self, state: _State) -> int:
        steps = distance(state.settings, state.tally, state.remaining)
        if state.sequence is not None:
            at = (state.sequence.t, state.remaining)  # both change only when a trial finishes
            if state.sequence_steps is None or state.sequence_steps[0] != at:
                state.sequence_steps = (at, _sequence_distance(state.sequence, state.remaining))
            steps = min(steps, state.sequence_steps[1])
        return steps

    def _push(self, key: tuple[str, str]) -> None:
        state = self._states[key]
        if key not in self._queued and self._eligible(state):
            self._queued.add(key)
            heapq.heappush(self._heap, (state.pending[0], *state.order, *key))

    def start(self) -> Unit | None:
        """A unit that may start now (marked in flight), or None when none may until a trial finishes."""
        while self._heap:
            *_, name, case_id = heapq.heappop(self._heap)
            key = (name, case_id)
            self._queued.discard(key)
            state = self._states[key]
            if not self._eligible(state):
                continue
            trial = state.pending.pop(0)
            state.in_flight += 1
            self.in_flight += 1
            self._push(key)
            return Unit(name, case_id, trial)
        return None

    def finish(self, unit: Unit, record: TrialRecord) -> None:
        """Record a finished trial of ``unit``: it may settle its case or let more units start."""
        key = (unit.target, unit.case_id)
        state = self._states[key]
        if state.verdict is not None:
            state.wasted += 1
        self._record(state, record)
        self._push(key)

    def _record(self, state: _State, record: TrialRecord) -> None:
        state.in_flight -= 1
        self.in_flight -= 1
        state.finished += 1
        if not record.errored:
            score = float(record.score or 0.0)
            state.tally = state.tally.add(score, record.passed is True)
            if state.sequence is not None:
                state.sequence.update(min(max(score, 0.0), 1.0))
        if state.verdict is not None:
            return
        verdict = settled(state.settings, state.tally, state.remaining)
        if verdict is not None and state.remaining > 0:
            state.verdict, state.reason = verdict, _reason(verdict)
        elif state.sequence is not None and state.sequence.side is not None and state.remaining > 0:
            state.verdict = "pass" if state.sequence.side == "above" else "fail"
            state.reason = "sequential"
        if state.verdict is not None:
            self.saved += len(state.pending)

    def drop(self, target: str, case_id: str, unit: Unit | None = None) -> int:
        """Start no more units of this case (its budget is spent); returns its trials never started.

        ``unit``, just handed out by :meth:`start` but not started after all, is given back first.
        A settled case keeps its unstarted trials as saved, not dropped (returns 0).
        """
        state = self._states[(target, case_id)]
        if unit is not None:
            state.in_flight -= 1
            self.in_flight -= 1
            state.pending.insert(0, unit.trial)
        if state.verdict is not None:
            return 0
        state.dropped = True
        left = len(state.pending)
        state.pending = []
        return left

    @property
    def exhausted(self) -> bool:
        """True when no unit will ever start again (every case settled, dropped or fully started)."""
        return not any(
            state.verdict is None and not state.dropped and state.pending for state in self._states.values()
        )

    def outcome(self, target: str, case_id: str) -> CaseOutcome:
        """The decision for one (target, case)."""
        state = self._states[(target, case_id)]
        interval = state.sequence.interval() if state.sequence is not None and state.sequence.t else None
        return CaseOutcome(
            state.verdict,
            state.reason,
            state.settings.trials - len(state.pending),
            state.settings.trials,
            state.wasted,
            interval,
            self.alpha,
        )

    def wasted(self) -> int:
        """Trials that finished after their case was settled (started before it was)."""
        return sum(state.wasted for state in self._states.values())


def _reason(verdict: CaseVerdict) -> StopReason:
    if verdict == "pass":
        return "settled_pass"
    if verdict == "fail":
        return "settled_fail"
    if verdict == "borderline":
        return "settled_borderline"
    raise EvaluationError(f"a case cannot be settled as {verdict!r} before its trials ran")


def _sequence_distance(sequence: BettingSequence, remaining: int) -> int:
    """The fewest further 0/1 trials that could take the sequence past its threshold (0 if it is)."""
    if sequence.side is not None:
        return 0
    for value in (1.0, 0.0):
        probe = sequence.copy()
        for j in range(1, min(remaining, LOOKAHEAD) + 1):
            probe.update(value)
            if probe.side is not None:
                remaining = min(remaining, j)
                break
    return min(remaining, LOOKAHEAD)


@dataclass(frozen=True)
class AdaptiveRule:
    """The stopping rule of an adaptive run: exact curtailment, plus the sequential rule at ``alpha``."""

    sequential: bool = False
    alpha: float | None = None

    @classmethod
    def choose(
        cls, adaptive: bool, sequential: bool, alpha: float, *, source: str = "options"
    ) -> AdaptiveRule | None:
        """The rule for these settings (None: a fixed run).

        >>> AdaptiveRule.choose(True, True, 0.05).describe()
        'exact curtailment + sequential (betting confidence sequence, alpha=0.05)'
        >>> AdaptiveRule.choose(False, True, 0.05)
        Traceback (most recent call last):
        ...
        trialscore.errors.EvaluationError: options: sequential needs adaptive (adaptive)
        """
        if sequential and not adaptive:
            raise EvaluationError(f"{source}: sequential needs adaptive ({parameter('adaptive')})")
        if not 0.0 < alpha < 1.0:
            raise EvaluationError(f"{source}: alpha must satisfy 0 < alpha < 1; got {alpha}")
        if not adaptive:
            return None
        return cls(True, alpha) if sequential else cls()

    def describe(self) -> str:
        """The rule in words, as the terminal and ``summary.json`` state it."""
        if self.sequential:
            return f"exact curtailment + sequential (betting confidence sequence, alpha={self.alpha:g})"
        return "exact curtailment"

    def to_dict(self) -> dict[str, object]:
        """Plain JSON-ready dict (stored with the run, so a resumed run keeps its rule)."""
        return {"sequential": self.sequential, "alpha": self.alpha, "rule": self.describe()}


def stopped_result(result: CaseResult, outcome: CaseOutcome) -> CaseResult:
    """A case's aggregated result with the adaptive decision: its stop reason, and the sequential verdict.

    A case settled by curtailment keeps the verdict its trials give (the fixed run's, by
    construction); a case stopped by the sequential rule takes that rule's verdict, with its
    confidence sequence; a case that ran out of planned trials keeps the fixed-design verdict.
    """
    if outcome.reason is None or outcome.verdict is None:
        return result
    sequence = None
    if outcome.reason == "sequential" and outcome.interval is not None:
        sequence = {"interval": list(outcome.interval), "alpha": outcome.alpha}
    return dataclasses.replace(result, verdict=outcome.verdict, stop_reason=outcome.reason, sequence=sequence)
