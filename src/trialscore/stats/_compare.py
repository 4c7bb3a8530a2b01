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
from dataclasses import dataclass
from typing import cast

import numpy as np
from numpy.typing import NDArray

from trialscore._record import Record
from trialscore._validate import check_choice, check_integer, check_probability
from trialscore.core._kernels import Tau
from trialscore.core.bank import Bank
from trialscore.core.metrics import Metric, MetricLike, resolve_metric
from trialscore.errors import EvaluationError, InsufficientDataError, parameter, worded
from trialscore.stats import _scipy
from trialscore.stats._intervals import Interval, clustered_interval
from trialscore.stats._pairing import Items, Run, matched, run_items
from trialscore.stats._permutation import resplit_test, sign_flip_p_value
from trialscore.stats._power import bounded_effect

__all__ = [
    "ESTIMANDS",
    "Comparison",
    "Run",
    "compare_clustered",
    "compare_paired",
    "compare_unpaired",
]

FloatArray = NDArray[np.float64]

#: Power at which the minimum detectable effect is quoted.
MDE_POWER = 0.8

#: Degrees of freedom standing for the normal reference of the re-split test's MDE.
NORMAL_DF = 10**6

#: The SE floor is this share of the variance trial noise alone gives a difference (both runs' noise).
FLOOR_SHARE = 0.125

#: An unpaired run's variance of its item values is floored at this share of its mean trial noise.
UNPAIRED_FLOOR_SHARE = 0.5

#: What each paired test answers (``Comparison.estimand``), by the ``estimand`` argument.
ESTIMANDS = {
    "population": "population: the mean change over items like these (items are a sample)",
    "items": "these items: did these items' pass rates change (the items are fixed)",
}

#: Below this many paired items the floored t-test's error rate depends on the items (docs/stats.md).
FEW_ITEMS = 20

#: Measured false-positive rates of the floored paired t-test at alpha 0.05 with few items (lowest,
#: highest over five item populations and 1/1, 5/5, 10/3 and 3/10 trials, 10,000 replications each;
#: tests/stats/test_compare_simulation.py): items -> (lowest, highest).
SMALL_SUITE_RATES = {5: (0.0001, 0.05), 10: (0.0042, 0.0608)}


def _floor(noise_a: FloatArray, noise_b: FloatArray) -> float:
    """The least variance of one difference: ``FLOOR_SHARE`` of both runs' mean trial noise."""
    return FLOOR_SHARE * (float(noise_a.mean()) + float(noise_b.mean()))


@dataclass(frozen=True)
class Comparison(Record):
    """The answer to "did the candidate run change the score?", with the numbers behind it.

    ``delta = candidate - baseline`` on the compared items; ``interval`` is
    the confidence interval of ``delta`` at level ``1 - alpha`` from the same
    test as ``p_value`` and ``verdict`` (clipped to [-1, 1] for scores in [0, 1],
    and then ``interval.clipped_to`` says so); ``mde`` the smallest true change that
    test detects with 80% power, None when no change of a score in [0, 1] reaches
    that power (then a note says the group has too few items to test).  ``estimand``
    says what the test answers (:data:`ESTIMANDS`); ``notes`` are the caveats the
    output should print.  Paired comparisons also report ``se_floor`` (the
    trial-noise floor of the SE) and, unless ``permutations=0``, the sign-flip
    permutation p-value as an extra that the verdict does not use.
    """

    design: str
    metric: str
    k: int | None
    baseline: float
    candidate: float
    delta: float
    se: float
    interval: Interval
    p_value: float
    p_value_method: str
    p_value_normal: float
    mde: float | None
    alpha: float
    verdict: str
    rule: str
    items_baseline: int
    items_candidate: int
    paired_items: int
    only_in_baseline: tuple[Hashable, ...] = ()
    only_in_candidate: tuple[Hashable, ...] = ()
    se_floor: float | None = None
    p_value_sign_flip: float | None = None
    sign_flip_method: str | None = None
    estimand: str = ESTIMANDS["population"]
    notes: tuple[str, ...] = ()

    def __str__(self) -> str:
        unmatched = ""
        if self.only_in_baseline or self.only_in_candidate:
            unmatched = (
                f"; {len(self.only_in_baseline)} items only in baseline, "
                f"{len(self.only_in_candidate)} only in candidate"
            )
        mde = "none below 1" if self.mde is None else f"{self.mde:.3g}"
        return (
            f"{self.verdict}: {self.metric} {self.baseline:.4g} -> {self.candidate:.4g}, "
            f"delta {self.delta:+.4g} [{self.interval.low:+.4g}, {self.interval.high:+.4g}], "
            f"p={self.p_value:.3g} ({self.p_value_method}), MDE {mde}{unmatched}"
        )


#: When two paired runs are identical (the rule's words).
SAME_ITEMS = "every compared item scores the same in both runs"


def _verdict(
    interval: Interval, identical: bool, test: str, metric: Metric, same: str = SAME_ITEMS
) -> tuple[str, str]:
    """The verdict read off ``interval`` (a rise is an improvement unless lower is better), and its rule.

    ``same`` says in the rule when the runs are ``identical``.
    """
    level = f"{interval.level * 100:g}%"
    better, worse = ("above", "below") if metric.higher_is_better else ("below", "above")
    rule = (
        f"identical if {same}; otherwise improvement if the "
        f"{level} interval of delta lies {better} 0, regression if it lies {worse} 0, else within_noise "
        f"(interval and p from the {test}; p < {1 - interval.level:g} exactly when the interval excludes 0)"
    )
    rise, fall = ("improvement", "regression") if metric.higher_is_better else ("regression", "improvement")
    if identical:
        return "identical", rule
    if interval.low > 0:
        return rise, rule
    if interval.high < 0:
        return fall, rule
    return "within_noise", rule


def _two_sided_p(delta: float, se: float, df: float | None) -> float:
    """The two-sided p-value of ``delta / se``: Student's t at ``df`` degrees of freedom (None: normal)."""
    if se == 0:
        return 1.0 if delta == 0 else 0.0
    z = -abs(delta) / se
    return float(2 * (_scipy.ndtr(z) if df is None else _scipy.stdtr(df, z)))


def _in_unit(*arrays: FloatArray) -> bool:
    """True when every per-item value lies in [0, 1] (then a difference lies in [-1, 1])."""
    return all(bool(np.all((values >= 0.0) & (values <= 1.0))) for values in arrays)


def _bounded(
    delta: float, half_low: float, half_high: float, alpha: float, method: str, n: int, se: float, unit: bool
) -> Interval:
    """The interval ``[delta - half_low, delta + half_high]``, clipped to [-1, 1] for scores in [0, 1]."""
    low, high = delta - half_low, delta + half_high
    clipped = unit and (low < -1.0 or high > 1.0)
    if clipped:
        low, high = max(low, -1.0), min(high, 1.0)
    return Interval(delta, low, high, 1 - alpha, method, n, se, (-1.0, 1.0) if clipped else None)


def _notes(interval: Interval, mde: float | None, items: int, unit: bool) -> tuple[str, ...]:
    """What the output must say beside the verdict: clipping, too few items to test."""
    notes = []
    if interval.clipped_to is not None:
        notes.append("interval clipped to [-1, 1]: a difference of scores in [0, 1] lies there")
    if unit and mde is None:
        notes.append(
            f"too few items to test: with {items} items no change of a score in [0, 1] is detected "
            f"with {MDE_POWER:.0%} power (its minimum detectable effect exceeds 1)"
        )
    return tuple(notes)


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


@dataclass(frozen=True)
class _Sides:
    """What a comparison compares: the metric, both runs' items and the values its test reads."""

    metric: str  # as the caller named it
    resolved: Metric
    k: int | None
    alpha: float
    a: Items
    b: Items
    values_a: FloatArray  # the compared values: the paired items' (paired), every item's (unpaired)
    values_b: FloatArray
    paired_items: int
    only_a: tuple[Hashable, ...] = ()
    only_b: tuple[Hashable, ...] = ()
    estimand: str = ESTIMANDS["population"]


def _comparison(
    sides: _Sides,
    design: str,
    interval: Interval,
    df: float,
    test: str,
    *,
    identical: bool,
    unit: bool,
    tested: int,
    p_value: float | None = None,
    method: str | None = None,
    same: str = SAME_ITEMS,
    notes: tuple[str, ...] = (),
    se_floor: float | None = None,
    sign_flip: tuple[float, str] | tuple[None, None] = (None, None),
) -> Comparison:
    """The one builder of a :class:`Comparison`, from the interval of ``delta`` the ``test`` gives.

    ``delta`` and ``se`` are ``interval``'s; from them follow the two-sided t p-value at ``df``
    degrees of freedom (unless ``p_value`` is another test's, named ``method``), the normal
    p-value, the MDE (``tested`` units, bounded to [-1, 1] when the scores are in [0, 1], ``unit``),
    the verdict with its rule, and the notes (after which ``notes`` come).
    """
    delta, se = interval.estimate, interval.se
    assert se is not None  # every comparison's interval carries its SE
    mde = bounded_effect(se, df, sides.alpha, MDE_POWER, 1.0 if unit else math.inf) if se > 0 else 0.0
    verdict, rule = _verdict(interval, identical, test, sides.resolved, same)
    return Comparison(
        design=design,
        metric=sides.metric,
        k=sides.k,
        baseline=float(sides.values_a.mean()),
        candidate=float(sides.values_b.mean()),
        delta=delta,
        se=se,
        interval=interval,
        p_value=_two_sided_p(delta, se, df) if p_value is None else p_value,
        p_value_method=test if method is None else method,
        p_value_normal=_two_sided_p(delta, se, None),
        mde=mde,
        alpha=sides.alpha,
        verdict=verdict,
        rule=rule,
        items_baseline=int(sides.a.values.size),
        items_candidate=int(sides.b.values.size),
        paired_items=sides.paired_items,
        only_in_baseline=sides.only_a,
        only_in_candidate=sides.only_b,
        se_floor=se_floor,
        p_value_sign_flip=sign_flip[0],
        sign_flip_method=sign_flip[1],
        estimand=sides.estimand,
        notes=_notes(interval, mde, tested, unit) + notes,
    )


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
    resolved = resolve_metric(metric, per_item=True)
    a = run_items(baseline, ids_baseline, resolved, k, tau, "baseline")
    b = run_items(candidate, ids_candidate, resolved, k, tau, "candidate")
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
    sides = _Sides(
        str(metric), resolved, k, alpha, a, b, paired_a, paired_b, int(rows_a.size), only_a, only_b,
        ESTIMANDS[estimand],
    )  # fmt: skip
    differences = paired_b - paired_a
    items = int(differences.size)
    identical = bool(np.all(differences == 0))
    if estimand == "items":
        return _these_items(sides, rows_a, rows_b, tau, identical, permutations, seed)
    unit = _in_unit(paired_a, paired_b)
    delta = float(differences.mean())
    spread = float(differences.var(ddof=1))
    floor = _floor(a.noise[rows_a], b.noise[rows_b])
    se = math.sqrt(max(spread, floor) / items)
    df = items - 1
    half = float(_scipy.stdtrit(df, 1 - alpha / 2)) * se
    interval = _bounded(delta, half, half, alpha, "paired t", items, se, unit)
    test = f"paired t-test (df = items - 1) with the SE floored at {FLOOR_SHARE:g} of both runs' trial noise"
    return _comparison(
        sides, "paired", interval, df, test,
        identical=identical, unit=unit, tested=items,
        method=f"paired t (df={df}" + (", SE at the trial-noise floor)" if floor > spread else ")"),
        notes=_few_items_note(items),
        se_floor=math.sqrt(floor / items),
        sign_flip=sign_flip_p_value(differences, permutations, seed) if permutations else (None, None),
    )  # fmt: skip


def _these_items(
    sides: _Sides,
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
    return _comparison(
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
    resolved = resolve_metric(metric, per_item=True)
    a = run_items(baseline, None, resolved, k, tau, "baseline")
    b = run_items(candidate, None, resolved, k, tau, "candidate")
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
    unit = _in_unit(values_a, values_b)
    if se > 0:
        df = se**4 / (share_a**2 / (values_a.size - 1) + share_b**2 / (values_b.size - 1))
        half = float(_scipy.stdtrit(df, 1 - alpha / 2)) * se
    else:  # graded scores, every one equal within each run: no test, the difference is exact
        df, half = math.inf, 0.0
    interval = _bounded(delta, half, half, alpha, "welch t", int(values_a.size + values_b.size), se, unit)
    identical = values_a.size == values_b.size and bool(np.array_equal(np.sort(values_a), np.sort(values_b)))
    return _comparison(
        _Sides(str(metric), resolved, k, alpha, a, b, values_a, values_b, 0),
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
    resolved = resolve_metric(metric, per_item=True)
    a = run_items(baseline, ids_baseline, resolved, k, tau, "baseline")
    b = run_items(candidate, ids_candidate, resolved, k, tau, "candidate")
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
    unit = _in_unit(paired_a, paired_b)
    delta, se, df = clustered.estimate, float(clustered.se or 0.0), len(set(keys)) - 1
    half = clustered.high - delta
    interval = _bounded(delta, half, half, alpha, f"paired {clustered.method}", clustered.n, se, unit)
    return _comparison(
        _Sides(str(metric), resolved, k, alpha, a, b, paired_a, paired_b, len(shared), only_a, only_b),
        "paired, clustered", interval, df,
        f"cluster-robust paired t-test, {df + 1} clusters, df {df}, SE floored by trial noise",
        identical=bool(np.all(differences == 0)), unit=unit, tested=df + 1, se_floor=floor,
    )  # fmt: skip
