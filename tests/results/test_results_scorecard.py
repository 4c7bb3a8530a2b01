"""Score cards: metric expansion, the interval each --ci method gives, flaky items."""

from __future__ import annotations

import numpy as np
import pytest

from trialscore.bank import Bank
from trialscore.errors import EvaluationError
from trialscore.estimators import g_pass_at_k_tau, mg_pass_at_k
from trialscore.results.counts import GroupCounts
from trialscore.results.scorecard import MetricSpec, metric_interval, metric_specs, score_group
from trialscore.stats import bayes_interval, bootstrap_interval, item_interval, proportion_interval


@pytest.fixture
def bank() -> Bank:
    rng = np.random.default_rng(12)
    return Bank.from_matrix((rng.random((25, 6)) < rng.random(25)[:, None]).astype(int))


def test_metric_specs_expand_k_and_name_tau():
    specs = metric_specs(["avg", "pass@k", "g-pass@k", "mg-pass@k"], [1, 4], tau=0.75)
    assert [spec.label for spec in specs] == [
        "avg",
        "pass@1",
        "pass@4",
        "g-pass@1_tau=0.75",
        "g-pass@4_tau=0.75",
        "mg-pass@1",
        "mg-pass@4",
    ]
    assert specs[3] == MetricSpec("g-pass@k_tau", 1, 0.75)
    with pytest.raises(EvaluationError, match="metric 'pass@k' needs at least one k"):
        metric_specs(["pass@k"], [])


@pytest.mark.parametrize(
    ("ci", "expected"),
    [
        ("bootstrap", lambda b: bootstrap_interval(b, "mg-pass@k", 3, seed=4, resamples=2000)),
        ("bca", lambda b: bootstrap_interval(b, "mg-pass@k", 3, method="bca", seed=4, resamples=2000)),
        ("auto", lambda b: item_interval(b, "mg-pass@k", 3)),
        ("wilson-eff", lambda b: item_interval(b, "mg-pass@k", 3)),
    ],
)
def test_metric_interval_uses_the_stats_method(bank, ci, expected):
    interval = metric_interval(bank, MetricSpec("mg-pass@k", 3), ci, resamples=2000, seed=4)
    assert interval == expected(bank)
    assert interval.estimate == pytest.approx(mg_pass_at_k(bank, 3), abs=1e-12)


def test_default_interval_never_collapses_on_saturated_or_single_items():
    saturated = Bank.from_counts([5] * 20, [5] * 20)
    for spec in (
        MetricSpec("avg"),
        MetricSpec("pass@k", 5),
        MetricSpec("pass^k", 5),
        MetricSpec("pass@k", 2),
    ):
        interval = metric_interval(saturated, spec)
        assert interval.estimate == 1.0 and interval.high == 1.0 and interval.low < 1.0, spec
        assert interval.method == "wilson-eff"
    # 0/1 item values (pass@N at k = n): exactly Wilson's interval of the 20 items.
    assert metric_interval(saturated, MetricSpec("pass@k", 5)).low == pytest.approx(
        proportion_interval(20, 20).low, rel=1e-12
    )
    one = metric_interval(Bank.from_counts([4], [2]), MetricSpec("avg"))
    assert 0.0 < one.low < 0.5 < one.high < 1.0 and one.n == 1


def test_proportion_intervals_only_for_pass_rates(bank):
    interval = metric_interval(bank, MetricSpec("avg"), "wilson")
    assert interval == proportion_interval(int(bank.c.sum()), int(bank.n.sum()), 0.95, "wilson")
    assert metric_interval(bank, MetricSpec("pass@k", 1), "jeffreys").method == "jeffreys"
    with pytest.raises(EvaluationError, match="fits avg or a k = 1 metric, not pass@2; use --ci bootstrap"):
        metric_interval(bank, MetricSpec("pass@k", 2), "wilson")
    with pytest.raises(EvaluationError, match="ci must be one of"):
        metric_interval(bank, MetricSpec("avg"), "magic")
    with pytest.raises(EvaluationError, match="ci must be one of"):
        metric_interval(bank, MetricSpec("avg"), "t")


def test_bayes_always_gets_its_credible_interval(bank):
    assert metric_interval(bank, MetricSpec("bayes"), "auto") == bayes_interval(bank)


def test_score_group_counts_flaky_items_and_keeps_tau(bank):
    items = np.array([f"q{i}" for i in range(bank.items)], dtype=object)
    errored = np.zeros(bank.items, dtype=np.int64)
    group = GroupCounts((("target", "m"),), items, bank.n, bank.c, errored)
    card = score_group(group, metric_specs(["g-pass@k"], [4], tau=0.5))
    assert card.flaky_items == int(((bank.c > 0) & (bank.c < bank.n)).sum())
    assert card.metrics[0].interval.estimate == pytest.approx(g_pass_at_k_tau(bank, 4, 0.5), abs=1e-12)
    data = card.to_dict()
    assert data["group"] == {"target": "m"} and data["metrics"][0]["tau"] == 0.5
    assert data["items"] == 25 and data["trials"] == 150
