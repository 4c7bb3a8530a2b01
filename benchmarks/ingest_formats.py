"""Ingest benchmark per format family: other tools' logs at 1M trials beside trialscore's JSON Lines.

Writes, once, the same ``--trials`` trials (``--items`` items x trials each, one model, 0.5% of
them errored where the format can say so) in three shapes, each made from a record of the test
fixtures written by the real tool, with its ids and outcomes varied:

* **line-oriented**: an lm-evaluation-harness ``--log_samples`` output folder (one
  ``samples_<task>_<date>.jsonl`` file per run, a run per trial), read line by line in Python;
* **JSON document**: one tau-bench ``results.json`` array (``task_id``, ``trial``, ``reward``,
  ``info``, ``traj``), parsed as one document;
* **trialscore JSON Lines**: the trial rows the runner writes, read by DuckDB without a Python
  object per row (the floor the other two are measured against).

Each is scored as a fresh ``trialscore score PATH -f json`` process (interpreter start and imports
included), best of ``--repeat``: wall time, trials per second, and peak RSS
(``ru_maxrss`` of the child), with ratios to the JSON Lines path.

Run: ``python benchmarks/ingest_formats.py [--trials 1000000] [--repeat 2]``.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from ingest import fresh_process

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "results" / "fixtures"


def _outcomes(items: int, trials: int, seed: int) -> list[list[float | None]]:
    """Per trial, per item: 1.0 / 0.0 (a pass rate per item), or None for 0.5% errored trials."""
    rng = random.Random(seed)
    rates = [rng.random() for _ in range(items)]
    return [
        [None if rng.random() < 0.005 else float(rng.random() < rates[item]) for item in range(items)]
        for _ in range(trials)
    ]


def write_lm_eval(folder: Path, outcomes: list[list[float | None]]) -> Path:
    """A model folder of lm-eval samples files, one per run (errored trials: lm-eval has none, so 0)."""
    sample = next((FIXTURES / "lm-eval" / "out" / "model-a").glob("samples_tiny_gen_*.jsonl"))
    template = json.loads(sample.read_text().splitlines()[0])
    out = folder / "lm-eval" / "model-a"
    out.mkdir(parents=True)
    for run, row in enumerate(outcomes):
        stamp = f"2026-11-{1 + run // 24:02d}T{run % 24:02d}-00-00.000000"
        with (out / f"samples_tiny_gen_{stamp}.jsonl").open("w") as handle:
            for item, value in enumerate(row):
                record = dict(template, doc_id=item, exact_match=0.0 if value is None else value)
                handle.write(json.dumps(record) + "\n")
        (out / f"results_{stamp}.json").write_text(
            json.dumps({"results": {"tiny_gen": {}}, "config": {"model": "dummy"}, "model_name": "model-a"})
        )
    return out.parent


def write_tau_bench(folder: Path, outcomes: list[list[float | None]]) -> Path:
    """One tau-bench results file holding every trial."""
    fixture = next((FIXTURES / "tau-bench").glob("tool-calling-gpt-4o-mini-*.json"))
    template = json.loads(fixture.read_text())[0]
    path = folder / fixture.name
    with path.open("w") as handle:
        handle.write("[")
        first = True
        for trial, row in enumerate(outcomes):
            for item, value in enumerate(row):
                reward = 0.0 if value is None else value
                record = dict(template, task_id=item, trial=trial, reward=reward)
                handle.write(("" if first else ",") + json.dumps(record))
                first = False
        handle.write("]")
    return path


def write_jsonl(folder: Path, outcomes: list[list[float | None]]) -> Path:
    """trialscore trial rows (errored trials have passed null and an error)."""
    path = folder / "trials.jsonl"
    with path.open("w") as handle:
        for trial, row in enumerate(outcomes):
            for item, value in enumerate(row):
                record = {
                    "case_id": f"c{item}",
                    "trial": trial,
                    "target": "model-a",
                    "passed": None if value is None else value == 1.0,
                    "error": "timeout" if value is None else None,
                }
                handle.write(json.dumps(record) + "\n")
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=10, help="trials per item (runs)")
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    items = args.trials // args.runs
    outcomes = _outcomes(items, args.runs, seed=0)
    script = str(Path(sys.executable).with_name("trialscore"))
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        inputs = {
            "trialscore JSON Lines": write_jsonl(folder, outcomes),
            "lm-eval folder (lines)": write_lm_eval(folder, outcomes),
            "tau-bench results.json (document)": write_tau_bench(folder, outcomes),
        }
        results = {}
        for label, path in inputs.items():
            runs = [fresh_process([script, "score", str(path), "-f", "json"]) for _ in range(args.repeat)]
            results[label] = (min(run[0] for run in runs), max(run[1] for run in runs))
    floor_time, floor_memory = results["trialscore JSON Lines"]
    trials = items * args.runs
    shape = f"{items:,} items x {args.runs} runs"
    print(f"{trials:,} trials ({shape}); fresh `trialscore score`, best of {args.repeat}")
    for label, (seconds, memory) in results.items():
        print(
            f"  {label:<36} {seconds:6.2f} s  {trials / seconds / 1e3:7.0f}k trials/s  "
            f"{seconds / floor_time:5.2f}x time  peak {memory:6.0f} MB ({memory / floor_memory:4.2f}x)"
        )


if __name__ == "__main__":
    main()
