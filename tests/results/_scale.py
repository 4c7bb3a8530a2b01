"""Trial files for the scale tests, from a seeded two-level model.

Items have pass rates of their own (a Beta population), each item gets a ragged number of trials per
target, some trials error, and every trial has a graded score in [0, 1] (its outcome's evidence) and
an output text, so that a reading that skips the output column reads a small share of the bytes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq


def trial_table(
    seed: int = 0,
    items: int = 60,
    targets: tuple[str, ...] = ("model-a", "model-b"),
    trials: tuple[int, int] = (4, 9),
    errored: float = 0.05,
    output_chars: int = 0,
    shift: float = 0.0,
) -> pa.Table:
    """One row per trial: case_id, trial, target, category, passed (null = errored), score, output."""
    rng = np.random.default_rng(seed)
    rates = rng.beta(1.2, 1.0, items)
    rates[: max(1, items // 10)] = 1.0  # saturated items
    rows: dict[str, list[Any]] = {
        name: [] for name in ("case_id", "trial", "target", "category", "passed", "score")
    }
    outputs: list[str] = []
    for target_index, target in enumerate(targets):
        for item in range(items):
            rate = float(np.clip(rates[item] + shift * target_index, 0.0, 1.0))
            for trial in range(int(rng.integers(trials[0], trials[1] + 1))):
                score = float(np.clip(rng.normal(rate, 0.25), 0.0, 1.0))
                broken = rng.random() < errored
                rows["case_id"].append(f"case-{item:04d}")
                rows["trial"].append(trial)
                rows["target"].append(target)
                rows["category"].append(f"skill-{item % 4}")
                rows["passed"].append(None if broken else bool(rng.random() < rate))
                rows["score"].append(None if broken else score)
                if output_chars:
                    outputs.append(rng.bytes(output_chars // 2).hex())
    table = pa.table(rows)
    if output_chars:
        table = table.append_column("output", pa.array(outputs))
    return table


def write_parquet(table: pa.Table, path: Path, row_group_size: int | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path, row_group_size=row_group_size)
    return path


def counts_data(path: Path) -> pa.Table:
    """A counts table's data (no file metadata), sorted by every column but the counts."""
    table = pq.read_table(path)
    table = table.replace_schema_metadata(None)
    keys = [name for name in table.column_names if name not in ("trials", "passed", "errored")]
    return table.sort_by([(name, "ascending") for name in keys])
