"""Bootstrap item weights for the simulations: each item's count in a resample, cheaper than a multinomial."""

from __future__ import annotations

import numpy as np


def resample_weights(rng: np.random.Generator, resamples: int, items: int) -> np.ndarray:
    """Rows of Multinomial(items, 1/items) item weights: ``items`` draws with replacement, counted."""
    picks = rng.integers(0, items, (resamples, items)) + items * np.arange(resamples)[:, None]
    counts = np.bincount(picks.ravel(), minlength=resamples * items)
    return counts.reshape(resamples, items).astype(np.float64)


def histogram_means(
    rng: np.random.Generator, freq: np.ndarray, values: np.ndarray, resamples: int
) -> np.ndarray:
    """Bootstrap replicates of each data set's mean (data sets x resamples): data set ``d`` has ``freq[d, s]``
    units valued ``values[s]``; a resample's counts per value are Multinomial(M, freq[d] / M), drawn
    value by value as conditional binomials for every data set at once (resample_histogram's way)."""
    units = freq.sum(axis=1)
    remaining = np.repeat(units[:, None], resamples, axis=1)
    left = units.astype(np.float64)
    total = np.zeros(remaining.shape)
    for state in range(freq.shape[1] - 1):
        share = np.divide(freq[:, state], left, out=np.zeros_like(left), where=left > 0)
        drawn = rng.binomial(remaining, np.minimum(share, 1.0)[:, None])
        total += drawn * values[state]
        remaining -= drawn
        left -= freq[:, state]
    total += remaining * values[-1]
    means: np.ndarray = total / units[:, None]
    return means
