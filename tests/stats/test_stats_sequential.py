"""The betting confidence sequence: a brute-force grid, its threshold test, and null simulations."""

from __future__ import annotations

import math

import numpy as np
import pytest

from trialscore.errors import EvaluationError
from trialscore.stats._sequential import BettingSequence


def _direct_log_capital(xs: list[float], m: float, alpha: float, up: bool, c: float = 0.75) -> float:
    """K+/K- by the paper's formulas, written out again (predictable plug-in bets, truncation c)."""
    total, mean_sum, squares = 0.0, 0.0, 0.25
    for t, x in enumerate(xs, start=1):
        sigma2 = squares / t
        bet = math.sqrt(2 * math.log(2 / alpha) / (sigma2 * t * math.log(1 + t)))
        cap = c / m if up else c / (1 - m)
        bet = min(bet, cap)
        total += math.log(1 + bet * (x - m)) if up else math.log(1 - bet * (x - m))
        mean_sum += x
        squares += (x - (0.5 + mean_sum) / (t + 1)) ** 2
    return total


def test_capital_matches_the_formulas_and_the_interval_matches_a_grid() -> None:
    rng = np.random.default_rng(0)
    xs = list(rng.beta(3, 2, size=80))
    seq = BettingSequence(alpha=0.1)
    seq.extend(xs)
    for m in (0.2, 0.5, 0.61, 0.9):
        assert seq.log_capital(m, +1) == pytest.approx(_direct_log_capital(xs, m, 0.1, True), rel=1e-12)
        assert seq.log_capital(m, -1) == pytest.approx(_direct_log_capital(xs, m, 0.1, False), rel=1e-12)
    low, high = seq.interval()
    grid = np.linspace(0.001, 0.999, 999)
    inside = [m for m in grid if not seq.rejects(float(m))]
    assert inside, "the true mean 0.6 region must be inside"
    assert low <= min(inside) and max(inside) <= high  # the bisection bounds hold every unrejected point
    assert min(inside) - low < 0.002 and high - max(inside) < 0.002  # and nothing more than a grid step
    assert low < 0.6 < high


def test_the_threshold_test_reads_the_interval() -> None:
    seq = BettingSequence(alpha=0.05, threshold=0.5)
    while seq.side is None:
        seq.update(1.0)
    low, _ = seq.interval()
    assert seq.side == "above" and low >= 0.5 - 1e-12
    seq = BettingSequence(alpha=0.05, threshold=0.5)
    seq.extend([0.0] * 30)
    assert seq.side == "below" and seq.interval()[1] <= 0.5 + 1e-12


def test_the_running_state_is_the_formulas_to_the_bit() -> None:
    """update keeps the bets, the moments and the capitals at the threshold exactly as the formulas and
    log_capital give them (bit for bit: the same operations in the same order), for binary, graded,
    integer and NumPy values, and says the side at the first crossing of the bar; copies go on alike."""
    rng = np.random.default_rng(3)
    for k in range(60):
        alpha, truncation = (0.05, 0.1, 0.01, 0.3)[k % 4], (0.75, 0.5, 0.9)[k % 3]
        threshold = (0.5, 0.8, 0.0, 1.0, float(rng.random()))[k % 5]
        p = float(rng.random())
        xs: list[float] = [
            [float(v) for v in rng.random(30) < p],
            [int(v) for v in rng.random(30) < p],
            list(rng.beta(2, 2, size=30)),
        ][k % 3]
        seq = BettingSequence(alpha=alpha, threshold=threshold, truncation=truncation)
        bar, side = math.log(2.0 / alpha), None
        for x in xs:
            seq.update(x)
            up, down = seq.log_capital(threshold, +1), seq.log_capital(threshold, -1)
            assert seq._at_threshold == [up, down]
            side = side or ("above" if up >= bar else "below" if down >= bar else None)
            assert seq.side == side
        total, squares = 0.0, 0.25
        for t, (bet, x) in enumerate(zip(seq._bets, xs, strict=True), start=1):
            assert bet == math.sqrt(2.0 * math.log(2.0 / alpha) / (squares / t * t * math.log1p(t)))
            total += x
            squares += (x - (0.5 + total) / (t + 1)) ** 2
        assert (seq._xs, seq._sum, seq._squares) == ([float(x) for x in xs], total, squares)
        probe = seq.copy()
        probe.update(1.0)
        seq.update(1.0)
        assert (probe._bets, probe._at_threshold, probe.side) == (seq._bets, seq._at_threshold, seq.side)


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(EvaluationError, match="alpha"):
        BettingSequence(alpha=0.0)
    with pytest.raises(EvaluationError, match=r"x must lie in \[0, 1\]"):
        BettingSequence(alpha=0.1).update(1.5)


@pytest.mark.slow
def test_false_pass_rate_under_continuous_monitoring_is_at_most_alpha() -> None:
    """Null: pass rate exactly at the threshold (the hardest null). Watched after every trial for
    300 trials, the sequence says 'above' in at most alpha of the runs (alpha/2 in theory)."""
    rng = np.random.default_rng(13)
    alpha, runs, horizon = 0.1, 3000, 300
    above = below = 0
    for _ in range(runs):
        seq = BettingSequence(alpha=alpha, threshold=0.8)
        for x in (rng.random(horizon) < 0.8).astype(float):
            seq.update(float(x))
            if seq.side is not None:
                break
        above += seq.side == "above"
        below += seq.side == "below"
    # binomial 99.9% upper margin over alpha/2 = 0.05 is about 0.013
    assert above / runs <= alpha
    assert (above + below) / runs <= alpha + 0.015


@pytest.mark.slow
def test_the_sequence_covers_a_continuous_mean_at_every_time() -> None:
    rng = np.random.default_rng(21)
    alpha, runs, horizon = 0.1, 300, 200
    misses = 0
    for _ in range(runs):
        seq = BettingSequence(alpha=alpha)
        xs = rng.beta(2, 5, size=horizon)  # mean 2/7
        missed = False
        for t, x in enumerate(xs, start=1):
            seq.update(float(x))
            if t % 20 == 0 and seq.rejects(2 / 7):
                missed = True
                break
        misses += missed
    assert misses / runs <= alpha + 0.035


@pytest.mark.slow
def test_the_sequential_rule_decides_a_clear_case_early() -> None:
    rng = np.random.default_rng(5)
    times = []
    for _ in range(200):
        seq = BettingSequence(alpha=0.05, threshold=0.7)
        while seq.side is None and seq.t < 2000:
            seq.update(float(rng.random() < 0.95))
        assert seq.side == "above"
        times.append(seq.t)
    assert np.median(times) < 60
