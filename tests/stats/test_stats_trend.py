"""The trend test across runs: its false-alarm rate in seeded null simulation, its power, its rules."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from trialscore.core.bank import Bank
from trialscore.errors import EvaluationError
from trialscore.stats._trend import history_trend

ALPHA = 0.05


def _history(
    rng: np.random.Generator, slope: float = 0.0, fresh: bool = False
) -> tuple[list[Bank], list[list[int]]]:
    """2-8 runs of 8-60 items with Beta pass rates, ragged trials (1-8), items missing from some runs."""
    items, runs = int(rng.integers(8, 60)), int(rng.integers(2, 9))
    a, b = rng.uniform(0.3, 5, 2)
    p = rng.beta(a, b, items)
    banks, ids = [], []
    for r in range(runs):
        if fresh:
            p = rng.beta(a, b, items)
        keep = rng.random(items) < 0.9
        keep[:2] = True
        n = rng.integers(1, 9, items)[keep]
        c = rng.binomial(n, np.clip(p[keep] + slope * r, 0, 1))
        banks.append(Bank.from_counts(n, c))
        ids.append(np.arange(items)[keep].tolist())
    return banks, ids


@functools.cache
def _histories(
    seed: int, histories: int, slope: float = 0.0, fresh: bool = False
) -> tuple[tuple[list[Bank], list[list[int]]], ...]:
    """The seeded histories, drawn once: the paired and the same-items null tests read the same ones."""
    rng = np.random.default_rng(seed)
    return tuple(_history(rng, slope, fresh) for _ in range(histories))


def _alarm_rate(seed: int, histories: int, paired: bool, **kwargs: float | bool) -> float:
    alarms = 0
    for banks, ids in _histories(seed, histories, **kwargs):  # type: ignore[arg-type]
        alarms += history_trend(banks, ids if paired else None, alpha=ALPHA).verdict != "stable"
    return alarms / histories


@pytest.mark.slow
@pytest.mark.parametrize(
    ("paired", "fresh"),
    [(True, False), (False, False), (False, True)],
    ids=["paired", "same-items", "fresh-items"],
)
def test_false_alarm_rate_is_held_at_alpha_with_no_trend(paired: bool, fresh: bool) -> None:
    histories = 3000
    rate = _alarm_rate(12, histories, paired, fresh=fresh)
    tolerance = 3 * (ALPHA * (1 - ALPHA) / histories) ** 0.5  # 3 Monte Carlo standard errors
    assert rate <= ALPHA + tolerance, rate


@pytest.mark.slow
def test_power_on_a_real_trend() -> None:
    declining = _alarm_rate(5, 400, True, slope=-0.05)
    assert declining >= 0.5, declining
    rng = np.random.default_rng(9)
    p = rng.beta(3, 2, 80)
    banks = [Bank.from_counts(np.full(80, 5), rng.binomial(5, np.clip(p - 0.05 * r, 0, 1))) for r in range(6)]
    result = history_trend(banks, [list(range(80))] * 6)
    assert result.verdict == "declining" and result.slope < 0 and result.slope_p < ALPHA / 2


def test_two_runs_are_one_test_at_alpha_and_more_are_split() -> None:
    two = history_trend([[[1, 1], [0, 1]], [[1, 0], [0, 0]]], alpha=0.1)
    three = history_trend([[[1, 1], [0, 1]]] * 3, alpha=0.1)
    assert (two.alpha_each, three.alpha_each) == (0.1, 0.05)
    assert two.design == "unpaired" and three.verdict == "stable"


def test_identical_runs_are_stable_with_p_one() -> None:
    run = Bank.from_counts([4, 4, 4], [4, 0, 2], ids=["a", "b", "c"])
    result = history_trend([run, run, run])
    assert result.design == "paired" and result.slope == 0 and result.slope_p == 1.0
    assert result.verdict == "stable"


def test_bad_input_names_the_argument() -> None:
    with pytest.raises(EvaluationError, match="at least 2 runs"):
        history_trend([[[1]]])
    with pytest.raises(EvaluationError, match="alpha must be between 0 and 1"):
        history_trend([[[1]], [[0]]], alpha=1.5)
    with pytest.raises(EvaluationError, match=r"ids\[0\] must name each of the 2 items"):
        history_trend([[[1], [0]], [[0], [1]]], [["a"], ["a", "b"]])
