r"""Agreement of judges with one another and with themselves, each figure with a bootstrap interval.

The data are *units* (one graded trial output) by *coders* (judges, or the repeats of one
judge), NaN where a coder did not grade the unit; units belong to *items* (the trials of one
item share its difficulty, so the bootstrap resamples items, each with all its units).  Every
coefficient is :math:`1 - D_o / D_e`, observed over expected disagreement:

======================  ==============================================================================
figure                  :math:`D_o` and :math:`D_e`
======================  ==============================================================================
percent agreement       :math:`D_o = 1 - \bar P`, :math:`\bar P` the mean over units with at least 2
                        grades of :math:`P_u = \sum_c n_{uc}(n_{uc}-1) / m_u(m_u-1)` (the share of
                        agreeing pairs of grades; :math:`n_{uc}` grades of value c among the unit's
                        :math:`m_u`); :math:`D_e = 1`
Cohen's kappa (a pair)  on the units both coders graded: :math:`D_o = 1 - p_o`,
                        :math:`D_e = 1 - \sum_c p_{a,c}\,p_{b,c}` (each coder's own shares)
Fleiss' kappa           on the units every coder graded (:math:`m` grades each):
                        :math:`D_o = 1 - \bar P`, :math:`D_e = 1 - \sum_c p_c^2` (pooled shares)
Krippendorff's alpha    on the coincidence matrix :math:`o_{ck} = \sum_u \#\{i \ne j: c, k\}/(m_u - 1)`,
                        :math:`n_c = \sum_k o_{ck}`, :math:`n = \sum_c n_c`:
                        :math:`D_o = \sum o_{ck}\delta_{ck} / n`,
                        :math:`D_e = \sum n_c n_k \delta_{ck} / n(n-1)` with :math:`\delta` nominal
                        :math:`[c \ne k]`, interval :math:`(c - k)^2`, or ordinal
                        :math:`(h_c - h_k)^2` on the midranks :math:`h_c = \sum_{g \le c} n_g - n_c/2`
PABAK                   :math:`(q \bar P - 1)/(q - 1)`: :math:`D_o = 1 - \bar P`,
                        :math:`D_e = (q-1)/q` for :math:`q` categories (Byrt, Bishop and Carlin
                        1993: :math:`2p_o - 1` for two coders and two categories; Randolph's
                        free-marginal kappa for more coders)
prevalence index        two categories only: :math:`|\pi_1 - \pi_0|` over the pooled grades
                        (for two coders :math:`|a - d|/N` of the 2x2 table)
======================  ==============================================================================

The values equal ``sklearn.metrics.cohen_kappa_score``, ``statsmodels.stats.inter_rater.fleiss_kappa``
(and its ``method="randolph"`` for PABAK) and ``krippendorff.alpha`` (tested to 1e-12).

Intervals: the percentile bootstrap over items, ``resamples`` draws of item multiplicities
from :math:`\mathrm{Multinomial}(M, 1/M, \dots)` shared by every figure (every sum above is a
weighted sum over items, so one draw serves them all).  A resample in which a coefficient is
undefined (:math:`D_e = 0`: one category only) is left out of its quantiles.  When no resample
can show a disagreement (every unit agrees), the lower bound comes from the largest
disagreement rate that zero disagreeing items out of :math:`M` leave plausible, Wilson's
:math:`u = z^2/(M + z^2)`: :math:`1 - u\,\delta_{\max} / \hat D_e`, so that no interval has
zero width.  A coefficient whose :math:`D_e` is 0 (every grade the same) is NaN, with NaN bounds.

References
----------
J. Cohen (1960); J. L. Fleiss (1971); K. Krippendorff, *Content Analysis* (2004), ch. 11;
T. Byrt, J. Bishop and J. B. Carlin, "Bias, prevalence and kappa", J. Clin. Epidemiol. 46 (1993).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from types import MappingProxyType

import numpy as np
from numpy.typing import ArrayLike, NDArray

from trialscore._record import Record
from trialscore._validate import check_choice, check_integer, check_probability
from trialscore.core._arrays import distinct
from trialscore.errors import EvaluationError, InsufficientDataError
from trialscore.stats._grades import GradeTable, grade_table
from trialscore.stats._intervals import normal_quantile
from trialscore.stats._resampling import item_weights

__all__ = ["Agreement", "AgreementInterval", "JudgeAgreement", "PairKappa", "agreement", "judge_agreement"]

FloatArray = NDArray[np.float64]
IndexArray = NDArray[np.int64]

SCALES = {"nominal": "nominal", "ordinal": "ordinal", "interval": "interval"}

#: Cells of one block of bootstrap weights (resamples x items) held at once.
_BLOCK_CELLS = 2_000_000

#: Observed and expected disagreement of one figure for each row of item weights (B x M).
Parts = Callable[[FloatArray], tuple[FloatArray, FloatArray]]


@dataclass(frozen=True)
class AgreementInterval(Record):
    """A coefficient with its bootstrap interval: ``{estimate, low, high, level}``."""

    estimate: float
    low: float
    high: float
    level: float

    def __str__(self) -> str:
        return f"{self.estimate:.4g} [{self.low:.4g}, {self.high:.4g}]"


@dataclass(frozen=True)
class PairKappa(Record):
    """Cohen's kappa of one pair of coders on the ``units`` both graded, with its interval."""

    first: Hashable
    second: Hashable
    units: int
    estimate: float
    low: float
    high: float
    level: float


@dataclass(frozen=True)
class Agreement(Record):
    """Every agreement figure of one set of coders (module docstring), each with its interval.

    ``units`` counts the units with at least 2 grades (the others, ``unpaired_units``, carry
    no agreement and are left out), ``complete_units`` those every coder graded (Fleiss' kappa
    uses only these), ``categories`` the distinct grades (``q`` of PABAK).
    ``prevalence_index`` is None unless the grades take exactly two values.
    """

    coders: tuple[Hashable, ...]
    scale: str
    items: int
    units: int
    complete_units: int
    unpaired_units: int
    categories: int
    percent_agreement: AgreementInterval
    cohen_kappa: tuple[PairKappa, ...]
    fleiss_kappa: AgreementInterval
    krippendorff_alpha: AgreementInterval
    pabak: AgreementInterval
    prevalence_index: AgreementInterval | None
    method: str

    def __str__(self) -> str:
        pairs = "; ".join(f"{p.first} vs {p.second} {p.estimate:.4g}" for p in self.cohen_kappa)
        return (
            f"{len(self.coders)} coders, {self.units} units on {self.items} items: "
            f"agreement {self.percent_agreement}, Fleiss' kappa {self.fleiss_kappa}, "
            f"Krippendorff's alpha ({self.scale}) {self.krippendorff_alpha}, PABAK {self.pabak}; "
            f"Cohen's kappa {pairs}"
        )


@dataclass(frozen=True)
class JudgeAgreement(Record):
    """Inter-judge agreement (each judge's first repeat) and intra-judge agreement (each judge's repeats).

    ``inter`` is None with one judge; ``intra`` maps each judge with at least two repeats of
    some trial to the agreement of its repeats.
    """

    inter: Agreement | None
    intra: Mapping[Hashable, Agreement]


def _per_item(features: FloatArray, item_index: IndexArray, items: int) -> FloatArray:
    """Sum of per-unit feature rows over each item's units: items x features.

    One ``bincount`` over (item, feature) cells adds each cell's units in unit order from 0.0, as
    ``np.add.at`` does (the same sums to the bit), at a fraction of its cost.
    """
    width = features.shape[1]
    cells = (item_index[:, None] * width + np.arange(width)).ravel()
    sums = np.bincount(cells, weights=features.ravel(), minlength=items * width)
    out: FloatArray = sums.reshape(items, width).astype(np.float64, copy=False)  # no units: int zeros
    return out


def _linear(features: FloatArray, item_index: IndexArray, items: int) -> Callable[[FloatArray], FloatArray]:
    """Weighted sums over items of the per-unit features, for each row of item weights."""
    per_item = _per_item(features, item_index, items)
    return lambda weights: weights @ per_item


def _agreeing_pairs(counts: FloatArray, graded: FloatArray) -> FloatArray:
    """``P_u``: the share of agreeing ordered pairs among each unit's grades."""
    share: FloatArray = (counts * (counts - 1.0)).sum(axis=1) / (graded * (graded - 1.0))
    return share


def _percent(
    counts: FloatArray, graded: FloatArray, item_index: IndexArray, items: int, chance: float
) -> Parts:
    sums = _linear(
        np.column_stack([_agreeing_pairs(counts, graded), np.ones(graded.size)]), item_index, items
    )

    def parts(weights: FloatArray) -> tuple[FloatArray, FloatArray]:
        s = sums(weights)
        return 1.0 - s[:, 0] / s[:, 1], np.full(s.shape[0], chance)

    return parts


def _prevalence(counts: FloatArray, item_index: IndexArray, items: int) -> Parts:
    # PI = |pi_1 - pi_0| = 1 - 2 min(pi_0, pi_1): written as 1 - D_o / D_e with D_o = 2 min(...), D_e = 1.
    sums = _linear(counts, item_index, items)

    def parts(weights: FloatArray) -> tuple[FloatArray, FloatArray]:
        s = sums(weights)
        return 2.0 * s.min(axis=1) / s.sum(axis=1), np.ones(s.shape[0])

    return parts


def _cohen(codes: IndexArray, values: int, item_index: IndexArray, items: int) -> Parts:
    first, second = codes[:, 0], codes[:, 1]
    eye = np.eye(values)
    sums = _linear(
        np.column_stack([(first == second).astype(np.float64), np.ones(first.size), eye[first], eye[second]]),
        item_index,
        items,
    )

    def parts(weights: FloatArray) -> tuple[FloatArray, FloatArray]:
        s = sums(weights)
        n = s[:, 1]
        chance = np.einsum("bc,bc->b", s[:, 2 : 2 + values], s[:, 2 + values :]) / (n * n)
        return 1.0 - s[:, 0] / n, 1.0 - chance

    return parts


def _fleiss(counts: FloatArray, coders: int, item_index: IndexArray, items: int) -> Parts:
    sums = _linear(
        np.column_stack([(counts * counts).sum(axis=1), np.ones(counts.shape[0]), counts]), item_index, items
    )
    m = float(coders)

    def parts(weights: FloatArray) -> tuple[FloatArray, FloatArray]:
        s = sums(weights)
        units = s[:, 1]
        observed = (s[:, 0] - units * m) / (units * m * (m - 1.0))
        shares = s[:, 2:] / (units * m)[:, None]
        return 1.0 - observed, 1.0 - (shares * shares).sum(axis=1)

    return parts


def _alpha_nominal(counts: FloatArray, graded: FloatArray, item_index: IndexArray, items: int) -> Parts:
    diagonal = (counts * (counts - 1.0)).sum(axis=1) / (graded - 1.0)
    sums = _linear(np.column_stack([diagonal, graded, counts]), item_index, items)

    def parts(weights: FloatArray) -> tuple[FloatArray, FloatArray]:
        s = sums(weights)
        n = s[:, 1]
        pooled = s[:, 2:]
        return (n - s[:, 0]) / n, (n * n - (pooled * pooled).sum(axis=1)) / (n * (n - 1.0))

    return parts


def _alpha_interval(
    counts: FloatArray, graded: FloatArray, domain: FloatArray, item_index: IndexArray, items: int
) -> Parts:
    x = domain - domain.mean()  # alpha is shift-invariant; centring keeps the sums of squares exact
    s1, s2 = counts @ x, counts @ (x * x)
    within = 2.0 * (graded * s2 - s1 * s1) / (graded - 1.0)
    sums = _linear(np.column_stack([within, graded, s1, s2]), item_index, items)

    def parts(weights: FloatArray) -> tuple[FloatArray, FloatArray]:
        s = sums(weights)
        n = s[:, 1]
        return s[:, 0] / n, 2.0 * (n * s[:, 3] - s[:, 2] ** 2) / (n * (n - 1.0))

    return parts


def _midranks(pooled: FloatArray) -> FloatArray:
    """Krippendorff's ordinal positions ``h_c = sum_{g <= c} n_g - n_c / 2`` for each row of counts."""
    ranks: FloatArray = np.cumsum(pooled, axis=-1) - 0.5 * pooled
    return ranks


def _alpha_ordinal(counts: FloatArray, graded: FloatArray, item_index: IndexArray, items: int) -> Parts:
    # delta_ck = (h_c - h_k)^2 on midranks that move with each resample's pooled counts, so the
    # observed part needs each unit's sum of h per resample: (counts @ h)^2, summed by item.
    linear = _linear(
        np.column_stack([graded, counts, counts * (2.0 * graded / (graded - 1.0))[:, None]]),
        item_index,
        items,
    )
    values = counts.shape[1]
    scale = 2.0 / (graded - 1.0)

    def parts(weights: FloatArray) -> tuple[FloatArray, FloatArray]:
        s = linear(weights)
        n, pooled, squares = s[:, 0], s[:, 1 : 1 + values], s[:, 1 + values :]
        h = _midranks(pooled)
        h -= (pooled * h).sum(axis=1, keepdims=True) / n[:, None]
        unit_sums = counts @ h.T  # units x resamples
        cross = _per_item((unit_sums * unit_sums) * scale[:, None], item_index, items)
        observed = (squares * h * h).sum(axis=1) - np.einsum("bi,ib->b", weights, cross)
        spread = n * (pooled * h * h).sum(axis=1) - (pooled * h).sum(axis=1) ** 2
        return observed / n, 2.0 * spread / (n * (n - 1.0))

    return parts


@dataclass(frozen=True)
class _Figure:
    parts: Parts
    #: The largest disagreement ``delta`` between two observed grades (the zero-spread floor).
    largest: float


def _coefficient(parts: tuple[FloatArray, FloatArray]) -> FloatArray:
    observed, expected = parts
    with np.errstate(divide="ignore", invalid="ignore"):
        value: FloatArray = np.where(expected > 0.0, 1.0 - observed / expected, np.nan)
    return value


def _percentile_bounds(
    draws: Mapping[str, FloatArray], level: float
) -> dict[str, tuple[float, float] | None]:
    """Each figure's two-sided percentile bounds over its draws without NaN (None when none is left).

    The figures whose kept draws are equally many go through one ``np.quantile`` along rows: a row's
    quantiles are its own (the same floats as a call on the row alone), without a call per figure.
    """
    tail = 0.5 * (1.0 - level)
    kept = {name: values[~np.isnan(values)] for name, values in draws.items()}
    sizes: dict[int, list[str]] = {}
    for name, values in kept.items():
        sizes.setdefault(values.size, []).append(name)
    bounds: dict[str, tuple[float, float] | None] = dict.fromkeys(sizes.get(0, ()))
    for size, names in sizes.items():
        if size:
            rows = np.quantile(np.stack([kept[name] for name in names]), [tail, 1.0 - tail], axis=1)
            bounds.update(zip(names, zip(rows[0].tolist(), rows[1].tolist(), strict=True), strict=True))
    return bounds


def _interval(
    estimate: float,
    expected: float,
    bounds: tuple[float, float] | None,
    largest: float,
    items: int,
    level: float,
) -> AgreementInterval:
    if math.isnan(estimate):
        return AgreementInterval(math.nan, math.nan, math.nan, level)
    low, high = bounds if bounds is not None else (estimate, estimate)
    if estimate == 1.0 and low == high:
        z2 = normal_quantile(level) ** 2
        low = 1.0 - (z2 / (items + z2)) * largest / expected
    return AgreementInterval(estimate, min(low, estimate), max(high, estimate), level)


def _bootstrap(
    figures: Mapping[str, _Figure], items: int, weights: Iterable[FloatArray], level: float
) -> dict[str, AgreementInterval]:
    """Each figure's estimate and percentile interval over blocks of item weights (one draw serves all).

    The core of :func:`agreement`, which passes its seeded multinomial blocks
    (:func:`~trialscore.stats._resampling.item_weights`); the coverage simulation passes weights of its own.
    """
    estimates = {}
    for name, figure in figures.items():
        observed, expected = figure.parts(np.ones((1, items)))
        estimates[name] = (float(_coefficient((observed, expected))[0]), float(expected[0]))
    replicates: dict[str, list[FloatArray]] = {name: [] for name in figures}
    for block in weights:
        for name, figure in figures.items():
            replicates[name].append(_coefficient(figure.parts(block)))
    bounds = _percentile_bounds({name: np.concatenate(draws) for name, draws in replicates.items()}, level)
    return {
        name: _interval(*estimates[name], bounds[name], figure.largest, items, level)
        for name, figure in figures.items()
    }


def _checked_units(grades: ArrayLike, items: Sequence[Hashable] | None) -> tuple[FloatArray, IndexArray, int]:
    values = np.asarray(grades, dtype=np.float64) if np.asarray(grades).dtype != object else None
    if values is None or values.ndim != 2:
        raise EvaluationError(
            "grades must be a units x coders array of numbers (NaN where missing); "
            f"got shape {np.asarray(grades).shape}"
        )
    if values.shape[1] < 2:
        raise EvaluationError(f"grades must have at least 2 coders (columns); got {values.shape[1]}")
    if np.isinf(values).any():
        raise EvaluationError("grades must be finite numbers or NaN (missing); got an infinity")
    if items is None:
        index = np.arange(values.shape[0], dtype=np.int64)
    else:
        keys = list(items)
        if len(keys) != values.shape[0]:
            raise EvaluationError(
                f"items must hold one key per unit; got {len(keys)} keys for {values.shape[0]} units"
            )
        positions: dict[Hashable, int] = {}
        index = np.array([positions.setdefault(key, len(positions)) for key in keys], dtype=np.int64)
    return values, index, int(index.max()) + 1 if index.size else 0


@dataclass(frozen=True)
class _Coded:
    """The units with at least 2 grades, counted, and the figures to bootstrap over their items."""

    units: int
    items: int
    #: Units every coder graded (Fleiss' kappa's).
    complete: int
    categories: int
    #: Units both coders graded, for each pair of coders in ``combinations`` order.
    pair_units: tuple[int, ...]
    figures: dict[str, _Figure]


def _coded(values: FloatArray, item_index: IndexArray, scale: str) -> _Coded:
    """The figures of :func:`agreement` on checked grades (units x coders) and each unit's item index."""
    pairable = (~np.isnan(values)).sum(axis=1) >= 2
    values, item_index = values[pairable], item_index[pairable]
    _, item_index = np.unique(item_index, return_inverse=True)
    item_count = int(item_index.max()) + 1 if item_index.size else 0
    if item_count < 2:
        raise InsufficientDataError(
            f"grades must hold units with at least 2 grades on at least 2 items; got {item_count} such items",
            unit="items",
            needed=2,
            got=item_count,
        )
    domain = distinct(values[~np.isnan(values)])
    codes = np.where(np.isnan(values), -1, np.searchsorted(domain, np.nan_to_num(values))).astype(np.int64)
    counts = np.stack([(codes == c).sum(axis=1) for c in range(domain.size)], axis=1).astype(np.float64)
    graded = counts.sum(axis=1)
    q = max(domain.size, 2)
    figures: dict[str, _Figure] = {
        "percent": _Figure(_percent(counts, graded, item_index, item_count, 1.0), 1.0),
        "pabak": _Figure(_percent(counts, graded, item_index, item_count, (q - 1.0) / q), 1.0),
    }
    if domain.size == 2:
        figures["prevalence"] = _Figure(_prevalence(counts, item_index, item_count), 2.0)
    if scale == "nominal":
        figures["alpha"] = _Figure(_alpha_nominal(counts, graded, item_index, item_count), 1.0)
    elif scale == "interval":
        alpha = _alpha_interval(counts, graded, domain, item_index, item_count)
        figures["alpha"] = _Figure(alpha, float(np.ptp(domain)) ** 2 if domain.size else 0.0)
    else:
        span = float(np.ptp(_midranks(counts.sum(axis=0)))) if domain.size else 0.0
        figures["alpha"] = _Figure(_alpha_ordinal(counts, graded, item_index, item_count), span**2)
    complete = graded == values.shape[1]
    if complete.any():
        figures["fleiss"] = _Figure(
            _fleiss(counts[complete], values.shape[1], item_index[complete], item_count), 1.0
        )
    pair_units = []
    for first, second in combinations(range(values.shape[1]), 2):
        both = (codes[:, first] >= 0) & (codes[:, second] >= 0)
        pair_units.append(int(both.sum()))
        if both.any():
            figures[f"cohen {first} {second}"] = _Figure(
                _cohen(codes[both][:, [first, second]], domain.size, item_index[both], item_count), 1.0
            )
    return _Coded(
        int(values.shape[0]), item_count, int(complete.sum()), int(domain.size), tuple(pair_units), figures
    )


def agreement(
    grades: ArrayLike,
    items: Sequence[Hashable] | None = None,
    *,
    coders: Sequence[Hashable] | None = None,
    scale: str = "nominal",
    level: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
) -> Agreement:
    """Percent agreement, Cohen's kappa (each pair), Fleiss' kappa, Krippendorff's alpha and PABAK.

    ``grades`` is units x coders, NaN where a coder did not grade a unit; ``items[u]`` is unit
    ``u``'s item (default: each unit its own item), the unit of the bootstrap; ``coders`` names
    the columns (default 0, 1, ...).  ``scale`` (``"nominal"``, ``"ordinal"`` or ``"interval"``) is
    Krippendorff's level of measurement; the kappas and PABAK treat grades as categories.
    Formulas in the module docstring.

    >>> a = [1, 1, 0, 1, 0, 0, 1, 1, 1, 0, 1, 0]
    >>> b = [1, 0, 0, 1, 0, 1, 1, 1, 1, 0, 1, 1]
    >>> result = agreement(np.column_stack([a, b]), coders=["gpt", "claude"])
    >>> print(result.percent_agreement, round(result.cohen_kappa[0].estimate, 4))
    0.75 [0.5, 1] 0.4706
    >>> result.to_dict()["pabak"]
    {'estimate': 0.5, 'low': 0.0, 'high': 1.0, 'level': 0.95}
    """
    scale = check_choice(scale, "scale", SCALES)
    level = check_probability(level, "level")
    resamples = check_integer(resamples, "resamples", 10)
    seed = check_integer(seed, "seed", 0)
    values, item_index, _ = _checked_units(grades, items)
    names = tuple(range(values.shape[1])) if coders is None else tuple(coders)
    if len(names) != values.shape[1]:
        raise EvaluationError(
            f"coders must name each of the {values.shape[1]} columns; got {len(names)} names"
        )
    coded = _coded(values, item_index, scale)
    weights = item_weights(coded.items, resamples, seed, _BLOCK_CELLS)
    intervals = _bootstrap(coded.figures, coded.items, weights, level)
    missing = AgreementInterval(math.nan, math.nan, math.nan, level)
    kappas = []
    for (first, second), units in zip(combinations(range(len(names)), 2), coded.pair_units, strict=True):
        pair = intervals.get(f"cohen {first} {second}", missing)
        kappas.append(
            PairKappa(names[first], names[second], units, pair.estimate, pair.low, pair.high, level)
        )
    return Agreement(
        coders=names,
        scale=scale,
        items=coded.items,
        units=coded.units,
        complete_units=coded.complete,
        unpaired_units=values.shape[0] - coded.units,
        categories=coded.categories,
        percent_agreement=intervals["percent"],
        cohen_kappa=tuple(kappas),
        fleiss_kappa=intervals.get("fleiss", missing),
        krippendorff_alpha=intervals["alpha"],
        pabak=intervals["pabak"],
        prevalence_index=intervals.get("prevalence"),
        method=f"percentile bootstrap over {coded.items} items ({resamples} resamples, seed {seed})",
    )


def judge_agreement(
    table: object,
    *,
    scale: str = "nominal",
    level: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
) -> JudgeAgreement:
    """Inter-judge and intra-judge agreement from a long table of grades (:func:`grade_table`).

    Inter-judge: units are the graded trials, coders the judges, each judge's grade its first
    repeat (the one a single-call pipeline stores).  Intra-judge: for each judge, units are
    the trials it graded, coders its repeats.  The bootstrap resamples items in both.

    >>> rows = [(item, 0, judge, repeat, int(item % 3 > 0 or (judge == "b" and repeat == 1)))
    ...         for item in range(12) for judge in "ab" for repeat in (0, 1)]
    >>> result = judge_agreement(rows)
    >>> print(result.inter.percent_agreement, sorted(result.intra))
    1 [0.7575, 1] ['a', 'b']
    >>> round(result.intra["b"].krippendorff_alpha.estimate, 4)
    -0.15
    """
    grades = table if isinstance(table, GradeTable) else grade_table(table)
    options = {"scale": scale, "level": level, "resamples": resamples, "seed": seed}
    inter = None
    if len(grades.judges) >= 2:
        units, items = grades.inter_judge()
        inter = agreement(units, items.tolist(), coders=grades.judges, **options)  # type: ignore[arg-type]
    intra: dict[Hashable, Agreement] = {}
    for judge in grades.judges:
        units, items = grades.intra_judge(judge)
        if units.shape[1] >= 2 and ((~np.isnan(units)).sum(axis=1) >= 2).any():
            names = tuple(f"repeat {key}" for key in grades.repeats)
            intra[judge] = agreement(units, items.tolist(), coders=names, **options)  # type: ignore[arg-type]
    return JudgeAgreement(inter, MappingProxyType(intra))
