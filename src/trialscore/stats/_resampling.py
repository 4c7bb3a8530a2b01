"""Item weights of a bootstrap over items, drawn in blocks: the statistics that resample items share them."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
from numpy.typing import NDArray

__all__ = ["item_weights"]


def item_weights(items: int, resamples: int, seed: int, cells: int) -> Iterator[NDArray[np.float64]]:
    """Blocks of at most ``cells`` weights (resamples x items): seeded rows of
    ``Multinomial(items, 1/items)``, each a resample's count of every item.  One stream, whatever the block.

    >>> blocks = list(item_weights(4, 5, seed=0, cells=8))
    >>> [block.shape for block in blocks], all((block.sum(axis=1) == 4).all() for block in blocks)
    ([(2, 4), (2, 4), (1, 4)], True)
    """
    rng = np.random.default_rng(seed)
    block = max(1, cells // items)
    shares = np.full(items, 1.0 / items)
    for start in range(0, resamples, block):
        yield rng.multinomial(items, shares, size=min(block, resamples - start)).astype(np.float64)
