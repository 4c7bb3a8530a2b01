"""Plans of the non-inferiority tests: from a pass rate, a pilot, a paired pilot, and for cost per success."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from trialscore import Bank
from trialscore.errors import EvaluationError, InsufficientDataError
from trialscore.stats import plan_cost_non_inferiority, plan_non_inferiority
from trialscore.stats._effort import ItemTotals, item_totals
from trialscore.stats._variance import item_moments


def test_plan_matches_the_power_of_its_design() -> None:
    plan = plan_non_inferiority(0.1, pass_rate=0.7, trials=3)
    assert plan.feasible and plan.achieved_power >= 0.8
    fewer = plan_non_inferiority(0.1, pass_rate=0.7, trials=3, items=plan.items - 1)
    assert fewer.achieved_power < 0.8
    assert plan_non_inferiority(0.1, pass_rate=0.7, items=plan.items).trials == 3
    # a candidate expected slightly better needs fewer items; slightly worse, more
    assert plan_non_inferiority(0.1, pass_rate=0.7, trials=3, expected=0.03).items < plan.items
    assert plan_non_inferiority(0.1, pass_rate=0.7, trials=3, expected=-0.03).items > plan.items


def test_plan_infeasible_and_bad_expected() -> None:
    capped = plan_non_inferiority(0.03, pass_rate=0.95, spread=0.9, items=3, expected=-0.025)
    assert capped.trials is None and not capped.feasible and "Add items" in capped.note
    with pytest.raises(EvaluationError, match="expected \\+ margin must be > 0"):
        plan_non_inferiority(0.1, pass_rate=0.7, expected=-0.1)


def test_a_pilot_plans_as_its_estimated_pass_rate_and_spread() -> None:
    """A one-run pilot is the pass-rate plan at the pilot's mean and spread (between-item share)."""
    rng = np.random.default_rng(1)
    pilot = Bank.from_counts([4] * 50, rng.binomial(4, rng.beta(2.0, 1.0, 50)))
    means, within, trials = item_moments(pilot)
    mean = float(means.mean())
    spread = (float(means.var(ddof=1)) - float(np.mean(within / trials))) / (mean * (1 - mean))
    plan = plan_non_inferiority(0.1, pilot=pilot)
    same = plan_non_inferiority(0.1, pass_rate=mean, spread=spread, trials=4)
    assert (plan.items, plan.trials) == (same.items, 4)
    assert plan.achieved_power == pytest.approx(same.achieved_power, rel=1e-12)
    assert "one pilot run of 50 items x 4 trials" in plan.source
    assert plan_non_inferiority(0.1, pilot=pilot, trials=2).items > plan.items
    assert plan_non_inferiority(0.1, pilot=pilot, items=plan.items).trials == 4


def test_a_paired_pilot_estimates_the_spread_of_the_differences() -> None:
    rng = np.random.default_rng(2)
    rates = rng.beta(2.0, 1.0, 60)
    base = Bank.from_counts([3] * 60, rng.binomial(3, rates))
    alike = plan_non_inferiority(
        0.1, pilot=base, pilot_candidate=Bank.from_counts([3] * 60, rng.binomial(3, rates))
    )
    unlike = plan_non_inferiority(
        0.1, pilot=base, pilot_candidate=Bank.from_counts([3] * 60, rng.binomial(3, rng.permutation(rates)))
    )
    assert "paired pilot of 60 items" in alike.source
    assert unlike.between > alike.between and unlike.items > alike.items  # items that move apart need more
    with pytest.raises(EvaluationError, match="give exactly one of pass_rate or pilot"):
        plan_non_inferiority(0.1, pass_rate=0.7, pilot=base)
    with pytest.raises(EvaluationError, match="spread goes with pass_rate"):
        plan_non_inferiority(0.1, pilot=base, spread=0.3)


def test_the_plans_power_is_the_one_sided_noncentral_t() -> None:
    plan = plan_non_inferiority(0.1, pass_rate=0.7, trials=3)
    se = math.sqrt((plan.between + plan.within / 3) / plan.items)
    critical = stats.t.ppf(0.95, plan.items - 1)
    assert plan.achieved_power == pytest.approx(stats.nct.sf(critical, plan.items - 1, 0.1 / se), rel=1e-9)


def cost_pilot(seed: int, items: int = 80, scale: float = 1.0) -> tuple[ItemTotals, ItemTotals]:
    rng = np.random.default_rng(seed)
    rates, level = rng.beta(4, 2, items), rng.normal(0.0, 0.5, items)
    ids = np.repeat(np.arange(items), 3)

    def run(factor: float) -> ItemTotals:
        costs = np.exp(np.repeat(level, 3) + rng.normal(0.0, 1.0, items * 3)) * factor
        return item_totals(ids.tolist(), rng.binomial(1, np.repeat(rates, 3)), costs)

    return run(1.0), run(scale)


def test_cost_plan_power_averages_the_noncentral_t_over_the_variance() -> None:
    base, cand = cost_pilot(3)
    plan = plan_cost_non_inferiority(0.2, pilot=base, pilot_candidate=cand)
    assert plan.metric == "cost per success" and plan.trials == 3 and plan.feasible
    assert plan.achieved_power >= 0.8
    fewer = plan_cost_non_inferiority(0.2, pilot=base, pilot_candidate=cand, items=plan.items - 1)
    assert fewer.items == plan.items - 1 and fewer.achieved_power < 0.8
    # at the pilot's estimate alone (no uncertainty about the variance) the design has at least that power
    se = math.sqrt(plan.between / plan.items)
    at_estimate = stats.nct.sf(stats.t.ppf(0.95, plan.items - 1), plan.items - 1, math.log(1.2) / se)
    assert at_estimate >= plan.achieved_power
    cheaper = plan_cost_non_inferiority(0.2, pilot=base, pilot_candidate=cand, expected=0.9)
    assert cheaper.items < plan.items
    assert "effective degrees of freedom" in plan.source and "paired pilot of 80 items" in plan.source


def test_cost_plan_refuses_what_cannot_pass() -> None:
    base, cand = cost_pilot(4)
    with pytest.raises(EvaluationError, match="expected must be a ratio above 0 and below 1 \\+ margin"):
        plan_cost_non_inferiority(0.2, pilot=base, pilot_candidate=cand, expected=1.2)
    with pytest.raises(EvaluationError, match="margin must be > 0"):
        plan_cost_non_inferiority(0.0, pilot=base, pilot_candidate=cand)
    nothing = item_totals([0, 0, 1, 1], [0, 0, 0, 0], [1.0, 1.0, 1.0, 1.0])
    with pytest.raises(InsufficientDataError, match="candidate has no solved trial on the shared items"):
        plan_cost_non_inferiority(0.2, pilot=base, pilot_candidate=nothing)
