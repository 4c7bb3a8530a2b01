r"""The metric registry: one table of every metric name trialscore accepts, and what it means.

Every part of trialscore that takes a metric name (the estimators, the
intervals and bootstrap, comparisons, ranking, ``score``/``compare``/``rank``
and their help) resolves it here, so one name means one thing everywhere.

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

``g-pass@k`` is ambiguous (seed 004's ``g_pass_at_k`` is pass^k; the
G-Pass@k_tau paper's G-Pass is ``g-pass@k_tau``) and is refused with both
choices named.

>>> resolve_metric("pass_hat_k").name, resolve_metric("G_PASS_AT_K_TAO").name
('pass^k', 'g-pass@k_tau')
>>> resolve_metric("g-pass@k")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
trialscore.errors.EvaluationError: metric 'g-pass@k' is ambiguous: say pass^k (... or g-pass@k_tau (...)
>>> METRICS["g-pass@k_tau"].label_for(4, 0.5)
'g-pass@4_tau=0.5'
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from trialscore.core._kernels import (
    Kernel,
    kernel_avg,
    kernel_g_pass,
    kernel_maj,
    kernel_mg_pass,
    kernel_pass_at,
    kernel_pass_hat,
)
from trialscore.errors import EvaluationError

__all__ = ["METRICS", "Metric", "metric_names", "resolve_metric"]


@dataclass(frozen=True)
class Metric:
    """One metric: its canonical name, aliases, what it needs, its per-state kernel and its estimator.

    ``kernel`` is None for ``bayes`` (a posterior, not a mean of per-item values);
    ``function`` names the estimator in :mod:`trialscore.core.estimators`.
    """

    name: str
    aliases: tuple[str, ...]
    needs_k: bool
    needs_tau: bool
    kernel: Kernel | None
    function: str
    summary: str

    def label_for(self, k: int | None = None, tau: float | None = None) -> str:
        """The name with ``k`` (and ``tau``) filled in: ``pass@5``, ``pass^2``, ``g-pass@4_tau=0.5``."""
        if not self.needs_k or k is None:
            return self.name
        text = self.name.replace("@k", f"@{k}").replace("^k", f"^{k}")
        return text.replace("_tau", f"_tau={tau:g}") if self.needs_tau and tau is not None else text


_TABLE = (
    Metric("avg", ("mean",), False, False, kernel_avg, "avg", "mean pass rate c/n per item (= pass@1)"),
    Metric("pass@k", ("pass_at_k",), True, False, kernel_pass_at, "pass_at_k", "P(at least 1 of k passes)"),
    Metric(
        "pass^k", ("pass_hat_k", "g_pass_at_k"), True, False, kernel_pass_hat, "pass_hat_k",
        "P(all k pass); seed 004's g_pass_at_k",
    ),
    Metric(
        "g-pass@k_tau", ("g_pass_at_k_tau", "g_pass_at_k_tao"), True, True, kernel_g_pass, "g_pass_at_k_tau",
        "P(at least ceil(tau k) of k pass), G-Pass@k_tau",
    ),
    Metric("mg-pass@k", ("mg_pass_at_k",), True, False, kernel_mg_pass, "mg_pass_at_k",
           "G-Pass@k_tau averaged over tau in (0.5, 1]"),
    Metric("maj@k", ("maj_at_k",), True, False, kernel_maj, "maj_at_k", "P(a strict majority of k pass)"),
    Metric("bayes", ("bayes@n",), False, False, None, "bayes",
           "Bayes@N posterior mean for these items under a uniform prior"),
)  # fmt: skip

#: Canonical name -> :class:`Metric`, read-only.
METRICS: Mapping[str, Metric] = MappingProxyType({metric.name: metric for metric in _TABLE})

_BY_NAME: Mapping[str, Metric] = MappingProxyType(
    {name: metric for metric in _TABLE for name in (metric.name, *metric.aliases)}
)

#: Names that mean different things in different sources: refused, with the choices.
_AMBIGUOUS: Mapping[str, tuple[str, ...]] = MappingProxyType({"g-pass@k": ("pass^k", "g-pass@k_tau")})


def metric_names(*, per_item: bool = False) -> list[str]:
    """Canonical names, in table order (``per_item=True``: only those with a per-state kernel)."""
    return [metric.name for metric in _TABLE if not per_item or metric.kernel is not None]


def resolve_metric(name: object, *, per_item: bool = False) -> Metric:
    """The :class:`Metric` a name or alias (any case) means; an error naming the choices otherwise.

    ``per_item=True`` refuses ``bayes`` (for callers that need per-item values).
    """
    key = str(name).strip().lower()
    if key in _AMBIGUOUS:
        choices = " or ".join(f"{choice} ({METRICS[choice].summary})" for choice in _AMBIGUOUS[key])
        raise EvaluationError(f"metric {name!r} is ambiguous: say {choices}")
    metric = _BY_NAME.get(key)
    if metric is None or (per_item and metric.kernel is None):
        known = ", ".join(metric_names(per_item=per_item))
        raise EvaluationError(f"metric must be one of {known}; got {name!r}")
    return metric
