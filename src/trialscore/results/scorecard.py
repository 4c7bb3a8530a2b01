r"""Score each group of read results: metrics with intervals, flaky items, seed-002 advice.

This is what ``trialscore score`` prints.  Metric names:

==================  ====================================================  =========
name                estimator (:mod:`trialscore.estimators`)               uses k
==================  ====================================================  =========
``avg``             mean pass rate (= pass@1)                              no
``pass@k``          unbiased pass@k                                        yes
``pass^k``          pass^k, all k drawn trials pass                        yes
``g-pass@k``        G-Pass@k_tau, at least ``ceil(tau k)`` pass (``tau``)  yes
``mg-pass@k``       mG-Pass@k                                              yes
``maj@k``           strict majority of k passes                            yes
``bayes``           Bayes@N posterior mean, credible interval              no
==================  ====================================================  =========

(The library's ``g_pass_at_k`` is seed 004's alias of pass^k; here ``g-pass@k``
names G-Pass@k_tau with the given ``tau``, default 0.5, and the output calls it
``g-pass@k_tau``.)

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
  interval on the pooled trials :math:`\sum c / \sum n`, as seed 002 does; this
  treats trials as independent, so it is offered only for pass rates (``avg``,
  or a k = 1 metric) and is too narrow when items differ (prefer ``bootstrap``).

Bayes@N always gets its posterior credible interval.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from trialscore.bank import Bank
from trialscore.errors import EvaluationError
from trialscore.results.counts import GroupCounts
from trialscore.stats.intervals import Interval

__all__ = [
    "CI_METHODS",
    "METRICS",
    "GroupScore",
    "MetricScore",
    "MetricSpec",
    "metric_interval",
    "metric_specs",
    "score_group",
]

#: CLI metric name -> (estimator name, takes k).
METRICS: dict[str, tuple[str, bool]] = {
    "avg": ("avg", False),
    "pass@k": ("pass@k", True),
    "pass^k": ("pass^k", True),
    "g-pass@k": ("g-pass@k_tau", True),
    "g-pass@k_tau": ("g-pass@k_tau", True),
    "mg-pass@k": ("mg-pass@k", True),
    "maj@k": ("maj@k", True),
    "bayes": ("bayes", False),
}

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


@dataclass(frozen=True)
class MetricSpec:
    """One column of a score table: estimator name, its ``k`` and ``tau`` (None when unused)."""

    metric: str
    k: int | None = None
    tau: float | None = None

    @property
    def label(self) -> str:
        """``pass@k`` with k filled in: ``pass@5``, ``pass^2``, ``g-pass@4_tau=0.5``, ``avg``.

        >>> MetricSpec("pass^k", 3).label, MetricSpec("g-pass@k_tau", 4, 0.5).label
        ('pass^3', 'g-pass@4_tau=0.5')
        """
        if self.k is None:
            return self.metric
        text = self.metric.replace("@k", f"@{self.k}").replace("^k", f"^{self.k}")
        return text.replace("_tau", f"_tau={self.tau:g}") if self.tau is not None else text


def metric_specs(metrics: Sequence[str], ks: Sequence[int], tau: float = 0.5) -> list[MetricSpec]:
    """Expand metric names over the ``k`` values (k-free metrics once each).

    >>> [spec.label for spec in metric_specs(["pass@k", "bayes", "g-pass@k"], [1, 3])]
    ['pass@1', 'pass@3', 'bayes', 'g-pass@1_tau=0.5', 'g-pass@3_tau=0.5']
    >>> metric_specs(["pass@x"], [1])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    trialscore.errors.EvaluationError: metric must be one of avg, pass@k, pass^k, ...; got 'pass@x'
    """
    specs: list[MetricSpec] = []
    for name in metrics:
        key = name.strip().lower()
        if key not in METRICS:
            raise EvaluationError(f"metric must be one of {', '.join(METRICS)}; got {name!r}")
        estimator, takes_k = METRICS[key]
        if not takes_k:
            specs.append(MetricSpec(estimator))
            continue
        if not ks:
            raise EvaluationError(f"metric {name!r} needs at least one k; got none")
        for k in ks:
            specs.append(MetricSpec(estimator, int(k), tau if estimator == "g-pass@k_tau" else None))
    return specs


def metric_interval(
    bank: Bank,
    spec: MetricSpec,
    ci: str = "auto",
    level: float = 0.95,
    resamples: int = 10_000,
    seed: int = 0,
    states: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
) -> Interval:
    """The estimate of ``spec`` on ``bank`` with its interval (a :class:`trialscore.stats.Interval`).

    ``states`` may pass ``bank.states()`` when it is already computed (several metrics of one bank).

    >>> bank = Bank.from_counts([4, 4, 4, 4, 4, 4], [1, 3, 4, 2, 4, 3])
    >>> print(metric_interval(bank, MetricSpec("avg")))
    0.7083 [0.3807, 0.9056] (95% wilson-eff, n=6, effective n=14.51)
    >>> print(metric_interval(bank, MetricSpec("pass@k", 2), ci="bootstrap"))
    0.8889 [0.7222, 1] (95% bootstrap percentile (10000 resamples, seed 0), n=6)
    """
    from trialscore.stats import bayes_interval, bootstrap_interval, item_interval, proportion_interval

    if ci not in CI_METHODS:
        raise EvaluationError(f"ci must be one of {', '.join(CI_METHODS)}; got {ci!r}")
    if spec.metric == "bayes":
        return bayes_interval(bank, level=level)
    k = bank.check_k(spec.k) if spec.k is not None else None
    if ci in ("bootstrap", "bca"):
        method = "percentile" if ci == "bootstrap" else "bca"
        return bootstrap_interval(
            bank, spec.metric, k, spec.tau, level=level, method=method, resamples=resamples, seed=seed
        )
    if ci in _PROPORTION:
        if not (spec.metric == "avg" or k == 1):
            raise EvaluationError(
                f"ci {ci!r} is a proportion interval of the pooled trials: it fits avg or a k = 1 metric, "
                f"not {spec.label}; use --ci bootstrap"
            )
        return proportion_interval(int(bank.c.sum()), int(bank.n.sum()), level, ci)
    return item_interval(bank, spec.metric, k, spec.tau, level, states)


@dataclass(frozen=True)
class MetricScore:
    """One metric of one group: its spec and interval (estimate inside), or why it has none."""

    spec: MetricSpec
    interval: Interval | None
    reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain types for JSON."""
        return {
            "metric": self.spec.metric,
            "label": self.spec.label,
            "k": self.spec.k,
            "tau": self.spec.tau,
            "estimate": None if self.interval is None else self.interval.estimate,
            "interval": None if self.interval is None else self.interval.to_dict(),
            "reason": self.reason,
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
    advice: tuple[Any, ...]

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
) -> GroupScore:
    """Every metric of ``specs`` with its interval, the flaky items (``0 < c < n``) and the advice.

    >>> from trialscore.results.counts import GroupCounts
    >>> import numpy as np
    >>> group = GroupCounts((("target", "m"),), np.array(["a", "b", "c"], dtype=object),
    ...                     np.array([4, 4, 4]), np.array([1, 3, 4]), np.array([0, 0, 0]))
    >>> card = score_group(group, [MetricSpec("avg")])
    >>> card.flaky_items, round(card.metrics[0].interval.estimate, 4), [a.code for a in card.advice]
    (2, 0.6667, ['report_range', 'retry_once', 'inconsistent_agent'])
    """
    from trialscore.advice import insights

    scored = group.n > 0
    common = {
        "key": group.key,
        "label": group.label,
        "items": group.items,
        "trials": group.trials,
        "errored_trials": group.errored_trials,
        "items_all_errored": group.items_all_errored,
    }
    if not scored.any():
        reason = (
            f"no scored trial in {group.label}: all {group.errored_trials} trials errored "
            "(--errors fail counts them as failures)"
        )
        metrics = tuple(MetricScore(spec, None, reason) for spec in specs)
        return GroupScore(**common, flaky_items=0, metrics=metrics, advice=())
    bank = group.bank()
    states = bank.states()
    scores = []
    for spec in specs:
        reason = _unscorable(group, bank, spec, scored)
        interval = None if reason else metric_interval(bank, spec, ci, level, resamples, seed, states)
        scores.append(MetricScore(spec, interval, reason))
    return GroupScore(
        **common,
        flaky_items=int(((bank.c > 0) & (bank.c < bank.n)).sum()),
        metrics=tuple(scores),
        advice=insights(bank, level=level),
    )


def _unscorable(group: GroupCounts, bank: Bank, spec: MetricSpec, scored: np.ndarray) -> str | None:
    """Why ``spec`` cannot be computed on this group (k above a case's trials), naming the cases."""
    if spec.k is None or spec.k <= bank.min_trials:
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
