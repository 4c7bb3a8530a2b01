"""Agreement coefficients: equal to the reference libraries, published examples, identities, intervals.

The references (``krippendorff``, ``sklearn.metrics.cohen_kappa_score``,
``statsmodels.stats.inter_rater.fleiss_kappa``) are test-only dependencies; the implementation
imports none of them.
"""

from __future__ import annotations

from itertools import combinations

import krippendorff
import numpy as np
import pytest

from tests.stats._weights import resample_weights
from trialscore.errors import EvaluationError, InsufficientDataError
from trialscore.stats import agreement, grade_table, judge_agreement
from trialscore.stats._agreement import _BLOCK_CELLS, _bootstrap, _coded, _per_item, _percentile_bounds
from trialscore.stats._resampling import item_weights

TOLERANCE = 1e-12

#: Krippendorff, "Computing Krippendorff's Alpha-Reliability" (2011): 4 coders, 12 units, 1-5 scale;
#: published alpha nominal 0.743, ordinal 0.815, interval 0.849.
KRIPPENDORFF_2011 = np.array(
    [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, np.nan, np.nan, np.nan],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, np.nan, 3],
        [np.nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, np.nan],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, np.nan],
    ]
).T
#: Fleiss (1971) as tabulated on Wikipedia: 10 subjects, 14 raters, 5 categories; kappa 0.210.
FLEISS_1971 = np.array(
    [
        [0, 0, 0, 0, 14],
        [0, 2, 6, 4, 2],
        [0, 0, 3, 5, 6],
        [0, 3, 9, 2, 0],
        [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0],
        [3, 2, 6, 3, 0],
        [2, 5, 3, 2, 2],
        [6, 5, 2, 1, 0],
        [0, 2, 2, 3, 7],
    ]
)


def _from_counts(table: np.ndarray) -> np.ndarray:
    """Units x raters grades from a units x categories count table (raters are exchangeable)."""
    return np.array([np.repeat(np.arange(table.shape[1]), row) for row in table], dtype=float)


def _random_grades(
    seed: int, units: int = 80, coders: int = 3, values: int = 4
) -> tuple[np.ndarray, list[int]]:
    rng = np.random.default_rng(seed)
    level = rng.integers(0, values, units)
    grades = np.clip(level[:, None] + rng.integers(-1, 2, (units, coders)), 0, values - 1).astype(float)
    grades[rng.random(grades.shape) < 0.15] = np.nan
    return grades, (np.arange(units) // 3).tolist()


@pytest.mark.parametrize("seed", range(6))
def test_equal_to_the_reference_libraries_on_random_grades_with_gaps(seed: int) -> None:
    from sklearn.metrics import cohen_kappa_score
    from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

    grades, items = _random_grades(seed)
    for scale in ("nominal", "ordinal", "interval"):
        result = agreement(grades, items, scale=scale, resamples=20)
        reference = krippendorff.alpha(grades.T, level_of_measurement=scale)
        assert abs(result.krippendorff_alpha.estimate - reference) < TOLERANCE
    for pair, (a, b) in zip(result.cohen_kappa, combinations(range(3), 2), strict=True):
        both = ~np.isnan(grades[:, a]) & ~np.isnan(grades[:, b])
        assert pair.units == both.sum()
        assert abs(pair.estimate - cohen_kappa_score(grades[both, a], grades[both, b])) < TOLERANCE
    complete = ~np.isnan(grades).any(axis=1)
    table, _ = aggregate_raters(grades[complete].astype(int))
    assert result.complete_units == complete.sum()
    assert abs(result.fleiss_kappa.estimate - fleiss_kappa(table)) < TOLERANCE
    full = agreement(grades[complete], resamples=20)
    assert abs(full.pabak.estimate - fleiss_kappa(table, method="randolph")) < TOLERANCE


def test_published_examples() -> None:
    from sklearn.metrics import cohen_kappa_score
    from statsmodels.stats.inter_rater import fleiss_kappa

    result = {
        scale: agreement(KRIPPENDORFF_2011, scale=scale, resamples=20).krippendorff_alpha.estimate
        for scale in ("nominal", "ordinal", "interval")
    }
    assert {scale: round(value, 3) for scale, value in result.items()} == {
        "nominal": 0.743,
        "ordinal": 0.815,
        "interval": 0.849,
    }
    for scale, value in result.items():
        assert abs(value - krippendorff.alpha(KRIPPENDORFF_2011.T, level_of_measurement=scale)) < TOLERANCE
    fleiss = agreement(_from_counts(FLEISS_1971), resamples=20).fleiss_kappa.estimate
    assert round(fleiss, 3) == 0.210 and abs(fleiss - fleiss_kappa(FLEISS_1971)) < TOLERANCE
    # Cohen's kappa on Wikipedia's 50 grant applications: 20 yes-yes, 5 yes-no, 10 no-yes, 15 no-no: 0.4.
    a = np.repeat([1, 1, 0, 0], [20, 5, 10, 15])
    b = np.repeat([1, 0, 1, 0], [20, 5, 10, 15])
    kappa = agreement(np.column_stack([a, b]), resamples=20).cohen_kappa[0].estimate
    assert abs(kappa - 0.4) < TOLERANCE and abs(kappa - cohen_kappa_score(a, b)) < TOLERANCE


@pytest.mark.parametrize("seed", range(4))
def test_pabak_and_the_prevalence_and_bias_indices_give_back_kappa(seed: int) -> None:
    # Byrt, Bishop and Carlin (1993): kappa = (PABAK - PI^2 + BI^2) / (1 - PI^2 + BI^2) for two coders.
    rng = np.random.default_rng(seed)
    a = (rng.random(60) < 0.75).astype(float)
    b = np.where(rng.random(60) < 0.8, a, 1 - a)
    result = agreement(np.column_stack([a, b]), resamples=20)
    both_yes, both_no = np.sum((a == 1) & (b == 1)), np.sum((a == 0) & (b == 0))
    prevalence, bias = abs(both_yes - both_no) / 60, abs(np.sum(a) - np.sum(b)) / 60
    assert result.prevalence_index is not None
    assert abs(result.prevalence_index.estimate - prevalence) < TOLERANCE
    assert abs(result.pabak.estimate - (2 * np.mean(a == b) - 1)) < TOLERANCE
    rebuilt = (result.pabak.estimate - prevalence**2 + bias**2) / (1 - prevalence**2 + bias**2)
    assert abs(result.cohen_kappa[0].estimate - rebuilt) < TOLERANCE


def test_intervals_are_seeded_contain_the_estimate_and_resample_items() -> None:
    grades, items = _random_grades(11, units=90)
    first = agreement(grades, items, seed=3, resamples=400)
    assert first == agreement(grades, items, seed=3, resamples=400)
    assert first != agreement(grades, items, seed=4, resamples=400)
    for figure in (first.percent_agreement, first.fleiss_kappa, first.krippendorff_alpha, first.pabak):
        assert figure.low <= figure.estimate <= figure.high and figure.high > figure.low
        assert set(figure.to_dict()) == {"estimate", "low", "high", "level"}
    # Units of one item move together: treating each unit as its own item narrows nothing away here,
    # but the item count is what the method names.
    assert first.items == 30 and "over 30 items" in first.method
    clustered = agreement(np.repeat(grades, 4, axis=0), np.repeat(items, 4).tolist(), seed=3, resamples=400)
    independent = agreement(np.repeat(grades, 4, axis=0), seed=3, resamples=400)
    assert clustered.krippendorff_alpha.high - clustered.krippendorff_alpha.low > 1.5 * (
        independent.krippendorff_alpha.high - independent.krippendorff_alpha.low
    )


def test_perfect_agreement_has_an_interval_of_positive_width() -> None:
    grades = np.column_stack([np.tile([0, 1], 20)] * 3).astype(float)
    result = agreement(grades, resamples=200)
    z2 = 1.959963984540054**2
    assert result.percent_agreement.estimate == 1.0
    assert result.percent_agreement.low == pytest.approx(1 - z2 / (40 + z2))
    assert result.cohen_kappa[0].low == pytest.approx(1 - (z2 / (40 + z2)) / 0.5)
    for figure in (result.fleiss_kappa, result.krippendorff_alpha, result.pabak):
        assert figure.estimate == 1.0 and figure.low < 1.0


def test_one_category_leaves_the_chance_corrected_figures_undefined() -> None:
    result = agreement(np.ones((10, 2)), resamples=50)
    assert result.percent_agreement.estimate == 1.0
    assert np.isnan(result.fleiss_kappa.estimate) and np.isnan(result.cohen_kappa[0].high)
    assert result.prevalence_index is None


def test_judge_agreement_splits_inter_and_intra_judge() -> None:
    rng = np.random.default_rng(5)
    rows = []
    for item in range(40):
        for trial in range(3):
            truth = rng.random() < 0.6
            for judge, accuracy in (("gpt", 0.9), ("claude", 0.8)):
                for repeat in range(2):
                    rows.append(
                        (item, trial, judge, repeat, int(truth if rng.random() < accuracy else not truth))
                    )
    result = judge_agreement(rows, resamples=100)
    table = grade_table(rows)
    units, items = table.inter_judge()
    assert result.inter is not None and result.inter.coders == ("gpt", "claude")
    assert result.inter == agreement(units, items.tolist(), coders=("gpt", "claude"), resamples=100)
    assert sorted(result.intra) == ["claude", "gpt"]
    assert result.intra["gpt"].coders == ("repeat 0", "repeat 1")
    assert result.intra["gpt"].percent_agreement.estimate > result.intra["claude"].percent_agreement.estimate
    assert result.to_dict()["intra"]["gpt"]["units"] == 120
    single = judge_agreement([(i, 0, "gpt", 0, i % 2) for i in range(10)], resamples=50)
    assert single.inter is None and dict(single.intra) == {}


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: agreement(np.ones((5, 1))), EvaluationError, "at least 2 coders"),
        (lambda: agreement(np.ones(5)), EvaluationError, "units x coders"),
        (lambda: agreement([[1, np.inf], [0, 1]]), EvaluationError, "infinity"),
        (lambda: agreement([[1, 1], [0, 1]], items=[1]), EvaluationError, "one key per unit"),
        (lambda: agreement([[1, 1], [0, 1]], coders=["a"]), EvaluationError, "name each of the 2 columns"),
        (lambda: agreement([[1, 1], [0, 1]], scale="ratio"), EvaluationError, "scale must be one of"),
        (
            lambda: agreement([[1, 1], [0, 1]], resamples=5),
            EvaluationError,
            "resamples must be an integer >= 10",
        ),
        (lambda: agreement([[1, 1], [0, np.nan]]), InsufficientDataError, "at least 2 items; got 1"),
    ],
)
def test_bad_input_is_refused(call: object, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        call()  # type: ignore[operator]


def _judged(rng: np.random.Generator, items: int, trials: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """Three judges grade ``trials`` outputs of each item; two of them are lenient on 30% of items."""
    rates = rng.beta(0.6, 0.41, items)
    correct = rng.random((items, trials)) < rates[:, None]
    lenient = rng.random(items) < 0.3

    def judge(tpr: float, tnr: float, lenient_tnr: float) -> np.ndarray:
        tnr_item = np.where(lenient, lenient_tnr, tnr)[:, None]
        draw = rng.random((items, trials))
        return np.where(correct, draw < tpr, draw >= tnr_item).astype(float).ravel()

    grades = np.column_stack([judge(0.95, 0.85, 0.3), judge(0.9, 0.9, 0.9), judge(0.9, 0.8, 0.5)])
    return grades, np.repeat(np.arange(items), trials)


#: The coverage simulation's figures and the core's names for them.
FIGURES = {
    "percent_agreement": "percent",
    "fleiss_kappa": "fleiss",
    "krippendorff_alpha": "alpha",
    "pabak": "pabak",
    "cohen_kappa": "cohen 0 1",
}


def test_the_bootstrap_core_is_the_public_function() -> None:
    grades, items = _judged(np.random.default_rng(6), 40)
    public = agreement(grades, items.tolist(), resamples=500, seed=6)
    coded = _coded(grades, items, "nominal")
    core = _bootstrap(coded.figures, coded.items, item_weights(coded.items, 500, 6, _BLOCK_CELLS), 0.95)
    for name, key in FIGURES.items():
        figure = getattr(public, name)
        figure = figure[0] if name == "cohen_kappa" else figure
        assert (figure.estimate, figure.low, figure.high) == (
            core[key].estimate,
            core[key].low,
            core[key].high,
        )
    # The simulation's own resamples are multinomial too: M draws a row, weights of mean 1, variance 1 - 1/M.
    weights = resample_weights(np.random.default_rng(7), 20_000, 40)
    assert (weights.sum(axis=1) == 40).all()
    assert abs(weights.mean(axis=0) - 1).max() < 0.04 and abs(weights.var(axis=0) - 0.975).max() < 0.06


def test_item_sums_add_each_items_units_in_order_as_add_at_does() -> None:
    # The figures' item sums (one bincount) are np.add.at's to the bit: units in order, from 0.0.
    rng = np.random.default_rng(12)
    for units, items, width in ((0, 3, 4), (1, 1, 1), (300, 100, 7), (250, 40, 1000), (500, 7, 3)):
        features = rng.standard_normal((units, width)) * 10.0 ** rng.integers(-8, 9, (units, width))
        features[rng.random(features.shape) < 0.05] = -0.0
        item_index = rng.integers(0, items, units)
        expected = np.zeros((items, width))
        np.add.at(expected, item_index, features)
        got = _per_item(features, item_index, items)
        assert got.dtype == np.float64 and got.tobytes() == expected.tobytes()


def test_percentile_bounds_of_several_figures_are_each_ones_own_quantiles() -> None:
    # The figures' draws of one length share an np.quantile call along rows: each row's floats as alone.
    rng = np.random.default_rng(14)
    for size in (1, 2, 10, 999, 1000):
        draws = {f"f{i}": rng.standard_normal(size) * 10.0 ** rng.integers(-3, 4) for i in range(6)}
        draws["f1"][rng.random(size) < 0.2] = np.nan  # fewer kept draws than the others
        draws["f2"][:] = np.nan  # none kept
        draws["f3"] = np.round(draws["f3"])  # ties
        for level in (0.8, 0.95, 0.99):
            tail = 0.5 * (1.0 - level)
            expected = {
                name: tuple(float(v) for v in np.quantile(kept, [tail, 1.0 - tail])) if kept.size else None
                for name, values in draws.items()
                for kept in [values[~np.isnan(values)]]
            }
            assert _percentile_bounds(draws, level) == expected


@pytest.mark.slow
def test_bootstrap_intervals_cover_93_to_97_percent_at_100_items() -> None:
    rng = np.random.default_rng(2027)
    population = _coded(*_judged(rng, 300_000), "nominal")
    # The population values: the core's estimates (one all-ones resample: no interval is needed).
    estimates = _bootstrap(population.figures, population.items, [np.ones((1, population.items))], 0.95)
    truth = {name: estimates[key].estimate for name, key in FIGURES.items()}
    # Each data set through agreement's core (equal to it above), with 1,000 resamples of its own.
    resampling = np.random.default_rng(2028)
    reps, hits = 1500, dict.fromkeys(truth, 0)
    for _ in range(reps):
        grades, items = _judged(rng, 100)
        coded = _coded(grades, items, "nominal")
        checked = {key: coded.figures[key] for key in FIGURES.values()}  # the others are not checked
        result = _bootstrap(checked, coded.items, [resample_weights(resampling, 1000, coded.items)], 0.95)
        for name, key in FIGURES.items():
            hits[name] += result[key].low <= truth[name] <= result[key].high
    coverage = {name: count / reps for name, count in hits.items()}
    print(
        "\n" + ", ".join(f"{name} {value:.2%} (truth {truth[name]:.4f})" for name, value in coverage.items())
    )
    assert all(0.93 <= value <= 0.97 for value in coverage.values()), coverage
