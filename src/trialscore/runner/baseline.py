"""The run an adaptive run is compared with while it runs: read, checked, and turned into paired counts.

``RunOptions(adaptive=True, baseline="latest")`` (``trialscore run --adaptive --baseline latest``)
compares each target with the baseline run case by case while the trials run, and stops once the
paired verdict is settled (:mod:`trialscore.runner.adaptive_paired`).  The baseline is a results
path or a run of the store (a run id, ``latest``, ``latest~N``, counting the runs of the suite
about to run).  A fixed run is compared after it ends instead (``trialscore compare``, or the
gates of ``trialscore run --baseline``).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from trialscore.errors import InsufficientDataError, OptionError
from trialscore.results.counts import ItemCounts
from trialscore.runner.adaptive_paired import BaselineComparison
from trialscore.runner.options import RunOptions
from trialscore.runner.suite import Suite

__all__ = ["case_counts", "compare_while_running", "read_baseline"]


def read_baseline(
    name: str, store: Path, suite: str | None = None, allow_partial: bool = False
) -> ItemCounts:
    """Per-target counts of the baseline ``name``: a results path, else a run of ``store`` (with
    ``suite``, ``latest`` and ``latest~N`` count that suite's runs only).

    Raises
    ------
    InsufficientDataError
        When the baseline stopped short of its plan (interrupted, or still running) and
        ``allow_partial`` is False: its trials are not the run it was meant to be.
    EvaluationError
        When ``name`` is neither a path nor a run of the store.
    """
    from trialscore.results.readers import read_counts
    from trialscore.runner.history import resolve_inputs

    counts = read_counts(resolve_inputs([Path(name)], store, suite), by=["target"])
    partial = [run.message for run in counts.stats.partial]
    if partial and not allow_partial:
        raise InsufficientDataError(
            f"baseline {name!r} refuses a partial input: {'; '.join(partial)}; finish it first "
            "(resume it) or allow_partial=True to compare with the trials it holds",
            unit="trials",
        )
    return counts


def case_counts(counts: ItemCounts) -> dict[str, dict[str, tuple[int, int]]]:
    """Target -> case -> (scored trials, passes) of per-target counts."""
    out: dict[str, dict[str, tuple[int, int]]] = {}
    for group in counts.groups():
        cases = out.setdefault(str(dict(group.key).get("target") or ""), {})
        for item, n, c in zip(group.item.tolist(), group.n.tolist(), group.c.tolist(), strict=True):
            cases[str(item)] = (int(n), int(c))
    return out


def compare_while_running(suite: Suite, options: RunOptions, counts: ItemCounts | None = None) -> RunOptions:
    """``options`` with the comparison with ``options.baseline`` that ``suite``'s new adaptive run makes
    while it runs (unchanged without a baseline, or with its comparison made already).  ``counts``: the
    baseline already read (else it is read here: :func:`read_baseline`).

    Raises
    ------
    OptionError
        For a baseline given to a resumed or a fixed run, with ``sequential`` (which stops single
        cases: choose one), or a ``margin`` outside [0, 1).
    """
    if options.baseline is None or options.comparison is not None:
        return options
    if options.resume is not None:
        raise OptionError(
            "baseline is compared with while a new run runs; a resumed run keeps its settings: "
            "resume without baseline",
            option="baseline",
        )
    rule = options.rule(suite)
    if rule is None:
        raise OptionError(
            "baseline is compared with while running, which needs adaptive=True (or the suite's "
            "execution.adaptive); compare a fixed run once it ended (trialscore.compare_paired)",
            option="baseline",
        )
    if rule.sequential:
        raise OptionError(
            "sequential stops single cases; with a baseline the run compares with the baseline while "
            "running instead: choose one",
            option="sequential",
        )
    if not 0.0 <= options.margin < 1.0:
        raise OptionError(f"margin must satisfy 0 <= margin < 1; got {options.margin}", option="margin")
    if counts is None:
        counts = read_baseline(options.baseline, options.store, suite.name, options.allow_partial)
    alpha = suite.execution.alpha if options.alpha is None else options.alpha  # checked by the rule
    comparison = BaselineComparison(options.baseline, case_counts(counts), options.margin, alpha)
    return replace(options, comparison=comparison)
