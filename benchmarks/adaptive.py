"""Adaptive trials: trials saved, wasted in flight and wall time against the fixed design, on the same seeds.

    python benchmarks/adaptive.py            # 100 cases x 10 trials per strategy, then the sequential rule
    python benchmarks/adaptive.py --quick    # 50 cases

(a) The bimodal suite: 40% of cases always pass, 20% never, 40% flaky (pass rates uniform in 0-1),
    10 trials, concurrency 8, a python target that sleeps 5 ms.  For ``mean`` at 0.8,
    ``pass_all`` and ``pass_at_k``: the fixed run and ``--adaptive`` on the same seeds; the
    verdicts must be identical; printed: trials saved (targets 35%, 40%, 55%), trials wasted in
    flight, and the wall-time ratio.
(b) The sequential rule at the planned effect: a case whose pass rate is 0.95 against a mark
    of 0.8 (alpha 0.05).  The fixed design is the fewest trials whose exact one-sided binomial
    test at alpha/2 has 80% power there; the sequential rule's trials are its mean stopping
    time over 2,000 simulated cases (information: there is no saving target for the per-case rule,
    whose guarantee is its false-pass rate; with no futility stop, even a test that knew 0.95
    would need about 39 trials on average to reach its bar, by Wald's approximation).
(c) The sequential paired comparison against a baseline (``run --baseline RUN --adaptive``): 100
    cases (40% always pass, 20% never, 40% flaky), baseline 10 trials per case, the flaky cases
    regressed so that the mean paired difference is -0.1 (the planned effect), alpha 0.05.  The
    fixed design is ``stats.plan_sample_size`` from a pilot of the baseline (paired t-test,
    80% power); printed: the mean trials to a settled verdict over 200 comparisons, the share
    settled as a regression, and the ratio sequential/fixed (target: at least 30% fewer).  The
    planner assumes the baseline has as many trials per case as the candidate; the sequential
    comparison pairs each candidate trial with a block of the baseline's 10, so the benchmark also
    prints the power of a fixed run of 1 trial per case scored against the whole baseline, and the
    sequential comparison's trials against that run's.
(d) Small suites (issue 23): 20 cases, a 10-trial baseline, a candidate budget of 10 trials per case,
    every case's rate dropped by one shift (clipped) so that the mean drops by 0.1, on the mixture
    (40% at 1, 20% at 0, 40% uniform) and on Beta(4, 2) cases; and no change.  Printed: the share of
    regression verdicts (against the fixed design with the same budget: every case's 10 candidate
    trials against its 10 baseline trials, compare's paired t-test; as a ratio and in points, target
    at least the fixed design's less 5 points), wrong and no_difference verdicts under no change,
    undecided runs, and the mean candidate trials as a ratio of the fixed design's 200; then
    no_difference under no change at a margin 20 cases can reach.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from trialscore.runner.options import RunOptions
from trialscore.runner.orchestrator import execute_suite
from trialscore.runner.suite import CaseSpec, Suite
from trialscore.stats._sequential import BettingSequence

TARGETS = {"mean": 0.35, "pass_all": 0.40, "pass_at_k": 0.55}


async def agent(case: CaseSpec, seed: int) -> dict[str, Any]:
    """Answers right with the case's pass rate (its metadata ``p``), after 5 ms."""
    rng = np.random.default_rng(seed)
    await asyncio.sleep(0.005)
    return {"output": "yes" if rng.random() < case.metadata["p"] else "no", "cost_usd": 0.0}


def bimodal(strategy: str, cases: int) -> Suite:
    rng = np.random.default_rng(0)
    rates = [1.0] * (cases * 4 // 10) + [0.0] * (cases * 2 // 10)
    rates += list(rng.uniform(0.0, 1.0, size=cases - len(rates)))
    return Suite.from_mapping(
        {
            "name": "bimodal",
            "targets": [{"name": "agent", "type": "python", "callable": "adaptive:agent"}],
            "graders": [{"type": "exact"}],
            "cases": [
                {"id": f"c{i}", "input": "?", "expected": "yes", "metadata": {"p": float(p)}}
                for i, p in enumerate(rates)
            ],
            "execution": {
                "trials": {"count": 10, "strategy": strategy},
                "concurrency": 8,
                "seed": 11,
                "threshold": 0.8,
            },
        }
    )


def compare_runs(cases: int) -> None:
    print(f"(a) bimodal suite, {cases} cases x 10 trials, concurrency 8 (machine shared with other work)")
    for strategy, target in TARGETS.items():
        suite = bimodal(strategy, cases)
        with tempfile.TemporaryDirectory() as tmp:
            clock = time.perf_counter()
            fixed = execute_suite(suite, RunOptions(store=Path(tmp) / "f.sqlite", progress=False))
            fixed_s = time.perf_counter() - clock
            clock = time.perf_counter()
            adaptive = execute_suite(
                suite, RunOptions(store=Path(tmp) / "a.sqlite", progress=False, adaptive=True)
            )
            adaptive_s = time.perf_counter() - clock
        same = [c.verdict for c in fixed.cases] == [c.verdict for c in adaptive.cases]
        info = adaptive.adaptive or {}
        saved = info["trials_saved"] / info["trials_planned"]
        mark = "ok" if saved >= target and same else "MISS"
        print(
            f"  {strategy:10s} verdicts identical: {same}; "
            f"trials {info['trials_run']} vs {len(fixed.records)}, "
            f"saved {saved:.0%} (target {target:.0%}) {mark}; wasted in flight "
            f"{info['trials_wasted_in_flight']}; wall time adaptive/fixed {adaptive_s / fixed_s:.2f}"
        )


def fixed_design_trials(p0: float, p1: float, alpha: float, power: float) -> int:
    from scipy.stats import binom

    for n in range(1, 2000):
        critical = int(binom.isf(alpha / 2, n, p0)) + 1  # reject "p <= p0" when passes >= critical
        if binom.sf(critical - 1, n, p0) <= alpha / 2 and binom.sf(critical - 1, n, p1) >= power:
            return n
    raise RuntimeError("no fixed design under 2000 trials")


def sequential_trials(p0: float, p1: float, alpha: float, runs: int) -> tuple[float, float]:
    rng = np.random.default_rng(3)
    times, right = [], 0
    for _ in range(runs):
        seq = BettingSequence(alpha=alpha, threshold=p0)
        while seq.side is None and seq.t < 5000:
            seq.update(float(rng.random() < p1))
        times.append(seq.t)
        right += seq.side == "above"
    return float(np.mean(times)), right / runs


def compare_sequential(runs: int) -> None:
    p0, p1, alpha = 0.8, 0.95, 0.05
    fixed = fixed_design_trials(p0, p1, alpha, 0.8)
    mean, power = sequential_trials(p0, p1, alpha, runs)
    print(
        f"(b) sequential rule at pass rate {p1} vs mark {p0}, alpha {alpha}: fixed design {fixed} trials "
        f"(80% power); sequential mean {mean:.1f} trials (decided pass in {power:.1%}); "
        f"sequential/fixed {mean / fixed:.2f} (no target: its guarantee is the false-pass rate)"
    )


def paired_runs(
    base: np.ndarray, cand: np.ndarray, cap: int, runs: int, seed: int = 5, margin: float = 0.05
) -> tuple[np.ndarray, np.ndarray]:
    """Per sequential comparison (each with its own baseline run): verdict code and candidate trials.

    Codes as ``stats._paired_sequential.verdicts``: 0 regression, 1 improvement, 2 no_difference,
    -1 undecided (every case ran its ``cap`` planned trials).
    """
    from trialscore.stats._paired_sequential import PairedDesign

    rng = np.random.default_rng(seed)
    codes, trials = np.empty(runs, dtype=int), np.empty(runs, dtype=int)
    for r in range(runs):
        passes = rng.binomial(cap, base)
        design = PairedDesign([cap] * base.size, passes.tolist(), [cap] * base.size, alpha=0.05, seed=r)
        code, spent = design.simulate(cand, margin, 1, rng)
        codes[r], trials[r] = code[0], spent[0]
    return codes, trials


def paired_trials(base: np.ndarray, cand: np.ndarray, cap: int, runs: int) -> tuple[float, float]:
    """Mean candidate trials and share of regression verdicts of the sequential comparison."""
    codes, trials = paired_runs(base, cand, cap, runs)
    return float(trials.mean()), float((codes == 0).mean())


def fixed_power(base: np.ndarray, cand: np.ndarray, trials: int, cap: int, runs: int) -> float:
    """Power of a fixed run of ``trials`` per case scored against the whole ``cap``-trial baseline."""
    from trialscore.stats._compare import compare_paired

    rng = np.random.default_rng(9)
    found = 0
    for _ in range(runs):
        baseline = (rng.random((base.size, cap)) < base[:, None]).astype(int)
        candidate = (rng.random((base.size, trials)) < cand[:, None]).astype(int)
        ids = list(range(base.size))
        baseline_run = {i: list(row) for i, row in zip(ids, baseline, strict=True)}
        candidate_run = {i: list(row) for i, row in zip(ids, candidate, strict=True)}
        result = compare_paired(baseline_run, candidate_run, alpha=0.05, permutations=0)
        found += result.verdict == "regression"
    return found / runs


def compare_paired_sequential(runs: int) -> None:
    from trialscore.stats._plan import plan_sample_size

    rng = np.random.default_rng(0)
    base = np.r_[np.ones(40), np.zeros(20), rng.uniform(0.3, 0.9, 40)]
    flaky = (base > 0) & (base < 1)
    cand = np.where(flaky, base - 0.1 / flaky.mean(), base)
    pilot = (rng.random((base.size, 10)) < base[:, None]).astype(int)
    plan = plan_sample_size(0.1, pilot=pilot, items=base.size, alpha=0.05, power=0.8)
    fixed = (plan.trials or 0) * base.size
    mean, power = paired_trials(base, cand, 10, runs)
    mark = "ok" if mean <= 0.7 * fixed else "MISS"
    print(
        f"(c) sequential paired comparison, mean difference -0.1, alpha 0.05: fixed design {fixed} trials "
        f"({plan.trials} per case, 80% power); sequential mean {mean:.1f} trials (regression in "
        f"{power:.1%}); sequential/fixed {mean / fixed:.2f} (target <= 0.70) {mark}"
    )
    one = fixed_power(base, cand, 1, 10, runs)
    print(
        f"    the planner assumes the baseline has as many trials per case as the candidate; a fixed run "
        f"of 1 trial per case scored against all 10 baseline trials ({base.size} trials) finds the "
        f"regression in {one:.1%}: sequential/that run {mean / base.size:.2f}"
    )


def small_suites(runs: int) -> None:
    """(d): 20 cases, 10-trial baseline, budget 10 candidate trials per case."""
    rng = np.random.default_rng(23)
    populations = {
        "mixture": np.r_[np.ones(8), np.zeros(4), rng.uniform(0, 1, 8)],
        "Beta(4, 2)": rng.beta(4, 2, 20),
    }
    error = 100 * math.sqrt(0.25 / runs)
    print(
        f"(d) 20 cases, 10-trial baseline, 10 planned trials a case; {runs} comparisons a cell "
        f"(Monte Carlo standard error at most {error:.1f} points a share)"
    )
    for name, base in populations.items():
        low, high = -1.0, 0.0
        for _ in range(60):  # the shift whose clipped mean change is -0.1
            mid = (low + high) / 2
            low, high = (mid, high) if np.mean(np.clip(base + mid, 0, 1) - base) < -0.1 else (low, mid)
        for label, cand in (("drop 0.1", np.clip(base + low, 0, 1)), ("no change", base)):
            codes, trials = paired_runs(base, cand, 10, runs, seed=29)
            share = {
                v: float((codes == code).mean())
                for code, v in (
                    (0, "regression"),
                    (1, "improvement"),
                    (2, "no_difference"),
                    (-1, "undecided"),
                )
            }
            fixed = fixed_power(base, cand, 10, 10, runs)
            mean = float(trials.mean())
            if label == "drop 0.1":
                ratio = share["regression"] / fixed if fixed else float("nan")
                mark = "ok" if share["regression"] >= fixed - 0.05 else "MISS"
                verdicts = (
                    f"regression {share['regression']:.1%} vs fixed {fixed:.1%}: power ratio {ratio:.2f}, "
                    f"{100 * (share['regression'] - fixed):+.1f} points (target >= -5) {mark}"
                )
            else:
                verdicts = (
                    f"wrong verdicts {share['regression'] + share['improvement']:.1%} (fixed "
                    f"{fixed:.1%} regressions), no_difference {share['no_difference']:.1%}"
                )
            print(
                f"    {name}, {label}: {verdicts}; undecided {share['undecided']:.1%} (every case ran its "
                f"planned trials); mean {mean:.0f} of 200 trials: trials ratio {mean / 200:.2f}"
            )
    from trialscore.stats._paired_sequential import PairedDesign

    base = populations["mixture"]
    floor = PairedDesign([10] * 20, (10 * base).round().astype(int).tolist(), [10] * 20).baseline_half_width
    for margin in (0.05, 0.1):
        codes, trials = paired_runs(base, base, 10, runs, seed=31, margin=margin)
        print(
            f"    mixture, no change, margin {margin:g}: no_difference {float((codes == 2).mean()):.1%} with "
            f"{float(trials.mean()):.0f} of 200 trials (the baseline's own noise alone leaves +/-{floor:.3f})"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).parent))
    compare_runs(50 if args.quick else 100)
    compare_sequential(500 if args.quick else 2000)
    compare_paired_sequential(50 if args.quick else 200)
    small_suites(200 if args.quick else 2000)


if __name__ == "__main__":
    main()
