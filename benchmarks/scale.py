"""Scale benchmark (issue 24): reduction of generated trial Parquet against a plain DuckDB GROUP BY,
the bytes fetched from a local S3 server, and large inspect_ai, lm_eval and promptfoo logs.

Everything is generated in a temporary folder (never committed) and removed afterwards:

1. ``--rows`` trial rows (default 100M) of ``--items`` cases x 2 targets as Parquet files with a
   ``--output-chars`` output column; ``trialscore reduce`` (a fresh process) against the floor, a
   fresh ``python -c`` running DuckDB's ``SELECT target, case_id, count(*), count(passed),
   count_if(passed) ... GROUP BY ALL`` on the same files, ``--repeat`` interleaved rounds (the best
   of each is kept: the machine is shared), and ``reduce_trials`` called from Python (the same
   reduction without the command line's start-up).  Beside them, the floor's query with the counts
   table's other columns added (the span of trial indices): what of the ratio is those columns'
   aggregation in DuckDB, and what is trialscore's own work.  Wall time, CPU time, rows per second, peak RSS
   (``ru_maxrss`` of the child) and the ratios; targets: at most 1.2x the time, at most 2 GB.
2. The same reduction from moto's S3 server on 127.0.0.1 (``--s3-rows`` rows): bytes the server sent
   against the files' size.
3. An inspect_ai ``.eval`` of ``--samples`` samples (default 200,000) with long transcripts (about
   1 GB), grown from a log inspect_ai wrote: ``trialscore score`` against ``read_eval_log`` (fresh
   processes; time and peak RSS); targets: at most 60 s and 1 GB.
4. lm_eval samples files (``--lm-eval-samples`` lines over ``--lm-eval-runs`` runs) and a promptfoo
   ``-o results.json`` (``--promptfoo-samples`` results), about 1 GB each with ``--text-chars`` of
   prompt and output per record, grown from fixtures the tools wrote (tests/results/_big_logs.py):
   ``trialscore score`` (targets: 60 s, 1 GB) against the floor of parsing every lm_eval line with
   Python's ``json``, and against ``json.load`` of the promptfoo document (how it is read by hand).

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
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "results"))


@dataclass(frozen=True)
class Run:
    """One fresh process: wall time, CPU time (user + system, every thread), peak RSS (MB), stdout."""

    wall: float
    cpu: float
    rss: float
    out: str


def run_of(code: str, *argv: str) -> Run:
    """A fresh Python running ``code``, measured alone (``getrusage`` of a wrapper's only child)."""
    wrapper = (
        "import resource, subprocess, sys, time\n"
        "start = time.perf_counter()\n"
        "done = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
        "wall = time.perf_counter() - start\n"
        "sys.stderr.write(done.stderr)\n"
        "use = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
        "print(done.returncode, wall, use.ru_utime + use.ru_stime, use.ru_maxrss)\n"
        "print(done.stdout, end='')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", wrapper, sys.executable, "-c", code, *argv],
        capture_output=True,
        text=True,
        check=False,
    )
    head, _, rest = done.stdout.partition("\n")
    code_, wall, cpu, rss = head.split()
    if code_ != "0":
        raise SystemExit(f"a child failed:\n{done.stderr[-3000:]}")
    return Run(float(wall), float(cpu), int(rss) / 1024, rest)


def best(runs: list[Run]) -> Run:
    """The fastest of repeated runs (the one least slowed by other work on a shared machine)."""
    return min(runs, key=lambda run: run.wall)


def each_round(ours: list[Run], theirs: list[Run]) -> str:
    """The time ratio of each interleaved round, as printed: ``1.07, 1.24, ...``."""
    return ", ".join(f"{a.wall / b.wall:.2f}" for a, b in zip(ours, theirs, strict=True))


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
con.execute("SET enable_progress_bar = false")  # DuckDB draws its own bar on stdout otherwise
files = sys.argv[1]
extra = "".join(f", {column}" for column in sys.argv[2:])
rows = con.sql(
    "SELECT target, case_id, count(*) AS trials, count(passed) AS graded, count_if(passed) AS passed"
    f"{extra} FROM read_parquet('{files}') GROUP BY ALL"
).fetchnumpy()
print(len(rows["case_id"]))
"""
#: What the counts table holds beyond the floor's counts, for this data (no graded scores): the span
#: of trial indices (``trial_min``, ``trial_max``), by which repeated trials show.
SAME_COLUMNS = ("min(trial)", "max(trial)")


#: The trialscore command line in a fresh Python.
CLI = "import sys; from trialscore.cli import main; sys.argv[0] = 'trialscore'; main()"
#: The reduction as a library call (no command line to import and build) in a fresh Python.
LIBRARY = (
    "from sys import argv; from trialscore.results import reduce; reduce.reduce_trials([argv[1]], argv[2])"
)


def reduction(temp: Path, rows: int, items: int, output_chars: int, files: int, repeat: int) -> None:
    data = temp / "trials"
    start = time.perf_counter()
    size = generate(data, rows, items, output_chars, files)
    took = time.perf_counter() - start
    print(f"generated {rows:,} rows in {files} files, {size / 1e9:.2f} GB, in {took:.0f} s")
    pattern = str(data / "*.parquet")
    out = temp / "counts.parquet"
    floors, ours, calls, sames = [], [], [], []
    for _ in range(repeat):  # interleaved, so that all meet the same load of a shared machine
        floors.append(run_of(FLOOR, pattern))
        ours.append(run_of(CLI, "reduce", pattern, "--out", str(out), "-f", "json"))
        calls.append(run_of(LIBRARY, pattern, str(out)))
        sames.append(run_of(FLOOR, pattern, *SAME_COLUMNS))
    floor, mine, call, same = best(floors), best(ours), best(calls), best(sames)
    payload = json.loads(mine.out)
    groups = int(floor.out.strip().splitlines()[-1])
    assert payload["rows_written"] == groups, (payload["rows_written"], groups)
    read = payload["bytes_read"]
    print(f"reduce (best of {repeat}): {rows / mine.wall / 1e6:.1f} M rows/s, {mine.wall:.1f} s "
          f"(CPU {mine.cpu:.1f} s), peak {mine.rss:.0f} MB; read {read / 1e6:.1f} MB of {size / 1e6:.0f} MB "
          f"({read / size:.1%})")  # fmt: skip
    print(f"DuckDB GROUP BY (best of {repeat}): {rows / floor.wall / 1e6:.1f} M rows/s, {floor.wall:.1f} s "
          f"(CPU {floor.cpu:.1f} s), peak {floor.rss:.0f} MB")  # fmt: skip
    rounds = each_round(calls, floors)
    print(f"reduce_trials called from Python (best of {repeat}): {call.wall:.1f} s (CPU {call.cpu:.1f} s), "
          f"peak {call.rss:.0f} MB; {call.wall / floor.wall:.2f}x the floor's time; each round: {rounds}"
          )  # fmt: skip
    paired = sorted(a.wall / b.wall for a, b in zip(ours, floors, strict=True))
    walls = each_round(ours, floors)
    print(f"ratio: time {mine.wall / floor.wall:.2f}x (target <= 1.2x; each round: {walls}; "
          f"median round {paired[len(paired) // 2]:.2f}x), "
          f"CPU {mine.cpu / floor.cpu:.2f}x, memory {mine.rss / floor.rss:.2f}x "
          f"(target <= 2 GB: {mine.rss / 1024:.2f} GB); {groups:,} (target, case) rows written")  # fmt: skip
    rounds = each_round(ours, sames)
    print(f"the same GROUP BY with the counts table's other columns ({', '.join(SAME_COLUMNS)}; best of "
          f"{repeat}): {same.wall:.1f} s (CPU {same.cpu:.1f} s), {same.wall / floor.wall:.2f}x the floor's "
          f"time; reduce against it: {mine.wall / same.wall:.2f}x (each round: {rounds})")  # fmt: skip
    shutil.rmtree(data)


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


def score_against(label: str, path: Path, size: int, peer: str, peer_code: str, *peer_args: str) -> None:
    """``trialscore score`` on ``path`` (targets: 60 s, 1 GB) beside the peer's reading of it."""
    mine = run_of(CLI, "score", str(path), "-f", "json")
    rows = json.loads(mine.out)["rows"]["rows_read"]
    print(f"{label}: trialscore score: {mine.wall:.1f} s (CPU {mine.cpu:.1f} s), peak {mine.rss:.0f} MB, "
          f"{rows:,} trial rows, {size / 1e9:.2f} GB read at {size / mine.wall / 1e6:.0f} MB/s "
          "(targets: 60 s, 1 GB)")  # fmt: skip
    try:
        other = run_of(peer_code, *peer_args)
    except SystemExit as exc:
        print(f"{label}: {peer} did not finish: {str(exc)[-300:]}")
        return
    print(f"{label}: {peer}: {other.wall:.1f} s, peak {other.rss:.0f} MB, {other.out.strip()}; "
          f"ratio {mine.wall / other.wall:.3f}x time, {mine.rss / other.rss:.3f}x memory")  # fmt: skip


def inspect_log(temp: Path, samples: int, transcript_chars: int) -> None:
    from _big_eval import big_log, small_log

    start = time.perf_counter()
    template = small_log(temp / "inspect-small")
    log = big_log(template, temp / "big.eval", samples=samples, transcript_chars=transcript_chars)
    size, took = log.stat().st_size, time.perf_counter() - start
    print(f"inspect_ai log: {samples:,} samples, {size / 1e9:.2f} GB, built in {took:.0f} s")
    score_against("inspect_ai log", log, size, "inspect_ai read_eval_log", READ_INSPECT, str(log))
    log.unlink()


#: The floor of reading lm_eval samples: every line parsed by Python's json, its metric counted.
READ_LINES = """
import json, pathlib, sys
lines = passed = 0
for path in sorted(pathlib.Path(sys.argv[1]).glob("samples_*.jsonl")):
    with path.open("rb") as handle:
        for line in handle:
            passed += json.loads(line).get("exact_match") == 1
            lines += 1
print(f"{lines:,} samples, {passed:,} passed")
"""
#: How promptfoo output is read by hand: the whole document by Python's json.
READ_DOCUMENT = """
import json, sys
with open(sys.argv[1], encoding="utf-8") as handle:
    results = json.load(handle)["results"]["results"]
print(f"{len(results):,} results, {sum(row['success'] for row in results):,} passed")
"""


def lm_eval_samples(temp: Path, samples: int, runs: int, text_chars: int) -> None:
    from _big_logs import big_lm_eval

    start = time.perf_counter()
    folder = big_lm_eval(temp / "lm-eval" / "model-a", samples // runs, runs=runs, text_chars=text_chars)
    size = sum(path.stat().st_size for path in folder.iterdir())
    print(f"lm_eval samples: {samples // runs:,} docs x {runs} runs in {runs} files, {size / 1e9:.2f} GB, "
          f"built in {time.perf_counter() - start:.0f} s")  # fmt: skip
    score_against("lm_eval samples", folder, size, "json.loads of every line", READ_LINES, str(folder))
    shutil.rmtree(folder)


def promptfoo_output(temp: Path, samples: int, text_chars: int) -> None:
    from _big_logs import big_promptfoo

    start = time.perf_counter()
    path = big_promptfoo(temp / "results.json", samples, text_chars=text_chars)
    size, took = path.stat().st_size, time.perf_counter() - start
    print(f"promptfoo JSON: {samples:,} results, {size / 1e9:.2f} GB, built in {took:.0f} s")
    score_against("promptfoo JSON", path, size, "json.load of the document", READ_DOCUMENT, str(path))
    path.unlink()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=100_000_000)
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--output-chars", type=int, default=128)
    parser.add_argument("--files", type=int, default=10)
    parser.add_argument("--s3-rows", type=int, default=5_000_000)
    parser.add_argument("--samples", type=int, default=200_000)
    parser.add_argument("--transcript-chars", type=int, default=4000)
    parser.add_argument(
        "--lm-eval-samples", type=int, default=200_000, help="sample lines, over --lm-eval-runs"
    )
    parser.add_argument("--lm-eval-runs", type=int, default=2)
    parser.add_argument("--promptfoo-samples", type=int, default=200_000)
    parser.add_argument("--text-chars", type=int, default=4000, help="prompt and output text per record")
    parser.add_argument("--repeat", type=int, default=3, help="interleaved rounds of reduce and its floor")
    parser.add_argument("--quick", action="store_true", help="1M rows, 200k S3 rows, 10,000 samples")
    parser.add_argument(
        "--skip", default="", help="comma-separated parts to skip: reduce, s3, inspect, lm-eval, promptfoo"
    )
    args = parser.parse_args()
    if args.quick:
        args.rows, args.items, args.files, args.s3_rows, args.samples = 1_000_000, 10_000, 2, 200_000, 10_000
        args.lm_eval_samples = args.promptfoo_samples = 10_000
    skip = set(filter(None, args.skip.split(",")))
    temp = Path(tempfile.mkdtemp(prefix="trialscore-scale-"))
    try:
        if "reduce" not in skip:
            reduction(temp, args.rows, args.items, args.output_chars, args.files, args.repeat)
        if "s3" not in skip:
            s3_bytes(temp, args.s3_rows, min(args.items, args.s3_rows // 10), args.output_chars)
        if "inspect" not in skip:
            inspect_log(temp, args.samples, args.transcript_chars)
        if "lm-eval" not in skip:
            lm_eval_samples(temp, args.lm_eval_samples, args.lm_eval_runs, args.text_chars)
        if "promptfoo" not in skip:
            promptfoo_output(temp, args.promptfoo_samples, args.text_chars)
    finally:
        shutil.rmtree(temp, ignore_errors=True)


if __name__ == "__main__":
    main()
