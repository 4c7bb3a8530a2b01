"""pass^k with its conventions stated, and tau2-bench#497's two published numbers from result files.

tau2-bench documents two treatments of trials it cannot evaluate: its ``compute_metrics``
(src/tau2/metrics/agent_metrics.py, and the CHANGELOG: infrastructure errors "excluded from
pass^k") drops them, so a task whose every trial errored leaves the mean; its leaderboard (the
v1.0.1 release notes) counts them "as failed trials".  The release notes publish, for the same
trajectories, grok-4-1-fast's pass^4 as 5.21 before and 5.15 after that alignment, and
gemini-2-5-pro's as 1.08 and 1.03, "the sub-0.1-point pass^4 dips ... come from that convention
alignment, not from any score flip".  5/96 = 5.21% and 5/97 = 5.15%; 1/93 = 1.08% and 1/97 =
1.03%: 97 banking tasks of 4 trials, 5 (or 1) always solved, 1 (or 4) whose every trial was an
infrastructure error.  The fixtures below are tau2-bench ``Results`` files with those counts
(written by tests/results/fixtures/tau-bench/make_fixtures.py's builders, in tau2-bench's own
format), read by trialscore's tau2-bench reader: the original trajectory files are not here, so
the fixtures carry counts consistent with the published figures, not the models' transcripts.
"""

from __future__ import annotations

import json
from fractions import Fraction
from math import comb
from pathlib import Path

import numpy as np
import pytest

from tests.results._tau import tau2_497_file, tau_fixtures
from trialscore.compat.scoring import pass_to_the_k
from trialscore.errors import EvaluationError, InsufficientDataError
from trialscore.results import read_counts
from trialscore.results.counts import GroupCounts
from trialscore.stats import pass_hat_k_stated


def group(path: Path, errors: str) -> GroupCounts:
    (only,) = read_counts([path], errors=errors).groups()  # type: ignore[arg-type]
    return only


@pytest.mark.parametrize(
    ("model", "solved", "all_errored", "excluded", "failed"),
    [("grok-4-1-fast", 5, 1, "5.21", "5.15"), ("gemini-2-5-pro", 1, 4, "1.08", "1.03")],
)
def test_tau2_bench_497_both_published_numbers(
    tmp_path: Path, model: str, solved: int, all_errored: int, excluded: str, failed: str
) -> None:
    path = tau2_497_file(tmp_path, model, solved, all_errored)
    dropped = pass_hat_k_stated(group(path, "exclude"), 4)
    counted = pass_hat_k_stated(group(path, "fail"), 4)
    assert f"{100 * dropped.value:.2f}" == excluded
    assert f"{100 * counted.value:.2f}" == failed
    assert Fraction(dropped.value).limit_denominator(1000) == Fraction(solved, 97 - all_errored)
    assert Fraction(counted.value).limit_denominator(1000) == Fraction(solved, 97)
    assert dropped.items == 97 - all_errored and dropped.items_all_errored == all_errored
    assert counted.items == 97 and counted.errored_trials == 4 * all_errored
    assert "left out of n" in str(dropped) and "counted as failed trials" in str(counted)
    assert "unbiased C(c,k)/C(n,k)" in str(counted)


def test_plugin_convention_on_the_same_file_gives_a_third_number(tmp_path: Path) -> None:
    path = tau2_497_file(tmp_path, "grok-4-1-fast", 5, 1)
    plugin = pass_hat_k_stated(group(path, "fail"), 4, "plugin")
    # (2/4)^4 = 1/16 for each of the 91 flaky tasks, where C(2,4)/C(4,4) = 0
    assert plugin.value == pytest.approx((5 + 91 / 16) / 97)
    assert plugin.estimator == "plugin" and "(c/n)^k" in str(plugin)


def test_tau_bench_display_metrics_is_the_fail_convention(tmp_path: Path) -> None:
    """tau-bench's run.py scores a run that raised 0 and divides by the number of trials."""
    rewards = {0: [1.0, 1.0, 1.0], 1: [1.0, None, 1.0], 2: [0.0, 1.0, 1.0], 3: [None, None, None]}
    path = tmp_path / "tool-calling-gpt-4o-0.0_range_0-4_user-gpt-4o-llm_1122203000.json"
    path.write_text(json.dumps(tau_fixtures().tau_bench_run(rewards)))
    c = [sum(1 for r in runs if r == 1.0) for runs in rewards.values()]
    for k in (1, 2, 3):
        display = sum(Fraction(comb(ci, k), comb(3, k)) for ci in c) / len(c)
        assert pass_hat_k_stated(group(path, "fail"), k).value == pytest.approx(float(display), rel=1e-12)
    excluded = pass_hat_k_stated(group(path, "exclude"), 2)  # task 1 has 2 graded trials left, task 3 none
    assert excluded.value == pytest.approx((1 + 1 + Fraction(1, 3)) / 3)
    with pytest.raises(
        InsufficientDataError, match="k <= n for every item; got k=3 with an item of 2 trials"
    ):
        pass_hat_k_stated(group(path, "exclude"), 3)


def test_estimators_agree_with_exact_arithmetic() -> None:
    rng = np.random.default_rng(4)
    n = rng.integers(3, 9, 30)
    c = rng.integers(0, n + 1)
    counts = GroupCounts((), np.arange(30).astype(object), n, c, np.zeros(30, dtype=np.int64))
    for k in (1, 2, 3):
        unbiased = sum(Fraction(comb(ci, k), comb(ni, k)) for ni, ci in zip(n, c, strict=True)) / 30
        plugin = sum(Fraction(int(ci), int(ni)) ** k for ni, ci in zip(n, c, strict=True)) / 30
        assert pass_hat_k_stated(counts, k).value == pytest.approx(float(unbiased), rel=1e-13)
        assert pass_hat_k_stated(counts, k, "plug-in").value == pytest.approx(float(plugin), rel=1e-13)
    assert pass_hat_k_stated(counts, 1).value == pytest.approx(pass_to_the_k(float(np.mean(c / n)), 1))
    assert pass_hat_k_stated(counts, 20, "plugin").k == 20  # the plug-in is defined for k > n
    with pytest.raises(EvaluationError, match="estimator must be one of plugin, unbiased"):
        pass_hat_k_stated(counts, 2, "biased")


def test_plugin_interval_is_the_item_interval_of_the_plugin_values() -> None:
    from trialscore import Bank
    from trialscore.stats import bounded_mean_interval
    from trialscore.stats._conventions import plugin_interval

    bank = Bank.from_counts([4, 4, 3, 5, 4], [2, 4, 1, 5, 3])
    interval = plugin_interval(bank, 3)
    exact = sum(Fraction(c, n) ** 3 for n, c in zip([4, 4, 3, 5, 4], [2, 4, 1, 5, 3], strict=True)) / 5
    assert interval.estimate == pytest.approx(float(exact), rel=1e-13)
    ceiling = 25 / (3 * (1 / 4 + 1 / 4 + 1 / 3 + 1 / 5 + 1 / 4))
    values = [(c / n) ** 3 for n, c in zip([4, 4, 3, 5, 4], [2, 4, 1, 5, 3], strict=True)]
    assert interval == bounded_mean_interval(values, max_n=max(ceiling, 5.0))
    saturated = plugin_interval(Bank.from_counts([3] * 20, [3] * 20), 2)
    assert saturated.estimate == 1.0 and saturated.low < 1.0  # never zero width on finitely many trials


def test_convention_states_the_estimator_and_the_errors() -> None:
    from trialscore.stats._conventions import convention, convention_line

    assert convention("plug-in", "fail") == {
        "estimator": "plugin",
        "formula": "plug-in (c/n)^k per item (seed 000's passToTheK), mean over items",
        "errors": "fail",
        "errored_trials": "errored trials counted as failed trials",
    }
    assert convention_line().startswith("pass^k: unbiased C(c,k)/C(n,k) per item")
    with pytest.raises(EvaluationError, match="errors must be 'exclude' or 'fail'"):
        convention("unbiased", "drop")
