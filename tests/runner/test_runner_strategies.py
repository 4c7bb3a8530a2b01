"""Strategies aggregate a case's trials exactly as seed 003 says; errored trials are not failed trials."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from trialscore.errors import EvaluationError
from trialscore.results.records import GraderResult, TrialRecord
from trialscore.runner.strategies import aggregate
from trialscore.runner.suite import CaseSettings
from trialscore.stats import bounded_mean_interval


def settings(strategy: str = "pass_at_k", trials: int = 3, threshold=None, borderline=None) -> CaseSettings:
    return CaseSettings(trials, strategy, None, 60.0, 2, 0.5, threshold, borderline)


def trial(i: int, score: float | None, verdict: str, cost: float | None = 0.01) -> TrialRecord:
    passed = None if verdict == "error" else verdict == "pass"
    graders = () if score is None else (GraderResult(name="g", score=score, passed=bool(passed)),)
    return TrialRecord(
        case_id="case-1",
        trial=i,
        score=score,
        verdict=verdict,
        passed=passed,
        cost_usd=cost,
        grader_results=graders,
    )


def test_seed_003_pass_at_k_example_shape() -> None:
    records = [trial(0, 0.6, "borderline"), trial(1, 0.9, "pass"), trial(2, 0.7, "borderline")]
    result = aggregate(
        records, settings("pass_at_k", threshold=0.8, borderline=0.6), "case-1", "agent", "math"
    )
    record = result.to_dict()
    assert record["eval_id"] == "case-1" and record["verdict"] == "pass" and record["score"] == 0.9
    assert record["trials"] == [
        {"attempt": 0, "score": 0.6, "verdict": "borderline", "cost_usd": 0.01},
        {"attempt": 1, "score": 0.9, "verdict": "pass", "cost_usd": 0.01},
        {"attempt": 2, "score": 0.7, "verdict": "borderline", "cost_usd": 0.01},
    ]
    assert record["aggregation"] == {"strategy": "pass_at_k", "passed_attempts": 1, "total_attempts": 3}
    assert record["cost_usd"] == pytest.approx(0.03, abs=1e-15)
    assert "cost_limited" not in record


def test_all_trials_failing_is_fail_not_borderline_for_every_strategy() -> None:
    records = [trial(0, 0.7, "borderline"), trial(1, 0.75, "borderline"), trial(2, 0.65, "borderline")]
    for strategy in ("pass_at_k", "pass_all", "mean"):
        result = aggregate(records, settings(strategy, threshold=0.8, borderline=0.6), "case-1", "a")
        assert result.verdict == "fail", strategy
        assert result.passed_attempts == 0
    # confidence_interval reads its verdict off its interval alone: 3 scores around 0.7 cannot rule
    # out a mean of 0.8 (the t interval says the same: [0.576, 0.824]); 10 failed 0/1 trials can.
    ci = aggregate(records, settings("confidence_interval", threshold=0.8), "case-1", "a")
    assert ci.verdict == "borderline" and ci.ci95.low < 0.8 <= ci.ci95.high
    zeros = [trial(i, 0.0, "fail") for i in range(10)]
    assert aggregate(zeros, settings("confidence_interval", 10, threshold=0.8), "c", "a").verdict == "fail"


def test_pass_all_needs_every_trial() -> None:
    records = [trial(0, 1.0, "pass"), trial(1, 0.0, "fail"), trial(2, 1.0, "pass")]
    result = aggregate(records, settings("pass_all"), "case-1", "a")
    assert (result.verdict, result.score) == ("fail", 0.0)
    every = aggregate([trial(0, 1.0, "pass"), trial(1, 0.9, "pass")], settings("pass_all", 2), "case-1", "a")
    assert (every.verdict, every.score) == ("pass", 0.9)


def test_mean_strategy_score_and_bands() -> None:
    records = [trial(0, 1.0, "pass"), trial(1, 0.5, "fail"), trial(2, 0.25, "fail")]
    expected = float((Fraction(1) + Fraction(1, 2) + Fraction(1, 4)) / 3)
    result = aggregate(records, settings("mean", threshold=0.5, borderline=0.3), "case-1", "a")
    assert result.score == expected and result.verdict == "pass"
    assert (
        aggregate(records, settings("mean", threshold=0.6, borderline=0.5), "c", "a").verdict == "borderline"
    )
    assert aggregate(records, settings("mean", threshold=0.9, borderline=0.7), "c", "a").verdict == "fail"


def test_mean_without_threshold_is_refused() -> None:
    with pytest.raises(EvaluationError, match=r"strategy 'mean' needs a threshold .*; got None"):
        aggregate([trial(0, 1.0, "pass")], settings("mean"), "c", "a")


def test_confidence_interval_of_0_1_trials_is_wilson_of_the_trials() -> None:
    records = [trial(i, 1.0, "pass") for i in range(5)]
    result = aggregate(records, settings("confidence_interval", 5, threshold=0.8), "c", "a")
    assert (result.ci95.low, result.ci95.high) == pytest.approx((5 / (5 + 1.959963984540054**2), 1.0))
    assert result.verdict == "borderline" and result.ci95.method == "wilson-eff"
    assert result.to_dict()["ci95"] == [result.ci95.low, result.ci95.high]


@pytest.mark.parametrize("n", [5, 29, 40])
def test_confidence_interval_of_continuous_scores_is_the_bounded_mean_interval(n: int) -> None:
    rng = np.random.default_rng(n)
    scores = np.round(rng.uniform(0.3, 1.0, n), 3)
    records = [trial(i, float(s), "pass" if s >= 0.5 else "fail") for i, s in enumerate(scores)]
    result = aggregate(records, settings("confidence_interval", n, threshold=0.5), "c", "a")
    assert result.score == pytest.approx(scores.mean(), rel=1e-12)
    # From the case's histogram of scores (kept as trials come): the list's interval up to rounding.
    expected = bounded_mean_interval(scores.tolist())
    assert result.ci95.method == expected.method and result.ci95.level == expected.level
    for name in ("estimate", "low", "high", "n_effective"):
        assert getattr(result.ci95, name) == pytest.approx(getattr(expected, name), rel=1e-12, abs=1e-15)
    if n >= 30:  # with many trials it is the t interval in Wilson's form: nearly the same width
        low, high = stats.t.interval(0.95, n - 1, loc=scores.mean(), scale=stats.sem(scores))
        assert result.ci95.width == pytest.approx(high - low, rel=0.05)


@pytest.mark.slow
def test_confidence_interval_covers_continuous_scores() -> None:
    """Seeded: per-trial scores ~ Beta(a, b); the interval covers a/(a+b) at least 94% of the time."""
    rng = np.random.default_rng(2026)
    for a, b in [(8, 2), (2, 2), (0.5, 0.5), (3, 1)]:
        for n in (3, 5, 10, 30):
            draws = rng.beta(a, b, (2000, n))
            covered = [bounded_mean_interval(row).contains(a / (a + b)) for row in draws]
            assert np.mean(covered) >= 0.94, (a, b, n)


def test_confidence_interval_of_equal_scores_is_not_a_point() -> None:
    records = [trial(i, 0.9, "pass") for i in range(4)]
    result = aggregate(records, settings("confidence_interval", 4, threshold=0.8), "c", "a")
    assert result.ci95.low < 0.8 < 0.9 < result.ci95.high < 1.0 and result.verdict == "borderline"
    assert result.ci95.n_effective == 16


def test_confidence_interval_false_pass_rate_is_below_its_level() -> None:
    # A case whose true pass rate is 0.7, threshold 0.8: exact probability of a `pass` verdict.
    for n in (3, 5, 10, 30):
        false_pass = 0.0
        for passes in range(n + 1):
            records = [
                trial(i, 1.0 if i < passes else 0.0, "pass" if i < passes else "fail") for i in range(n)
            ]
            if (
                aggregate(records, settings("confidence_interval", n, threshold=0.8), "c", "a").verdict
                == "pass"
            ):
                false_pass += stats.binom.pmf(passes, n, 0.7)
        assert false_pass <= 0.025, n


def test_confidence_interval_verdict_uses_the_whole_interval() -> None:
    tight_high = [trial(i, s, "pass") for i, s in enumerate([0.9, 0.92, 0.91, 0.93] * 3)]
    assert (
        aggregate(tight_high, settings("confidence_interval", 12, threshold=0.8), "c", "a").verdict == "pass"
    )
    wide = [trial(0, 1.0, "pass"), trial(1, 0.2, "fail"), trial(2, 0.9, "pass"), trial(3, 0.3, "fail")]
    assert (
        aggregate(wide, settings("confidence_interval", 4, threshold=0.6), "c", "a").verdict == "borderline"
    )
    low = [trial(0, 0.52, "pass"), trial(1, 0.1, "fail"), trial(2, 0.12, "fail"), trial(3, 0.11, "fail")]
    assert aggregate(low, settings("confidence_interval", 4, threshold=0.9), "c", "a").verdict == "fail"


def test_errored_trials_are_listed_but_not_counted() -> None:
    records = [trial(0, 1.0, "pass"), trial(1, None, "error", cost=None), trial(2, 0.0, "fail")]
    result = aggregate(records, settings("pass_at_k"), "c", "a")
    assert (result.passed_attempts, result.total_attempts, result.errored_attempts) == (1, 2, 1)
    assert [t["verdict"] for t in result.to_dict()["trials"]] == ["pass", "error", "fail"]
    assert result.cost_usd == 0.02 and result.to_dict()["unknown_cost_attempts"] == 1  # a lower bound
    metrics = result.to_dict()["metrics"]
    assert metrics["k"] == 2 and metrics["per_trial_pass_rate"] == 0.5


def test_no_scored_trial_gives_error_or_skipped() -> None:
    errored = aggregate([trial(0, None, "error"), trial(1, None, "error")], settings(), "c", "a")
    assert (errored.verdict, errored.score) == ("error", None)
    skipped = aggregate([], settings(), "c", "a", cost_limited=True)
    assert (skipped.verdict, skipped.score, skipped.to_dict()["cost_limited"]) == ("skipped", None, True)


def test_single_trial_is_the_plain_record() -> None:
    result = aggregate([trial(0, 0.8, "pass")], settings("pass_at_k", trials=1), "case-1", "agent", "math")
    assert result.to_dict() == {
        "eval_id": "case-1",
        "target": "agent",
        "category": "math",
        "score": 0.8,
        "verdict": "pass",
        "cost_usd": 0.01,
    }


def test_multi_trial_metrics_match_exact_arithmetic() -> None:
    flags = [True, False, True, True, False, True, False]
    records = [trial(i, 1.0 if f else 0.0, "pass" if f else "fail") for i, f in enumerate(flags)]
    result = aggregate(records, settings("pass_at_k", trials=7), "c", "a")
    metrics = result.to_dict()["metrics"]
    n, c, k = 7, 4, 7
    assert metrics["pass_at_k"] == 1 - math.comb(n - c, k) / math.comb(n, k)
    assert metrics["pass_to_the_k"] == pytest.approx(float(Fraction(c, n) ** k), rel=1e-14)
    assert metrics["flaky"] is True
    assert metrics["flakiness_percent"] == pytest.approx(100 * 3 / 7, rel=1e-14)
