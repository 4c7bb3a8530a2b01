"""Seed 002's practical advice as structured messages: retry strategy, consistency, sample size.

Every function returns an :class:`Advice`: a code a program can branch on, a
severity, a sentence for people, the numbers behind it and the rule that
produced it.

=====================  ==============================================================================
advice                 rule
=====================  ==============================================================================
retry strategy         pass@1 >= 0.90: ``single_attempt``; 0.60 <= pass@1 < 0.90: ``retry_once``;
                       0.30 <= pass@1 < 0.60: ``retry_then_escalate`` (up to 3 tries);
                       pass@1 < 0.30: ``change_approach`` (retrying will not fix it)
consistency            pass@k - pass@1 >= 0.2: ``inconsistent_agent`` (seed: "pass@k >> pass@1 means
                       an inconsistent agent"), else ``consistent_agent``; the gap is the share of
                       tasks solved within k tries but not on the first
sample size            n < 10: ``report_range``; 10 <= n <= 30: ``report_interval``;
                       n > 30: ``reliable``; the range quoted is the interval given (``score``
                       passes the one it prints for the pass rate), at its level
=====================  ==============================================================================

The 0.2 gap is this package's reading of "much greater" (the seed gives no
number); pass ``min_gap`` to use another.  Seed 002's ``calculatePassAtK`` is
:func:`calculate_pass_at_k`; its tracking records per task category live in
:mod:`trialscore.compat.tracking`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from numpy.typing import ArrayLike

from trialscore._record import Record
from trialscore._validate import check_integer, check_real
from trialscore._words import plural
from trialscore.core.bank import Bank, as_bank
from trialscore.core.estimators import avg, pass_at_k
from trialscore.errors import EvaluationError
from trialscore.stats._intervals import Interval, item_interval, proportion_interval

__all__ = [
    "Advice",
    "calculate_pass_at_k",
    "consistency_advice",
    "insights",
    "recommend_retry_strategy",
    "sample_size_advice",
]

#: Default gap pass@k - pass@1 from which an agent counts as inconsistent.
INCONSISTENCY_GAP = 0.2
#: Below this gap pass@k and pass@1 are called close.
CLOSE_GAP = 0.05
#: pass@1 marks where the retry strategy changes (seed 002).
RETRY_BANDS = (0.3, 0.6, 0.9)


@dataclass(frozen=True)
class Advice(Record):
    """One piece of advice: ``code`` to branch on, ``message`` to read, ``numbers`` behind it, ``rule``."""

    code: str
    severity: str
    message: str
    numbers: Mapping[str, Any] = field(default_factory=dict)
    rule: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "numbers", MappingProxyType(dict(self.numbers)))

    def __str__(self) -> str:
        return self.message


def _rate(value: object, name: str) -> float:
    number = check_real(value, name)
    if not 0.0 <= number <= 1.0:
        raise EvaluationError(f"{name} must be a rate in [0, 1]; got {name}={number:g}")
    return number


_RETRY_RULE = (
    "pass@1 >= 0.90: single_attempt; 0.60 <= pass@1 < 0.90: retry_once; "
    "0.30 <= pass@1 < 0.60: retry_then_escalate (up to 3 tries); pass@1 < 0.30: change_approach"
)


def recommend_retry_strategy(pass_at_1: float) -> Advice:
    """Seed 002's retry strategy for a task category with this pass@1.

    ``numbers["success_within_attempts"]`` is ``1 - (1 - pass@1) ** attempts``,
    the success rate of the strategy if attempts were independent (the
    measured pass@k of the category is the better figure when you have it).

    >>> advice = recommend_retry_strategy(0.72)
    >>> advice.code, advice.numbers["max_attempts"], round(advice.numbers["success_within_attempts"], 4)
    ('retry_once', 2, 0.9216)
    >>> recommend_retry_strategy(0.2).code
    'change_approach'
    """
    p = _rate(pass_at_1, "pass_at_1")
    if p >= 0.9:
        code, attempts, severity, text = (
            "single_attempt",
            1,
            "info",
            "use a single attempt and auto-accept the result",
        )
    elif p >= 0.6:
        code, attempts, severity = "retry_once", 2, "info"
        text = "try once and, on failure, retry once with a modified prompt"
    elif p >= 0.3:
        code, attempts, severity = "retry_then_escalate", 3, "warning"
        text = "try up to 3 times and escalate to a person if all fail"
    else:
        code, attempts, severity = "change_approach", 1, "warning"
        text = "don't retry: the approach needs a fundamental change"
    success = 1.0 - (1.0 - p) ** attempts
    return Advice(
        code,
        severity,
        f"pass@1 is {p:.0%}: {text}.",
        {"pass_at_1": p, "max_attempts": attempts, "success_within_attempts": success},
        _RETRY_RULE,
    )


def consistency_advice(
    pass_at_1: float, pass_at_k: float, k: int, min_gap: float = INCONSISTENCY_GAP
) -> Advice:
    """Whether pass@k far above pass@1 marks an inconsistent agent (seed 002).

    >>> advice = consistency_advice(0.45, 0.9, 5)
    >>> advice.code, round(advice.numbers["gap"], 2)
    ('inconsistent_agent', 0.45)
    >>> consistency_advice(0.8, 0.85, 5).code
    'consistent_agent'
    """
    p1 = _rate(pass_at_1, "pass_at_1")
    pk = _rate(pass_at_k, "pass_at_k")
    k = check_integer(k, "k", 2)
    threshold = _rate(min_gap, "min_gap")
    if pk < p1 - 1e-12:
        raise EvaluationError(
            f"pass_at_k must be >= pass_at_1 (pass@k never falls below pass@1); got {pk:g} < {p1:g}"
        )
    gap = max(pk - p1, 0.0)
    numbers = {"pass_at_1": p1, "pass_at_k": pk, "k": k, "gap": gap, "min_gap": threshold}
    rule = f"inconsistent_agent if pass@k - pass@1 >= {threshold:g}, else consistent_agent"
    if gap >= threshold - 1e-12:  # 0.7 - 0.5 is 0.19999999999999996 in floating point
        message = (
            f"pass@{k} is {pk:.0%} but pass@1 only {p1:.0%}: {gap:.0%} of tasks are solved within {k} tries "
            f"but not on the first. The agent is inconsistent; consider more structured prompts."
        )
        return Advice("inconsistent_agent", "warning", message, numbers, rule)
    if gap < CLOSE_GAP:
        message = f"pass@{k} ({pk:.0%}) is close to pass@1 ({p1:.0%}): the agent is consistent across tries."
    else:
        message = (
            f"pass@{k} ({pk:.0%}) is {gap * 100:.0f} points above pass@1 ({p1:.0%}): retries help on some "
            f"tasks, though less than the {threshold * 100:.0f}-point gap read as an inconsistent agent."
        )
    return Advice("consistent_agent", "info", message, numbers, rule)


_SAMPLE_RULE = (
    "n < 10: report_range; 10 <= n <= 30: report_interval; n > 30: reliable "
    "(the range quoted is the interval printed for the pass rate, at its level)"
)


def _percent(value: float) -> str:
    """A rate as a percentage with 3 significant digits: ``0.5258`` -> ``52.6%``, ``1.0`` -> ``100%``."""
    return f"{100 * value:.3g}%"


def _sample_size(samples: int, interval: Interval | None) -> Advice:
    numbers: dict[str, Any] = {"samples": samples}
    if interval is not None:
        numbers.update(
            estimate=interval.estimate,
            low=interval.low,
            high=interval.high,
            level=interval.level,
            method=interval.method,
        )
    if samples < 10:
        code, severity, message = (
            "report_range",
            "warning",
            f"Only {plural(samples, 'sample')}: too few for a point estimate",
        )
        quoted, unquoted = ": report the {span}, not a single number", ": report a range, not a single number"
    elif samples <= 30:
        code, severity, message = "report_interval", "info", f"{samples} samples give a reasonable estimate"
        quoted, unquoted = ": report it with its {span}", ": report it with an interval"
    else:
        code, severity, message = "reliable", "info", f"{samples} samples give a reliable estimate"
        quoted, unquoted = " ({span})", ""
    if interval is None:
        detail = unquoted
    elif interval.width == 0:
        detail = (
            f"; its {interval.level * 100:g}% {interval.method} interval has zero width because every sample "
            "scored the same, so it shows none of the uncertainty: add items before trusting it"
        )
    else:
        span = f"{interval.level * 100:g}% interval [{_percent(interval.low)}, {_percent(interval.high)}]"
        detail = quoted.format(span=span)
    return Advice(code, severity, f"{message}{detail}.", numbers, _SAMPLE_RULE)


def sample_size_advice(samples: int, successes: int | None = None, level: float = 0.95) -> Advice:
    """Seed 002's sample-size bands; with ``successes`` the Wilson interval is in the numbers.

    >>> advice = sample_size_advice(8, successes=6)
    >>> advice.code, round(advice.numbers["low"], 3), round(advice.numbers["high"], 3)
    ('report_range', 0.409, 0.929)
    >>> sample_size_advice(50).code
    'reliable'
    """
    n = check_integer(samples, "samples", 1)
    interval = None if successes is None else proportion_interval(successes, n, level)
    return _sample_size(n, interval)


def insights(
    R: ArrayLike | Bank, k: int | None = None, level: float = 0.95, interval: Interval | None = None
) -> tuple[Advice, ...]:
    """Sample-size, retry and (with 2+ trials per item) consistency advice for one task category.

    The samples are the independent units: the items (or, for a single item,
    its trials).  ``interval`` is the interval of the pass rate shown beside
    the advice (``score`` passes the one it prints, so the two never differ);
    without it the interval is the default :func:`trialscore.stats.item_interval`
    at ``level``.  A zero-width interval is never quoted as a range.  The
    retry advice follows seed 002's bands of pass@1; when the interval reaches
    another band the advice says so and asks for more cases, instead of
    recommending "auto-accept" from a handful of cases.  The
    consistency advice compares pass@1 with pass@k at ``k`` (default: the
    smallest number of trials of any item); ``k = 1`` leaves it out.

    >>> [advice.code for advice in insights([[1, 1, 0, 1], [0, 1, 0, 0], [1, 1, 1, 1]] * 4)]
    ['report_interval', 'retry_once', 'inconsistent_agent']
    >>> print(insights([[1, 1, 1, 1, 0]] * 4, k=1, level=0.9)[0])
    Only 4 samples: too few for a point estimate: report the 90% interval [53.8%, 93.2%], not a single number.
    >>> print(insights([[1, 1, 1]] * 3, k=1)[1])  # doctest: +ELLIPSIS
    pass@1 is 100%: use a single attempt and auto-accept the result, but its 95% interval [...] reaches ...
    """
    bank = as_bank(R)
    p1 = avg(bank)
    samples = int(bank.n[0]) if bank.items == 1 else bank.items
    if interval is None:
        interval = item_interval(bank, level=level)
    advice = [_sample_size(samples, interval), _hedged(recommend_retry_strategy(p1), interval)]
    draws = bank.min_trials if k is None else bank.check_k(k)
    if draws >= 2:
        advice.append(consistency_advice(p1, pass_at_k(bank, draws), draws))
    return tuple(advice)


def _hedged(advice: Advice, interval: Interval) -> Advice:
    """The retry advice, marked uncertain when the pass rate's interval reaches another strategy's band."""
    crossed = [band for band in RETRY_BANDS if interval.low < band <= interval.high]
    if not crossed:
        return advice
    message = (
        f"{advice.message[:-1]}, but its {interval.level * 100:g}% interval "
        f"[{_percent(interval.low)}, {_percent(interval.high)}] reaches the band of another strategy "
        f"(boundaries at {', '.join(f'{band:.0%}' for band in crossed)}): run more cases before relying "
        "on it."
    )
    numbers = {**advice.numbers, "interval_low": interval.low, "interval_high": interval.high}
    return Advice(advice.code, "warning", message, numbers, advice.rule)


def calculate_pass_at_k(n: int, c: int, k: int) -> float:
    r"""Seed 002's ``calculatePassAtK(n, c, k)``: unbiased pass@k of one task.

    .. math::

        \text{pass@k} = 1 - \frac{\binom{n-c}{k}}{\binom{n}{k}}

    The same estimator as :func:`trialscore.compat.scoring.pass_at_k` (seed 000's
    ``passAtK``), which computes it.  Seed 002's example comments print 0.70
    for ``(10, 7, 1)`` and 0.97 for ``(10, 7, 3)``; its own loop, like the
    formula, gives ``1 - (3/10)(2/9)(1/8) = 119/120 = 0.9917`` for the second,
    so the comment is a slip, and this returns the exact value.

    >>> calculate_pass_at_k(10, 7, 1)
    0.7
    >>> calculate_pass_at_k(10, 7, 3)  # 119/120
    0.9916666666666667
    """
    from trialscore.compat.scoring import pass_at_k  # seed 000's records (Pydantic) stay unloaded until asked

    return pass_at_k(n, c, k)
