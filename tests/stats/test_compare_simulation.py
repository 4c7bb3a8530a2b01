"""Seeded simulations of the paired verdict and the planner in the two-level model (issue 15).

Items have true pass rates ``p_i ~ Beta(a, b)`` and ``N`` Bernoulli trials per
run.  The verdict of :func:`compare_paired` (``avg``, i.e. pass@1) is computed
in vectorized form over thousands of replications; the vectorized form is
checked to equal the library on the first replications of every scenario.
Run ``pytest tests/stats/test_compare_simulation.py -m slow -s`` to print the
figures quoted in docs/stats.md.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import stdtrit

from trialscore import Bank
from trialscore.stats import compare_paired, plan_sample_size

ALPHA = 0.05
CHECKED = 40  # replications per scenario also run through compare_paired itself


def vectorized_verdicts(
    c_a: np.ndarray, c_b: np.ndarray, trials: int, floor: bool = True
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Verdict codes (0 within_noise or identical, 1 improvement, -1 regression) and interval bounds.

    ``floor=False`` is the plain paired t-test on the same per-item pass rates.
    """
    d = (c_b - c_a) / trials
    items = d.shape[1]
    delta = d.mean(axis=1)
    variance = d.var(axis=1, ddof=1)
    if floor:
        noise_a = ((c_a + 0.5) * (trials - c_a + 0.5)).mean(axis=1)
        noise_b = ((c_b + 0.5) * (trials - c_b + 0.5)).mean(axis=1)
        variance = np.maximum(variance, np.maximum(noise_a, noise_b) / ((trials + 1) * (trials + 2) * trials))
    half = stdtrit(items - 1, 1 - ALPHA / 2) * np.sqrt(variance / items)
    low, high = delta - half, delta + half
    identical = (d == 0).all(axis=1)
    code = np.where(identical, 0, np.where(low > 0, 1, np.where(high < 0, -1, 0)))
    return code, low, high


def check_against_library(c_a: np.ndarray, c_b: np.ndarray, trials: int) -> None:
    """The vectorized verdict equals compare_paired, whose verdict agrees with its interval and p."""
    code, low, high = vectorized_verdicts(c_a[:CHECKED], c_b[:CHECKED], trials)
    names = {1: "improvement", -1: "regression"}
    for rep in range(CHECKED):
        n = np.full(c_a.shape[1], trials)
        result = compare_paired(Bank.from_counts(n, c_a[rep]), Bank.from_counts(n, c_b[rep]), permutations=0)
        assert result.interval.low == pytest.approx(low[rep], rel=1e-9, abs=1e-12)
        assert result.interval.high == pytest.approx(high[rep], rel=1e-9, abs=1e-12)
        assert names.get(int(code[rep]), "within_noise") == result.verdict.replace(
            "identical", "within_noise"
        )
        significant = result.verdict in ("improvement", "regression")
        assert significant == (not result.interval.contains(0.0)) == (result.p_value < ALPHA)


def simulate(
    rng: np.random.Generator, a: float, b: float, trials: int, items: int, reps: int, shift: float
) -> tuple[np.ndarray, np.ndarray]:
    rates = rng.beta(a, b, size=(reps, items))
    return rng.binomial(trials, rates), rng.binomial(trials, np.clip(rates + shift, 0.0, 1.0))


# (label, a, b, trials, items, shift for the power comparison)
SCENARIOS = [
    ("U-shaped Beta(0.6, 0.41), 1 trial", 0.6, 0.41, 1, 20, -0.22),
    ("U-shaped Beta(0.6, 0.41), 1 trial", 0.6, 0.41, 1, 100, -0.10),
    ("Beta(4, 2), 5 trials", 4.0, 2.0, 5, 20, -0.10),
    ("Beta(4, 2), 5 trials", 4.0, 2.0, 5, 100, -0.045),
]


@pytest.mark.slow
@pytest.mark.parametrize(("label", "a", "b", "trials", "items", "shift"), SCENARIOS)
def test_paired_verdict_false_positive_rate_and_power(label, a, b, trials, items, shift) -> None:
    rng = np.random.default_rng(1500 + items + trials)
    reps = 6000
    c_a, c_b = simulate(rng, a, b, trials, items, reps, 0.0)
    check_against_library(c_a, c_b, trials)
    code, low, high = vectorized_verdicts(c_a, c_b, trials)
    assert not np.any((code != 0) & (low <= 0) & (high >= 0))  # no verdict contradicts its interval
    fpr = float(np.mean(code != 0))
    t_fpr = float(np.mean(vectorized_verdicts(c_a, c_b, trials, floor=False)[0] != 0))
    c_a, c_b = simulate(rng, a, b, trials, items, reps, shift)
    check_against_library(c_a, c_b, trials)
    power = float(np.mean(vectorized_verdicts(c_a, c_b, trials)[0] == -1))
    t_power = float(np.mean(vectorized_verdicts(c_a, c_b, trials, floor=False)[0] == -1))
    print(
        f"\n{label}, {items} items: false positives {fpr:.2%} (paired t {t_fpr:.2%}); "
        f"power at shift {shift:+g}: {power:.2%} (paired t {t_power:.2%}); {reps} reps"
    )
    assert 0.03 <= fpr <= 0.07
    assert power >= t_power - 0.03


def delivered_power(plan_items: int, trials: int, delta: float, rates: object, seed: int) -> float:
    """Share of 4000 comparisons with a true drop of delta that compare calls a regression."""
    rng = np.random.default_rng(seed)
    reps = 4000
    p = rates(rng, (reps, plan_items)) if callable(rates) else np.full((reps, plan_items), rates)
    c_a = rng.binomial(trials, p)
    c_b = rng.binomial(trials, np.clip(p - delta, 0.0, 1.0))
    check_against_library(c_a, c_b, trials)
    return float(np.mean(vectorized_verdicts(c_a, c_b, trials)[0] == -1))


@pytest.mark.slow
@pytest.mark.parametrize("delta", [0.05, 0.10])
def test_plan_from_a_pass_rate_delivers_its_power(delta: float) -> None:
    plan = plan_sample_size(delta, pass_rate=0.7, trials=5)
    assert plan.direction == "decrease" and plan.achieved_power >= 0.8
    power = delivered_power(plan.items, 5, delta, 0.7, seed=int(delta * 1000))
    print(f"\nplan --pass-rate 0.7 --delta {delta} --trials 5: {plan.items} items, delivered {power:.2%}")
    assert 0.76 <= power <= 0.86


@pytest.mark.slow
@pytest.mark.parametrize("delta", [0.05, 0.10])
def test_plan_from_a_heterogeneous_pilot_delivers_its_power(delta: float) -> None:
    rng = np.random.default_rng(77)
    pilot = Bank.from_counts(np.full(200, 5), rng.binomial(5, rng.beta(4, 2, size=200)))
    plan = plan_sample_size(delta, pilot=pilot)
    assert plan.direction == "decrease" and plan.trials == 5 and plan.between_baseline > 0
    power = delivered_power(
        plan.items, 5, delta, lambda g, shape: g.beta(4, 2, size=shape), seed=int(delta * 999)
    )
    print(
        f"\nplan from a Beta(4, 2) pilot (200 x 5), delta {delta}: {plan.items} items, delivered {power:.2%}"
    )
    assert 0.76 <= power <= 0.86
