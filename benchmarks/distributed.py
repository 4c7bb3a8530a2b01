"""Trials per second with worker processes and Ray actors, as ratios to one worker process.

    python benchmarks/distributed.py            # about two minutes
    python benchmarks/distributed.py --quick    # smaller runs
    python benchmarks/distributed.py --no-ray   # local workers only

Two targets, each a python callable of the suite:

* **CPU-bound**: pure-Python arithmetic holding the GIL for about 25 ms a trial (calibrated on
  this machine at start).  One process runs one such trial at a time whatever its concurrency;
  worker processes run them in parallel (target: >= 1.6x with 2 workers on 2 cores).
* **I/O-bound**: ``await asyncio.sleep(0.05)``; concurrency 32, so the ideal is 640 trials/s
  whatever the number of workers (target: no slowdown with more workers).

Each configuration is a whole ``run_suite`` call (fresh store, every trial committed by the
controller).  Two rates are printed: over the whole run (worker start-up included) and while
running (from the first trial's start to the last trial's end, read off the records: start-up
excluded).  Ratios are to ``--workers 1`` (and the single-process run is shown beside it).  The
best of ``--repeats`` runs is kept, taken round-robin so every configuration sees the same load.
"""

from __future__ import annotations

import argparse
import io
import os
import platform
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import yaml
from rich.console import Console

from trialscore.runner.distributed.options import Distribution
from trialscore.runner.options import RunOptions
from trialscore.runner.orchestrator import execute_suite
from trialscore.runner.run_report import RunReport
from trialscore.runner.suite import load_suite

AGENT = """
import asyncio


def spin(case, seed):
    total = 0
    for i in range(case.metadata["loops"]):
        total += i * i % 7
    return "ok" if total >= 0 else "no"


async def wait(case, seed):
    await asyncio.sleep(0.05)
    return "ok"
"""


def loops_for(seconds: float) -> int:
    """How many iterations of the CPU-bound loop take ``seconds`` here (best of 5)."""
    n = 200_000
    best = float("inf")
    for _ in range(5):
        started = time.perf_counter()
        total = 0
        for i in range(n):
            total += i * i % 7
        best = min(best, time.perf_counter() - started)
    return max(1, int(n * seconds / best))


def write_suite(
    directory: Path, function: str, cases: int, trials: int, concurrency: int, loops: int
) -> Path:
    document = {
        "name": function,
        "targets": [{"name": "agent", "type": "python", "callable": f"agent.py:{function}"}],
        "graders": [{"type": "exact", "value": "ok"}],
        "cases": [{"id": f"case-{i}", "input": "q", "metadata": {"loops": loops}} for i in range(cases)],
        "execution": {"trials": {"count": trials}, "concurrency": concurrency, "timeout_s": 60},
    }
    path = directory / f"{function}.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    return path


def timed(suite: Path, distribution: Distribution | None) -> tuple[float, float]:
    """(trials/s over the whole run, trials/s while running) of one run on a fresh store."""
    store = Path(tempfile.mkdtemp(dir=suite.parent)) / "store.sqlite"
    options = RunOptions(store=store, progress=False, distributed=distribution)
    started = time.perf_counter()
    report: RunReport = execute_suite(load_suite(suite), options, Console(file=io.StringIO()))
    whole = time.perf_counter() - started
    assert report.completed and all(r.verdict == "pass" for r in report.records), "a trial did not pass"
    first = min(r.started_at for r in report.records if r.started_at is not None)
    last = max(r.started_at + timedelta(seconds=r.latency_s or 0) for r in report.records if r.started_at)
    running = (last - first).total_seconds()
    return len(report.records) / whole, len(report.records) / running


def section(
    title: str,
    suite: Path,
    configs: dict[str, Distribution | None],
    repeats: int,
    target: Callable[[dict[str, float]], str],
) -> None:
    best: dict[str, tuple[float, float]] = {}
    for _ in range(repeats):
        for name, distribution in configs.items():
            whole, running = timed(suite, distribution)
            old = best.get(name, (0.0, 0.0))
            best[name] = (max(old[0], whole), max(old[1], running))
    base = best["1 worker"]
    print(f"\n{title}")
    print(f"{'':24} {'whole run':>16} {'ratio':>7}   {'while running':>16} {'ratio':>7}")
    for name, (whole, running) in best.items():
        print(
            f"{name:24} {whole:10.1f} tr/s {whole / base[0]:6.2f}x   "
            f"{running:10.1f} tr/s {running / base[1]:6.2f}x"
        )
    print(target({name: running / base[1] for name, (_, running) in best.items()}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller runs")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--no-ray", action="store_true", help="leave out the Ray backend")
    args = parser.parse_args()
    print(f"python {platform.python_version()}, {os.cpu_count()} CPUs, {platform.machine()}")
    use_ray = not args.no_ray
    if use_ray:
        try:
            import ray
        except ImportError:
            print("ray is not installed (pip install 'trialscore[ray]'): the Ray rows are left out")
            use_ray = False
        else:
            ray.init(num_cpus=os.cpu_count(), include_dashboard=False, log_to_driver=False)
    loops = loops_for(0.025)
    scale = 1 if args.quick else 2
    with tempfile.TemporaryDirectory() as folder:
        directory = Path(folder)
        (directory / "agent.py").write_text(textwrap.dedent(AGENT))
        cpu = write_suite(directory, "spin", 40 * scale, 4, 4, loops)
        io_bound = write_suite(directory, "wait", 200 * scale, 4, 32, loops)
        configs: dict[str, Distribution | None] = {
            "single process": None,
            "1 worker": Distribution("local", 1),
            "2 workers": Distribution("local", 2),
            "4 workers": Distribution("local", 4),
        }
        if use_ray:
            configs["ray, 2 actors"] = Distribution("ray", 2)
            configs["ray, 4 actors"] = Distribution("ray", 4)
        print(f"CPU-bound trial: {loops:,} loop iterations, about 25 ms alone")
        section(
            f"CPU-bound: {160 * scale} trials, concurrency 4",
            cpu,
            configs,
            args.repeats,
            lambda r: (
                f"target 2 workers >= 1.6x: {'MET' if r['2 workers'] >= 1.6 else 'MISS'} "
                f"({r['2 workers']:.2f}x)"
            ),
        )
        section(
            f"I/O-bound (50 ms sleep): {800 * scale} trials, concurrency 32 (ideal 640 tr/s)",
            io_bound,
            configs,
            args.repeats,
            lambda r: (
                "target no slowdown with more workers: "
                + ("MET" if min(r["2 workers"], r["4 workers"]) >= 0.95 else "MISS")
                + f" (2 workers {r['2 workers']:.2f}x, 4 workers {r['4 workers']:.2f}x)"
            ),
        )
    if use_ray:
        ray.shutdown()
    print("\nThe machine is shared with other work: figures vary from run to run.", file=sys.stderr)


if __name__ == "__main__":
    main()
