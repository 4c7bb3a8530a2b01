"""Report benchmark: size and build time of the 1,000 cases x 10 trials x 2 runs report with 2 KB outputs
beside ``score``, and the live report's cost on a 2,000-trial run.

**Build.**  Writes two trial-record files (the runner's trials.jsonl layout: 1,000 cases x 10
trials, one target, 5 categories, about 2% errored trials, grader results, outputs of about 2 KB:
each case has a right answer and three wrong ones that differ from it by a few words, so a
case's trials say one to four distinct things, as a model sampled at a temperature does), then
times, in this process (Typer's CliRunner: parsing, reading, computing, writing), alternately in
``--repeat`` rounds (so that a machine shared with other work loads both alike):

* ``trialscore score RUN -f json`` on each of the two files (the floor: the same reading and
  the headline statistics, once per run);
* ``trialscore report RUN --baseline BASE --out report.html`` (everything: cases, distinct
  outputs, word diffs of the flipped cases, intervals, curves, flips, paired verdicts, rendering).

It prints the report's size (bound: 5 MB) and the ratio of its build time to the two ``score``
runs (bound: 2x): the ratio of the best rounds, and the median and range of the per-round ratios,
in wall time and in CPU time (this process's, DuckDB's threads included).

**Live.**  Runs the demo suite against the simulated agent for 154 trials a case (2,002 trials,
about 5 s), in process, without and with the live report (``RunOptions(observer=LiveReport(...))``,
what ``trialscore run --report FILE`` does), alternately ``--live-repeat`` times each, and prints
the median wall time of each, their ratio (bound: 1.05) and the median of the per-round ratios.

Run: ``python benchmarks/report.py [--cases 1000] [--trials 10] [--repeat 9] [--live-repeat 5]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from typer.testing import CliRunner

from trialscore.cli import app

_WORDS = [f"word{index}" for index in range(400)] + ["the", "a", "is", "of", "and", "to", "in"]


def answers(case: int) -> list[str]:
    """A case's right answer (about 2 KB) and three wrong ones, each a few words off it."""
    rng = np.random.default_rng(10_000 + case)
    words = [str(word) for word in rng.choice(_WORDS, 290)]
    right = " ".join(words)
    wrong = []
    for variant in range(3):
        changed = list(words)
        for position in rng.choice(len(words), 3 + variant, replace=False).tolist():
            changed[position] = f"wrong{variant}"
        wrong.append(" ".join(changed))
    return [right, *wrong]


def generate(path: Path, cases: int, trials: int, seed: int, shift: float) -> Path:
    """Trial records of one run: case pass rates ~ Beta(3, 1.5) (+ shift), 2% errored trials."""
    rng = np.random.default_rng(seed)
    rates = np.clip(np.random.default_rng(7).beta(3, 1.5, size=cases) + shift, 0, 1)
    passed = rng.random((cases, trials)) < rates[:, None]
    errored = rng.random((cases, trials)) < 0.02
    with path.open("w", encoding="utf-8") as out:
        for case in range(cases):
            said = answers(case)
            for trial in range(trials):
                error = bool(errored[case, trial])
                ok = None if error else bool(passed[case, trial])
                record = {
                    "run_id": f"run-{seed}",
                    "suite": "bench",
                    "case_id": f"case-{case:04d}",
                    "trial": trial,
                    "target": "model-a",
                    "category": f"cat-{case % 5}",
                    "passed": ok,
                    "score": None if error else float(ok),
                    "verdict": "error" if error else ("pass" if ok else "fail"),
                    "grader_results": [] if error else [{"name": "exact", "score": float(ok), "passed": ok}],
                    "cost_usd": round(float(rng.uniform(1e-4, 1e-3)), 6),
                    "latency_s": round(float(rng.uniform(0.2, 3.0)), 3),
                    "output": None if error else said[0] if ok else said[1 + int(rng.integers(3))],
                    "error": "timeout after 30 s" if error else None,
                    "started_at": "2025-01-06T10:00:00Z",
                }
                out.write(json.dumps(record) + "\n")
    return path


def timed(work: Callable[[], object]) -> tuple[float, float]:
    """The wall and CPU seconds ``work()`` takes."""
    wall, cpu = time.perf_counter(), time.process_time()
    work()
    return time.perf_counter() - wall, time.process_time() - cpu


def ratios(name: str, floor: list[float], measured: list[float]) -> str:
    """The ratio of the best rounds, then the median and range of the per-round ratios."""
    each = sorted(m / f for f, m in zip(floor, measured, strict=True))
    best = min(measured) / min(floor)
    median = statistics.median(each)
    return f"{name} {best:.2f}x (per round: median {median:.2f}x, {each[0]:.2f}-{each[-1]:.2f}x)"


def build(args: argparse.Namespace) -> None:
    runner = CliRunner()
    with tempfile.TemporaryDirectory() as folder:
        base = generate(Path(folder) / "base.jsonl", args.cases, args.trials, 1, 0.0)
        now = generate(Path(folder) / "now.jsonl", args.cases, args.trials, 2, -0.05)
        out = Path(folder) / "report.html"

        def invoke(argv: list[str]) -> None:
            result = runner.invoke(app, argv)
            if result.exit_code != 0:
                raise SystemExit(result.output)

        def score() -> None:
            invoke(["score", str(now), "-f", "json"])
            invoke(["score", str(base), "-f", "json"])

        def report() -> None:
            invoke(["report", str(now), "--baseline", str(base), "--out", str(out)])

        report()  # warm imports (Jinja2, the templates) and the DuckDB connection, as score's first run
        score()
        rounds = [(timed(score), timed(report)) for _ in range(args.repeat)]
        size = out.stat().st_size
        inputs = (now.stat().st_size + base.stat().st_size) / 1e6
    scored = [round_[0] for round_ in rounds]
    reported = [round_[1] for round_ in rounds]
    print(
        f"{args.cases} cases x {args.trials} trials x 2 runs, 2 KB outputs ({inputs:.1f} MB of trial files; "
        f"{args.repeat} rounds, alternately, in process; best round)"
    )
    for name, times in (("score (both runs)", scored), ("report", reported)):
        wall, cpu = min(t[0] for t in times), min(t[1] for t in times)
        print(f"  {name:18s}  {wall * 1000:8.1f} ms wall  {cpu * 1000:8.1f} ms CPU")
    for kind, index in (("wall", 0), ("CPU", 1)):
        line = ratios(f"report/score ({kind})", [t[index] for t in scored], [t[index] for t in reported])
        print(f"  {line}  (bound <= 2)")
    print(f"  report size         {size / 1e6:8.3f} MB   ({size / 5_000_000:.0%} of the 5 MB bound)")


def live(args: argparse.Namespace) -> None:
    from trialscore.api import run_suite
    from trialscore.report.live import LiveReport
    from trialscore.runner.options import RunOptions

    def once(with_report: bool) -> tuple[float, int]:
        with tempfile.TemporaryDirectory() as folder:
            observer = LiveReport(Path(folder) / "live.html") if with_report else None
            options = RunOptions(
                trials=154, store=Path(folder) / "s.sqlite", progress=False, observer=observer
            )
            start = time.perf_counter()
            report = run_suite(options=options, demo=True, write=False)
            elapsed = time.perf_counter() - start
            assert report.committed == 2002, report.committed
            return elapsed, observer.pages if observer is not None else 0

    once(False)  # warm imports
    plain: list[float] = []
    watched: list[float] = []
    pages = []
    for _ in range(args.live_repeat):
        plain.append(once(False)[0])
        elapsed, written = once(True)
        watched.append(elapsed)
        pages.append(written)
    a, b = statistics.median(plain), statistics.median(watched)
    each = sorted(w / p for p, w in zip(plain, watched, strict=True))
    print(f"demo suite, 2,002 trials (median of {args.live_repeat}, alternately, in process)")
    print(f"  run                 {a:8.2f} s")
    print(f"  run --report        {b:8.2f} s   ({min(pages)}-{max(pages)} pages written)")
    median = statistics.median(each)
    print(
        f"  ratio               {b / a:8.3f}    (bound <= 1.05; per round: median {median:.3f}, "
        f"{each[0]:.3f}-{each[-1]:.3f})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--live-repeat", type=int, default=5)
    args = parser.parse_args()
    build(args)
    live(args)


if __name__ == "__main__":
    main()
