"""Seeded simulation of the non-inferiority verdict and its plans (issue 28, item 3).

Two-level model of :mod:`trialscore.stats._plan`: item pass rates from a Beta with the plan's mean
and between-item spread, ``trials`` Bernoulli trials per item and run.  **Power**: both runs share
the items' rates (the candidate is truly as good); the plan's items and trials should give the
planned 80% power (accepted: 76-86%).  **False pass**: the candidate's rates are every item's rate
moved by one shift (clipped to [0, 1]) whose population mean change is exactly ``-margin``; the
share of ``non-inferior`` verdicts is compared with the one-sided alpha.  The verdicts are
computed in vectorized form over 20,000 replications (Monte Carlo SE 0.15 points at 5%), checked
to equal :func:`non_inferiority` itself on the first replications.  The same for cost per success
at a true ratio of exactly ``1 + margin``, through the library on every replication.

**Plans from pilots**: each replication draws a pilot from the population (one run, or both runs
for a paired pilot), plans from it (a plan depends on the pilot's items, not their order, so a
pilot equal to an earlier one reuses its plan), then runs the planned design once: the share of
planned designs that pass is the power the plans deliver, the pilot's own noise included.  The same for
cost per success, planned from a paired pilot of both runs with log-normal costs.  Run with
``-m slow -s`` to print the figures quoted in docs/agents.md.
"""

from __future__ import annotations

import math
from functools import cache
from typing import Any

import numpy as np
import pytest
from scipy.special import stdtrit

from tests.stats._populations import jeffreys_noise
from trialscore import Bank
from trialscore.stats import (
    NonInferiorityPlan,
    _plan,
    cost_non_inferiority,
    non_inferiority,
    plan_cost_non_inferiority,
    plan_non_inferiority,
)
from trialscore.stats._compare import FLOOR_SHARE
from trialscore.stats._effort import ItemTotals
from trialscore.stats._plan import _item_rates, _shifted
from trialscore.stats._ratio_compare import _matched_rows, shared_rows

REPS = 20_000
CHECKED = 25
#: (margin, pass rate, spread, trials, one-sided alpha, seed, excess allowed beyond 2 Monte Carlo SE)
DESIGNS = [
    (0.1, 0.7, 0.5, 3, 0.05, 1, 0.01),
    (0.05, 0.5, 0.3, 5, 0.025, 2, 0.0),
]


def passes(a: np.ndarray, b: np.ndarray, trials: int, margin: float, alpha: float) -> np.ndarray:
    """Non-inferior verdicts of the floored paired t (compare_paired at level 2 alpha), per replication."""
    d = (b - a) / trials
    items = d.shape[1]
    variance = np.maximum(
        d.var(axis=1, ddof=1),
        FLOOR_SHARE * (jeffreys_noise(a, trials) + jeffreys_noise(b, trials)).mean(axis=1),
    )
    low = d.mean(axis=1) - stdtrit(items - 1, 1 - alpha) * np.sqrt(variance / items)
    return np.maximum(low, -1.0) > -margin


def checked(a: np.ndarray, b: np.ndarray, trials: int, margin: float, alpha: float) -> np.ndarray:
    fast = passes(a, b, trials, margin, alpha)
    counts = np.full(a.shape[1], trials)
    for rep in range(min(CHECKED, a.shape[0])):
        result = non_inferiority(
            Bank.from_counts(counts, a[rep]), Bank.from_counts(counts, b[rep]), margin, alpha=alpha
        )
        assert result.passed == bool(fast[rep])
        assert (result.verdict == "non-inferior") == (result.interval.low > -margin)
    return fast


@pytest.mark.slow
@pytest.mark.parametrize("design", DESIGNS)
def test_power_as_planned_and_false_pass_at_the_margin(design: tuple[float, ...]) -> None:
    margin, rate, spread, trials_, alpha, seed, excess = design
    trials = int(trials_)
    items = plan_non_inferiority(margin, pass_rate=rate, spread=spread, trials=trials, alpha=alpha).items
    shifted = _shifted(_item_rates(rate, spread), margin, -1.0)
    assert shifted is not None
    size = 1 / spread - 1
    rng = np.random.default_rng(int(seed))
    p = rng.beta(rate * size, (1 - rate) * size, (REPS, items))
    q = np.clip(p + shifted.shift, 0.0, 1.0)
    base = rng.binomial(trials, p)
    power = float(checked(base, rng.binomial(trials, p), trials, margin, alpha).mean())
    false_pass = float(checked(base, rng.binomial(trials, q), trials, margin, alpha).mean())
    error = math.sqrt(alpha * (1 - alpha) / REPS)
    print(
        f"\nnon-inferiority margin {margin:g}, pass rate {rate:g}, spread {spread:g}: {items} items x "
        f"{trials} trials: power {power:.2%} (planned 80%), false pass at the margin {false_pass:.2%} "
        f"(one-sided alpha {alpha:g}, MC se {error:.2%})"
    )
    assert 0.76 <= power <= 0.86
    assert false_pass <= alpha + 2 * error + excess


def cost_run(rng: np.random.Generator, rates: np.ndarray, level: np.ndarray, scale: float) -> ItemTotals:
    """Per-item totals of one run: 3 trials an item, log-normal costs (sigma 1) times ``scale``."""
    trials = np.full(rates.size, 3)
    cost = np.exp(level[:, None] + rng.normal(0.0, 1.0, (rates.size, 3))).sum(axis=1) * scale
    none = np.zeros(rates.size, dtype=np.int64)
    return ItemTotals(tuple(range(rates.size)), trials, rng.binomial(3, rates), cost, none, (), none)


def test_a_plan_is_the_fewest_items_reaching_the_power() -> None:
    """The search from the normal approximation ends where one item fewer falls short of the power."""
    rng = np.random.default_rng(4)
    pilots = [Bank.from_counts(np.full(30, 3), rng.binomial(3, rng.beta(2, 1, 30))) for _ in range(5)]
    designs: list[dict[str, Any]] = [
        *({"pass_rate": rate, "trials": trials} for rate in (0.02, 0.5, 0.9) for trials in (1, 4)),
        *({"pilot": pilot} for pilot in pilots),
    ]
    searched = 0
    for design in designs:
        for margin, alpha, power in ((0.1, 0.05, 0.8), (0.03, 0.025, 0.9), (0.3, 0.1, 0.5)):
            plan = plan_non_inferiority(margin, alpha=alpha, power=power, **design)
            assert plan.feasible and plan.items >= 2 and plan.achieved_power >= power
            if plan.items > 2:
                fewer = {**design, "items": plan.items - 1, "trials": plan.trials}
                assert plan_non_inferiority(margin, alpha=alpha, power=power, **fewer).achieved_power < power
                searched += 1
    assert searched >= 30


def test_runs_of_the_same_ids_pair_as_by_lookup() -> None:
    """The simulations' runs share their ids: paired row by row, the rows and ids the lookup gives."""
    rng = np.random.default_rng(0)
    for size in (0, 1, 2, 5, 40):
        for ids in (tuple(range(size)), tuple(f"q{i}" for i in rng.permutation(size)), (1,) * size):
            trials = [rng.integers(0, 3, size) * (rng.random(size) < 0.8) for _ in range(2)]
            runs = [ItemTotals(ids, n, n, n * 1.0, n, (), n) for n in trials]
            for got, expected in zip(shared_rows(*runs), _matched_rows(*runs), strict=True):
                assert np.asarray(got).tolist() == np.asarray(expected).tolist()


@pytest.mark.slow
def test_cost_false_pass_at_the_margin_at_most_alpha() -> None:
    """The candidate costs exactly 1 + margin times as much per success: 'no more expensive' at most alpha."""
    margin, alpha, reps, items = 0.2, 0.05, 3000, 100
    rng = np.random.default_rng(3)
    count = 0
    for _ in range(reps):
        rates = rng.beta(4, 2, items)
        level = rng.normal(0.0, 0.5, items)
        base = cost_run(rng, rates, level, 1.0)
        dearer = cost_run(rng, rates, level, 1.0 + margin)
        count += cost_non_inferiority(base, dearer, margin, alpha=alpha).passed
    share = count / reps
    error = math.sqrt(alpha * (1 - alpha) / reps)
    print(f"\ncost per success at 1 + margin ({margin:g}), {items} items x 3 trials: false pass {share:.2%}")
    assert share <= alpha + 2 * error


#: (margin, pass rate, spread, one-sided alpha, pilot items, pilot trials, paired pilot, seed, excess)
PILOTS = [
    (0.1, 0.7, 0.5, 0.05, 40, 3, False, 5, 0.01),
    (0.05, 0.5, 0.3, 0.025, 60, 5, True, 6, 0.0),
]
PILOT_REPS = 4000


@pytest.mark.slow
@pytest.mark.parametrize("design", PILOTS)
def test_plans_from_a_pilot_reach_their_power(
    design: tuple[float, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pilot drawn from the population plans the design; the planned design, run once, passes ~80%.

    Each replication draws its pilot and its design's runs in turn; the verdicts of the designs of one
    size are then read at once (each row's as alone: the same reductions along the row).  The planner's
    item-rate quantiles are remembered for every pilot's mean and spread here, not only the last 64
    (pilots of other items recur with the same two floats: the one-run pilot's 913 quantile grids are
    607 distinct), the same function of the same floats.
    """
    monkeypatch.setattr(_plan, "_item_rates", cache(_item_rates.__wrapped__))
    margin, rate, spread, alpha, pilot_items_, pilot_trials_, paired, seed, excess = design
    pilot_items, pilot_trials = int(pilot_items_), int(pilot_trials_)
    shifted = _shifted(_item_rates(rate, spread), margin, -1.0)
    assert shifted is not None
    size = 1 / spread - 1
    rng = np.random.default_rng(int(seed))
    good = bad = 0
    planned = []
    plans: dict[bytes, NonInferiorityPlan] = {}
    ran: dict[int, list[np.ndarray]] = {}  # each planned design's three runs, by its items
    for rep in range(PILOT_REPS):
        rates = rng.beta(rate * size, (1 - rate) * size, pilot_items)
        runs = np.stack([rng.binomial(pilot_trials, rates) for _ in range(1 + bool(paired))], axis=1)
        # a pilot's items are exchangeable: in a fixed order, an equal pilot is planned once
        runs = runs[np.lexsort(runs.T[::-1])]
        key = runs.tobytes()
        if key not in plans:
            banks = [Bank.from_counts(np.full(pilot_items, pilot_trials), counts) for counts in runs.T]
            candidate = banks[1] if paired else None
            plans[key] = plan_non_inferiority(margin, pilot=banks[0], pilot_candidate=candidate, alpha=alpha)
        plan = plans[key]
        assert plan.trials == pilot_trials and plan.feasible
        planned.append(plan.items)
        p = rng.beta(rate * size, (1 - rate) * size, (1, plan.items))
        base = rng.binomial(pilot_trials, p)
        same = rng.binomial(pilot_trials, p)
        worse = rng.binomial(pilot_trials, np.clip(p + shifted.shift, 0.0, 1.0))
        if rep < CHECKED:  # the vectorized verdict is the library's
            good += int(checked(base, same, pilot_trials, margin, alpha)[0])
            bad += int(checked(base, worse, pilot_trials, margin, alpha)[0])
        else:
            ran.setdefault(plan.items, []).append(np.concatenate((base, same, worse)))
    for runs_of_a_size in ran.values():  # the verdicts of the designs of one size at once, row by row
        base, same, worse = np.stack(runs_of_a_size, axis=1)
        good += int(passes(base, same, pilot_trials, margin, alpha).sum())
        bad += int(passes(base, worse, pilot_trials, margin, alpha).sum())
    power, false_pass = good / PILOT_REPS, bad / PILOT_REPS
    error = math.sqrt(alpha * (1 - alpha) / PILOT_REPS)
    low, middle, high = np.percentile(planned, [5, 50, 95])
    kind = "a paired" if paired else "a one-run"
    print(
        f"\nplanned from {kind} pilot of {pilot_items} items x {pilot_trials} trials (margin {margin:g}, "
        f"pass rate {rate:g}, spread {spread:g}, one-sided alpha {alpha:g}): {middle:.0f} items planned "
        f"(5-95%: {low:.0f}-{high:.0f}); power {power:.2%} (planned 80%), false pass at the margin "
        f"{false_pass:.2%} (MC se {error:.2%})"
    )
    assert 0.76 <= power <= 0.86
    assert false_pass <= alpha + 2 * error + excess


@pytest.mark.slow
def test_cost_plan_from_a_paired_pilot_reaches_its_power() -> None:
    """ "No more expensive than", planned from a paired pilot of 60 items: ~80% power, false pass <= alpha."""
    margin, alpha, reps, pilot_items = 0.2, 0.05, 2000, 60
    rng = np.random.default_rng(8)
    good = bad = 0
    planned = []
    for _ in range(reps):
        rates, level = rng.beta(4, 2, pilot_items), rng.normal(0.0, 0.5, pilot_items)
        pilot = cost_run(rng, rates, level, 1.0), cost_run(rng, rates, level, 1.0)
        plan = plan_cost_non_inferiority(margin, pilot=pilot[0], pilot_candidate=pilot[1], alpha=alpha)
        assert plan.trials == 3 and plan.feasible
        planned.append(plan.items)
        rates, level = rng.beta(4, 2, plan.items), rng.normal(0.0, 0.5, plan.items)
        base = cost_run(rng, rates, level, 1.0)
        good += cost_non_inferiority(base, cost_run(rng, rates, level, 1.0), margin, alpha=alpha).passed
        bad += cost_non_inferiority(
            base, cost_run(rng, rates, level, 1.0 + margin), margin, alpha=alpha
        ).passed
    power, false_pass = good / reps, bad / reps
    error = math.sqrt(alpha * (1 - alpha) / reps)
    low, middle, high = np.percentile(planned, [5, 50, 95])
    print(
        f"\ncost per success planned from a paired pilot of {pilot_items} items x 3 trials "
        f"(margin {margin:g}, one-sided alpha {alpha:g}): {middle:.0f} items planned "
        f"(5-95%: {low:.0f}-{high:.0f}); power {power:.2%} (planned 80%), false pass at the margin "
        f"{false_pass:.2%} (MC se {error:.2%})"
    )
    assert 0.76 <= power <= 0.86
    assert false_pass <= alpha + 2 * error
