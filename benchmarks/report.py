"""Report benchmark: size and build time of the 1,000 cases x 10 trials x 2 runs report beside ``score``.

Writes two trial-record files (the runner's trials.jsonl layout: 1,000 cases x 10 trials,
one target, 5 categories, about 2% errored trials, grader results, outputs), then times,
best of ``--repeat`` runs, in this process (Typer's CliRunner: parsing, reading, computing,
writing):

* ``trialscore score RUN -f json`` on each of the two files (the floor: the same reading and
  the headline statistics, once per run);
* ``trialscore report RUN --baseline BASE --out report.html`` (everything: cases, intervals,
  curves, flips, paired verdicts, rendering).

It prints the report's size (target: at most 1 MB) and the ratio of its build time to the two
``score`` runs (target: at most 2x).

Run: ``python benchmarks/report.py [--cases 1000] [--trials 10] [--repeat 5]``.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from typer.testing import CliRunner

from trialscore.cli import app


def generate(path: Path, cases: int, trials: int, seed: int, shift: float) -> Path:
    """Trial records of one run: case pass rates ~ Beta(3, 1.5) (+ shift), 2% errored trials."""
    rng = np.random.default_rng(seed)
    rates = np.clip(np.random.default_rng(7).beta(3, 1.5, size=cases) + shift, 0, 1)
    passed = rng.random((cases, trials)) < rates[:, None]
    errored = rng.random((cases, trials)) < 0.02
    with path.open("w", encoding="utf-8") as out:
        for case in range(cases):
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
                    "output": None if error else f"the answer to case {case} is {rng.integers(1000)}",
                    "error": "timeout after 30 s" if error else None,
                    "started_at": "2025-01-06T10:00:00Z",
                }
                out.write(json.dumps(record) + "\n")
    return path


def best(repeat: int, work: Callable[[], object]) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
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
        t_score = best(args.repeat, score)
        t_report = best(args.repeat, report)
        size = out.stat().st_size
    print(f"{args.cases} cases x {args.trials} trials x 2 runs (best of {args.repeat}, in process)")
    print(f"  score (both runs)   {t_score * 1000:8.1f} ms")
    print(
        f"  report              {t_report * 1000:8.1f} ms   "
        f"ratio report/score = {t_report / t_score:.2f}x (target <= 2)"
    )
    print(f"  report size         {size / 1e6:8.3f} MB   ({size / 1_000_000:.0%} of the 1 MB bound)")


if __name__ == "__main__":
    main()
