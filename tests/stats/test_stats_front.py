"""The cost-success front: figures, intervals, dominance, probabilities and what is left out."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from trialscore import Bank
from trialscore.errors import EvaluationError, InsufficientDataError
from trialscore.stats import _front as front_module
from trialscore.stats import cost_success_front, item_interval, item_totals, per_success
from trialscore.stats._front import dominated

NAN = float("nan")


def brute_dominated(rates: list[float], costs: list[float]) -> list[bool]:
    out = []
    for t, (rate_t, cost_t) in enumerate(zip(rates, costs, strict=True)):
        out.append(
            any(
                rate_s >= rate_t and cost_s <= cost_t and (rate_s > rate_t or cost_s < cost_t)
                for s, (rate_s, cost_s) in enumerate(zip(rates, costs, strict=True))
                if s != t
            )
        )
    return out


def test_dominance_matches_pairwise_definition_with_ties() -> None:
    values = [0.2, 0.5, 0.5, 0.8]
    for rates in itertools.product(values, repeat=3):
        for costs in itertools.product([1.0, 2.0, 2.0], repeat=3):
            got = dominated(np.array([rates]), np.array([costs]))[0].tolist()
            assert got == brute_dominated(list(rates), list(costs))


def test_figures_are_the_pass_rate_and_the_cost_per_trial() -> None:
    items = ["a", "a", "b", "b", "c", "c"]
    cheap = item_totals(items, [1, 0, 0, 0, 1, 1], [0.1, 0.2, NAN, 0.1, 0.1, 0.3])
    dear = item_totals(items, [1, 1, 0, 1, 1, 1], [1.0, 2.0, 1.0, 1.0, 1.0, 3.0])
    front = cost_success_front({"cheap": cheap, "dear": dear}, replicates=500)
    low, high = front.points
    # the pass rate uses every trial, the one of unknown cost too
    assert low.pass_rate.estimate == pytest.approx((0.5 + 0.0 + 1.0) / 3)
    assert low.pass_rate.low == item_interval(Bank.from_counts([2, 2, 2], [1, 0, 2])).low
    # the cost per task is over the trials whose cost is known
    assert low.cost_per_task.estimate == pytest.approx(0.8 / 5)
    assert low.cost_per_task.estimate == pytest.approx(
        per_success(items, [1, 0, 0, 0, 1, 1], [0.1, 0.2, NAN, 0.1, 0.1, 0.3], per="trial").estimate
    )
    assert low.unknown_cost_trials == 1 and high.unknown_cost_trials == 0
    assert front.front() == ("cheap", "dear")
    assert 0.0 <= low.front_probability <= 1.0 and high.front_probability > 0.5
    assert "bootstrap" in front.method and front.items == 3


def test_cost_per_success_is_over_the_same_trials_and_none_without_a_success() -> None:
    items = ["a", "a", "b", "b", "c", "c"]
    passed = [1, 0, 0, 1, 1, 1]
    costs = [0.1, 0.2, NAN, 0.1, 0.4, 0.3]
    never = item_totals(items, [0] * 6, [1.0] * 6)
    front = cost_success_front({"some": item_totals(items, passed, costs), "never": never}, replicates=200)
    some, none = front.points
    expected = per_success(items, passed, costs)  # the trial of unknown cost is left out, its success too
    assert some.cost_per_success is not None
    assert some.cost_per_success.estimate == pytest.approx(1.1 / 4) == pytest.approx(expected.estimate)
    assert (some.cost_per_success.low, some.cost_per_success.high) == pytest.approx(
        (expected.interval.low, expected.interval.high)
    )
    assert none.cost_per_success is None and none.cost_per_task.estimate == pytest.approx(1.0)


def test_the_bootstrap_in_blocks_draws_the_same_resamples(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(11)
    items = np.repeat(np.arange(40), 3)
    runs = {
        name: item_totals(items, rng.random(120) < rate, cost * rng.lognormal(0, 1, 120))
        for name, rate, cost in (("x", 0.6, 0.5), ("y", 0.62, 0.55), ("z", 0.3, 0.1))
    }
    whole = cost_success_front(runs, replicates=700, seed=2)
    monkeypatch.setattr(front_module, "_BLOCK", 40 * 3)  # 3 replicates a block, the last one short
    blocks = cost_success_front(runs, replicates=700, seed=2)
    assert [p.front_probability for p in blocks.points] == [p.front_probability for p in whole.points]
    assert 0 < whole.points[1].front_probability < 1


def test_only_shared_items_enter_and_the_rest_are_counted() -> None:
    one = item_totals(["a", "b", "c", "d"], [1, 0, 1, 1], [1.0, 1.0, 1.0, 1.0])
    two = item_totals(["a", "b", "c", "e"], [1, 1, 1, 1], [2.0, 2.0, NAN, 2.0])
    front = cost_success_front({"one": one, "two": two}, replicates=200)
    assert front.items == 2  # a, b: c has no known cost in "two", d and e are held by one target only
    assert front.items_dropped == 3


def test_seeded_and_reproducible() -> None:
    rng = np.random.default_rng(5)
    items = np.repeat(np.arange(30), 2)
    runs = {
        name: item_totals(items, rng.random(60) < rate, cost * rng.lognormal(0, 1, 60))
        for name, rate, cost in (("x", 0.6, 0.5), ("y", 0.62, 0.55), ("z", 0.3, 0.1))
    }
    first = cost_success_front(runs, seed=3)
    assert first == cost_success_front(runs, seed=3)
    assert [p.front_probability for p in first.points] != [
        p.front_probability for p in cost_success_front(runs, seed=4).points
    ]


def test_bad_input_is_one_clear_line() -> None:
    one = item_totals(["a", "b"], [1, 0], [1.0, 1.0])
    with pytest.raises(EvaluationError, match="at least 2 targets"):
        cost_success_front({"one": one})
    with pytest.raises(InsufficientDataError, match="share at least 2 items"):
        cost_success_front({"one": one, "two": item_totals(["a", "c"], [1, 0], [1.0, 1.0])})
    with pytest.raises(EvaluationError, match="replicates must be an integer >= 100"):
        cost_success_front({"one": one, "two": one}, replicates=10)
