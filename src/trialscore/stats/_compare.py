r"""Is the change real?  Paired, clustered and unpaired comparisons of two runs.

**Paired** (:func:`compare_paired`, both runs on the same items): with
:math:`d_i = s^{B}_i - s^{A}_i` the per-item difference of any bank estimator
(candidate ``B`` minus baseline ``A``) over the ``m`` items present in both runs,
two tests answer two questions (``estimand``, stated in every result):

* ``"population"`` (the default): the mean change over a population of items like
  these.  The paired t-test with :math:`m - 1` degrees of freedom on a standard
  error floored by trial noise:

  .. math::

      \hat\delta = \bar d, \qquad
      \mathrm{SE}^2 = \frac{\max\bigl(s_d^2,\ \tfrac18(\bar v^A + \bar v^B)\bigr)}{m}, \qquad
      \hat\delta \pm t_{m-1}^{-1}(1 - \alpha/2)\,\mathrm{SE},

  with :math:`s_d^2` the sample variance of the :math:`d_i` and :math:`\bar v` a
  run's mean over the compared items of :math:`v_i`, the sampling variance of the
  item's estimate from its :math:`n_i` trials.  For 0/1 trials with :math:`c_i`
  passes, :math:`v_i` is the variance of the estimator under
  :math:`\mathrm{Binomial}(n_i, \tilde p_i)` at the Jeffreys plug-in
  :math:`\tilde p_i = (c_i + 1/2)/(n_i + 1)`, times :math:`(n_i+1)/(n_i+2)`; for
  ``avg`` this is exactly the Jeffreys posterior mean of :math:`p_i(1-p_i)/n_i`,
  :math:`(c_i+\tfrac12)(n_i-c_i+\tfrac12)/((n_i+1)(n_i+2)\,n_i)`, positive even for
  a saturated item.  For graded scores :math:`v_i` is the item's unbiased trial
  variance over :math:`n_i` (0 for one trial).  Under "no difference" and no
  between-item spread of the changes, :math:`\mathbb{E}[s_d^2] = \bar v^A + \bar v^B`;
  the floor, an eighth of that, binds only when the differences spread far less than
  trial noise alone makes them, so finitely many trials never give a zero-width
  interval, while the test keeps the paired t-test's error rate and power with equal
  or unequal trial counts (docs/stats.md: a floor at the noisier run's noise, the
  rule before, cost 3-7 points of power with 10 trials against 3).
* ``"items"``: did *these* items' pass rates change?  The re-split permutation test
  of :mod:`trialscore.stats._permutation` (0/1 trials): exact for any number of
  items and trials, and more powerful with few items of several trials each.

The verdict is read off the interval (stated in every result): ``identical`` when
every compared item scores the same in both runs; otherwise ``improvement`` when
the interval lies above 0, ``regression`` when it lies below 0, else
``within_noise``.  ``p_value`` is the same test's two-sided p-value, so
:math:`p < \alpha` exactly when the interval excludes 0, and the minimum
detectable effect at 80% power is that of this test.  A difference of scores in
[0, 1] lies in [-1, 1]: intervals are clipped there (``interval.clipped_to`` and a
note say so), and a design whose MDE exceeds 1 has ``mde=None`` and a note "too
few items to test".  The sign-flip p-value
(:func:`~trialscore.stats._permutation.sign_flip_p_value`) is reported as an extra,
never the verdict's rule: on tied, discrete differences it is conservative.  Items
present in only one run are listed in the result, never silently dropped.

**Clustered** (:func:`compare_clustered`, the same items grouped in ``G``
clusters): :math:`\hat\delta = \bar d` with the cluster-robust SE of the
:math:`d_i` (:func:`~trialscore.stats.clustered_standard_error`) under the same
floor, interval :math:`\hat\delta \pm t_{G-1}^{-1}(1 - \alpha/2)\,\mathrm{SE}` and the
two-sided t-test at :math:`G - 1` degrees of freedom behind the verdict.

**Unpaired** (:func:`compare_unpaired`, different item sets): Welch's
t-interval and test on the two sets of per-item values, each run's variance
floored by its mean trial noise; the verdict is read off the interval in the same
way.  Bayes@N comparisons are in :mod:`trialscore.stats._compare_bayes`.

References
----------
Student (W. S. Gosset), "The probable error of a mean", Biometrika 6 (1908);
H. Jeffreys, *Theory of Probability* (1961), for the Beta(1/2, 1/2) prior;
E. Miller, "Adding Error Bars to Evals", arXiv:2411.00640 (2024).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from typing import cast

import numpy as np
from numpy.typing import NDArray

from trialscore._validate import check_choice, check_integer, check_probability
from trialscore.core._kernels import Tau
from trialscore.core.bank import Bank
from trialscore.core.metrics import Metric, MetricLike, resolve_metric
from trialscore.errors import EvaluationError, InsufficientDataError, parameter, worded
from trialscore.stats import _scipy
from trialscore.stats._comparison import (
    ESTIMANDS,
    Comparison,
    Sides,
    bounded_interval,
    comparison,
    in_unit,
)
from trialscore.stats._intervals import Interval, clustered_interval
from trialscore.stats._pairing import Items, Run, matched, run_items
from trialscore.stats._permutation import resplit_test, sign_flip_p_value

__all__ = [
    "ESTIMANDS",
    "Comparison",
    "Run",
    "compare_clustered",
    "compare_paired",
    "compare_unpaired",
]

FloatArray = NDArray[np.float64]

#: Degrees of freedom standing for the normal reference of the re-split test's MDE.
NORMAL_DF = 10**6

#: The SE floor is this share of the variance trial noise alone gives a difference (both runs' noise).
FLOOR_SHARE = 0.125

#: An unpaired run's variance of its item values is floored at this share of its mean trial noise.
UNPAIRED_FLOOR_SHARE = 0.5

#: Below this many paired items the floored t-test's error rate depends on the items (docs/stats.md).
FEW_ITEMS = 20

#: Measured false-positive rates of the floored paired t-test at alpha 0.05 with few items (lowest,
#: highest over five item populations and 1/1, 5/5, 10/3 and 3/10 trials, 10,000 replications each;
#: tests/stats/test_compare_simulation.py): items -> (lowest, highest).
SMALL_SUITE_RATES = {5: (0.0001, 0.05), 10: (0.0042, 0.0608)}


def _floor(noise_a: FloatArray, noise_b: FloatArray) -> float:
    """The least variance of one difference: ``FLOOR_SHARE`` of both runs' mean trial noise."""
    return FLOOR_SHARE * (float(noise_a.mean()) + float(noise_b.mean()))


def _few_items_note(items: int) -> tuple[str, ...]:
    """The measured error rate of the floored t-test below ``FEW_ITEMS`` items."""
    if items >= FEW_ITEMS:
        return ()
    measured = max((size for size in SMALL_SUITE_RATES if size <= items), default=None)
    if measured is None:
        rate = f"not measured below {min(SMALL_SUITE_RATES)} items"
    else:
        low, high = SMALL_SUITE_RATES[measured]
        rate = f"measured {low:.2%}-{high:.2%} at alpha 0.05 with {measured} items, mostly conservative"
    exact = parameter("estimand='items'")
    return (
        worded(
            f"few items ({items}, under {FEW_ITEMS}): the t-test's false-positive rate depends on the items' "
            f"pass rates ({rate}; docs/stats.md); {exact}, the exact "
            f"test of these items, is more powerful when each item has several trials"
        ),
    )


def _items(
    baseline: Run,
    candidate: Run,
    metric: MetricLike,
    k: int | None,
    tau: Tau | None,
    ids_baseline: Sequence[Hashable] | None = None,
    ids_candidate: Sequence[Hashable] | None = None,
) -> tuple[Metric, Items, Items]:
    """``metric`` resolved (per-item values) and both runs' items under it."""
    resolved = resolve_metric(metric, per_item=True)
    a = run_items(baseline, ids_baseline, resolved, k, tau, "baseline")
    return resolved, a, run_items(candidate, ids_candidate, resolved, k, tau, "candidate")


def compare_paired(
    baseline: Run,
    candidate: Run,
    metric: MetricLike = "avg",
    k: int | None = None,
    tau: Tau | None = None,
    *,
    ids_baseline: Sequence[Hashable] | None = None,
    ids_candidate: Sequence[Hashable] | None = None,
    alpha: float = 0.05,
    permutations: int = 10_000,
    seed: int = 0,
    estimand: str = "population",
) -> Comparison:
    """Paired comparison of two runs on the same items (formulas in the module docstring).

    A run is a :class:`~trialscore.core.bank.Bank`, an items x trials matrix, ragged
    outcome lists, or a mapping ``{item_id: outcomes}``.  Items are matched by
    id (mapping keys, or ``ids_baseline`` / ``ids_candidate``), else by
    position.  ``metric`` is any metric with per-item values, by name or object (``"avg"``
    also takes graded scores); a metric better lower calls a fall an improvement.

    ``estimand="population"`` (the default): the verdict is read off the floored
    paired-t interval; the sign-flip p-value (``permutations`` seeded sign patterns
    when exact enumeration is too large) is reported beside it, and ``permutations=0``
    skips it.  ``estimand="items"``: the re-split permutation test of these items
    (:func:`~trialscore.stats._permutation.resplit_test`, 0/1 trials only) with
    ``permutations`` seeded re-splits gives the p-value, the interval and the verdict.

    Two items whose differences agree get an interval from trial noise, never a
    zero-width one, and never outside [-1, 1]:

    >>> print(compare_paired([[1, 1, 0, 0, 0]] * 2, [[1, 1, 1, 0, 0]] * 2).interval)
    0.2 [-0.717, 1] (95% paired t, n=2, clipped to [-1, 1])

    >>> old = {"q1": [1, 1, 1, 0], "q2": [1, 0, 0, 0], "q3": [1, 1, 1, 1], "q4": [0, 1, 1, 1]}
    >>> new = {"q1": [1, 1, 0, 0], "q2": [0, 0, 0, 0], "q3": [1, 1, 1, 1], "q5": [1, 1, 1, 1]}
    >>> result = compare_paired(old, new)
    >>> result.verdict, result.paired_items, result.only_in_baseline, result.only_in_candidate
    ('within_noise', 3, ('q4',), ('q5',))
    >>> round(result.delta, 4), round(result.p_value, 3), result.p_value_sign_flip
    (-0.1667, 0.184, 0.5)
    """
    alpha = check_probability(alpha, "alpha")
    permutations = check_integer(permutations, "permutations", 0)
    estimand = check_choice(estimand, "estimand", {name: name for name in ESTIMANDS})
    resolved, a, b = _items(baseline, candidate, metric, k, tau, ids_baseline, ids_candidate)
    rows_a, rows_b, only_a, only_b = matched(a, b)
    if rows_a.size < 2:
        raise InsufficientDataError(
            f"baseline and candidate must share at least 2 items for a paired comparison; "
            f"got {rows_a.size} (use compare_unpaired for different item sets)",
            unit="items",
            needed=2,
            got=int(rows_a.size),
        )
    paired_a, paired_b = a.values[rows_a], b.values[rows_b]
    sides = Sides(
        str(metric), resolved, k, alpha, a, b, paired_a, paired_b, int(rows_a.size), only_a, only_b,
        ESTIMANDS[estimand],
    )  # fmt: skip
    differences = paired_b - paired_a
    items = int(differences.size)
    identical = bool(np.all(differences == 0))
    if estimand == "items":
        return _these_items(sides, rows_a, rows_b, tau, identical, permutations, seed)
    unit = in_unit(paired_a, paired_b)
    delta = float(differences.mean())
    spread = float(differences.var(ddof=1))
    floor = _floor(a.noise[rows_a], b.noise[rows_b])
    se = math.sqrt(max(spread, floor) / items)
    df = items - 1
    half = float(_scipy.stdtrit(df, 1 - alpha / 2)) * se
    interval = bounded_interval(delta, half, half, alpha, "paired t", items, se, unit)
    test = f"paired t-test (df = items - 1) with the SE floored at {FLOOR_SHARE:g} of both runs' trial noise"
    return comparison(
        sides, "paired", interval, df, test,
        identical=identical, unit=unit, tested=items,
        method=f"paired t (df={df}" + (", SE at the trial-noise floor)" if floor > spread else ")"),
        notes=_few_items_note(items),
        se_floor=math.sqrt(floor / items),
        sign_flip=sign_flip_p_value(differences, permutations, seed) if permutations else (None, None),
    )  # fmt: skip


def _these_items(
    sides: Sides,
    rows_a: NDArray[np.int64],
    rows_b: NDArray[np.int64],
    tau: Tau | None,
    identical: bool,
    permutations: int,
    seed: int,
) -> Comparison:
    """The paired comparison for these items: the re-split permutation test (0/1 trials)."""
    for name, run in (("baseline", sides.a), ("candidate", sides.b)):
        if run.bank is None:
            raise EvaluationError(
                f"estimand='items' re-splits 0/1 trials between the runs; {name} holds graded scores"
            )
    bank_a, bank_b = cast("Bank", sides.a.bank), cast("Bank", sides.b.bank)
    alpha = sides.alpha
    test = resplit_test(
        bank_a.n[rows_a], bank_a.c[rows_a], bank_b.n[rows_b], bank_b.c[rows_b], sides.resolved, sides.k, tau,
        alpha=alpha, permutations=permutations, seed=seed,
    )  # fmt: skip
    items = int(rows_a.size)
    clipped = test.low == -1.0 or test.high == 1.0
    interval = Interval(
        test.delta, test.low, test.high, 1 - alpha, "re-split permutation", items, test.sd,
        (-1.0, 1.0) if clipped else None,
    )  # fmt: skip
    return comparison(
        sides, "paired, these items", interval, NORMAL_DF, test.method,
        identical=identical, unit=True, tested=items, p_value=test.p_value,
    )  # fmt: skip


def compare_unpaired(
    baseline: Run,
    candidate: Run,
    metric: MetricLike = "avg",
    k: int | None = None,
    tau: Tau | None = None,
    *,
    alpha: float = 0.05,
) -> Comparison:
    r"""Comparison of two runs on different item sets: Welch's t-interval and test.

    .. math::

        \hat\delta = \bar s_B - \bar s_A, \qquad
        \mathrm{SE} = \sqrt{\tilde s_A^2/m_A + \tilde s_B^2/m_B}, \qquad
        \nu = \mathrm{SE}^4 \Big/ \Bigl(\frac{(\tilde s_A^2/m_A)^2}{m_A - 1}
              + \frac{(\tilde s_B^2/m_B)^2}{m_B - 1}\Bigr)

    with :math:`\tilde s^2 = \max(s^2, \bar v / 2)`, each run's sample variance of its
    per-item values floored by half its mean trial noise :math:`\bar v` (defined as in
    :func:`compare_paired`; the values' variance is at least :math:`\bar v` in
    expectation): one trial an item with no spread does not make a difference exact.
    While the spreads are above the floors this is Welch's test
    (``scipy.stats.ttest_ind(equal_var=False)``).  ``identical`` here means both
    runs have the same multiset of per-item values.

    >>> result = compare_unpaired([[1, 1], [1, 0], [1, 1]], [[0, 0], [1, 0], [0, 0], [0, 1]])
    >>> result.verdict, round(result.delta, 4), round(result.p_value, 4)
    ('within_noise', -0.5833, 0.0513)
    >>> print(compare_unpaired([[1], [1]], [[0], [0]]).interval)
    -1 [-1, 0.07566] (95% welch t, n=4, clipped to [-1, 1])
    """
    alpha = check_probability(alpha, "alpha")
    resolved, a, b = _items(baseline, candidate, metric, k, tau)
    for name, run in (("baseline", a), ("candidate", b)):
        if run.values.size < 2:
            raise InsufficientDataError(
                f"{name} must hold at least 2 items for an unpaired comparison; got {run.values.size}",
                unit="items",
                needed=2,
                got=int(run.values.size),
            )
    values_a, values_b = a.values, b.values
    share_a = max(float(values_a.var(ddof=1)), UNPAIRED_FLOOR_SHARE * float(a.noise.mean())) / values_a.size
    share_b = max(float(values_b.var(ddof=1)), UNPAIRED_FLOOR_SHARE * float(b.noise.mean())) / values_b.size
    se = math.sqrt(share_a + share_b)
    delta = float(values_b.mean() - values_a.mean())
    unit = in_unit(values_a, values_b)
    if se > 0:
        df = se**4 / (share_a**2 / (values_a.size - 1) + share_b**2 / (values_b.size - 1))
        half = float(_scipy.stdtrit(df, 1 - alpha / 2)) * se
    else:  # graded scores, every one equal within each run: no test, the difference is exact
        df, half = math.inf, 0.0
    interval = bounded_interval(
        delta, half, half, alpha, "welch t", int(values_a.size + values_b.size), se, unit
    )
    identical = values_a.size == values_b.size and bool(np.array_equal(np.sort(values_a), np.sort(values_b)))
    return comparison(
        Sides(str(metric), resolved, k, alpha, a, b, values_a, values_b, 0),
        "unpaired", interval, df, "Welch t-test, each run's variance floored by its trial noise",
        identical=identical, unit=unit, tested=int(min(values_a.size, values_b.size)),
        method="welch t", same="both runs have the same item values",
    )  # fmt: skip


def compare_clustered(
    baseline: Run,
    candidate: Run,
    clusters: Mapping[Hashable, Hashable],
    metric: MetricLike = "avg",
    k: int | None = None,
    tau: Tau | None = None,
    *,
    ids_baseline: Sequence[Hashable] | None = None,
    ids_candidate: Sequence[Hashable] | None = None,
    alpha: float = 0.05,
) -> Comparison:
    r"""Paired comparison of two runs whose items come in clusters (formulas in the module docstring).

    Runs and item ids as in :func:`compare_paired` (ids are required: mapping
    keys or ``ids_baseline`` / ``ids_candidate``); ``clusters`` maps every
    shared item id to its cluster key.  The verdict reads the two-sided
    cluster-robust t-test at ``G - 1`` degrees of freedom, read off the
    interval that test inverts (so the two always agree).  The clustered SE is
    floored by trial noise, as in :func:`compare_paired`.

    >>> old = {"q1": [1, 1], "q2": [1, 0], "q3": [0, 0], "q4": [1, 1], "q5": [0, 1], "q6": [1, 1]}
    >>> new = {"q1": [1, 1], "q2": [1, 1], "q3": [1, 0], "q4": [1, 1], "q5": [0, 1], "q6": [1, 1]}
    >>> passage = {"q1": "a", "q2": "a", "q3": "b", "q4": "b", "q5": "c", "q6": "c"}
    >>> result = compare_clustered(old, new, passage)
    >>> result.verdict, round(result.delta, 4), round(result.se, 4), round(result.p_value, 3)
    ('within_noise', 0.1667, 0.0833, 0.184)
    """
    alpha = check_probability(alpha, "alpha")
    resolved, a, b = _items(baseline, candidate, metric, k, tau, ids_baseline, ids_candidate)
    if a.keys is None or b.keys is None:
        raise EvaluationError("compare_clustered needs item ids for both runs to look up each item's cluster")
    rows_a, rows_b, only_a, only_b = matched(a, b)
    shared = [a.keys[row] for row in rows_a.tolist()]
    missing = [key for key in shared if key not in clusters]
    if missing:
        raise EvaluationError(
            f"clusters must give every compared item a cluster; got none for {missing[0]!r}"
        )
    if len(shared) < 2:
        raise InsufficientDataError(
            f"baseline and candidate must share at least 2 items; got {len(shared)}",
            unit="items",
            needed=2,
            got=len(shared),
        )
    paired_a, paired_b = a.values[rows_a], b.values[rows_b]
    differences = paired_b - paired_a
    keys = [clusters[key] for key in shared]
    # The same trial-noise floor as compare_paired.
    floor = math.sqrt(_floor(a.noise[rows_a], b.noise[rows_b]) / len(shared))
    clustered = clustered_interval(differences, keys, 1 - alpha, se_floor=floor)
    unit = in_unit(paired_a, paired_b)
    delta, se, df = clustered.estimate, float(clustered.se or 0.0), len(set(keys)) - 1
    half = clustered.high - delta
    interval = bounded_interval(delta, half, half, alpha, f"paired {clustered.method}", clustered.n, se, unit)
    return comparison(
        Sides(str(metric), resolved, k, alpha, a, b, paired_a, paired_b, len(shared), only_a, only_b),
        "paired, clustered", interval, df,
        f"cluster-robust paired t-test, {df + 1} clusters, df {df}, SE floored by trial noise",
        identical=bool(np.all(differences == 0)), unit=unit, tested=df + 1, se_floor=floor,
    )  # fmt: skip
