"""Parquet datasets of several files: files of one schema are read as they are, files whose columns
differ (another order, a column more) are matched by column name; the counts are the same either way."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pyarrow as pa
from _readers import by_item
from _scale import trial_table, write_parquet

from trialscore.results import read_counts
from trialscore.results.sources import local_files


def _split(table: pa.Table, parts: int) -> list[pa.Table]:
    size = -(-table.num_rows // parts)
    return [table.slice(start, size) for start in range(0, table.num_rows, size)]


def test_files_of_one_schema_and_files_that_differ_give_the_counts_of_the_whole(tmp_path: Path) -> None:
    whole = trial_table(seed=3, items=40)
    expected = by_item(read_counts([write_parquet(whole, tmp_path / "whole.parquet")], by=("target",)))
    same, mixed = tmp_path / "same", tmp_path / "mixed"
    for index, part in enumerate(_split(whole, 3)):
        write_parquet(part, same / f"part-{index}.parquet")
        if index == 1:  # columns in another order
            part = part.select(list(reversed(part.column_names)))
        if index == 2:  # a column more
            part = part.append_column("note", pa.array(["x"] * part.num_rows))
        write_parquet(part, mixed / f"part-{index}.parquet")
    con = duckdb.connect()
    assert "union_by_name=false" in local_files("same", sorted(same.glob("*.parquet"))).relation(con, "")
    assert "union_by_name=true" in local_files("mixed", sorted(mixed.glob("*.parquet"))).relation(con, "")
    assert by_item(read_counts([same], by=("target",))) == expected
    assert by_item(read_counts([mixed], by=("target",))) == expected
    assert by_item(read_counts([str(mixed / "*.parquet")], by=("target",))) == expected
