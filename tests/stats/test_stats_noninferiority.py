"""Non-inferiority verdicts, and the cost-per-success one the other way round."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from trialscore.errors import EvaluationError, InsufficientDataError
from trialscore.stats import compare_paired, cost_non_inferiority, non_inferiority
from trialscore.stats._effort import item_totals

BASE = [[1, 1, 1, 0], [1, 0, 1, 1], [0, 1, 1, 1], [1, 1, 0, 1], [1, 1, 1, 1], [0, 0, 1, 0]] * 6


def shifted(rows: list[list[int]], drop: int) -> list[list[int]]:
    """The rows with the first ``drop`` passes of every item turned into failures."""
    out = []
    for row in rows:
        left = drop
        new = []
        for value in row:
            if value and left:
                new.append(0)
                left -= 1
            else:
                new.append(value)
        out.append(new)
    return out


def test_verdict_is_read_off_the_one_sided_bounds_of_compare_paired() -> None:
    candidate = shifted(BASE, 1)
    for margin, alpha in ((0.1, 0.05), (0.3, 0.05), (0.3, 0.025), (0.5, 0.1)):
        result = non_inferiority(BASE, candidate, margin, alpha=alpha)
        reference = compare_paired(BASE, candidate, alpha=2 * alpha, permutations=0)
        assert (result.interval.low, result.interval.high) == (
            reference.interval.low,
            reference.interval.high,
        )
        expected = (
            "non-inferior"
            if reference.interval.low > -margin
            else "inferior"
            if reference.interval.high < -margin
            else "inconclusive"
        )
        assert result.verdict == expected
        assert result.passed == (expected == "non-inferior")
        assert f"level {alpha:g}" in result.test and f"-{margin:g}" in result.rule


def test_one_sided_bound_by_hand() -> None:
    candidate = [shifted([row], 1)[0] if index % 2 else row for index, row in enumerate(BASE)]
    d = np.array([np.mean(b) - np.mean(a) for a, b in zip(BASE, candidate, strict=True)])
    se = d.std(ddof=1) / math.sqrt(d.size)
    low = d.mean() - stats.t.ppf(0.95, d.size - 1) * se
    result = non_inferiority(BASE, candidate, 0.3)
    assert result.interval.low == pytest.approx(low, rel=1e-9)
    assert result.interval.level == pytest.approx(0.9)


def test_all_three_verdicts_occur() -> None:
    assert non_inferiority(BASE, BASE, 0.1).verdict == "non-inferior"
    assert non_inferiority(BASE, shifted(BASE, 3), 0.1).verdict == "inferior"
    assert non_inferiority(BASE[:6], shifted(BASE[:6], 1), 0.25).verdict == "inconclusive"


def test_bad_margin_and_alpha_are_one_clear_line() -> None:
    with pytest.raises(EvaluationError, match="margin must be > 0"):
        non_inferiority(BASE, BASE, 0.0)
    with pytest.raises(EvaluationError, match=r"alpha must be a one-sided level below 0\.5"):
        non_inferiority(BASE, BASE, 0.1, alpha=0.5)


def test_cost_ratio_and_paired_jackknife_by_hand() -> None:
    items = ["a", "a", "b", "b", "c", "c", "d", "d"]
    passed = [1, 0, 1, 1, 0, 1, 1, 1]
    old = item_totals(items, passed, [1.0, 1.0, 2.0, 1.0, 3.0, 1.0, 1.0, 2.0])
    new = item_totals(items, passed, [1.0, 2.0, 1.0, 1.0, 3.0, 2.0, 2.0, 2.0])
    result = cost_non_inferiority(old, new, 0.5, alpha=0.05)
    y_a, y_b, x = (
        np.array([2.0, 3.0, 4.0, 3.0]),
        np.array([3.0, 2.0, 5.0, 4.0]),
        np.array([1.0, 2.0, 1.0, 2.0]),
    )
    ratio = (y_b.sum() / x.sum()) / (y_a.sum() / x.sum())
    leave = np.log((y_b.sum() - y_b) / (x.sum() - x)) - np.log((y_a.sum() - y_a) / (x.sum() - x))
    variance = 3 / 4 * np.sum((leave - leave.mean()) ** 2)
    half = stats.t.ppf(0.95, 3) * math.sqrt(variance)
    assert result.estimate == pytest.approx(ratio)
    assert result.interval.high == pytest.approx(ratio * math.exp(half))
    assert result.bound == 1.5
    expected = (
        "non-inferior"
        if result.interval.high < 1.5
        else "inferior"
        if result.interval.low > 1.5
        else "inconclusive"
    )
    assert result.verdict == expected


def test_cost_verdicts_and_unmatched_items() -> None:
    items = [i // 2 for i in range(60)]
    old = item_totals(items, [1, 0] * 30, [1.0, 1.5] * 30)
    cheap = item_totals(items, [1, 0] * 30, [0.5, 0.75] * 30)
    dear = item_totals([*items[:-2], 99, 99], [1, 0] * 30, [float("nan"), 3.0] + [2.0, 3.0] * 29)
    assert cost_non_inferiority(old, cheap, 0.1).verdict == "non-inferior"
    result = cost_non_inferiority(old, dear, 0.1)
    assert result.verdict == "inferior"
    assert "2 items held (with a known cost) by only one run: left out" in result.notes  # 29 and 99
    assert any("1 trial of unknown cost" in note for note in result.notes)
    with pytest.raises(InsufficientDataError, match="no solved trial on the shared items"):
        cost_non_inferiority(old, item_totals(items, [0] * 60, [1.0] * 60), 0.1)
