"""Cost, latency, tokens and steps per success: the ratio estimator, its interval, unknown values."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from trialscore.errors import EvaluationError, InsufficientDataError
from trialscore.stats import PerSuccess, per_success
from trialscore.stats._effort import item_totals, log_ratio_variance, ratio_interval

NAN = float("nan")


def test_estimate_is_total_over_successes_exactly() -> None:
    items = ["a", "a", "a", "b", "b", "c", "c", "c", "c"]
    passed = [1, 0, 1, 0, 0, 1, 1, 1, 0]
    costs = [0.125, 0.5, 0.25, 1.0, 0.75, 0.0625, 0.125, 0.25, 2.0]
    result = per_success(items, passed, costs)
    expected = sum(Fraction(c) for c in costs) / sum(passed)
    assert Fraction(result.estimate).limit_denominator(10**6) == expected
    assert (result.successes, result.trials, result.items) == (5, 9, 3)
    assert result.interval.low < result.estimate < result.interval.high


def test_jackknife_variance_by_hand() -> None:
    y = np.array([2.0, 1.0, 4.0, 3.0])
    x = np.array([2.0, 1.0, 2.0, 1.0])
    leave = [math.log((10 - y[i]) / (6 - x[i])) for i in range(4)]
    mean = sum(leave) / 4
    expected = 3 / 4 * sum((value - mean) ** 2 for value in leave)
    variance, how = log_ratio_variance((y, x, 1.0))
    assert how == "jackknife"
    assert variance == pytest.approx(expected, rel=1e-12)
    interval = ratio_interval(y, x)
    half = 3.182446305284263 * math.sqrt(expected)  # t quantile, df 3
    assert interval.low == pytest.approx(10 / 6 * math.exp(-half), rel=1e-9)
    assert interval.high == pytest.approx(10 / 6 * math.exp(half), rel=1e-9)


def test_delta_method_when_one_item_holds_every_success() -> None:
    y = np.array([1.0, 2.0, 3.0])
    x = np.array([0.0, 3.0, 0.0])
    variance, how = log_ratio_variance((y, x, 1.0))
    u = y / 6 - x / 3
    assert how == "delta method"
    assert variance == pytest.approx(3 / 2 * float(np.sum(u**2)))
    assert "delta method" in ratio_interval(y, x).method


def test_paired_terms_cancel_for_identical_runs() -> None:
    y = np.array([1.0, 5.0, 2.0, 8.0])
    x = np.array([1.0, 2.0, 1.0, 3.0])
    variance, _ = log_ratio_variance((y, x, 1.0), (y, x, -1.0))
    assert variance == 0.0


def test_unknown_values_are_left_out_counted_and_named() -> None:
    items = ["a", "a", "b", "b", "c"]
    result = per_success(items, [1, 1, 1, 0, 1], [1.0, NAN, 2.0, NAN, 3.0], quantity="latency")
    assert result.unknown_trials == 2
    assert result.unknown_positions == (1, 3)
    assert result.unknown_items == ("a", "b")
    # the unknown trials' successes are left out too: 6 seconds over 3 known successes
    assert result.estimate == pytest.approx(2.0)
    assert result.unit == "s" and result.successes == 3
    assert "never taken as free" in result.notes[0]
    assert "2 trials of unknown latency left out" in str(result)


def test_unknown_raise_refuses_them() -> None:
    with pytest.raises(EvaluationError, match="unknown='raise'; got NaN at trial 1"):
        per_success(["a", "a", "b"], [1, 1, 0], [1.0, NAN, 1.0], unknown="raise")


def test_never_zero_width_when_every_trial_solves_at_one_cost() -> None:
    result = per_success(["a", "a", "b", "b", "c", "c"], [1] * 6, [0.5] * 6)
    assert result.estimate == 0.5
    assert result.interval.width > 0
    assert "trial-noise floor" in result.interval.method


def test_per_trial_is_the_mean_over_known_trials() -> None:
    result = per_success(
        ["a", "a", "b", "b"], [0, 0, 1, 0], [1.0, 3.0, 2.0, 6.0], quantity="tokens", per="trial"
    )
    assert result.estimate == 3.0 and result.per == "trial" and result.unit == "tokens"
    assert result.interval.width > 0


def test_zero_successes_and_bad_input_are_one_clear_line() -> None:
    with pytest.raises(InsufficientDataError, match="at least one solved trial; got 0 of 2 trials"):
        per_success(["a", "b"], [0, 0], [1.0, 1.0])
    with pytest.raises(EvaluationError, match="values must be finite and >= 0"):
        per_success(["a", "b"], [1, 1], [1.0, -1.0])
    with pytest.raises(EvaluationError, match="passed must hold 0/1 outcomes; got 2 at trial 1"):
        per_success(["a", "b"], [1, 2], [1.0, 1.0])
    with pytest.raises(EvaluationError, match="quantity must be one of"):
        per_success(["a", "b"], [1, 1], [1.0, 1.0], quantity="money")
    with pytest.raises(InsufficientDataError, match="at least 2 items"):
        per_success(["a", "a"], [1, 1], [1.0, 1.0])
    with pytest.raises(InsufficientDataError, match="no trial has a known steps value"):
        per_success(["a", "b"], [1, 1], [NAN, NAN], quantity="steps")


def test_every_value_zero_is_exactly_zero() -> None:
    result = per_success(["a", "b"], [1, 1], [0.0, 0.0], quantity="steps")
    assert (result.estimate, result.interval.low, result.interval.high) == (0.0, 0.0, 0.0)


def test_totals_keep_first_seen_order_and_to_dict() -> None:
    totals = item_totals([3, 1, 3], [1, 0, 0], [1.0, 2.0, 4.0])
    assert totals.ids == (3, 1)
    assert totals.total.tolist() == [5.0, 2.0]
    result = per_success([3, 1, 3], [1, 0, 1], [1.0, 2.0, 4.0])
    assert isinstance(result, PerSuccess)
    assert result.to_dict()["interval"]["estimate"] == pytest.approx(3.5)


def test_per_trial_floor_binds_only_when_every_trial_reports_the_same() -> None:
    same = per_success(["a", "a", "b", "b"], [1, 0, 0, 1], [5.0] * 4, quantity="steps", per="trial")
    assert same.estimate == 5.0 and same.interval.width > 0
    assert "trial-noise floor" in same.interval.method
    varied = per_success(
        ["a", "a", "b", "b"], [1, 0, 0, 1], [1.0, 6.0, 4.0, 19.0], quantity="steps", per="trial"
    )
    assert "floor" not in varied.interval.method
