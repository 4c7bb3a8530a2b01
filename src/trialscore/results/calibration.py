r"""A judged pass rate calibrated by human labels: corrected, human-only, judge-only, and the judge's bias.

For one target's judge verdicts and human labels (:func:`~trialscore.results.labels.label_banks`)
:func:`calibrate` gives, per metric (pass@1, and pass@k and pass^k for each ``k`` asked):

* ``corrected``: the prediction-powered interval with the item as the unit
  (:func:`~trialscore.stats.ppi_interval`): the pass rate by human standards, the judge used on
  every item and the labelled items to remove its bias;
* ``human_only``: the default interval (:func:`~trialscore.results.scorecard.metric_interval`) of
  the human labels alone, on the labelled items (pass@k and pass^k: the items whose trials are
  all labelled);
* ``judge_only``: the same interval of the judge's verdicts on every item: what ``score``
  prints without labels, honest about the judge, not about the truth;
* ``bias``: the judge's value minus the human one on the labelled items, with the ``t``
  interval of the mean of the per-item differences :math:`d_i = f_i - y_i`.  When every
  difference is 0 the interval is :math:`\pm u`, :math:`u = z^2/(n + z^2)` (Wilson's bound on a
  disagreement rate never seen in :math:`n` items), so it never has zero width.

:func:`calibrate_pair` does the same for the paired difference of two targets on the items they
share (:func:`~trialscore.stats.ppi_paired_interval`).

>>> rng = np.random.default_rng(0)
>>> truth = (rng.random((300, 3)) < rng.beta(0.6, 0.4, (300, 1))).astype(float)
>>> judge = np.where(rng.random((300, 3)) < 0.85, truth, 1.0)  # lenient: passes 15% of failures
>>> human = np.where(np.arange(300)[:, None] < 80, truth, np.nan)
>>> result = calibrate(judge, human, ks=[3])
>>> [figure.metric for figure in result.figures]
['pass@1', 'pass@3', 'pass^3']
>>> first = result.figures[0]
>>> first.bias.low > 0, bool(first.corrected.low < truth.mean() < first.corrected.high)
(True, True)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from trialscore._record import Record
from trialscore.core.bank import Bank
from trialscore.errors import EvaluationError
from trialscore.stats import _scipy
from trialscore.stats._intervals import Interval, normal_quantile

__all__ = ["CalibratedFigure", "Calibration", "PairCalibration", "calibrate", "calibrate_pair"]

FloatArray = NDArray[np.float64]


@dataclass(frozen=True)
class CalibratedFigure(Record):
    """One metric of a labelled target (module docstring); ``reason`` says why a figure is missing."""

    metric: str
    labelled_items: int
    corrected: Interval | None
    human_only: Interval | None
    judge_only: Interval | None
    bias: Interval | None
    reason: str | None = None


@dataclass(frozen=True)
class Calibration(Record):
    """A target's calibrated figures, with how the judge's verdicts compare with the labels trial by trial.

    ``agreement`` is the share of labelled trials where the judge's verdict equals the label;
    ``tpr`` (``tnr``) the share of labelled passes (fails) the judge passed (failed); None when
    no label is a pass (a fail).
    """

    items: int
    labelled_items: int
    labelled_trials: int
    agreement: float
    tpr: float | None
    tnr: float | None
    figures: tuple[CalibratedFigure, ...]


@dataclass(frozen=True)
class PairCalibration(Record):
    """The paired difference A - B of two targets (module docstring)."""

    metric: str
    shared_items: int
    labelled_items: int
    corrected: Interval | None
    human_only: Interval | None
    judge_only: Interval | None
    reason: str | None = None


def _mean_t(values: FloatArray, level: float, what: str) -> Interval:
    """The t interval of a mean of differences, floored where every difference is 0 (module docstring)."""
    n = values.size
    estimate = float(values.mean())
    se = float(values.std(ddof=1)) / math.sqrt(n)
    quantile = float(_scipy.stdtrit(n - 1, 0.5 + 0.5 * level))
    if se > 0.0:
        low, high = estimate - quantile * se, estimate + quantile * se
        method = f"t, {what}"
    else:
        z2 = normal_quantile(level) ** 2
        low, high = estimate - z2 / (n + z2), estimate + z2 / (n + z2)
        method = f"{what}, none differ: Wilson bound"
    return Interval(estimate, max(low, -1.0), min(high, 1.0), level, method, n, se)


def _counts(values: FloatArray) -> Bank:
    """The bank of a 0/1 items x trials array (NaN: absent), its items with a trial."""
    n = (~np.isnan(values)).sum(axis=1)
    c = np.nansum(values, axis=1).astype(np.int64)
    return Bank.from_counts(n[n > 0], c[n > 0])


def _figure(
    judge: FloatArray, human: FloatArray, label: str, metric: str, k: int, level: float
) -> CalibratedFigure:
    from trialscore.results.scorecard import MetricSpec, metric_interval
    from trialscore.stats._ppi import item_values, ppi_interval

    spec = MetricSpec("avg") if metric == "pass@1" else MetricSpec(metric, k)
    values = item_values(judge, human, metric, k)
    n = int(values.labelled.sum())
    try:
        judge_only = metric_interval(_counts(judge), spec, level=level)
    except EvaluationError as exc:
        return CalibratedFigure(label, n, None, None, None, None, str(exc))
    if n < 2:
        reason = (
            f"human labels cover {n} item{'s' if n != 1 else ''}"
            + (" with every trial labelled" if metric != "pass@1" else "")
            + "; at least 2 are needed"
        )
        return CalibratedFigure(label, n, None, None, judge_only, None, reason)
    corrected = ppi_interval(judge, human, metric, k, level)
    labelled_human = np.where(values.labelled[:, None], human, np.nan)
    try:
        human_only: Interval | None = metric_interval(_counts(labelled_human), spec, level=level)
    except EvaluationError:
        human_only = None
    differences = values.f[values.labelled] - values.y[values.labelled]
    bias = _mean_t(differences, level, "judge minus human per labelled item")
    return CalibratedFigure(label, n, corrected, human_only, judge_only, bias)


def _specs(ks: Sequence[int]) -> list[tuple[str, str, int]]:
    specs = [("pass@1", "pass@1", 1)]
    for k in sorted({int(k) for k in ks if int(k) >= 2}):
        specs += [(f"pass@{k}", "pass@k", k), (f"pass^{k}", "pass^k", k)]
    return specs


def calibrate(
    judge: FloatArray, human: FloatArray, ks: Sequence[int] = (), level: float = 0.95
) -> Calibration:
    """The calibrated figures of one target: pass@1, and pass@k and pass^k for each ``k >= 2`` of ``ks``."""
    judge = np.asarray(judge, dtype=np.float64)
    human = np.asarray(human, dtype=np.float64)
    labelled = ~np.isnan(human)
    said, truth = judge[labelled], human[labelled]
    passes, fails = truth == 1.0, truth == 0.0
    figures = tuple(_figure(judge, human, label, metric, k, level) for label, metric, k in _specs(ks))
    return Calibration(
        items=int((~np.isnan(judge)).any(axis=1).sum()),
        labelled_items=int(labelled.any(axis=1).sum()),
        labelled_trials=int(labelled.sum()),
        agreement=float((said == truth).mean()) if said.size else math.nan,
        tpr=float((said[passes] == 1.0).mean()) if passes.any() else None,
        tnr=float((said[fails] == 0.0).mean()) if fails.any() else None,
        figures=figures,
    )


def calibrate_pair(
    judge_a: FloatArray,
    human_a: FloatArray,
    judge_b: FloatArray,
    human_b: FloatArray,
    metric: str = "pass@1",
    k: int = 1,
    level: float = 0.95,
) -> PairCalibration:
    """The paired difference A - B by human standards, on items given in the same rows of every array."""
    from trialscore.stats._ppi import item_values, ppi_paired_interval

    label = "pass@1" if metric == "pass@1" else metric.replace("k", str(k))
    first, second = item_values(judge_a, human_a, metric, k), item_values(judge_b, human_b, metric, k)
    both = first.labelled & second.labelled
    judged = first.judge - second.judge
    judge_only = _mean_t(judged, level, "judge-only paired difference") if judged.size >= 2 else None
    n = int(both.sum())
    if n < 2:
        reason = f"human labels cover {n} item{'s' if n != 1 else ''} of both targets; at least 2 are needed"
        return PairCalibration(label, int(judged.size), n, None, None, judge_only, reason)
    corrected = ppi_paired_interval(judge_a, human_a, judge_b, human_b, metric, k, level)
    human_only = _mean_t(first.y[both] - second.y[both], level, "human-only paired difference")
    return PairCalibration(label, int(judged.size), n, corrected, human_only, judge_only)
