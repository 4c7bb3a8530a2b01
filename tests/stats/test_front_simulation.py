"""Seeded simulation of the cost-success front's probabilities (issue 28, item 2).

Two-level model: 200 items, each with a difficulty ``z_i ~ N(0, 1)`` shared by every target and a
cost level ``w_i ~ N(0, 0.5^2)``; target ``t`` passes a trial of item ``i`` with probability
``logistic(a_t - 1.5 z_i)`` and a trial costs ``exp(b_t + w_i + e)``, ``e ~ N(0, 1)`` (log-normal,
sigma 1); 3 trials per item and target.  Five targets: three truly on the front, one close below
the front (a little worse and a little dearer than a front target) and one far below it.  True
pass rates are the population means (by quadrature over ``z``), true costs
``exp(b_t + 0.125 + 0.5)``.  Claim: targets truly on the front get a probability of at least 0.9
in at least 90% of runs.  Run with ``-m slow -s`` to print the figures quoted in docs/agents.md.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import expit

from tests.stats._weights import resample_weights
from trialscore.stats import cost_success_front
from trialscore.stats._effort import item_totals
from trialscore.stats._front import _BLOCK, _columns, _front_shares, _shared_rows, dominated
from trialscore.stats._resampling import item_weights

ITEMS = 200
TRIALS = 3
RUNS = 200
RESAMPLES = 1000
#: Runs also computed by cost_success_front itself; each trial's item key.
CHECKED = 3
KEYS = np.repeat(np.arange(ITEMS), TRIALS).tolist()
#: target -> (logit of its pass rate at an average item, log of its cost level)
TARGETS = {
    "cheap": (-0.2, np.log(0.05)),
    "middle": (0.8, np.log(0.2)),
    "strong": (1.8, np.log(1.0)),
    "near": (0.6, np.log(0.24)),
    "far": (1.0, np.log(1.5)),
}


def true_front() -> np.ndarray:
    grid = np.linspace(-6, 6, 4001)
    density = np.exp(-(grid**2) / 2)
    density /= density.sum()
    rates = np.array([[float(expit(a - 1.5 * grid) @ density) for a, _ in TARGETS.values()]])
    costs = np.array([[np.exp(b + 0.625) for _, b in TARGETS.values()]])
    return ~dominated(rates, costs)[0]


def one_run(rng: np.random.Generator, seed: int, resampling: np.random.Generator) -> np.ndarray:
    """P(on front) of each target in one run, by cost_success_front's core on resamples of ``resampling``.

    The first ``CHECKED`` runs also go through cost_success_front: its core on its own resamples gives
    its probabilities.
    """
    z = rng.normal(0.0, 1.0, ITEMS)
    w = rng.normal(0.0, 0.5, ITEMS)
    items = np.repeat(np.arange(ITEMS), TRIALS)
    runs = {}
    for name, (a, b) in TARGETS.items():
        passed = rng.random(items.size) < expit(a - 1.5 * z[items])
        cost = np.exp(b + w[items] + rng.normal(0.0, 1.0, items.size))
        runs[name] = item_totals(KEYS, passed, cost)
    rows, _ = _shared_rows(runs)
    columns = _columns(runs, rows)
    if seed < CHECKED:
        front = cost_success_front(runs, replicates=RESAMPLES, seed=seed)
        own = _front_shares(*columns, item_weights(ITEMS, RESAMPLES, seed, _BLOCK))
        assert own.tolist() == [point.front_probability for point in front.points]
    return _front_shares(*columns, [resample_weights(resampling, RESAMPLES, ITEMS)])


def check_calibration(probabilities: np.ndarray, on: np.ndarray, names: list[str]) -> None:
    """Print each target's figures and check the claim: every target truly on the front gets P(on front)
    >= 0.9 in at least 90% of runs (rows: runs, columns: targets), and the far one (the last dominated
    target) a mean P below 0.05."""
    runs = probabilities.shape[0]
    confident = (probabilities[:, on] >= 0.9).mean(axis=0)
    labels = np.array(names)
    means = probabilities.mean(axis=0)
    for name, share, mean in zip(labels[on], confident, means[on], strict=True):
        print(f"\n{name} (on the front): P >= 0.9 in {share:.1%} of {runs} runs, mean P {mean:.3f}")
    for name, mean in zip(labels[~on], means[~on], strict=True):
        print(f"{name} (dominated): mean P {mean:.3f}")
    assert np.all(confident >= 0.9)
    assert means[~on][-1] < 0.05  # the far one is seldom taken for a front target


@pytest.mark.slow
def test_targets_truly_on_the_front_get_at_least_0_9_in_90_percent_of_runs() -> None:
    on = true_front()
    assert on.tolist() == [True, True, True, False, False]
    rng, resampling = np.random.default_rng(28), np.random.default_rng(29)
    check_calibration(np.array([one_run(rng, seed, resampling) for seed in range(RUNS)]), on, list(TARGETS))
