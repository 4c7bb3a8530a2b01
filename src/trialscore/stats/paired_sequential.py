r"""An anytime-valid paired comparison of two runs on the same cases, with trials chosen as it goes.

The parameter is the mean over the ``M`` compared cases of the per-case difference of pass rates,

.. math::

    \Delta = \frac{1}{M} \sum_{i=1}^{M} (p_i - \beta_i),

with :math:`p_i` the candidate's and :math:`\beta_i` the baseline's pass rate of case ``i``.

**One observation per candidate trial** (an importance-weighted paired difference).  Before
draw ``j`` the design picks case ``i`` with probability :math:`\pi_{j,i}` computed from the
observations so far only: a mix of a Neyman allocation (proportional to each case's estimated
standard deviation of the paired difference, so trials go where the difference is still
uncertain) and the uniform one, :math:`\pi_{j,i} = (1-\eta)\,\hat s_i / \sum_k \hat s_k + \eta/M`.
The candidate trial :math:`X_j \in \{0, 1\}` is paired with a baseline trial :math:`Y_j` of the
same case not used before (so not yet seen), :math:`D_j = X_j - Y_j`, and with predictable
control variates :math:`g_{j,k}` (shrunken means of the case's differences so far)

.. math::

    Z_j = \bar g_j + \frac{D_j - g_{j,i}}{M\,\pi_{j,i}}, \qquad
    \mathbb{E}[Z_j \mid \mathcal{F}_{j-1}] = \bar g_j + \sum_i \pi_{j,i}\,
    \frac{(p_i - \beta_i) - g_{j,i}}{M\,\pi_{j,i}} = \Delta .

:math:`Z_j` lies in a range :math:`[\ell_j, u_j]` known before the draw (the extremes of
:math:`D = \pm 1` over every case), since :math:`\pi_{j,i} \ge \eta/M`.

**The confidence sequence** (:class:`PairedSequence`) is the hedged betting one of Waudby-Smith
and Ramdas (2024) for observations with a known conditional mean and predictable bounds: for each
candidate value :math:`m` of :math:`\Delta`,

.. math::

    K^+_t(m) = \prod_{j \le t} \bigl(1 + \lambda^+_j (Z_j - m)\bigr), \qquad
    K^-_t(m) = \prod_{j \le t} \bigl(1 - \lambda^-_j (Z_j - m)\bigr),

with bets :math:`\lambda^\pm_j \ge 0` fixed before :math:`Z_j` is seen, capped at
:math:`c/(1 - \ell_j)` and :math:`c/(1 + u_j)` so that every factor stays above :math:`1 - c` for
every :math:`m \in [-1, 1]`.  At :math:`m = \Delta` both are nonnegative martingales, so by
Ville's inequality :math:`C_t = \{m : K^+_t(m) < 2/\alpha,\ K^-_t(m) < 2/\alpha\}` contains
:math:`\Delta` at every time at once with probability at least :math:`1 - \alpha`.  The bets do not
depend on :math:`m`, so :math:`K^+` falls and :math:`K^-` rises with :math:`m` and :math:`C_t` is
an interval :math:`(L_t, U_t)`, found by bisection.  The bets are the approximate GRAPA bets of
Waudby-Smith and Ramdas (section 5.3) aimed at the nearest decision boundary:
:math:`\lambda^+ = (\hat\mu - m^+) / (\hat\sigma^2 + (\hat\mu - m^+)^2)`.

**The verdict** is read off the interval, so it never contradicts it: ``regression`` when
:math:`U_t < 0`, ``improvement`` when :math:`L_t > 0`, ``no_difference`` when
:math:`-\text{margin} < L_t` and :math:`U_t < \text{margin}`.  Each wrong verdict needs
:math:`\Delta \notin C_t` at some time, so however often the verdict is looked at (and the run
stopped on it), the chance of a wrong one is at most :math:`\alpha`.

Assumptions: the baseline's trials of a case are independent draws of its pass rate and are
used in an order that does not depend on their outcomes; an errored candidate trial is left out
(its draw is voided and its baseline trial stays unused), which is valid when erroring does not
depend on the outcome the trial would have had.

References
----------
I. Waudby-Smith and A. Ramdas, "Estimating means of bounded random variables by betting",
Journal of the Royal Statistical Society Series B 86 (2024) 1-27 (arXiv:2010.09686).
I. Waudby-Smith, L. Wu, A. Ramdas, N. Karampatziakis and P. Mineiro, "Anytime-valid off-policy
inference for contextual bandits", ACM/IMS Journal of Data Science (2024) (arXiv:2210.10768):
importance-weighted betting confidence sequences under adaptive sampling.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

from trialscore._validate import check_integer, check_probability, check_real
from trialscore.errors import EvaluationError

__all__ = ["Draw", "PairedSequence", "PairedVerdict", "SequentialComparison"]

#: The settled verdict of a sequential paired comparison.
PairedVerdict = Literal["regression", "improvement", "no_difference"]

_BISECTIONS = 60
_SLACK = 1e-9
_MIX = 0.5  # the uniform share eta of the allocation: bounds |Z| by about 2/eta


def _check_alpha(alpha: float) -> float:
    alpha = check_probability(alpha, "alpha")
    if not 0.0 < alpha < 1.0:
        raise EvaluationError(f"alpha must satisfy 0 < alpha < 1; got {alpha}")
    return alpha


def _check_margin(margin: float) -> float:
    margin = check_real(margin, "margin")
    if not 0.0 <= margin < 1.0:
        raise EvaluationError(f"margin must satisfy 0 <= margin < 1; got {margin}")
    return margin


@dataclass
class PairedSequence:
    """Hedged betting confidence sequence for a mean in [-1, 1] of observations with predictable bounds.

    Parameters
    ----------
    alpha : float
        Error rate over all times at once.
    margin : float
        Differences smaller than this in size count as no difference (0: that verdict is off).
    truncation : float
        The largest fraction ``c`` of the capital one observation may lose (0 < c < 1).

    Examples
    --------
    >>> seq = PairedSequence(alpha=0.05, margin=0.1)
    >>> for _ in range(40):
    ...     seq.update(-0.5, low=-1.0, high=1.0)
    >>> low, high = seq.interval()
    >>> seq.verdict(), -1.0 <= low < -0.5 < high < 0.0
    ('regression', True)
    """

    alpha: float
    margin: float = 0.0
    truncation: float = 0.75
    _steps: list[tuple[float, float, float]] = field(default_factory=list, repr=False)
    _sum: float = 0.0
    _squares: float = 0.0
    _at: dict[tuple[float, int], float] = field(default_factory=dict, repr=False)
    _verdict: PairedVerdict | None = None
    _interval: tuple[float, float] = (-1.0, 1.0)

    def __post_init__(self) -> None:
        self.alpha = _check_alpha(self.alpha)
        self.margin = _check_margin(self.margin)
        if not 0.0 < self.truncation < 1.0:
            raise EvaluationError(f"truncation must satisfy 0 < truncation < 1; got {self.truncation}")
        self._at = {(m, d): 0.0 for m in self._points for d in (+1, -1)}

    @property
    def _points(self) -> tuple[float, ...]:
        return (-self.margin, 0.0, self.margin) if self.margin > 0 else (0.0,)

    @property
    def t(self) -> int:
        """How many observations have been seen."""
        return len(self._steps)

    def _bets(self, low: float, high: float) -> tuple[float, float]:
        """The bets on the next observation, from the past only (aGRAPA aimed at the nearest boundary)."""
        t = len(self._steps)
        mean = self._sum / (t + 1)
        variance = max((0.25 + self._squares) / (t + 1), 1e-4)
        half = self.margin / 2.0
        up_aim = 0.0 if mean >= half or self.margin == 0 else -self.margin
        down_aim = 0.0 if mean <= -half or self.margin == 0 else self.margin
        up = (mean - up_aim) / (variance + (mean - up_aim) ** 2)
        down = (down_aim - mean) / (variance + (down_aim - mean) ** 2)
        up_cap = self.truncation / max(1.0 - low, 1e-12)
        down_cap = self.truncation / max(1.0 + high, 1e-12)
        return min(max(up, 0.0), up_cap), min(max(down, 0.0), down_cap)

    def update(self, z: float, low: float, high: float) -> None:
        """Add observation ``z``, announced before it was seen to lie in ``[low, high]``."""
        if not (low <= z <= high) or low > 1.0 or high < -1.0:
            raise EvaluationError(f"observation {z!r} must lie in its announced range [{low!r}, {high!r}]")
        up, down = self._bets(low, high)
        mean = self._sum / (len(self._steps) + 1)
        self._steps.append((z, up, down))
        self._sum += z
        self._squares += (z - mean) ** 2
        bar = math.log(2.0 / self.alpha)
        crossed = False
        for m, direction in self._at:
            bet = up if direction > 0 else -down
            value = self._at[(m, direction)] + math.log1p(bet * (z - m))
            crossed |= value >= bar
            self._at[(m, direction)] = value
        if crossed and self._verdict is None:
            self._interval = self.interval()
            self._verdict = self._read(self._interval)

    def log_capital(self, m: float, direction: int) -> float:
        r"""``log K^+_t(m)`` (``direction=+1``) or ``log K^-_t(m)`` (``-1``)."""
        total = 0.0
        for z, up, down in self._steps:
            total += math.log1p((up if direction > 0 else -down) * (z - m))
        return total

    def interval(self) -> tuple[float, float]:
        """The confidence interval ``(low, high)`` now, within [-1, 1] (bisection to ``2**-59``, outwards)."""
        bar = math.log(2.0 / self.alpha)
        low, high = -1.0, 1.0
        if self.log_capital(-1.0, +1) >= bar:
            a, b = -1.0, 1.0  # K+ falls with m
            for _ in range(_BISECTIONS):
                mid = 0.5 * (a + b)
                a, b = (mid, b) if self.log_capital(mid, +1) >= bar else (a, mid)
            low = a
        if self.log_capital(1.0, -1) >= bar:
            a, b = -1.0, 1.0  # K- rises with m
            for _ in range(_BISECTIONS):
                mid = 0.5 * (a + b)
                a, b = (a, mid) if self.log_capital(mid, -1) >= bar else (mid, b)
            high = b
        return low, high

    def _read(self, interval: tuple[float, float]) -> PairedVerdict | None:
        low, high = interval
        if high < 0.0:
            return "regression"
        if low > 0.0:
            return "improvement"
        if self.margin > 0 and -self.margin < low and high < self.margin:
            return "no_difference"
        return None

    def verdict(self) -> PairedVerdict | None:
        """The first settled verdict (it stays), or None while the interval allows every reading."""
        return self._verdict

    def settled_interval(self) -> tuple[float, float]:
        """The interval the verdict was read from (the current one while unsettled)."""
        return self._interval if self._verdict is not None else self.interval()


@dataclass(frozen=True)
class Draw:
    """One draw of the design: its place in the sequence, the case, and how its difference is weighted."""

    index: int
    case: int
    offset: float  # g_bar - g_i * weight
    weight: float  # 1 / (M pi_i)
    low: float
    high: float

    def observation(self, difference: float) -> float:
        """``Z = g_bar + (D - g_i) / (M pi_i)`` for the paired difference ``D`` in {-1, 0, 1}."""
        return self.offset + difference * self.weight


class SequentialComparison:
    """The adaptive design and its confidence sequence: which case next, and what the trials say.

    Draws are observed in the order they were made (a finished trial waits for the earlier
    draws), so every draw's probabilities and bets depend only on observations before it.

    Parameters
    ----------
    cases : int
        ``M``, the number of compared cases.
    alpha, margin : float
        As in :class:`PairedSequence`.

    Examples
    --------
    >>> import random
    >>> rng = random.Random(1)
    >>> comparison = SequentialComparison(cases=4, alpha=0.05, margin=0.0)
    >>> while comparison.verdict() is None and comparison.observed < 2000:
    ...     draw = comparison.draw(rng.random())
    ...     comparison.observe(draw, -1.0 if draw.case < 2 else 0.0)   # two cases lost every pair
    >>> comparison.verdict(), comparison.interval()[1] < 0
    ('regression', True)
    """

    def __init__(self, cases: int, alpha: float = 0.05, margin: float = 0.0) -> None:
        self.cases = check_integer(cases, "cases", 1)
        self.sequence = PairedSequence(alpha, margin)
        self._n = [0] * self.cases
        self._sum = [0.0] * self.cases
        self._squares = [0.0] * self.cases
        self._made = 0
        self._waiting: dict[int, float | None] = {}
        self._draws: dict[int, Draw] = {}
        self._next = 0
        self.observed = 0  #: draws observed (voided ones left out)

    def probabilities(self) -> list[float]:
        r""":math:`\pi_i`: Neyman allocation on the estimated spreads, mixed with the uniform one."""
        spreads = []
        for n, total, squares in zip(self._n, self._sum, self._squares, strict=True):
            mean = total / (n + 1)
            spreads.append(math.sqrt(max((0.5 + squares) / (n + 1) - mean * mean, 0.01)))
        whole = sum(spreads)
        m = self.cases
        return [(1.0 - _MIX) * s / whole + _MIX / m for s in spreads]

    def draw(self, u: float) -> Draw:
        """The next draw, choosing its case with the uniform number ``u`` in [0, 1)."""
        pi = self.probabilities()
        m = self.cases
        g = [total / (n + 1) for n, total in zip(self._n, self._sum, strict=True)]
        g_bar = sum(g) / m
        weights = [1.0 / (m * p) for p in pi]
        low = g_bar + min((-1.0 - gi) * w for gi, w in zip(g, weights, strict=True))
        high = g_bar + max((1.0 - gi) * w for gi, w in zip(g, weights, strict=True))
        low, high = low - _SLACK * (1.0 + abs(low)), high + _SLACK * (1.0 + abs(high))  # rounding of Z
        case, acc = m - 1, 0.0
        for index, p in enumerate(pi):
            acc += p
            if u < acc:
                case = index
                break
        made = Draw(self._made, case, g_bar - g[case] * weights[case], weights[case], low, high)
        self._made += 1
        self._draws[made.index] = made
        return made

    def observe(self, draw: Draw, difference: float | None) -> None:
        """The paired difference of ``draw`` (None voids it: an errored trial); applied in draw order."""
        if difference is not None and difference not in (-1.0, 0.0, 1.0):
            raise EvaluationError(f"a paired difference must be -1, 0 or 1; got {difference!r}")
        self._waiting[draw.index] = difference
        while self._next in self._waiting:
            value = self._waiting.pop(self._next)
            made = self._draws.pop(self._next)
            self._next += 1
            if value is None or self.sequence.verdict() is not None:
                continue
            self.sequence.update(made.observation(value), made.low, made.high)
            self.observed += 1
            self._n[made.case] += 1
            self._sum[made.case] += value
            self._squares[made.case] += value * value

    @property
    def pending(self) -> int:
        """Draws made and not yet observed (in flight, or waiting for an earlier draw)."""
        return self._made - self._next

    def verdict(self) -> PairedVerdict | None:
        """The settled verdict, or None."""
        return self.sequence.verdict()

    def interval(self) -> tuple[float, float]:
        """The anytime-valid interval of the mean paired difference (the one the verdict was read from)."""
        return self.sequence.settled_interval()
