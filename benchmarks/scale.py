"""Scale benchmark (issue 24): reduction of generated trial Parquet against a plain DuckDB GROUP BY,
the bytes fetched from a local S3 server, and a large inspect_ai log against inspect_ai's own reader.

Everything is generated in a temporary folder (never committed) and removed afterwards:

1. ``--rows`` trial rows (default 100M) of ``--items`` cases x 2 targets as Parquet files with a
   ``--output-chars`` output column; ``trialscore reduce`` (a fresh process) against the floor, a
   fresh ``python -c`` running DuckDB's ``SELECT target, case_id, count(*), count(passed),
   count_if(passed) ... GROUP BY ALL`` on the same files.  Wall time, rows per second, peak RSS
   (``ru_maxrss`` of the child) and the ratios; targets: at most 1.2x the time, at most 2 GB.
2. The same reduction from moto's S3 server on 127.0.0.1 (``--s3-rows`` rows): bytes the server sent
   against the files' size.
3. An inspect_ai ``.eval`` of ``--samples`` samples (default 200,000) with long transcripts (about
   1 GB), grown from a log inspect_ai wrote: ``trialscore score`` against ``read_eval_log`` (fresh
   processes; time and peak RSS); targets: at most 60 s and 1 GB.

Run: ``python benchmarks/scale.py [--rows 100000000] [--samples 200000]``; ``--quick`` for a small run.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "results"))


def peak_of(code: str, *argv: str) -> tuple[float, float, str]:
    """A fresh Python running ``code``, measured alone (``ru_maxrss`` of a wrapper's only child)."""
    wrapper = (
        "import resource, subprocess, sys, time\n"
        "start = time.perf_counter()\n"
        "done = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
        "wall = time.perf_counter() - start\n"
        "sys.stderr.write(done.stderr)\n"
        "print(done.returncode, wall, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
        "print(done.stdout, end='')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", wrapper, sys.executable, "-c", code, *argv],
        capture_output=True,
        text=True,
        check=False,
    )
    head, _, rest = done.stdout.partition("\n")
    code_, wall, rss = head.split()
    if code_ != "0":
        raise SystemExit(f"a child failed:\n{done.stderr[-3000:]}")
    return float(wall), int(rss) / 1024, rest


def generate(folder: Path, rows: int, items: int, output_chars: int, files: int) -> int:
    """Trial Parquet files: ``rows`` rows over ``files`` files; return their total size in bytes."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    rates = rng.beta(1.2, 1.0, items)
    per_file = rows // files
    names = np.array([f"case-{index:07d}" for index in range(items)], dtype=object)
    pool = pa.array([rng.bytes(output_chars // 2).hex() for _ in range(65536)])  # 8 MB: past any window
    chunk = 2_000_000
    for index in range(files):
        with pq.ParquetWriter(
            folder / f"part-{index:03d}.parquet", _schema(), use_dictionary=["case_id", "target"]
        ) as writer:  # outputs differ from row to row in real logs: no dictionary for them
            done = 0
            while done < per_file:
                size = min(chunk, per_file - done)
                global_row = index * per_file + done + np.arange(size)
                target = global_row % 2
                item = (global_row // 2) % items
                trial = global_row // (2 * items)
                passed = rng.random(size) < rates[item]
                errored = rng.random(size) < 0.005
                table = pa.table(
                    {
                        "case_id": pa.array(names[item]),
                        "trial": pa.array(trial.astype(np.int64)),
                        "target": pa.DictionaryArray.from_arrays(
                            pa.array(target.astype(np.int32)), pa.array(["model-a", "model-b"])
                        ).cast(pa.string()),
                        "passed": pa.array(passed, mask=errored),
                        "output": pool.take(pa.array(rng.integers(0, len(pool), size))),
                    },
                    schema=_schema(),
                )
                writer.write_table(table, row_group_size=1_000_000)
                done += size
    return sum(path.stat().st_size for path in folder.glob("*.parquet"))


def _schema():  # type: ignore[no-untyped-def]
    import pyarrow as pa

    return pa.schema(
        [("case_id", pa.string()), ("trial", pa.int64()), ("target", pa.string()), ("passed", pa.bool_()),
         ("output", pa.string())]
    )  # fmt: skip


FLOOR = """
import duckdb, sys
con = duckdb.connect()
files = sys.argv[1]
rows = con.sql(
    "SELECT target, case_id, count(*) AS trials, count(passed) AS graded, count_if(passed) AS passed "
    f"FROM read_parquet('{files}') GROUP BY ALL"
).fetchnumpy()
print(len(rows["case_id"]))
"""


def reduction(temp: Path, rows: int, items: int, output_chars: int, files: int) -> dict[str, float]:
    data = temp / "trials"
    start = time.perf_counter()
    size = generate(data, rows, items, output_chars, files)
    took = time.perf_counter() - start
    print(f"generated {rows:,} rows in {files} files, {size / 1e9:.2f} GB, in {took:.0f} s")
    pattern = str(data / "*.parquet")
    out = temp / "counts.parquet"
    floor_wall, floor_rss, floor_out = peak_of(FLOOR, pattern)
    ours_wall, ours_rss, ours_out = peak_of(
        "import sys; from trialscore.cli import main; sys.argv[0] = 'trialscore'; main()",
        "reduce", pattern, "--out", str(out), "-f", "json",
    )  # fmt: skip
    payload = json.loads(ours_out)
    groups = int(floor_out.strip())
    assert payload["rows_written"] == groups, (payload["rows_written"], groups)
    read = payload["bytes_read"]
    print(f"reduce: {rows / ours_wall / 1e6:.1f} M rows/s, {ours_wall:.1f} s, peak {ours_rss:.0f} MB; "
          f"read {read / 1e6:.1f} MB of {size / 1e6:.0f} MB ({read / size:.1%})")  # fmt: skip
    print(f"DuckDB GROUP BY: {rows / floor_wall / 1e6:.1f} M rows/s, {floor_wall:.1f} s, "
          f"peak {floor_rss:.0f} MB")  # fmt: skip
    print(f"ratio: time {ours_wall / floor_wall:.2f}x (target <= 1.2x), memory {ours_rss / floor_rss:.2f}x "
          f"(target <= 2 GB: {ours_rss / 1024:.2f} GB); {groups:,} (target, case) rows written")  # fmt: skip
    shutil.rmtree(data)
    return {"wall": ours_wall, "floor": floor_wall}


def s3_bytes(temp: Path, rows: int, items: int, output_chars: int) -> None:
    """Reduce from moto's S3 server on 127.0.0.1 and count the bytes it sends."""
    import pyarrow.fs as pafs
    from test_results_object_storage import S3Server

    from trialscore.results.reduce import reduce_trials

    data = temp / "s3-trials"
    size = generate(data, rows, items, output_chars, files=2)
    server = S3Server()
    os.environ.update(
        AWS_ACCESS_KEY_ID="bench", AWS_SECRET_ACCESS_KEY="bench", AWS_DEFAULT_REGION="us-east-1",
        AWS_ENDPOINT_URL=server.url, AWS_EC2_METADATA_DISABLED="true",
    )  # fmt: skip
    try:
        fs = pafs.S3FileSystem(endpoint_override=server.url, allow_bucket_creation=True, region="us-east-1")
        fs.create_dir("bench")
        for path in sorted(data.glob("*.parquet")):
            with fs.open_output_stream(f"bench/trials/{path.name}") as out, path.open("rb") as source:
                shutil.copyfileobj(source, out, 2**24)
        before = server.sent
        start = time.perf_counter()
        done = reduce_trials(["s3://bench/trials/"], temp / "s3-counts.parquet")
        wall = time.perf_counter() - start
        sent = server.sent - before
        print(f"S3 (moto on 127.0.0.1): {rows:,} rows, files {size / 1e6:.0f} MB; "
              f"the server sent {sent / 1e6:.2f} MB ({sent / size:.2%} of the files; target <= 5%), "
              f"trialscore counted {done.bytes_read / 1e6:.2f} MB; {wall:.1f} s")  # fmt: skip
    finally:
        server.close()
        shutil.rmtree(data)


READ_INSPECT = """
import sys
from inspect_ai.log import read_eval_log
log = read_eval_log(sys.argv[1])
print(len(log.samples))
"""
SCORE = "import sys; from trialscore.cli import main; sys.argv[0] = 'trialscore'; main()"


def inspect_log(temp: Path, samples: int, transcript_chars: int) -> None:
    from _big_eval import big_log, small_log

    start = time.perf_counter()
    template = small_log(temp / "inspect-small")
    log = big_log(template, temp / "big.eval", samples=samples, transcript_chars=transcript_chars)
    size = log.stat().st_size
    took = time.perf_counter() - start
    print(f"inspect_ai log: {samples:,} samples, {size / 1e9:.2f} GB, built in {took:.0f} s")
    wall, rss, out = peak_of(SCORE, "score", str(log), "-f", "json")
    rows = json.loads(out)["rows"]["rows_read"]
    print(f"trialscore score: {wall:.1f} s, peak {rss:.0f} MB, {rows:,} trials (targets: 60 s, 1 GB)")
    try:
        wall2, rss2, out2 = peak_of(READ_INSPECT, str(log))
        print(f"inspect_ai read_eval_log: {wall2:.1f} s, peak {rss2:.0f} MB, {int(out2):,} samples; "
              f"ratio {wall / wall2:.3f}x time, {rss / rss2:.3f}x memory")  # fmt: skip
    except SystemExit as exc:
        print(f"inspect_ai read_eval_log did not finish: {str(exc)[-300:]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=100_000_000)
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--output-chars", type=int, default=128)
    parser.add_argument("--files", type=int, default=10)
    parser.add_argument("--s3-rows", type=int, default=5_000_000)
    parser.add_argument("--samples", type=int, default=200_000)
    parser.add_argument("--transcript-chars", type=int, default=4000)
    parser.add_argument("--quick", action="store_true", help="1M rows, 200k S3 rows, 10,000 samples")
    parser.add_argument("--skip", default="", help="comma-separated parts to skip: reduce, s3, inspect")
    args = parser.parse_args()
    if args.quick:
        args.rows, args.items, args.files, args.s3_rows, args.samples = 1_000_000, 10_000, 2, 200_000, 10_000
    skip = set(filter(None, args.skip.split(",")))
    temp = Path(tempfile.mkdtemp(prefix="trialscore-scale-"))
    try:
        if "reduce" not in skip:
            reduction(temp, args.rows, args.items, args.output_chars, args.files)
        if "s3" not in skip:
            s3_bytes(temp, args.s3_rows, min(args.items, args.s3_rows // 10), args.output_chars)
        if "inspect" not in skip:
            inspect_log(temp, args.samples, args.transcript_chars)
    finally:
        shutil.rmtree(temp, ignore_errors=True)


if __name__ == "__main__":
    main()
