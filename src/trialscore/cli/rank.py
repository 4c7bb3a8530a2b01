"""``trialscore rank``: models ranked on shared items, with intervals and P(beats the next)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from trialscore._words import plural
from trialscore.cli._app import app
from trialscore.cli._options import (
    JSON_VERSION,
    METRIC_NAMES,
    FilesArg,
    FormatOpt,
    LevelOpt,
    OutputFormat,
    ReadOptions,
    ResamplesOpt,
    SeedOpt,
    TauOpt,
    bad_input,
    default_ks,
    read_counts,
    reading_options,
    split,
)
from trialscore.cli._render import Report, Section, render
from trialscore.cli.score import rows_line
from trialscore.errors import EvaluationError

__all__ = ["rank"]


@app.command()
@reading_options(clusters=False)
def rank(
    files: FilesArg,
    by: Annotated[str, typer.Option("--by", help="Column(s) naming the model, e.g. target.")] = "target",
    metric: Annotated[str, typer.Option("--metric", help=f"One metric: {METRIC_NAMES}.")] = "bayes",
    k: Annotated[int | None, typer.Option("--k", help="k of a pass@k-style metric.")] = None,
    tau: TauOpt = 0.5,
    method: Annotated[
        str, typer.Option("--method", help="Ties: competition (1224), dense (1223) or average.")
    ] = "competition",
    tol: Annotated[
        float, typer.Option("--tol", help="Scores within tol of their group's leader tie.")
    ] = 1e-12,
    ci: Annotated[str, typer.Option("--ci", help="Interval method (see score --help).")] = "auto",
    level: LevelOpt = 0.95,
    resamples: ResamplesOpt = 10_000,
    seed: SeedOpt = 0,
    output: FormatOpt = OutputFormat.table,
    read: ReadOptions = ReadOptions(),
) -> None:
    """Rank models on their shared items, with intervals and the probability each beats the next.

    Example: trialscore rank runs.parquet --by target --metric bayes --format json
    """
    with bad_input():
        from trialscore.ranking import rank_models
        from trialscore.results.scorecard import metric_interval, metric_specs
        from trialscore.stats import beat_probability

        groups_by = split(by)
        if not groups_by:
            raise EvaluationError("--by must name the column(s) that identify a model; got none")
        counts = read_counts(files, groups_by, read)
        models = list(counts.groups())
        if len(models) < 2:
            raise EvaluationError(f"rank needs at least 2 models; --by {by} gives {len(models)}")
        present = [set(model.item[model.n > 0].tolist()) for model in models]
        items = sorted(set.intersection(*present))
        dropped = len(set.union(*present)) - len(items)
        if len(items) < 2:
            raise EvaluationError(
                f"the models share {plural(len(items), 'item')} with a graded trial; rank needs at least 2"
            )
        (spec,) = metric_specs([metric], [k] if k is not None else [default_ks(counts)[-1]], tau)
        banks = [model.bank().select(items) for model in models]
        names = [model.label for model in models]
        metric_args: dict[str, Any] = {}
        if spec.k is not None:
            metric_args["k"] = spec.k
        if spec.tau is not None:
            metric_args["tau"] = spec.tau
        ranking = rank_models(banks, spec.metric, tol=tol, method=method, names=names, **metric_args)
        intervals = [metric_interval(bank, spec, ci, level, resamples, seed) for bank in banks]
        order = ranking.order()
        entries: list[dict[str, Any]] = []
        for position, index in enumerate(order):
            beats_next = None
            if position + 1 < len(order):
                worse = banks[order[position + 1]]
                beats_next = beat_probability(banks[index], worse, spec.metric, spec.k, spec.tau)
            entries.append(
                {
                    "rank": ranking.ranks[index],
                    "model": dict(models[index].key),
                    "label": names[index],
                    "score": ranking.scores[index],
                    "interval": intervals[index].to_dict(),
                    "p_beats_next": beats_next,
                }
            )
    payload: dict[str, Any] = {
        "command": "rank",
        "version": JSON_VERSION,
        "by": groups_by,
        "metric": spec.label,
        "ranking": ranking.to_dict(),
        "items": len(items),
        "items_not_shared": dropped,
        "models": entries,
        "rows": counts.stats.to_dict(),
    }
    header = ["rank", "model", spec.label, "low", "high", "P(beats next)"]
    rows = [
        [e["rank"], e["label"], e["score"], e["interval"]["low"], e["interval"]["high"], e["p_beats_next"]]
        for e in entries
    ]
    note = (
        f"{len(items)} shared items ({dropped} not graded for every model left out); "
        f"{intervals[0].level * 100:g}% {intervals[0].method} intervals; ties: {method}"
    )
    section = Section(header, rows, title=f"rank by {spec.label}", notes=[note])
    render(Report(payload, [section], footer=[rows_line(payload["rows"])]), output)
