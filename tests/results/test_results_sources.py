"""Parquet datasets of several files: files of one schema are read as they are, files whose columns
differ (another order, a column more) are matched by column name; the counts are the same either way."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from _readers import by_item
from _scale import trial_table, write_parquet

from trialscore.errors import EvaluationError
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


def test_never_null_names_only_columns_every_row_group_proves_free_of_nulls(tmp_path: Path) -> None:
    whole = trial_table(seed=5, items=30)  # passed and score have nulls (errored trials)
    con = duckdb.connect()
    one = write_parquet(whole, tmp_path / "one.parquet", row_group_size=50)
    assert local_files("one", [one]).never_null(con) == {"case_id", "trial", "target", "category"}
    parts = _split(whole, 2)
    mixed = [
        write_parquet(parts[0], tmp_path / "mixed" / "a.parquet"),
        write_parquet(parts[1].drop_columns(["category"]), tmp_path / "mixed" / "b.parquet"),
    ]  # read by name, the second file's rows have no category
    assert local_files("mixed", mixed).never_null(con) == {"case_id", "trial", "target"}
    bare = tmp_path / "bare.parquet"
    pq.write_table(whole, bare, write_statistics=False)  # no statistics: nothing is proven
    assert local_files("bare", [bare]).never_null(con) == frozenset()
    hive = write_parquet(whole.drop_columns(["target"]), tmp_path / "h" / "target=a" / "p.parquet")
    files = local_files("h", [hive])
    assert files.hive and "target" not in files.never_null(con)


def test_a_null_trial_in_a_file_without_statistics_is_still_found(tmp_path: Path) -> None:
    table = trial_table(seed=6, items=10)
    trials = table.column("trial").to_pylist()
    trials[7] = None
    table = table.set_column(table.schema.get_field_index("trial"), "trial", pa.array(trials, pa.int64()))
    for statistics in (True, False):
        path = tmp_path / f"t-{statistics}.parquet"
        pq.write_table(table, path, write_statistics=statistics)
        with pytest.raises(EvaluationError, match="trial"):
            read_counts([path], by=("target",))
