"""Seed 001's PassAtK / PassHatK: exact oracles, the seed's examples, properties and every validation rule."""

from __future__ import annotations

import itertools
import json
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import trialscore.errors
from trialscore.compat.multi_sample import (
    K_VALUE,
    NO_OF_TRIALS,
    EvaluationError,
    MultiSampleMetric,
    NumericalScore,
    PassAtK,
    PassHatK,
)


def scores(flags: list[int]) -> list[NumericalScore]:
    return [NumericalScore(score=flag) for flag in flags]


def exact_at(n: int, s: int, k: int) -> Fraction:
    return 1 - Fraction(math.comb(n - s, k), math.comb(n, k))


def exact_hat(n: int, s: int, k: int) -> Fraction:
    return Fraction(math.comb(s, k), math.comb(n, k))


def rel_err(got: float, want: Fraction) -> float:
    return float(abs(Fraction(got) - want) / max(abs(want), Fraction(1, 10**300)))


def test_constants_and_error_type() -> None:
    assert K_VALUE == "k_value"
    assert NO_OF_TRIALS == "num_trials"
    assert EvaluationError is trialscore.errors.EvaluationError
    assert issubclass(EvaluationError, ValueError)


def test_seed_pass_at_k_example() -> None:
    # Seed 001: PassAtK(k=2, n=5) on [1, 0, 1, 0, 0]; exactly 1 - C(3,2)/C(5,2) = 7/10.
    result = PassAtK(config={K_VALUE: 2, NO_OF_TRIALS: 5}).compute(scores([1, 0, 1, 0, 0]))
    assert exact_at(5, 2, 2) == Fraction(7, 10)
    assert rel_err(result.score, Fraction(7, 10)) <= 1e-15
    assert "n=5" in result.explanation and "s=2" in result.explanation and "k=2" in result.explanation


def test_seed_pass_hat_k_example() -> None:
    # Seed 001: PassHatK(k=2, n=5) on [1, 1, 0, 0, 0]; exactly C(2,2)/C(5,2) = 1/10.
    result = PassHatK(config={K_VALUE: 2, NO_OF_TRIALS: 5}).compute(scores([1, 1, 0, 0, 0]))
    assert exact_hat(5, 2, 2) == Fraction(1, 10)
    assert rel_err(result.score, Fraction(1, 10)) <= 1e-15


def test_pass_hat_k_is_all_k_not_exactly_k_of_n() -> None:
    # Seed 001's prose says "exactly k"; its formula C(s,k)/C(n,k) is "all k drawn pass".  With s = 3,
    # n = 5, k = 2, "all 2 drawn pass" is 3/10 while "exactly 2 of the 5 trials pass" would be 0.
    result = PassHatK(config={K_VALUE: 2, NO_OF_TRIALS: 5}).compute(scores([1, 1, 1, 0, 0]))
    assert rel_err(result.score, Fraction(3, 10)) <= 1e-15


def test_every_k_small_n_matches_exact() -> None:
    for n in range(1, 13):
        for s in range(n + 1):
            flags = [1] * s + [0] * (n - s)
            for k in range(1, n + 1):
                config = {K_VALUE: k, NO_OF_TRIALS: n}
                at = PassAtK(config).compute(scores(flags)).score
                hat = PassHatK(config).compute(scores(flags)).score
                assert rel_err(at, exact_at(n, s, k)) <= 1e-13, (n, s, k)
                assert rel_err(hat, exact_hat(n, s, k)) <= 1e-13, (n, s, k)


@pytest.mark.slow
@settings(max_examples=25, deadline=None)
@given(st.data())
def test_large_n_matches_exact(data: st.DataObject) -> None:
    n = data.draw(st.integers(1, 12_000))
    s = data.draw(st.integers(0, n))
    k = data.draw(st.integers(1, n))
    flags = [1] * s + [0] * (n - s)
    config = {K_VALUE: k, NO_OF_TRIALS: n}
    at = PassAtK(config).compute(scores(flags)).score
    hat = PassHatK(config).compute(scores(flags)).score
    assert 0.0 <= hat <= at <= 1.0
    assert rel_err(at, exact_at(n, s, k)) <= 1e-12
    assert rel_err(hat, exact_hat(n, s, k)) <= 1e-12


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from([0, 1]), min_size=1, max_size=30))
def test_monotone_in_k_and_order_free(flags: list[int]) -> None:
    n = len(flags)
    at = [PassAtK({K_VALUE: k, NO_OF_TRIALS: n}).compute(scores(flags)).score for k in range(1, n + 1)]
    hat = [PassHatK({K_VALUE: k, NO_OF_TRIALS: n}).compute(scores(flags)).score for k in range(1, n + 1)]
    assert all(a <= b + 1e-15 for a, b in itertools.pairwise(at))
    assert all(a >= b - 1e-15 for a, b in itertools.pairwise(hat))
    assert at[0] == pytest.approx(sum(flags) / n, rel=1e-15) and hat[0] == pytest.approx(at[0], rel=1e-15)
    reordered = PassAtK({K_VALUE: 1, NO_OF_TRIALS: n}).compute(scores(sorted(flags)))
    assert reordered.score == at[0]


def test_num_trials_defaults_to_number_of_results() -> None:
    with_n = PassAtK({K_VALUE: 2, NO_OF_TRIALS: 4}).compute(scores([1, 0, 0, 0]))
    without_n = PassAtK({K_VALUE: 2}).compute(scores([1, 0, 0, 0]))
    assert with_n == without_n
    assert rel_err(without_n.score, exact_at(4, 1, 2)) <= 1e-15


def test_accepts_numpy_integers_and_float_flags() -> None:
    result = PassHatK({K_VALUE: np.int64(2), NO_OF_TRIALS: np.int32(3)}).compute(scores([1.0, 1.0, 0.0]))
    assert rel_err(result.score, Fraction(1, 3)) <= 1e-15


FIVE = [1, 0, 1, 0, 0]


@pytest.mark.parametrize("metric", [PassAtK, PassHatK])
@pytest.mark.parametrize(
    ("config", "flags", "message"),
    [
        (None, FIVE, r"k_value must be set in the config \(config\[K_VALUE\]\) before evaluation"),
        ({NO_OF_TRIALS: 5}, FIVE, r"k_value must be set in the config"),
        ({K_VALUE: None, NO_OF_TRIALS: 5}, FIVE, r"k_value must be set in the config"),
        ({K_VALUE: 0, NO_OF_TRIALS: 5}, FIVE, r"k_value must be an integer >= 1; got k_value=0"),
        ({K_VALUE: -2, NO_OF_TRIALS: 5}, FIVE, r"k_value must be an integer >= 1; got k_value=-2"),
        ({K_VALUE: 2, NO_OF_TRIALS: 0}, [], r"num_trials must be an integer >= 1; got num_trials=0"),
        ({K_VALUE: 2, NO_OF_TRIALS: -1}, FIVE, r"num_trials must be an integer >= 1; got num_trials=-1"),
        (
            {K_VALUE: 2, NO_OF_TRIALS: 6},
            FIVE,
            r"scorer_results must hold exactly num_trials=6 results; got 5",
        ),
        (
            {K_VALUE: 2, NO_OF_TRIALS: 4},
            FIVE,
            r"scorer_results must hold exactly num_trials=4 results; got 5",
        ),
        (
            {K_VALUE: 6, NO_OF_TRIALS: 5},
            FIVE,
            r"k_value must be <= num_trials; got k_value=6 with num_trials=5",
        ),
        ({K_VALUE: 6}, FIVE, r"k_value must be <= num_trials; got k_value=6 with num_trials=5"),
        ({K_VALUE: 2.0, NO_OF_TRIALS: 5}, FIVE, r"k_value must be an integer >= 1; got 2\.0 \(float\)"),
        ({K_VALUE: True, NO_OF_TRIALS: 5}, FIVE, r"k_value must be an integer >= 1; got True \(bool\)"),
        ({K_VALUE: "2", NO_OF_TRIALS: 5}, FIVE, r"k_value must be an integer >= 1; got '2' \(str\)"),
        ({K_VALUE: 2, NO_OF_TRIALS: 5.0}, FIVE, r"num_trials must be an integer >= 1; got 5\.0 \(float\)"),
        ({K_VALUE: 1, NO_OF_TRIALS: True}, [1], r"num_trials must be an integer >= 1; got True \(bool\)"),
        ({K_VALUE: 2}, [], r"scorer_results must hold at least one NumericalScore; got none"),
        ({K_VALUE: 1, NO_OF_TRIALS: 3}, [1, 0.5, 0], r"scorer_results\[1\]\.score must be 0 or 1 .*got 0\.5"),
        ({K_VALUE: 1, NO_OF_TRIALS: 2}, [1, 2], r"scorer_results\[1\]\.score must be 0 or 1 .*got 2\.0"),
        ({K_VALUE: 1, NO_OF_TRIALS: 2}, [-1, 0], r"scorer_results\[0\]\.score must be 0 or 1 .*got -1\.0"),
    ],
)
def test_validation_rules(
    metric: type[MultiSampleMetric], config: object, flags: list[float], message: str
) -> None:
    with pytest.raises(EvaluationError, match=message):
        metric(config).compute(scores(flags))


@pytest.mark.parametrize("metric", [PassAtK, PassHatK])
def test_results_must_be_numerical_scores(metric: type[MultiSampleMetric]) -> None:
    with pytest.raises(EvaluationError, match=r"scorer_results\[1\] must be a NumericalScore; got 1 \(int\)"):
        metric({K_VALUE: 1}).compute([NumericalScore(score=1), 1])
    with pytest.raises(EvaluationError, match=r"scorer_results must be a list of NumericalScore; got '10'"):
        metric({K_VALUE: 1}).compute("10")  # type: ignore[arg-type]


def test_nan_and_bool_scores_are_rejected_at_the_record() -> None:
    # A NaN score never reaches compute: NumericalScore refuses it, as it refuses bools and strings.
    with pytest.raises(EvaluationError, match=r"score must be a finite real number; got score=nan"):
        NumericalScore(score=float("nan"))
    with pytest.raises(EvaluationError, match=r"score must be a finite real number; got score=inf"):
        NumericalScore(score=math.inf)
    with pytest.raises(EvaluationError, match=r"score must be a finite real number; got True \(bool\)"):
        NumericalScore(score=True)
    with pytest.raises(EvaluationError, match=r"score must be a finite real number; got '1' \(str\)"):
        NumericalScore(score="1")  # type: ignore[arg-type]
    with pytest.raises(EvaluationError, match=r"explanation must be a string or None; got 3"):
        NumericalScore(score=1, explanation=3)  # type: ignore[arg-type]


def test_config_must_be_a_mapping_and_is_copied_read_only() -> None:
    with pytest.raises(EvaluationError, match=r"config must be a mapping or None; got \[2, 5\]"):
        PassAtK([2, 5])  # type: ignore[arg-type]
    config = {K_VALUE: 2, NO_OF_TRIALS: 5}
    metric = PassAtK(config)
    config[K_VALUE] = 9
    assert metric.config[K_VALUE] == 2
    with pytest.raises(TypeError):
        metric.config[K_VALUE] = 3  # type: ignore[index]


def test_multi_sample_metric_is_abstract_and_extensible() -> None:
    with pytest.raises(TypeError):
        MultiSampleMetric()  # type: ignore[abstract]

    class MeanScore(MultiSampleMetric):
        def compute(self, scorer_results: list[NumericalScore]) -> NumericalScore:
            return NumericalScore(score=sum(r.score for r in scorer_results) / len(scorer_results))

    assert MeanScore().compute(scores([1, 0, 0, 0])).score == 0.25


def test_numerical_score_record_round_trips_json() -> None:
    result = PassAtK({K_VALUE: 2, NO_OF_TRIALS: 5}).compute(scores(FIVE))
    data = json.loads(json.dumps(result.to_dict()))
    assert set(data) == {"score", "explanation"}
    assert NumericalScore(**data) == result
    with pytest.raises(AttributeError):
        result.score = 0.0  # type: ignore[misc]


def test_unknown_config_keys_are_errors_and_no_of_trials_is_an_alias() -> None:
    from trialscore.compat.multi_sample import PassAtK

    assert dict(PassAtK(config={"k_value": 2, "no_of_trials": 3}).config) == {"k_value": 2, "num_trials": 3}
    with pytest.raises(EvaluationError, match="got unknown 'trials'"):
        PassAtK(config={"k_value": 2, "trials": 3})
    with pytest.raises(EvaluationError, match="give one"):
        PassAtK(config={"k_value": 2, "num_trials": 3, "no_of_trials": 4})
