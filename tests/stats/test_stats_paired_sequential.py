"""The sequential paired comparison: its error rate under continuous monitoring, and its power."""

from __future__ import annotations

import random
import re

import numpy as np
import pytest

from trialscore.errors import EvaluationError
from trialscore.stats.paired_sequential import PairedSequence, SequentialComparison
from trialscore.stats.power import plan_sample_size


def _compare(base: np.ndarray, cand: np.ndarray, trials: list[int], rng: random.Random) -> tuple[int, str]:
    """One comparison watched after every pair until it settles or a drawn case runs out of trials."""
    cases = len(base)
    baseline = [[rng.random() < p for _ in range(n)] for p, n in zip(base, trials, strict=True)]
    used = [0] * cases
    comparison = SequentialComparison(cases, alpha=0.05, margin=0.05)
    while comparison.verdict() is None:
        draw = comparison.draw(rng.random())
        if used[draw.case] >= trials[draw.case]:
            return comparison.observed, "undecided"
        y = baseline[draw.case][used[draw.case]]
        used[draw.case] += 1
        comparison.observe(draw, float(rng.random() < cand[draw.case]) - float(y))
    return comparison.observed, str(comparison.verdict())


def _mixes(rng: np.random.Generator) -> dict[str, tuple[np.ndarray, list[int]]]:
    return {
        "bimodal, ragged baseline": (
            np.r_[np.ones(8), np.zeros(4), rng.uniform(0.3, 0.9, 8)],
            list(rng.integers(3, 16, 20)),
        ),
        "all flaky": (rng.uniform(0.2, 0.8, 20), [10] * 20),
        "few cases": (np.array([0.5, 0.7, 0.9]), [30, 12, 20]),
        "saturated": (np.r_[np.ones(15), np.zeros(5)], [10] * 20),
    }


@pytest.mark.slow
def test_no_true_difference_gives_a_regression_or_improvement_at_most_alpha_of_the_time() -> None:
    """Null simulation: 4 case mixes x 150 comparisons, watched after every pair, at alpha 0.05."""
    rng = random.Random(13)
    wrong = runs = 0
    for rates, trials in _mixes(np.random.default_rng(2)).values():
        for _ in range(250):
            _, verdict = _compare(rates, rates, trials, rng)
            wrong += verdict in ("regression", "improvement")
            runs += 1
    assert wrong / runs <= 0.05  # the guarantee itself (the sequence is conservative in practice)


@pytest.mark.slow
def test_power_at_the_planned_effect_and_fewer_trials_than_the_fixed_design_beyond_it() -> None:
    """The fixed design is the power planner's (paired t-test, same alpha, 80% power) at delta 0.1.

    At the planned effect the comparison reaches the power (it takes about 1.15x the fixed design's
    trials there: the price of anytime validity); at 1.5x the planned effect it stops with fewer
    trials than the fixed design planned.
    """
    rng = np.random.default_rng(7)
    base = np.r_[np.ones(16), np.zeros(8), rng.uniform(0.3, 0.9, 16)]
    flaky = (base > 0) & (base < 1)
    pilot = (rng.random((base.size, 10)) < base[:, None]).astype(int)
    plan = plan_sample_size(0.1, pilot=pilot, items=base.size, alpha=0.05, power=0.8)
    assert plan.trials is not None
    fixed = plan.trials * base.size
    rand = random.Random(3)
    for delta, check in ((0.1, "power"), (0.15, "trials")):
        cand = np.where(flaky, base - delta / flaky.mean(), base)
        runs = [_compare(base, cand, [4 * plan.trials] * base.size, rand) for _ in range(80)]
        assert not any(verdict == "improvement" for _, verdict in runs)
        if check == "power":
            assert sum(verdict == "regression" for _, verdict in runs) / len(runs) >= 0.8
        else:
            assert np.mean([t for t, _ in runs]) < fixed


def test_the_verdict_is_read_off_the_interval_it_prints() -> None:
    rng = random.Random(4)
    for shift in (-0.6, 0.0, 0.6):
        seq = PairedSequence(alpha=0.05, margin=0.2)
        while seq.verdict() is None and seq.t < 3000:
            seq.update(max(-1.0, min(1.0, shift + rng.uniform(-0.4, 0.4))), -1.0, 1.0)
        low, high = seq.settled_interval()
        verdict = seq.verdict()
        assert (verdict, low <= shift <= high) == (
            {-0.6: "regression", 0.0: "no_difference", 0.6: "improvement"}[shift],
            True,
        )
        assert (verdict == "regression") == (high < 0) and (verdict == "improvement") == (low > 0)


def test_bad_arguments_are_named() -> None:
    with pytest.raises(EvaluationError, match=re.escape("margin must satisfy 0 <= margin < 1; got 1.0")):
        PairedSequence(alpha=0.05, margin=1.0)
    with pytest.raises(EvaluationError, match=re.escape("observation 2.0 must lie in its announced range")):
        PairedSequence(alpha=0.05).update(2.0, -1.0, 1.0)
    comparison = SequentialComparison(2)
    with pytest.raises(EvaluationError, match=re.escape("a paired difference must be -1, 0 or 1; got 0.5")):
        comparison.observe(comparison.draw(0.3), 0.5)
