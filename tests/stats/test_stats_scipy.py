"""The quantiles computed without SciPy agree with SciPy's, and other names reach SciPy."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.special

from trialscore.stats import _scipy

LEVELS = (0.5, 0.8, 0.9, 0.95, 0.98, 0.99)


@pytest.mark.parametrize("df", [*range(1, 200), 257, 500, 999, 1000])
def test_t_quantile_agrees_with_scipy(df: int) -> None:
    for level in LEVELS:
        p = 0.5 + 0.5 * level
        ours, theirs = _scipy.stdtrit(df, p), float(scipy.special.stdtrit(df, p))
        assert isinstance(ours, float)
        assert abs(ours - theirs) <= 4e-13 * theirs, (df, level, ours, theirs)


def test_t_quantile_outside_its_range_is_scipys() -> None:
    for df, p in [(3, 0.9999), (1_001, 0.975), (2.5, 0.975), (10, 0.6)]:
        assert _scipy.stdtrit(df, p) == scipy.special.stdtrit(df, p)
    grid = np.array([2.0, 5.0])
    assert np.array_equal(_scipy.stdtrit(grid, 0.975), scipy.special.stdtrit(grid, 0.975))


def test_normal_quantile_agrees_with_scipy() -> None:
    for p in (1e-12, 0.001, 0.025, 0.3, 0.5, 0.8, 0.975, 0.999999):
        assert math.isclose(_scipy.ndtri(p), float(scipy.special.ndtri(p)), rel_tol=1e-15, abs_tol=1e-300)
    assert _scipy.ndtri(0.0) == -math.inf and _scipy.ndtri(1.0) == math.inf and math.isnan(_scipy.ndtri(1.5))
    assert np.array_equal(_scipy.ndtri(np.array([0.1, 0.9])), scipy.special.ndtri([0.1, 0.9]))


def test_other_names_come_from_scipy_and_unknown_ones_fail() -> None:
    assert _scipy.betaincinv is scipy.special.betaincinv
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        _scipy.nope  # noqa: B018
