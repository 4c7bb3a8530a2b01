r"""A paired comparison with a finished baseline run, read at planned looks while the candidate runs.

The parameter is the mean over the ``M`` compared cases of the per-case difference of pass rates,

.. math::

    \Delta = \frac{1}{M} \sum_{i=1}^{M} (p_i - \beta_i),

with :math:`p_i` the candidate's and :math:`\beta_i` the baseline's pass rate of case ``i``.

**The baseline is used whole.**  Case ``i`` has :math:`m_i` baseline trials with :math:`y_i`
passes; its mean :math:`\bar y_i = y_i / m_i` enters every look, so the baseline never runs out.

**The candidate's schedule** depends on the baseline only, never on the candidate's outcomes:
every case once (in an order shuffled by the seed), then the trials in the order of a Neyman
allocation predicted from the baseline, the trial that takes case ``i`` from ``j`` to ``j + 1``
trials having priority :math:`v_i / (j (j + 1))` (the fall of :math:`v_i / j`), with
:math:`v_i = \tilde p_i (1 - \tilde p_i)`, :math:`\tilde p_i = (y_i + 1/2)/(m_i + 1)`, up to each
case's planned trials.  Cases the baseline shows saturated wait; a case is never dropped.

**The estimate** at a look where case ``i`` has :math:`n_i` scored candidate trials with
:math:`x_i` passes is the stratified paired mean
:math:`\hat\Delta = \frac{1}{M} \sum_i d_i`, :math:`d_i = x_i / n_i - \bar y_i`, unbiased for
:math:`\Delta` with :math:`\operatorname{Var} \hat\Delta = \frac{1}{M^2} \sum_i V_i`,
:math:`V_i = p_i (1 - p_i) / n_i + \beta_i (1 - \beta_i) / m_i`.  Each :math:`V_i` is estimated
without assuming the candidate's case behaves like the baseline's:

* with at least two trials in each run, by the larger of the unbiased
  :math:`\frac{x_i (n_i - x_i)}{n_i^2 (n_i - 1)} + \frac{y_i (m_i - y_i)}{m_i^2 (m_i - 1)}` and the
  pooled :math:`r_i (1 - r_i) \frac{N_i}{N_i - 1} (\frac{1}{n_i} + \frac{1}{m_i})`
  (:math:`r_i` the pass rate of both runs' :math:`N_i = n_i + m_i` trials; unbiased when
  :math:`p_i = \beta_i`): the larger keeps a few trials that happen to agree from claiming no noise;
* with one trial in either run, by :math:`(d_i - \delta)^2` at the value :math:`\delta` being tested,
  whose mean is :math:`V_i + (p_i - \beta_i - \delta)^2`: unbiased when every case changed by
  :math:`\delta`, larger otherwise;

and the sum is floored at ``FLOOR_SHARE`` of both runs' trial noise (as in
:func:`~trialscore.stats._compare.compare_paired`), so the interval never has zero width.

**Looks and boundaries.**  The first look comes when every case has one trial, the next each time
the variance predicted from the baseline has fallen by ``GROWTH``, the last at the end of the
schedule.  The boundaries :math:`c_k` spend the error as :math:`\alpha f_k^{3/2}` with
:math:`f_k` the share of the final information predicted at look ``k`` (Lan and DeMets 1983; Kim
and DeMets 1987; :mod:`trialscore.stats._spending`); the statistic's estimated variance is met by
reading :math:`c_k` as a Student quantile of the same tail, on Satterthwaite's degrees of freedom
(Jennison and Turnbull 2000, section 11.4).  At look ``k`` the repeated confidence interval is

.. math::

    C_k = \{\delta : M^2 (\hat\Delta - \delta)^2 \le c_k^2 \, \hat V(\delta)\} \cap [-1, 1],

an interval found from a quadratic in :math:`\delta`.  Under the normal approximation,
:math:`\Delta \in C_k` at every look at once with probability at least :math:`1 - \alpha`.

**The verdict** is read off the interval, so it never contradicts it: ``regression`` when
:math:`C_k` lies below 0, ``improvement`` above 0, ``no_difference`` inside
:math:`(-\text{margin}, \text{margin})`.  Each wrong verdict needs :math:`\Delta \notin C_k` at some
look, so however often the run is watched (and it stops at the first settled verdict), the
chance of a wrong one is at most :math:`\alpha`, to the accuracy of the normal approximation:
checked by seeded null simulation (tests/stats/test_stats_paired_sequential.py).  The guarantee is
not the nonasymptotic one of a betting confidence sequence: by Ville's inequality such a sequence
needs about :math:`\sqrt{2 \log(2/\alpha)} = 2.72` standard errors where this design needs about 2.2
at the last look, which at 20 cases costs 10-20 points of power (docs/stats.md).

Assumptions: each run's trials of a case are independent draws of its pass rate; an errored
candidate trial is left out (the case has one trial fewer), which is valid when erroring does not
depend on the outcome the trial would have had.

References
----------
K. K. G. Lan and D. L. DeMets, Biometrika 70 (1983) 659-663.  K. Kim and D. L. DeMets,
Biometrika 74 (1987) 149-154.  C. Jennison and B. W. Turnbull, Group Sequential Methods with
Applications to Clinical Trials, Chapman & Hall/CRC (2000): repeated confidence intervals (chapter
9) and the t approximation for an estimated variance (section 11.4).  F. E. Satterthwaite,
Biometrics Bulletin 2 (1946) 110-114.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from trialscore._validate import check_integers, check_probability, check_real
from trialscore.errors import EvaluationError
from trialscore.stats import _scipy
from trialscore.stats._compare import FLOOR_SHARE
from trialscore.stats._spending import spending_bounds

__all__ = ["GROWTH", "RHO", "Draw", "PairedDesign", "PairedVerdict", "SequentialComparison", "verdicts"]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

#: The settled verdict of a sequential paired comparison.
PairedVerdict = Literal["regression", "improvement", "no_difference"]

#: A look comes each time the predicted variance has fallen by this factor.
GROWTH = 1.25
#: The exponent of the error spent by the share f of the information: alpha * f**RHO.
RHO = 1.5

_VERDICTS: tuple[PairedVerdict, ...] = ("regression", "improvement", "no_difference")
_RUNNING, _LEFT_OUT = -1, 2  # a draw's outcome while its trial runs, and once it errored or never ran


def _check_margin(margin: float) -> float:
    margin = check_real(margin, "margin")
    if not 0.0 <= margin < 1.0:
        raise EvaluationError(f"margin must satisfy 0 <= margin < 1; got {margin}")
    return margin


def verdicts(low: ArrayLike, high: ArrayLike, margin: float) -> IntArray:
    """Per interval: 0 ``regression`` (below 0), 1 ``improvement`` (above 0), 2 ``no_difference``, -1 none.

    >>> verdicts([-0.3, 0.1, -0.02, -0.2], [-0.1, 0.2, 0.03, 0.1], 0.05).tolist()
    [0, 1, 2, -1]
    """
    low, high = np.asarray(low, dtype=np.float64), np.asarray(high, dtype=np.float64)
    inside = (-margin < low) & (high < margin) if margin > 0 else np.zeros(low.shape, dtype=bool)
    out: IntArray = np.where(high < 0, 0, np.where(low > 0, 1, np.where(inside, 2, -1))).astype(np.int64)
    return out


class PairedDesign:
    """The candidate's schedule, the looks and their boundaries, fixed by the baseline before the first trial.

    Parameters
    ----------
    trials, passes : sequence of int
        The baseline's trials (at least 1) and passes of each compared case.
    planned : sequence of int
        The candidate trials each case may run (at least 1).
    alpha : float
        The chance of a wrong verdict at any look.
    seed : int
        Shuffles the order of the first round.

    Examples
    --------
    >>> import numpy as np
    >>> design = PairedDesign([10] * 20, [10] * 10 + [5] * 10, [10] * 20)
    >>> sorted(design.order[20:30])     # after a trial each, the second trials of the flaky cases
    [10, 11, 12, 13, 14, 15, 16, 17, 18, 19]
    >>> design.positions, design.bounds.round(2).tolist()[-1]     # looks after so many trials
    ([20, 26, 30, 40, 55, 73, 102, 200], 2.16)
    >>> codes, trials = design.simulate([1.0] * 10 + [0.3] * 10, 0.05, 200, np.random.default_rng(0))
    >>> float((codes == 0).mean()), float(trials.mean())     # the flaky half fell by 0.2
    (0.885, 111.935)
    """

    def __init__(
        self,
        trials: Sequence[int],
        passes: Sequence[int],
        planned: Sequence[int],
        alpha: float = 0.05,
        seed: int = 0,
    ) -> None:
        if not len(trials) == len(passes) == len(planned) >= 1:
            raise EvaluationError(
                f"trials, passes and planned must give one count per case; got {len(trials)}, "
                f"{len(passes)} and {len(planned)}"
            )
        self.alpha = check_probability(alpha, "alpha")
        self.trials = check_integers(trials, "trials", 1)
        self.passes = check_integers(passes, "passes", 0)
        if (self.passes > self.trials).any():
            raise EvaluationError("passes must not exceed trials in any case")
        self.planned = check_integers(planned, "planned", 1)
        cases = self.trials.size
        rate = (self.passes + 0.5) / (self.trials + 1.0)
        spread = rate * (1.0 - rate)  # predicted variance of one trial, both runs
        first = list(range(cases))
        random.Random(seed).shuffle(first)
        # the later trials, case by case in the first round's order: trial j + 1 of case i
        extra = self.planned[first] - 1
        later = np.repeat(first, extra)
        j = np.arange(later.size) - np.repeat(np.cumsum(extra) - extra, extra) + 1
        falls = spread[later] / (j * (j + 1))
        ranked = np.argsort(-falls, kind="stable")
        #: the case of each candidate trial, in the order they are handed out
        self.order: list[int] = first + later[ranked].tolist()
        baseline_part = float((spread / self.trials).sum())
        variance = spread.sum() + baseline_part - np.concatenate(([0.0], np.cumsum(falls[ranked])))
        ends = [0]  # positions in the later trials after which a look is read
        rising = -variance * GROWTH  # the variance falls, so the next look is found by a sorted search
        while True:  # the next look: the first position after the last where variance * GROWTH <= its
            last = ends[-1]
            end = last + 1 + int(np.searchsorted(rising[last + 1 :], -variance[last]))
            if end == variance.size:
                break
            ends.append(end)
        if ends[-1] != variance.size - 1:
            if len(ends) > 1 and variance[ends[-1]] < variance[-1] * math.sqrt(GROWTH):
                ends.pop()  # too close to the end: the last look replaces it
            ends.append(variance.size - 1)
        #: where each look is read: after this many trials of the schedule
        self.positions = [cases + end for end in ends]
        counts = np.zeros((len(ends), cases), dtype=np.int64)
        order = np.array(self.order)
        for k, position in enumerate(self.positions):
            counts[k] = np.bincount(order[:position], minlength=cases)
        #: the candidate trials of each case at each look (looks x cases), as planned
        self.looks: IntArray = counts
        #: the information predicted at each look, from the baseline's rates
        self.information: FloatArray = cases**2 / variance[ends]
        #: the two-sided boundary of each look on the normal scale
        self.bounds: FloatArray = spending_bounds(self.information, self.alpha, RHO)

    @property
    def cases(self) -> int:
        """``M``, the number of compared cases."""
        return int(self.trials.size)

    @property
    def baseline_half_width(self) -> float:
        """The last look's half-width were the candidate's rates known exactly: the baseline's own noise.

        The baseline's part of the variance as the interval estimates it (unbiased per case,
        Jeffreys for a single trial, floored alike) at the last boundary: no number of candidate
        trials gets the interval below it.
        """
        m, y = self.trials.astype(np.float64), self.passes.astype(np.float64)
        jeffreys = (y + 0.5) * (m - y + 0.5) / ((m + 1.0) * (m + 2.0) * m)
        own = np.where(m > 1, y * (m - y) / (m * m * np.maximum(m - 1, 1)), jeffreys)
        variance = max(float(own.sum()), FLOOR_SHARE * float(jeffreys.sum()))
        return float(self.bounds[-1]) * math.sqrt(variance) / self.cases

    def intervals(
        self, passes: ArrayLike, counts: ArrayLike, start: int = 0
    ) -> tuple[FloatArray, FloatArray, FloatArray]:
        """Estimate and repeated confidence interval at looks ``start, start + 1, ...``.

        ``passes`` and ``counts`` (``[runs x] looks x cases``) are the candidate's passes and scored
        trials of each case at those looks; every count must be at least 1.  Returns the arrays
        ``(estimate, low, high)``, one entry per look (and run).
        """
        x = np.asarray(passes, dtype=np.float64)
        n = np.asarray(counts, dtype=np.float64)
        if (
            x.ndim < 2
            or x.shape != n.shape
            or x.shape[-1] != self.cases
            or start + x.shape[-2] > self.bounds.size
        ):
            raise EvaluationError(
                f"passes and counts must both be looks x cases with at most {self.bounds.size} looks and "
                f"{self.cases} cases; got shapes {x.shape} and {n.shape}"
            )
        if (n < 1).any() or (x < 0).any() or (x > n).any():
            raise EvaluationError("every case needs a scored trial at each look read, and passes <= trials")
        m, y = self.trials.astype(np.float64), self.passes.astype(np.float64)
        d = x / n - y / m
        estimate = d.mean(axis=-1)
        single = (n < 2) | (m < 2)
        own_x = x * (n - x) / (n * n * np.maximum(n - 1, 1))
        own_y = y * (m - y) / (m * m * np.maximum(m - 1, 1))
        total = n + m
        rate = (x + y) / total
        pooled = rate * (1 - rate) * total / (total - 1) * (1 / n + 1 / m)
        unbiased = own_x + own_y
        several = np.where(single, 0.0, np.maximum(unbiased, pooled))
        centred = np.where(single, (d - estimate[..., None]) ** 2, 0.0)
        fixed = several.sum(axis=-1)
        # Satterthwaite's degrees of freedom, each case's estimate at delta = the estimate
        share = np.where(
            unbiased >= pooled,
            own_x**2 / np.maximum(n - 1, 1) + own_y**2 / np.maximum(m - 1, 1),
            pooled**2 / (total - 1),
        )
        spread = np.where(single, centred**2, np.where(several > 0, share, 0.0)).sum(axis=-1)
        variance = fixed + centred.sum(axis=-1)
        finite = spread > 0
        df = variance**2 / np.where(finite, spread, 1.0)
        bound = np.broadcast_to(self.bounds[start : start + x.shape[-2]], estimate.shape)
        critical = np.where(finite, _scipy.stdtrit(np.where(finite, df, 1.0), _scipy.ndtr(bound)), bound)
        # the interval: M^2 (estimate - delta)^2 <= c^2 (fixed + sum over single of (d_i - delta)^2)
        cases = self.cases
        c2 = critical**2
        a = cases**2 - c2 * single.sum(axis=-1)
        b = cases**2 * estimate - c2 * np.where(single, d, 0.0).sum(axis=-1)
        c = cases**2 * estimate**2 - c2 * (fixed + np.where(single, d * d, 0.0).sum(axis=-1))
        root = np.sqrt(np.maximum(b * b - a * c, 0.0))
        bounded = a > 0
        safe = np.where(bounded, a, 1.0)
        low = np.where(bounded, (b - root) / safe, -1.0)
        high = np.where(bounded, (b + root) / safe, 1.0)
        # the floor: at least FLOOR_SHARE of both runs' trial noise (Jeffreys), never a zero width
        noise = ((x + 0.5) * (n - x + 0.5) / ((n + 1) * (n + 2) * n)).sum(axis=-1) + float(
            ((y + 0.5) * (m - y + 0.5) / ((m + 1) * (m + 2) * m)).sum()
        )
        half = critical * np.sqrt(FLOOR_SHARE * noise) / cases
        low = np.clip(np.minimum(low, estimate - half), -1.0, 1.0)
        high = np.clip(np.maximum(high, estimate + half), -1.0, 1.0)
        return estimate, low, high

    def simulate(
        self, rates: ArrayLike, margin: float, runs: int, rng: np.random.Generator
    ) -> tuple[IntArray, IntArray]:
        """Simulated candidate runs with these pass rates: each run's verdict code and trials run.

        Codes as :func:`verdicts` (-1: undecided after the last look).  Reads the same looks as
        :class:`SequentialComparison` when no trial errors.
        """
        p = np.asarray(rates, dtype=np.float64)
        if p.shape != (self.cases,) or not ((p >= 0) & (p <= 1)).all():
            raise EvaluationError(f"rates must give one pass rate in [0, 1] per case ({self.cases})")
        outcomes = rng.random((runs, self.cases, int(self.planned.max()))) < p[None, :, None]
        ahead = np.concatenate((np.zeros((runs, self.cases, 1)), np.cumsum(outcomes, axis=2)), axis=2)
        passes = np.take_along_axis(
            ahead, np.broadcast_to(self.looks.T[None], (runs, *self.looks.T.shape)), 2
        )
        passes = np.swapaxes(passes, 1, 2)
        _, low, high = self.intervals(passes, np.broadcast_to(self.looks, passes.shape))
        codes = verdicts(low, high, _check_margin(margin))
        settled = codes >= 0
        first = np.where(settled.any(axis=1), settled.argmax(axis=1), self.bounds.size - 1)
        positions = np.asarray(self.positions, dtype=np.int64)
        verdict: IntArray = np.where(settled.any(axis=1), codes[np.arange(runs), first], -1)
        trials: IntArray = positions[first]
        return verdict, trials


@dataclass(frozen=True)
class Draw:
    """One candidate trial handed out: its place in the schedule and its case."""

    index: int
    case: int


class SequentialComparison:
    r"""The design run trial by trial: which case next, and what the trials say so far.

    A look is read once every trial the schedule handed out before it has finished (scored or
    errored; an errored one is left out), so a look never depends on which trials finish first.
    The comparison ends at the first settled verdict, or after the last look (``ended``).

    Parameters
    ----------
    baseline : sequence of (trials, passes)
        The baseline's counts of each compared case.
    planned : sequence of int
        The candidate trials each case may run.
    alpha, margin : float
        The error rate over all looks at once; differences smaller than ``margin`` in size count as
        no difference (0: that verdict is off).
    seed : int
        Shuffles the order of the first round.

    Examples
    --------
    >>> comparison = SequentialComparison([(10, 9)] * 6, [10] * 6, alpha=0.05, margin=0.0)
    >>> while (draw := comparison.draw()) is not None:
    ...     comparison.observe(draw, draw.index % 2 == 0)   # the candidate passes half its trials
    >>> comparison.verdict(), comparison.interval()[1] < 0, comparison.observed < 60
    ('regression', True, True)
    """

    def __init__(
        self,
        baseline: Sequence[tuple[int, int]],
        planned: Sequence[int],
        alpha: float = 0.05,
        margin: float = 0.0,
        *,
        seed: int = 0,
    ) -> None:
        self.design = PairedDesign([n for n, _ in baseline], [c for _, c in baseline], planned, alpha, seed)
        self.margin = _check_margin(margin)
        self._outcomes: list[int] = []  # per draw: _RUNNING, 0 failed, 1 passed, _LEFT_OUT
        self._handed = 0
        self._look = 0  # the next look to read
        self._resolved = 0  # draws resolved in a row from the first
        self._verdict: PairedVerdict | None = None
        self._interval = (-1.0, 1.0)
        self._estimate: float | None = None
        self.ended = (
            False  #: no look is left to read (the schedule has run out, or a case has no scored trial)
        )
        self.observed = 0  #: candidate trials scored
        self.looks_read = 0  #: looks read so far
        #: a case without any scored trial at a look (every trial of it errored), which ended the comparison
        self.unscored: int | None = None

    @property
    def cases(self) -> int:
        """``M``, the number of compared cases."""
        return self.design.cases

    @property
    def settled(self) -> bool:
        """True once no further trial can change the result (a verdict, or the comparison ended)."""
        return self._verdict is not None or self.ended

    def draw(self) -> Draw | None:
        """The next candidate trial to run, or None while the schedule has none (or it is settled)."""
        if self.settled or self._handed >= len(self.design.order):
            return None
        made = Draw(self._handed, self.design.order[self._handed])
        self._handed += 1
        self._outcomes.append(_RUNNING)
        return made

    def cancel(self, draw: Draw) -> None:
        """A draw whose trial never ran: the comparison ends here, unsettled."""
        self._outcomes[draw.index] = _LEFT_OUT
        self.ended = self.ended or self._verdict is None

    def observe(self, draw: Draw, passed: bool | None) -> None:
        """The outcome of ``draw``'s trial (None: it errored, left out); reads every look now complete."""
        if self._outcomes[draw.index] != _RUNNING:
            raise EvaluationError(f"draw {draw.index} was already observed")
        self._outcomes[draw.index] = _LEFT_OUT if passed is None else int(bool(passed))
        self.observed += passed is not None
        while self._resolved < self._handed and self._outcomes[self._resolved] != _RUNNING:
            self._resolved += 1
        while not self.settled and self._look < len(self.design.positions):
            if self._resolved < self.design.positions[self._look]:
                break
            self._read(self._look)
            self._look += 1

    def _read(self, look: int) -> None:
        position = self.design.positions[look]
        cases = self.cases
        counts = np.zeros(cases, dtype=np.int64)
        passes = np.zeros(cases, dtype=np.int64)
        for case, outcome in zip(self.design.order[:position], self._outcomes[:position], strict=True):
            if outcome in (0, 1):
                counts[case] += 1
                passes[case] += outcome
        final = look == len(self.design.positions) - 1
        if (counts == 0).any():
            if final:
                self.unscored, self.ended = int(np.argmax(counts == 0)), True
            return  # a case without a scored trial: this look cannot be read
        estimate, low, high = self.design.intervals(passes[None, :], counts[None, :], look)
        self.looks_read += 1
        self._estimate, self._interval = float(estimate[0]), (float(low[0]), float(high[0]))
        code = int(verdicts(low, high, self.margin)[0])
        if code >= 0:
            self._verdict = _VERDICTS[code]
        elif final:
            self.ended = True

    @property
    def pending(self) -> int:
        """Draws handed out and not yet observed."""
        return self._outcomes.count(_RUNNING)

    def verdict(self) -> PairedVerdict | None:
        """The settled verdict, or None."""
        return self._verdict

    def interval(self) -> tuple[float, float]:
        """The repeated confidence interval of the last look read ([-1, 1] before the first)."""
        return self._interval

    def estimate(self) -> float | None:
        """The paired mean difference at the last look read (None before the first)."""
        return self._estimate
