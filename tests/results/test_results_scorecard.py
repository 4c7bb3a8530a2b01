"""Score cards: metric expansion, the interval each --ci method gives, flaky items."""

from __future__ import annotations

import numpy as np
import pytest

from trialscore.core.bank import Bank
from trialscore.core.estimators import g_pass_at_k_tau, item_scores, mg_pass_at_k
from trialscore.errors import EvaluationError
from trialscore.results.counts import GroupCounts
from trialscore.results.scorecard import MetricSpec, design_effect, metric_interval, metric_specs, score_group
from trialscore.stats import bayes_interval, bootstrap_interval, item_interval, proportion_interval


@pytest.fixture
def bank() -> Bank:
    rng = np.random.default_rng(12)
    return Bank.from_matrix((rng.random((25, 6)) < rng.random(25)[:, None]).astype(int))


def test_metric_specs_expand_k_and_name_tau():
    specs = metric_specs(["avg", "pass@k", "g-pass@k_tau", "mg-pass@k"], [1, 4], tau=0.75)
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
    single = Bank.from_counts(np.ones(bank.items, dtype=int), np.minimum(bank.c, 1))
    interval = metric_interval(single, MetricSpec("avg"), "wilson")
    assert interval == proportion_interval(int(single.c.sum()), bank.items, 0.95, "wilson")
    assert metric_interval(single, MetricSpec("pass@k", 1), "jeffreys").method == "jeffreys"
    with pytest.raises(EvaluationError, match="fits avg or a k = 1 metric, not pass@2; use ci bootstrap"):
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
    card = score_group(group, metric_specs(["g_pass_at_k_tau"], [4], tau=0.5))
    assert card.flaky_items == int(((bank.c > 0) & (bank.c < bank.n)).sum())
    assert card.metrics[0].interval.estimate == pytest.approx(g_pass_at_k_tau(bank, 4, 0.5), abs=1e-12)
    data = card.to_dict()
    assert data["group"] == {"target": "m"} and data["metrics"][0]["tau"] == 0.5
    assert data["items"] == 25 and data["trials"] == 150


# --- pooled proportion intervals: only where trials are the independent units --------------------------


@pytest.mark.parametrize("ci", ["wilson", "clopper-pearson", "jeffreys", "agresti-coull"])
def test_pooled_intervals_keep_the_estimate_on_one_trial_items(ci):
    rng = np.random.default_rng(8)
    bank = Bank.from_counts(np.ones(40, dtype=int), (rng.random(40) < 0.7).astype(int))
    for spec in (MetricSpec("avg"), MetricSpec("pass@k", 1), MetricSpec("pass^k", 1), MetricSpec("maj@k", 1)):
        interval = metric_interval(bank, spec, ci, level=0.9)
        assert interval == proportion_interval(int(bank.c.sum()), 40, 0.9, ci)
        assert interval.estimate == pytest.approx(
            float(item_scores(bank, spec.metric, spec.k).mean()), abs=1e-12
        )
    one_item = Bank.from_counts([5], [3])  # a single item: its trials are the independent units
    assert metric_interval(one_item, MetricSpec("avg"), ci) == proportion_interval(3, 5, 0.95, ci)


def test_pooled_intervals_refuse_multi_trial_items_and_name_the_design_effect():
    # ragged: avg is 0.375 but the pooled rate is 11/17 = 0.647; never printed under the avg label
    ragged = Bank.from_counts([1, 1, 15], [0, 0, 11])
    with pytest.raises(EvaluationError) as error:
        metric_interval(ragged, MetricSpec("avg"), "wilson")
    message = str(error.value)
    p = 11 / 17
    want = np.var([0, 0, 11 / 15], ddof=1) / 3 / (p * (1 - p) / 17)
    assert f"design effect is {want:.3g}" in message and message.startswith("ci wilson pools all trials")
    assert "up to 15 trials" in message and "Use the default ci auto," in message
    # items that differ, 4 of 4 or 0 of 4: (1/3) / 4 over (1/4) / 16 = 16/3
    split = Bank.from_counts([4, 4, 4, 4], [4, 4, 0, 0])
    with pytest.raises(EvaluationError, match=r"design effect is 5\.33 "):
        metric_interval(split, MetricSpec("pass@k", 1), "clopper-pearson")
    with pytest.raises(EvaluationError, match="cannot be measured"):
        metric_interval(Bank.from_counts([3, 3], [3, 3]), MetricSpec("avg"), "jeffreys")


@pytest.mark.slow
def test_design_effect_measures_item_heterogeneity():
    """Beta(4, 2) items with 5 trials: deff = 1 + (n - 1) rho, rho = 1 / (a + b + 1) = 1/7."""
    rng = np.random.default_rng(21)
    effects = []
    for _ in range(400):
        p = rng.beta(4, 2, 200)
        effects.append(design_effect(Bank.from_counts(np.full(200, 5), rng.binomial(5, p))))
    assert np.mean(effects) == pytest.approx(1 + 4 / 7, abs=0.05)
    same = [design_effect(Bank.from_counts(np.full(200, 5), rng.binomial(5, 0.7, 200))) for _ in range(400)]
    assert np.mean(same) == pytest.approx(1.0, abs=0.03)


def test_pass_hat_k_carries_its_estimator_and_states_its_convention():
    specs = metric_specs(["pass@k", "pass^k"], [1, 3], pass_hat_k="plugin")
    assert [spec.label for spec in specs] == ["pass@1", "pass@3", "pass^1", "pass^3 (plug-in)"]
    assert [spec.estimator for spec in specs] == [None, None, "plugin", "plugin"]
    assert not specs[2].plugin  # at k = 1 the plug-in is the pass rate, the unbiased one's value
    with pytest.raises(EvaluationError, match="estimator goes with pass\\^k"):
        MetricSpec("pass@k", 2, estimator="plugin")
    group = GroupCounts((), np.array(["a", "b", "c"], dtype=object), np.array([3, 3, 0]), np.array([2, 3, 0]),
                        np.array([0, 0, 3]), "fail")  # fmt: skip
    card = score_group(group, [MetricSpec("pass^k", 3, estimator="plugin"), MetricSpec("pass^k", 3)])
    plugin, unbiased = card.metrics
    assert plugin.interval is not None and unbiased.interval is not None
    assert plugin.interval.estimate == pytest.approx(((2 / 3) ** 3 + 1 + 0) / 3)
    assert unbiased.interval.estimate == pytest.approx(1 / 3)
    assert plugin.to_dict()["convention"] == {
        "estimator": "plugin",
        "formula": "plug-in (c/n)^k per item (seed 000's passToTheK), mean over items",
        "errors": "fail",
        "errored_trials": "errored trials counted as failed trials",
    }
    assert "convention" not in score_group(group, [MetricSpec("avg")]).metrics[0].to_dict()
