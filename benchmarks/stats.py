"""Time the default interval and the bootstrap against scipy.stats.bootstrap and one point estimate.

    python benchmarks/stats.py            # the sizes of the targets (about a minute)
    python benchmarks/stats.py --quick    # smaller matrix and fewer resamples, a few seconds;
                                          # ratios only (the bootstrap's cost does not shrink with
                                          # the items, the point estimate's does)

On a seeded 100,000 x 64 binary matrix (per-item pass rates Beta(0.8, 0.8)),
pass@k at k = 8 with a 95% interval from 10,000 resamples:

* ours, the default interval: ``trialscore.stats.item_interval`` (``wilson-eff``)
  from the matrix (reducing it to counts and the values of the distinct states
  inside the timing);
* ours, the bootstrap: ``trialscore.stats.bootstrap_interval`` from the matrix (reducing it to
  counts, the values of the distinct states, the multinomial draws of state
  counts and the quantiles are all inside the timing), percentile and BCa;
* SciPy: ``scipy.stats.bootstrap`` on the per-item pass@k values (computed
  beforehand, outside the timing) with the same statistic (the mean), the same
  number of resamples, ``method="percentile"`` and ``vectorized=True``.  Its
  ``batch`` is set to 100 resamples so that memory stays near 160 MB
  (``batch=None`` would need 16 GB for the indices and values at once);
* one point estimate: ``trialscore.pass_at_k`` on the same matrix.

Targets, for the default interval and for the percentile bootstrap: at least
50x faster than SciPy, and at most 20x one point estimate.  Timings are the
best of ``--repeats`` runs (SciPy is timed once: its run takes seconds), with
garbage collection off.  Both percentile
intervals are printed; they must agree to within a tenth of their half-width
(both are Monte Carlo estimates of the same quantiles), else the script exits
with status 1.  Missed targets are reported as MISS but do not fail the run.
"""

from __future__ import annotations

import argparse
import gc
import platform
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy
import scipy.stats

import trialscore
from trialscore.core.estimators import item_scores, pass_at_k
from trialscore.stats import bootstrap_interval, item_interval

#: Speed-up over scipy.stats.bootstrap the bootstrap must reach.
TARGET_VS_SCIPY = 50.0
#: Largest cost of the bootstrap in point estimates.
TARGET_VS_POINT = 20.0
#: SciPy resamples per vectorized batch (memory: batch x items x 16 bytes).
SCIPY_BATCH = 100


def best_time(function: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    """Best wall time of ``repeats`` calls (garbage collection off) and the last result."""
    best = float("inf")
    result = None
    gc.disable()
    try:
        for _ in range(repeats):
            start = time.perf_counter()
            result = function()
            best = min(best, time.perf_counter() - start)
    finally:
        gc.enable()
    return best, result


def verdict(ok: bool, quick: bool) -> str:
    """PASS or MISS; the targets are for the full sizes, so a quick run only reports the ratio."""
    if quick:
        return "(targets apply to the full sizes)"
    return "PASS" if ok else "MISS"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="20,000 x 64 matrix, 2,000 resamples")
    parser.add_argument("--repeats", type=int, default=5, help="runs per timing of ours (best is kept)")
    args = parser.parse_args()
    items, trials, k = (20_000, 64, 8) if args.quick else (100_000, 64, 8)
    resamples = 2_000 if args.quick else 10_000

    rng = np.random.default_rng(20240601)
    rates = rng.beta(0.8, 0.8, size=(items, 1))
    R = rng.random((items, trials)) < rates
    values = item_scores(R, "pass@k", k=k)

    print(f"trialscore {trialscore.__version__}, numpy {np.__version__}, scipy {scipy.__version__}, "
          f"Python {platform.python_version()} on {platform.machine()}")  # fmt: skip
    print(f"{items:,} items x {trials} trials, pass@{k}, {resamples:,} resamples, 95% intervals\n")

    point_time, point = best_time(lambda: pass_at_k(R, k), max(args.repeats, 20))
    default_time, default = best_time(lambda: item_interval(R, "pass@k", k), max(args.repeats, 20))
    ours_time, ours = best_time(
        lambda: bootstrap_interval(R, "pass@k", k, resamples=resamples, seed=0), args.repeats
    )
    bca_time, bca = best_time(
        lambda: bootstrap_interval(R, "pass@k", k, method="bca", resamples=resamples, seed=0), args.repeats
    )
    scipy_time, theirs = best_time(
        lambda: scipy.stats.bootstrap(
            (values,),
            np.mean,
            n_resamples=resamples,
            method="percentile",
            vectorized=True,
            batch=SCIPY_BATCH,
            rng=0,
        ),
        1,
    )

    rows = [
        ("trialscore.pass_at_k (one point estimate)", point_time, f"{point:.6f}"),
        (
            "trialscore item_interval (default, wilson-eff)",
            default_time,
            f"[{default.low:.6f}, {default.high:.6f}]",
        ),
        ("trialscore bootstrap_interval, percentile", ours_time, f"[{ours.low:.6f}, {ours.high:.6f}]"),
        ("trialscore bootstrap_interval, BCa", bca_time, f"[{bca.low:.6f}, {bca.high:.6f}]"),
        (
            "scipy.stats.bootstrap, percentile",
            scipy_time,
            f"[{theirs.confidence_interval.low:.6f}, {theirs.confidence_interval.high:.6f}]",
        ),
    ]
    for name, seconds, shown in rows:
        print(f"  {name:<45} {seconds * 1e3:>10.1f} ms   {shown}")

    default_vs_scipy = scipy_time / default_time
    default_vs_point = default_time / point_time
    print()
    print(f"  scipy.stats.bootstrap / ours (default):    {default_vs_scipy:8.1f}x   target >= "
          f"{TARGET_VS_SCIPY:g}x   {verdict(default_vs_scipy >= TARGET_VS_SCIPY, args.quick)}")  # fmt: skip
    print(f"  ours (default) / one point estimate:       {default_vs_point:8.1f}x   target <= "
          f"{TARGET_VS_POINT:g}x   {verdict(default_vs_point <= TARGET_VS_POINT, args.quick)}")  # fmt: skip
    vs_scipy = scipy_time / ours_time
    vs_point = ours_time / point_time
    bca_vs_point = bca_time / point_time
    print(f"  scipy.stats.bootstrap / ours (percentile): {vs_scipy:8.1f}x   "
          f"target >= {TARGET_VS_SCIPY:g}x   {verdict(vs_scipy >= TARGET_VS_SCIPY, args.quick)}")  # fmt: skip
    print(f"  ours (percentile) / one point estimate:    {vs_point:8.1f}x   "
          f"target <= {TARGET_VS_POINT:g}x   {verdict(vs_point <= TARGET_VS_POINT, args.quick)}")  # fmt: skip
    print(f"  ours (BCa) / one point estimate:           {bca_vs_point:8.1f}x   (no target)")

    half_width = (ours.high - ours.low) / 2
    gaps = (abs(ours.low - theirs.confidence_interval.low), abs(ours.high - theirs.confidence_interval.high))
    agree = max(gaps) <= 0.1 * half_width
    share = max(gaps) / half_width
    print(f"\n  percentile bounds differ from SciPy's by {max(gaps):.2e} ({share:.1%} of the half-width)")
    print(f"  {'agree' if agree else 'DISAGREE'} (allowed: 10% of the half-width)")
    return 0 if agree and ours.estimate == point and default.estimate == point else 1


if __name__ == "__main__":
    sys.exit(main())
