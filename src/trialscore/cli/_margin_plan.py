"""``plan --non-inferior MARGIN``: the items and trials "is the candidate no worse?" needs.

The plans of :mod:`trialscore.stats._noninferiority_plan` for ``compare --non-inferior MARGIN``:

* pass rates (:func:`~trialscore.stats.plan_non_inferiority`): from ``--pass-rate`` (with
  ``--spread``), a ``--pilot`` run, or a paired pilot (``--pilot`` and ``--pilot-candidate``),
  one plan per ``--by`` group of a pilot;
* a per-success metric (``--metric cost-per-success``...: "no more expensive than",
  :func:`~trialscore.stats.plan_cost_non_inferiority`): from a paired pilot of both runs, whose
  costs say how the two runs' costs move together item by item.

``--alpha`` is the one-sided level, as in ``compare --non-inferior``; ``--expected`` the truth the
power is planned at (a difference of pass rates, 0 by default; a ratio of costs, 1 by default).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trialscore.cli._groups import judge_each
from trialscore.cli._options import JSON_VERSION, ReadOptions, group_map, read_together
from trialscore.cli._render import Report, Section
from trialscore.core.metrics import resolve_metric
from trialscore.errors import EvaluationError, InsufficientDataError

if TYPE_CHECKING:
    from collections.abc import Callable

    from trialscore.stats import NonInferiorityPlan

__all__ = ["MarginPlan", "margin_plan_report"]


@dataclass(frozen=True)
class MarginPlan:
    """What ``plan --non-inferior`` was asked: the margin, the metric, where the variances come from, the
    design's fixed parts and the test's level and power."""

    margin: float
    metric: str | None
    pass_rate: float | None
    pilot: Path | None
    pilot_candidate: Path | None
    spread: float | None
    expected: float | None
    items: int | None
    trials: int | None
    alpha: float
    power: float


def _plans(
    ask: MarginPlan, by: list[str], read: ReadOptions
) -> list[tuple[str, Callable[[], NonInferiorityPlan]]]:
    """Each group's plan, to be made (a label and the call that makes it)."""
    from trialscore.stats import plan_non_inferiority

    metric = resolve_metric(ask.metric or "avg", trial_values=True)
    if metric.needs == "trial values":
        return _cost_plans(ask, metric.name, by, read)
    if not metric.trial_mean:
        raise EvaluationError(
            f"--non-inferior plans the pass rate (avg) or a per-success metric; got --metric {metric.name}"
        )
    shared: dict[str, Any] = {
        "items": ask.items,
        "trials": ask.trials,
        "alpha": ask.alpha,
        "power": ask.power,
    }
    shared["expected"] = 0.0 if ask.expected is None else ask.expected
    if ask.pilot is None:
        plan = partial(plan_non_inferiority, ask.margin, pass_rate=ask.pass_rate, spread=ask.spread, **shared)
        return [("all", plan)]
    files = [[ask.pilot]] + ([[ask.pilot_candidate]] if ask.pilot_candidate is not None else [])
    read_runs = [group_map(counts) for counts in read_together(files, by, read)]
    plans: list[tuple[str, Callable[[], NonInferiorityPlan]]] = []
    for key, group in read_runs[0].items():
        other = None
        if len(read_runs) > 1:
            if key not in read_runs[1]:
                raise EvaluationError(
                    f"--pilot-candidate has no group {group.label}; it has "
                    f"{sorted(g.label for g in read_runs[1].values())}"
                )
            other = read_runs[1][key].bank()
        plans.append(
            (
                group.label,
                partial(
                    plan_non_inferiority, ask.margin, pilot=group.bank(), pilot_candidate=other, **shared
                ),
            )
        )
    return plans


def _cost_plans(
    ask: MarginPlan, metric: str, by: list[str], read: ReadOptions
) -> list[tuple[str, Callable[[], NonInferiorityPlan]]]:
    """Each group's "no more expensive than" plan, from a paired pilot of both runs."""
    from trialscore.results.per_success import FIELDS, group_trials, quantity_of, totals_of
    from trialscore.stats import plan_cost_non_inferiority

    if ask.pilot is None or ask.pilot_candidate is None:
        raise EvaluationError(
            f"--non-inferior with --metric {metric} plans from a paired pilot: give --pilot BASELINE and "
            "--pilot-candidate CANDIDATE (how the two runs' costs move together item by item sets the "
            "items needed; no assumed rate says it)"
        )
    if ask.trials is not None or ask.spread is not None or ask.pass_rate is not None:
        raise EvaluationError(
            f"--metric {metric} plans at the pilot's trials per item from its measured variance; "
            "--trials, --spread and --pass-rate go with pass-rate plans"
        )
    quantity = quantity_of(metric)
    base, cand = read_together([[ask.pilot], [ask.pilot_candidate]], by, read, detail=FIELDS)
    others = {group.label: group for group in group_trials(cand)}
    plans: list[tuple[str, Callable[[], NonInferiorityPlan]]] = []
    for group in group_trials(base):
        if group.label not in others:
            raise EvaluationError(f"--pilot-candidate has no group {group.label}; it has {sorted(others)}")
        plans.append(
            (
                group.label,
                partial(
                    plan_cost_non_inferiority,
                    ask.margin,
                    pilot=totals_of(group, quantity),
                    pilot_candidate=totals_of(others[group.label], quantity),
                    expected=1.0 if ask.expected is None else ask.expected,
                    items=ask.items,
                    alpha=ask.alpha,
                    power=ask.power,
                    quantity=quantity,
                ),
            )
        )
    return plans


def margin_plan_report(ask: MarginPlan, by: list[str], read: ReadOptions) -> Report:
    """The plans of ``plan --non-inferior`` (one per group of a pilot), as ``plan`` prints them."""
    judged, untested = judge_each((label, {"group": label}, make) for label, make in _plans(ask, by, read))
    if not judged:
        raise InsufficientDataError("; ".join(u.line().replace("not tested", "no plan") for u in untested))
    plans: list[tuple[str, NonInferiorityPlan]] = [(label, plan) for label, _, plan in judged]
    first = plans[0][1]
    payload: dict[str, Any] = {"command": "plan", "version": JSON_VERSION, "plan": first.to_dict()}
    if ask.pilot is not None:
        payload["by"] = by
        payload["plans"] = [{"label": label, **plan.to_dict()} for label, plan in plans]
        payload["not_planned"] = [u.to_dict() for u in untested]
    rows = [[label, plan.items, plan.trials, plan.achieved_power, plan.feasible] for label, plan in plans]
    rows += [[u.label, None, None, None, "no plan"] for u in untested]
    notes = []
    for label, plan in plans:
        prefix = f"{label}: " if len(plans) > 1 else ""
        notes += [f"{prefix}{plan.note}", f"{prefix}test: {plan.test}", f"{prefix}assumptions: {plan.source}"]
    notes += [u.line().replace("not tested", "no plan") for u in untested]
    metric = "" if ask.metric in (None, "avg") else f" --metric {ask.metric}"
    then = f"--non-inferior {ask.margin:g}{metric} --alpha {ask.alpha:g}"
    notes.append(f"then: trialscore compare BASELINE CANDIDATE {then}")
    title = (
        f"plan: non-inferiority of {first.metric}, margin {first.margin:g}, one-sided alpha {first.alpha:g}, "
        f"power {first.target_power:g}"
    )
    header = ["group", "items", "trials", "power", "feasible"]
    return Report(payload, [Section(header, rows, title=title, notes=notes)])
