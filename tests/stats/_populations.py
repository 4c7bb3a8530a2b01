"""The five item populations of the two-level model the statistics are proven in (issue 23).

Items have true pass rates drawn from one of these; each item then gets Bernoulli trials.
"""

from __future__ import annotations

import functools

import numpy as np

#: name -> Beta(a, b) parameters; "mixture" is 40% at 1, 20% at 0, 40% uniform on [0, 1].
BETAS = {"u-shaped": (0.6, 0.41), "beta(4,2)": (4.0, 2.0), "easy": (9.0, 1.1), "hard": (1.1, 9.0)}
NAMES = [*BETAS, "mixture"]


def rates(rng: np.random.Generator, name: str, shape: tuple[int, ...]) -> np.ndarray:
    """True pass rates of items from population ``name``."""
    if name in BETAS:
        return rng.beta(*BETAS[name], size=shape)
    kind = rng.random(shape)
    return np.where(kind < 0.4, 1.0, np.where(kind < 0.6, 0.0, rng.random(shape)))


def passes(rng: np.random.Generator, trials: int, p: np.ndarray) -> np.ndarray:
    """Binomial(``trials``, ``p``) pass counts drawn trial by trial, a float32 uniform below ``p`` a pass:
    for the few trials an item has, several times cheaper than ``rng.binomial``.  The counts add up in
    bytes while they fit (adding a pass to a byte is cheaper than to an int64), returned as int64."""
    rate = p.astype(np.float32)
    count = np.zeros(p.shape, dtype=np.uint8 if trials <= np.iinfo(np.uint8).max else np.int64)
    for _ in range(trials):
        count += rng.random(p.shape, dtype=np.float32) < rate
    return count.astype(np.int64)


def jeffreys_noise(c: np.ndarray, n: int) -> np.ndarray:
    """The trial-noise variance of ``c / n`` at the Jeffreys rate, for whole counts ``c`` of ``n`` trials.

    ``(c + 0.5)(n - c + 0.5) / ((n + 1)(n + 2) n)``, the floor's term of ``compare_paired``: computed for
    the ``n + 1`` possible counts and looked up (the same floats as on ``c`` itself, a few times faster).
    """
    counts = np.arange(n + 1)
    table: np.ndarray = (counts + 0.5) * (n - counts + 0.5) / ((n + 1.0) * (n + 2.0) * n)
    return table[c]


def moments(name: str) -> tuple[float, float]:
    """Mean and variance of the population's pass rates (exact)."""
    if name in BETAS:
        a, b = BETAS[name]
        return a / (a + b), a * b / ((a + b) ** 2 * (a + b + 1))
    mean = 0.4 + 0.4 * 0.5
    square = 0.4 + 0.4 / 3
    return mean, square - mean**2


def spread(name: str) -> float:
    """Share of the pass-rate variance between items: Var(p) / (mean (1 - mean))."""
    mean, variance = moments(name)
    return variance / (mean * (1 - mean))


@functools.cache
def _seeded_rates(name: str, rng_seed: int) -> np.ndarray:
    """200,000 rates of population ``name`` from ``rng_seed``, drawn once (read-only)."""
    p = rates(np.random.default_rng(rng_seed), name, (200_000,))
    p.setflags(write=False)
    return p


@functools.cache
def shift_for_mean(name: str, delta: float, rng_seed: int = 0) -> float:
    """The common per-item shift whose clipped mean change is ``delta`` (bisection on 200,000 rates).

    Remembered: the planner tests ask for the same shift more than once, and both directions read the
    same seeded rates.
    """
    p = _seeded_rates(name, rng_seed)
    low, high = -1.0, 1.0  # the clipped mean change rises with the shift
    for _ in range(60):
        mid = 0.5 * (low + high)
        if float(np.mean(np.clip(p + mid, 0.0, 1.0) - p)) < delta:
            low = mid
        else:
            high = mid
    return 0.5 * (low + high)
