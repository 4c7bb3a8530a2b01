"""Per-case change between two runs: Fisher's exact p-value against exact rational arithmetic, and
Holm's correction over the cases keeping false alarms at alpha in a seeded two-level simulation."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from trialscore.errors import EvaluationError
from trialscore.stats._cases import case_changes


def exact_fisher(before: tuple[int, int], now: tuple[int, int]) -> Fraction:
    """Two-sided Fisher p-value from math.comb: the tables at most as likely as the one seen."""
    (n1, c1), (n2, c2) = before, now
    passes, total = c1 + c2, n1 + n2

    def prob(x: int) -> Fraction:
        return Fraction(math.comb(n2, x) * math.comb(n1, passes - x), math.comb(total, passes))

    seen = prob(c2)
    support = range(max(0, passes - n1), min(n2, passes) + 1)
    return sum((prob(x) for x in support if prob(x) <= seen), Fraction(0))


@pytest.mark.parametrize(
    ("before", "now"),
    [((10, 9), (10, 8)), ((10, 10), (10, 0)), ((3, 3), (3, 0)), ((12, 5), (7, 6)), ((40, 21), (33, 9))],
)
def test_the_p_value_is_fishers_exact_one(before: tuple[int, int], now: tuple[int, int]) -> None:
    (found,) = case_changes({"c": before}, {"c": now})
    assert found.p_value == pytest.approx(float(exact_fisher(before, now)), rel=1e-9)
    assert found.delta == pytest.approx(now[1] / now[0] - before[1] / before[0])


def test_noise_is_unchanged_and_a_collapse_regressed() -> None:
    found = case_changes(
        {"a": (10, 9), "b": (10, 10), "c": (10, 0)}, {"a": (10, 8), "b": (10, 0), "c": (10, 10)}
    )
    assert [(c.case, c.direction) for c in found] == [
        ("a", "unchanged"),
        ("b", "regressed"),
        ("c", "improved"),
    ]


def test_cases_missing_or_without_scored_trials_are_left_out() -> None:
    found = case_changes({"a": (5, 2), "b": (0, 0)}, {"a": (5, 2), "b": (4, 0), "new": (5, 5)})
    assert [c.case for c in found] == ["a"] and not found[0].changed
    with pytest.raises(EvaluationError, match="alpha"):
        case_changes({}, {}, alpha=1.5)


def _runs(rng: np.random.Generator, rates: np.ndarray, trials: np.ndarray) -> dict[int, tuple[int, int]]:
    return {
        case: (int(n), int(rng.binomial(n, p))) for case, (p, n) in enumerate(zip(rates, trials, strict=True))
    }


@pytest.mark.slow
def test_no_change_is_called_in_at_most_alpha_of_suites() -> None:
    """Two-level model: 30 cases, pass rates from Beta(2, 1) (saturated ones included), ragged trials
    (6 to 12 per case and run), the same rates in both runs: any case called changed is a false
    alarm, which Holm over Fisher keeps at or below alpha = 0.05 per suite."""
    rng = np.random.default_rng(20240)
    replications, alarms = 1000, 0
    for _ in range(replications):
        rates = rng.beta(2.0, 1.0, size=30)
        rates[:3] = 1.0  # saturated cases
        before = _runs(rng, rates, rng.integers(6, 13, size=30))
        now = _runs(rng, rates, rng.integers(6, 13, size=30))
        alarms += any(change.changed for change in case_changes(before, now))
    rate = alarms / replications
    assert rate <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / replications), rate


def test_a_collapsed_case_is_found_among_thirty() -> None:
    """One case of 30 falls from 0.95 to 0.1 (10 trials each run): found in most suites, and no other
    case is called changed in more than alpha of them."""
    rng = np.random.default_rng(7)
    replications, found, others = 400, 0, 0
    for _ in range(replications):
        rates = rng.beta(2.0, 1.0, size=30)
        rates[0] = 0.95
        before = _runs(rng, rates, np.full(30, 10))
        rates[0] = 0.1
        now = _runs(rng, rates, np.full(30, 10))
        changes = case_changes(before, now)
        found += changes[0].direction == "regressed"
        others += any(change.changed for change in changes[1:])
    assert found / replications >= 0.75, found / replications  # measured: 0.81
    assert others / replications <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / replications)
