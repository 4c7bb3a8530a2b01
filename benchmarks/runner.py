"""Time the trial runner end to end: trials per second with the SQLite store on, and inspect_ai side by side.

    python benchmarks/runner.py            # the sizes of the targets (about a minute)
    python benchmarks/runner.py --quick    # smaller runs, a few seconds

Three sections; every run is a whole ``run_suite`` call (suite loaded beforehand):
trials run by asyncio workers, graded (one ``exact`` grader), committed to a
fresh SQLite store (WAL, group commit, each worker waiting for its trial's commit
before it starts another), then aggregated per case with the strategy and the
seed-000 metrics.

(a) a no-op in-process target (an ``async def`` returning at once), 20,000 trials
    (2,000 cases x 10), concurrency 64: trials per second, target >= 5,000/s;
(b) a target that sleeps 50 ms, 20,000 trials, concurrency 200: throughput as a
    share of the ideal 200 / 0.05 s = 4,000 trials/s, target >= 80%;
(c) the same kind of workload through inspect_ai's epochs with its ``mockllm``
    model (a constant reply with preset usage, ``exact`` scorer, an eval log
    written), against ours on the same trials (store and output files written),
    as a ratio of trials per second.  Skipped with a note when inspect_ai is not
    installed (it is an optional extra: ``pip install inspect_ai``);
(d) scale: 100,000 and 1,000,000 no-op trials (1,000 cases x 100 and x 1,000),
    concurrency 200, each run in a fresh process with its output files written:
    trials per second over time (the store's row count sampled every few
    seconds), the process's peak resident memory, the store and ``trials.jsonl``
    sizes; memory should stay flat in the number of trials (the 1M / 100k ratio).
    ``--against PATH`` runs the same in another checkout's ``src`` side by side
    (e.g. the code before incremental aggregation).

Timings are the best of ``--repeats`` runs, taken round-robin so that both sides
see the same machine load; garbage collection stays on (as in real use).
Missed targets are reported as MISS but do not fail the run.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import platform
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from collections.abc import Callable
from pathlib import Path

import yaml
from rich.console import Console

import trialscore
from trialscore.runner.options import RunOptions
from trialscore.runner.orchestrator import execute_suite
from trialscore.runner.outputs import write_outputs
from trialscore.runner.suite import load_suite

AGENT = """
import asyncio

async def noop(case, seed):
    return "ok"

async def sleeper(case, seed):
    await asyncio.sleep(0.05)
    return "ok"
"""


def write_suite(directory: Path, name: str, function: str, cases: int, trials: int, concurrency: int) -> Path:
    """A suite of ``cases`` cases x ``trials`` trials against ``agent.py:function``."""
    document = {
        "name": name,
        "targets": [{"name": "agent", "type": "python", "callable": f"agent.py:{function}"}],
        "graders": [{"type": "exact", "value": "ok"}],
        "cases": [{"id": f"case-{i}", "input": f"question {i}"} for i in range(cases)],
        "execution": {"trials": {"count": trials}, "concurrency": concurrency, "timeout_s": 30},
    }
    path = directory / f"{name}.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    return path


def time_ours(suite_path: Path, directory: Path, outputs: bool = False) -> float:
    """Seconds for one whole run (fresh store); checks every trial was committed and passed."""
    suite = load_suite(suite_path)
    store = Path(tempfile.mkdtemp(dir=directory)) / "store.sqlite"
    options = RunOptions(store=store, progress=False, out_dir=store.parent / "out")
    started = time.perf_counter()
    report = execute_suite(suite, options, Console(file=io.StringIO()))
    if outputs:
        write_outputs(report)
    elapsed = time.perf_counter() - started
    expected = sum(suite.settings_for(case).trials for case in suite.cases)
    passed = sum(record.passed is True for record in report.records)
    if report.committed != expected or passed != expected:
        sys.exit(
            f"{suite.name}: stored {report.committed} trials, {passed} passed; expected {expected} of each"
        )
    return elapsed


def time_inspect(samples: int, epochs: int, concurrency: int, directory: Path) -> float | None:
    """Seconds for inspect_ai's eval of ``samples`` x ``epochs`` on mockllm, or None without inspect_ai."""
    try:
        from inspect_ai import Epochs, Task
        from inspect_ai import eval as inspect_eval
        from inspect_ai.dataset import MemoryDataset, Sample
        from inspect_ai.model import ModelOutput, ModelUsage, get_model
        from inspect_ai.scorer import exact
        from inspect_ai.solver import generate
    except ImportError:
        return None

    def reply(*_: object) -> ModelOutput:
        # Preset usage: mockllm would otherwise count tokens with tiktoken, which downloads its tables.
        output = ModelOutput.from_content(model="mockllm", content="ok")
        output.usage = ModelUsage(input_tokens=3, output_tokens=1, total_tokens=4)
        return output

    dataset = MemoryDataset(
        [Sample(input=f"question {i}", target="ok", id=f"case-{i}") for i in range(samples)]
    )
    task = Task(dataset=dataset, solver=generate(), scorer=exact(), epochs=Epochs(epochs))
    model = get_model("mockllm/model", custom_outputs=reply)
    started = time.perf_counter()
    logs = inspect_eval(
        task,
        model=model,
        log_dir=tempfile.mkdtemp(dir=directory),
        display="none",
        max_samples=concurrency,
        max_connections=concurrency,
    )
    elapsed = time.perf_counter() - started
    if logs[0].status != "success":
        sys.exit(f"inspect_ai eval failed: {logs[0].error}")
    return elapsed


def best(runs: list[Callable[[], float | None]], repeats: int) -> list[float | None]:
    """Best time of each contender over ``repeats`` round-robin rounds."""
    times: list[list[float]] = [[] for _ in runs]
    for _ in range(repeats):
        for index, run in enumerate(runs):
            value = run()
            if value is not None:
                times[index].append(value)
    return [min(values) if values else None for values in times]


def verdict(ok: bool) -> str:
    return "ok  " if ok else "MISS"


def scale_child(cases: int, trials: int, concurrency: int, directory: Path) -> None:
    """(d), in a fresh process: one run of ``cases x trials`` no-op trials; prints its figures as JSON."""
    (directory / "agent.py").write_text(textwrap.dedent(AGENT))
    suite = load_suite(write_suite(directory, "scale", "noop", cases, trials, concurrency))
    store = directory / "store.sqlite"
    samples: list[tuple[float, int]] = []
    done = threading.Event()
    started = time.perf_counter()

    def sample() -> None:  # the committed trials every 2 s, from a read-only connection
        while not done.wait(2.0):
            try:
                with sqlite3.connect(f"file:{store}?mode=ro", uri=True) as db:
                    (rows,) = db.execute("SELECT COALESCE(MAX(rowid), 0) FROM trials").fetchone()
            except sqlite3.Error:
                continue
            samples.append((time.perf_counter() - started, rows))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    options = RunOptions(store=store, progress=False, out_dir=directory / "out")
    report = execute_suite(suite, options, Console(file=io.StringIO()))
    ran = time.perf_counter() - started
    files = write_outputs(report)
    total = time.perf_counter() - started
    done.set()
    # VmHWM: this process's peak since it started (ru_maxrss would count the parent's pages before exec).
    status = Path("/proc/self/status").read_text().splitlines()
    peak = int(next(line for line in status if line.startswith("VmHWM:")).split()[1]) * 1024
    if report.committed != cases * trials:
        sys.exit(f"stored {report.committed} trials; expected {cases * trials}")
    print(
        json.dumps(
            {
                "trials": report.committed,
                "run_s": ran,
                "total_s": total,
                "peak_bytes": peak,
                "store_bytes": sum(p.stat().st_size for p in directory.glob("store.sqlite*")),
                "trials_jsonl_bytes": files.trials.stat().st_size,
                "samples": samples,
            }
        )
    )


def run_scale(cases: int, trials: int, concurrency: int, src: Path | None) -> dict:
    """Run :func:`scale_child` in a fresh process (with ``src`` first on the path when given)."""
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(src), env.get("PYTHONPATH", "")])
    with tempfile.TemporaryDirectory() as tmp:
        argv = [sys.executable, __file__, "--child", str(cases), str(trials), str(concurrency), tmp]
        done = subprocess.run(argv, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        sys.exit(f"scale run failed: {done.stderr[-2000:]}")
    return json.loads(done.stdout.splitlines()[-1])


def rates(samples: list[list[float]]) -> str:
    """Trials per second in each sampling window, e.g. ``8.1k 8.3k 8.0k``."""
    out, previous = [], (0.0, 0)
    for when, rows in samples:
        if when > previous[0] and rows >= previous[1]:
            out.append(f"{(rows - previous[1]) / (when - previous[0]) / 1000:.1f}k")
        previous = (when, rows)
    shown = out if len(out) <= 12 else [*out[:6], "...", *out[-5:]]
    return " ".join(shown) or "-"


def scale_section(quick: bool, against: Path | None) -> None:
    sizes = [(1000, 10), (1000, 100)] if quick else [(1000, 100), (1000, 1000)]
    print("\n(d) scale: no-op trials, concurrency 200, each run in a fresh process, output files written")
    sides = [("trialscore", None)] + ([(f"{against}", against)] if against is not None else [])
    for label, src in sides:
        results = []
        for cases, trials in sizes:
            result = run_scale(cases, trials, 200, src)
            results.append(result)
            rate = result["trials"] / result["run_s"]
            print(
                f"    {label[-40:]:>12}  {result['trials']:>9,} trials  {rate:8,.0f} trials/s"
                f" ({result['run_s']:.1f} s run, {result['total_s']:.1f} s with files)  peak "
                f"{result['peak_bytes'] / 2**20:6,.0f} MiB  store {result['store_bytes'] / 2**20:5,.0f} MiB"
                f"  trials.jsonl {result['trials_jsonl_bytes'] / 2**20:5,.0f} MiB"
            )
            running = [sample for sample in result["samples"] if sample[0] <= result["run_s"]]
            print(f"{'':18}trials/s every ~2 s while running: {rates(running)}")
        small, large = results
        print(
            f"{'':18}10x the trials: peak memory x{large['peak_bytes'] / small['peak_bytes']:.2f}, "
            f"rate x{(large['trials'] / large['run_s']) / (small['trials'] / small['run_s']):.2f}"
        )


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        cases, trials, concurrency, directory = sys.argv[2:6]
        scale_child(int(cases), int(trials), int(concurrency), Path(directory))
        return
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="smaller runs (a few seconds)")
    parser.add_argument("--repeats", type=int, default=3, help="rounds per measurement (best is kept)")
    parser.add_argument("--scale-only", action="store_true", help="run only (d), the scale runs")
    parser.add_argument(
        "--against", type=Path, help="(d) also with the trialscore of this src folder, side by side"
    )
    args = parser.parse_args()
    if args.scale_only:
        scale_section(args.quick, args.against)
        return
    cases = 200 if args.quick else 2000
    inspect_samples, inspect_epochs = (40, 5) if args.quick else (100, 10)
    print(
        f"trialscore {trialscore.__version__}, Python {platform.python_version()}, {platform.machine()}, "
        f"asyncio; best of {args.repeats}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        (directory / "agent.py").write_text(textwrap.dedent(AGENT))
        noop = write_suite(directory, "noop", "noop", cases, 10, 64)
        sleeper = write_suite(directory, "sleeper", "sleeper", cases, 10, 200)
        same = write_suite(directory, "same", "noop", inspect_samples, inspect_epochs, 64)

        trials = cases * 10
        (noop_s,) = best([lambda: time_ours(noop, directory)], args.repeats)
        rate = trials / noop_s
        print(f"\n(a) no-op target, {trials:,} trials, concurrency 64, SQLite store on")
        print(
            f"    {rate:10,.0f} trials/s   ({noop_s:.2f} s)   target >= 5,000/s: {rate / 5000:.2f}x  "
            f"{verdict(rate >= 5000)}"
        )

        (sleep_s,) = best([lambda: time_ours(sleeper, directory)], args.repeats)
        rate = trials / sleep_s
        share = rate / 4000
        print(f"\n(b) 50 ms target, {trials:,} trials, concurrency 200 (ideal 4,000 trials/s)")
        print(
            f"    {rate:10,.0f} trials/s   ({sleep_s:.2f} s)   {share:.1%} of ideal, target >= 80%  "
            f"{verdict(share >= 0.8)}"
        )

        peer_trials = inspect_samples * inspect_epochs
        ours_s, peer_s = best(
            [
                lambda: time_ours(same, directory, outputs=True),
                lambda: time_inspect(inspect_samples, inspect_epochs, 64, directory),
            ],
            args.repeats,
        )
        print(
            f"\n(c) {inspect_samples} samples x {inspect_epochs} epochs = {peer_trials:,} trials, "
            "concurrency 64"
        )
        print(
            f"    trialscore  {peer_trials / ours_s:10,.0f} trials/s   ({ours_s:.2f} s, store + output files)"
        )
        if peer_s is None:
            print("    inspect_ai  not installed (pip install inspect_ai): no comparison")
        else:
            print(f"    inspect_ai  {peer_trials / peer_s:10,.0f} trials/s   ({peer_s:.2f} s, mockllm + log)")
            print(f"    ratio       trialscore is {peer_s / ours_s:.1f}x faster")
    scale_section(args.quick, args.against)


if __name__ == "__main__":
    main()
