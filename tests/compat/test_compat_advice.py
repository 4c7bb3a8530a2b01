"""Seed 002 advice: retry bands, the pass@k >> pass@1 insight, sample-size bands, as structured records."""

from __future__ import annotations

import json

import numpy as np
import pytest

import trialscore as ts
from trialscore import Bank, EvaluationError
from trialscore.compat.advice import (
    Advice,
    consistency_advice,
    insights,
    recommend_retry_strategy,
    sample_size_advice,
)
from trialscore.stats import item_interval, proportion_interval
from trialscore.stats._intervals import Interval


@pytest.mark.parametrize(
    ("pass_at_1", "code", "attempts"),
    [
        (1.0, "single_attempt", 1),
        (0.9, "single_attempt", 1),
        (0.8999, "retry_once", 2),
        (0.6, "retry_once", 2),
        (0.5999, "retry_then_escalate", 3),
        (0.3, "retry_then_escalate", 3),
        (0.2999, "change_approach", 1),
        (0.0, "change_approach", 1),
    ],
)
def test_retry_bands_of_seed_002(pass_at_1: float, code: str, attempts: int) -> None:
    advice = recommend_retry_strategy(pass_at_1)
    assert advice.code == code and advice.numbers["max_attempts"] == attempts
    assert advice.numbers["pass_at_1"] == pass_at_1
    assert advice.numbers["success_within_attempts"] == pytest.approx(1 - (1 - pass_at_1) ** attempts)
    assert advice.severity == ("warning" if code in {"retry_then_escalate", "change_approach"} else "info")
    assert "0.60 <= pass@1 < 0.90: retry_once" in advice.rule


def test_seed_002_examples_read_as_the_table_says() -> None:
    assert "auto-accept" in recommend_retry_strategy(0.9).message
    assert "modified prompt" in recommend_retry_strategy(0.6).message
    assert "escalate" in recommend_retry_strategy(0.3).message
    assert "fundamental change" in recommend_retry_strategy(0.1).message


@pytest.mark.parametrize("bad", [-0.1, 1.5, float("nan"), "0.5"])
def test_retry_rejects_a_rate_outside_0_1(bad: object) -> None:
    with pytest.raises(EvaluationError, match=r"pass_at_1 must be"):
        recommend_retry_strategy(bad)  # type: ignore[arg-type]


def test_consistency_gap_rule() -> None:
    flaky = consistency_advice(0.3, 0.832, 5)  # seed 002's table: pass@1 30%, pass@5 83.2%
    assert flaky.code == "inconsistent_agent" and flaky.severity == "warning"
    assert flaky.numbers["gap"] == pytest.approx(0.532) and flaky.numbers["k"] == 5
    assert "structured prompts" in flaky.message
    steady = consistency_advice(0.9, 0.95, 5)
    assert steady.code == "consistent_agent" and steady.numbers["gap"] == pytest.approx(0.05)
    assert consistency_advice(0.5, 0.7, 3).code == "inconsistent_agent"  # the gap 0.2 is on the line
    assert consistency_advice(0.5, 0.7, 3, min_gap=0.3).code == "consistent_agent"
    with pytest.raises(EvaluationError, match=r"pass_at_k must be >= pass_at_1 .* got 0.4 < 0.5"):
        consistency_advice(0.5, 0.4, 3)
    with pytest.raises(EvaluationError, match=r"k must be an integer >= 2; got k=1"):
        consistency_advice(0.5, 0.5, 1)


@pytest.mark.parametrize(
    ("samples", "code"),
    [
        (1, "report_range"),
        (9, "report_range"),
        (10, "report_interval"),
        (30, "report_interval"),
        (31, "reliable"),
    ],
)
def test_sample_size_bands(samples: int, code: str) -> None:
    advice = sample_size_advice(samples, successes=samples // 2)
    assert advice.code == code and advice.numbers["samples"] == samples
    wilson = proportion_interval(samples // 2, samples)
    assert (advice.numbers["low"], advice.numbers["high"]) == (wilson.low, wilson.high)
    assert advice.numbers["method"] == "wilson" and "n < 10: report_range" in advice.rule
    assert sample_size_advice(samples).numbers == {"samples": samples}


def test_advice_records_are_frozen_and_serialize() -> None:
    advice = sample_size_advice(8, successes=6)
    payload = json.loads(json.dumps(advice.to_dict()))
    assert payload["code"] == "report_range" and payload["numbers"]["samples"] == 8
    assert str(advice) == advice.message and "[40.9%, 92.9%]" in advice.message
    with pytest.raises(TypeError):
        advice.numbers["samples"] = 9  # type: ignore[index]
    with pytest.raises(AttributeError):
        advice.code = "reliable"  # type: ignore[misc]
    assert advice == Advice(advice.code, advice.severity, advice.message, dict(advice.numbers), advice.rule)


def test_insights_for_a_bank_with_several_trials_per_item() -> None:
    rng = np.random.default_rng(0)
    R = (rng.random((40, 5)) < rng.beta(1, 1, size=(40, 1))).astype(int)
    size, retry, consistency = insights(R)
    assert size.code == "reliable" and size.numbers["samples"] == 40
    interval = item_interval(R)
    assert (size.numbers["low"], size.numbers["high"]) == (interval.low, interval.high)
    bank = Bank.from_matrix(R)
    plain = recommend_retry_strategy(ts.avg(bank))
    assert retry.code == plain.code and retry.message.startswith(plain.message[:-1])
    assert consistency == consistency_advice(ts.avg(bank), ts.pass_at_k(R, 5), 5)
    assert insights(R, k=2)[2].numbers["k"] == 2


def test_insights_for_single_trials_and_a_single_item() -> None:
    one_trial = Bank.from_counts([1] * 12, [1] * 9 + [0] * 3)
    size, retry = insights(one_trial)
    assert size.code == "report_interval" and size.numbers["low"] == proportion_interval(9, 12).low
    assert retry.code == "retry_once"
    single = insights([[1, 0, 1, 1, 1, 0, 1]])
    assert single[0].code == "report_range" and single[0].numbers["samples"] == 7
    # the default interval of one item's 7 trials: Wilson's, with the Poisson bound at 2 failures
    assert single[0].numbers["high"] == item_interval([[1, 0, 1, 1, 1, 0, 1]]).high
    with pytest.raises(EvaluationError, match=r"k must satisfy 1 <= k <= n; got k=9 with n=7"):
        insights([[1, 0, 1, 1, 1, 0, 1]], k=9)


# --- the advice follows --level and --k and quotes the interval printed beside it ------------------------


def _score_json(path, *args: str) -> dict:
    from tests.cli_runner import CliRunner
    from trialscore.cli import app

    result = CliRunner().invoke(app, ["score", str(path), *args, "-f", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)["groups"][0]


def _write_matrix(path, matrix) -> None:
    lines = ["case_id,trial,passed"]
    lines += [f"q{i},{t},{v}" for i, row in enumerate(matrix) for t, v in enumerate(row)]
    path.write_text("\n".join(lines) + "\n")


def test_score_advice_quotes_the_printed_interval_at_the_asked_level_and_k(tmp_path) -> None:
    rng = np.random.default_rng(4)
    path = tmp_path / "runs.csv"
    _write_matrix(path, (rng.random((20, 6)) < rng.random((20, 1))).astype(int))
    group = _score_json(path, "--level", "0.9", "--k", "1,3")
    pass_1 = next(m for m in group["metrics"] if m["label"] == "pass@1")["interval"]
    size, _, consistency = group["advice"]
    assert size["code"] == "report_interval" and size["numbers"]["level"] == 0.9
    assert (size["numbers"]["low"], size["numbers"]["high"]) == (pass_1["low"], pass_1["high"])
    assert "90% interval" in size["message"] and "95%" not in size["message"]
    assert f"[{100 * pass_1['low']:.3g}%, {100 * pass_1['high']:.3g}%]" in size["message"]
    assert "at its level" in size["rule"]
    assert consistency["numbers"]["k"] == 3 and consistency["message"].startswith("pass@3 ")
    only_one = _score_json(path, "--k", "1")
    assert [advice["code"] for advice in only_one["advice"]][2:] == []  # no pass@6 when k = 1 was asked


def test_advice_never_quotes_a_zero_width_range(tmp_path) -> None:
    # One item solved 5 of 5: score's interval is Wilson's of its trials, never [1, 1]; the advice
    # quotes that interval and never a zero-width range.
    path = tmp_path / "one.csv"
    _write_matrix(path, [[1, 1, 1, 1, 1]])
    group = _score_json(path, "--ci", "bootstrap", "--resamples", "200")
    (metric,) = [m for m in group["metrics"] if m["label"] == "pass@1"]
    low, high = metric["interval"]["low"], metric["interval"]["high"]
    assert low < high == 1.0
    message = group["advice"][0]["message"]
    assert "[100%, 100%]" not in message and "44" not in message and f"{low * 100:.3g}%" in message
    assert "seed 002" not in " ".join(advice["message"] + advice["rule"] for advice in group["advice"])
    zero = insights([[1, 1, 1, 1, 1]], interval=Interval(1.0, 1.0, 1.0, 0.95, "t", 1))
    assert "zero width" in zero[0].message and "[100%, 100%]" not in zero[0].message


def test_insights_takes_the_given_interval_and_k_one_leaves_consistency_out() -> None:
    given = proportion_interval(3, 4, 0.8, "jeffreys")
    size, retry = insights([[1, 1, 0, 1]], k=1, interval=given)
    assert (size.numbers["low"], size.numbers["high"], size.numbers["level"]) == (given.low, given.high, 0.8)
    assert "80% interval" in size.message and retry.code == "retry_once"


def test_retry_advice_is_hedged_when_its_interval_reaches_another_band() -> None:
    few = insights([[1, 1, 1]] * 3, k=1)[1]
    assert few.code == "single_attempt" and few.severity == "warning"
    assert "run more cases before relying on it" in few.message and "90%" in few.message
    many = insights([[1] * 5] * 200 + [[0] * 5] * 2, k=1)[1]
    assert many.code == "single_attempt" and "run more cases" not in many.message


def test_a_gap_below_the_mark_is_not_called_close() -> None:
    assert "is close to" in consistency_advice(0.8, 0.82, 5).message
    nineteen = consistency_advice(0.6, 0.79, 5)
    assert nineteen.code == "consistent_agent" and "19 points above" in nineteen.message
    assert "close" not in nineteen.message
