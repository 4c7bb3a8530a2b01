"""Seeded simulation of the cost-per-success interval (issue 28, item 1).

Two-level model: 100 items with pass rates from Beta(4, 2) and an item cost level
``exp(a_i)``, ``a_i ~ N(0, 0.5^2)``; each trial costs ``exp(a_i + e)`` with ``e ~ N(0, 1)``
(log-normal costs, sigma 1) and passes with the item's rate.  The estimand is
``E[cost] / E[pass] = exp(0.125 + 0.5) / (2/3)``.  Every replication runs :func:`per_success`
itself.  Run ``pytest tests/stats/test_effort_simulation.py -m slow -s`` to print the
figures quoted in docs/agents.md.  Monte Carlo standard error of a coverage near 95% with 2,000
replications: 0.35 points.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from trialscore.stats import per_success

ITEMS = 100
REPS = 4000
ITEM_SPREAD = 0.5
TRUE_RATIO = math.exp(ITEM_SPREAD**2 / 2 + 0.5) / (4 / 6)


def one_run(rng: np.random.Generator, trials: np.ndarray) -> tuple[list[int], np.ndarray, np.ndarray]:
    """Item ids, outcomes and costs of one run with ``trials[i]`` trials of item ``i``."""
    rate = rng.beta(4, 2, ITEMS)
    level = rng.normal(0.0, ITEM_SPREAD, ITEMS)
    item = np.repeat(np.arange(ITEMS), trials)
    passed = (rng.random(item.size) < rate[item]).astype(int)
    cost = np.exp(level[item] + rng.normal(0.0, 1.0, item.size))
    return item.tolist(), passed, cost


def coverage(design: str, seed: int) -> tuple[float, float]:
    """Share of 95% intervals holding the true ratio, and share missing it from above."""
    rng = np.random.default_rng(seed)
    hits = above = 0
    for _ in range(REPS):
        trials = np.full(ITEMS, 3) if design == "3 trials" else rng.integers(1, 8, ITEMS)
        if design == "1 trial":
            trials = np.ones(ITEMS, dtype=np.int64)
        item, passed, cost = one_run(rng, trials)
        if passed.sum() == 0:
            continue
        interval = per_success(item, passed, cost).interval
        hits += interval.contains(TRUE_RATIO)
        above += TRUE_RATIO > interval.high
    return hits / REPS, above / REPS


@pytest.mark.slow
@pytest.mark.parametrize(("design", "seed"), [("3 trials", 1), ("ragged 1-7 trials", 2)])
def test_cost_per_success_coverage(design: str, seed: int) -> None:
    hit, above = coverage(design, seed)
    print(f"\ncost per success, {ITEMS} items, {design}: coverage {hit:.2%}, missed above {above:.2%}")
    assert 0.93 <= hit <= 0.97


@pytest.mark.slow
def test_one_trial_per_item_coverage_is_measured() -> None:
    """One trial an item is the hardest case (each item's cost is a single log-normal draw)."""
    hit, above = coverage("1 trial", 3)
    print(f"\ncost per success, {ITEMS} items, 1 trial: coverage {hit:.2%}, missed above {above:.2%}")
    assert 0.93 <= hit <= 0.97
