"""Two runs read into per-item values for a comparison: ids, values, trial noise, counts, matching.

A run is a :class:`~trialscore.core.bank.Bank`, an items x trials matrix, ragged outcome lists,
or a mapping ``{item_id: outcomes}``; ``avg`` also takes graded scores.  Items are matched by id
(mapping keys, a bank's ids, or ``ids_*``), else by position.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import cast

import numpy as np
from numpy.typing import ArrayLike, NDArray

from trialscore._validate import check_values
from trialscore.core._kernels import Tau
from trialscore.core.bank import Bank, as_bank, checked_matrix, is_ragged
from trialscore.core.estimators import item_scores
from trialscore.core.metrics import Metric
from trialscore.errors import EvaluationError
from trialscore.stats._noise import trial_noise_variances

__all__ = ["Items", "Run", "matched", "run_items"]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
Run = Mapping[Hashable, Sequence[float]] | ArrayLike | Bank


def _graded_items(rows: object, name: str) -> tuple[FloatArray, FloatArray] | None:
    """Item means and unbiased trial variances over n of graded ``avg`` scores; None for 0/1 outcomes."""
    if is_ragged(rows):
        data = [
            check_values(row, f"{name}[{i}]", 1) for i, row in enumerate(cast("Sequence[ArrayLike]", rows))
        ]
        if all(np.isin(row, (0.0, 1.0)).all() for row in data):
            return None
        means = np.array([row.mean() for row in data])
        noise = np.array([row.var(ddof=1) / row.size if row.size > 1 else 0.0 for row in data])
        return means, noise
    matrix = checked_matrix(rows, name).astype(np.float64)  # type: ignore[arg-type]
    if np.isin(matrix, (0.0, 1.0)).all():
        return None
    trials = matrix.shape[1]
    noise = matrix.var(axis=1, ddof=1) / trials if trials > 1 else np.zeros(matrix.shape[0])
    return matrix.mean(axis=1), noise


@dataclass(frozen=True)
class Items:
    """One run's items: ids (None: paired by position), values, trial-noise variances, 0/1 counts."""

    keys: list[Hashable] | None
    values: FloatArray
    noise: FloatArray
    bank: Bank | None  # None for graded scores


def _per_item_values(
    rows: object, metric: Metric, k: int | None, tau: Tau | None, name: str
) -> tuple[FloatArray, FloatArray, Bank | None]:
    """Per-item values of ``metric``, their trial-noise variances ``v_i`` and the counts (0/1 trials)."""
    if metric.trial_mean and not isinstance(rows, Bank):
        graded = _graded_items(rows, name)
        if graded is not None:
            return graded[0], graded[1], None
    bank = as_bank(rows, name)  # type: ignore[arg-type]
    return item_scores(bank, metric, k, tau), trial_noise_variances(bank, metric, k, tau), bank


def run_items(
    run: Run, ids: Sequence[Hashable] | None, metric: Metric, k: int | None, tau: Tau | None, name: str
) -> Items:
    if isinstance(run, Mapping):
        if ids is not None:
            raise EvaluationError(f"ids_{name} must be None when {name} is a mapping: its keys are the ids")
        if not run:
            raise EvaluationError(f"{name} must hold at least one item; got an empty mapping")
        keys: list[Hashable] | None = list(run.keys())
        values, noise, bank = _per_item_values([list(row) for row in run.values()], metric, k, tau, name)
    else:
        values, noise, bank = _per_item_values(run, metric, k, tau, name)
        if ids is None and isinstance(run, Bank) and run.ids is not None:
            ids = run.ids.tolist()
        keys = None if ids is None else list(ids)
        if keys is not None and len(keys) != values.size:
            raise EvaluationError(
                f"ids_{name} must hold one id per item; got {len(keys)} ids for {values.size} items"
            )
    if keys is not None:
        seen: set[Hashable] = set()
        for key in keys:
            if key in seen:
                raise EvaluationError(f"item ids of {name} must be unique; got {key!r} more than once")
            seen.add(key)
    return Items(keys, values, noise, bank)


def matched(a: Items, b: Items) -> tuple[IntArray, IntArray, tuple[Hashable, ...], tuple[Hashable, ...]]:
    """Rows of the items both runs hold (by id, else by position) and the ids only one run holds."""
    if a.keys is None and b.keys is None:
        if a.values.size != b.values.size:
            raise EvaluationError(
                f"baseline and candidate must have the same number of items to pair them by position; "
                f"got {a.values.size} and {b.values.size} (give item ids, or use compare_unpaired)"
            )
        rows = np.arange(a.values.size)
        return rows, rows, (), ()
    if a.keys is None or b.keys is None:
        raise EvaluationError("item ids must be given for both runs or for neither")
    position_b = {key: index for index, key in enumerate(b.keys)}
    matched = [(index, position_b[key]) for index, key in enumerate(a.keys) if key in position_b]
    common = set(a.keys)
    only_a = tuple(key for key in a.keys if key not in position_b)
    only_b = tuple(key for key in b.keys if key not in common)
    rows_a = np.array([pair[0] for pair in matched], dtype=np.int64)
    rows_b = np.array([pair[1] for pair in matched], dtype=np.int64)
    return rows_a, rows_b, only_a, only_b
