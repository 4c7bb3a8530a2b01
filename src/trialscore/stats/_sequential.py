r"""Anytime-valid tests and confidence sequences by betting, for means of bounded values.

A confidence sequence :math:`(C_t)` for a mean :math:`\mu` covers it at every time at once,
:math:`P(\exists t: \mu \notin C_t) \le \alpha`, so it may be watched after every observation
and the watching stopped whenever it says something: the error rate stays at :math:`\alpha`.

This module implements the *hedged capital* confidence sequence of Waudby-Smith and Ramdas
(2023, section 4) for values :math:`x_i \in [0, 1]`.  For each candidate mean :math:`m`
two gamblers bet on :math:`x_i > m` and :math:`x_i < m`:

.. math::

    K^+_t(m) = \prod_{i \le t} \bigl(1 + \lambda^+_i(m)\,(x_i - m)\bigr), \qquad
    K^-_t(m) = \prod_{i \le t} \bigl(1 - \lambda^-_i(m)\,(x_i - m)\bigr),

with the predictable plug-in bets (their eq. 26, with truncation :math:`c`)

.. math::

    \lambda_t = \sqrt{\frac{2 \log(2/\alpha)}{\hat\sigma^2_{t-1}\, t \log(1 + t)}}, \quad
    \lambda^+_t(m) = \min(\lambda_t, c/m), \quad \lambda^-_t(m) = \min(\lambda_t, c/(1-m)),

:math:`\hat\mu_t = (1/2 + \sum_{i \le t} x_i)/(t + 1)`,
:math:`\hat\sigma^2_t = (1/4 + \sum_{i \le t} (x_i - \hat\mu_i)^2)/(t + 1)`.
The hedged capital :math:`K_t(m) = \max(K^+_t(m), K^-_t(m))/2` is at most the average of two
nonnegative martingales at :math:`m = \mu`, so by Ville's inequality :math:`m = \mu` reaches
:math:`1/\alpha` with probability at most :math:`\alpha`.  The confidence sequence is
:math:`C_t = \{m: K_t(m) < 1/\alpha\}`; each factor of :math:`K^+` falls and each of
:math:`K^-` rises with :math:`m`, so :math:`C_t` is an interval, found by bisection.

A threshold test reads the same sequence: the mean is *above* ``threshold`` once
:math:`K^+_t(\text{threshold}) \ge 2/\alpha` (every :math:`m \le` threshold is outside
:math:`C_t`), *below* once :math:`K^-_t(\text{threshold}) \ge 2/\alpha`.  If the true mean is
at most the threshold, the chance of ever saying *above* is at most :math:`\alpha/2`
(:math:`K^+` is then a nonnegative supermartingale), and likewise for *below*.

The maintained libraries were considered: ``confseq`` (last release January 2023, a C++
extension) and ``expectation`` are not among trialscore's dependencies, so the sequence is
computed here from the paper and tested against a brute-force grid and by null simulation.

References
----------
I. Waudby-Smith and A. Ramdas, "Estimating means of bounded random variables by betting",
Journal of the Royal Statistical Society Series B 86 (2024) 1-27 (arXiv:2010.09686).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from trialscore._validate import check_probability, check_unit
from trialscore.errors import EvaluationError

__all__ = ["BettingSequence", "Side"]

#: Which side of a threshold the mean was shown to be on (None: not shown yet).
Side = Literal["above", "below"]

_BISECTIONS = 60


@dataclass
class BettingSequence:
    """The hedged-capital confidence sequence of a mean of values in [0, 1], updated one value at a time.

    Parameters
    ----------
    alpha : float
        The error rate over all times at once (the sequence is a ``1 - alpha`` confidence sequence).
    threshold : float, optional
        The mean to test against; :attr:`side` then says which side of it the mean is on.
    truncation : float
        The largest fraction ``c`` of the capital bet on one value (0 < c < 1).

    Examples
    --------
    >>> seq = BettingSequence(alpha=0.05, threshold=0.5)
    >>> seq.extend([1] * 12)
    >>> seq.side, seq.t
    ('above', 12)
    >>> low, high = seq.interval()
    >>> 0.5 < low < high == 1.0
    True
    """

    alpha: float
    threshold: float | None = None
    truncation: float = 0.75
    _xs: list[float] = field(default_factory=list, repr=False)
    _bets: list[float] = field(default_factory=list, repr=False)
    _sum: float = 0.0
    _squares: float = 0.25
    _side: Side | None = None
    _at_threshold: list[float] = field(default_factory=lambda: [0.0, 0.0], repr=False)
    # Found once from the parameters (fixed at construction; copy() finds them again): log(2/alpha),
    # the bar of the capitals, and the caps of the bets up and down at the threshold (inf without one).
    _bar: float = field(init=False, repr=False, compare=False)
    _up_cap: float = field(init=False, repr=False, compare=False)
    _down_cap: float = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.alpha = check_probability(self.alpha, "alpha")
        if not 0.0 < self.alpha < 1.0:
            raise EvaluationError(f"alpha must satisfy 0 < alpha < 1; got {self.alpha}")
        if self.threshold is not None:
            self.threshold = check_unit(self.threshold, "threshold")
        if not 0.0 < self.truncation < 1.0:
            raise EvaluationError(f"truncation must satisfy 0 < truncation < 1; got {self.truncation}")
        self._bar = math.log(2.0 / self.alpha)
        self._up_cap = self._down_cap = math.inf
        if self.threshold is not None:
            self._up_cap = _cap(self.truncation, self.threshold, +1)
            self._down_cap = _cap(self.truncation, self.threshold, -1)

    @property
    def t(self) -> int:
        """How many values have been seen."""
        return len(self._xs)

    @property
    def side(self) -> Side | None:
        """``above`` or ``below`` once the sequence has left the threshold behind (it stays so), else None."""
        return self._side

    def update(self, x: float) -> None:
        """Add one value in [0, 1] (bets are fixed before the value is seen)."""
        if not 0.0 <= x <= 1.0:
            raise EvaluationError(f"x must lie in [0, 1]; got {x!r}")
        t = len(self._xs) + 1
        variance = self._squares / t  # sigma^2_{t-1}: (1/4 + sum of squared errors) / t
        bet = math.sqrt(2.0 * self._bar / (variance * t * math.log1p(t)))
        self._bets.append(bet)
        self._xs.append(float(x))
        total = self._sum + x
        self._sum = total
        self._squares += (x - (0.5 + total) / (t + 1)) ** 2
        m = self.threshold
        if m is not None:
            at = self._at_threshold
            up, down = self._up_cap, self._down_cap
            at[0] += math.log1p((up if up < bet else bet) * (x - m))
            at[1] += math.log1p(-(down if down < bet else bet) * (x - m))
            if self._side is None:
                if at[0] >= self._bar:
                    self._side = "above"
                elif at[1] >= self._bar:
                    self._side = "below"

    def copy(self) -> BettingSequence:
        """An independent copy in the same state: updating it leaves this sequence as it is.

        >>> seq = BettingSequence(alpha=0.05, threshold=0.5)
        >>> seq.extend([1, 0])
        >>> probe = seq.copy()
        >>> probe.update(1)
        >>> seq.t, probe.t
        (2, 3)
        """
        return dataclasses.replace(
            self, _xs=list(self._xs), _bets=list(self._bets), _at_threshold=list(self._at_threshold)
        )

    def extend(self, xs: Iterable[float]) -> None:
        """Add values one after the other."""
        for x in xs:
            self.update(x)

    def log_capital(self, m: float, direction: int) -> float:
        r"""``log K^+_t(m)`` (``direction=+1``) or ``log K^-_t(m)`` (``-1``).

        >>> seq = BettingSequence(alpha=0.1)
        >>> seq.extend([1, 1])
        >>> round(seq.log_capital(0.5, +1), 6) == round(2 * math.log1p(0.75 / 0.5 * 0.5), 6)
        True
        """
        cap = _cap(self.truncation, m, direction)
        total = 0.0
        for bet, x in zip(self._bets, self._xs, strict=True):
            total += math.log1p(direction * min(bet, cap) * (x - m))
        return total

    def rejects(self, m: float) -> bool:
        """True when ``m`` lies outside the confidence sequence: ``max(K+, K-)/2 >= 1/alpha``."""
        return self.log_capital(m, +1) >= self._bar or self.log_capital(m, -1) >= self._bar

    def interval(self) -> tuple[float, float]:
        """The current confidence interval ``(low, high)`` of the sequence (the whole [0, 1] at first).

        Found by bisection on the monotone capitals, to within ``2**-60``; rounded outwards.
        """
        bar = self._bar
        low = 0.0
        if self.log_capital(0.0, +1) >= bar:
            a, b = 0.0, 1.0  # K+ falls with m: find where it drops below the bar
            for _ in range(_BISECTIONS):
                mid = 0.5 * (a + b)
                a, b = (mid, b) if self.log_capital(mid, +1) >= bar else (a, mid)
            low = a
        high = 1.0
        if self.log_capital(1.0, -1) >= bar:
            a, b = 0.0, 1.0  # K- rises with m
            for _ in range(_BISECTIONS):
                mid = 0.5 * (a + b)
                a, b = (a, mid) if self.log_capital(mid, -1) >= bar else (mid, b)
            high = b
        return low, high


def _cap(truncation: float, m: float, direction: int) -> float:
    """The largest bet that keeps every factor at least ``1 - truncation``: ``c/m`` up, ``c/(1-m)`` down."""
    room = m if direction > 0 else 1.0 - m
    return truncation / room if room > 0.0 else math.inf
