"""``trialscore score``: each metric with its interval, per group, with flaky items and advice."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from trialscore._words import plural
from trialscore.cli._app import app
from trialscore.cli._gates import step_summary
from trialscore.cli._judged import score_extras
from trialscore.cli._options import (
    JSON_VERSION,
    METRIC_NAMES,
    ByOpt,
    FilesArg,
    FormatOpt,
    LevelOpt,
    OutputFormat,
    PassHatKOption,
    ReadOptions,
    ResamplesOpt,
    SeedOpt,
    TauOpt,
    bad_input,
    default_ks,
    parse_ks,
    read_counts,
    reading_options,
    split,
)
from trialscore.cli._per_success import GroupPerSuccess, needs_detail, per_success_groups
from trialscore.cli._render import Report, Section, render
from trialscore.errors import EvaluationError

if TYPE_CHECKING:
    from trialscore.results.scorecard import GroupScore, MetricScore

__all__ = ["rows_line", "score"]


def rows_line(stats: dict[str, Any]) -> str:
    """What was read: rows read, used, skipped and errored, and how errored trials count."""
    policy = "left out of n" if stats["errors"] == "exclude" else "counted as failures"
    return (
        f"rows: {stats['rows_read']} read, {stats['rows_used']} used, {stats['rows_skipped']} skipped, "
        f"{stats['rows_errored']} errored (errored trials {policy})"
    )


def _check_something_scored(cards: Sequence[GroupScore]) -> None:
    """Bad input when a metric has no value in any group (k above every case's trials, nothing scored)."""
    if not cards:
        return
    for index, first in enumerate(cards[0].metrics):
        reasons = [card.metrics[index].reason for card in cards]
        fixed = first.spec.metric.by_definition(first.spec.k, first.spec.tau)  # a note, not an error
        if all(reasons) and fixed is None:
            raise EvaluationError(f"{first.spec.label} cannot be computed in any group: {reasons[0]}")


_ROW_STATS = ["rows_read", "rows_used", "rows_skipped", "rows_errored"]


def _flat(cards: Sequence[GroupScore], by: Sequence[str], stats: dict[str, Any]) -> Section:
    """One CSV row per group and metric."""
    header = [*by, "items", "trials", "errored_trials", "flaky_items", "metric", "k", "tau"]
    header += ["estimate", "low", "high", "method", "level", *_ROW_STATS, "reason", "convention"]
    rows = []
    for card in cards:
        key = dict(card.key)
        for m in card.metrics:
            bounds: Sequence[object] = (None,) * 5
            if m.interval is not None:
                i = m.interval
                bounds = (i.estimate, i.low, i.high, i.method, i.level)
            group = [card.items, card.trials, card.errored_trials, card.flaky_items]
            spec = (m.spec.metric.name, m.spec.k, m.spec.tau)
            row_stats = (stats[name] for name in _ROW_STATS)
            rows.append(
                [*(key.get(name) for name in by), *group, *spec, *bounds, *row_stats, m.reason, _stated(m)]
            )
    return Section(header, rows)


def _stated(score: MetricScore) -> str | None:
    """The convention line of a pass^k (its estimator, what errored trials did); None for other metrics."""
    if score.convention is None:
        return None
    from trialscore.stats._conventions import convention_line

    return convention_line(score.convention["estimator"], score.convention["errors"])


def _valued(extra: GroupPerSuccess | None) -> dict[str, Any]:
    """A group's JSON entry for the metrics of trial values: their sums and unknown trials, named."""
    return {} if extra is None else {"per_success": extra.to_dict()}


def _section(card: GroupScore, extra: Sequence[str] = ()) -> Section:
    """A group's table: each metric's estimate and interval, then how and why (``extra``: more notes)."""
    rows = []
    for m in card.metrics:
        i = m.interval
        rows.append([m.spec.label, *((None,) * 3 if i is None else (i.estimate, i.low, i.high))])
    methods = dict.fromkeys(
        f"{m.interval.level * 100:g}% {m.interval.method}" for m in card.metrics if m.interval is not None
    )
    by_reason: dict[str, list[str]] = {}
    for m in card.metrics:
        if m.reason:
            by_reason.setdefault(m.reason, []).append(m.spec.label)
    reasons = [f"{', '.join(labels)}: {reason}" for reason, labels in by_reason.items()]
    lead = (
        f"{plural(card.items, 'item')}, {plural(card.trials, 'trial')}, {card.errored_trials} errored, "
        f"{card.flaky_items} flaky (0 < c < n)"
        + (
            f", {plural(card.items_all_errored, 'item')} with every trial errored"
            if card.items_all_errored
            else ""
        )
    )
    notes = (["intervals: " + "; ".join(methods)] if methods else []) + reasons
    notes += [line for line in dict.fromkeys(_stated(m) for m in card.metrics) if line is not None]
    notes += [*extra, *(advice.message for advice in card.advice)]
    return Section(["metric", "estimate", "low", "high"], rows, title=card.label, lead=lead, notes=notes)


@app.command()
@reading_options(graders=True)
def score(
    files: FilesArg,
    k: Annotated[
        str | None, typer.Option("--k", help="Comma-separated k values (default: 1 and the smallest n).")
    ] = None,
    by: ByOpt = None,
    metric: Annotated[
        str,
        typer.Option(
            "--metric",
            help=f"Comma-separated: {METRIC_NAMES} (bayes: the Bayes@N posterior for these items under a "
            "uniform prior; not a default).",
        ),
    ] = "pass@k,pass^k",
    ci: Annotated[
        str,
        typer.Option(
            "--ci",
            help="Interval: auto (= wilson-eff, Wilson on an effective number of items), bootstrap, bca, "
            "wilson, clopper-pearson, jeffreys, agresti-coull.",
        ),
    ] = "auto",
    level: LevelOpt = 0.95,
    resamples: ResamplesOpt = 10_000,
    seed: SeedOpt = 0,
    tau: TauOpt = 0.5,
    pass_hat_k: Annotated[
        PassHatKOption,
        typer.Option(
            "--pass-hat-k",
            help="pass^k's estimator: unbiased C(c,k)/C(n,k) per item (Yao et al. 2024, tau-bench) or plugin "
            "(c/n)^k per item (seed 000's passToTheK, biased upward for flaky items with few trials).",
        ),
    ] = PassHatKOption.unbiased,
    human: Annotated[
        Path | None,
        typer.Option(
            "--human",
            help="Human labels (CSV/JSONL: case_id, trial, target, passed) of a random sample of the items: "
            "judged figures corrected by them (prediction-powered, the item as the unit).",
        ),
    ] = None,
    output: FormatOpt = OutputFormat.table,
    read: ReadOptions = ReadOptions(),
) -> None:
    """Score trial results: each metric with its interval, per group, with flaky items and advice.

    Example: trialscore score runs.jsonl --by target,category --k 1,5 --metric pass@k,pass^k --format json
    """
    with bad_input():
        from trialscore.results.scorecard import metric_specs, score_group

        groups_by = split(by)
        detail: tuple[str, ...] | bool = False
        if needs_detail(split(metric)):  # per-success metrics: each trial's cost, latency, tokens or steps
            from trialscore.results.per_success import FIELDS

            detail = FIELDS
        counts = read_counts(files, groups_by, read, detail=detail)
        ks = parse_ks(k) or default_ks(counts)
        specs = metric_specs(split(metric), ks, tau, trial_values=True, pass_hat_k=pass_hat_k.value)
        counted = [spec for spec in specs if spec.metric.needs == "counts"]
        cards = [
            score_group(group, counted, ci, level, resamples, seed, max(ks)) for group in counts.groups()
        ]
        extra = per_success_groups(counts, specs, level)
        cards = [
            replace(card, metrics=card.metrics + extra[card.label].scores) if extra else card
            for card in cards
        ]
        _check_something_scored(cards)
        extras = score_extras(files, groups_by, read, human, ks, level)  # judged trials, human labels
    stats = counts.stats.to_dict()
    payload: dict[str, Any] = {
        "command": "score",
        "version": JSON_VERSION,
        "by": groups_by,
        "ci": {
            "method": ci,
            "level": level,
            "resamples": resamples,
            "seed": seed,
            "cluster_col": read.cluster_col,
        },
        "rows": stats,
        "groups": [card.to_dict() | _valued(extra.get(card.label)) for card in cards],
        **extras.payload,
    }
    report = Report(
        payload,
        [*(_section(card, extra[card.label].notes if extra else ()) for card in cards), *extras.sections],
        footer=[rows_line(stats), *extras.footer],
        flat=_flat(cards, list(counts.by), stats),
    )
    render(report, output)
    with bad_input():
        step_summary(report)
