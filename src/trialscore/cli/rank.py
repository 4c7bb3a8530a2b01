"""``trialscore rank``: models ranked on shared items, with intervals and P(beats the next)."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from trialscore._words import plural
from trialscore.cli._app import app
from trialscore.cli._groups import judge_each
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
from trialscore.errors import EvaluationError, InsufficientDataError, MissingColumnError

if TYPE_CHECKING:
    from trialscore.core.bank import Bank
    from trialscore.results.counts import GroupCounts, ItemCounts
    from trialscore.results.scorecard import MetricSpec

__all__ = ["rank"]


def _read_models(files: list[Path], by: list[str], by_given: bool, read: ReadOptions) -> ItemCounts:
    """Each model's counts; an input with no ``target`` column (no --by given) says how to name one."""
    try:
        return read_counts(files, by, read)
    except MissingColumnError as exc:
        if by_given or exc.role != "group":
            raise
        columns = ", ".join(exc.available)
        raise EvaluationError(
            f"rank needs a column naming each model: the input has no {exc.column!r} column; name the model "
            f"column with --by COLUMN (the input has columns {columns}), or give one file per model with "
            "--by file"
        ) from exc


def _scored(
    model: GroupCounts, items: list[Any], spec: MetricSpec, ci: str, level: float, resamples: int, seed: int
) -> tuple[Bank, Any]:
    """A model's bank on the shared cases and its interval (InsufficientDataError when k is too large)."""
    from trialscore.results.scorecard import metric_interval

    bank = model.bank().select(items)
    return bank, metric_interval(bank, spec, ci, level, resamples, seed)


@app.command()
@reading_options(clusters=False)
def rank(
    files: FilesArg,
    by: Annotated[
        str | None, typer.Option("--by", help="Column(s) naming the model.  [default: target]")
    ] = None,
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
    by_given = by is not None
    by = "target" if by is None else by
    with bad_input():
        from trialscore.ranking import rank_models
        from trialscore.results.scorecard import metric_specs
        from trialscore.stats import beat_probability

        groups_by = split(by)
        if not groups_by:
            raise EvaluationError("--by must name the column(s) that identify a model; got none")
        counts = _read_models(files, groups_by, by_given, read)
        models = list(counts.groups())
        if len(models) < 2:
            raise EvaluationError(
                f"rank needs at least 2 models; --by {by} gives {plural(len(models), 'model')}"
                + (f" ({models[0].label})" if models else "")
            )
        present = [set(model.item[model.n > 0].tolist()) for model in models]
        items = sorted(set.intersection(*present))
        dropped = len(set.union(*present)) - len(items)
        if len(items) < 2:
            raise EvaluationError(
                f"the models share {plural(len(items), 'case')} with a graded trial; rank needs at least 2"
            )
        (spec,) = metric_specs([metric], [k] if k is not None else [default_ks(counts)[-1]], tau)
        judged, untested = judge_each(
            (
                model.label,
                dict(model.key),
                partial(_scored, model, items, spec, ci, level, resamples, seed),
            )
            for model in models
        )
        if len(judged) < 2:
            raise InsufficientDataError(
                f"rank needs at least 2 models scored by {spec.label}; "
                + "; ".join(u.line() for u in untested),
                unit="models",
                needed=2,
                got=len(judged),
            )
        banks = [bank for _, _, (bank, _) in judged]
        intervals = [interval for _, _, (_, interval) in judged]
        names = [label for label, _, _ in judged]
        metric_args: dict[str, Any] = {}
        if spec.k is not None:
            metric_args["k"] = spec.k
        if spec.tau is not None:
            metric_args["tau"] = spec.tau
        ranking = rank_models(banks, spec.metric, tol=tol, method=method, names=names, **metric_args)
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
                    "model": dict(judged[index][1]),
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
        "not_ranked": [u.to_dict() for u in untested],
        "rows": counts.stats.to_dict(),
    }
    header = ["rank", "model", spec.label, "low", "high", "P(beats next)"]
    rows = [
        [e["rank"], e["label"], e["score"], e["interval"]["low"], e["interval"]["high"], e["p_beats_next"]]
        for e in entries
    ]
    rows += [["—", u.label, None, None, None, "not ranked"] for u in untested]
    note = (
        f"{len(items)} shared items ({dropped} not graded for every model left out); "
        f"{intervals[0].level * 100:g}% {intervals[0].method} intervals; ties: {method}"
    )
    notes = [note, *(u.line().replace("not tested", "not ranked") for u in untested)]
    section = Section(header, rows, title=f"rank by {spec.label}", notes=notes)
    render(Report(payload, [section], footer=[rows_line(payload["rows"])]), output)
