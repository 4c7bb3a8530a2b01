"""Seed 002's tracking per task category: record shape, trend rule, advice, validation."""

from __future__ import annotations

import json
from datetime import date, datetime
from fractions import Fraction

import numpy as np
import pytest

import trialscore as ts
from trialscore import EvaluationError
from trialscore.compat.advice import calculate_pass_at_k
from trialscore.compat.tracking import track_category, trend_advice
from trialscore.stats import compare_paired, compare_unpaired


def _run(rate: float, items: int, trials: int, seed: int) -> np.ndarray:
    return (np.random.default_rng(seed).random((items, trials)) < rate).astype(int)


def test_record_has_seed_002_shape() -> None:
    older, newer = _run(0.5, 50, 3, 1), _run(0.9, 50, 3, 2)
    snap = track_category("bug_fix", [("2024-01-08", older), ("2024-01-15", newer)])
    record = json.loads(json.dumps(snap.to_dict()))
    assert {"task_category", "pass@1", "pass@3", "samples", "trend", "last_updated"} <= set(record)
    assert record["task_category"] == "bug_fix"
    assert record["pass@1"] == ts.pass_at_k(newer, 1)
    assert record["pass@3"] == ts.pass_at_k(newer, 3)
    assert record["samples"] == 50 and record["trials"] == 150
    assert record["last_updated"] == "2024-01-15"
    assert record["trend"] == "improving"


@pytest.mark.parametrize(
    ("old_rate", "new_rate", "trend"), [(0.3, 0.9, "improving"), (0.9, 0.3, "declining")]
)
def test_trend_follows_the_welch_comparison(old_rate: float, new_rate: float, trend: str) -> None:
    older, newer = _run(old_rate, 60, 4, 3), _run(new_rate, 60, 4, 4)
    snap = track_category("c", [(date(2024, 1, 1), older), (date(2024, 2, 1), newer)])
    want = compare_unpaired(older, newer, "avg")
    assert snap.trend == trend
    assert snap.comparison is not None
    assert (snap.comparison.delta, snap.comparison.p_value) == (want.delta, want.p_value)
    assert snap.comparison.p_value < 0.05


def test_no_significant_change_is_stable_and_one_run_is_new() -> None:
    older, newer = _run(0.6, 30, 4, 5), _run(0.6, 30, 4, 6)
    snap = track_category("c", [("2024-01-01", older), ("2024-01-02", newer)])
    assert snap.comparison is not None and snap.comparison.p_value >= 0.05
    assert snap.trend == "stable"
    single = track_category("c", [("2024-01-01", older)], ks=(1,))
    assert single.trend == "new" and single.comparison is None
    assert trend_advice(single).code == "trend_new"


def test_history_is_ordered_by_date_not_by_position() -> None:
    a, b = _run(0.2, 40, 3, 7), _run(0.95, 40, 3, 8)
    snap = track_category("c", [(datetime(2024, 5, 2, 9), b), ("2024-05-01", a)])
    assert snap.last_updated == date(2024, 5, 2)
    assert snap.trend == "improving"
    assert snap.pass_at_k[1] == ts.pass_at_k(b, 1)


def test_runs_that_name_their_items_are_compared_paired() -> None:
    older = {f"task-{i}": [1, 0, 0, 0] for i in range(25)}
    newer = {f"task-{i}": [1, 1, 1, 0] for i in range(25)} | {"task-new": [1, 1, 1, 1]}
    snap = track_category("c", [("2024-01-01", older), ("2024-01-08", newer)])
    want = compare_paired(older, newer, "avg")
    assert snap.comparison is not None and snap.comparison.design == "paired"
    assert snap.comparison.paired_items == 25 and snap.comparison.only_in_candidate == ("task-new",)
    assert (snap.comparison.delta, snap.comparison.p_value) == (want.delta, want.p_value)
    assert snap.trend == "improving"


def test_trend_advice_is_seed_002_actionable_insight() -> None:
    down = track_category("c", [("2024-01-01", _run(0.9, 60, 3, 9)), ("2024-01-02", _run(0.3, 60, 3, 10))])
    advice = trend_advice(down)
    assert advice.code == "pass_at_1_declining" and advice.severity == "warning"
    assert "check whether prompts degraded or task complexity increased" in advice.message
    assert advice.numbers["delta"] == down.comparison.delta
    up = track_category("c", [("2024-01-01", _run(0.3, 60, 3, 11)), ("2024-01-02", _run(0.9, 60, 3, 12))])
    assert "skills or context engineering are working" in trend_advice(up).message


def test_calculate_pass_at_k_matches_exact_fractions() -> None:
    assert calculate_pass_at_k(10, 7, 1) == float(Fraction(7, 10))
    assert calculate_pass_at_k(10, 7, 3) == float(1 - Fraction(1, 120))
    assert calculate_pass_at_k(10, 0, 3) == 0.0


@pytest.mark.parametrize(
    ("history", "message"),
    [
        ([], r"history of 'c' must hold at least one \(date, run\) pair; got none"),
        (
            [("2024-13-01", [[1]])],
            r"history\[0\] date must be a date or an ISO date string .* got '2024-13-01'",
        ),
        ([("2024-01-01",)], r"history\[0\] must be a \(date, run\) pair"),
        (
            [("2024-01-01", [[1, 2]])],
            r"history\[0\] run must be binary \(0 or 1\) for this metric; got 2 at item 0, trial 1",
        ),
        ([("2024-01-01", [[1, 0]])], r"k must satisfy 1 <= k <= n; got k=3 with n=2"),
    ],
)
def test_validation_messages(history: list, message: str) -> None:
    with pytest.raises(EvaluationError, match=message):
        track_category("c", history)


def test_category_name_is_required() -> None:
    with pytest.raises(EvaluationError, match=r"task_category must be a non-empty string; got ''"):
        track_category("", [("2024-01-01", [[1]])])


def test_too_few_items_to_compare_is_insufficient_data() -> None:
    snap = track_category(
        "c", [("2024-01-01", {"a": [1, 0]}), ("2024-01-02", {"a": [1, 1], "b": [0, 1]})], ks=(1,)
    )
    assert snap.trend == "insufficient_data" and snap.comparison is None
    advice = trend_advice(snap)
    assert advice.code == "trend_insufficient_data" and "too few items" in advice.message
    # runs without ids but with 2+ items each fall back to Welch
    snap = track_category("c", [("2024-01-01", [[1, 0], [0, 0]]), ("2024-01-02", [[1, 1], [1, 0]])], ks=(1,))
    assert snap.comparison is not None and snap.comparison.design == "unpaired"
