"""``summary.json``: per target, seed 000's stimulus and skill scores and the suite metrics with intervals.

Per target:

* ``trials``: planned, stored, scored, passed, errored, cost-limited (skipped).
* ``metrics``: pass@1 (mean over cases of ``c / n``), unbiased pass@k and pass^k
  at ``k`` = the fewest scored trials of any case, and the mean case score, each
  with the 95% ``wilson-eff`` interval that ``trialscore score`` prints
  (:func:`trialscore.stats.item_interval`: cases are the units, and when they
  all agree the trials bound the interval's width, so it never collapses).
  Errored trials are left out of every ``n``; cases with no scored
  trial are left out and counted in ``cases_without_scored_trials``.  pass^k states its
  ``convention`` (:func:`trialscore.stats._conventions.convention`).
* ``case_verdicts``: how many cases got each verdict, and the share that passed
  with its Wilson interval.
* ``cost_usd``: the known spend, null when every trial's cost is unknown (then also
  ``trials_with_unknown_cost``, which counts the trials a known spend leaves out).
* ``stimulus_scores`` (one per case) and ``skill_scores`` (one per category,
  ``uncategorized`` for cases without one) from :mod:`trialscore.compat.scoring`; a
  skill's pass mark is ``execution.skill_threshold`` (else ``threshold``, else 0.5).
  Cases of a skill with different numbers of scored trials (errored trials, the
  cost limit) are scored at the skill's common ``k``, their fewest scored trials.

For the run: ``errors`` (:func:`trialscore.runner.failures.error_summary`: errored trials grouped
by message, with the targets and cases each group hit), ``warnings`` (an errored share, a run
whose every trial errored, unenforceable or reached cost limits), and ``conventions``: which pass^k
each figure is (the suite metrics' unbiased ``pass_hat_k``; the stimulus and skill scores'
``pass_to_the_k``, seed 000's plug-in) and what errored trials did.

The suite metrics of two cases (:func:`target_metrics`), and those an adaptive run reports
(:func:`stopped_metrics`) when it stopped the first case after two of its four trials:

>>> from trialscore.runner.strategies import aggregate
>>> from trialscore.runner.suite import CaseSettings
>>> from trialscore.results.records import TrialRecord
>>> def case(i, flags, strategy="pass_at_k"):
...     records = [TrialRecord(case_id=f"c{i}", trial=t, passed=f, verdict="pass" if f else "fail",
...                            score=float(f)) for t, f in enumerate(flags)]
...     settings = CaseSettings(4, strategy, None, 1, 0, 0, None, None)
...     return aggregate(records, settings, f"c{i}", "a")
>>> m = target_metrics([case(0, [True, False]), case(1, [True, True])])
>>> m["pass_at_1"]["estimate"], m["pass_at_k"]["estimate"], m["k"]
(0.75, 1.0, 2)
>>> m = stopped_metrics([case(0, [True, False], "pass_all"), case(1, [True] * 4, "pass_all")])
>>> m["k"], m["pass_at_1"]["estimate"], m["basis"]
(2, 0.75, 'the first 2 scored trials of every case')
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from trialscore._words import plural
from trialscore.compat.scoring import compute_skill_score
from trialscore.core.bank import Bank
from trialscore.core.estimators import avg, bayes, pass_at_k, pass_hat_k
from trialscore.results.judged import JUDGE_ONLY
from trialscore.runner.aggregator import RunAggregator, TargetTotals
from trialscore.runner.strategies import CaseResult
from trialscore.stats._conventions import convention
from trialscore.stats._intervals import bounded_mean_interval, item_interval, proportion_interval

if TYPE_CHECKING:
    from trialscore.runner.run_report import RunReport

__all__ = ["UNCATEGORIZED", "build_summary", "conventions", "stopped_metrics", "tallies_of", "target_metrics"]

#: The skill name of cases without a category.
UNCATEGORIZED = "uncategorized"


def _scored(cases: Sequence[CaseResult]) -> tuple[list[CaseResult], dict[str, Any]]:
    """The cases with at least one scored trial, and the counts every metrics block starts with."""
    scored = [case for case in cases if case.total_attempts > 0]
    return scored, {"cases_scored": len(scored), "cases_without_scored_trials": len(cases) - len(scored)}


def target_metrics(cases: Sequence[CaseResult]) -> dict[str, Any]:
    """Suite metrics of one target's cases: pass@1, pass@k, pass^k, mean score, with intervals.

    Every interval is the default :func:`trialscore.stats.item_interval` (the same one
    ``trialscore score`` prints), with the cases as items; the mean score's is
    :func:`trialscore.stats.bounded_mean_interval` of the case scores, its ceiling
    the trials behind them.  (Examples in the module docstring.)
    """
    scored, result = _scored(cases)
    if not scored:
        return result
    bank = Bank.from_counts([c.total_attempts for c in scored], [c.passed_attempts for c in scored])
    k = bank.min_trials
    scores = np.array([c.stimulus.aggregate_score for c in scored if c.stimulus is not None], dtype=float)
    result["k"] = k
    result.update(_pass_metrics(bank, k))
    if scores.size:
        ceiling = max(float(bank.n.sum()), float(scores.size))
        interval = bounded_mean_interval(np.clip(scores, 0.0, 1.0), max_n=ceiling).to_dict()
        result["mean_score"] = {"estimate": math.fsum(scores) / len(scores), "interval": interval}
    return result


def _pass_metrics(bank: Bank, k: int) -> dict[str, Any]:
    """pass@1, pass@k and pass^k of a bank, each with its default item interval."""
    result = {}
    for name, metric, metric_k, estimate in (
        ("pass_at_1", "avg", None, avg(bank)),
        ("pass_at_k", "pass@k", k, pass_at_k(bank, k)),
        ("pass_hat_k", "pass^k", k, pass_hat_k(bank, k)),
    ):
        result[name] = {"estimate": estimate, "interval": item_interval(bank, metric, metric_k).to_dict()}
    result["pass_hat_k"]["convention"] = convention("unbiased", "exclude")
    return result


def conventions() -> dict[str, Any]:
    """Which pass^k each figure of the summary is, and what errored trials did (the runner leaves them out).

    >>> conventions()["pass_to_the_k"]["estimator"]
    'plugin'
    """
    return {
        "pass_hat_k": convention("unbiased", "exclude"),
        "pass_to_the_k": {
            **convention("plugin", "exclude"),
            "where": "stimulus_scores and skill_scores (seed 000's MultiTrialMetrics: a case's, or the mean "
            "of a skill's cases', per-trial pass rate to the power k)",
        },
    }


def stopped_metrics(cases: Sequence[CaseResult]) -> dict[str, Any]:
    """Suite metrics of an adaptive run, only where they stay valid after stopping.

    A case stopped early has fewer trials, chosen by its own outcomes, so its ``c / n`` and the
    unbiased pass@k / pass^k of all its trials are no longer unbiased.  Reported instead:

    * ``pass_at_1``, ``pass_at_k``, ``pass_hat_k`` at ``k`` = the fewest scored trials any case
      kept, computed on the *first* ``k`` scored trials of every case (every case ran them
      before it could stop; ``basis`` says so);
    * ``bayes``: Bayes@N's posterior mean and sd over every trial run (a posterior depends on
      the data, not on the rule that stopped collecting them).

    The mean case score is not reported (a stopped case's mean is biased).  (Examples in the
    module docstring.)
    """
    scored, result = _scored(cases)
    if not scored:
        return result
    k = min(case.total_attempts for case in scored)
    first = [[t.verdict == "pass" for t in case.trials if t.verdict != "error"][:k] for case in scored]
    bank = Bank.from_counts([k] * len(scored), [sum(flags) for flags in first])
    result["k"] = k
    result["basis"] = f"the first {k} scored trials of every case"
    result.update(_pass_metrics(bank, k))
    everything = Bank.from_counts([c.total_attempts for c in scored], [c.passed_attempts for c in scored])
    mu, sigma = bayes(everything)
    result["bayes"] = {"mean": mu, "sd": sigma, "basis": "every trial run (Bayes@N)"}
    return result


def _verdicts(cases: Sequence[CaseResult]) -> dict[str, Any]:
    counts = {verdict: 0 for verdict in ("pass", "fail", "borderline", "error", "skipped")}
    for case in cases:
        counts[case.verdict] += 1
    decided = counts["pass"] + counts["fail"] + counts["borderline"]
    share = proportion_interval(counts["pass"], decided).to_dict() if decided else None
    return {"counts": counts, "pass_share": share}


def _skills(cases: Sequence[CaseResult], threshold: float) -> list[dict[str, Any]]:
    groups: dict[str, list[CaseResult]] = {}
    for case in cases:
        groups.setdefault(case.category or UNCATEGORIZED, []).append(case)
    skills: list[dict[str, Any]] = []
    for name, members in groups.items():
        stimuli = [case.stimulus for case in members if case.stimulus is not None]
        if not stimuli:
            skills.append({"skill_name": name, "error": "no case of this skill has a scored trial"})
            continue
        skill = compute_skill_score(name, stimuli, threshold)
        record = skill.to_dict()
        record["stimulus_scores"] = [stimulus.stimulus_name for stimulus in skill.stimulus_scores]
        record["threshold"] = threshold
        skills.append(record)
    return skills


def _stimulus_dict(case: CaseResult) -> dict[str, Any] | None:
    if case.stimulus is None:
        return None
    record = case.stimulus.to_dict()
    del record["trial_results"]
    return record


def build_summary(report: RunReport) -> dict[str, Any]:
    """The ``summary.json`` document of a completed run (see the module docstring)."""
    suite = report.suite
    tallies = tallies_of(report)
    targets: dict[str, Any] = {}
    for name in report.settings.get("targets", []):
        cases = [case for case in report.cases if case.target == name]
        totals = tallies.targets.get(name, TargetTotals())
        targets[name] = {
            "trials": {
                "planned": sum(case.planned_attempts for case in cases),
                "stored": totals.stored,
                "scored": totals.scored,
                "passed": totals.passed,
                "errored": totals.errored,
                "cost_limited": sum(
                    case.planned_attempts - len(case.trials) for case in cases if case.cost_limited
                ),
            },
            "metrics": target_metrics(cases) if report.adaptive is None else stopped_metrics(cases),
            "case_verdicts": _verdicts(cases),
            "stimulus_scores": [s for s in (_stimulus_dict(case) for case in cases) if s is not None],
            "skill_scores": _skills(cases, suite.execution.skill_mark),
            **totals.cost_dict(),
        }
    errors = tallies.errors.summary([case.id for case in suite.cases])
    return {
        "run_id": report.run_id,
        "suite": suite.name,
        "settings": report.settings,
        "trials": {"planned": report.planned, "stored": report.committed, "skipped": report.skipped},
        "cost": report.cost,
        "warnings": [*_error_warnings(errors), *report.warnings],
        "errors": errors,
        "conventions": conventions(),
        "targets": targets,
        **({"calibration": JUDGE_ONLY} if suite.judge_targets() else {}),  # graded by an llm_judge
        **({"adaptive": report.adaptive} if report.adaptive is not None else {}),
    }


def tallies_of(report: RunReport) -> RunAggregator:
    """The run's running counts; for a report made without them, counted from its store."""
    if report.tallies is not None:
        return report.tallies
    tallies = RunAggregator()
    for record in report.iter_records():
        tallies.add(record)
    return tallies


def _error_warnings(errors: dict[str, Any]) -> list[str]:
    if errors["all_errored"]:
        return [
            f"every trial errored ({errors['errored_trials']}): no trial could be graded, so there are no "
            "metrics; see errors"
        ]
    if errors["errored_trials"]:
        return [
            f"{errors['errored_trials']} of {plural(errors['stored_trials'], 'trial')} errored and are left "
            "out of "
            "the metrics; see errors"
        ]
    return []
