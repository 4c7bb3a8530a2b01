r"""pass^k with its conventions stated: which estimator, and what happened to errored trials.

Two estimators of "all ``k`` of ``k`` trials pass" are in use, and published figures rarely say
which produced them (tau2-bench#497):

========== ============================================ ==============================================
estimator  per item (``c`` of ``n`` trials passed)       where it comes from
========== ============================================ ==============================================
unbiased   :math:`\binom{c}{k} / \binom{n}{k}`          Yao et al. (2024); tau-bench's and tau2-bench's
                                                         code; :func:`trialscore.pass_hat_k`
plugin     :math:`(c/n)^k`                              seed 000's ``passToTheK``;
                                                         :func:`trialscore.compat.scoring.pass_to_the_k`
========== ============================================ ==============================================

Both are averaged over items.  The plug-in is biased upward for a flaky item with few trials (an
item passing 2 of 4 gives 1/4 at ``k = 2``, the unbiased one 1/6) and defined for ``k > n``.

And errored trials (no outcome: an infrastructure error, a context window exceeded) are either

* ``errors="exclude"``: left out of ``n``; an item whose every trial errored is left out of the
  mean (tau2-bench's ``compute_metrics`` at v1.0.1, "excluded from pass^k"), or
* ``errors="fail"``: counted as failed trials (tau-bench's ``display_metrics``, which scores a
  raised run 0, and the tau2-bench leaderboard since v1.0.1, "counting infrastructure-error
  simulations as failed trials").

On the same trials the two give different numbers: tau2-bench's v1.0.1 release notes publish a
pass^4 of 5.21% and of 5.15% for one model, the second "from that convention alignment"; 5 tasks
always solved among 96, and among 97 when one task whose every trial errored counts as failed
(``tests/stats/test_stats_conventions.py`` reproduces both from tau2-bench result files).
:func:`pass_hat_k_stated` computes either, and says which; :func:`convention` is the statement every
output that shows pass^k prints beside it (``score``, ``compare``, the run's summary), and
:func:`plugin_interval` the plug-in's interval when an output is asked for the plug-in.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from trialscore._record import Record
from trialscore._validate import check_choice, check_integer
from trialscore._words import plural
from trialscore.core.bank import Bank
from trialscore.core.estimators import pass_hat_k
from trialscore.errors import InsufficientDataError
from trialscore.results.counts import GroupCounts, check_error_policy
from trialscore.stats._intervals import Interval, bounded_mean_interval

__all__ = [
    "ERROR_RULES",
    "ESTIMATORS",
    "PassHatK",
    "check_estimator",
    "convention",
    "convention_line",
    "pass_hat_k_stated",
    "plugin_interval",
    "plugin_values",
]

#: The estimators, each with the statement an output prints.
ESTIMATORS = {
    "unbiased": "unbiased C(c,k)/C(n,k) per item (Yao et al. 2024), mean over items",
    "plugin": "plug-in (c/n)^k per item (seed 000's passToTheK), mean over items",
}
#: The estimators' names, and the other spellings accepted.
_NAMES = {"unbiased": "unbiased", "plugin": "plugin", "plug-in": "plugin"}

#: What happened to errored trials, by error policy.
ERROR_RULES = {
    "exclude": "errored trials left out of n; items whose every trial errored left out of the mean",
    "fail": "errored trials counted as failed trials",
}


@dataclass(frozen=True)
class PassHatK(Record):
    """pass^k with the estimator (``estimator``, ``formula``) and the treatment of errored trials stated.

    ``items`` entered the mean; ``items_all_errored`` were left out (``errors="exclude"``) and
    ``errored_trials`` had no outcome, whatever the policy.
    """

    value: float
    k: int
    estimator: str
    formula: str
    errors: str
    errored_rule: str
    items: int
    items_all_errored: int
    errored_trials: int

    def __str__(self) -> str:
        errored = ""
        if self.errored_trials:
            left = f", {plural(self.items_all_errored, 'item')} left out" if self.errors == "exclude" else ""
            errored = f"; {plural(self.errored_trials, 'errored trial')} ({self.errored_rule}{left})"
        return f"pass^{self.k} = {self.value:.4g} ({self.formula}; {plural(self.items, 'item')}{errored})"


def pass_hat_k_stated(
    counts: GroupCounts, k: int, estimator: str = "unbiased", errors: str | None = None
) -> PassHatK:
    """pass^k of one group's counts by ``estimator`` (``"unbiased"``, ``"plugin"``), errors by ``errors``.

    ``counts`` is one group of :func:`trialscore.results.read_counts` (its graded, passed and
    errored trials per item); ``errors`` (``"exclude"`` or ``"fail"``) overrides the policy the
    counts were read with.  Conventions in the module docstring.

    >>> import numpy as np
    >>> group = GroupCounts((), np.array(["a", "b", "c"], dtype=object),
    ...                     graded=np.array([4, 4, 0]), c=np.array([2, 4, 0]), errored=np.array([0, 0, 4]))
    >>> print(pass_hat_k_stated(group, 2))  # doctest: +NORMALIZE_WHITESPACE
    pass^2 = 0.5833 (unbiased C(c,k)/C(n,k) per item (Yao et al. 2024), mean over items; 2 items;
    4 errored trials (errored trials left out of n; items whose every trial errored left out of the
    mean, 1 item left out))
    >>> round(pass_hat_k_stated(group, 2, "plugin", errors="fail").value, 4)
    0.4167
    """
    name = check_estimator(estimator)
    k = check_integer(k, "k", 1)
    policy = check_error_policy(counts.errors if errors is None else errors)
    group = GroupCounts(counts.key, counts.item, counts.graded, counts.c, counts.errored, policy)
    bank = group.bank()
    if name == "unbiased":
        shortest = int(bank.n.min())
        if shortest < k:
            raise InsufficientDataError(
                f"unbiased pass^k needs k <= n for every item; got k={k} with an item of "
                f"{plural(shortest, 'trial')} (estimator='plugin' is defined for any k)",
                unit="trials", needed=k, got=shortest,
            )  # fmt: skip
        value = pass_hat_k(bank, k)
    else:
        value = float(np.mean(plugin_values(bank.n, bank.c, k)))
    return PassHatK(
        value=value,
        k=k,
        estimator=name,
        formula=ESTIMATORS[name],
        errors=policy,
        errored_rule=ERROR_RULES[policy],
        items=bank.items,
        items_all_errored=group.items_all_errored if policy == "exclude" else 0,
        errored_trials=group.errored_trials,
    )


def check_estimator(estimator: object) -> str:
    """``"unbiased"`` or ``"plugin"`` (``"plug-in"`` accepted), or an error naming the choices."""
    return check_choice(estimator, "estimator", _NAMES)


def convention(estimator: str = "unbiased", errors: str = "exclude") -> dict[str, str]:
    """What an output states beside a pass^k: the estimator, its formula, and what errored trials did.

    >>> convention("plugin", "fail")["errored_trials"]
    'errored trials counted as failed trials'
    """
    name = check_estimator(estimator)
    policy = check_error_policy(errors)
    return {
        "estimator": name,
        "formula": ESTIMATORS[name],
        "errors": policy,
        "errored_trials": ERROR_RULES[policy],
    }


def convention_line(estimator: str = "unbiased", errors: str = "exclude") -> str:
    """:func:`convention` as the one line an output prints.

    >>> print(convention_line("plugin", "fail"))  # doctest: +NORMALIZE_WHITESPACE
    pass^k: plug-in (c/n)^k per item (seed 000's passToTheK), mean over items; errored trials counted
    as failed trials
    """
    stated = convention(estimator, errors)
    return f"pass^k: {stated['formula']}; {stated['errored_trials']}"


def plugin_values(n: NDArray[np.int64], c: NDArray[np.int64], k: int) -> NDArray[np.float64]:
    """The plug-in ``(c/n)^k`` of each item (seed 000's ``passToTheK``; defined for any ``k``).

    >>> plugin_values(np.array([4, 4]), np.array([2, 4]), 2).tolist()
    [0.25, 1.0]
    """
    values: NDArray[np.float64] = (c / n) ** k
    return values


def plugin_interval(bank: Bank, k: int, level: float = 0.95) -> Interval:
    r"""The plug-in pass^k, the mean over items of :math:`(c_i/n_i)^k`, with the default item interval.

    :func:`~trialscore.stats.bounded_mean_interval` of the per-item plug-in values, its ceiling set
    by the trials as :func:`~trialscore.stats.item_interval` sets it
    (:math:`M^2 / (k \sum_i 1/n_i)`, at least :math:`M`).  It is an interval of the plug-in's own
    expectation, which lies above pass^k for flaky items with few trials (the statement says so).

    >>> print(plugin_interval(Bank.from_counts([4, 4, 4], [2, 4, 3]), 2))
    0.6042 [0.08126, 0.9634] (95% wilson-eff, n=3, effective n=5.055)
    """
    k = check_integer(k, "k", 1)
    n, c, freq = bank.states()
    ceiling = max(bank.items**2 / (k * float(freq @ (1.0 / n))), float(bank.items))
    return bounded_mean_interval(plugin_values(n, c, k), level, counts=freq, max_n=ceiling)
