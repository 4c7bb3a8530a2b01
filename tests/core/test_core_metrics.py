"""One metric registry: every accepted name gives the same estimate everywhere it is accepted."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from fractions import Fraction
from math import comb
from pathlib import Path

import numpy as np
import pytest

import trialscore as ts
from tests.cli_runner import CliRunner
from trialscore.cli import app
from trialscore.core.bank import Bank
from trialscore.core.metrics import METRICS, Metric, register_metric, resolve_metric, unregister_metric
from trialscore.errors import EvaluationError
from trialscore.results.scorecard import MetricSpec, metric_interval
from trialscore.runner.gates import parse_threshold
from trialscore.stats import bootstrap_interval, compare_paired, item_interval

NAMES = sorted(
    {
        name
        for metric in METRICS.values()
        if metric.needs == "counts"
        for name in (metric.name, *metric.aliases)
    }
)


def _matrices() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(5)
    rates = rng.beta(2, 2, size=(12, 1))
    return {
        "a": (rng.random((12, 6)) < rates).astype(int),
        "b": (rng.random((12, 6)) < np.clip(rates + 0.1, 0, 1)).astype(int),
    }


def _write(path: Path, outcomes: dict[str, np.ndarray]) -> Path:
    rows = [
        {"case_id": f"q{i}", "trial": t, "target": target, "passed": bool(value)}
        for target, matrix in outcomes.items()
        for i, row in enumerate(matrix)
        for t, value in enumerate(row)
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def _cli(*args: str) -> dict:
    result = CliRunner().invoke(app, [*args, "--format", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_every_name_means_one_thing_everywhere(name: str, tmp_path: Path) -> None:
    metric = resolve_metric(name)
    outcomes = _matrices()
    path = _write(tmp_path / "t.jsonl", outcomes)
    args = {"k": 3} if metric.needs_k else {}
    if metric.needs_tau:
        args["tau"] = 0.5
    function = ts.estimator_by_name(name)
    library = {target: function(matrix, **args) for target, matrix in outcomes.items()}
    if metric.name == "bayes":
        library = {target: value[0] for target, value in library.items()}
    options = ["--metric", name, *(["--k", "3"] if metric.needs_k else [])]
    scored = _cli("score", str(path), "--by", "target", *options)
    for group in scored["groups"]:
        (row,) = group["metrics"]
        assert row["estimate"] == pytest.approx(library[group["group"]["target"]], rel=1e-12, abs=1e-15)
    ranked = _cli("rank", str(path), "--by", "target", *options)
    for model in ranked["models"]:
        assert model["score"] == pytest.approx(library[model["model"]["target"]], rel=1e-12, abs=1e-15)
    if metric.kernel is None:
        return
    a, b = outcomes["a"], outcomes["b"]
    tau = args.get("tau")
    assert item_interval(a, name, args.get("k"), tau).estimate == pytest.approx(library["a"], rel=1e-12)
    assert bootstrap_interval(a, name, args.get("k"), tau, resamples=100).estimate == pytest.approx(
        library["a"], rel=1e-12
    )
    paired = compare_paired(a, b, name, args.get("k"), tau)
    assert (paired.baseline, paired.candidate) == pytest.approx((library["a"], library["b"]), rel=1e-12)
    split = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    _write(split[0], {"m": a})
    _write(split[1], {"m": b})
    (comparison,) = _cli("compare", str(split[0]), str(split[1]), *options)["comparisons"]
    assert comparison["baseline_score"] == pytest.approx(library["a"], rel=1e-12)
    assert comparison["candidate_score"] == pytest.approx(library["b"], rel=1e-12)


@pytest.mark.slow
def test_an_ambiguous_name_is_refused_everywhere_with_the_choices(tmp_path: Path) -> None:
    with pytest.raises(EvaluationError, match=r"ambiguous: say pass\^k .* or g-pass@k_tau"):
        ts.estimator_by_name("g-pass@k")
    with pytest.raises(EvaluationError, match="ambiguous"):
        ts.stats.bootstrap_interval([[1, 0, 1]], "g-pass@k", k=2)
    path = _write(tmp_path / "t.jsonl", _matrices())
    result = CliRunner().invoke(app, ["score", str(path), "--by", "target", "--metric", "g-pass@k"])
    assert result.exit_code == 2 and "ambiguous" in result.output and "g-pass@k_tau" in result.output


# --- a metric added in one place: the registry ----------------------------------------------------------


def _spread_credit(k: int, tau: object) -> tuple[list[int], int]:
    """pass@k minus pass^k: some, but not all, of k draws pass."""
    return [0] + [1] * (k - 1) + [0], 1


def _exact_spread(matrix: np.ndarray, k: int) -> Fraction:
    """The mean over items of P(1 <= X <= k - 1), X ~ Hypergeometric(n, c, k), in exact rationals."""
    total = Fraction(0)
    for row in matrix:
        n, c = len(row), int(row.sum())
        total += Fraction(comb(n, k) - comb(n - c, k) - comb(c, k), comb(n, k))
    return total / len(matrix)


@pytest.fixture
def spread() -> Iterator[Metric]:
    metric = register_metric(Metric("spread@k", "pass@k minus pass^k", credit=_spread_credit))
    yield metric
    unregister_metric("spread@k")


@pytest.mark.slow
def test_a_metric_registered_in_one_place_is_accepted_by_every_layer(spread: Metric, tmp_path: Path) -> None:
    outcomes = _matrices()
    a, b = outcomes["a"], outcomes["b"]
    exact = {target: float(_exact_spread(matrix, 3)) for target, matrix in outcomes.items()}
    # the library estimator: the mean over items of the credit's expectation, the double nearest the exact
    estimator = ts.estimator_by_name("spread@k")
    assert estimator(a, 3) == exact["a"] and estimator(b, k=3) == exact["b"]
    assert estimator(a, 3) == pytest.approx(ts.pass_at_k(a, 3) - ts.pass_hat_k(a, 3), abs=1e-15)
    assert ts.item_scores(a, spread, 3).mean() == pytest.approx(exact["a"], rel=1e-12)
    # the intervals, by name and by object
    assert item_interval(a, "spread@k", 3).estimate == exact["a"]
    assert bootstrap_interval(a, spread, 3, resamples=200).estimate == exact["a"]
    spec = MetricSpec("SPREAD@K", 3)
    assert spec.metric is spread and spec.label == "spread@3"
    assert metric_interval(Bank.from_matrix(a), spec) == item_interval(a, spread, 3)
    # compare and rank in the library
    paired = compare_paired(a, b, spread, 3)
    assert (paired.baseline, paired.candidate) == pytest.approx((exact["a"], exact["b"]), rel=1e-12)
    assert paired.metric == "spread@k"
    ranking = ts.rank_models([a, b], "spread@k", k=3, names=["a", "b"])
    assert ranking.scores == (exact["a"], exact["b"]) and ranking.metric == "spread@k"
    # the CLI: score, compare and rank take its name; at k = 1 it is 0 by definition, a note and no error
    path = _write(tmp_path / "t.jsonl", outcomes)
    scored = _cli("score", str(path), "--by", "target", "--metric", "spread@k", "--k", "1,3")
    for group in scored["groups"]:
        at_one, at_three = group["metrics"]
        assert at_one["estimate"] is None and at_one["reason"].startswith("is 0 by definition at k = 1")
        assert (at_three["label"], at_three["estimate"]) == ("spread@3", exact[group["group"]["target"]])
    split = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    _write(split[0], {"m": a})
    _write(split[1], {"m": b})
    compared = _cli("compare", str(split[0]), str(split[1]), "--metric", "spread@k", "--k", "3")
    (comparison,) = compared["comparisons"]
    assert (comparison["metric"], comparison["baseline_score"]) == ("spread@3", pytest.approx(exact["a"]))
    assert comparison["delta"] == pytest.approx(paired.delta, rel=1e-12)
    ranked = _cli("rank", str(path), "--by", "target", "--metric", "spread@k", "--k", "3")
    assert {model["label"]: model["score"] for model in ranked["models"]} == {
        "target=a": exact["a"],
        "target=b": exact["b"],
    }


def test_a_metric_better_lower_ranks_and_compares_downward(tmp_path: Path) -> None:
    miss = register_metric(
        Metric(
            "miss@k", "P(none of k passes)", credit=lambda k, tau: ([1] + [0] * k, 1), higher_is_better=False
        )
    )
    try:
        rng = np.random.default_rng(9)
        worse = (rng.random((30, 4)) < 0.3).astype(int)
        better = np.maximum(worse, (rng.random((30, 4)) < 0.6).astype(int))
        ranking = ts.rank_models([worse, better], miss, k=2)
        assert ranking.scores[1] < ranking.scores[0] and ranking.ranks == (2, 1)
        assert ranking.ranks == ts.rank_models([worse, better], "pass@k", k=2).ranks
        result = compare_paired(worse, better, "miss@k", 2)
        assert result.delta < 0 and result.interval.high < 0 and result.verdict == "improvement"
        assert "improvement if the 95% interval of delta lies below 0" in result.rule
        assert ts.stats.beat_probability(better, worse, miss, 2) == pytest.approx(
            ts.stats.beat_probability(better, worse, "pass@k", 2), abs=1e-12
        )
        with pytest.raises(EvaluationError, match="miss@k is better lower"):
            parse_threshold("miss@2=0.2")
    finally:
        unregister_metric("miss@k")


def test_a_metric_of_trial_values_is_refused_clearly_by_the_functions_of_counts() -> None:
    metric = resolve_metric("cost_per_success", trial_values=True)
    assert (metric.name, metric.needs, metric.higher_is_better, metric.per_item) == (
        "cost-per-success", "trial values", False, False,
    )  # fmt: skip
    said = "metric cost-per-success needs a value of every trial .*: the score, compare and rank commands"
    for call in (
        lambda: ts.estimator_by_name("cost-per-success"),
        lambda: item_interval([[1, 0]], "cost-per-success"),
        lambda: compare_paired([[1, 0]] * 2, [[1, 1]] * 2, "cost-per-success"),
        lambda: ts.rank_models([[[1, 0]], [[1, 1]]], "cost-per-success"),
    ):
        with pytest.raises(EvaluationError, match=said):
            call()


def test_registration_refuses_what_would_break_a_layer() -> None:
    for metric, said in [
        (Metric("pass@k", "again", credit=_spread_credit), "'pass@k' is taken"),
        (Metric("twice@k", "again", credit=_spread_credit, aliases=("mean",)), "'mean' is taken"),
        (Metric("g-pass@k", "ambiguous", credit=_spread_credit), "'g-pass@k' is taken"),
        (Metric("Spread@k", "upper case", credit=_spread_credit), "not in lower case"),
        (Metric("spread", "no k in the name", credit=_spread_credit), "writes it in its name as @k or ^k"),
        (Metric("spread@k", "no credit"), "needs its credit"),
        (Metric("post", "no estimator", needs_k=False, aggregation="posterior"), "needs its estimator"),
    ]:
        with pytest.raises(EvaluationError, match=f"cannot be registered: .*{re.escape(said)}"):
            register_metric(metric)
    assert "spread@k" not in METRICS and "twice@k" not in METRICS
    bad = register_metric(Metric("short@k", "a table one short", credit=lambda k, tau: ([0] * k, 1)))
    try:
        with pytest.raises(
            EvaluationError, match=r"short@k's credit at k=2 must be k \+ 1 integers .*\[0, 0\]"
        ):
            ts.item_scores([[1, 0, 1]], bad, 2)
    finally:
        unregister_metric("short@k")


def test_an_unknown_name_is_answered_with_the_nearest_everywhere(tmp_path: Path) -> None:
    for call in (
        lambda: ts.estimator_by_name("pass@q"),
        lambda: ts.state_scores([3], [1], "pass@q", 2),
        lambda: compare_paired([[1, 0]] * 2, [[1, 1]] * 2, "pass@q", 2),
        lambda: MetricSpec("pass@q"),
    ):
        with pytest.raises(EvaluationError, match=r"got 'pass@q' \(did you mean 'pass@k'\?\)"):
            call()
    with pytest.raises(EvaluationError, match=r"got 'pass_hat' \(did you mean 'pass\^k'\?\)"):
        resolve_metric("pass_hat")
    with pytest.raises(EvaluationError, match=r"got 'zzz'$"):
        resolve_metric("zzz")
    path = _write(tmp_path / "t.jsonl", _matrices())
    for command in (["score", str(path)], ["rank", str(path)], ["compare", str(path), str(path)]):
        result = CliRunner().invoke(app, [*command, "--by", "target", "--metric", "maj@kk", "--k", "2"])
        assert result.exit_code == 2 and "(did you mean 'maj@k'?)" in result.output, result.output
    with pytest.raises(EvaluationError, match=r"fail_under 'avgg=0\.5': .*\(did you mean 'avg'\?\)"):
        parse_threshold("avgg=0.5")


def test_bayes_is_refused_where_per_item_values_are_needed() -> None:
    with pytest.raises(EvaluationError, match=r"metric bayes has no per-item values .*: avg, pass@k"):
        ts.item_scores([[1, 0, 1]], "bayes")
    assert not METRICS["bayes"].per_item and METRICS["bayes"].intervals() == ("posterior",)
