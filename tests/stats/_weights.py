"""Bootstrap item weights for the simulations: each item's count in a resample, cheaper than a multinomial."""

from __future__ import annotations

import numpy as np


def resample_weights(rng: np.random.Generator, resamples: int, items: int) -> np.ndarray:
    """Rows of Multinomial(items, 1/items) item weights: ``items`` draws with replacement, counted."""
    picks = rng.integers(0, items, (resamples, items)) + items * np.arange(resamples)[:, None]
    counts = np.bincount(picks.ravel(), minlength=resamples * items)
    return counts.reshape(resamples, items).astype(np.float64)
