"""The sequential paired comparison: boundaries, error rate over every look, power on small suites.

Populations as in issue 23: case pass rates from U-shaped Beta(0.6, 0.41), Beta(4, 2), easy
Beta(9, 1.1), hard Beta(1.1, 9) and a mixture (40% at 1, 20% at 0, 40% uniform); each simulated
comparison draws a new baseline (so a new schedule and boundaries) and one candidate run.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from numpy.typing import NDArray
from scipy.stats import multivariate_normal, norm

from tests.stats.test_compare_simulation import check_against_library, vectorized_verdicts
from trialscore.errors import EvaluationError
from trialscore.stats._paired_sequential import Draw, PairedDesign, SequentialComparison, verdicts
from trialscore.stats._spending import _simpson, spending_bounds

Rates = NDArray[np.float64]
REGRESSION, IMPROVEMENT, NO_DIFFERENCE = 0, 1, 2


def _runs(
    base: Rates, cand: Rates, baseline: NDArray[np.int64], planned: NDArray[np.int64], runs: int, seed: int,
    margin: float = 0.05,
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:  # fmt: skip
    """Verdict codes and candidate trials of ``runs`` comparisons, each with its own baseline run."""
    rng = np.random.default_rng(seed)
    codes, trials = np.empty(runs, dtype=np.int64), np.empty(runs, dtype=np.int64)
    for r in range(runs):
        passes = rng.binomial(baseline, base)
        design = PairedDesign(baseline.tolist(), passes.tolist(), planned.tolist(), alpha=0.05, seed=r)
        code, spent = design.simulate(cand, margin, 1, rng)
        codes[r], trials[r] = code[0], spent[0]
    return codes, trials


def _shifted(base: Rates, mean: float) -> Rates:
    """Every case's rate moved by one shift, clipped to [0, 1], so that the mean moves by ``mean``."""
    low, high = -1.0, 1.0
    for _ in range(60):
        mid = (low + high) / 2
        low, high = (mid, high) if np.mean(np.clip(base + mid, 0, 1) - base) < mean else (low, mid)
    return np.clip(base + low, 0.0, 1.0)


def test_the_boundaries_spend_alpha_as_the_bivariate_normal_says() -> None:
    """Two looks checked against SciPy's bivariate normal; five against Brownian motion (200,000 paths)."""
    info = np.array([0.3, 1.0])
    c1, c2 = spending_bounds(info, 0.05, rho=1.5)
    assert c1 == pytest.approx(norm.isf(0.05 * 0.3**1.5 / 2), abs=1e-9)
    rho = math.sqrt(info[0] / info[1])
    inside = multivariate_normal([0, 0], [[1, rho], [rho, 1]]).cdf
    both = inside([c1, c2]) - inside([-c1, c2]) - inside([c1, -c2]) + inside([-c1, -c2])
    assert 1 - both == pytest.approx(0.05, abs=2e-6)  # the whole alpha, spent over the two looks
    levels = np.array([0.15, 0.2, 0.4, 0.7, 1.0])
    bounds = spending_bounds(levels, 0.05, rho=1.5)
    rng = np.random.default_rng(0)
    steps = rng.standard_normal((200_000, levels.size)) * np.sqrt(np.diff(levels, prepend=0.0))
    crossed = (np.abs(np.cumsum(steps, axis=1) / np.sqrt(levels)) >= bounds).any(axis=1).mean()
    assert abs(crossed - 0.05) < 3 * math.sqrt(0.05 * 0.95 / 200_000)  # within 3 MC standard errors (0.15 pt)
    with pytest.raises(EvaluationError, match=re.escape("information must be increasing and positive")):
        spending_bounds([1.0, 1.0], 0.05)


def test_the_integration_grid_is_linspaces_to_the_bit() -> None:
    """The boundaries' grid points are np.linspace's, a step that underflows to 0 included."""
    rng = np.random.default_rng(9)
    spans = [(-float(x), float(x)) for x in rng.uniform(0, 60, 200)]
    spans += [(0.0, 5e-324), (-1e-310, 1e-310), (1.5, 1.5), (-3.0, 7.25), (-1e300, 1e300)]
    for low, high in spans:
        for grid in (3, 101, 200):
            assert _simpson(low, high, grid)[0].tobytes() == np.linspace(low, high, grid).tobytes()


def _mixes() -> dict[str, tuple[Rates, Rates, NDArray[np.int64]]]:
    """Null case mixes: (baseline rates, candidate rates, baseline trials = candidate planned trials)."""
    rng = np.random.default_rng(2)
    flaky = rng.uniform(0.3, 0.7, 10)
    ten = np.full(20, 10)
    mixes = {
        name: (rates, rates, ten)
        for name, rates in {
            "U-shaped": rng.beta(0.6, 0.41, 20),
            "Beta(4, 2)": rng.beta(4, 2, 20),
            "easy": rng.beta(9, 1.1, 20),
            "hard": rng.beta(1.1, 9, 20),
            "all saturated": np.r_[np.ones(15), np.zeros(5)],
        }.items()
    }
    bimodal = np.r_[np.ones(8), np.zeros(4), rng.uniform(0.3, 0.9, 8)]
    mixes["mixture, ragged baseline"] = (bimodal, bimodal, rng.integers(3, 16, 20))
    few = np.array([0.5, 0.7, 0.9])
    mixes["three cases"] = (few, few, np.array([30, 12, 20]))
    one = rng.beta(0.6, 0.41, 50)
    mixes["one trial a case"] = (one, one, np.ones(50, dtype=np.int64))
    # no change on average, but every case moved by 0.3 (saturated ones into the middle)
    base = np.r_[flaky, np.ones(5), np.zeros(5)]
    mixes["changes that cancel"] = (
        base,
        np.r_[flaky[:5] + 0.3, flaky[5:] - 0.3, np.full(5, 0.7), np.full(5, 0.3)],
        ten,
    )
    return mixes


@pytest.mark.slow
def test_no_true_difference_gives_a_regression_or_improvement_at_most_alpha_of_the_time() -> None:
    """Null simulation, 9 case mixes x 600 comparisons, each read at every look until it settles, alpha 0.05.

    Measured (seed 7): wrong verdicts 0-4.5% per mix, 2.7% over all 5,400 (Monte Carlo standard
    error 0.23 points pooled, at most 0.85 per mix).  Pooled the rate must be at most alpha; a
    single mix at most alpha plus two of its standard errors.
    """
    wrong = []
    for name, (base, cand, trials) in _mixes().items():
        codes, _ = _runs(base, cand, trials, trials, 600, seed=7)
        rate = float(np.isin(codes, (REGRESSION, IMPROVEMENT)).mean())
        assert rate <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / 600), name
        wrong.append(rate)
    assert float(np.mean(wrong)) <= 0.05


@pytest.mark.slow
def test_at_20_cases_the_power_is_the_fixed_designs_less_at_most_5_points_with_fewer_trials() -> None:
    """20 cases, a 10-trial baseline, 10 planned candidate trials a case, the mean dropped by 0.1.

    The fixed design runs all 200 candidate trials and is read by ``compare_paired``.  Measured
    (1,000 comparisons each, Monte Carlo standard error at most 1.6 points a share, 2.2 a
    difference): mixture 90.2% vs 89.8% with 0.66x the trials, Beta(4, 2) 51.2% vs 54.7% with
    0.86x; the bound checked is 5 points.
    """
    rng = np.random.default_rng(23)
    populations = {
        "mixture": np.r_[np.ones(8), np.zeros(4), rng.uniform(0, 1, 8)],
        "Beta(4, 2)": rng.beta(4, 2, 20),
    }
    ten = np.full(20, 10)
    for seed, (name, base) in enumerate(populations.items()):
        cand = _shifted(base, -0.1)
        codes, trials = _runs(base, cand, ten, ten, 1000, seed=seed)
        found = float((codes == REGRESSION).mean())
        # the same uniforms, in the same order, as 1,000 pairs of 20 x 10 draws one after the other
        before, after = np.moveaxis(np.random.default_rng(100 + seed).random((1000, 2, 20, 10)), 1, 0)
        passes = [(run < rates[:, None]).sum(axis=2) for run, rates in ((before, base), (after, cand))]
        check_against_library(*passes, 10, 10)  # compare_paired's verdict, vectorized
        fixed = int((vectorized_verdicts(*passes, 10, 10)[0] == -1).sum())
        assert found >= fixed / 1000 - 0.05, name
        assert not (codes == IMPROVEMENT).any()
        assert trials.mean() < 0.9 * 200, name


@pytest.mark.slow
def test_no_difference_is_reached_within_the_margin_and_wrong_at_the_margin_at_most_alpha() -> None:
    """100 cases of the mixture, a 10-trial baseline, margin 0.05.

    No change: ``no_difference`` in 95.5% of 400 comparisons (measured) with 0.42x the trials.
    A true difference of exactly the margin: ``no_difference`` would be wrong, at most alpha
    (measured 3.5% and 2.0% of 400 at -0.05 and +0.05, Monte Carlo standard error 1.1 points at alpha).
    """
    rng = np.random.default_rng(4)
    base = np.r_[np.ones(40), np.zeros(20), rng.uniform(0, 1, 40)]
    ten = np.full(100, 10)
    codes, trials = _runs(base, base, ten, ten, 400, seed=5)
    assert (codes == NO_DIFFERENCE).mean() >= 0.85 and trials.mean() < 0.6 * 1000
    for edge in (-0.05, 0.05):
        codes, _ = _runs(base, _shifted(base, edge), ten, ten, 400, seed=6)
        assert (codes == NO_DIFFERENCE).mean() <= 0.05


def test_a_run_read_trial_by_trial_settles_as_the_simulation_of_its_outcomes() -> None:
    """Out-of-order finishing does not change a look; an errored trial is left out; bad input is named."""
    rng = np.random.default_rng(8)
    base = rng.beta(4, 2, 20)
    counts = [(10, int(c)) for c in rng.binomial(10, base)]
    design = PairedDesign([n for n, _ in counts], [c for _, c in counts], [10] * 20, seed=3)
    outcomes = rng.random((20, 10)) < np.clip(base - 0.3, 0, 1)[:, None]
    expected, spent = design.simulate(np.zeros(20), 0.05, 1, np.random.default_rng(0))  # shapes only
    comparison = SequentialComparison(counts, [10] * 20, margin=0.05, seed=3)
    made = [0] * 20  # each case's trials handed out: a trial's outcome is its case's next one
    held: list[tuple[Draw, bool]] = []
    while (draw := comparison.draw()) is not None:
        held.append((draw, bool(outcomes[draw.case, made[draw.case]])))
        made[draw.case] += 1
        if len(held) == 4:  # four trials in flight; they finish last first
            for late, passed in reversed(held):
                comparison.observe(late, passed)
            held = []
    for late, passed in held:
        comparison.observe(late, passed)
    assert comparison.verdict() == "regression" and comparison.interval()[1] < 0
    # the same outcomes, looks read at once
    look = comparison.looks_read - 1
    counts_at = design.looks[: look + 1]
    ahead = np.concatenate((np.zeros((20, 1)), np.cumsum(outcomes, axis=1)), axis=1)
    passes = np.take_along_axis(ahead, counts_at.T, 1).T
    _, low, high = design.intervals(passes, counts_at)
    assert (low[-1], high[-1]) == pytest.approx(comparison.interval())
    assert verdicts(low, high, 0.05).tolist() == [-1] * look + [REGRESSION]
    assert expected.shape == spent.shape == (1,)
    # errored trials are left out: a case whose every trial errors ends the comparison unsettled
    broken = SequentialComparison([(5, 5), (5, 0)], [2, 2])
    while (draw := broken.draw()) is not None:
        broken.observe(draw, None if draw.case == 0 else False)
    assert broken.ended and broken.unscored == 0 and broken.verdict() is None and broken.observed == 2
    with pytest.raises(EvaluationError, match="already observed"):
        broken.observe(Draw(0, 0), True)
    with pytest.raises(EvaluationError, match=re.escape("margin must satisfy 0 <= margin < 1; got 1.0")):
        SequentialComparison([(3, 1)], [3], margin=1.0)
    with pytest.raises(EvaluationError, match="trials, passes and planned must give one count per case"):
        PairedDesign([3, 3], [1], [3, 3])


def test_saturated_runs_never_give_a_zero_width_interval() -> None:
    design = PairedDesign([10] * 5, [10] * 5, [4] * 5)
    _, low, high = design.intervals(np.full((design.bounds.size, 5), 4), np.full((design.bounds.size, 5), 4))
    assert (high - low > 0).all() and (low < 0).all() and (high > 0).all()
    assert 0 < design.baseline_half_width < high[-1]  # the floor of both runs' noise, the baseline's alone
