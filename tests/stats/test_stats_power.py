"""Power, MDE and sample sizes of the paired t-test against statsmodels' TTestPower; simulated power."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import nct, t

from tests.stats.test_compare_simulation import vectorized_verdicts
from trialscore import EvaluationError
from trialscore.stats import (
    compare_paired,
    design_power,
    detectable_effect,
    items_needed,
    minimum_detectable_effect,
    plan_sample_size,
    trials_needed,
)

DESIGNS = [
    (50, 1, 0.0, 0.5, 0.1),
    (200, 5, 0.01, 0.4, 0.04),
    (1000, 3, 0.002, 0.3, 0.02),
    (30, 10, 0.05, 0.2, 0.15),
]


@pytest.mark.parametrize(("items", "trials", "between", "within", "delta"), DESIGNS)
@pytest.mark.parametrize("alpha", [0.01, 0.05, 0.1])
def test_design_power_is_statsmodels_paired_t_test(items, trials, between, within, delta, alpha) -> None:
    from statsmodels.stats.power import TTestPower

    sd = math.sqrt(between + within / trials)
    want = TTestPower().power(effect_size=delta / sd, nobs=items, alpha=alpha)
    got = design_power(delta, items=items, trials=trials, between=between, within=within, alpha=alpha)
    assert got == pytest.approx(want, rel=1e-12)
    assert (
        design_power(-delta, items=items, trials=trials, between=between, within=within, alpha=alpha) == got
    )


def test_pass_rate_plan_is_the_t_test_sample_size_in_the_noisier_direction() -> None:
    from statsmodels.stats.power import TTestPower

    for p, delta, q in [
        (0.6, 0.1, 0.5),
        (0.3, 0.05, 0.35),
        (0.9, -0.1, 0.8),
        (0.5, 0.2, 0.3),
        (0.95, 0.1, 0.85),
    ]:
        plan = plan_sample_size(delta, pass_rate=p, spread=0.0)  # identical items
        assert plan.within_baseline == pytest.approx(p * (1 - p), rel=1e-14)
        assert plan.within_candidate == pytest.approx(q * (1 - q), rel=1e-12)
        assert plan.direction == ("decrease" if q < p else "increase")
        assert plan.between_baseline == plan.between_candidate == plan.between == 0.0
        continuous = TTestPower().solve_power(
            effect_size=abs(delta) / math.sqrt(plan.within), alpha=0.05, power=0.8
        )
        assert plan.items == math.ceil(continuous) and plan.trials == 1 and plan.feasible
        assert plan.test.startswith("two-sided paired t-test") and "given spread 0" in plan.source


def test_pass_rate_plan_takes_a_stated_spread_between_items() -> None:
    """Beta item rates with the spread's share of the variance between items; every item moved by one
    shift, clipped, so the mean moves by exactly delta."""
    from scipy.stats import beta

    for p, spread, delta in [(0.6, 0.5, 0.1), (0.9, 0.3, 0.05), (0.2, 0.7, 0.1)]:
        plan = plan_sample_size(delta, pass_rate=p, spread=spread, direction="decrease", trials=3)
        kappa = 1 / spread - 1
        rates = beta(p * kappa, (1 - p) * kappa).ppf((np.arange(20000) + 0.5) / 20000)
        assert plan.within_baseline == pytest.approx(p * (1 - p) * (1 - spread), rel=1e-3)
        assert plan.between_baseline == pytest.approx(spread * p * (1 - p), rel=1e-3)
        low, high = -1.0, 0.0  # the shift whose clipped mean change is -delta, by bisection
        for _ in range(60):
            mid = (low + high) / 2
            low, high = (mid, high) if np.mean(np.clip(rates + mid, 0, 1) - rates) < -delta else (low, mid)
        moved = np.clip(rates + low, 0, 1)
        assert plan.within_candidate == pytest.approx(np.mean(moved * (1 - moved)), rel=2e-3)
        assert plan.between == pytest.approx(np.var(moved - rates), rel=2e-2, abs=1e-6)
        assert plan.items == items_needed(delta, trials=3, between=plan.between, within=plan.within)
        assert plan.spread == spread and f"given spread {spread:g}" in plan.source
    default = plan_sample_size(0.1, pass_rate=0.7)
    assert default.spread == 0.5 and "default spread 0.5" in default.source
    assert default.items < plan_sample_size(0.1, pass_rate=0.7, spread=0.0).items


def test_noncentral_t_power_by_hand() -> None:
    # 20 items, SE 0.05, delta 0.12: noncentrality 2.4, critical t_19(0.975)
    se = math.sqrt((0.0 + 0.5 / 10) / 20)
    critical = t.ppf(0.975, 19)
    by_hand = nct.sf(critical, 19, 0.12 / se) + nct.cdf(-critical, 19, 0.12 / se)
    assert design_power(0.12, items=20, trials=10, between=0.0, within=0.5) == pytest.approx(
        by_hand, rel=1e-12
    )
    assert by_hand == pytest.approx(0.6246, abs=1e-4)  # the z-test would claim Phi(2.4 - 1.96) = 0.670


@pytest.mark.parametrize(("items", "trials", "between", "within", "delta"), DESIGNS)
def test_sample_sizes_are_the_smallest_that_reach_the_power(items, trials, between, within, delta) -> None:
    needed = items_needed(delta, trials=trials, between=between, within=within, power=0.9)
    assert design_power(delta, items=needed, trials=trials, between=between, within=within) >= 0.9
    if needed > 2:
        assert design_power(delta, items=needed - 1, trials=trials, between=between, within=within) < 0.9
    per_item = trials_needed(delta, items=needed, between=between, within=within, power=0.9)
    assert per_item is not None and per_item <= trials
    assert design_power(delta, items=needed, trials=per_item, between=between, within=within) >= 0.9
    if per_item > 1:
        assert design_power(delta, items=needed, trials=per_item - 1, between=between, within=within) < 0.9


@pytest.mark.parametrize(("items", "trials", "between", "within", "delta"), DESIGNS)
def test_the_mde_is_detected_with_the_stated_power(items, trials, between, within, delta) -> None:
    mde = minimum_detectable_effect(items=items, trials=trials, between=between, within=within)
    assert design_power(mde, items=items, trials=trials, between=between, within=within) == pytest.approx(
        0.8, abs=1e-3
    )
    se = math.sqrt((between + within / trials) / items)
    assert mde == pytest.approx(detectable_effect(se, items - 1), rel=1e-14)
    # close to (t_{1-alpha/2} + t_{power}) SE, the usual approximation of the noncentral-t solution
    assert mde == pytest.approx((t.ppf(0.975, items - 1) + t.ppf(0.8, items - 1)) * se, rel=0.01)


def test_between_item_variance_sets_a_floor_no_trial_count_lowers() -> None:
    assert trials_needed(0.05, items=100, between=0.1, within=0.4) is None
    plan = plan_sample_size(0.05, pass_rate=0.5, spread=0.0, between=0.1, items=100)
    assert plan.trials is None and not plan.feasible
    assert plan.mde == pytest.approx(detectable_effect(math.sqrt(0.1 / 100), 99), rel=1e-12)
    assert f"{items_needed(0.05, trials=1, between=0.1, within=plan.within)} items" in plan.note


def test_design_check_with_items_and_trials() -> None:
    plan = plan_sample_size(0.05, pass_rate=0.7, spread=0.0, items=300, trials=4)
    assert (plan.items, plan.trials) == (300, 4)
    assert plan.achieved_power == pytest.approx(
        design_power(0.05, items=300, trials=4, between=0.0, within=plan.within), rel=1e-14
    )
    assert plan.feasible == (plan.achieved_power >= 0.8)
    assert plan.to_dict()["mde"] == plan.mde and "300 items x 4 trials" in str(plan)


def test_one_run_pilot_estimates_both_runs_variances() -> None:
    rng = np.random.default_rng(0)
    pilot = (rng.random((80, 6)) < rng.beta(4, 2, size=(80, 1))).astype(int)
    within = pilot.var(axis=1, ddof=1).mean()
    mean = pilot.mean()
    plan = plan_sample_size(0.05, pilot=pilot)
    tau = pilot.mean(axis=1).var(ddof=1) - within / 6  # between-item variance of the rates
    assert plan.trials == 6 and plan.direction == "decrease"
    assert plan.spread == pytest.approx(tau / (mean * (1 - mean)), rel=1e-12)
    # the Beta item model at the pilot's mean and spread
    assert plan.within_baseline == pytest.approx(mean * (1 - mean) - tau, rel=1e-3)
    assert plan.between_baseline == pytest.approx(tau, rel=1e-3)
    assert plan.items == items_needed(0.05, trials=6, between=plan.between, within=plan.within)
    assert "one pilot run of 80 items x 6 trials" in plan.source


def test_paired_pilot_estimates_both_components() -> None:
    rng = np.random.default_rng(1)
    rate = rng.beta(2, 2, size=(120, 1))
    shift = rng.choice([-0.1, 0.1], size=(120, 1))
    a = (rng.random((120, 8)) < rate).astype(int)
    b = (rng.random((120, 8)) < np.clip(rate + shift, 0, 1)).astype(int)
    plan = plan_sample_size(0.05, pilot=a, pilot_candidate=b)
    within_a, within_b = a.var(axis=1, ddof=1), b.var(axis=1, ddof=1)
    d = b.mean(axis=1) - a.mean(axis=1)
    assert plan.within == pytest.approx((within_a + within_b).mean(), rel=1e-13)
    assert plan.between == pytest.approx(d.var(ddof=1) - ((within_a + within_b) / 8).mean(), rel=1e-12)
    assert "paired pilot of 120 items" in plan.source


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"delta": 0.1}, r"give exactly one of pass_rate or pilot; got both or neither"),
        ({"delta": 0.1, "pass_rate": 0.5, "pilot": [[1, 0]]}, r"give exactly one of pass_rate or pilot"),
        (
            {"delta": 0.6, "pass_rate": 0.5},
            r"the mean pass rate must be able to move by delta inside \[0, 1\] in at least one direction",
        ),
        ({"delta": 0.1, "pass_rate": 1.2}, r"pass_rate must lie in \[0, 1\]; got pass_rate=1.2"),
        ({"delta": 0, "pass_rate": 0.5}, r"delta must be a non-zero difference to detect; got delta=0"),
        (
            {"delta": 0.1, "pass_rate": 0.5, "between": -1.0},
            r"between must be a variance >= 0; got between=-1.0",
        ),
        ({"delta": 0.1, "pass_rate": 0.5, "items": 1}, r"items must be an integer >= 2; got items=1"),
        ({"delta": 0.1, "pass_rate": 0.5, "power": 1.2}, r"power must satisfy 0 < power < 1; got power=1.2"),
        (
            {"delta": 0.1, "pilot": [[1, 0], [0, 0]], "pilot_candidate": [[1, 1], [0, 1]], "between": 0.1},
            r"between must be None with a paired pilot",
        ),
        (
            {"delta": 0.1, "pilot": [[1, 0], [0, 0]], "pilot_candidate": [[1, 1], [0, 1], [1, 1]]},
            r"pilot_candidate must hold the same items as pilot.* got 3 items for 2",
        ),
    ],
)
def test_plan_rejects_bad_input(kwargs: dict, message: str) -> None:
    with pytest.raises(EvaluationError, match=message):
        plan_sample_size(**kwargs)


# --- predicted vs simulated power -----------------------------------------------------------------------


def simulated_power(items: int, trials: int, delta: float, spread: float, seed: int) -> tuple[float, float]:
    """Runs A and B on the same items; item rates move by delta +- spread. Returns (predicted, simulated).

    The verdicts of the 2,000 replications are computed in vectorized form, checked to equal
    :func:`compare_paired`'s ``p_value < 0.05`` on the first 25.
    """
    low, high = 0.25, 0.65
    mean_a = (low + high) / 2
    square_a = (high**3 - low**3) / (3 * (high - low))
    mean_b = mean_a + delta
    square_b = square_a + 2 * delta * mean_a + delta**2 + spread**2
    within = (mean_a - square_a) + (mean_b - square_b)
    predicted = design_power(delta, items=items, trials=trials, between=spread**2, within=within)
    rng = np.random.default_rng(seed)
    counts = np.empty((2, 2000, items), dtype=np.int64)
    library = []
    for rep in range(2000):
        rate = rng.uniform(low, high, size=(items, 1))
        moved = rate + delta + spread * rng.choice([-1.0, 1.0], size=(items, 1))
        a = rng.random((items, trials)) < rate
        b = rng.random((items, trials)) < moved
        if rep < 25:
            library.append(compare_paired(a, b, permutations=0).p_value < 0.05)
        counts[:, rep] = a.sum(axis=1), b.sum(axis=1)
    rejected = vectorized_verdicts(counts[0], counts[1], trials, trials)[0] != 0
    assert rejected[:25].tolist() == library
    return predicted, float(rejected.mean())


@pytest.mark.slow
@pytest.mark.parametrize(
    ("items", "trials", "delta", "spread"),
    [(100, 3, 0.05, 0.1), (300, 3, 0.05, 0.1), (400, 1, 0.08, 0.05), (60, 8, 0.09, 0.08)],
)
def test_predicted_power_is_within_5_points_of_simulated(items, trials, delta, spread) -> None:
    predicted, simulated = simulated_power(items, trials, delta, spread, seed=items + trials)
    assert 0.2 < predicted < 0.95  # an informative design, not a trivially certain one
    assert abs(predicted - simulated) <= 0.05, (predicted, simulated)
