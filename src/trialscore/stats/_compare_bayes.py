r"""Bayes@N comparison of two runs (Hariri et al. 2025, sec. 2.9), and the chance one run truly beats another.

With posterior means and sds :math:`(\mu, \sigma)` of both runs,
:math:`z = (\mu_B - \mu_A)/\sqrt{\sigma_A^2 + \sigma_B^2}`, the probability that B ranks above A is
:math:`\Phi(z)`, and B is declared better when :math:`z \ge \Phi^{-1}(\gamma)` (worse when
:math:`z \le -\Phi^{-1}(\gamma)`) with :math:`\gamma = 1 - \alpha/2` per direction, so that ``alpha``
is the total two-sided error, as in the paired test.  Whether the two :math:`1 - \alpha` credible
intervals overlap (the paper's visual criterion, stricter) is reported too.

Reference
---------
M. Hariri et al., "Don't Pass@k: A Bayesian Framework for Large Language Model Evaluation",
arXiv:2510.04265 (2025).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from numpy.typing import ArrayLike

from trialscore._record import Record
from trialscore._validate import check_probability
from trialscore.core._kernels import Tau
from trialscore.core.bank import Bank
from trialscore.core.metrics import MetricLike, resolve_metric
from trialscore.stats import _scipy
from trialscore.stats._compare import Run, compare_paired
from trialscore.stats._intervals import Interval, bayes_interval

__all__ = ["BayesComparison", "beat_probability", "compare_bayes"]


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
    better: Run, worse: Run, metric: MetricLike = "avg", k: int | None = None, tau: Tau | None = None
) -> float:
    r"""The probability that ``better`` truly scores better than ``worse`` on their shared items.

    Better is above, or below for a metric better lower.

    For Bayes@N it is the posterior probability of :func:`compare_bayes`,
    :math:`\Phi(z)`; for any other metric the normal approximation of the paired
    per-item differences of :func:`compare_paired`, :math:`\Phi(\hat\delta / \widehat{SE})`
    (0, 1/2 or 1 when the floored SE is 0).  Runs are paired as :func:`compare_paired` pairs them.

    >>> round(beat_probability([[1, 1, 1, 0]] * 30, [[1, 0, 0, 0]] * 30, "bayes"), 4)
    1.0
    >>> round(beat_probability([[1, 1, 0, 1, 0]] * 4, [[1, 0, 0, 1, 0]] * 4), 3)
    1.0
    >>> round(beat_probability([[1, 1, 0, 1, 0], [1, 0, 0, 0, 0]], [[1, 0, 0, 1, 0]] * 2), 3)
    0.5
    """
    resolved = resolve_metric(metric)
    if resolved.aggregation == "posterior":
        return compare_bayes(worse, better).probability  # type: ignore[arg-type]
    result = compare_paired(worse, better, resolved, k, tau, permutations=0)
    gain = result.delta if resolved.higher_is_better else -result.delta
    if result.se == 0:
        return 1.0 if gain > 0 else 0.0 if gain < 0 else 0.5
    return float(_scipy.ndtr(gain / result.se))
