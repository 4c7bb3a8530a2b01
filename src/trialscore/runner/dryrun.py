"""``trialscore run --dry-run``: what a run would do, and what it would cost, without running anything.

Per evaluated target: the cases selected (``--case``, ``--category``), the trials planned
(``--trials`` or each case's count) and the estimated cost.  The estimate comes from the run
store's history of that target (its trials in earlier runs, read-only; nothing is written):

* with a price table (an ``openai`` target's ``prices``) and token counts in the history:
  ``trials x (mean input tokens x input price + mean output tokens x output price) / 1e6``,
  so a price change is taken into account;
* else with known costs in the history: ``trials x`` the mean cost per trial;
* else unknown (None): no earlier trial of that target reported its cost.

>>> DryRunTarget("t", 3, 15, 40, 0.002, None, 0.03).to_dict()["estimated_cost_usd"]
0.03
"""

from __future__ import annotations

import contextlib
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trialscore._record import Record
from trialscore.runner.options import RunOptions
from trialscore.runner.selection import selected_suite
from trialscore.runner.suite import Suite

__all__ = ["DryRun", "DryRunTarget", "plan_run", "planned_trials", "target_history"]


@dataclass(frozen=True)
class DryRunTarget(Record):
    """One target's share of a planned run and its estimated cost (None: unknown)."""

    target: str
    cases: int
    trials: int
    history_trials: int
    mean_cost_per_trial: float | None
    prices: dict[str, Any] | None
    estimated_cost_usd: float | None


@dataclass(frozen=True)
class DryRun(Record):
    """A planned run: the cases, the trials per target and the total estimate (None when any is unknown)."""

    suite: str
    case_ids: tuple[str, ...]
    targets: tuple[DryRunTarget, ...]
    estimated_cost_usd: float | None


def target_history(store: Path, target: str) -> tuple[int, float | None, float | None, float | None]:
    """A target's stored trials: how many, the mean known cost and mean input / output tokens.

    The store is opened read-only; a missing store is an empty history.
    """
    if not store.exists():
        return 0, None, None, None
    try:
        with contextlib.closing(sqlite3.connect(f"file:{store}?mode=ro", uri=True)) as db:
            row = db.execute(
                "SELECT COUNT(*), AVG(cost_usd), AVG(json_extract(record, '$.tokens.input')), "
                "AVG(json_extract(record, '$.tokens.output')) FROM trials WHERE target = ?",
                (target,),
            ).fetchone()
    except sqlite3.Error:
        return 0, None, None, None
    return int(row[0]), row[1], row[2], row[3]


def planned_trials(suite: Suite, options: RunOptions) -> dict[str, int]:
    """Each case that ``options`` would run on ``suite``, with its planned trial count.

    Raises
    ------
    EvaluationError
        For a selection of no case.
    """
    chosen = options.overrides.apply(selected_suite(suite, options.cases, options.categories))
    return {
        case.id: options.trials if options.trials is not None else chosen.settings_for(case).trials
        for case in chosen.cases
    }


def plan_run(suite: Suite, options: RunOptions) -> DryRun:
    """The run ``options`` would start on ``suite`` (see the module docstring); nothing is run or written.

    Raises
    ------
    EvaluationError
        For an unknown target or a selection of no case.
    """
    planned = planned_trials(suite, options)
    names = list(options.targets) if options.targets is not None else list(suite.evaluated_targets)
    trials = sum(planned.values())
    plans = []
    for name in names:
        spec = suite.target(name)
        count, mean_cost, mean_in, mean_out = target_history(options.store, name)
        prices = getattr(spec, "prices", None)
        per_trial = mean_cost
        if prices is not None and mean_in is not None and mean_out is not None:
            per_trial = (mean_in * prices.input_per_mtok + mean_out * prices.output_per_mtok) / 1e6
        plans.append(
            DryRunTarget(
                name,
                len(planned),
                trials,
                count,
                mean_cost,
                prices.model_dump() if prices is not None else None,
                None if per_trial is None else per_trial * trials,
            )
        )
    costs = [plan.estimated_cost_usd for plan in plans]
    total = None if None in costs else sum(cost for cost in costs if cost is not None)
    return DryRun(suite.name, tuple(planned), tuple(plans), total)
