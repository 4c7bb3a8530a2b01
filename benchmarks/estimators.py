"""Time trialscore's estimators against the row-sum floor and scorio, side by side in one process.

    python benchmarks/estimators.py            # the sizes of the targets (about a minute)
    python benchmarks/estimators.py --quick    # smaller matrices, a few seconds

Three sections, each on seeded binary matrices whose per-item pass rates are
Beta(0.8, 0.8) distributed:

(a) every point estimator at k = 8 on a 100,000 x 64 matrix, stored as bool and
    as int64: ours against the floor (``R.sum(axis=1)`` on the same matrix,
    target ours/floor <= 1.5) and against scorio's equivalent (target
    ours/scorio <= 1.0);
(b) mG-Pass@k and G-Pass@k_tau on a 1,000 x 10,000 matrix with k = 1,000
    (target for mG-Pass@k: ours at least 100x faster than scorio);
(c) the whole pass@k / pass^k curve, k = 1..N, against one pass@k call
    (target <= 2x), and against scorio computing the curve with a loop over k.

Timings are the best of ``--repeats`` runs (``time.perf_counter``, garbage
collection off), taken round-robin so that ours, the floor and the peer see the
same machine load.  A contender whose first run takes over a second is not
repeated.  Every value of ours is checked against scorio's to 1e-12 relative
error; the script fails (exit status 1) if one differs.  Missed performance
targets are reported as MISS but do not fail the run.
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

import numpy as np

import trialscore
from trialscore.core.estimators import (
    avg,
    bayes,
    g_pass_at_k_tau,
    maj_at_k,
    mg_pass_at_k,
    pass_at_k,
    pass_curve,
    pass_hat_k,
)

try:
    import scorio
    import scorio.eval as peer
except ImportError:  # pragma: no cover - depends on the environment
    sys.exit("scorio is not installed: pip install -e '.[bench]'")

#: Largest relative difference allowed between our value and scorio's.
AGREEMENT = 1e-12
#: A contender whose first run takes longer than this (seconds) is timed once.
SLOW_SECONDS = 1.0


@dataclass(frozen=True)
class Sizes:
    """Matrix sizes and draw sizes of one benchmark run."""

    items: int
    trials: int
    k: int
    wide_items: int
    wide_trials: int
    wide_k: int


FULL = Sizes(items=100_000, trials=64, k=8, wide_items=1_000, wide_trials=10_000, wide_k=1_000)
QUICK = Sizes(items=20_000, trials=64, k=8, wide_items=200, wide_trials=2_000, wide_k=200)


@dataclass
class Race:
    """Best time and first value of each contender."""

    best: dict[str, float] = field(default_factory=dict)
    value: dict[str, object] = field(default_factory=dict)


def race(contenders: dict[str, Callable[[], object]], repeats: int) -> Race:
    """Time the contenders round-robin; keep each one's best time and its value."""
    result = Race()
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        for round_number in range(repeats):
            for name, run in contenders.items():
                if round_number and result.best[name] > SLOW_SECONDS:
                    continue
                start = time.perf_counter()
                value = run()
                elapsed = time.perf_counter() - start
                if round_number == 0:
                    result.value[name] = value
                    result.best[name] = elapsed
                else:
                    result.best[name] = min(result.best[name], elapsed)
    finally:
        if gc_was_enabled:
            gc.enable()
    return result


def binary_matrix(items: int, trials: int, seed: int) -> np.ndarray:
    """Seeded 0/1 outcomes (bool) with per-item pass rates drawn from Beta(0.8, 0.8)."""
    rng = np.random.default_rng(seed)
    rates = rng.beta(0.8, 0.8, size=items)
    return rng.random((items, trials)) < rates[:, None]


def relative_difference(ours: object, theirs: object) -> float:
    """Largest ``|ours - theirs| / |theirs|`` over the values (0 where both are 0)."""
    a = np.atleast_1d(np.asarray(ours, dtype=np.float64))
    b = np.atleast_1d(np.asarray(theirs, dtype=np.float64))
    scale = np.where(b == 0, 1.0, np.abs(b))
    return float(np.max(np.abs(a - b) / scale))


@dataclass(frozen=True)
class Check:
    """One performance target: ``ratio <= bound``."""

    label: str
    ratio: float
    bound: float

    @property
    def passed(self) -> bool:
        return self.ratio <= self.bound

    def line(self) -> str:
        verdict = "PASS" if self.passed else f"MISS by {self.ratio / self.bound:.2f}x"
        return f"  {verdict:<14} {self.label}: {self.ratio:.3g} (target <= {self.bound:g})"


@dataclass
class Report:
    checks: list[Check] = field(default_factory=list)
    disagreements: list[str] = field(default_factory=list)

    def agree(self, label: str, ours: object, theirs: object) -> str:
        difference = relative_difference(ours, theirs)
        if not difference <= AGREEMENT:
            self.disagreements.append(f"{label}: relative difference {difference:.3g}")
        return f"{difference:.1e}"

    def target(self, label: str, ratio: float, bound: float) -> str:
        check = Check(label, ratio, bound)
        self.checks.append(check)
        return f"{ratio:7.2f} {'PASS' if check.passed else 'MISS'}"


def milliseconds(seconds: float) -> str:
    return f"{seconds * 1e3:9.2f}"


def point_estimators(
    k: int,
) -> list[tuple[str, Callable[[np.ndarray], object], Callable[[np.ndarray], object]]]:
    """(name, ours, scorio's equivalent) for every point estimator; values compared as returned."""
    return [
        ("pass_at_k", lambda R: pass_at_k(R, k), lambda R: peer.pass_at_k(R, k)),
        ("pass_hat_k", lambda R: pass_hat_k(R, k), lambda R: peer.pass_hat_k(R, k)),
        (
            "g_pass_at_k_tau(0.5)",
            lambda R: g_pass_at_k_tau(R, k, 0.5),
            lambda R: peer.g_pass_at_k_tau(R, k, 0.5),
        ),
        ("mg_pass_at_k", lambda R: mg_pass_at_k(R, k), lambda R: peer.mg_pass_at_k(R, k)),
        ("maj_at_k", lambda R: maj_at_k(R, k), lambda R: peer.maj_at_k(R, k)),
        # scorio's avg also returns a sigma; its mean is compared with ours.
        ("avg", avg, lambda R: peer.avg(R)[0]),
        ("bayes (mu, sigma)", bayes, peer.bayes),
    ]


def section_a(R_bool: np.ndarray, k: int, repeats: int, report: Report) -> None:
    items, trials = R_bool.shape
    print(f"\n(a) point estimators, k = {k}, on a {items:,} x {trials} binary matrix")
    header = (
        f"  {'estimator':<22}{'dtype':<7}{'ours ms':>9}{'floor ms':>9}{'scorio ms':>10}"
        f"{'ours/floor':>15}{'ours/scorio':>13}{'rel. diff':>10}"
    )
    print(header)
    for dtype in (np.bool_, np.int64):
        R = R_bool.astype(dtype)
        name_of_dtype = np.dtype(dtype).name
        for name, ours, theirs in point_estimators(k):
            timing = race(
                {"floor": partial(np.sum, R, axis=1), "ours": partial(ours, R), "scorio": partial(theirs, R)},
                repeats,
            )
            best = timing.best
            label = f"{name} [{name_of_dtype}]"
            print(
                f"  {name:<22}{name_of_dtype:<7}{milliseconds(best['ours'])}{milliseconds(best['floor'])}"
                f"{milliseconds(best['scorio']):>10}"
                f"{report.target(label + ' ours/floor', best['ours'] / best['floor'], 1.5):>15}"
                f"{report.target(label + ' ours/scorio', best['ours'] / best['scorio'], 1.0):>13}"
                f"{report.agree(label, timing.value['ours'], timing.value['scorio']):>10}"
            )


def section_b(R: np.ndarray, k: int, repeats: int, report: Report) -> None:
    items, trials = R.shape
    print(f"\n(b) large k: k = {k:,} on a {items:,} x {trials:,} binary matrix")
    print(
        f"  {'estimator':<22}{'ours ms':>9}{'scorio ms':>11}{'ours/scorio':>15}"
        f"{'speed-up':>10}{'rel. diff':>10}"
    )
    cases = [
        ("mg_pass_at_k", lambda: mg_pass_at_k(R, k), lambda: peer.mg_pass_at_k(R, k), 0.01),
        (
            "g_pass_at_k_tau(0.5)",
            lambda: g_pass_at_k_tau(R, k, 0.5),
            lambda: peer.g_pass_at_k_tau(R, k, 0.5),
            1.0,
        ),
    ]
    for name, ours, theirs, bound in cases:
        timing = race({"ours": ours, "scorio": theirs}, repeats)
        best = timing.best
        ratio = best["ours"] / best["scorio"]
        print(
            f"  {name:<22}{milliseconds(best['ours'])}{milliseconds(best['scorio']):>11}"
            f"{report.target(f'{name} k={k} ours/scorio', ratio, bound):>15}{1 / ratio:>9.1f}x"
            f"{report.agree(f'{name} k={k}', timing.value['ours'], timing.value['scorio']):>10}"
        )


def scorio_pass_curve(R: np.ndarray) -> list[float]:
    return [peer.pass_at_k(R, k) for k in range(1, R.shape[1] + 1)]


def section_c(R_bool: np.ndarray, k: int, repeats: int, report: Report) -> None:
    items, trials = R_bool.shape
    print(
        f"\n(c) the whole curve k = 1..{trials} (pass@k and pass^k) on a {items:,} x {trials} binary matrix"
    )
    print(
        f"  {'dtype':<7}{'curve ms':>9}{f'pass@{k} ms':>11}{'scorio loop ms':>15}"
        f"{f'curve/pass@{k}':>15}{'curve/scorio loop':>19}{'rel. diff':>10}"
    )
    for dtype in (np.bool_, np.int64):
        R = R_bool.astype(dtype)
        timing = race(
            {
                "curve": lambda R=R: pass_curve(R),
                "single": lambda R=R: pass_at_k(R, k),
                "scorio": lambda R=R: scorio_pass_curve(R),
            },
            repeats,
        )
        best = timing.best
        name_of_dtype = np.dtype(dtype).name
        curve = timing.value["curve"]
        ratio = best["curve"] / best["single"]
        print(
            f"  {name_of_dtype:<7}{milliseconds(best['curve'])}{milliseconds(best['single']):>11}"
            f"{milliseconds(best['scorio']):>15}"
            f"{report.target(f'pass_curve [{name_of_dtype}] / one pass_at_k', ratio, 2.0):>15}"
            f"{best['curve'] / best['scorio']:>19.3f}"
            f"{report.agree(f'pass_curve [{name_of_dtype}]', curve.pass_at_k, timing.value['scorio']):>10}"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick", action="store_true", help="smaller matrices (targets are set for the full run)"
    )
    parser.add_argument("--repeats", type=int, default=None, help="timed runs per contender (best is kept)")
    parser.add_argument("--seed", type=int, default=20_250_101, help="seed of the random matrices")
    args = parser.parse_args(argv)
    sizes = QUICK if args.quick else FULL
    repeats = args.repeats or (3 if args.quick else 7)

    print(
        f"trialscore {trialscore.__version__} vs scorio {scorio.__version__}; numpy {np.__version__}; "
        f"Python {platform.python_version()}; {os.cpu_count()} CPUs; best of {repeats} runs"
        + (" (--quick: smaller than the sizes the targets are set for)" if args.quick else "")
    )
    report = Report()
    tall = binary_matrix(sizes.items, sizes.trials, args.seed)
    section_a(tall, sizes.k, repeats, report)
    section_b(
        binary_matrix(sizes.wide_items, sizes.wide_trials, args.seed + 1), sizes.wide_k, repeats, report
    )
    section_c(tall, sizes.k, repeats, report)

    print("\ntargets")
    for check in report.checks:
        print(check.line())
    missed = sum(not check.passed for check in report.checks)
    print(f"  {len(report.checks) - missed} of {len(report.checks)} targets met")
    if report.disagreements:
        print(f"\nvalues DIFFER from scorio by more than {AGREEMENT:g} (relative):")
        for line in report.disagreements:
            print(f"  {line}")
        return 1
    print(f"\nall values agree with scorio to {AGREEMENT:g} relative error")
    return 0


if __name__ == "__main__":
    sys.exit(main())
