r"""Is the change real?  Paired, unpaired and Bayes@N comparisons of two runs.

**Paired** (:func:`compare_paired`, both runs on the same items): with
:math:`d_i = s^{B}_i - s^{A}_i` the per-item difference of any bank estimator
(candidate ``B`` minus baseline ``A``) over the ``m`` items present in both runs,
the test is the paired t-test with :math:`m - 1` degrees of freedom on a
standard error floored by trial noise:

.. math::

    \hat\delta = \bar d, \qquad
    \mathrm{SE}^2 = \frac{\max\bigl(s_d^2,\ \max(\bar v^A, \bar v^B)\bigr)}{m}, \qquad
    \hat\delta \pm t_{m-1}^{-1}(1 - \alpha/2)\,\mathrm{SE},

with :math:`s_d^2` the sample variance of the :math:`d_i` and :math:`\bar v` a
run's mean over the compared items of :math:`v_i`, the sampling variance of
the item's estimate from its :math:`n_i` trials.  For 0/1 trials with
:math:`c_i` passes, :math:`v_i` is the variance of the estimator under
:math:`\mathrm{Binomial}(n_i, \tilde p_i)` at the Jeffreys plug-in
:math:`\tilde p_i = (c_i + 1/2)/(n_i + 1)`, times :math:`(n_i+1)/(n_i+2)`; for
``avg`` this is exactly the Jeffreys posterior mean of :math:`p_i(1-p_i)/n_i`,
:math:`(c_i+\tfrac12)(n_i-c_i+\tfrac12)/((n_i+1)(n_i+2)\,n_i)`, positive even
for a saturated item (:math:`c_i = n_i`).  For graded scores :math:`v_i` is the
item's unbiased trial variance over :math:`n_i` (0 for one trial).  The floor
says the difference of two runs is never more certain than the noisier run's
own score: finitely many trials never give a zero-width interval, and two
items whose differences agree do not make a significant verdict.  The floor
uses the noisier run rather than the sum of both, because under "no
difference" the sum equals the expected :math:`s_d^2` and flooring by it would
make the test conservative (measured: false-positive rate 2.4% instead of 5%
on 20 U-shaped items with one trial).

The verdict is read off that interval (stated in every result):
``identical`` when every compared item scores the same in both runs;
otherwise ``improvement`` when the interval lies above 0, ``regression``
when it lies below 0, else ``within_noise``.  ``p_value`` is the same test's
two-sided p-value :math:`2F_{t_{m-1}}(-|\hat\delta|/\mathrm{SE})`, so
:math:`p < \alpha` exactly when the interval excludes 0, and the minimum
detectable effect at 80% power is that of this t-test
(:func:`trialscore.stats.power.detectable_effect`).  The normal approximation
:math:`2\Phi(-|\hat\delta|/\mathrm{SE})` is reported beside it.

The paired sign-flip permutation test is available on its own
(:func:`sign_flip_p_value`) and its p-value is reported as an extra
(``p_value_sign_flip``), never the verdict's rule: on tied, discrete
differences it is conservative.  Under "no difference" each :math:`d_i` is as
likely to be :math:`-d_i`, so :math:`p = P(|\sum_i \epsilon_i d_i| \ge |\sum_i d_i|)`
over independent random signs :math:`\epsilon_i`.  Items with equal
:math:`|d_i|` are interchangeable, so the number of positive signs in each
group of equal :math:`|d_i|` is :math:`\mathrm{Binomial}(\text{group size}, 1/2)`;
the p-value is exact (enumerating every combination of group counts) while
there are at most ``2**20`` combinations, and otherwise a seeded Monte Carlo
estimate :math:`(1 + \#\{|T^*| \ge |T|\}) / (1 + B)` from ``B`` random sign
patterns.  Items present in only one run are listed in the result, never
silently dropped.

**Clustered** (:func:`compare_clustered`, the same items grouped in ``G``
clusters): :math:`\hat\delta = \bar d` with the cluster-robust SE of the
:math:`d_i` (:func:`~trialscore.stats.clustered_standard_error`), interval
:math:`\hat\delta \pm t_{G-1}^{-1}(1 - \alpha/2)\,\mathrm{SE}` and the
two-sided t-test at :math:`G - 1` degrees of freedom behind the verdict, so the
verdict and the interval always agree.

**Unpaired** (:func:`compare_unpaired`, different item sets): Welch's
t-interval and test on the two sets of per-item values; the verdict is read
off the interval in the same way.

**Bayes@N** (:func:`compare_bayes`): the decision rule of Hariri et al. (2025,
sec. 2.9): with posterior means and sds :math:`(\mu, \sigma)` of both runs,
:math:`z = (\mu_B - \mu_A)/\sqrt{\sigma_A^2 + \sigma_B^2}`, the probability
that B ranks above A is :math:`\Phi(z)`, and B is declared better when
:math:`z \ge \Phi^{-1}(\gamma)` (worse when :math:`z \le -\Phi^{-1}(\gamma)`)
with :math:`\gamma = 1 - \alpha/2` per direction, so that ``alpha`` is the
total two-sided error, as in the paired test.  Whether the two
:math:`1 - \alpha` credible intervals overlap (the paper's visual criterion,
stricter) is reported too.

References
----------
Student (W. S. Gosset), "The probable error of a mean", Biometrika 6 (1908);
H. Jeffreys, *Theory of Probability* (1961), for the Beta(1/2, 1/2) prior;
E. Miller, "Adding Error Bars to Evals", arXiv:2411.00640 (2024);
M. Hariri et al., "Don't Pass@k: A Bayesian Framework for Large Language Model
Evaluation", arXiv:2510.04265 (2025).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import cast

import numpy as np
from numpy.typing import ArrayLike, NDArray

from trialscore._record import Record
from trialscore._validate import check_integer, check_probability, check_values
from trialscore.core._kernels import Tau
from trialscore.core.bank import Bank, as_bank, checked_matrix, is_ragged
from trialscore.core.estimators import avg, bayes, estimator_by_name, item_scores
from trialscore.errors import EvaluationError, InsufficientDataError
from trialscore.stats import _scipy
from trialscore.stats._noise import trial_noise_variances
from trialscore.stats.intervals import Interval, bayes_interval, clustered_interval
from trialscore.stats.power import detectable_effect

__all__ = [
    "BayesComparison",
    "Comparison",
    "beat_probability",
    "compare_bayes",
    "compare_clustered",
    "compare_paired",
    "compare_unpaired",
    "sign_flip_p_value",
]

FloatArray = NDArray[np.float64]
Run = Mapping[Hashable, Sequence[float]] | ArrayLike | Bank

#: Enumerate sign-count combinations exactly up to this many; sample beyond.
EXACT_LIMIT = 1 << 20

#: Power at which the minimum detectable effect is quoted.
MDE_POWER = 0.8


def _group_magnitudes(differences: FloatArray) -> tuple[FloatArray, NDArray[np.int64], NDArray[np.int64]]:
    """Distinct non-zero ``|d|``, how many items have each, and how many of those are positive."""
    nonzero = differences[differences != 0]
    magnitudes, inverse, sizes = np.unique(np.abs(nonzero), return_inverse=True, return_counts=True)
    positive = np.bincount(inverse.ravel(), weights=nonzero > 0, minlength=magnitudes.size)
    return magnitudes, sizes.astype(np.int64), positive.astype(np.int64)


def _half_binomial_pmf(size: int) -> FloatArray:
    """P(J = j) for J ~ Binomial(size, 1/2), j = 0..size, from log-gamma.

    Relative error below 1e-13 up to size 100 and about 3e-9 at size 10**6;
    no overflow, and no underflow to 0 while the probability is a normal double.
    """
    j = np.arange(size + 1)
    pmf: FloatArray = np.exp(
        _scipy.gammaln(size + 1) - _scipy.gammaln(j + 1) - _scipy.gammaln(size - j + 1) - size * math.log(2.0)
    )
    return pmf


def sign_flip_p_value(
    differences: ArrayLike, permutations: int = 10_000, seed: int = 0, exact_limit: int = EXACT_LIMIT
) -> tuple[float, str]:
    r"""Two-sided paired sign-flip permutation p-value of ``sum(differences)``, and how it was computed.

    Exact when the groups of equal ``|d|`` allow at most ``exact_limit``
    combinations of positive-sign counts, else a Monte Carlo estimate from
    ``permutations`` seeded sign patterns (see the module docstring).

    >>> sign_flip_p_value([0.5, 0.25, 0.25, 1.0])
    (0.125, 'exact sign-flip (4 non-zero differences, 12 sign-count combinations)')
    """
    d = check_values(differences, "differences", 1)
    magnitudes, sizes, positive = _group_magnitudes(d)
    if magnitudes.size == 0:
        return 1.0, "exact sign-flip (every difference is 0)"
    steps = [
        magnitude * (2 * np.arange(size + 1) - size)
        for magnitude, size in zip(magnitudes, sizes, strict=True)
    ]
    observed = abs(float(sum(step[j] for step, j in zip(steps, positive, strict=True))))
    tolerance = 1e-10 * float(magnitudes @ sizes)
    combinations = math.prod(int(size) + 1 for size in sizes)
    items = int(sizes.sum())
    if combinations <= check_integer(exact_limit, "exact_limit", 1):
        totals = np.zeros(1)
        weights = np.ones(1)
        for step, size in zip(steps, sizes, strict=True):
            totals = (totals[:, None] + step[None, :]).ravel()
            weights = (weights[:, None] * _half_binomial_pmf(int(size))[None, :]).ravel()
        p = float(weights[np.abs(totals) >= observed - tolerance].sum())
        label = f"exact sign-flip ({items} non-zero differences, {combinations} sign-count combinations)"
        return min(p, 1.0), label
    permutations = check_integer(permutations, "permutations", 1)
    rng = np.random.default_rng(check_integer(seed, "seed", 0))
    flips = rng.binomial(sizes, 0.5, size=(permutations, sizes.size))
    totals = (2 * flips - sizes) @ magnitudes
    extreme = int(np.count_nonzero(np.abs(totals) >= observed - tolerance))
    p = (1 + extreme) / (1 + permutations)
    label = f"monte carlo sign-flip ({items} non-zero differences, {permutations} sign patterns, seed {seed})"
    return p, label


def _graded_items(rows: object, name: str) -> tuple[FloatArray, FloatArray] | None:
    """Item means and unbiased trial variances over n of graded ``avg`` scores; None for 0/1 outcomes."""
    if is_ragged(rows):
        data = [
            check_values(row, f"{name}[{i}]", 1) for i, row in enumerate(cast("Sequence[ArrayLike]", rows))
        ]
        if all(np.isin(row, (0.0, 1.0)).all() for row in data):
            return None
        means = np.array([row.mean() for row in data])
        noise = np.array([row.var(ddof=1) / row.size if row.size > 1 else 0.0 for row in data])
        return means, noise
    matrix = checked_matrix(rows, name).astype(np.float64)  # type: ignore[arg-type]
    if np.isin(matrix, (0.0, 1.0)).all():
        return None
    trials = matrix.shape[1]
    noise = matrix.var(axis=1, ddof=1) / trials if trials > 1 else np.zeros(matrix.shape[0])
    return matrix.mean(axis=1), noise


def _per_item_values(
    rows: object, metric: str, k: int | None, tau: Tau | None, name: str
) -> tuple[FloatArray, FloatArray]:
    """Per-item values of ``metric`` and their trial-noise variances ``v_i``."""
    if estimator_by_name(metric) is avg and not isinstance(rows, Bank):
        graded = _graded_items(rows, name)
        if graded is not None:
            return graded
    bank = as_bank(rows, name)  # type: ignore[arg-type]
    return item_scores(bank, metric, k, tau), trial_noise_variances(bank, metric, k, tau)


def _run_items(
    run: Run, ids: Sequence[Hashable] | None, metric: str, k: int | None, tau: Tau | None, name: str
) -> tuple[list[Hashable] | None, FloatArray, FloatArray]:
    if isinstance(run, Mapping):
        if ids is not None:
            raise EvaluationError(f"ids_{name} must be None when {name} is a mapping: its keys are the ids")
        if not run:
            raise EvaluationError(f"{name} must hold at least one item; got an empty mapping")
        keys: list[Hashable] | None = list(run.keys())
        values, noise = _per_item_values([list(row) for row in run.values()], metric, k, tau, name)
    else:
        values, noise = _per_item_values(run, metric, k, tau, name)
        if ids is None and isinstance(run, Bank) and run.ids is not None:
            ids = run.ids.tolist()
        keys = None if ids is None else list(ids)
        if keys is not None and len(keys) != values.size:
            raise EvaluationError(
                f"ids_{name} must hold one id per item; got {len(keys)} ids for {values.size} items"
            )
    if keys is not None:
        seen: set[Hashable] = set()
        for key in keys:
            if key in seen:
                raise EvaluationError(f"item ids of {name} must be unique; got {key!r} more than once")
            seen.add(key)
    return keys, values, noise


@dataclass(frozen=True)
class Comparison(Record):
    """The answer to "did the candidate run change the score?", with the numbers behind it.

    ``delta = candidate - baseline`` on the compared items; ``interval`` is
    the confidence interval of ``delta`` at level ``1 - alpha`` from the same
    test as ``p_value`` and ``verdict``; ``mde`` the smallest true change that
    test detects with 80% power.  Paired comparisons also report ``se_floor``
    (the trial-noise floor of the SE) and, unless ``permutations=0``, the
    sign-flip permutation p-value as an extra that the verdict does not use.
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
    mde: float
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

    def __str__(self) -> str:
        unmatched = ""
        if self.only_in_baseline or self.only_in_candidate:
            unmatched = (
                f"; {len(self.only_in_baseline)} items only in baseline, "
                f"{len(self.only_in_candidate)} only in candidate"
            )
        return (
            f"{self.verdict}: {self.metric} {self.baseline:.4g} -> {self.candidate:.4g}, "
            f"delta {self.delta:+.4g} [{self.interval.low:+.4g}, {self.interval.high:+.4g}], "
            f"p={self.p_value:.3g} ({self.p_value_method}), MDE {self.mde:.3g}{unmatched}"
        )


def _verdict(interval: Interval, identical: bool, test: str) -> tuple[str, str]:
    """The verdict read off ``interval``, and the rule that says so."""
    level = f"{interval.level * 100:g}%"
    rule = (
        f"identical if every compared item scores the same in both runs; otherwise improvement if the "
        f"{level} interval of delta lies above 0, regression if it lies below 0, else within_noise "
        f"(interval and p from the {test}; p < {1 - interval.level:g} exactly when the interval excludes 0)"
    )
    if identical:
        return "identical", rule
    if interval.low > 0:
        return "improvement", rule
    if interval.high < 0:
        return "regression", rule
    return "within_noise", rule


def _normal_p(delta: float, se: float) -> float:
    if se == 0:
        return 1.0 if delta == 0 else 0.0
    return float(2 * _scipy.ndtr(-abs(delta) / se))


def compare_paired(
    baseline: Run,
    candidate: Run,
    metric: str = "avg",
    k: int | None = None,
    tau: Tau | None = None,
    *,
    ids_baseline: Sequence[Hashable] | None = None,
    ids_candidate: Sequence[Hashable] | None = None,
    alpha: float = 0.05,
    permutations: int = 10_000,
    seed: int = 0,
) -> Comparison:
    """Paired comparison of two runs on the same items (formulas in the module docstring).

    A run is a :class:`~trialscore.core.bank.Bank`, an items x trials matrix, ragged
    outcome lists, or a mapping ``{item_id: outcomes}``.  Items are matched by
    id (mapping keys, or ``ids_baseline`` / ``ids_candidate``), else by
    position.  ``metric`` is any bank estimator (``"avg"`` also takes graded
    scores).  The verdict is read off the floored paired-t interval; the
    sign-flip p-value (``permutations`` seeded sign patterns when exact
    enumeration is too large) is reported beside it, and ``permutations=0``
    skips it.  Two items whose differences agree get an interval from trial
    noise, never a zero-width one:

    >>> print(compare_paired([[1, 1, 0, 0, 0]] * 2, [[1, 1, 1, 0, 0]] * 2).interval)
    0.2 [-1.634, 2.034] (95% paired t, n=2)

    >>> old = {"q1": [1, 1, 1, 0], "q2": [1, 0, 0, 0], "q3": [1, 1, 1, 1], "q4": [0, 1, 1, 1]}
    >>> new = {"q1": [1, 1, 0, 0], "q2": [0, 0, 0, 0], "q3": [1, 1, 1, 1], "q5": [1, 1, 1, 1]}
    >>> result = compare_paired(old, new)
    >>> result.verdict, result.paired_items, result.only_in_baseline, result.only_in_candidate
    ('within_noise', 3, ('q4',), ('q5',))
    >>> round(result.delta, 4), round(result.p_value, 3), result.p_value_sign_flip
    (-0.1667, 0.265, 0.5)
    """
    alpha = check_probability(alpha, "alpha")
    permutations = check_integer(permutations, "permutations", 0)
    keys_a, values_a, noise_a = _run_items(baseline, ids_baseline, metric, k, tau, "baseline")
    keys_b, values_b, noise_b = _run_items(candidate, ids_candidate, metric, k, tau, "candidate")
    only_a: tuple[Hashable, ...] = ()
    only_b: tuple[Hashable, ...] = ()
    if keys_a is None and keys_b is None:
        if values_a.size != values_b.size:
            raise EvaluationError(
                f"baseline and candidate must have the same number of items to pair them by position; "
                f"got {values_a.size} and {values_b.size} (give item ids, or use compare_unpaired)"
            )
        paired_a, paired_b = values_a, values_b
    elif keys_a is None or keys_b is None:
        raise EvaluationError("item ids must be given for both runs or for neither")
    else:
        position_b = {key: index for index, key in enumerate(keys_b)}
        matched = [(index, position_b[key]) for index, key in enumerate(keys_a) if key in position_b]
        only_a = tuple(key for key in keys_a if key not in position_b)
        common = set(keys_a)
        only_b = tuple(key for key in keys_b if key not in common)
        rows_a = np.array([pair[0] for pair in matched], dtype=np.int64)
        rows_b = np.array([pair[1] for pair in matched], dtype=np.int64)
        paired_a, paired_b = values_a[rows_a], values_b[rows_b]
        noise_a, noise_b = noise_a[rows_a], noise_b[rows_b]
    if paired_a.size < 2:
        raise InsufficientDataError(
            f"baseline and candidate must share at least 2 items for a paired comparison; "
            f"got {paired_a.size} (use compare_unpaired for different item sets)",
            unit="items",
            needed=2,
            got=int(paired_a.size),
        )
    differences = paired_b - paired_a
    items = int(differences.size)
    delta = float(differences.mean())
    spread = float(differences.var(ddof=1))
    floor = max(float(noise_a.mean()), float(noise_b.mean()))
    se = math.sqrt(max(spread, floor) / items)
    df = items - 1
    half = float(_scipy.stdtrit(df, 1 - alpha / 2)) * se
    interval = Interval(delta, delta - half, delta + half, 1 - alpha, "paired t", items, se)
    test = "paired t-test (df = items - 1) with the SE floored by the noisier run's trial noise"
    method = f"paired t (df={df}" + (", SE at the trial-noise floor)" if floor > spread else ")")
    p_value = float(2 * _scipy.stdtr(df, -abs(delta) / se)) if se > 0 else (1.0 if delta == 0 else 0.0)
    sign_flip, sign_flip_method = (
        sign_flip_p_value(differences, permutations, seed) if permutations else (None, None)
    )
    verdict, rule = _verdict(interval, bool(np.all(differences == 0)), test)
    return Comparison(
        design="paired",
        metric=str(metric),
        k=k,
        baseline=float(paired_a.mean()),
        candidate=float(paired_b.mean()),
        delta=delta,
        se=se,
        interval=interval,
        p_value=p_value,
        p_value_method=method,
        p_value_normal=_normal_p(delta, se),
        mde=detectable_effect(se, df, alpha, MDE_POWER),
        alpha=alpha,
        verdict=verdict,
        rule=rule,
        items_baseline=int(values_a.size),
        items_candidate=int(values_b.size),
        paired_items=items,
        only_in_baseline=only_a,
        only_in_candidate=only_b,
        se_floor=math.sqrt(floor / items),
        p_value_sign_flip=sign_flip,
        sign_flip_method=sign_flip_method,
    )


def compare_unpaired(
    baseline: Run,
    candidate: Run,
    metric: str = "avg",
    k: int | None = None,
    tau: Tau | None = None,
    *,
    alpha: float = 0.05,
) -> Comparison:
    r"""Comparison of two runs on different item sets: Welch's t-interval and test.

    .. math::

        \hat\delta = \bar s_B - \bar s_A, \qquad
        \mathrm{SE} = \sqrt{s_A^2/m_A + s_B^2/m_B}, \qquad
        \nu = \frac{\mathrm{SE}^4}{\frac{(s_A^2/m_A)^2}{m_A - 1} + \frac{(s_B^2/m_B)^2}{m_B - 1}}

    ``identical`` here means both runs have the same multiset of per-item
    values.

    >>> result = compare_unpaired([[1, 1], [1, 0], [1, 1]], [[0, 0], [1, 0], [0, 0], [0, 1]])
    >>> result.verdict, round(result.delta, 4), round(result.p_value, 4)
    ('within_noise', -0.5833, 0.0513)
    """
    alpha = check_probability(alpha, "alpha")
    _, values_a, _ = _run_items(baseline, None, metric, k, tau, "baseline")
    _, values_b, _ = _run_items(candidate, None, metric, k, tau, "candidate")
    for name, values in (("baseline", values_a), ("candidate", values_b)):
        if values.size < 2:
            raise InsufficientDataError(
                f"{name} must hold at least 2 items for an unpaired comparison; got {values.size}",
                unit="items",
                needed=2,
                got=int(values.size),
            )
    share_a = float(values_a.var(ddof=1)) / values_a.size
    share_b = float(values_b.var(ddof=1)) / values_b.size
    se = math.sqrt(share_a + share_b)
    delta = float(values_b.mean() - values_a.mean())
    if se > 0:
        df = se**4 / (share_a**2 / (values_a.size - 1) + share_b**2 / (values_b.size - 1))
        half = float(_scipy.stdtrit(df, 1 - alpha / 2)) * se
        p_value = float(2 * _scipy.stdtr(df, -abs(delta) / se))
        mde = detectable_effect(se, df, alpha, MDE_POWER)
    else:
        half, p_value, mde = 0.0, (1.0 if delta == 0 else 0.0), 0.0
    interval = Interval(
        delta, delta - half, delta + half, 1 - alpha, "welch t", int(values_a.size + values_b.size), se
    )
    identical = values_a.size == values_b.size and bool(np.array_equal(np.sort(values_a), np.sort(values_b)))
    verdict, rule = _verdict(interval, identical, "Welch t-test")
    return Comparison(
        design="unpaired",
        metric=str(metric),
        k=k,
        baseline=float(values_a.mean()),
        candidate=float(values_b.mean()),
        delta=delta,
        se=se,
        interval=interval,
        p_value=p_value,
        p_value_method="welch t",
        p_value_normal=_normal_p(delta, se),
        mde=mde,
        alpha=alpha,
        verdict=verdict,
        rule=rule.replace(
            "every compared item scores the same in both runs", "both runs have the same item values"
        ),
        items_baseline=int(values_a.size),
        items_candidate=int(values_b.size),
        paired_items=0,
    )


@dataclass(frozen=True)
class BayesComparison(Record):
    """Bayes@N comparison of two runs with the decision rule of Hariri et al. (2025).

    ``probability`` is the posterior probability (normal approximation) that
    the candidate's true score is above the baseline's; ``alpha`` the total
    two-sided error and ``confidence`` the per-direction ``gamma = 1 - alpha/2``.
    """

    baseline: Interval
    candidate: Interval
    delta: float
    sigma: float
    z: float
    probability: float
    alpha: float
    confidence: float
    intervals_overlap: bool
    verdict: str
    rule: str

    def __str__(self) -> str:
        return (
            f"{self.verdict}: Bayes@N {self.baseline.estimate:.4g} -> {self.candidate.estimate:.4g}, "
            f"z={self.z:+.3g}, P(candidate better)={self.probability:.3g}"
        )


def compare_bayes(
    baseline: ArrayLike | Bank,
    candidate: ArrayLike | Bank,
    w: ArrayLike | None = None,
    *,
    prior_baseline: ArrayLike | None = None,
    prior_candidate: ArrayLike | None = None,
    alpha: float = 0.05,
) -> BayesComparison:
    r"""Bayes@N comparison of two runs with the paper's z-score decision rule at total error ``alpha``.

    B is better when :math:`z = (\mu_B - \mu_A)/\sqrt{\sigma_A^2 + \sigma_B^2} \ge \Phi^{-1}(\gamma)`,
    worse when :math:`z \le -\Phi^{-1}(\gamma)`, with :math:`\gamma = 1 - \alpha/2`:
    ``alpha`` is the total two-sided error (1.96 at 0.05, not the paper's
    one-sided 1.645, which flags up to twice ``alpha`` of equal runs).  The
    runs' credible intervals (:func:`~trialscore.stats.bayes_interval`) are at
    level ``1 - alpha``.

    ``w`` are the category weights of :func:`trialscore.core.estimators.bayes`;
    ``prior_*`` the optional prior outcomes ``R0`` of each run.  The verdict
    is ``identical`` when both posteriors have the same mean and sd.

    >>> result = compare_bayes([[1, 1, 1, 0]] * 30, [[1, 0, 0, 0]] * 30)
    >>> result.verdict, round(result.z, 2), result.intervals_overlap, result.confidence
    ('regression', -7.25, False, 0.975)
    """
    alpha = check_probability(alpha, "alpha")
    confidence = 1.0 - alpha / 2.0
    first = bayes_interval(baseline, w, prior_baseline, 1.0 - alpha)
    second = bayes_interval(candidate, w, prior_candidate, 1.0 - alpha)
    delta = second.estimate - first.estimate
    sigma = math.hypot(first.se or 0.0, second.se or 0.0)
    if sigma > 0:
        z = delta / sigma
    else:
        z = 0.0 if delta == 0 else math.copysign(math.inf, delta)
    threshold = float(_scipy.ndtri(confidence))
    rule = (
        f"identical if both posteriors have the same mean and sd; improvement if z >= {threshold:.4g}, "
        f"regression if z <= {-threshold:.4g} (z = delta / sqrt(sigma_a^2 + sigma_b^2), threshold "
        f"Phi^-1(1 - alpha/2) at total two-sided alpha = {alpha:g}, Hariri et al. 2025), else within_noise"
    )
    if delta == 0 and first.se == second.se:
        verdict = "identical"
    elif z >= threshold:
        verdict = "improvement"
    elif z <= -threshold:
        verdict = "regression"
    else:
        verdict = "within_noise"
    overlap = first.low <= second.high and second.low <= first.high
    return BayesComparison(
        first, second, delta, sigma, z, float(_scipy.ndtr(z)), alpha, confidence, overlap, verdict, rule
    )


def beat_probability(
    better: Run, worse: Run, metric: str = "avg", k: int | None = None, tau: Tau | None = None
) -> float:
    r"""The probability that ``better`` truly scores above ``worse`` on their shared items.

    For Bayes@N it is the posterior probability of :func:`compare_bayes`,
    :math:`\Phi(z)`; for any other metric the normal approximation of the paired
    per-item differences of :func:`compare_paired`, :math:`\Phi(\hat\delta / \widehat{SE})`
    (0, 1/2 or 1 when the floored SE is 0).  Runs are paired as :func:`compare_paired` pairs them.

    >>> round(beat_probability([[1, 1, 1, 0]] * 30, [[1, 0, 0, 0]] * 30, "bayes"), 4)
    1.0
    >>> round(beat_probability([[1, 1, 0, 1, 0]] * 4, [[1, 0, 0, 1, 0]] * 4), 3)
    0.975
    """
    if estimator_by_name(metric) is bayes:
        return compare_bayes(worse, better).probability  # type: ignore[arg-type]
    result = compare_paired(worse, better, metric, k, tau, permutations=0)
    if result.se == 0:
        return 1.0 if result.delta > 0 else 0.0 if result.delta < 0 else 0.5
    return float(_scipy.ndtr(result.delta / result.se))


def compare_clustered(
    baseline: Run,
    candidate: Run,
    clusters: Mapping[Hashable, Hashable],
    metric: str = "avg",
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
    floored by the noisier run's trial noise, as in :func:`compare_paired`.

    >>> old = {"q1": [1, 1], "q2": [1, 0], "q3": [0, 0], "q4": [1, 1], "q5": [0, 1], "q6": [1, 1]}
    >>> new = {"q1": [1, 1], "q2": [1, 1], "q3": [1, 0], "q4": [1, 1], "q5": [0, 1], "q6": [1, 1]}
    >>> passage = {"q1": "a", "q2": "a", "q3": "b", "q4": "b", "q5": "c", "q6": "c"}
    >>> result = compare_clustered(old, new, passage)
    >>> result.verdict, round(result.delta, 4), round(result.se, 4), round(result.p_value, 3)
    ('within_noise', 0.1667, 0.1049, 0.253)
    """
    alpha = check_probability(alpha, "alpha")
    keys_a, values_a, noise_a = _run_items(baseline, ids_baseline, metric, k, tau, "baseline")
    keys_b, values_b, noise_b = _run_items(candidate, ids_candidate, metric, k, tau, "candidate")
    if keys_a is None or keys_b is None:
        raise EvaluationError("compare_clustered needs item ids for both runs to look up each item's cluster")
    position_b = {key: index for index, key in enumerate(keys_b)}
    shared = [key for key in keys_a if key in position_b]
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
    position_a = {key: index for index, key in enumerate(keys_a)}
    rows_a = [position_a[key] for key in shared]
    rows_b = [position_b[key] for key in shared]
    paired_a, paired_b = values_a[rows_a], values_b[rows_b]
    differences = paired_b - paired_a
    keys = [clusters[key] for key in shared]
    # The same trial-noise floor as compare_paired: never more certain than the noisier run's own score.
    floor = math.sqrt(max(float(noise_a[rows_a].mean()), float(noise_b[rows_b].mean())) / len(shared))
    clustered = clustered_interval(differences, keys, 1 - alpha, se_floor=floor)
    interval = Interval(
        clustered.estimate,
        clustered.low,
        clustered.high,
        clustered.level,
        f"paired {clustered.method}",
        clustered.n,
        clustered.se,
    )
    delta, se, df = interval.estimate, float(interval.se or 0.0), len(set(keys)) - 1
    p_value = float(2 * _scipy.stdtr(df, -abs(delta) / se)) if se > 0 else (1.0 if delta == 0 else 0.0)
    test = f"cluster-robust paired t-test, {df + 1} clusters, df {df}, SE floored by trial noise"
    verdict, rule = _verdict(interval, bool(np.all(differences == 0)), test)
    shared_set = set(shared)
    return Comparison(
        design="paired, clustered",
        metric=str(metric),
        k=k,
        baseline=float(paired_a.mean()),
        candidate=float(paired_b.mean()),
        delta=delta,
        se=se,
        interval=interval,
        p_value=p_value,
        p_value_method=test,
        p_value_normal=_normal_p(delta, se),
        mde=detectable_effect(se, df, alpha, MDE_POWER) if se > 0 else 0.0,
        alpha=alpha,
        verdict=verdict,
        rule=rule,
        items_baseline=int(values_a.size),
        items_candidate=int(values_b.size),
        paired_items=len(shared),
        only_in_baseline=tuple(key for key in keys_a if key not in position_b),
        only_in_candidate=tuple(key for key in keys_b if key not in shared_set),
        se_floor=floor,
    )
