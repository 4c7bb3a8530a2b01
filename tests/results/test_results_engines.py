"""The reduction on Ray Data (a local Ray) and on Spark (a local Spark running the job of docs/scale.md)
gives DuckDB's counts table to the last digit (issue 24)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from _scale import trial_table, write_parquet

from trialscore.errors import EvaluationError
from trialscore.results.reduce import reduce_trials

DOCS = Path(__file__).resolve().parents[2] / "docs" / "scale.md"


def rows(path: Path) -> list[dict[str, object]]:
    """The table's rows in one order (every column but the counts as the key)."""
    table = pq.read_table(path)
    keys = [
        name
        for name in table.column_names
        if name in ("target", "suite", "category", "scorer", "run", "case_id")
    ]
    data = table.to_pylist()
    return sorted(data, key=lambda row: tuple((row[name] is None, row[name] or "") for name in keys))


@pytest.fixture(scope="module")
def trials(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two files of trial rows of one case set (cases spread over both), with graded scores."""
    folder = tmp_path_factory.mktemp("engines")
    table = trial_table(seed=21, items=120, output_chars=200)
    half = table.num_rows // 2
    write_parquet(table.slice(0, half), folder / "trials" / "part-0.parquet", row_group_size=500)
    write_parquet(table.slice(half), folder / "trials" / "part-1.parquet", row_group_size=500)
    return folder / "trials"


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_ray_data_on_a_local_ray_gives_duckdbs_counts_to_the_last_digit(trials, tmp_path, local_ray):
    from trialscore.results.columns import ColumnMap

    hive = tmp_path / "hive"  # the same files in a hive layout: its key is a column Ray Data adds
    for index, run in enumerate(("first", "second")):
        (hive / f"run={run}").mkdir(parents=True)
        (hive / f"run={run}" / f"part-{index}.parquet").write_bytes(
            (trials / f"part-{index}.parquet").read_bytes()
        )
    cases = (
        ("passed", trials, None, ()),
        ("graded", hive, ColumnMap(score="score", threshold=0.5), ("run",)),
    )
    for name, folder, columns, by in cases:
        duck = reduce_trials([folder], tmp_path / f"{name}.duckdb.parquet", by, columns)
        on_ray = reduce_trials([folder], tmp_path / f"{name}.ray.parquet", by, columns, engine="ray")
        assert rows(tmp_path / f"{name}.ray.parquet") == rows(tmp_path / f"{name}.duckdb.parquet")
        assert (on_ray.rows_read, on_ray.rows_written, on_ray.groups) == (
            duck.rows_read,
            duck.rows_written,
            duck.groups,
        )
        assert on_ray.bytes_read == duck.bytes_read  # the same column chunks
    table = pq.read_table(trials / "part-0.parquet")
    bad = table.set_column(table.column_names.index("trial"), "trial", pa.array([-1] * table.num_rows))
    write_parquet(bad, tmp_path / "bad" / "part-0.parquet")
    with pytest.raises(EvaluationError, match=r"field 'trial' must be a whole number >= 0; got '-1'"):
        reduce_trials([tmp_path / "bad"], tmp_path / "bad.parquet", engine="ray")
    assert not (tmp_path / "bad.parquet").exists()


def test_the_ray_engine_reads_the_first_files_columns_and_hive_keys_with_pyarrow(tmp_path: Path) -> None:
    import pyarrow.fs as pafs

    from trialscore.results.ray_reduce import _columns_of

    folder = tmp_path / "run=a" / "target=m1" / "run=a"
    write_parquet(pa.table({"case_id": ["c"], "target": ["m1"], "passed": [True]}), folder / "part.parquet")
    file = str(folder / "part.parquet")
    # the file's columns, then each key of its hive folders once ("target" is a column already)
    assert _columns_of(file, None) == ["case_id", "target", "passed", "run"]
    assert _columns_of(f"s3://{file}", pafs.LocalFileSystem()) == ["case_id", "target", "passed", "run"]
    (tmp_path / "bad.parquet").write_bytes(b"PAR1 and then nothing")
    with pytest.raises(EvaluationError, match=r"bad\.parquet: cannot read its Parquet schema"):
        _columns_of(str(tmp_path / "bad.parquet"), None)


def spark_job() -> str:
    """The PySpark job of docs/scale.md, as written there."""
    text = DOCS.read_text()
    found = re.search(r"<!-- spark-job -->\n```python\n(.*?)\n```", text, re.S)
    assert found is not None, "docs/scale.md lost its Spark job"
    return found.group(1)


#: The test's local Spark: its driver JVM compiles with the quick (C1) compiler only and collects with
#: the serial collector (a job this short spent half its CPU, about 27 of 55 CPU-s for the two runs, in
#: the optimizing compiler's and the parallel collector's threads), it does not verify the bytecode of
#: the classes it loads from Spark's own jars again (the test's run: 15.6 to 16.3 -> 12.9 to 13.8
#: CPU-s, every process counted), and it runs one task at a time without its web UI (the two input
#: files are still two tasks, their partial counts merged by the shuffle).  The counts are the same.
SPARK_SUBMIT_ARGS = (
    "--driver-java-options '-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -XX:ActiveProcessorCount=1 "
    "-XX:+UnlockDiagnosticVMOptions -XX:-BytecodeVerificationRemote' "
    "--master local[1] --conf spark.ui.enabled=false pyspark-shell"
)
#: ``python -c RUNS JOB ARGUMENTS_JSON``: the job's ``__main__`` as written, once per command line, in
#: one Python, so that one JVM (started by the first run's ``getOrCreate``, kept by PySpark after
#: ``spark.stop()``) serves every run: a second JVM's start and warm-up cost more than the job.
RUNS = """
import json, runpy, sys
job = sys.argv[1]
for arguments in json.loads(sys.argv[2]):
    sys.argv = [job, *arguments]
    runpy.run_path(job, run_name="__main__")
"""


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_the_spark_job_of_the_docs_on_a_local_spark_gives_duckdbs_counts(trials, tmp_path):
    from trialscore.results.columns import ColumnMap

    job = tmp_path / "counts_job.py"
    job.write_text(spark_job())
    env = {
        **os.environ,
        "PYSPARK_PYTHON": sys.executable,
        "SPARK_LOCAL_IP": "127.0.0.1",
        "PYSPARK_SUBMIT_ARGS": SPARK_SUBMIT_ARGS,
    }
    env.setdefault("JAVA_HOME", str(Path(os.path.realpath("/usr/bin/java")).parents[1]))
    cases = (("passed", None), ("graded", "0.5"))
    runs = [
        [str(trials), str(tmp_path / f"{name}.spark"), *([threshold] if threshold else [])]
        for name, threshold in cases
    ]
    args = [sys.executable, "-c", RUNS, str(job), json.dumps(runs)]
    done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=500, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    for name, threshold in cases:
        out = tmp_path / f"{name}.spark"
        columns = None if threshold is None else ColumnMap(score="score", threshold=float(threshold))
        reduce_trials([trials], tmp_path / f"{name}.duckdb.parquet", columns=columns)
        merged = tmp_path / f"{name}.spark.parquet"
        reduce_trials([out], merged)  # Spark's part files, read back as one counts table
        assert rows(out) == rows(tmp_path / f"{name}.duckdb.parquet")  # Spark's own rows, as written
        assert rows(merged) == rows(tmp_path / f"{name}.duckdb.parquet")
        parts = sorted(out.glob("*.parquet"))
        assert parts and pq.read_schema(parts[0]).names[0] == "counts_version"
