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
The candidate trial :math:`X_j \in \{0, 1\}` is paired with a block of :math:`b_j` baseline
trials of the same case not used before (so not yet seen), :math:`D_j = X_j - \bar Y_j` with
:math:`\bar Y_j` the block's pass rate, so :math:`\mathbb{E}[D_j] = p_i - \beta_i` and
:math:`\operatorname{Var} D_j = p_i(1-p_i) + \beta_i(1-\beta_i)/b_j`.  :func:`baseline_block`
sets :math:`b_j`: half of the case's unused baseline trials on its first pair, one on each later
pair (most cases are drawn once or twice, so the first pair carries most of the weight; the
case still has a baseline trial for each of :math:`\lceil n/2 \rceil` later pairs).  and with predictable
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

with bets :math:`\lambda^\pm_j \ge 0` fixed before :math:`Z_j` is seen and capped, at each
:math:`m`, at :math:`c/(m - \ell_j)` and :math:`c/(u_j - m)` so that every factor stays above
:math:`1 - c`.  At :math:`m = \Delta` both are nonnegative martingales, so by Ville's inequality
:math:`C_t = \{m : K^+_t(m) < 2/\alpha,\ K^-_t(m) < 2/\alpha\}` contains :math:`\Delta` at every
time at once with probability at least :math:`1 - \alpha`.  Each factor of :math:`K^+` falls with
:math:`m` (for :math:`Z_j < m` the loss :math:`\min(\lambda, c/(m-\ell_j))(m - Z_j)` grows with
:math:`m`) and each factor of :math:`K^-` rises, so :math:`C_t` is an interval
:math:`(L_t, U_t)`, found by bisection.  The bets are the approximate GRAPA bets of
Waudby-Smith and Ramdas (section 5.3) aimed at the nearest decision boundary:
:math:`\lambda^+ = (\hat\mu - m^+) / (\hat\sigma^2 + (\hat\mu - m^+)^2)`.

**The verdict** is read off the interval, so it never contradicts it: ``regression`` when
:math:`U_t < 0`, ``improvement`` when :math:`L_t > 0`, ``no_difference`` when
:math:`-\text{margin} < L_t` and :math:`U_t < \text{margin}`.  Each wrong verdict needs
:math:`\Delta \notin C_t` at some time, so however often the verdict is looked at (and the run
stopped on it), the chance of a wrong one is at most :math:`\alpha`.

Assumptions: the baseline's trials of a case are independent draws of its pass rate and are
used in an order that does not depend on their outcomes; an errored candidate trial is left out
(its draw is voided and its baseline block stays unused), which is valid when erroring does not
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
from collections.abc import Sequence
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
_TAPER = 8  # a case with fewer draws left than this gets that share of its Neyman weight
_HORIZON = 2.0  # a block keeps back a baseline trial for each draw expected in 2x the draws so far


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
    _steps: list[tuple[float, float, float, float, float]] = field(default_factory=list, repr=False)
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

    def _bets(self) -> tuple[float, float]:
        """The bets on the next observation, from the past only (aGRAPA aimed at the nearest boundary)."""
        t = len(self._steps)
        mean = self._sum / (t + 1)
        variance = max((0.25 + self._squares) / (t + 1), 1e-4)
        half = self.margin / 2.0
        up_aim = 0.0 if mean >= half or self.margin == 0 else -self.margin
        down_aim = 0.0 if mean <= -half or self.margin == 0 else self.margin
        up = (mean - up_aim) / (variance + (mean - up_aim) ** 2)
        down = (down_aim - mean) / (variance + (down_aim - mean) ** 2)
        return max(up, 0.0), max(down, 0.0)

    def _factor(self, step: tuple[float, float, float, float, float], m: float, direction: int) -> float:
        """``log(1 + bet (z - m))`` of one step for the up (+1) or down (-1) gambler, the bet capped at m."""
        z, up, down, low, high = step
        if direction > 0:
            room = m - low  # the most z - m can fall below zero
            bet = up if room <= 0.0 else min(up, self.truncation / room)
            return math.log1p(bet * (z - m))
        room = high - m
        bet = down if room <= 0.0 else min(down, self.truncation / room)
        return math.log1p(-bet * (z - m))

    def update(self, z: float, low: float, high: float) -> None:
        """Add observation ``z``, announced before it was seen to lie in ``[low, high]``."""
        if not (low <= z <= high) or low > 1.0 or high < -1.0:
            raise EvaluationError(f"observation {z!r} must lie in its announced range [{low!r}, {high!r}]")
        up, down = self._bets()
        mean = self._sum / (len(self._steps) + 1)
        step = (z, up, down, low, high)
        self._steps.append(step)
        self._sum += z
        self._squares += (z - mean) ** 2
        bar = math.log(2.0 / self.alpha)
        crossed = False
        for m, direction in self._at:
            value = self._at[(m, direction)] + self._factor(step, m, direction)
            crossed |= value >= bar
            self._at[(m, direction)] = value
        if crossed and self._verdict is None:
            self._interval = self.interval()
            self._verdict = self._read(self._interval)

    def log_capital(self, m: float, direction: int) -> float:
        r"""``log K^+_t(m)`` (``direction=+1``) or ``log K^-_t(m)`` (``-1``)."""
        return math.fsum(self._factor(step, m, direction) for step in self._steps)

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
    """One draw of the design: its place, the case, how its difference is weighted, its baseline block.

    ``block`` is how many unused baseline trials of the case to pair with the candidate trial
    (their pass rate is subtracted from its outcome); 0 when the case has no trial left to
    compare, and then the comparison has ended (:attr:`SequentialComparison.ran_out`).
    """

    index: int
    case: int
    offset: float  # g_bar - g_i * weight
    weight: float  # 1 / (M pi_i)
    low: float
    high: float
    block: int = 1

    def observation(self, difference: float) -> float:
        """``Z = g_bar + (D - g_i) / (M pi_i)`` for the paired difference ``D`` in [-1, 1]."""
        return self.offset + difference * self.weight


class SequentialComparison:
    r"""The adaptive design and its confidence sequence: which case next, and what the trials say.

    Draws are observed in the order they were made (a finished trial waits for the earlier
    draws), so every draw's probabilities and bets depend only on observations before it.

    Parameters
    ----------
    cases : int
        ``M``, the number of compared cases.
    alpha, margin : float
        As in :class:`PairedSequence`.
    baseline : sequence of int, optional
        The baseline's trials of each case (unlimited and paired one at a time when omitted).
    trials : sequence of int, optional
        The candidate trials each case may run (unlimited when omitted).

    Notes
    -----
    Block sizes and the allocation depend on the draws so far only.  A draw of case ``i`` made
    after ``T`` draws is paired with
    :math:`b = \max(1, \lfloor n_i / (1 + 2\pi_i \max(T, M)) \rfloor)` of its :math:`n_i`
    unused baseline trials: a large block while few further draws of the case are expected,
    keeping one trial back for each draw expected if the comparison runs twice as long as it has.
    A case with fewer than 8 draws left gets that share of its Neyman weight, so the allocation
    turns away from cases about to run out (the comparison ends when it draws one that has).

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
    >>> SequentialComparison(cases=4, baseline=[10] * 4).draw(0.5).block   # 10 // (1 + 2 * 1/4 * 4)
    3
    """

    def __init__(
        self,
        cases: int,
        alpha: float = 0.05,
        margin: float = 0.0,
        *,
        baseline: Sequence[int] | None = None,
        trials: Sequence[int] | None = None,
    ) -> None:
        self.cases = check_integer(cases, "cases", 1)
        self.sequence = PairedSequence(alpha, margin)
        self._n = [0] * self.cases
        self._sum = [0.0] * self.cases
        self._squares = [0.0] * self.cases
        self._unused = self._limits(baseline, "baseline")
        self._left = self._limits(trials, "trials")
        self._made = 0
        self._waiting: dict[int, float | None] = {}
        self._draws: dict[int, Draw] = {}
        self._next = 0
        self.observed = 0  #: draws observed (voided ones left out)
        self.ran_out = False  #: a draw found its case without a trial left: the comparison has ended
        #: which run had no trial left for the drawn case ("baseline" or "candidate"), and the case
        self.ran_out_of: tuple[str, int] | None = None

    def _limits(self, counts: Sequence[int] | None, name: str) -> list[float]:
        if counts is None:
            return [math.inf] * self.cases
        if len(counts) != self.cases:
            raise EvaluationError(f"{name} must give one count per case ({self.cases}); got {len(counts)}")
        return [float(check_integer(n, name, 0)) for n in counts]

    def probabilities(self) -> list[float]:
        r""":math:`\pi_i`: Neyman allocation on the estimated spreads (tapered near a case's last
        draws), mixed with the uniform one."""
        spreads = []
        for i, (n, total, squares) in enumerate(zip(self._n, self._sum, self._squares, strict=True)):
            mean = total / (n + 1)
            spread = math.sqrt(max((0.5 + squares) / (n + 1) - mean * mean, 0.01))
            spreads.append(spread * min(1.0, min(self._unused[i], self._left[i]) / _TAPER))
        whole = sum(spreads)
        m = self.cases
        if whole == 0.0:
            return [1.0 / m] * m
        return [(1.0 - _MIX) * s / whole + _MIX / m for s in spreads]

    def _block(self, case: int, probability: float) -> int:
        """Unused baseline trials to pair with a draw of ``case`` now (0: the case has no trial left)."""
        unused, left = self._unused[case], self._left[case]
        if self.ran_out or unused < 1 or left < 1:
            return 0
        if math.isinf(unused):
            return 1
        expected = _HORIZON * probability * max(self._made, self.cases)
        return max(1, int(unused // (1.0 + expected)))

    def draw(self, u: float) -> Draw:
        """The next draw, choosing its case with the uniform number ``u`` in [0, 1), its block set aside.

        A draw with ``block == 0`` found its case without a trial left (or came after one that
        did); it is not part of the sequence, and :attr:`ran_out` is then True.
        """
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
        block = self._block(case, pi[case])
        made = Draw(self._made, case, g_bar - g[case] * weights[case], weights[case], low, high, block)
        if block == 0:
            if not self.ran_out:
                run = "baseline" if self._unused[case] < 1 else "candidate"
                self.ran_out, self.ran_out_of = True, (run, case)
            return made
        self._unused[case] -= block
        self._left[case] -= 1
        self._made += 1
        self._draws[made.index] = made
        return made

    def cancel(self, draw: Draw) -> None:
        """A draw whose trial never ran: its trial and baseline block go back, and it is voided."""
        self._left[draw.case] += 1
        self.observe(draw, None)

    def observe(self, draw: Draw, difference: float | None) -> None:
        """The paired difference of ``draw``: the candidate's outcome less its baseline block's pass rate.

        None voids it (an errored trial: its baseline block stays unused).  Applied in draw order.
        """
        if difference is not None and not -1.0 <= difference <= 1.0:
            raise EvaluationError(f"a paired difference must lie in [-1, 1]; got {difference!r}")
        if difference is None:
            self._unused[draw.case] += draw.block
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
