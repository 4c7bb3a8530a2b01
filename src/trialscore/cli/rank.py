"""``trialscore rank``: models ranked on shared items, with intervals and P(beats the next).

Three questions, one command:

* a metric of counts (``--metric bayes``, ``pass@k``...): each model's score and interval,
  ranked by :func:`~trialscore.ranking.rank_models`, and the probability each beats the next
  (:func:`~trialscore.stats.beat_probability`);
* a per-success metric (``--metric cost-per-success``, ``latency-``, ``tokens-``,
  ``steps-per-success``; lower is better): each model's figure on the shared items with its
  item-clustered interval (:func:`~trialscore.stats.per_success`), and against the next model the
  paired ratio this / next with its interval (:func:`~trialscore.stats.compare_per_success`);
* ``--pareto`` (:mod:`trialscore.cli._pareto`): each model's pass rate, cost per task and cost per
  success with intervals, whether it is on the observed cost-success front, and the probability
  from a bootstrap over items that it is (:func:`~trialscore.stats.cost_success_front`).

Trials of unknown cost (or latency, tokens, steps) are left out of the figure, counted and named,
never taken as free; a model with no trial of known cost is named and left off the front.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from trialscore._words import did_you_mean, plural
from trialscore.cli._app import app
from trialscore.cli._groups import Untested, judge_each
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
from trialscore.cli._per_success import carried, needs_detail
from trialscore.cli._render import Report, Section, bounds, render
from trialscore.cli.score import rows_line
from trialscore.errors import EvaluationError, InsufficientDataError, MissingColumnError

if TYPE_CHECKING:
    from trialscore.core.bank import Bank
    from trialscore.ranking import Ranking
    from trialscore.results.counts import GroupCounts, ItemCounts
    from trialscore.results.per_success import GroupTrials
    from trialscore.results.readers import Detail
    from trialscore.results.scorecard import MetricSpec
    from trialscore.stats import PerSuccess

__all__ = ["rank"]


#: The metric rank uses when none is given.
DEFAULT_METRIC = "bayes"


def _read_models(
    files: list[Path], by: list[str], by_given: bool, read: ReadOptions, detail: Detail = False
) -> ItemCounts:
    """Each model's counts; an input with no ``target`` column (no --by given) says how to name one."""
    try:
        return read_counts(files, by, read, detail=detail)
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


def _enough_models(labels: list[str], by: str) -> None:
    """Bad input when the grouping gives fewer than 2 models."""
    if len(labels) < 2:
        raise EvaluationError(
            f"rank needs at least 2 models; --by {by} gives {plural(len(labels), 'model')}"
            + (f" ({labels[0]})" if labels else "")
        )


def _shared(present: list[set[Any]]) -> tuple[list[Any], int]:
    """The items every model holds (sorted) and how many others some model holds."""
    items = sorted(set.intersection(*present))
    if len(items) < 2:
        raise EvaluationError(
            f"the models share {plural(len(items), 'case')} with a graded trial; rank needs at least 2"
        )
    return items, len(set.union(*present)) - len(items)


def _ranked(
    groups_by: list[str],
    label: str,
    ranking: Ranking,
    items: tuple[int, int],
    entries: list[dict[str, Any]],
    untested: list[Untested],
    counts: ItemCounts,
    lower_is_better: bool = False,
) -> dict[str, Any]:
    """A ranking's JSON: ``items`` the shared items and those left out, ``entries`` the models best first."""
    return {
        "command": "rank",
        "version": JSON_VERSION,
        "by": groups_by,
        "metric": label,
        **({"lower_is_better": True} if lower_is_better else {}),
        "ranking": ranking.to_dict(),
        "items": items[0],
        "items_not_shared": items[1],
        "models": entries,
        "not_ranked": [u.to_dict() for u in untested],
        "rows": counts.stats.to_dict(),
    }


@app.command()
@reading_options(clusters=False)
def rank(
    files: FilesArg,
    by: Annotated[
        str | None, typer.Option("--by", help="Column(s) naming the model.  [default: target]")
    ] = None,
    metric: Annotated[
        str | None,
        typer.Option(
            "--metric",
            help=f"One metric: {METRIC_NAMES} (the per-success ones rank the lowest first).  "
            f"[default: {DEFAULT_METRIC}]",
        ),
    ] = None,
    k: Annotated[int | None, typer.Option("--k", help="k of a pass@k-style metric.")] = None,
    tau: TauOpt = 0.5,
    method: Annotated[
        str, typer.Option("--method", help="Ties: competition (1224), dense (1223) or average.")
    ] = "competition",
    tol: Annotated[
        float, typer.Option("--tol", help="Scores within tol of their group's leader tie.")
    ] = 1e-12,
    ci: Annotated[str, typer.Option("--ci", help="Interval method (see score --help).")] = "auto",
    pareto: Annotated[
        bool,
        typer.Option(
            "--pareto",
            help="The cost-success front instead of a ranking: each model's pass rate, cost per task and "
            "cost per success with intervals, and P(on the front) from a bootstrap over items "
            "(--resamples, --seed).  Needs each trial's cost.",
        ),
    ] = False,
    level: LevelOpt = 0.95,
    resamples: ResamplesOpt = 10_000,
    seed: SeedOpt = 0,
    output: FormatOpt = OutputFormat.table,
    read: ReadOptions = ReadOptions(),
) -> None:
    """Rank models on their shared items, with intervals and the probability each beats the next.

    Example: trialscore rank runs.parquet --by target --metric bayes --format json

    Example: trialscore rank runs.parquet --pareto --seed 1 -f markdown
    """
    by_given = by is not None
    by = "target" if by is None else by
    with bad_input():
        groups_by = split(by)
        if not groups_by:
            raise EvaluationError("--by must name the column(s) that identify a model; got none")
        if pareto:
            ranked = {"--metric": metric, "--k": k, "--tau": tau != 0.5, "--method": method != "competition",
                      "--tol": tol != 1e-12, "--ci": ci != "auto"}  # fmt: skip
            given = [flag for flag, value in ranked.items() if value not in (None, False)]
            if given:
                raise EvaluationError(
                    f"--pareto places each model by its pass rate and cost, not by a ranked metric; got "
                    f"{', '.join(given)} (drop them, or drop --pareto)"
                )
            report = _pareto(files, groups_by, by_given, read, level, resamples, seed)
        elif needs_detail([metric or DEFAULT_METRIC]):
            report = _per_success(files, groups_by, by_given, read, str(metric), method, tol, level)
        else:
            scoring = _Scoring(metric or DEFAULT_METRIC, k, tau, method, tol, ci, level, resamples, seed)
            report = _by_counts(files, groups_by, by_given, read, scoring)
    render(report, output)


@dataclass(frozen=True)
class _Scoring:
    """How a metric of counts is scored and ranked (rank's options)."""

    metric: str
    k: int | None
    tau: float
    method: str
    tol: float
    ci: str
    level: float
    resamples: int
    seed: int


def _by_counts(
    files: list[Path], groups_by: list[str], by_given: bool, read: ReadOptions, how: _Scoring
) -> Report:
    """The ranking by a metric of counts, with P(beats next)."""
    from trialscore.ranking import rank_models
    from trialscore.results.scorecard import metric_specs
    from trialscore.stats import beat_probability

    counts = _read_models(files, groups_by, by_given, read)
    models = list(counts.groups())
    _enough_models([model.label for model in models], ",".join(groups_by))
    items, dropped = _shared([set(model.item[model.n > 0].tolist()) for model in models])
    (spec,) = metric_specs([how.metric], [how.k] if how.k is not None else [default_ks(counts)[-1]], how.tau)
    judged, untested = judge_each(
        (
            model.label,
            dict(model.key),
            partial(_scored, model, items, spec, how.ci, how.level, how.resamples, how.seed),
        )
        for model in models
    )
    if len(judged) < 2:
        raise InsufficientDataError(
            f"rank needs at least 2 models scored by {spec.label}; " + "; ".join(u.line() for u in untested),
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
    ranking = rank_models(banks, spec.metric, tol=how.tol, method=how.method, names=names, **metric_args)
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
    payload = _ranked(groups_by, spec.label, ranking, (len(items), dropped), entries, untested, counts)
    header = ["rank", "model", spec.label, "low", "high", "P(beats next)"]
    rows = [
        [e["rank"], e["label"], e["score"], e["interval"]["low"], e["interval"]["high"], e["p_beats_next"]]
        for e in entries
    ]
    rows += [["—", u.label, None, None, None, "not ranked"] for u in untested]
    note = (
        f"{len(items)} shared items ({dropped} not graded for every model left out); "
        f"{intervals[0].level * 100:g}% {intervals[0].method} intervals; ties: {how.method}"
    )
    notes = [note, *(u.line().replace("not tested", "not ranked") for u in untested)]
    if spec.metric.name == "pass^k":
        from trialscore.stats._conventions import convention_line

        notes.append(convention_line("unbiased", read.errors.value))
    section = Section(header, rows, title=f"rank by {spec.label}", notes=notes)
    return Report(payload, [section], footer=[rows_line(payload["rows"])])


def _on_items(group: GroupTrials, items: set[Any]) -> GroupTrials:
    """The group's trials of ``items`` only."""
    import numpy as np

    keep = [index for index, item in enumerate(group.items) if item in items]
    where = np.array(keep, dtype=np.int64)
    return dataclasses.replace(
        group,
        items=[group.items[index] for index in keep],
        trial=[group.trial[index] for index in keep],
        passed=group.passed[where],
        values={name: values[where] for name, values in group.values.items()},
    )


def _ranks(estimates: list[float], method: str, tol: float) -> list[Any]:
    """Ranks of figures where lower is better, under a tie ``method`` of :mod:`trialscore.ranking`."""
    from trialscore import ranking

    if method not in ranking.RANK_METHODS:
        raise EvaluationError(
            f"--method must be one of {', '.join(ranking.RANK_METHODS)}; got {method!r}"
            f"{did_you_mean(method, ranking.RANK_METHODS)}"
        )
    ranker = getattr(ranking, f"{method}_ranks_from_scores")
    return list(ranker([-value for value in estimates], tol).tolist())


def _against_next(this: GroupTrials, then: GroupTrials, quantity: str, level: float) -> dict[str, Any] | None:
    """This model's figure over the next one's on their shared items: the paired ratio with its interval,
    and whether it is lower (None: too little data)."""
    from trialscore.results.per_success import totals_of
    from trialscore.stats import compare_per_success

    try:
        paired = compare_per_success(
            totals_of(then, quantity), totals_of(this, quantity), 1 - level, quantity
        )
    except InsufficientDataError:
        return None
    said = {"improvement": "lower", "regression": "higher"}.get(paired.verdict, "no significant difference")
    return {"ratio": paired.ratio, "interval": paired.interval, "verdict": said}


def _per_success(
    files: list[Path],
    groups_by: list[str],
    by_given: bool,
    read: ReadOptions,
    metric: str,
    method: str,
    tol: float,
    level: float,
) -> Report:
    """The ranking by a per-success metric (lower is better), each model against the next."""
    from trialscore.cli._per_success import score_per_success
    from trialscore.ranking import Ranking
    from trialscore.results.per_success import FIELDS, group_trials, quantity_of
    from trialscore.results.scorecard import metric_specs

    (spec,) = metric_specs([metric], [1], 0.5, trial_values=True)
    quantity = quantity_of(spec.metric)
    counts = _read_models(files, groups_by, by_given, read, detail=FIELDS)
    models = list(group_trials(counts))
    _enough_models([model.label for model in models], ",".join(groups_by))
    carried(models, quantity, f"rank --metric {spec.label}")
    items, dropped = _shared([set(model.items) for model in models])
    shared = set(items)
    models = [_on_items(model, shared) for model in models]
    scored = [(model, score_per_success(model, spec, level)) for model in models]
    judged = [(model, entry) for model, entry in scored if entry.figure is not None]
    untested = [
        Untested(model.label, dict(model.counts.key), str(entry.score.reason))
        for model, entry in scored
        if entry.figure is None
    ]
    if len(judged) < 2:
        raise InsufficientDataError(
            f"rank needs at least 2 models scored by {spec.label}; " + "; ".join(u.line() for u in untested),
            unit="models", needed=2, got=len(judged),
        )  # fmt: skip
    figures: list[PerSuccess] = [entry.figure for _, entry in judged if entry.figure is not None]
    names = [model.label for model, _ in judged]
    estimates = [figure.estimate for figure in figures]
    ranks = _ranks(estimates, method, tol)
    ranking = Ranking(spec.label, {}, method, tol, tuple(estimates), tuple(ranks), tuple(names))
    order = ranking.order()
    entries: list[dict[str, Any]] = []
    shown: list[dict[str, Any] | None] = []
    for position, index in enumerate(order):
        model, entry = judged[index]
        nearby = None
        if position + 1 < len(order):
            after = judged[order[position + 1]][0]
            nearby = _against_next(model, after, quantity, level)
        shown.append(nearby)
        entries.append(
            {
                "rank": ranks[index],
                "model": dict(model.counts.key),
                "label": names[index],
                "score": estimates[index],
                "interval": figures[index].interval.to_dict(),
                "p_beats_next": None,
                "vs_next": None if nearby is None else {**nearby, "interval": nearby["interval"].to_dict()},
                "per_success": entry.to_dict(model),
            }
        )
    payload = _ranked(groups_by, spec.label, ranking, (len(items), dropped), entries, untested, counts, True)
    unit = figures[0].unit
    header = ["rank", "model", f"{spec.label} ({unit})", "low", "high", "÷ next", "vs next"]
    rows: list[list[object]] = [
        [e["rank"], e["label"], e["score"], e["interval"]["low"], e["interval"]["high"]]
        + ([None, None] if nearby is None else [bounds(nearby["interval"]), nearby["verdict"]])
        for e, nearby in zip(entries, shown, strict=True)
    ]
    rows += [["—", u.label, None, None, None, None, "not ranked"] for u in untested]
    first = figures[0].interval
    notes = [
        f"{len(items)} shared items ({dropped} not graded for every model left out); lower is better; "
        f"{first.level * 100:g}% {first.method} intervals; ties: {method}",
        f"÷ next: this model's {quantity} per success over the next one's, paired on the shared items "
        f"({first.level * 100:g}% interval); vs next: lower when the interval lies below 1",
        *(f"{model.label}: {note}" for model, entry in judged for note in entry.notes),
        *(u.line().replace("not tested", "not ranked") for u in untested),
    ]
    section = Section(header, rows, title=f"rank by {spec.label} (lowest first)", notes=notes)
    return Report(payload, [section], footer=[rows_line(payload["rows"])])


def _pareto(
    files: list[Path],
    groups_by: list[str],
    by_given: bool,
    read: ReadOptions,
    level: float,
    resamples: int,
    seed: int,
) -> Report:
    """The cost-success front of the models read (:mod:`trialscore.cli._pareto`)."""
    from trialscore.cli._pareto import front_report
    from trialscore.results.per_success import FIELDS, group_trials

    if resamples < 100:
        raise EvaluationError(
            f"--resamples must be at least 100 with --pareto (P(on front) is a share of them); "
            f"got {resamples}"
        )
    counts = _read_models(files, groups_by, by_given, read, detail=FIELDS)
    models = list(group_trials(counts))
    _enough_models([model.label for model in models], ",".join(groups_by))
    return front_report(counts, models, groups_by, level, resamples, seed)
