r"""The metric registry: every metric trialscore knows, each one object that holds all it is.

A :class:`Metric` carries every fact about a metric: its name, aliases and
label, whether it needs ``k`` and ``tau``, its credit table (from which its
per-item values, its exact bank mean and its special cases follow), how its
items aggregate, what data it needs, which interval kinds it admits and which
direction is better.  Every public function that takes a metric accepts a
name, an alias or a :class:`Metric`, resolves it once on its first line
(:func:`resolve_metric`) and passes the object down, so no layer below parses a
name again or keeps a metric's facts of its own.

================  ========================================  =====  =====  ============================
name              per item, ``X ~ Hypergeometric(n, c, k)``   k      tau    aliases
================  ========================================  =====  =====  ============================
``avg``           ``c / n`` (pass@1, the mean pass rate)     no     no     ``mean``
``pass@k``        ``P(X >= 1)``                              yes    no     ``pass_at_k``
``pass^k``        ``P(X = k)``                               yes    no     ``pass_hat_k``,
                                                                           ``g_pass_at_k`` (seed 004)
``g-pass@k_tau``  ``P(X >= max(1, ceil(tau k)))``            yes    yes    ``g_pass_at_k_tau``,
                                                                           ``g_pass_at_k_tao``
``mg-pass@k``     ``(2/k) sum_{j>m} (j - m) P(X = j)``       yes    no     ``mg_pass_at_k``
``maj@k``         ``P(X > k/2)``                             yes    no     ``maj_at_k``
``bayes``         Bayes@N posterior mean (not per item)      no     no     ``bayes@n``
================  ========================================  =====  =====  ============================

Four metrics are built from a value of every trial instead of counts (``needs="trial values"``,
lower is better, a ratio over the group's trials: :mod:`trialscore.stats._effort`):
``cost-per-success`` (total cost / solved trials, USD), ``latency-per-success`` (seconds),
``tokens-per-success`` and ``steps-per-success``.  ``score``, ``compare`` and ``rank`` serve them
from the reader's trial detail (:mod:`trialscore.results.per_success`); every other layer reads
counts and refuses them, saying so.

``g-pass@k`` is ambiguous (seed 004's ``g_pass_at_k`` is pass^k; the
G-Pass@k_tau paper's G-Pass is ``g-pass@k_tau``) and is refused with both
choices named.  An unknown name is refused with the nearest known one.

Adding a metric of counts is one :func:`register_metric` call: its credit table
is all the estimators, intervals, comparisons, ranking and ``score``,
``compare`` and ``rank`` need (docs/architecture.md, "Metrics").

>>> resolve_metric("pass_hat_k").name, resolve_metric("G_PASS_AT_K_TAO").name
('pass^k', 'g-pass@k_tau')
>>> resolve_metric("g-pass@k")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
trialscore.errors.EvaluationError: metric 'g-pass@k' is ambiguous: say pass^k (... or g-pass@k_tau (...)
>>> resolve_metric("pass@q")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
trialscore.errors.EvaluationError: metric must be one of avg, ...; got 'pass@q' (did you mean 'pass@k'?)
>>> METRICS["g-pass@k_tau"].label_for(4, 0.5)
'g-pass@4_tau=0.5'
>>> METRICS["mg-pass@k"].credit_table(4), METRICS["mg-pass@k"].by_definition(1).split(":")[0]
(([0, 0, 0, 2, 4], 4), 'is 0 by definition at k = 1')
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal, TypeAlias

import numpy as np
from numpy.typing import NDArray

from trialscore.core._kernels import Tau, credit_values, tau_threshold
from trialscore.errors import EvaluationError

__all__ = [
    "METRICS",
    "Metric",
    "MetricLike",
    "metric_names",
    "register_metric",
    "resolve_metric",
    "unregister_metric",
]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

#: ``credit(k, tau) -> (table, scale)``: ``table[j] / scale`` is the credit of ``j`` successes among
#: ``k`` draws, integers with ``0 <= table[j] <= scale``.
Credit = Callable[[int, "Tau | None"], tuple[list[int], int]]

#: How a metric's items make the bank's value: ``"item mean"``, the mean over items of a per-item value
#: (its credit's expectation); ``"posterior"``, the Bayes@N posterior over the items' counts (its
#: estimator returns ``(mean, sd)``, its interval is the credible interval, its comparison the posteriors');
#: ``"ratio"``, a sum of the trials' values over a count of trials (a cost per solved trial).
Aggregation: TypeAlias = Literal["item mean", "posterior", "ratio"]

#: What a metric is computed from: ``"counts"``, each item's trials ``n`` and successes ``c``;
#: ``"trial values"``, a value of each trial (a cost, a latency), read from the trials' detail.
Needs: TypeAlias = Literal["counts", "trial values"]

#: The kinds of interval a metric may admit (:meth:`Metric.intervals`).
IntervalKind: TypeAlias = Literal["items", "pooled trials", "posterior"]


@dataclass(frozen=True)
class Metric:
    """One metric and everything it is.

    ``credit`` gives its credit table at ``k`` and ``tau`` (metrics of counts aggregated
    as an item mean); ``function`` names its estimator in :mod:`trialscore.core.estimators`
    (None: the mean over items of its credit's expectation, built from ``credit``);
    ``why_fixed`` explains why its value can be fixed by definition at some ``k``
    (:meth:`by_definition`).  ``str(metric)`` is its name.
    """

    name: str
    summary: str
    credit: Credit | None = None
    aliases: tuple[str, ...] = ()
    needs_k: bool = True
    needs_tau: bool = False
    aggregation: Aggregation = "item mean"
    needs: Needs = "counts"
    higher_is_better: bool = True
    function: str | None = None
    why_fixed: str = ""

    def __str__(self) -> str:
        return self.name

    def __reduce__(self) -> tuple[Callable[[str], Metric], tuple[str]]:
        """Pickled by name: the registered metric of that name on the other side (its credit may be a lambda).

        >>> import pickle
        >>> pickle.loads(pickle.dumps(METRICS["pass@k"])) is METRICS["pass@k"]
        True
        """
        return _registered, (self.name,)

    @property
    def per_item(self) -> bool:
        """Whether each item has a value of its own (the bank's value is their mean)."""
        return self.aggregation == "item mean"

    @property
    def kernel(self) -> Callable[[IntArray, IntArray, int, Tau | None], FloatArray] | None:
        """:meth:`values`, or None for a metric with no per-item values (``bayes``)."""
        return self.values if self.per_item else None

    def label_for(self, k: int | None = None, tau: float | None = None) -> str:
        """The name with ``k`` (and ``tau``) filled in: ``pass@5``, ``pass^2``, ``g-pass@4_tau=0.5``."""
        if not self.needs_k or k is None:
            return self.name
        text = self.name.replace("@k", f"@{k}").replace("^k", f"^{k}")
        return text.replace("_tau", f"_tau={tau:g}") if self.needs_tau and tau is not None else text

    def k_used(self, k: int | None) -> int:
        """The ``k`` its credit is taken at: 1 for a metric without k (``avg`` is one draw)."""
        if not self.needs_k:
            return 1
        if k is None:
            raise EvaluationError(f"metric {self.name} needs k; got k=None")
        return int(k)

    def credit_table(self, k: int | None = None, tau: Tau | None = None) -> tuple[list[int], int]:
        """Its credit table at ``k`` (1 when it needs none) and ``tau``, checked."""
        if self.credit is None:
            raise EvaluationError(f"metric {self.name} has no per-item credit ({self.summary})")
        draws = self.k_used(k)
        table, scale = self.credit(draws, tau)
        if (
            len(table) != draws + 1
            or isinstance(scale, bool)
            or not isinstance(scale, int)
            or scale < 1
            or not all(isinstance(value, int) and 0 <= value <= scale for value in table)
        ):
            raise EvaluationError(
                f"metric {self.name}'s credit at k={draws} must be k + 1 integers from 0 to a positive "
                f"integer scale; got {table!r} over {scale!r}"
            )
        return table, scale

    def values(self, n: IntArray, c: IntArray, k: int | None, tau: Tau | None) -> FloatArray:
        """Its value at each item state: ``E[credit[X]] / scale``, ``X ~ Hypergeometric(n, c, k)``."""
        return credit_values(n, c, self.k_used(k), *self.credit_table(k, tau))

    def is_pass_rate(self, k: int | None = None, tau: Tau | None = None) -> bool:
        """Whether its per-item value at ``k`` and ``tau`` is the pass rate ``c / n`` (credit [0, 1])."""
        if not self.per_item or (self.needs_k and k is None):
            return False
        return self.credit_table(k, tau) == ([0, 1], 1)

    @property
    def trial_mean(self) -> bool:
        """Whether its per-item value is the mean of the item's trials at any k (``avg``).

        Then graded scores in [0, 1] are accepted besides 0/1 outcomes, and the trial noise of
        0/1 trials has a closed form.
        """
        return not self.needs_k and self.is_pass_rate()

    def by_definition(self, k: int | None = None, tau: Tau | None = None) -> str | None:
        """Why its value is fixed by definition at ``k`` (the note shown instead of a number), or None.

        A credit table with one value throughout gives every item that value.
        """
        if not self.per_item or (self.needs_k and k is None):
            return None
        table, scale = self.credit_table(k, tau)
        if len(set(table)) > 1:
            return None
        why = f": {self.why_fixed}" if self.why_fixed else ""
        return f"is {table[0] / scale:g} by definition at k = {self.k_used(k)}{why}"

    def intervals(self, k: int | None = None, tau: Tau | None = None) -> tuple[IntervalKind, ...]:
        """The kinds of interval it admits at ``k`` and ``tau``.

        ``"posterior"``: its own credible interval, whatever method is asked (``bayes``);
        ``"items"``: intervals over the per-item values (Wilson on an effective number of items,
        bootstrap, BCa, cluster-robust t); ``"pooled trials"``: proportion intervals of the pooled
        trials ``sum c / sum n``, only where the per-item value is the pass rate ``c / n``.
        """
        if self.aggregation == "posterior":
            return ("posterior",)
        return ("items", "pooled trials") if self.is_pass_rate(k, tau) else ("items",)


#: Name -> metric, read-only (a live view: metrics registered later appear in it).
_REGISTRY: dict[str, Metric] = {}
METRICS: Mapping[str, Metric] = MappingProxyType(_REGISTRY)
_BY_NAME: dict[str, Metric] = {}

#: Names that mean different things in different sources: refused, with the choices.
_AMBIGUOUS: Mapping[str, tuple[str, ...]] = MappingProxyType({"g-pass@k": ("pass^k", "g-pass@k_tau")})

MetricLike: TypeAlias = "str | Metric"


def _key(name: object) -> str:
    return str(name).strip().lower()


def _registered(name: str) -> Metric:
    return _REGISTRY[name]


def register_metric(metric: Metric) -> Metric:
    """Add ``metric`` to the registry, so every layer accepts its name and aliases; returns it.

    Its name and aliases must be new, in lower case; a metric with ``k`` writes it as ``@k``
    or ``^k`` in its name (``label_for`` fills it in), one with ``tau`` also ``_tau``; a metric
    of counts aggregated as an item mean needs a ``credit``, a posterior a ``function``.

    >>> spread = register_metric(Metric("spread@k", "pass@k minus pass^k",
    ...                                 credit=lambda k, tau: ([0] + [1] * (k - 1) + [0], 1)))
    >>> resolve_metric("SPREAD@K") is spread, spread.label_for(3)
    (True, 'spread@3')
    >>> unregister_metric("spread@k")
    """
    names = (metric.name, *metric.aliases)
    problems = [f"{name!r} is taken" for name in names if _key(name) in _BY_NAME or _key(name) in _AMBIGUOUS]
    problems += [f"{name!r} is not in lower case without spaces" for name in names if _key(name) != name]
    if not metric.name:
        problems.append("the name is empty")
    if metric.needs_k and "@k" not in metric.name and "^k" not in metric.name:
        problems.append(f"a metric with k writes it in its name as @k or ^k; got {metric.name!r}")
    if metric.needs_tau and (not metric.needs_k or "_tau" not in metric.name):
        problems.append(f"a metric with tau needs k and writes _tau in its name; got {metric.name!r}")
    if metric.per_item and metric.needs == "counts" and metric.credit is None:
        problems.append("a metric of counts aggregated as an item mean needs its credit")
    if metric.aggregation == "posterior" and metric.function is None:
        problems.append("a posterior metric needs its estimator function")
    if problems:
        raise EvaluationError(f"metric {metric.name!r} cannot be registered: " + "; ".join(problems))
    _REGISTRY[metric.name] = metric
    for name in names:
        _BY_NAME[name] = metric
    return metric


def unregister_metric(name: str) -> None:
    """Remove a registered metric (by its name) and its aliases, as a test or notebook that added one."""
    found = _BY_NAME.get(_key(name))
    if found is None:
        raise EvaluationError(f"metric {name!r} is not registered")
    metric = _REGISTRY.pop(found.name)
    for alias in (metric.name, *metric.aliases):
        del _BY_NAME[alias]


def metric_names(*, per_item: bool = False) -> list[str]:
    """Canonical names, in registration order (``per_item=True``: only those with per-item values)."""
    return [metric.name for metric in _REGISTRY.values() if not per_item or metric.per_item]


def _lookup(name: str, per_item: bool) -> Metric:
    """The metric a name or alias means; an error naming the choices and the nearest name otherwise."""
    key = _key(name)
    if key in _AMBIGUOUS:
        choices = " or ".join(f"{choice} ({_REGISTRY[choice].summary})" for choice in _AMBIGUOUS[key])
        raise EvaluationError(f"metric {name!r} is ambiguous: say {choices}")
    found = _BY_NAME.get(key)
    if found is None:
        near = difflib.get_close_matches(key, list(_BY_NAME), n=1, cutoff=0.6)
        hint = f" (did you mean {_BY_NAME[near[0]].name!r}?)" if near else ""
        known = ", ".join(metric_names(per_item=per_item))
        raise EvaluationError(f"metric must be one of {known}; got {name!r}{hint}")
    return found


def resolve_metric(metric: MetricLike, *, per_item: bool = False, trial_values: bool = False) -> Metric:
    """The :class:`Metric` a name or alias (any case) means, or ``metric`` itself; an error otherwise.

    The error names the choices and the nearest known name.  ``per_item=True`` refuses a metric
    without per-item values (``bayes``), for callers that need them.  A metric that needs a value
    of every trial is refused unless ``trial_values=True`` (a caller that reads trial detail),
    saying where it is served.
    """
    found = metric if isinstance(metric, Metric) else _lookup(metric, per_item)
    if found.needs != "counts" and not trial_values:
        raise EvaluationError(
            f"metric {found.name} needs a value of every trial ({found.summary}): the score, compare and "
            "rank commands serve it from each trial's detail; this function reads each item's counts of "
            "trials and successes only"
        )
    if per_item and not found.per_item:
        raise EvaluationError(
            f"metric {found.name} has no per-item values ({found.summary}); metrics with per-item values: "
            f"{', '.join(metric_names(per_item=True))}"
        )
    return found


def _at_least(needed: Callable[[int, Tau | None], int]) -> Credit:
    """The credit ``1[j >= needed(k, tau)]`` (the threshold found once for all ``j``)."""

    def credit(k: int, tau: Tau | None) -> tuple[list[int], int]:
        if k < 0:  # no j: the threshold is never asked for
            return [], 1
        threshold = needed(k, tau)
        return [int(j >= threshold) for j in range(k + 1)], 1

    return credit


def _mg_pass(k: int, tau: Tau | None) -> tuple[list[int], int]:
    majority = (k + 1) // 2
    return [2 * max(j - majority, 0) for j in range(k + 1)], k


for _metric in (
    Metric(
        "avg", "mean pass rate c/n per item (= pass@1)", _at_least(lambda k, tau: 1), ("mean",),
        needs_k=False, function="avg",
    ),
    Metric(
        "pass@k", "P(at least 1 of k passes)", _at_least(lambda k, tau: 1), ("pass_at_k",),
        function="pass_at_k",
    ),
    Metric(
        "pass^k", "P(all k pass); seed 004's g_pass_at_k", _at_least(lambda k, tau: k),
        ("pass_hat_k", "g_pass_at_k"), function="pass_hat_k",
    ),
    Metric(
        "g-pass@k_tau", "P(at least ceil(tau k) of k pass), G-Pass@k_tau",
        _at_least(lambda k, tau: tau_threshold(tau, k)), ("g_pass_at_k_tau", "g_pass_at_k_tao"),
        needs_tau=True, function="g_pass_at_k_tau",
    ),
    Metric(
        "mg-pass@k", "G-Pass@k_tau averaged over tau in (0.5, 1]", _mg_pass, ("mg_pass_at_k",),
        function="mg_pass_at_k",
        why_fixed="mG-Pass@k averages G-Pass@k_tau over tau in (0.5, 1], and one draw never gets above a "
        "majority; use k >= 2",
    ),
    Metric(
        "maj@k", "P(a strict majority of k pass)", _at_least(lambda k, tau: k // 2 + 1), ("maj_at_k",),
        function="maj_at_k",
    ),
    Metric(
        "bayes", "Bayes@N posterior mean for these items under a uniform prior", aliases=("bayes@n",),
        needs_k=False, aggregation="posterior", function="bayes",
    ),
    *(
        Metric(
            f"{quantity}-per-success", f"total {quantity} / solved trials ({unit}), item-clustered ratio",
            aliases=(f"{quantity}_per_success",), needs_k=False, aggregation="ratio", needs="trial values",
            higher_is_better=False,
        )
        for quantity, unit in (("cost", "USD"), ("latency", "s"), ("tokens", "tokens"), ("steps", "steps"))
    ),
):  # fmt: skip
    register_metric(_metric)
