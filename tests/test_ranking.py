"""Ranks from scores (seed 004) and ranking models by an estimator."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import rankdata

from trialscore.core import estimators
from trialscore.core.bank import Bank
from trialscore.errors import EvaluationError
from trialscore.ranking import (
    RANK_METHODS,
    average_ranks_from_scores,
    competition_ranks_from_scores,
    dense_ranks_from_scores,
    rank_models,
)

RANKERS = {
    "competition": (competition_ranks_from_scores, "min"),
    "dense": (dense_ranks_from_scores, "dense"),
    "average": (average_ranks_from_scores, "average"),
}

SEED_SCORES = [0.95, 0.87, 0.87, 0.72, 0.65]


# --- ranks from scores -------------------------------------------------------------------------


def test_seed_004_example_competition_ranks() -> None:
    ranks = competition_ranks_from_scores(SEED_SCORES)
    assert ranks.tolist() == [1, 2, 2, 4, 5]
    assert ranks.dtype == np.int64


def test_dense_and_average_variants_on_the_seed_example() -> None:
    assert dense_ranks_from_scores(SEED_SCORES).tolist() == [1, 2, 2, 3, 4]
    assert average_ranks_from_scores(SEED_SCORES).tolist() == [1.0, 2.5, 2.5, 4.0, 5.0]


def test_ranks_follow_models_in_input_order_not_sorted_order() -> None:
    scores = [0.2, 0.9, 0.5, 0.9]
    assert competition_ranks_from_scores(scores).tolist() == [4, 1, 3, 1]
    assert dense_ranks_from_scores(scores).tolist() == [3, 1, 2, 1]
    assert average_ranks_from_scores(scores).tolist() == [4.0, 1.5, 3.0, 1.5]


def test_all_tied_and_single_model() -> None:
    assert competition_ranks_from_scores([0.5] * 4).tolist() == [1, 1, 1, 1]
    assert dense_ranks_from_scores([0.5] * 4).tolist() == [1, 1, 1, 1]
    assert average_ranks_from_scores([0.5] * 4).tolist() == [2.5] * 4
    assert competition_ranks_from_scores([0.3]).tolist() == [1]


def test_integer_scores_are_accepted() -> None:
    assert competition_ranks_from_scores(np.array([3, 7, 7, 1])).tolist() == [3, 1, 1, 4]


def test_default_tolerance_absorbs_rounding_but_zero_tolerance_does_not() -> None:
    scores = [0.1 + 0.2, 0.3, 0.2]  # 0.30000000000000004 and 0.3
    assert competition_ranks_from_scores(scores).tolist() == [1, 1, 3]
    assert competition_ranks_from_scores(scores, tol=0).tolist() == [1, 2, 3]


def test_tolerance_ties_compare_to_the_group_leader_not_transitively() -> None:
    tol = 1e-3
    scores = [1.0, 1.0 - 0.6 * tol, 1.0 - 1.2 * tol]
    # 1 - 0.6 tol ties the leader 1.0; 1 - 1.2 tol is more than tol below the leader, so it
    # starts a new group although it is only 0.6 tol below its neighbour.
    assert competition_ranks_from_scores(scores, tol=tol).tolist() == [1, 1, 3]
    assert dense_ranks_from_scores(scores, tol=tol).tolist() == [1, 1, 2]
    assert average_ranks_from_scores(scores, tol=tol).tolist() == [1.5, 1.5, 3.0]
    # The grouping does not depend on the order the models are listed in.
    shuffled = [scores[2], scores[0], scores[1]]
    assert competition_ranks_from_scores(shuffled, tol=tol).tolist() == [3, 1, 1]


def test_a_long_chain_of_near_ties_splits_every_time_it_exceeds_tol() -> None:
    # Scores 0, -0.4, -0.8, ..., tol = 1: groups {0, -0.4, -0.8}, {-1.2, -1.6, -2.0}, ...
    scores = [-0.4 * i for i in range(7)]
    assert competition_ranks_from_scores(scores, tol=1.0).tolist() == [1, 1, 1, 4, 4, 4, 7]
    assert dense_ranks_from_scores(scores, tol=1.0).tolist() == [1, 1, 1, 2, 2, 2, 3]


def test_a_gap_of_exactly_tol_ties() -> None:
    assert competition_ranks_from_scores([1.0, 0.75, 0.5], tol=0.25).tolist() == [1, 1, 3]


finite_scores = st.lists(
    st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False), min_size=1, max_size=40
)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(scores=finite_scores)
def test_zero_tolerance_matches_scipy_rankdata_on_negated_scores(scores: list[float]) -> None:
    for name, (ranker, scipy_method) in RANKERS.items():
        expected = rankdata(-np.asarray(scores), method=scipy_method)
        assert ranker(scores, tol=0).tolist() == expected.tolist(), name


@settings(max_examples=200, deadline=None)
@given(
    levels=st.lists(st.integers(min_value=-50, max_value=50), min_size=1, max_size=40),
    jitter=st.lists(st.floats(min_value=-0.45, max_value=0.45), min_size=40, max_size=40),
)
@pytest.mark.slow
def test_scores_within_tol_of_well_separated_levels_rank_like_the_levels(
    levels: list[int], jitter: list[float]
) -> None:
    # Levels one apart, each score moved by at most 0.45 * tol / 2: groups are exactly the levels.
    tol = 1e-6
    scores = [level + offset * tol / 2 for level, offset in zip(levels, jitter[: len(levels)], strict=True)]
    for name, (ranker, scipy_method) in RANKERS.items():
        expected = rankdata(-np.asarray(levels), method=scipy_method)
        assert ranker(scores, tol=tol).tolist() == expected.tolist(), name


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(scores=finite_scores, tol=st.floats(min_value=0, max_value=1e6), seed=st.integers(0, 2**32 - 1))
def test_rank_invariants_for_any_tolerance(scores: list[float], tol: float, seed: int) -> None:
    values = np.asarray(scores)
    size = values.size
    competition = competition_ranks_from_scores(values, tol)
    dense = dense_ranks_from_scores(values, tol)
    average = average_ranks_from_scores(values, tol)
    assert average.sum() == pytest.approx(size * (size + 1) / 2)
    assert competition.min() == 1 and dense.min() == 1
    assert (dense <= competition).all() and (competition <= average).all()
    # A better score never gets a worse rank.
    better = values[:, None] > values[None, :]
    assert not (better & (competition[:, None] > competition[None, :])).any()
    # Every tie group spans at most tol.
    for rank in np.unique(competition):
        group = values[competition == rank]
        assert group.max() - group.min() <= tol
    # Relabelling the models permutes the ranks the same way.
    permutation = np.random.default_rng(seed).permutation(size)
    assert (competition_ranks_from_scores(values[permutation], tol) == competition[permutation]).all()


@pytest.mark.parametrize("ranker", [competition_ranks_from_scores, dense_ranks_from_scores])
@pytest.mark.parametrize(
    ("scores", "tol", "message"),
    [
        ([0.5, float("nan"), 0.2], 0, r"scores entries must be finite; got nan at index 1"),
        ([0.5, 0.1, float("-inf")], 0, r"scores entries must be finite; got -inf at index 2"),
        ([], 0, r"scores must hold at least one score; got an empty sequence"),
        (
            [[0.5, 0.1]],
            0,
            r"scores must be a 1-D sequence of numbers; got 2 dimension\(s\) with shape \(1, 2\)",
        ),
        (0.5, 0, r"scores must be a 1-D sequence of numbers; got 0 dimension\(s\)"),
        (["a", "b"], 0, r"scores must hold real numbers; got dtype <U1"),
        ([True, False], 0, r"scores must hold real numbers; got dtype bool"),
        ([0.5, None], 0, r"scores must hold real numbers; got dtype object"),
        ([1.0, 2.0], -1e-3, r"tol must be a finite real number >= 0; got tol=-0.001"),
        ([1.0, 2.0], float("nan"), r"tol must be a finite real number >= 0; got tol=nan"),
        ([1.0, 2.0], float("inf"), r"tol must be a finite real number >= 0; got tol=inf"),
        ([1.0, 2.0], True, r"tol must be a finite real number >= 0; got True \(bool\)"),
        ([1.0, 2.0], "0.1", r"tol must be a finite real number >= 0; got '0.1' \(str\)"),
    ],
)
def test_score_validation_messages(ranker, scores, tol, message) -> None:
    with pytest.raises(EvaluationError, match=message):
        ranker(scores, tol=tol)


def test_average_ranks_validate_too() -> None:
    with pytest.raises(EvaluationError, match=r"got nan at index 0"):
        average_ranks_from_scores([float("nan")])


# --- rank_models -------------------------------------------------------------------------------


def binary_tensor(models: int = 4, items: int = 30, trials: int = 12, seed: int = 7) -> np.ndarray:
    rng = np.random.default_rng(seed)
    rates = rng.beta(2, 2, size=(models, items, 1))
    return (rng.random((models, items, trials)) < rates).astype(np.int8)


METRIC_CASES = [
    ("avg", {}),
    ("mean", {}),
    ("pass@k", {"k": 3}),
    ("pass_at_k", {"k": 5}),
    ("pass^k", {"k": 3}),
    ("pass_hat_k", {"k": 2}),
    ("g_pass_at_k", {"k": 4}),
    ("g-pass@k_tau", {"k": 6, "tau": 0.5}),
    ("g_pass_at_k_tao", {"k": 6, "tau": 0.75}),
    ("mg-pass@k", {"k": 8}),
    ("maj@k", {"k": 5}),
    ("maj_at_k", {"k": 4}),
]


@pytest.mark.parametrize(("metric", "metric_args"), METRIC_CASES)
def test_rank_models_scores_each_model_with_its_estimator(metric: str, metric_args: dict) -> None:
    R = binary_tensor()
    estimator = estimators.estimator_by_name(metric)
    expected = [estimator(R[model], **metric_args) for model in range(R.shape[0])]
    ranking = rank_models(R, metric, **metric_args)
    assert ranking.scores == tuple(expected)
    assert ranking.ranks == tuple(competition_ranks_from_scores(expected).tolist())
    assert ranking.metric == metric and dict(ranking.metric_args) == metric_args
    assert ranking.sigmas is None


def test_rank_models_bayes_ranks_by_mu_and_keeps_sigma() -> None:
    rng = np.random.default_rng(3)
    R = rng.integers(0, 3, size=(5, 20, 6))
    R0 = rng.integers(0, 3, size=(20, 2))
    w = [0.0, 0.5, 1.0]
    expected = [estimators.bayes(R[model], w, R0) for model in range(5)]
    ranking = rank_models(R, "bayes", w=w, R0=R0)
    assert ranking.scores == tuple(mu for mu, _ in expected)
    assert ranking.sigmas == tuple(sigma for _, sigma in expected)
    assert ranking.ranks == tuple(competition_ranks_from_scores([mu for mu, _ in expected]).tolist())


@pytest.mark.parametrize("method", RANK_METHODS)
def test_rank_models_methods_match_the_rank_functions(method: str) -> None:
    # Models 0 and 2 are the same matrix, so they tie exactly.
    R = binary_tensor(models=5)
    R[2] = R[0]
    ranking = rank_models(R, "pass@k", k=3, method=method)
    ranker = RANKERS[method][0]
    assert ranking.ranks == tuple(ranker(list(ranking.scores)).tolist())
    assert ranking.ranks[0] == ranking.ranks[2]
    assert ranking.method == method


def test_rank_models_tolerance_is_passed_to_the_ranks() -> None:
    # avg: 6/8, 5/8, 4/8 per model; tol 0.2 ties 0.75 and 0.625 but not 0.5 (0.25 below the leader).
    R = np.array([[[1, 1, 1, 1, 1, 1, 0, 0]], [[1, 1, 1, 1, 1, 0, 0, 0]], [[1, 1, 1, 1, 0, 0, 0, 0]]])
    assert rank_models(R, "avg", tol=0.2).ranks == (1, 1, 3)
    assert rank_models(R, "avg").ranks == (1, 2, 3)


def test_every_input_form_gives_the_same_ranking() -> None:
    R = binary_tensor(models=3)
    as_tensor = rank_models(R, "pass@k", k=4)
    as_matrices = rank_models([R[i] for i in range(3)], "pass@k", k=4)
    as_nested_lists = rank_models(R.tolist(), "pass@k", k=4)
    as_banks = rank_models([Bank.from_matrix(R[i]) for i in range(3)], "pass@k", k=4)
    for other in (as_matrices, as_nested_lists, as_banks):
        assert other.scores == as_tensor.scores
        assert other.ranks == as_tensor.ranks


def test_ragged_models_with_different_trial_counts_are_ranked() -> None:
    a = [[1, 1, 0], [1, 0, 0, 0, 1]]  # items with 3 and 5 trials
    b = Bank.from_counts([4, 4], [4, 0])
    ranking = rank_models([a, b], "pass@k", k=2, names=["a", "b"])
    assert ranking.scores == (estimators.pass_at_k(a, 2), estimators.pass_at_k(b, 2))
    assert ranking.names == ("a", "b")


def test_order_lists_models_best_first() -> None:
    R = binary_tensor(models=6)
    ranking = rank_models(R, "pass^k", k=2)
    order = ranking.order()
    assert sorted(order) == list(range(6))
    assert [ranking.ranks[i] for i in order] == sorted(ranking.ranks)
    assert [ranking.scores[i] for i in order] == sorted(ranking.scores, reverse=True)


def test_ranking_is_frozen_and_serialises_to_json() -> None:
    R = binary_tensor(models=3)
    ranking = rank_models(R, "g-pass@k_tau", k=4, tau=np.float64(0.5), names=["x", "y", "z"])
    with pytest.raises(dataclasses.FrozenInstanceError):
        ranking.ranks = (1, 2, 3)  # type: ignore[misc]
    with pytest.raises(TypeError):
        ranking.metric_args["k"] = 5  # type: ignore[index]
    data = json.loads(json.dumps(ranking.to_dict()))
    assert data == {
        "metric": "g-pass@k_tau",
        "metric_args": {"k": 4, "tau": 0.5},
        "method": "competition",
        "tol": 1e-12,
        "names": ["x", "y", "z"],
        "scores": list(ranking.scores),
        "ranks": list(ranking.ranks),
        "sigmas": None,
    }


def test_bayes_ranking_serialises_matrix_arguments() -> None:
    R = np.random.default_rng(5).integers(0, 3, size=(2, 4, 3))
    R0 = np.array([[0, 2], [1, 1], [2, 2], [0, 0]])
    data = json.loads(json.dumps(rank_models(R, "bayes", w=np.array([0, 0.5, 1]), R0=R0).to_dict()))
    assert data["metric_args"] == {"w": [0.0, 0.5, 1.0], "R0": R0.tolist()}
    assert len(data["sigmas"]) == 2


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda R: rank_models(R[0], "avg"),
            r"R must be an L x M x N tensor \(models x items x trials\) or a list of per-model inputs; "
            r"got an array with 2 dimension\(s\) and shape \(30, 12\)",
        ),
        (lambda R: rank_models(0.5, "avg"), r"R must be an L x M x N tensor .* got float"),
        (lambda R: rank_models([], "avg"), r"R must hold at least one model; got none"),
        (lambda R: rank_models(R, "pass@q", k=2), r"metric must be one of .*pass@k.*; got 'pass@q'"),
        (
            lambda R: rank_models(R, "pass@k"),
            r"metric_args must match the arguments of metric 'pass@k' \(k\); got none",
        ),
        (
            lambda R: rank_models(R, "avg", k=3),
            r"metric_args must match the arguments of metric 'avg' \(no arguments\); got k",
        ),
        (lambda R: rank_models(R, "pass@k", k=13), r"R\[0\]: k must satisfy 1 <= k <= n; got k=13 with n=12"),
        (
            lambda R: rank_models(R, "g-pass@k_tau", k=2, tau=1.5, names=["a", "b", "c", "d"]),
            r"R\[0\] \(model 'a'\): tau must satisfy 0 <= tau <= 1; got tau=1.5",
        ),
        (
            lambda R: rank_models([R[0], R[1, :29]], "avg"),
            r"every model must be scored on the same items; R\[0\] has 30 items but R\[1\] has 29",
        ),
        (
            lambda R: rank_models([R[0], Bank.from_counts([12] * 31, [1] * 31)], "pass@k", k=2),
            r"R\[0\] has 30 items but R\[1\] has 31",
        ),
        (
            lambda R: rank_models([R[0], [1, 0, 1]], "avg"),
            r"R\[1\]: R must be a 2-D matrix \(items x trials\); got 1 dimension\(s\)",
        ),
        (
            lambda R: rank_models(R, "avg", method="min"),
            r"method must be one of competition, dense, average; got 'min'",
        ),
        (lambda R: rank_models(R, "avg", tol=-1.0), r"tol must be a finite real number >= 0; got tol=-1.0"),
        (
            lambda R: rank_models(R, "avg", names="abcd"),
            r"names must be a sequence of strings, one per model",
        ),
        (lambda R: rank_models(R, "avg", names=[1, 2, 3, 4]), r"names must be a sequence of strings"),
        (
            lambda R: rank_models(R, "avg", names=["a", "b"]),
            r"names must have one entry per model; got 2 names for 4 models",
        ),
        (
            lambda R: rank_models(R, "avg", names=["a", "b", "b", "c"]),
            r"names must be unique; got 'b' more than once",
        ),
    ],
)
def test_rank_models_validation_messages(call, message) -> None:
    with pytest.raises(EvaluationError, match=message):
        call(binary_tensor())
