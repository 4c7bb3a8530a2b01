r"""Score each group of read results: metrics with intervals, flaky items, seed-002 advice.

This is what ``trialscore score`` prints.  Metrics are those of the one
registry, :mod:`trialscore.core.metrics` (``avg``, ``pass@k``, ``pass^k``,
``g-pass@k_tau``, ``mg-pass@k``, ``maj@k``, ``bayes``, their aliases, and any
metric registered since); the ambiguous ``g-pass@k`` is refused with both
meanings named.  A :class:`MetricSpec` holds the resolved
:class:`~trialscore.core.metrics.Metric`, and every choice below asks it.

Intervals (``ci``), at ``level``:

* ``auto`` (default) = ``wilson-eff``: Wilson's score interval of the mean of the
  per-item values on an effective number of items set by their spread, between the
  number of items and the information of the trials
  (:func:`trialscore.stats.item_interval`); never zero width, inside [0, 1], with
  its measured coverage in docs/stats.md;
* ``bootstrap`` / ``bca``: items resampled with replacement, percentile / BCa
  (:func:`trialscore.stats.bootstrap_interval`), seeded; a bootstrap with no
  spread (every item equal) falls back to ``wilson-eff`` and says so;
* ``wilson``, ``clopper-pearson``, ``jeffreys``, ``agresti-coull``: a proportion
  interval on the pooled trials :math:`\sum c / \sum n`, as seed 002 does.  It
  treats every trial as an independent unit, which holds only when each item
  has one trial (or there is a single item): then the pooled rate *is* the
  pass rate, the estimate is unchanged and the interval exact.  So it is
  offered only there, and only for pass rates (a metric whose per-item value
  is ``c / n``: ``avg``, pass@1, pass^1...).
  With several trials per item the trials of one item are correlated (items
  differ), the pooled rate differs from ``avg`` on ragged data, and the error
  names the measured design effect :func:`design_effect` instead.

With ``clusters`` (``--cluster-col``: items that share a passage, a repository...)
the interval is the cluster-robust t interval of the per-item values
(:func:`trialscore.stats.clustered_interval`: clustered SE, t quantile at
``G - 1`` degrees of freedom for ``G`` clusters), clipped to [0, 1].

Bayes@N (a metric whose only interval is its posterior) always gets its
posterior credible interval (for these items under a uniform prior;
:func:`trialscore.stats.bayes_interval`).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from trialscore._words import all_of, did_you_mean
from trialscore.core.bank import Bank
from trialscore.core.estimators import item_scores
from trialscore.core.metrics import Metric, MetricLike, resolve_metric
from trialscore.errors import EvaluationError, parameter, worded
from trialscore.results.counts import GroupCounts
from trialscore.stats._intervals import Interval

if TYPE_CHECKING:
    from trialscore.compat.advice import Advice

__all__ = [
    "CI_METHODS",
    "GroupScore",
    "MetricScore",
    "MetricSpec",
    "design_effect",
    "metric_interval",
    "metric_specs",
    "score_group",
]

#: Interval methods and what they compute.
CI_METHODS: dict[str, str] = {
    "auto": "wilson-eff: Wilson interval of the per-item values on an effective number of items",
    "wilson-eff": "Wilson interval of the per-item values on an effective number of items",
    "bootstrap": "percentile bootstrap over items",
    "bca": "BCa bootstrap over items",
    "wilson": "Wilson interval of the pooled trials",
    "clopper-pearson": "Clopper-Pearson interval of the pooled trials",
    "jeffreys": "Jeffreys interval of the pooled trials",
    "agresti-coull": "Agresti-Coull interval of the pooled trials",
}

_PROPORTION = ("wilson", "clopper-pearson", "jeffreys", "agresti-coull")

#: The metric whose estimator an output states (:mod:`trialscore.stats._conventions`).
PASS_HAT_K = "pass^k"


@dataclass(frozen=True, init=False)
class MetricSpec:
    """One column of a score table: the metric (a name is resolved), its ``k`` and ``tau`` (or None), and
    for pass^k its ``estimator`` (``"unbiased"``, the default, or ``"plugin"``: the conventions of
    :mod:`trialscore.stats._conventions`; None for every other metric)."""

    metric: Metric
    k: int | None
    tau: float | None
    estimator: str | None

    def __init__(
        self,
        metric: MetricLike,
        k: int | None = None,
        tau: float | None = None,
        *,
        trial_values: bool = False,
        estimator: str | None = None,
    ) -> None:
        from trialscore.stats._conventions import check_estimator

        resolved = resolve_metric(metric, trial_values=trial_values)
        object.__setattr__(self, "metric", resolved)
        object.__setattr__(self, "k", k)
        object.__setattr__(self, "tau", tau)
        hat = resolved.name == PASS_HAT_K
        if estimator is not None and not hat:
            raise EvaluationError(
                f"estimator goes with pass^k; got estimator={estimator!r} for {resolved.name}"
            )
        object.__setattr__(self, "estimator", check_estimator(estimator or "unbiased") if hat else None)

    @property
    def plugin(self) -> bool:
        """Whether this is the plug-in pass^k at a k where it differs from the unbiased one (k >= 2)."""
        return self.estimator == "plugin" and (self.k or 1) >= 2

    @property
    def label(self) -> str:
        """``pass@k`` with k filled in: ``pass@5``, ``pass^2``, ``g-pass@4_tau=0.5``, ``avg``; the plug-in
        pass^k says so (``pass^2 (plug-in)``).

        >>> MetricSpec("pass^k", 3).label, MetricSpec("g-pass@k_tau", 4, 0.5).label
        ('pass^3', 'g-pass@4_tau=0.5')
        >>> MetricSpec("pass^k", 3, estimator="plugin").label
        'pass^3 (plug-in)'
        """
        return self.metric.label_for(self.k, self.tau) + " (plug-in)" * self.plugin


def metric_specs(
    metrics: Sequence[MetricLike],
    ks: Sequence[int],
    tau: float = 0.5,
    *,
    trial_values: bool = False,
    pass_hat_k: str = "unbiased",
) -> list[MetricSpec]:
    """Expand metric names over the ``k`` values (k-free metrics once each); ``trial_values=True`` admits
    the metrics of trial values (``cost-per-success``: served from trial detail by the caller);
    ``pass_hat_k`` is pass^k's estimator (``"unbiased"`` or ``"plugin"``).

    >>> [spec.label for spec in metric_specs(["pass@k", "bayes", "g-pass@k_tau"], [1, 3])]
    ['pass@1', 'pass@3', 'bayes', 'g-pass@1_tau=0.5', 'g-pass@3_tau=0.5']
    >>> metric_specs(["pass@x"], [1])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    trialscore.errors.EvaluationError: metric must be one of avg, ...; got 'pass@x' (did you mean 'pass@k'?)
    """
    specs: list[MetricSpec] = []
    for name in metrics:
        metric = resolve_metric(name, trial_values=trial_values)
        if not metric.needs_k:
            specs.append(MetricSpec(metric, trial_values=trial_values))
            continue
        if not ks:
            raise EvaluationError(f"metric {str(name)!r} needs at least one k; got none")
        estimator = pass_hat_k if metric.name == PASS_HAT_K else None
        for k in ks:
            specs.append(MetricSpec(metric, int(k), tau if metric.needs_tau else None, estimator=estimator))
    return specs


def design_effect(bank: Bank) -> float:
    r"""How much the pooled-trials binomial variance understates the variance of the pass rate.

    .. math::

        \mathrm{deff} = \frac{s^2_{\bar y} / M}{\hat p(1 - \hat p) / \sum_i n_i},
        \qquad \hat p = \frac{\sum_i c_i}{\sum_i n_i},

    with :math:`s^2_{\bar y}` the sample variance (``ddof=1``) of the ``M`` per-item
    pass rates :math:`c_i/n_i`: the variance of the mean over items (items as the
    independent units) over the binomial variance of the pooled rate (trials as
    the independent units).  About 1 when every item has the same pass rate,
    :math:`1 + (n - 1)\rho` with :math:`n` trials per item and intra-item
    correlation :math:`\rho`.  NaN when it cannot be measured (fewer than 2
    items, or every trial with the same outcome).

    >>> round(design_effect(Bank.from_counts([4, 4, 4, 4], [4, 4, 0, 0])), 3)
    5.333
    """
    total = float(bank.n.sum())
    pooled = float(bank.c.sum()) / total
    binomial = pooled * (1.0 - pooled) / total
    if bank.items < 2 or binomial == 0.0:
        return math.nan
    return float(np.var(bank.c / bank.n, ddof=1)) / bank.items / binomial


def _check_trials_independent(bank: Bank, ci: str) -> None:
    """Pooled-trials intervals only where trials are the independent units."""
    if bank.items == 1 or bank.trials == 1:
        return
    effect = design_effect(bank)
    if math.isnan(effect):
        measured = "the design effect cannot be measured (every trial has the same outcome)"
    else:
        measured = (
            f"the measured design effect is {effect:.3g} (variance of the mean of the {bank.items} per-item "
            f"pass rates over the binomial variance of the pooled rate {bank.c.sum()}/{bank.n.sum()})"
        )
    raise EvaluationError(
        f"{parameter('ci')} {ci} pools all trials as independent, which holds only when every item has one "
        f"trial (or there is one item); got items with up to {int(bank.n.max())} trials, and {measured}. "
        f"Use the default {parameter('ci')} auto, which treats the items as the independent units"
    )


def _clustered_metric_interval(
    bank: Bank, spec: MetricSpec, k: int | None, ci: str, level: float, clusters: Sequence[Hashable]
) -> Interval:
    from trialscore.stats import clustered_interval
    from trialscore.stats._noise import trial_noise_variances

    if ci not in ("auto", "t"):
        raise EvaluationError(
            f"{parameter('columns.cluster')} gives the cluster-robust t interval; it cannot be combined with "
            f"{parameter('ci')} {ci} (leave {parameter('ci')} at auto)"
        )
    keys = list(clusters)
    if len(set(keys)) < 2:
        raise EvaluationError(
            f"{parameter('columns.cluster')} must put the {bank.items} items in at least 2 clusters to "
            f"measure a clustered standard error; got {len(set(keys))}"
        )
    # The trials' own noise floors the SE: item values that agree within clusters are not certainty.
    floor = math.sqrt(float(trial_noise_variances(bank, spec.metric, k, spec.tau).mean()) / bank.items)
    values = item_scores(bank, spec.metric, k, spec.tau)
    return clustered_interval(values, keys, level, clip=(0.0, 1.0), se_floor=floor)


def metric_interval(
    bank: Bank,
    spec: MetricSpec,
    ci: str = "auto",
    level: float = 0.95,
    resamples: int = 10_000,
    seed: int = 0,
    states: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
    clusters: Sequence[Hashable] | None = None,
) -> Interval:
    """The estimate of ``spec`` on ``bank`` with its interval (a :class:`trialscore.stats.Interval`).

    ``states`` may pass ``bank.states()`` when it is already computed (several metrics of one bank).
    ``clusters`` (one key per item of ``bank``, from ``--cluster-col``) replaces the default
    interval by the cluster-robust t interval (:func:`trialscore.stats.clustered_interval`,
    ``G - 1`` degrees of freedom).  The kinds of interval come from the metric
    (:meth:`~trialscore.core.metrics.Metric.intervals`): Bayes@N keeps its posterior for these
    items whatever ``ci`` says, and the pooled-trials methods fit only a pass rate.

    >>> bank = Bank.from_counts([4, 4, 4, 4, 4, 4], [1, 3, 4, 2, 4, 3])
    >>> print(metric_interval(bank, MetricSpec("avg")))
    0.7083 [0.3807, 0.9056] (95% wilson-eff, n=6, effective n=14.51)
    >>> print(metric_interval(bank, MetricSpec("pass@k", 2), ci="bootstrap"))
    0.8889 [0.7222, 1] (95% bootstrap percentile (10000 resamples, seed 0), n=6)
    """
    from trialscore.stats import bayes_interval, bootstrap_interval, item_interval, proportion_interval

    if ci not in CI_METHODS:
        raise EvaluationError(
            f"ci must be one of {', '.join(CI_METHODS)}; got {ci!r}{did_you_mean(ci, CI_METHODS)}"
        )
    if "posterior" in spec.metric.intervals():
        return bayes_interval(bank, level=level)
    if spec.plugin:
        return _plugin_interval(bank, spec, ci, level, resamples, seed, clusters)
    k = bank.check_k(spec.k) if spec.k is not None else None
    if clusters is not None:
        return _clustered_metric_interval(bank, spec, k, ci, level, clusters)
    if ci in ("bootstrap", "bca"):
        method = "percentile" if ci == "bootstrap" else "bca"
        return bootstrap_interval(
            bank, spec.metric, k, spec.tau, level=level, method=method, resamples=resamples, seed=seed
        )
    if ci in _PROPORTION:
        if "pooled trials" not in spec.metric.intervals(k, spec.tau):
            raise EvaluationError(
                f"ci {ci!r} is a proportion interval of the pooled trials: it fits avg or a k = 1 metric, "
                f"not {spec.label}; use {parameter('ci')} bootstrap"
            )
        _check_trials_independent(bank, ci)
        return proportion_interval(int(bank.c.sum()), int(bank.n.sum()), level, ci)
    return item_interval(bank, spec.metric, k, spec.tau, level, states)


def _plugin_interval(
    bank: Bank,
    spec: MetricSpec,
    ci: str,
    level: float,
    resamples: int,
    seed: int,
    clusters: Sequence[Hashable] | None,
) -> Interval:
    """The plug-in pass^k with its interval: the default over items, or the bootstrap of its item values."""
    from trialscore.stats import bootstrap_mean_interval
    from trialscore.stats._conventions import plugin_interval, plugin_values

    assert spec.k is not None
    if clusters is not None or ci in _PROPORTION:
        asked = parameter("columns.cluster") if clusters is not None else f"{parameter('ci')} {ci}"
        raise EvaluationError(
            f"the plug-in pass^k has the interval of its per-item values (default, or {parameter('ci')} "
            f"bootstrap / bca); {asked} is not offered for it"
        )
    interval = plugin_interval(bank, spec.k, level)
    if ci in ("bootstrap", "bca"):
        n, c, freq = bank.states()
        values = np.repeat(plugin_values(n, c, spec.k), freq)
        if np.ptp(values) == 0:
            return replace(interval, method=f"{interval.method} (the bootstrap had no spread)")
        method = "percentile" if ci == "bootstrap" else "bca"
        return bootstrap_mean_interval(values, level=level, method=method, resamples=resamples, seed=seed)
    return interval


@dataclass(frozen=True)
class MetricScore:
    """One metric of one group: its spec and interval (estimate inside), or why it has none."""

    spec: MetricSpec
    interval: Interval | None
    reason: str | None = None
    convention: dict[str, str] | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain types for JSON (pass^k with its ``convention``: estimator and errored trials)."""
        return {
            "metric": self.spec.metric.name,
            "label": self.spec.label,
            "k": self.spec.k,
            "tau": self.spec.tau,
            "estimate": None if self.interval is None else self.interval.estimate,
            "interval": None if self.interval is None else self.interval.to_dict(),
            "reason": self.reason,
            **({} if self.convention is None else {"convention": self.convention}),
        }


@dataclass(frozen=True)
class GroupScore:
    """The score card of one group."""

    key: tuple[tuple[str, str | None], ...]
    label: str
    items: int
    trials: int
    errored_trials: int
    items_all_errored: int
    flaky_items: int
    metrics: tuple[MetricScore, ...]
    advice: tuple[Advice, ...]

    def to_dict(self) -> dict[str, Any]:
        """Plain types for JSON."""
        return {
            "group": dict(self.key),
            "label": self.label,
            "items": self.items,
            "trials": self.trials,
            "errored_trials": self.errored_trials,
            "items_all_errored": self.items_all_errored,
            "flaky_items": self.flaky_items,
            "metrics": [metric.to_dict() for metric in self.metrics],
            "advice": [advice.to_dict() for advice in self.advice],
        }


def score_group(
    group: GroupCounts,
    specs: Sequence[MetricSpec],
    ci: str = "auto",
    level: float = 0.95,
    resamples: int = 10_000,
    seed: int = 0,
    k: int | None = None,
) -> GroupScore:
    """Every metric of ``specs`` with its interval, the flaky items (``0 < c < n``) and the advice.

    The advice quotes an interval the table prints: the pass rate's (the first metric of ``specs``
    whose per-item value is ``c / n``: ``avg``, ``pass@1``, ``pass^1``...), with the retry advice
    and the comparison of pass@1 with pass@``k`` (``k`` at most the smallest number of trials;
    none when no metric of ``specs`` has a k of 2 or more); without a pass rate among ``specs``
    (``bayes`` alone) only the sample-size advice, quoting the first interval of ``specs``.

    >>> from trialscore.results.counts import GroupCounts
    >>> import numpy as np
    >>> group = GroupCounts((("target", "m"),), np.array(["a", "b", "c"], dtype=object),
    ...                     np.array([4, 4, 4]), np.array([1, 3, 4]), np.array([0, 0, 0]))
    >>> card = score_group(group, [MetricSpec("avg"), MetricSpec("pass@k", 4)])
    >>> card.flaky_items, round(card.metrics[0].interval.estimate, 4), [a.code for a in card.advice]
    (2, 0.6667, ['report_range', 'retry_once', 'inconsistent_agent'])
    >>> [a.code for a in score_group(group, [MetricSpec("bayes")]).advice]  # no pass rate, no k: sample size
    ['report_range']
    """
    from trialscore.compat.advice import insights

    scored = group.n > 0
    common: dict[str, Any] = {
        "key": group.key,
        "label": group.label,
        "items": group.items,
        "trials": group.trials,
        "errored_trials": group.errored_trials,
        "items_all_errored": group.items_all_errored,
    }
    if not scored.any():
        all_errored = worded(
            f"no scored trial in {group.label}: {all_of(group.errored_trials, 'trial')} errored "
            f"({parameter('errors')} fail counts them as failures)"
        )
        metrics = tuple(MetricScore(spec, None, all_errored, _stated(spec, group)) for spec in specs)
        return GroupScore(**common, flaky_items=0, metrics=metrics, advice=())
    bank = group.bank()
    states = bank.states()
    item_clusters = group.bank_clusters()
    clusters = None if item_clusters is None else item_clusters.tolist()
    scores = []
    for spec in specs:
        reason = _unscorable(group, bank, spec, scored)
        interval = (
            None if reason else metric_interval(bank, spec, ci, level, resamples, seed, states, clusters)
        )
        scores.append(MetricScore(spec, interval, reason, _stated(spec, group)))
    advice_k = None if k is None else min(k, bank.min_trials)
    if not any(spec.k is not None and spec.k >= 2 for spec in specs):
        advice_k = 1  # the table shows no pass@k to set against pass@1: no consistency advice
    pass_rate = next(
        (
            score.interval
            for score in scores
            if score.interval is not None and score.spec.metric.is_pass_rate(score.spec.k, score.spec.tau)
        ),
        None,
    )
    if pass_rate is not None:
        advice = insights(bank, advice_k, level, pass_rate)
    else:  # no pass rate in the table (bayes alone): the sample-size advice, quoting the table's interval
        shown = next((score.interval for score in scores if score.interval is not None), None)
        advice = insights(bank, 1, level, shown)[:1] if shown is not None else ()
    return GroupScore(
        **common,
        flaky_items=int(((bank.c > 0) & (bank.c < bank.n)).sum()),
        metrics=tuple(scores),
        advice=advice,
    )


def _stated(spec: MetricSpec, group: GroupCounts) -> dict[str, str] | None:
    """The convention a pass^k states (its estimator, and what errored trials did); None for other metrics."""
    from trialscore.stats._conventions import convention

    return None if spec.estimator is None else convention(spec.estimator, group.errors)


def _unscorable(group: GroupCounts, bank: Bank, spec: MetricSpec, scored: np.ndarray) -> str | None:
    """Why ``spec`` has no value here (fixed by definition, k above a case's trials), naming cases; the
    plug-in pass^k is defined for any k."""
    fixed = spec.metric.by_definition(spec.k, spec.tau)
    if fixed is not None:
        return fixed
    if spec.k is None or spec.k <= bank.min_trials or spec.plugin:
        return None
    short = np.flatnonzero(bank.n < spec.k)
    errored = group.errored[scored]
    named = ", ".join(
        f"{group.item[scored][index]!r} has {bank.n[index]}"
        + (f" ({errored[index]} errored)" if errored[index] and group.errors == "exclude" else "")
        for index in short[:3]
    )
    more = f" and {short.size - 3} more cases" if short.size > 3 else ""
    return (
        f"needs {spec.k} scored trials of every case; in {group.label}, case {named}{more}; "
        f"k can be at most {bank.min_trials} here"
    )
