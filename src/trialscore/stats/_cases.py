r"""Which cases changed between two runs: a per-case exact test, corrected over the cases compared.

A case with :math:`c_1` passes in :math:`n_1` scored trials before and :math:`c_2` in
:math:`n_2` now is tested with Fisher's exact test: given the margins, the passes now are
:math:`X \sim \mathrm{Hypergeometric}(N = n_1 + n_2,\ K = c_1 + c_2,\ n_2)` when the pass rate did
not change, and the two-sided p-value is

.. math::

    p = \sum_{x:\ P(X = x) \le P(X = c_2)} P(X = x).

Over the :math:`m` cases compared, Holm's step-down rule keeps the chance of calling *any*
unchanged case changed at most :math:`\alpha`: with the p-values sorted,
:math:`p_{(1)} \le \dots \le p_{(m)}`, the cases :math:`(1), \dots, (j)` changed, where :math:`j`
is the last index with :math:`p_{(i)} \le \alpha / (m - i + 1)` for every :math:`i \le j`.
So ``0.9 -> 0.8`` on 10 trials is noise (p = 1), and ``10/10 -> 0/10`` is a change
(p = 1.1e-05).

>>> found = case_changes({"a": (10, 9), "b": (10, 10)}, {"a": (10, 8), "b": (10, 0)})
>>> [(c.case, c.direction, round(c.p_value, 7)) for c in found]
[('a', 'unchanged', 1.0), ('b', 'regressed', 1.08e-05)]
"""

from __future__ import annotations

import functools
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from typing import TypeVar

from trialscore._record import Record
from trialscore._validate import check_probability

__all__ = ["CaseChange", "case_changes"]

_Case = TypeVar("_Case", bound=Hashable)


@dataclass(frozen=True)
class CaseChange(Record):
    """One case before and now: ``(scored trials, passes)`` of each run, the change of its pass rate,
    the exact test's two-sided p-value and whether the case ``changed`` (Holm over the cases)."""

    case: Hashable
    before: tuple[int, int]
    now: tuple[int, int]
    delta: float
    p_value: float
    changed: bool

    @property
    def direction(self) -> str:
        """``regressed`` or ``improved`` when the case changed, else ``unchanged``."""
        if not self.changed:
            return "unchanged"
        return "regressed" if self.delta < 0 else "improved"


def _fisher(before: tuple[int, int], now: tuple[int, int]) -> float:
    (n1, c1), (n2, c2) = before, now
    return _fisher_table(c1, n1 - c1, c2, n2 - c2)


@functools.lru_cache(maxsize=65536)
def _fisher_table(pass_1: int, fail_1: int, pass_2: int, fail_2: int) -> float:
    """Fisher's two-sided p-value of one 2 x 2 table; cached, since suites repeat the same few tables."""
    from trialscore.stats import _scipy

    return float(_scipy.fisher_exact([[pass_1, fail_1], [pass_2, fail_2]]).pvalue)


def case_changes(
    before: Mapping[_Case, tuple[int, int]],
    now: Mapping[_Case, tuple[int, int]],
    alpha: float = 0.05,
) -> list[CaseChange]:
    """Every case in both runs with at least one scored trial in each, in the order of ``now``.

    ``before`` and ``now`` map a case to ``(scored trials, passes)``; errored trials are not in
    them (an errored trial is never a failure).  A case changed when Fisher's exact test, Holm-
    corrected over the cases compared, rejects at ``alpha`` (see the module docstring).
    """
    alpha = check_probability(alpha, "alpha")
    shared = [case for case in now if case in before and before[case][0] > 0 and now[case][0] > 0]
    tests = {case: _fisher(before[case], now[case]) for case in shared}
    order = sorted(shared, key=lambda case: tests[case])
    changed: set[_Case] = set()
    for rank, case in enumerate(order):
        if tests[case] > alpha / (len(order) - rank):
            break
        changed.add(case)
    out = []
    for case in shared:
        (n1, c1), (n2, c2) = before[case], now[case]
        out.append(CaseChange(case, (n1, c1), (n2, c2), c2 / n2 - c1 / n1, tests[case], case in changed))
    return out
