"""Which unit of a run starts next: the job order, the fixed, adaptive or paired design, and the budgets.

* **Order.** A fixed run starts its trials trial-major (trial 0 of every target and case, then
  trial 1, ...: :func:`job_order`), so a cost limit or an interruption leaves every case with a
  fair share.  An adaptive run asks its :class:`~trialscore.runner.adaptive.Scheduler` (exact
  curtailment, the sequential rule), a run compared with a baseline while running its
  :class:`~trialscore.runner.adaptive_paired.PairedScheduler`: :meth:`Schedule.take`.
* **Cost.** Before a unit starts, the run budget (``execution.cost_limit_usd``) and the case's
  budget (``trials.cost_limit_usd``, per target and case) are checked; once one is reached no
  new trial of its scope starts and the case is marked ``cost_limited``.  Spend is charged when
  a trial finishes (:meth:`Schedule.charge`).
* **Resume.** The trials earlier sessions committed are charged and never handed out again.

The schedule knows nothing of asyncio or of where units run: the session asks it
(:mod:`trialscore.runner.session`).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from typing import Any

from trialscore._words import plural
from trialscore.results.records import TrialRecord
from trialscore.runner.adaptive import AdaptiveRule, Scheduler, Unit, stopped_result
from trialscore.runner.adaptive_paired import BaselineComparison, PairedScheduler
from trialscore.runner.budget import Budget
from trialscore.runner.failures import total_usd
from trialscore.runner.progress import RunCounters
from trialscore.runner.strategies import CaseResult
from trialscore.runner.suite import CaseSettings

__all__ = ["Schedule", "job_order"]


def job_order(
    cases: Sequence[tuple[str, CaseSettings]], targets: Sequence[str], done: Collection[Unit] = ()
) -> Iterator[Unit]:
    """The trials to run, trial-major (trial 0 of every target and case, then trial 1, ...), lazily.

    A generator, not a list: a suite of 100,000-trial cases starts its first trial at once and
    holds no job list in memory.  Units in ``done`` are left out.

    >>> settings = [("a", CaseSettings(2, "mean", None, 60.0, 0, 0.0, None, None)),
    ...             ("b", CaseSettings(1, "mean", None, 60.0, 0, 0.0, None, None))]
    >>> [(u.case_id, u.trial) for u in job_order(settings, ["m"], {Unit("m", "a", 0)})]
    [('b', 0), ('a', 1)]
    """
    active = list(cases)  # suite order, each round: the cases that still have a trial to run
    trial = 0
    while active:
        for name in targets:
            for case_id, _ in active:
                unit = Unit(name, case_id, trial)
                if unit not in done:
                    yield unit
        trial += 1
        active = [(case_id, settings) for case_id, settings in active if settings.trials > trial]


class Schedule:
    """The units of one session of a run, handed out under its design and budgets.

    ``cases`` maps case id to its settings (in suite order), ``targets`` are the evaluated targets,
    ``limit`` the run's budget in USD (None: none), ``stored`` the trials earlier sessions committed.
    With ``rule`` the run is adaptive; with ``comparison`` too, it is compared with a baseline while
    it runs (``seed`` orders the baseline's draws).  ``on_unknown_cost`` is told the target of the
    first trial that reports no cost under a limit (which then cannot be enforced).
    """

    def __init__(
        self,
        cases: Mapping[str, CaseSettings],
        targets: Sequence[str],
        *,
        limit: float | None,
        seed: int,
        stored: Sequence[TrialRecord] = (),
        rule: AdaptiveRule | None = None,
        comparison: BaselineComparison | None = None,
        on_unknown_cost: Callable[[str], None] | None = None,
    ) -> None:
        self.evaluated = list(targets)
        self.settings = dict(cases)
        self.counters = RunCounters(total=len(self.evaluated) * sum(s.trials for s in self.settings.values()))
        self.run_budget = Budget(limit)
        self.case_budgets = {
            (name, case_id): Budget(settings.cost_limit_usd)
            for name in self.evaluated
            for case_id, settings in self.settings.items()
        }
        self.limited = limit is not None or any(s.cost_limit_usd is not None for s in self.settings.values())
        self.cost_limited: set[tuple[str, str]] = set()
        self.unreported_cost = 0
        self.stopping = False
        self._on_unknown_cost = on_unknown_cost
        self._started: dict[tuple[str, str], int] = {}  # trials of each (target, case) stored or started
        for record in stored:
            self.charge(record)
            key = (record.target or "", record.case_id)
            self._started[key] = self._started.get(key, 0) + 1
        done = {Unit(r.target or "", r.case_id, r.trial) for r in stored}
        self._jobs = job_order(list(self.settings.items()), self.evaluated, done)
        self.planned = self.counters.total
        self.rule = rule
        self.scheduler: Scheduler | PairedScheduler | None = None
        units = list(self.settings.items())
        if comparison is not None:  # comparing while running: the paired verdict decides the trials
            self.scheduler = PairedScheduler(units, self.evaluated, comparison, seed)
        elif rule is not None:
            self.scheduler = Scheduler(units, self.evaluated, stored, rule.alpha)
        if self.scheduler is not None:
            self.counters.total -= self.scheduler.saved

    def charge(self, record: TrialRecord) -> None:
        """Count a committed trial and charge its cost to the run's and its case's budgets."""
        self.run_budget.charge(record.cost_usd)
        self.case_budgets[(record.target or "", record.case_id)].charge(record.cost_usd)
        if record.cost_usd is None and not record.errored:
            self.unreported_cost += 1
            if self.unreported_cost == 1 and self.limited and self._on_unknown_cost is not None:
                self._on_unknown_cost(record.target or "")
        counters = self.counters
        counters.done += 1
        counters.spent_usd, counters.unknown_cost = self.run_budget.spent, self.run_budget.unknown
        if record.errored:
            counters.errored += 1
        else:
            counters.scored += 1
            counters.passed += record.passed is True

    def take(self) -> Unit | None:
        """The next unit to start, skipping (and marking) those a reached budget stops; None when none
        may start now (see :attr:`waiting`)."""
        if self.scheduler is not None:
            return self._take_adaptive(self.scheduler)
        while not self.stopping:
            if self.run_budget.exhausted:
                self.skip_rest()
                return None
            unit = next(self._jobs, None)
            if unit is None:
                return None
            key = (unit.target, unit.case_id)
            self._started[key] = self._started.get(key, 0) + 1
            if self.case_budgets[key].exhausted:
                self.cost_limited.add(key)
                self.counters.skipped += 1
                self.counters.done += 1
                continue
            return unit
        return None

    def _take_adaptive(self, scheduler: Scheduler | PairedScheduler) -> Unit | None:
        """The next unit the adaptive scheduler allows, skipping (and marking) the cases a budget stops."""
        while not self.stopping:
            if self.run_budget.exhausted:
                self.skip_rest()
                return None
            unit = scheduler.start()
            if unit is None:
                return None
            key = (unit.target, unit.case_id)
            if self.case_budgets[key].exhausted:
                left = scheduler.drop(unit.target, unit.case_id, unit)
                self.cost_limited.add(key)
                self.counters.skipped += left
                self.counters.done += left
                continue
            self._started[key] = self._started.get(key, 0) + 1
            return unit
        return None

    @property
    def waiting(self) -> bool:
        """True when no unit may start now but one in flight may still unlock one (adaptive runs)."""
        scheduler = self.scheduler
        return (
            scheduler is not None
            and not self.stopping
            and not scheduler.exhausted
            and scheduler.in_flight > 0
        )

    def finished(self, record: TrialRecord) -> None:
        """Tell the adaptive scheduler a unit finished (its case may be settled now)."""
        if self.scheduler is None:
            return
        saved = self.scheduler.saved
        self.scheduler.finish(Unit(record.target or "", record.case_id, record.trial), record)
        self.counters.total -= self.scheduler.saved - saved

    def skip_rest(self) -> None:
        """The run budget is reached (or no more trial fits it): count every trial not started as
        skipped and cost-limited, without walking them."""
        if self.scheduler is not None:
            for key in self.case_budgets:
                left = self.scheduler.drop(*key)
                if left:
                    self.cost_limited.add(key)
                    self.counters.skipped += left
                    self.counters.done += left
            return
        self._jobs = iter(())
        for key in self.case_budgets:
            left = self.settings[key[1]].trials - self._started.get(key, 0)
            if left > 0:
                self._started[key] = self.settings[key[1]].trials
                self.cost_limited.add(key)
                self.counters.skipped += left
                self.counters.done += left

    # -- what the schedule says of the session, once it ended ------------------------------------

    def stopped(self, target: str, case_id: str, result: CaseResult) -> CaseResult:
        """The aggregated ``result`` of a case with the adaptive decision on it (as it is in a fixed run)."""
        if self.scheduler is None:
            return result
        return stopped_result(result, self.scheduler.outcome(target, case_id))

    def end_status(self, completed: bool) -> str:
        """How a session ended: ``complete``, ``cost-limited`` (the limit kept trials from starting) or
        ``interrupted``."""
        if not completed:
            return "interrupted"
        return "cost-limited" if self.cost_limited or self.counters.skipped else "complete"

    def adaptive_summary(self, trials_run: int) -> dict[str, Any] | None:
        """Trials run, saved against the fixed design and wasted in flight, and the rule (None: a fixed
        run)."""
        scheduler, rule = self.scheduler, self.rule
        if scheduler is None or rule is None:
            return None
        summary = {
            **rule.to_dict(),
            "trials_planned": self.planned,
            "trials_run": trials_run,
            "trials_saved": scheduler.saved,
            "trials_wasted_in_flight": scheduler.wasted(),
        }
        if isinstance(scheduler, PairedScheduler):
            summary["rule"] = "sequential paired comparison with the baseline (betting confidence sequence)"
            summary["comparison"] = scheduler.report()
        return summary

    def warnings(self) -> list[str]:
        """What the user must know of the budgets: an unenforceable limit, cost-limited cases."""
        warnings = []
        if self.limited and self.unreported_cost:
            warnings.append(
                "cost limit could not be enforced: "
                f"{plural(self.unreported_cost, 'trial')} reported no cost; "
                "trials went on"
            )
        if self.cost_limited:
            warnings.append(
                f"cost limit reached: {plural(self.counters.skipped, 'trial')} of "
                f"{plural(len(self.cost_limited), 'case')} not started (marked cost_limited)"
            )
        return warnings

    def cost_summary(self, case_limit: float | None) -> dict[str, Any]:
        """The spend, what is known of it, and the limits (``case_limit``: the suite's per-case one)."""
        budget = self.run_budget
        every_cost_unknown = (
            budget.unknown > 0 and budget.unknown == self.counters.done - self.counters.skipped
        )
        return {
            "spent_usd": None if every_cost_unknown else total_usd(budget.spent),
            "trials_with_unknown_cost": budget.unknown,
            "run_limit_usd": budget.limit,
            "case_limit_usd": case_limit,
            "limit_enforced": None if not self.limited else self.unreported_cost == 0,
            "cost_limited_cases": sorted(f"{target}/{case}" for target, case in self.cost_limited),
            "skipped_trials": self.counters.skipped,
        }
