"""SciPy's special functions and distributions, imported on first use.

Importing ``scipy.special`` costs about three times importing NumPy (measured in
benchmarks/startup.py), so the statistics reach SciPy through this module
(``_scipy.betaincinv(...)``) and ``score`` with its default interval never imports it.  That
interval needs two quantiles, computed here for scalars:

* the normal quantile from the standard library (Wichura's AS 241, accurate to about 1e-16);
* Student's t quantile for whole degrees of freedom up to 1,000 at two-sided levels 0.5 to
  0.99, by Newton's method on the finite series of the t distribution (Abramowitz & Stegun
  26.7.3-4), within 4e-13 relative of SciPy's ``stdtrit`` (checked in the tests); other
  arguments go to SciPy.  Its quantiles are remembered (planners search many designs at one
  level, each degrees of freedom more than once).

>>> from trialscore.stats import _scipy
>>> round(_scipy.ndtri(0.975), 12), round(float(_scipy.stdtrit(10, 0.975)), 6)
(1.959963984540, 2.228139)
"""

from __future__ import annotations

import math
from functools import lru_cache
from importlib import import_module
from statistics import NormalDist
from typing import Any

import numpy as np

from trialscore._lazy import load

__all__ = ["ndtri", "stdtrit"]

#: Where each name lives in SciPy.
_HOMES = {
    "betaincinv": "scipy.special",
    "chdtri": "scipy.special",
    "gammaln": "scipy.special",
    "nctdtr": "scipy.special",
    "ndtr": "scipy.special",
    "stdtr": "scipy.special",
    "binom": "scipy.stats",
    "fisher_exact": "scipy.stats",
    "nct": "scipy.stats",
    "brentq": "scipy.optimize",
}

_STANDARD_NORMAL = NormalDist()


def ndtri(p: Any) -> Any:
    r"""The standard normal quantile :math:`\Phi^{-1}(p)`: a float for a scalar, an array for an array.

    >>> ndtri(0.5), ndtri(1.0), ndtri(0.0)
    (0.0, inf, -inf)
    """
    if np.ndim(p) == 0:
        value = float(p)
        if 0.0 < value < 1.0:
            return _STANDARD_NORMAL.inv_cdf(value)
        if value in (0.0, 1.0):
            return math.copysign(math.inf, value - 0.5)
        return math.nan
    return import_module("scipy.special").ndtri(p)


#: One-sided probabilities that :func:`stdtrit` solves itself (two-sided levels 0.5 to 0.99) ...
_OWN_T = (0.75, 0.995)
#: ... and its largest degrees of freedom (the series has df / 2 terms whose rounding adds up).
_OWN_T_DF = 1_000


def _t_two_sided(t: float, df: int) -> float:
    """``P(|T| <= t)`` for ``T`` with ``df`` degrees of freedom (A&S 26.7.3 for odd, 26.7.4 for even df)."""
    theta = math.atan(t / math.sqrt(df))
    cos2 = math.cos(theta) ** 2
    terms = (df - 1) // 2 if df % 2 else df // 2
    j = np.arange(1, terms, dtype=np.float64)
    ratios = (2 * j) / (2 * j + 1) if df % 2 else (2 * j - 1) / (2 * j)
    coefficients = np.concatenate(([1.0], np.cumprod(ratios * cos2)))
    series = float(coefficients[::-1].sum())
    if df % 2 == 0:
        return math.sin(theta) * series
    if df == 1:
        return 2.0 * theta / math.pi
    return 2.0 / math.pi * (theta + math.sin(theta) * math.cos(theta) * series)


@lru_cache(maxsize=4096)
def _t_quantile(df: int, p: float) -> float:
    """The t quantile by Newton's method; cached, since the intervals ask for the same few again and again."""
    level = 2.0 * p - 1.0
    if df == 1:
        return math.tan(0.5 * math.pi * level)
    if df == 2:
        return level * math.sqrt(2.0 / (1.0 - level * level))
    z = _STANDARD_NORMAL.inv_cdf(p)
    t = z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df * df)
    log_density = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)
    for _ in range(50):
        density = math.exp(log_density - 0.5 * (df + 1) * math.log1p(t * t / df))
        step = (_t_two_sided(t, df) - level) / (2.0 * density)
        t -= step
        if abs(step) <= 1e-15 * t:
            break
    return t


def stdtrit(df: Any, p: Any) -> Any:
    """Student's t quantile: ``t`` with ``P(T <= t) = p`` for ``T`` with ``df`` degrees of freedom.

    >>> round(stdtrit(1, 0.975), 10), round(stdtrit(2, 0.975), 10), round(stdtrit(29, 0.975), 10)
    (12.7062047362, 4.3026527297, 2.0452296421)
    """
    if type(df) is int and type(p) is float:  # the common call, answered without NumPy's checks
        if 1 <= df <= _OWN_T_DF and _OWN_T[0] <= p <= _OWN_T[1]:
            return _t_quantile(df, p)
    elif np.ndim(df) == 0 and np.ndim(p) == 0 and float(df) == int(df) >= 1:
        if _OWN_T[0] <= float(p) <= _OWN_T[1] and int(df) <= _OWN_T_DF:
            return _t_quantile(int(df), float(p))
    return import_module("scipy.special").stdtrit(df, p)


def __getattr__(name: str) -> Any:
    return load(__name__, _HOMES, name)  # found once: later uses are a plain module attribute
