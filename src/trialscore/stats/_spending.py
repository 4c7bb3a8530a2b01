r"""Error-spending boundaries of a two-sided group-sequential test (Lan and DeMets 1983).

A statistic is read at looks ``k = 1..K`` with information :math:`I_1 < \dots < I_K`.  Under the
canonical joint distribution (Jennison and Turnbull 2000, section 3.1) the score
:math:`S_k = Z_k \sqrt{I_k}` is a Brownian motion observed at times :math:`I_k`:
:math:`S_1 \sim N(0, I_1)` and independent increments :math:`S_k - S_{k-1} \sim N(0, I_k - I_{k-1})`.
The boundary :math:`c_k` is set so that the chance of first crossing :math:`|Z_k| \ge c_k` at look
``k`` is the error spent there, with the power family of Kim and DeMets (1987),

.. math::

    \alpha(f) = \alpha \, f^{\rho}, \qquad f_k = I_k / I_K ,

the last look spending all that is left: over all looks the chance of any crossing is
:math:`\alpha`.  The density of :math:`S_k` on the region not yet crossed is carried from look to
look by the recursion of Armitage, McPherson and Rowe (1969), with Simpson's rule on a grid of
``grid`` points; each :math:`c_k` is found by a safeguarded Newton's method on that crossing
probability.

>>> [round(float(c), 4) for c in spending_bounds([1.0], 0.05)]     # one look: the fixed test
[1.96]
>>> [round(float(c), 3) for c in spending_bounds([1, 2, 3, 4, 5], 0.05, rho=3.0)]
[3.54, 2.974, 2.605, 2.306, 2.045]

References
----------
K. K. G. Lan and D. L. DeMets, "Discrete sequential boundaries for clinical trials", Biometrika 70
(1983) 659-663.  K. Kim and D. L. DeMets, "Design and analysis of group sequential tests based on
the type I error spending rate function", Biometrika 74 (1987) 149-154.  P. Armitage, C. K.
McPherson and B. C. Rowe, "Repeated significance tests on accumulating data", Journal of the Royal
Statistical Society A 132 (1969) 235-244.  C. Jennison and B. W. Turnbull, Group Sequential Methods
with Applications to Clinical Trials, Chapman & Hall/CRC (2000), chapters 7 and 19.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import lru_cache

import numpy as np
from numpy.typing import ArrayLike, NDArray

from trialscore.errors import EvaluationError
from trialscore.stats import _scipy

__all__ = ["spending_bounds"]

FloatArray = NDArray[np.float64]
#: ``c -> (P(cross at this look, not before), a function giving its slope in c, to ask before the next c)``
Crossing = Callable[[float], tuple[float, Callable[[], float]]]

_NEVER = 40.0  # a boundary no standard normal statistic reaches (a look that spends nothing)
_TOLERANCE = 1e-10  # relative error of the error spent at a look
_ROOT_2PI = math.sqrt(2.0 * math.pi)


def _simpson(low: float, high: float, grid: int) -> tuple[FloatArray, FloatArray]:
    """Points and Simpson weights on ``[low, high]`` (``grid`` odd).

    The points are ``np.linspace(low, high, grid)`` to the bit, computed as it does (the step,
    or for a step that underflows to 0 the share of the span, times 0, 1, ...; plus ``low``;
    ``high`` last) without its overhead, which the many looks of many designs add up.
    """
    span, div = high - low, grid - 1
    points: FloatArray = np.arange(grid, dtype=np.float64)
    if span / div == 0.0:
        points /= div
        points *= span
    else:
        points *= span / div
    points += low
    points[-1] = high
    weights = np.full(grid, (points[1] - points[0]) / 3.0)
    weights[1:-1:2] *= 4.0
    weights[2:-1:2] *= 2.0
    return points, weights


def _crossing(points: FloatArray, mass: FloatArray, spread: float, root: float) -> Crossing:
    """``c -> (P(cross at this look, not before), its slope in c)`` from the density's mass on ``points``.

    The slope comes as a function, evaluated only when a Newton step needs it (not at the last ``c``),
    and before the next call: the calls share their buffers (no arrays made per Newton step).
    """
    ndtr = _scipy.ndtr
    size = points.size
    both = np.concatenate((points, -points))  # the upper tail's points, then the lower's
    # buffers reused by every call: a call's slope reads them, so it is asked before the next call
    scaled = np.empty(2 * size)
    values = np.empty(2 * size)
    upper, lower = values[:size], values[size:]

    def slope() -> float:
        np.square(scaled, out=values)
        np.divide(values, -2.0, out=values)
        np.exp(values, out=values)
        near = float(mass @ np.add(upper, lower, out=upper))
        return -near * root / (spread * _ROOT_2PI)

    def crossing(c: float) -> tuple[float, Callable[[], float]]:
        # (points - c root) / spread, then (-c root - points) / spread
        np.subtract(both, c * root, out=scaled)
        np.divide(scaled, spread, out=scaled)
        ndtr(scaled, out=values)
        return float(mass @ np.add(upper, lower, out=upper)), slope

    return crossing


def _solve(crossing: Crossing, target: float, start: float) -> float:
    """The ``c`` whose decreasing, convex ``crossing(c)`` (value and slope) equals ``target``.

    Newton's method from ``start``, kept inside a bracket that every step narrows.
    """
    low, high, c = 0.0, _NEVER, min(start, _NEVER)
    for _ in range(100):
        value, slope_at = crossing(c)
        gap = value - target
        if abs(gap) <= _TOLERANCE * target or high - low < 1e-12:
            break
        low, high = (c, high) if gap > 0 else (low, c)
        slope = slope_at()
        step = c - gap / slope if slope < 0 else math.nan
        c = step if low < step < high else 0.5 * (low + high)
    return c


def spending_bounds(information: ArrayLike, alpha: float, rho: float = 2.0, grid: int = 101) -> FloatArray:
    """Two-sided boundaries ``c_k`` (on the standard normal scale) for looks at the given information.

    Parameters
    ----------
    information : array_like
        Increasing positive information (inverse variance of the estimate) at each look.
    alpha : float
        The chance, under no difference, of crossing at any look.
    rho : float
        The exponent of the spending function ``alpha * f**rho`` (larger spends less early).
    grid : int
        Points of the numerical integration (made odd).
    """
    levels = np.asarray(information, dtype=np.float64)
    if levels.ndim != 1 or levels.size == 0 or not (levels > 0).all() or (np.diff(levels) <= 0).any():
        raise EvaluationError(f"information must be increasing and positive; got {levels.tolist()}")
    return np.array(_bounds(tuple(levels.tolist()), alpha, rho, grid))


@lru_cache(maxsize=1024, typed=True)
def _bounds(information: tuple[float, ...], alpha: float, rho: float, grid: int) -> tuple[float, ...]:
    """:func:`spending_bounds` of checked information; cached (designs from equal baselines ask again).

    Keyed by the arguments and their types (an ``int`` ``grid`` is not a ``float`` one); a tuple, so a
    caller never changes what later callers get.
    """
    levels = np.array(information)
    grid += 1 - grid % 2
    spent = alpha * np.minimum(levels / levels[-1], 1.0) ** rho
    spent[-1] = alpha
    bounds = np.empty(levels.size)
    # look 1: S_1 ~ N(0, I_1), closed form
    bounds[0] = -float(_scipy.ndtri(spent[0] / 2.0)) if spent[0] > 0 else _NEVER
    points, weights = _simpson(-bounds[0] * math.sqrt(levels[0]), bounds[0] * math.sqrt(levels[0]), grid)
    density = np.exp(-(points**2) / (2.0 * levels[0])) / (_ROOT_2PI * math.sqrt(levels[0]))
    for k in range(1, levels.size):
        mass = weights * density
        spread = math.sqrt(levels[k] - levels[k - 1])
        root = math.sqrt(levels[k])

        crossing = _crossing(points, mass, spread, root)

        target = float(spent[k] - spent[k - 1])
        # the unconditional quantile is above the answer: Newton then comes down on the convex side
        bounds[k] = _solve(crossing, target, -float(_scipy.ndtri(target / 2.0))) if target > 0 else _NEVER
        if k == levels.size - 1:
            break  # no later look to carry the density to
        edge = min(bounds[k], _NEVER) * root
        new_points, new_weights = _simpson(-edge, edge, grid)
        kernel = new_points[None, :] - points[:, None]  # exp(-((new - old) / spread)^2 / 2), in place
        kernel /= spread
        np.square(kernel, out=kernel)
        kernel /= -2.0
        np.exp(kernel, out=kernel)
        density = (mass @ kernel) / (spread * _ROOT_2PI)
        points, weights = new_points, new_weights
    return tuple(bounds.tolist())
