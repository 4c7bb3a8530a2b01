r"""Accurate hypergeometric probabilities in floating point.

Every estimator of trialscore is an expectation over the number of successes
``X`` in ``k`` trials drawn without replacement from an item's ``n`` trials,
``c`` of which passed: :math:`X \sim \mathrm{Hypergeometric}(n, c, k)`,

.. math::

    P(X = j) = \frac{\binom{c}{j}\binom{n-c}{k-j}}{\binom{n}{k}} .

Computing these as ratios of binomial coefficients overflows for modest ``n``,
and computing them as differences of ``lgamma`` values loses up to
``eps * lgamma(n)`` (about ``1e-10`` at ``n = 10**5``) to cancellation.  This
module keeps the relative error of each probability near
``eps * (1 + |log P|)`` (below ``1e-12`` even for ``P = 1e-300``) with three
ingredients:

* :func:`log_ratio` evaluates ``log(a / b)`` from exact integer operands with
  ``log1p`` near 1, so each term is correct to a few units in the last place
  of the term itself;
* :func:`anchored_cumsum` adds many such terms with no rounding error in the
  leading bits: the terms are split into an integer multiple of a power of two
  (summed exactly) and a tiny remainder;
* the probability at the mode is anchored with Loader's saddle-point
  expansion (Loader 2000), which avoids the cancellation of ``lgamma``.

Small banks (at most 1,024 trials per item and a few thousand terms in all)
skip floating point altogether: :func:`exact_expectation` sums exact integer
binomials and rounds once, so the result is the double nearest the true value
(``C(2,2)/C(5,2)`` is ``0.1``, not ``0.09999999999999998``).

All functions are vectorised over items ("states") and never loop in Python
over trials.

References
----------
C. Loader, "Fast and Accurate Computation of Binomial Probabilities", 2000.
"""

from __future__ import annotations

import math
from decimal import Decimal, localcontext
from fractions import Fraction

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "anchored_cumsum",
    "exact_bank_mean",
    "exact_expectation",
    "hypergeom_expectation",
    "log_choose_ratio_curve",
    "log_choose_ratio_table",
    "log_hypergeom_pmf",
    "log_ratio",
]

FloatArray = NDArray[np.float64]

#: Largest number of float64 cells one table chunk may hold (8 MiB).
CHUNK_CELLS = 1 << 20

_PI_50 = "3.14159265358979323846264338327950288419716939937510"


def _stirlerr_table() -> FloatArray:
    """``log(n!) - log(sqrt(2 pi n) (n/e)^n)`` for n = 0..15, to 40 digits."""
    table = np.zeros(16)
    with localcontext() as ctx:
        ctx.prec = 40
        half_log_2pi = (2 * Decimal(_PI_50)).ln() / 2
        for n in range(1, 16):
            d = Decimal(n)
            value = Decimal(math.factorial(n)).ln() - (d + Decimal("0.5")) * d.ln() + d
            table[n] = float(value - half_log_2pi)
    return table


_STIRLERR = _stirlerr_table()
_LOG_2PI = math.log(2 * math.pi)


def log_ratio(num: ArrayLike, den: ArrayLike) -> FloatArray:
    r"""Return ``log(num / den)`` accurate to a few ulp of the result.

    ``num`` and ``den`` hold non-negative integers (as floats, exactly) with
    ``den > 0``.  Near 1 the quotient is formed as ``(num - den) / den``, whose
    numerator is exact, and passed to ``log1p``.  ``num = 0`` gives ``-inf``.

    >>> "%.15e" % log_ratio(99_999, 100_000)  # log(0.99999) = -1.00000500003333358e-05
    '-1.000005000033334e-05'
    """
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    with np.errstate(divide="ignore"):
        quotient = num / den
        near_one = (quotient >= 0.5) & (quotient <= 2.0)
        result: FloatArray = np.where(near_one, np.log1p((num - den) / den), np.log(quotient))
        return result


def anchored_cumsum(terms: ArrayLike, anchor: ArrayLike) -> FloatArray:
    r"""Prefix sums of each row, measured from an anchor index, without drift.

    For ``terms`` of shape ``(D, L)`` and integer ``anchor`` of shape ``(D,)``
    (each in ``0..L``) returns ``out`` of shape ``(D, L + 1)`` with

    .. math::

        \mathrm{out}[d, j] = \sum_{i < j} t_{d,i} - \sum_{i < a_d} t_{d,i}.

    Each term is split as ``t = u * 2**-s + r`` with ``u`` an integer and
    ``|r| <= 2**-(s+1)``, where ``s`` is chosen per row so that every partial
    sum of ``u`` is below ``2**52``: those sums and their differences are then
    exact, and only the tiny remainders ``r`` are rounded.  The result's error
    is one rounding, plus at most ``L**2 * sum|t| * 2**-104`` from the
    remainders, plus the errors already in the terms.

    >>> anchored_cumsum([[0.1, 0.2, 0.3]], [1]).round(12).tolist()
    [[-0.1, 0.0, 0.2, 0.5]]
    """
    terms = np.asarray(terms, dtype=np.float64)
    rows, length = terms.shape
    anchor = np.asarray(anchor, dtype=np.intp).reshape(rows, 1)
    _, exponent = np.frexp(np.abs(terms).sum(axis=1, keepdims=True))
    scale = 51 - exponent
    exact = np.zeros((rows, length + 1))
    rest = np.zeros((rows, length + 1))
    scaled = np.ldexp(terms, scale)
    units = np.rint(scaled, out=exact[:, 1:])
    np.subtract(scaled, units, out=rest[:, 1:])
    np.cumsum(units, axis=1, out=units)
    np.cumsum(rest[:, 1:], axis=1, out=rest[:, 1:])
    exact -= np.take_along_axis(exact, anchor, axis=1)
    rest -= np.take_along_axis(rest, anchor, axis=1)
    exact += rest
    result: FloatArray = np.ldexp(exact, -scale, out=exact)
    return result


def log_choose_ratio_table(n: int, k: int) -> FloatArray:
    r"""``S[a] = log(C(a, k) / C(n, k))`` for every ``a = 0..n``.

    Uses ``S[a] = sum_{m=a+1}^{n} log((m - k) / m)``: all terms have one sign,
    so the error is a few ulp of ``|S[a]|``.  ``S[a] = -inf`` for ``a < k``.
    Cost O(n) for all ``a`` at once.  Then, for an item with ``c`` successes,
    ``pass^k = exp(S[c])`` and ``pass@k = -expm1(S[n - c])``.

    >>> np.exp(log_choose_ratio_table(5, 2)).round(12).tolist()
    [0.0, 0.0, 0.1, 0.3, 0.6, 1.0]
    """
    m = np.arange(k + 1, n + 1, dtype=np.float64)
    terms = log_ratio(m - k, m)[None, :]
    suffix = anchored_cumsum(terms, [terms.shape[1]])[0]
    table = np.full(n + 1, -np.inf)
    table[k:] = -suffix
    return table


def log_choose_ratio_curve(n: int, a: ArrayLike, k_max: int) -> FloatArray:
    r"""``T[d, k] = log(C(a_d, k) / C(n, k))`` for ``k = 0..k_max``.

    The whole curve over ``k`` for each state ``a_d`` in O(k_max) per state:
    ``T[d, k] = sum_{i<k} log((a_d - i) / (n - i))``, one-signed terms summed
    with :func:`anchored_cumsum`.  Entries with ``k > a_d`` are ``-inf``.

    >>> np.exp(log_choose_ratio_curve(5, [3], 3)).round(12).tolist()
    [[1.0, 0.6, 0.3, 0.1]]
    """
    a = np.asarray(a, dtype=np.float64).reshape(-1, 1)
    i = np.arange(k_max, dtype=np.float64)
    feasible = i < a
    terms = np.where(feasible, log_ratio(np.where(feasible, a - i, 1.0), n - i), 0.0)
    curve = anchored_cumsum(terms, np.zeros(len(a), dtype=np.intp))
    curve[np.arange(k_max + 1) > a] = -np.inf
    return curve


def _stirlerr(n: FloatArray) -> FloatArray:
    """Error of Stirling's formula for ``log(n!)``, n a non-negative integer."""
    small = n <= 15
    out = _STIRLERR[np.where(small, n, 0).astype(np.intp)]
    big = np.where(small, 16.0, n)
    nn = big * big
    series = (1 / 12 - (1 / 360 - (1 / 1260 - (1 / 1680 - (1 / 1188) / nn) / nn) / nn) / nn) / big
    return np.where(small, out, series)


def _bd0(x: FloatArray, mean: FloatArray) -> FloatArray:
    """Deviance term ``x log(x / mean) + mean - x`` without cancellation."""
    x, mean = np.broadcast_arrays(x, mean)
    with np.errstate(divide="ignore", invalid="ignore"):
        direct = np.where(x > 0, x * np.log(x / mean), 0.0) + mean - x
        v = (x - mean) / (x + mean)
    near = np.abs(x - mean) < 0.1 * (x + mean)
    v = np.where(near, v, 0.0)
    series = (x - mean) * v
    term = 2 * x * v
    v2 = v * v
    for j in range(1, 13):
        term = term * v2
        series = series + term / (2 * j + 1)
    return np.where(near, series, direct)


def _log_binom_pmf(x: FloatArray, n: FloatArray, p: FloatArray, q: FloatArray) -> FloatArray:
    """``log P(Binomial(n, p) = x)`` by Loader's saddle-point formula."""
    with np.errstate(divide="ignore", invalid="ignore"):
        at_zero = np.where(p < 0.1, -_bd0(n, n * q) - n * p, n * np.log(q))
        at_n = np.where(q < 0.1, -_bd0(n, n * p) - n * q, n * np.log(p))
        inner_x = np.clip(x, 1.0, np.maximum(n - 1, 1.0))
        inner_n = np.maximum(n, 2.0)
        lc = (
            _stirlerr(inner_n)
            - _stirlerr(inner_x)
            - _stirlerr(inner_n - inner_x)
            - _bd0(inner_x, n * p)
            - _bd0(inner_n - inner_x, n * q)
        )
        lf = _LOG_2PI + np.log(inner_x) + np.log1p(-inner_x / inner_n)
        inner = lc - 0.5 * lf
    out = np.where(x == 0, at_zero, np.where(x == n, at_n, inner))
    return np.where(n == 0, 0.0, out)


def log_hypergeom_pmf(
    n: ArrayLike, c: ArrayLike, k: int, start: ArrayLike | None = None, width: int | None = None
) -> FloatArray:
    r"""``log P(X = j)`` for ``X ~ Hypergeometric(n, c, k)`` over a window of ``j``.

    ``n`` and ``c`` are arrays of shape ``(D,)`` (one item state each).  By
    default the window is ``j = 0..k`` and the result has shape ``(D, k + 1)``;
    with ``start`` (shape ``(D,)``) and ``width`` it is
    ``j = start_d .. start_d + width - 1``.  Entries outside the support
    ``max(0, k - (n - c)) <= j <= min(c, k)`` are ``-inf``.

    The value at the window's point nearest the mode comes from Loader's
    formula, ``P(X=j) = b(j; c, p) b(k-j; n-c, p) / b(k; n, p)`` with
    ``p = k / n``; the others from the exact-integer ratios
    ``P(j+1) / P(j) = (c-j)(k-j) / ((j+1)(n-c-k+j+1))`` summed in log space
    with :func:`anchored_cumsum`.  Integer products stay exact for
    ``n < 2**26``.

    >>> np.exp(log_hypergeom_pmf([5], [3], 2)).round(12).tolist()
    [[0.1, 0.6, 0.3]]
    >>> np.exp(log_hypergeom_pmf([5], [3], 2, start=[1], width=2)).round(12).tolist()
    [[0.6, 0.3]]
    """
    n = np.asarray(n, dtype=np.float64).reshape(-1, 1)
    c = np.asarray(c, dtype=np.float64).reshape(-1, 1)
    if start is None:
        start_col, width = np.zeros_like(n), k + 1
    else:
        start_col = np.asarray(start, dtype=np.float64).reshape(-1, 1)
        width = int(width if width is not None else k + 1)
    lo = np.maximum(0.0, k - (n - c))
    hi = np.minimum(c, float(k))
    first = np.maximum(start_col, lo)
    last = np.minimum(start_col + width - 1, hi)
    mode = np.floor((k + 1) * (c + 1) / (n + 2))
    anchor = np.clip(np.minimum(np.maximum(mode, first), last), start_col, start_col + width - 1)
    p = k / n
    q = (n - k) / n
    at_anchor = (
        _log_binom_pmf(anchor, c, p, q)
        + _log_binom_pmf(k - anchor, n - c, p, q)
        - _log_binom_pmf(np.full_like(n, float(k)), n, p, q)
    )
    j = start_col + np.arange(width, dtype=np.float64)
    here = j[:, :-1]
    step = (here >= lo) & (here < hi)
    num = np.where(step, (c - here) * (k - here), 1.0)
    den = np.where(step, (here + 1) * (n - c - k + here + 1), 1.0)
    terms = np.where(step, log_ratio(num, den), 0.0)
    out = at_anchor + anchored_cumsum(terms, (anchor - start_col)[:, 0].astype(np.intp))
    out[(j < lo) | (j > hi)] = -np.inf
    return out


#: Half-width of the window summed around the heaviest credited term, in standard deviations.
_WINDOW_SDS = 9


def hypergeom_expectation(n: ArrayLike, c: ArrayLike, k: int, credit: ArrayLike) -> FloatArray:
    r"""``E[credit[X]]`` for each state, ``X ~ Hypergeometric(n_d, c_d, k)``.

    ``credit`` has length ``k + 1`` and entries in [0, 1]: the score a draw of
    ``k`` trials earns when it holds exactly ``j`` successes (for
    G-Pass@k_tau, ``1[j >= ceil(tau k)]``; for mG-Pass@k,
    ``(2/k) max(j - m, 0)``).  All terms are non-negative, so the sum keeps the
    probabilities' relative accuracy.

    Only a window of ``j`` is summed: from the credited ``j`` nearest the mode,
    ``9 sd + 6`` steps each way, where ``sd`` is the standard deviation of
    ``X``.  The distribution is log-concave, so what lies beyond is below
    ``exp(-40)`` of the largest term kept.  Cost O(min(k, sd)) per state, in
    chunks of at most 2**20 cells.

    >>> hypergeom_expectation([5, 5], [3, 4], 2, [0, 0, 1]).round(12).tolist()
    [0.3, 0.6]
    """
    n = np.asarray(n, dtype=np.float64).ravel()
    c = np.asarray(c, dtype=np.float64).ravel()
    credit = np.asarray(credit, dtype=np.float64)
    out = np.zeros(len(n))
    credited = np.flatnonzero(credit)
    if credited.size == 0 or len(n) == 0:
        return out
    low = np.maximum(np.maximum(0.0, k - (n - c)), credited[0])
    high = np.minimum(np.minimum(c, float(k)), credited[-1])
    live = np.flatnonzero(low <= high)
    share = c / n
    sd = np.sqrt(k * share * (1 - share) * (n - k) / np.maximum(n - 1, 1))
    reach = np.ceil(_WINDOW_SDS * sd) + 6
    mode = np.floor((k + 1) * (c + 1) / (n + 2))
    centre = np.clip(mode, low, high)
    first = np.maximum(low, centre - reach)
    last = np.minimum(high, centre + reach)
    live = live[np.argsort(last[live] - first[live], kind="stable")]
    begin = 0
    while begin < live.size:
        # states sorted by window width, in chunks of at most 256 similar widths
        widest = int(last[live[-1]] - first[live[-1]]) + 1
        rows = max(1, min(256, CHUNK_CELLS // widest))
        chunk = live[begin : begin + rows]
        width = int((last[chunk] - first[chunk]).max()) + 1
        pmf = np.exp(log_hypergeom_pmf(n[chunk], c[chunk], k, first[chunk], width))
        j = first[chunk, None] + np.arange(width, dtype=np.float64)
        weight = np.where(j <= last[chunk, None], credit[np.minimum(j, k).astype(np.intp)], 0.0)
        out[chunk] = np.einsum("ij,ij->i", pmf, weight)
        begin += rows
    return out


#: Items with at most this many trials may be evaluated with exact integers.
EXACT_MAX_TRIALS = 1024
#: ... provided the exact sums need at most this many binomial products in all.
EXACT_MAX_TERMS = 4096


def exact_expectation(
    n: ArrayLike, c: ArrayLike, k: int, credit: list[int], scale: int = 1
) -> FloatArray | None:
    r"""``E[credit[X]] / scale`` in exact integers, rounded once; ``None`` if too costly.

    .. math::

        \frac{\sum_j \mathrm{credit}_j \binom{c}{j}\binom{n-c}{k-j}}{\mathrm{scale}\binom{n}{k}}

    Python's ``int / int`` is correctly rounded, so the result is the double
    nearest the exact rational.  A 0/1 ``credit`` is summed over whichever of
    its zeros or ones is shorter (pass@k needs one product per item, not k).
    Returns ``None`` when some ``n`` exceeds :data:`EXACT_MAX_TRIALS` or the
    products would exceed :data:`EXACT_MAX_TERMS`.

    >>> exact_expectation([5, 5], [2, 3], 2, [0, 0, 1]).tolist()
    [0.1, 0.3]
    """
    n_list = np.asarray(n).ravel().tolist()
    c_list = np.asarray(c).ravel().tolist()
    terms = _exact_terms(n_list, k, credit)
    if terms is None:
        return None
    used, complement = terms
    out = np.empty(len(n_list))
    for i, (trials, hits) in enumerate(zip(n_list, c_list, strict=True)):
        numerator, denominator = _exact_ratio(trials, hits, k, credit, scale, used, complement)
        out[i] = numerator / denominator
    return out


def _exact_terms(n_list: list[int], k: int, credit: list[int]) -> tuple[list[int], bool] | None:
    """The ``j`` to sum (and whether it is the complement) for exact sums; None when too costly.

    A 0/1 ``credit`` is summed over whichever of its zeros or ones is shorter.
    """
    if not n_list or max(n_list) > EXACT_MAX_TRIALS:
        return None
    ones = [j for j, w in enumerate(credit) if w]
    complement = set(credit) <= {0, 1} and len(ones) > (k + 1) / 2
    used = [j for j, w in enumerate(credit) if not w] if complement else ones
    if len(n_list) * len(used) > EXACT_MAX_TERMS:
        return None
    return used, complement


def _exact_ratio(
    trials: int, hits: int, k: int, credit: list[int], scale: int, used: list[int], complement: bool
) -> tuple[int, int]:
    """``E[credit[X]] / scale`` for one state as an exact integer ratio."""
    total = math.comb(trials, k)
    part = sum(
        (1 if complement else credit[j]) * math.comb(hits, j) * math.comb(trials - hits, k - j) for j in used
    )
    return (total - part if complement else part), scale * total


#: The exactly rounded bank mean sums one fraction per distinct trial count, up to this many.
EXACT_MAX_TRIAL_COUNTS = 16


def exact_bank_mean(
    n: ArrayLike, c: ArrayLike, freq: ArrayLike, k: int, credit: list[int], scale: int = 1
) -> float | None:
    r"""The mean over items of ``E[credit[X]] / scale``, as the double nearest the exact rational.

    .. math::

        \frac{1}{M}\sum_s f_s\,\frac{\sum_j \mathrm{credit}_j \binom{c_s}{j}\binom{n_s-c_s}{k-j}}
        {\mathrm{scale}\binom{n_s}{k}}

    over the distinct states ``(n_s, c_s)`` held by ``f_s`` items.  States that
    share ``n`` share a denominator, so their numerators add as integers; the
    result is rounded once.  Returns ``None`` where :func:`exact_expectation`
    would, or with more than :data:`EXACT_MAX_TRIAL_COUNTS` distinct ``n``.

    >>> exact_bank_mean([5, 5], [3, 4], [1, 1], 2, [0, 0, 1])  # (0.3 + 0.6) / 2, not 0.44999999999999996
    0.45
    """
    n_list = np.asarray(n).ravel().tolist()
    c_list = np.asarray(c).ravel().tolist()
    f_list = np.asarray(freq).ravel().tolist()
    terms = _exact_terms(n_list, k, credit) if len(set(n_list)) <= EXACT_MAX_TRIAL_COUNTS else None
    if terms is None:
        return None
    used, complement = terms
    sums: dict[int, int] = {}
    denominators: dict[int, int] = {}
    for trials, hits, count in zip(n_list, c_list, f_list, strict=True):
        numerator, denominator = _exact_ratio(trials, hits, k, credit, scale, used, complement)
        sums[trials] = sums.get(trials, 0) + count * numerator
        denominators[trials] = denominator
    total = sum((Fraction(value, denominators[trials]) for trials, value in sums.items()), Fraction(0))
    return float(total / sum(f_list))
